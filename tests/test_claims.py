import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core.text.claims import read_with_question, split_claims
from ene_core.text.sentences import split_sentences
from ene_core.text.short_answers import cannot_be_claim


def texts(answer: str) -> list[str]:
    return [s.text for s in split_claims(answer) if s.checkable]


def test_abbreviations_decimals_initials_stay_in_one_claim() -> None:
    answer = (
        "Dr. Smith moved to the U.S. in 1990. The rate rose to 3.5 percent. "
        "J. R. R. Tolkien wrote The Hobbit. St. Louis is on the Mississippi."
    )
    assert texts(answer) == [
        "Dr. Smith moved to the U.S. in 1990.",
        "The rate rose to 3.5 percent.",
        "J. R. R. Tolkien wrote The Hobbit.",
        "St. Louis is on the Mississippi.",
    ]


def test_citations_are_stripped_and_kept() -> None:
    segments = split_claims("Paris is the capital [1]. It has museums [2, 3]. Tall tower. [4]")
    assert [s.text for s in segments] == ["Paris is the capital.", "It has museums.", "Tall tower."]
    assert [s.cited for s in segments] == [(1,), (2, 3), (4,)]


def test_citation_ranges_expand() -> None:
    (segment,) = split_claims("Rain fell for days [2-4].")
    assert segment.cited == (2, 3, 4)


def test_lists_line_breaks_headings_and_non_claims() -> None:
    answer = (
        "# Summary\n"
        "Here is what I found:\n"
        "- The tower is 330 metres tall.\n"
        "2) It opened in 1889\n"
        "Is it the tallest?\n"
        "The documents do not say.\n"
        "Sources: [1] wiki"
    )
    segments = split_claims(answer)
    kinds = [(s.kind, s.text) for s in segments]
    assert kinds == [
        ("heading", "# Summary"),
        ("heading", "Here is what I found:"),
        ("claim", "The tower is 330 metres tall."),
        ("claim", "It opened in 1889"),
        ("question", "Is it the tallest?"),
        ("refusal", "The documents do not say."),
        ("heading", "Sources: wiki"),
    ]


def test_empty_and_blank_answers_have_no_segments() -> None:
    assert split_claims("") == []
    assert split_claims(" \n\t ") == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_spans_tile_the_answer(answer: str) -> None:
    segments = split_claims(answer)
    if not answer.strip():
        assert segments == []
        return
    assert segments[0].start == 0
    assert segments[-1].end == len(answer)
    for a, b in itertools.pairwise(segments):
        assert a.end == b.start
    assert all(answer[s.start : s.end].strip() for s in segments)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["The cat sat.", "Dr. Who left [1].", "- item one", "3.5 is a number.", "Why?", "\n"]
        ),
        max_size=12,
    ).map(" ".join)
)
def test_spans_tile_rag_like_answers(answer: str) -> None:
    segments = split_claims(answer)
    assert "".join(answer[s.start : s.end] for s in segments) == (answer if answer.strip() else "")


def test_sentence_spans_cover_context_text() -> None:
    text = "First sentence. Second one!\nThird line"
    spans = split_sentences(text)
    assert "".join(text[a:b] for a, b in spans) == text
    assert len(spans) == 3


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        ("It runs Python 3.12. Python is fast.", ["It runs Python 3.12.", "Python is fast."]),
        (
            "Water boils at 100 °C. Ice melts at 0 °C.",
            ["Water boils at 100 °C.", "Ice melts at 0 °C."],
        ),
        ("Install version 1.2.3. Next came 2.0.", ["Install version 1.2.3.", "Next came 2.0."]),
        ("It is 3.5 m. wide", ["It is 3.5 m. wide"]),  # no capital after the stop: one claim
        ("Pi is about 3.14 and rising.", ["Pi is about 3.14 and rising."]),
    ],
)
def test_a_sentence_ending_in_a_decimal_or_temperature_is_split(
    answer: str, claims: list[str]
) -> None:
    assert [s.text for s in split_claims(answer) if s.checkable] == claims


# -- sentence ends syntok misses, and stops that end nothing ---------------------------------------
@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        (  # consecutive citation markers before the stop
            "It weighs 895 grams [3][2]. Kestrel Labs was founded by Ingrid Dahl.",
            ["It weighs 895 grams.", "Kestrel Labs was founded by Ingrid Dahl."],
        ),
        (
            "It weighs 895 grams [3] [2]. Kestrel Labs was founded by Ingrid Dahl.",
            ["It weighs 895 grams.", "Kestrel Labs was founded by Ingrid Dahl."],
        ),
        (
            "The shop opens at 9 a.m. It closes at 5 p.m. Staff arrive early.",
            ["The shop opens at 9 a.m.", "It closes at 5 p.m.", "Staff arrive early."],
        ),
        ("The shop opens at 9 a.m. on Mondays.", ["The shop opens at 9 a.m. on Mondays."]),
        ("It closes at 5 p.m. EST on Fridays.", ["It closes at 5 p.m. EST on Fridays."]),
        ("He moved to the U.S. He liked it.", ["He moved to the U.S.", "He liked it."]),
        ("He joined the U.S. Army in 1990.", ["He joined the U.S. Army in 1990."]),
        ("She has a Ph.D. She teaches.", ["She has a Ph.D.", "She teaches."]),
        ("Read e.g. The Hobbit first.", ["Read e.g. The Hobbit first."]),
        ("Some fruits, i.e. Apples, are red.", ["Some fruits, i.e. Apples, are red."]),
        ("Pi is about 3.14159. It is irrational.", ["Pi is about 3.14159.", "It is irrational."]),
        ("Upgrade to v2.1.3. It fixes a leak.", ["Upgrade to v2.1.3.", "It fixes a leak."]),
        ("Version v2.1.3 fixes a leak.", ["Version v2.1.3 fixes a leak."]),
        (
            "See https://example.com/a.b?x=1. It is useful.",
            ["See https://example.com/a.b?x=1.", "It is useful."],
        ),
        (
            "The docs at https://docs.python.org/3.12/library/re.html list every flag.",
            ["The docs at https://docs.python.org/3.12/library/re.html list every flag."],
        ),
        (
            "Write to ann.lee@example.co.uk. She answers fast.",
            ["Write to ann.lee@example.co.uk.", "She answers fast."],
        ),
        ("Mail ann.lee@example.co.uk for help.", ["Mail ann.lee@example.co.uk for help."]),
        ("Open config.json. It lists the keys.", ["Open config.json.", "It lists the keys."]),
    ],
)
def test_sentence_ends_after_markers_times_initialisms_versions_urls_and_emails(
    answer: str, claims: list[str]
) -> None:
    assert texts(answer) == claims


def test_consecutive_markers_keep_their_citations() -> None:
    first, second = split_claims("It weighs 895 grams [3][2]. Kestrel Labs was founded by Dahl.")
    assert (first.text, first.cited) == ("It weighs 895 grams.", (3, 2))
    assert (second.text, second.cited) == ("Kestrel Labs was founded by Dahl.", ())


STARTS = ["It", "The report", "She", "They"]
# Inside a sentence: each holds a full stop that must not end it.
MIDDLES = [
    "weighs 3.5 kg",
    "uses v2.1.3 daily",
    "cites https://example.com/a.b?x=1 often",
    "emails ann.lee@example.co.uk weekly",
    "lists fruits, e.g. apples,",
    "says i.e. nothing",
    "moved to the U.S. in 1990",
    "opens at 9 a.m. on Mondays",
    "was founded by Ingrid Dahl",
    "costs 12.50 dollars",
]
# The last word before the sentence's own full stop.
ENDS = [
    "in 2020",
    "at 5 p.m",
    "in the U.S",
    "to v2.1.3",
    "at https://example.com/docs",
    "to ann.lee@example.co.uk",
    "near 3.14",
    "by Ingrid Dahl",
    "at 100 °C",
    "in config.json",
]
CITES = ["", " [1]", " [3][2]", " [2] [4]", " [1, 2]"]

sentence_parts = st.tuples(
    st.sampled_from(STARTS), st.sampled_from(MIDDLES), st.sampled_from(ENDS), st.sampled_from(CITES)
)


@settings(max_examples=300, deadline=None)
@given(st.lists(sentence_parts, min_size=1, max_size=6))
def test_every_generated_sentence_is_one_claim(parts: list[tuple[str, str, str, str]]) -> None:
    """Sentences full of stops that end nothing (decimals, versions, URLs, e-mail addresses,
    e.g., U.S., a.m.) and ending in stops that do (after markers, times, initialisms, versions,
    URLs, addresses, decimals, temperatures) split into exactly those sentences."""
    sentences = [f"{start} {middle} {end}{cite}." for start, middle, end, cite in parts]
    answer = " ".join(sentences)
    segments = split_claims(answer)
    assert [s.text for s in segments] == [f"{a} {b} {c}." for a, b, c, _ in parts]
    assert [s.cited for s in segments] == [cited(cite) for *_, cite in parts]
    assert "".join(answer[s.start : s.end] for s in segments) == answer


def cited(markers: str) -> tuple[int, ...]:
    numbers = [int(n) for n in re.findall(r"\d+", markers)]
    return tuple(dict.fromkeys(numbers))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(MIDDLES), min_size=1, max_size=4), st.sampled_from(STARTS))
def test_stops_inside_a_sentence_never_split_it(middles: list[str], start: str) -> None:
    answer = f"{start} {' and '.join(middles)} today."
    assert texts(answer) == [answer]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .[]12@/:U.S")), max_size=80))
def test_splitting_is_deterministic_and_tiles_odd_text(answer: str) -> None:
    first, again = split_claims(answer), split_claims(answer)
    assert first == again
    assert "".join(answer[s.start : s.end] for s in first) == (answer if answer.strip() else "")


# -- every sentence checked (issue 54) -----------------------------------------------------------
# Verbs of every kind, most of them in no word list of the splitter: whatever the verb, a
# sentence with a subject and a verb is checked, with or without a question.
_VERB_TEXT = (
    "pose collaborate chew jog skate cheer pray nap bike linger ponder gossip tiptoe stroll "
    "hover wander shiver sneeze giggle whisper frown yawn scribble sprint paddle kneel juggle "
    "knit sketch hum rehearse sip nibble tremble vanish thrive flourish erode dissolve orbit "
    "hibernate migrate ferment oxidise compile deploy refactor encrypt throttle cache"
)
VERBS = tuple(_VERB_TEXT.split(" "))
SUBJECTS = ("A man", "Two women", "The committee", "Several children", "My neighbour", "People")
TAILS = ("", " quietly", " in the park", " for an hour", " together at home")


def _forms(verb: str) -> tuple[str, ...]:
    """The base form, the -s form, the -ing form and the past of a regular verb."""
    stem = verb[:-1] if verb.endswith("e") else verb
    third = verb + ("es" if verb.endswith(("sh", "ch", "s", "x")) else "s")
    past_form = verb + ("d" if verb.endswith("e") else "ed")
    return (verb, third, stem + "ing", past_form)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(SUBJECTS),
    st.sampled_from(VERBS),
    st.integers(0, 3),
    st.sampled_from(TAILS),
    st.none() | st.sampled_from(["What happened?", "Who was there?"]),
)
def test_a_sentence_is_checked_whatever_its_verb(
    subject: str, verb: str, form: int, tail: str, question: str | None
) -> None:
    sentence = f"{subject} {_forms(verb)[form]}{tail}."
    (segment,) = read_with_question(split_claims(sentence), question)
    assert segment.checkable, sentence
    assert segment.hypothesis_form in (None, "declarative", "question_answer")


# Answers as models and people write them; every one of them states something.
REAL_ANSWERS = [
    "A man and woman pose for engagement photos.",
    "Several women collaborate to hand out food.",
    "A man looking into a microscope in a lab",
    "father and son watching television at home",
    "Woman using her personal computer.",
    "A little girl in red.",
    "People outside.",
    "Some humans",
    "fish in bowl",
    "The committee postponed the vote.",
    "Refunds take five working days.",
    "Two engineers maintain the library.",
    "Our team recommends the premium plan.",
    "The drone weighs 240 grams.",
    "Most reviewers praised the sequel.",
]


@pytest.mark.parametrize("answer", REAL_ANSWERS)
def test_real_answer_texts_are_checked_without_a_question(answer: str) -> None:
    segments = read_with_question(split_claims(answer), None)
    assert [s.checkable for s in segments] == [True], answer


# What cannot be a claim on its own stays unchecked without a question, and is read as the
# answer to the question when there is one (the twin of the test above).
NOT_CLAIMS = [
    "Delhi",
    "1889",
    "in 1931",
    "on 2 March 1972",
    "Max Martin, Savan Kotecha and Ilya Salmanzadeh",
    "about 330 metres",
    "two years",
    "Yes.",
    "No, never.",
    "The Beatles",
]


@pytest.mark.parametrize("answer", NOT_CLAIMS)
def test_a_bare_name_number_or_yes_is_no_claim_alone_but_answers_a_question(answer: str) -> None:
    assert cannot_be_claim(answer)
    (alone,) = read_with_question(split_claims(answer), None)
    assert alone.kind == "fragment" and not alone.checkable
    (asked,) = read_with_question(split_claims(answer), "Where was the tower built?")
    assert asked.checkable and asked.hypothesis and asked.hypothesis_form is not None
