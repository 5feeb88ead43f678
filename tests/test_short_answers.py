"""Short answers (issue 22): a fragment ("1889", "Delhi", "yes") is checked as the answer to the
request's question; the ENG keeps its text and records the hypothesis the verifier read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import SCHEMA_VERSION, EvidenceNecessityGraph, NecessityEngine
from ene_core.cli import main
from ene_core.reports.viewer import render_html
from ene_core.text.claims import read_with_question, split_claims
from ene_core.text.rewrites import inflect, past, third_person
from ene_core.text.short_answers import (
    answer_hypothesis,
    is_fragment,
    qa_hypothesis,
    question_to_claim,
    read_answer,
    usable_question,
    yes_no,
)

TOWER = "The Eiffel Tower was completed in 1889. It is 330 metres tall."
BANANAS = "Bananas are rich in potassium."
YEAR_Q = "In what year was the Eiffel Tower completed?"
YEAR_CLAIM = "The Eiffel Tower was completed in 1889."
DATA = Path(__file__).parent / "data"


# -- the hypothesis -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        ("In what city is the head office?", "Delhi", "In what city is the head office? Delhi."),
        ("In  what city\nis it", " Delhi . ", "In what city is it? Delhi."),  # "?" added
        ("Name the city.", "Delhi", "Name the city? Delhi."),
        ("Who?", "U.S.", "Who? U.S."),
    ],
)
def test_qa_form(question: str, answer: str, expected: str) -> None:
    assert qa_hypothesis(question, answer) == expected


@pytest.mark.parametrize(
    ("question", "answer", "claim"),
    [
        (
            "Which magazine was started first, Arthur's Magazine or First for Women?",
            "Arthur's Magazine",
            "Arthur's Magazine was started first.",
        ),
        (
            "The Oberoi family is part of a hotel company that has a head office in what city?",
            "Delhi.",
            "The Oberoi family is part of a hotel company that has a head office in Delhi.",
        ),
        (YEAR_Q, "1889", YEAR_CLAIM),
        ("When was the bridge built?", "in 1931", "The bridge was built in 1931."),  # one "in"
        (
            "who is younger Keith Bostic or Jerry Glanville ?",
            "Keith Bostic",
            "Keith Bostic is younger.",
        ),
        # yes / no: the statement or its negation
        ("Was the bridge built in 1931?", "yes", "The bridge was built in 1931."),
        ("Was the bridge built in 1931?", "No.", "The bridge was not built in 1931."),
        (
            "Was the bridge built in 1931?",
            "Yes, it was built in 1931.",
            "The bridge was built in 1931.",
        ),
        ("Did the band tour Japan?", "Yes", "The band toured Japan."),
        ("Did the band tour Japan?", "no", "The band did not tour Japan."),
        ("Are A and B both X?", "yes", "A and B are both X."),
        (
            "Were Scott Derrickson and Ed Wood of the same nationality?",
            "yes",
            "Scott Derrickson and Ed Wood were of the same nationality.",
        ),
        (
            "Are the Laleli Mosque and Esma Sultan Mansion located in the same neighborhood?",
            "no",
            "The Laleli Mosque and Esma Sultan Mansion are not located in the same neighborhood.",
        ),
        ("Are both Cypress and Ajuga genera?", "no", "Cypress and Ajuga are not both genera."),
        ("Can the bird fly?", "no", "The bird cannot fly."),
        ("Is it true that the sky is green?", "no", "It is not true that the sky is green."),
    ],
)
def test_declarative_claims(question: str, answer: str, claim: str) -> None:
    assert question_to_claim(question, answer) == claim
    assert answer_hypothesis(question, answer) == claim


@pytest.mark.parametrize(
    ("question", "answer", "claim"),
    [
        # do-support: the verb inflected, the answer where the wh-phrase stood
        ("What year did the band tour Japan?", "1999", "The band toured Japan in 1999."),
        (
            "What award did the film win in 2003?",
            "the Palme d'Or",
            "The film won the Palme d'Or in 2003.",
        ),
        ("When did the observatory open?", "1911", "The observatory opened in 1911."),
        ("Where does the band rehearse?", "Cork", "The band rehearses in Cork."),
        ("Who did Anna Berg marry?", "Tom Hale", "Anna Berg married Tom Hale."),
        ("What city did the company move to?", "Leeds", "The company moved to Leeds."),
        (
            "What occupation do Chris Menges and Aram Avakian share?",
            "director",
            "Chris Menges and Aram Avakian share director.",
        ),
        # how many / much / long / tall
        ("How many rooms does the hotel have?", "214", "The hotel has 214 rooms."),
        ("How many copies of the book sold?", "2 million", "2 million copies of the book sold."),
        ("How much does a day ticket cost?", "54 euros", "A day ticket costs 54 euros."),
        ("How long is the tunnel?", "8.2 km", "The tunnel is 8.2 km long."),
        ("How long did the siege last?", "eleven months", "The siege lasted eleven months."),
        (
            "How long did Falk serve as mayor?",
            "seven years",
            "Falk served as mayor for seven years.",
        ),
        (
            "The lake is in a country that has a population of how many inhabitants?",
            "9,984",
            "The lake is in a country that has a population of 9,984 inhabitants.",
        ),
        # a copula before the subject; a choice after an auxiliary
        (
            "What nationality were Alfred Gell and Edmund Leach?",
            "British",
            "Alfred Gell and Edmund Leach were British.",
        ),
        (
            "What series was the actress Rose McGowan best known for being in?",
            "Charmed",
            "The actress Rose McGowan was best known for being in Charmed.",
        ),
        (
            "Is Port Avell or Castrey the capital of Dunmere?",
            "Port Avell",
            "Port Avell is the capital of Dunmere.",
        ),
        # subject questions with a finite verb; a wh-word after a relative "who"
        (
            "What surfer born in 1992 won the Rip Curl Pro?",
            "John Florence",
            "John Florence won the Rip Curl Pro.",
        ),
        ("Which costs more, the A5 or the A7?", "the A7", "The A7 costs more."),
        (
            "The manager who recruited Beckham managed United during what years?",
            "1986 to 2013",
            "The manager who recruited Beckham managed United during 1986 to 2013.",
        ),
        # a question of two sentences: its statement kept
        (
            "The album was his 11th. What was the singer's stage name?",
            "Bob Seger",
            "The album was his 11th. The singer's stage name was Bob Seger.",
        ),
        ("When was the novelist born?", "3 May 1948", "The novelist was born on 3 May 1948."),
        # relative clauses are not what the question asks with
        (
            "What was the population of the city in which Kirton End is located?",
            "35,124",
            "The population of the city in which Kirton End is located was 35,124.",
        ),
        (
            "Who wrote the song and who died in 2007?",
            "Lee Hazlewood",
            "Lee Hazlewood wrote the song and died in 2007.",
        ),
        (
            "The team competes in a cup known as what for sponsorship reasons?",
            "Carabao Cup",
            "The team competes in a cup known as Carabao Cup for sponsorship reasons.",
        ),
        ("Where is the Benholm Ice Arena?", "Tromsdal", "The Benholm Ice Arena is in Tromsdal."),
    ],
)
def test_declarative_rewrites_of_every_question_form(
    question: str, answer: str, claim: str
) -> None:
    assert question_to_claim(question, answer) == claim
    assert read_answer(question, answer) == (claim, "declarative")
    assert read_answer(question, answer, "question_answer") == (
        qa_hypothesis(question, answer),
        "question_answer",
    )


@pytest.mark.parametrize(
    ("verb", "past_form", "third"),
    [
        ("win", "won", "wins"),
        ("open", "opened", "opens"),
        ("stop", "stopped", "stops"),
        ("marry", "married", "marries"),
        ("found", "founded", "founds"),
        ("have", "had", "has"),
        ("watch", "watched", "watches"),
        ("admit", "admitted", "admits"),
        ("go", "went", "goes"),
        ("live", "lived", "lives"),
        ("play", "played", "plays"),
    ],
)
def test_inflection(verb: str, past_form: str, third: str) -> None:
    assert (past(verb), third_person(verb), inflect(verb, "do")) == (past_form, third, verb)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Is the museum open on Mondays?", "yes"),  # where does "the museum" end? no rule
        ("Did the rock band tour Japan?", "no"),
        ("Why did the band tour Japan?", "money"),  # why: no rule
        ("What did the committee?", "a report"),  # no verb after the subject
        ("", "Delhi"),
        ("Why?", ""),
    ],
)
def test_no_declarative_rule_gives_none_and_the_qa_form(question: str, answer: str) -> None:
    assert question_to_claim(question, answer) is None
    if question and answer:
        assert answer_hypothesis(question, answer) == qa_hypothesis(question, answer)


def test_yes_no_reads_the_first_word_only() -> None:
    assert [yes_no(a) for a in ("Yes", "yes, it was.", "No.", "No, never", "no")] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert yes_no("No one came.") is None and yes_no("Delhi") is None


# -- which segments read the question -----------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Delhi",
        "Delhi.",
        "Arthur's Magazine",
        "1889",
        "in 1931",
        "2 March 1972",
        "Max Martin, Savan Kotecha and Ilya Salmanzadeh",
        "more than 70 countries",
        "born in 1865",
        "shortest player ever to play in the National Basketball Association",
        "IT products and services",
        "yes",
        "No.",
        "Yes, it was built in 1931.",
    ],
)
def test_fragments(text: str) -> None:
    assert is_fragment(text)


@pytest.mark.parametrize(
    "text",
    [
        "The Eiffel Tower is 330 metres tall.",
        "The tower stands in Paris.",
        "The Seine flows through Paris.",
        "Bananas contain potassium.",
        "Gustave Eiffel built the tower.",
        "Critics praised the film.",
        "It rains.",
        "The festival takes place in spring.",
        "Dogs fly.",
        "The Titanic sank after hitting an iceberg.",  # the necessity dev and test sets
        "Children under 12 get into the City Museum for free.",
        "The rice simmers for 25 minutes.",
        "The Perseids peak in mid-August.",
        "The Kestrel drone weighs 895 grams.",
        "Upgrade to v2.1.3.",
        "No one came.",
        "Sure!",
        "A very long noun phrase with many many words in it and no verb at all here",
    ],
)
def test_statements_and_filler_are_not_fragments(text: str) -> None:
    assert not is_fragment(text)


def test_usable_question() -> None:
    assert usable_question(None) is None and usable_question("  \n") is None
    assert usable_question("?!") is None
    assert usable_question("  Where  is it") == "Where is it"


def test_split_claims_marks_fragments_and_the_question_turns_them_into_claims() -> None:
    segments = split_claims("Delhi. It is the capital of India [1]. Sure!")
    assert [(s.kind, s.text) for s in segments] == [
        ("fragment", "Delhi."),
        ("claim", "It is the capital of India."),
        ("filler", "Sure!"),
    ]
    read = read_with_question(segments, "What is the capital of India?")
    assert [s.kind for s in read] == ["claim", "claim", "filler"]
    assert read[0].hypothesis == "The capital of India is Delhi." == read[0].verifier_text
    assert read[1] == segments[1] and read[1].verifier_text == read[1].text  # unchanged
    assert (read[0].text, read[0].start, read[0].end) == ("Delhi.", 0, 7)
    assert read_with_question(segments, " ") == segments


def test_the_data_scripts_use_the_engines_functions() -> None:
    pytest.importorskip("pysbd")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import synth_nli
    import synth_v3

    from ene_core.text import short_answers

    assert synth_nli.question_to_claim is short_answers.question_to_claim
    assert synth_v3.question_to_claim is short_answers.question_to_claim
    assert synth_v3.qa_hypothesis is short_answers.qa_hypothesis


# -- the engine ---------------------------------------------------------------------------------
def test_a_one_word_answer_is_checked_as_the_answer(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate("1889", [BANANAS, TOWER], question=YEAR_Q)
    (claim,) = eng.claims
    assert (claim.text, claim.span, claim.kind) == ("1889", (0, 4), "claim")
    assert claim.hypothesis == YEAR_CLAIM
    assert claim.status == "supported" and claim.necessary == [1]
    assert eng.minimal_sufficient_set == [1] and eng.counts.checkable_claims == 1
    assert eng.warnings == []
    wrong = keyword_engine.evaluate("1887", [BANANAS, TOWER], question=YEAR_Q).claims[0]
    assert wrong.status == "contradicted" and wrong.contradicted_by == [1]
    assert wrong.hypothesis == "The Eiffel Tower was completed in 1887."


def test_yes_no_answers(keyword_engine: NecessityEngine) -> None:
    question = "Was the Eiffel Tower completed in 1889?"
    yes = keyword_engine.evaluate("Yes.", [TOWER], question=question).claims[0]
    assert yes.status == "supported" and yes.hypothesis == YEAR_CLAIM
    no = keyword_engine.evaluate("No, it was not.", [TOWER], question=question).claims[0]
    assert no.status is not None
    assert no.hypothesis == "The Eiffel Tower was not completed in 1889."


def test_citations_and_leave_one_out_read_the_hypothesis(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate("1889 [2]", [BANANAS, TOWER], question=YEAR_Q)
    claim = eng.claims[0]
    assert claim.cited == [2] and claim.citation_supported is True
    assert claim.citations_unneeded == [] and eng.citation_recall == 1.0
    assert claim.p_entail_without is not None and claim.p_entail_without[1] < 0.5


def test_full_sentences_keep_todays_hypothesis(keyword_engine: NecessityEngine) -> None:
    answer = "The Eiffel Tower was completed in 1889. It is 500 metres tall."
    plain = keyword_engine.evaluate(answer, [TOWER, BANANAS])
    asked = keyword_engine.evaluate(answer, [TOWER, BANANAS], question=YEAR_Q)
    assert all(c.hypothesis is None for c in asked.claims)
    assert {**asked.verdicts(), "question": None} == plain.verdicts()


def test_without_a_question_a_fragment_is_a_non_claim_with_a_warning(
    keyword_engine: NecessityEngine,
) -> None:
    eng = keyword_engine.evaluate("1889", [TOWER])
    claim = eng.claims[0]
    assert (claim.kind, claim.status, claim.hypothesis) == ("fragment", None, None)
    assert eng.counts.checkable_claims == 0
    assert any("claim 1 ('1889') not checked" in w and "no question" in w for w in eng.warnings)
    assert eng.stats.unchecked_sentences == 1


# -- bad input: a verdict or a warning, never a crash -------------------------------------------
@pytest.mark.parametrize("question", ["", "   ", "?", "\n\t"])
def test_an_empty_question_leaves_the_fragment_unchecked_and_says_why(
    keyword_engine: NecessityEngine, question: str
) -> None:
    eng = keyword_engine.evaluate("1889", [TOWER], question=question)
    assert eng.claims[0].kind == "fragment" and eng.claims[0].status is None
    assert any("the question is empty" in w for w in eng.warnings)


def test_a_question_without_a_question_mark_still_gets_a_verdict(
    keyword_engine: NecessityEngine,
) -> None:
    question = "Tell me the year the Eiffel Tower was completed"
    claim = keyword_engine.evaluate("1889", [TOWER], question=question).claims[0]
    assert claim.hypothesis == question + "? 1889."  # no rule: the question-answer form
    assert claim.status is not None


@pytest.mark.parametrize("answer", ["?!", "...", "[1]", "[1][2].", " - ", "\u2014"])
def test_punctuation_or_citation_only_answers_are_a_warning(
    keyword_engine: NecessityEngine, answer: str
) -> None:
    eng = keyword_engine.evaluate(answer, [TOWER], question=YEAR_Q)
    assert eng.counts.checkable_claims == 0
    assert all(c.status is None and c.hypothesis is None for c in eng.claims)
    assert eng.warnings and "no checkable claims" in eng.warnings[0]


@pytest.fixture(scope="module")
def module_engine() -> NecessityEngine:
    from ene_core.verifiers.keyword import KeywordOracle

    engine = NecessityEngine(KeywordOracle())
    yield engine
    engine.close()


@settings(max_examples=60, deadline=None)
@given(
    answer=st.text(max_size=40) | st.sampled_from(["yes", "No.", "in 1931", "Delhi [1]"]),
    question=st.none() | st.text(max_size=60) | st.sampled_from(["Is it?", "Did the X Y Z?"]),
)
def test_any_short_answer_and_question_give_a_verdict_or_a_warning(
    module_engine: NecessityEngine, answer: str, question: str | None
) -> None:
    eng = module_engine.evaluate(answer, [TOWER], question=question)
    for claim in eng.claims:
        if claim.kind == "fragment":  # unchecked only for want of a usable question
            assert usable_question(question) is None and eng.warnings
        if claim.hypothesis is not None:
            assert claim.status is not None and claim.hypothesis.strip()
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng


# -- the ENG, the CLI, the viewer ---------------------------------------------------------------
def test_schema_round_trips_with_hypotheses(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate("1889", [TOWER], question=YEAR_Q)
    data = json.loads(eng.to_json())
    assert (
        data["schema_version"] == SCHEMA_VERSION and data["claims"][0]["hypothesis"] == YEAR_CLAIM
    )
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng
    schema = EvidenceNecessityGraph.json_schema()
    claim = schema["$defs"]["Claim"]["properties"]
    assert "hypothesis" in claim and "fragment" in claim["kind"]["enum"]
    assert schema["$id"].endswith(f"eng-{SCHEMA_VERSION}.json")
    published = json.loads((DATA.parents[1] / "docs" / "eng.schema.json").read_text())
    assert published == schema  # regenerated with `ene schema`


@pytest.mark.parametrize("version", ["1.3", "1.4"])
def test_engs_before_short_answers_still_load(version: str) -> None:
    text = (DATA / f"eng_{version.replace('.', '_')}.json").read_text()
    assert '"hypothesis"' not in text  # written before the field existed
    old = EvidenceNecessityGraph.from_json(text)
    assert old.schema_version == version and all(c.hypothesis is None for c in old.claims)
    # "Eiffel Tower." was checked as its own text, "Paris." not at all
    assert [c.kind for c in old.claims] == ["claim", "claim", "claim", "filler"]
    assert EvidenceNecessityGraph.from_json(old.to_json()) == old


def test_cli_evaluate_shows_what_the_verifier_read(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--oracle", "keyword", "--answer", "1889", "--context", TOWER]
    assert main([*argv, "--question", YEAR_Q]) == 0
    out = capsys.readouterr().out
    assert f"read as: {YEAR_CLAIM}" in out and "fragile" in out
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(fragment, not checked) 1889" in out and "no question was given" in out


def test_ene_eval_passes_the_question(tmp_path: Path) -> None:
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    request = {"id": "q", "answer": "1889", "contexts": [TOWER], "question": YEAR_Q}
    source.write_text(json.dumps(request) + "\n")
    assert main(["eval", str(source), "-o", str(out), "--oracle", "keyword"]) == 0
    claim = EvidenceNecessityGraph.from_json(out.read_text().splitlines()[0]).claims[0]
    assert claim.status == "supported" and claim.hypothesis == YEAR_CLAIM


def test_viewer_shows_the_hypothesis_escaped(keyword_engine: NecessityEngine) -> None:
    question = "In what year was the <b>Eiffel</b> Tower completed?"
    eng = keyword_engine.evaluate("1889", [TOWER], question=question)
    page = render_html([eng])
    assert "read as: <q>The &lt;b&gt;Eiffel&lt;/b&gt; Tower was completed in 1889.</q>" in page
    assert "<b>Eiffel" not in page


# -- the shipped verifier -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def nli_engine(device: str) -> NecessityEngine:
    pytest.importorskip("torch")
    from ene_core import NLIOracle

    engine = NecessityEngine(NLIOracle(device=device))
    yield engine
    engine.close()


def test_the_shipped_verifier_tells_the_right_short_answer_from_a_wrong_one(
    nli_engine: NecessityEngine,
) -> None:
    chunks = [
        "The Oberoi family is an Indian family that is famous for its involvement in hotels, "
        "namely through The Oberoi Group. The Oberoi Group is a hotel company with its head "
        "office in Delhi.",
        BANANAS,
    ]
    question = "The Oberoi family is part of a hotel company that has a head office in what city?"
    right, wrong = nli_engine.evaluate_many(
        [{"answer": a, "contexts": chunks, "question": question} for a in ("Delhi", "Mumbai")]
    )
    assert right.claims[0].status == "supported" and right.claims[0].necessary == [0]
    assert wrong.claims[0].status != "supported"
    bridge = ["The bridge over the river was built in 1931 by the city."]
    yes, no = nli_engine.evaluate_many(
        [
            {"answer": a, "contexts": bridge, "question": "Was the bridge built in 1931?"}
            for a in ("Yes.", "No.")
        ]
    )
    assert yes.claims[0].status == "supported" and no.claims[0].status != "supported"
