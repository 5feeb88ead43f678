"""The verifier's data recipe (scripts/nli_sources.py, scripts/build_nli_data.py) on small
fixtures: label mapping per source, evaluation pairs kept out, dev split, determinism, and the
hard-case generators."""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

pytest.importorskip("pysbd")

from build_nli_data import build, table
from nli_sources import SOURCES, source_pairs
from synth_lexical import advice_pairs, lexical_pairs, opposed, reworded
from synth_nli import (
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    NOT_ENTAILMENT,
    change_quantifier,
    inflect,
    join_claims,
    swap_unit,
)
from synth_v3 import (
    list_binding_pairs,
    person_names,
    polarity_forms,
    polarity_pairs,
    role_binding_pairs,
    scope_pairs,
    topic_pairs,
)

from ene_core.rules.quantities import spell

E, N, C, NE = ENTAILMENT, NEUTRAL, CONTRADICTION, NOT_ENTAILMENT


@pytest.mark.parametrize(
    ("source", "raw", "expected"),
    [
        ("mnli", "entailment", E),
        ("mnli", "neutral", N),
        ("mnli", "contradiction", C),
        ("paws", "paraphrase", E),
        ("paws", "not_paraphrase", NE),
        ("med", "entailment", E),
        ("med", "neutral", NE),  # MED's neutral also covers contradiction
        ("begin", "Fully attributable", E),
        ("begin", "Not fully attributable", NE),
        ("begin", "Generic", None),
        ("factcheck", "completely-support", E),
        ("factcheck", "partially-support", N),  # fail-closed
        ("factcheck", "refute", C),
        ("factcheck", "irrelevant", N),
        ("faithdial", "Entailment", E),
        ("faithdial", "entailment,hallucination", NE),
        ("faithdial", "Partial Hallucination", NE),
        ("faithdial", "generic", None),
        ("faithdial", "entailment,uncooperative", None),
        ("scitail", "not_entailment", N),  # SciTail's original label is neutral
        ("fever", "SUPPORTS", E),
        ("fever", "REFUTES", C),
        ("q2", "inconsistent", NE),
        ("rte", "not_entailment", NE),
        ("mnli", "-", None),
    ],
)
def test_label_mapping(source: str, raw: str, expected: int | None) -> None:
    assert SOURCES[source].map_label(raw) == expected


def test_qnli_is_left_out() -> None:
    assert not any("qnli" in s.path for s in SOURCES.values())


def test_source_pairs_field_names_split_and_drops() -> None:
    dropped: dict[str, int] = {}
    rows = [
        {"sentence1": "A b c.", "sentence2": "C b a.", "label": "paraphrase"},
        {"sentence1": "X y.", "sentence2": "Y x.", "label": "???"},
    ]
    pairs = list(source_pairs("paws", iter(rows), dropped))
    # a paraphrase entails both ways
    assert [(p.premise, p.hypothesis, p.label) for p in pairs] == [
        ("A b c.", "C b a.", E),
        ("C b a.", "A b c.", E),
    ]
    assert dropped == {"paws": 1}
    snli = [
        {"premise": "P1", "hypothesis": "H1", "label": "neutral", "split": "dev"},
        {"premise": "P2", "hypothesis": "H2", "label": "neutral", "split": "test"},
    ]
    assert [p.premise for p in source_pairs("snli", iter(snli))] == ["P1"]


# --------------------------------------------------------------------------- whole recipe


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A miniature ../shared/data with every source the recipe reads."""
    d = tmp_path / "data"
    rng = random.Random(0)
    words = [
        "river",
        "bank",
        "museum",
        "opened",
        "city",
        "council",
        "library",
        "budget",
        "report",
        "staff",
    ]

    def sentence(i: int) -> str:
        picked = " ".join(rng.choice(words) for _ in range(6))
        return f"The {picked} number {i} was approved on Sundays in 2019."

    three = ["entailment", "neutral", "contradiction"]
    snli = [
        {"premise": sentence(i), "hypothesis": f"h{i}", "label": three[i % 3], "split": "dev"}
        for i in range(60)
    ] + [{"premise": "Test P.", "hypothesis": "Test H.", "label": "neutral", "split": "test"}]
    _write_jsonl(d / "nli_more/snli_dev_test_full_esnli/data.jsonl", snli)
    # both SNLI subsets are slices of dev: their pairs must never be trained on
    _write_jsonl(d / "nli/snli_dev_subset.jsonl", snli[:2])
    _write_jsonl(d / "nli/snli_test_subset.jsonl", snli[2:3])
    simple = {
        "mnli": ("nli_more/mnli_dev_m_mm", three),
        "conjnli": ("nli_more/conjnli", three),
        "breaking_nli": ("nli_more/breaking_nli", three),
        "med": ("nli_more/med_monotonicity", ["entailment", "neutral"]),
        "begin": ("nli_more/begin_dialogue_attribution", ["Fully attributable", "Generic"]),
        "factcheck": ("nli_more/factcheck_gpt_claim_evidence", ["refute", "irrelevant"]),
        "faithdial": ("nli_more/faithdial_begin_audit", ["Entailment", "hallucination"]),
        "scitail": ("nli_more/scitail_test", ["entailment", "not_entailment"]),
        "fever": ("nli_more/fever_symmetric", ["SUPPORTS", "REFUTES"]),
        "q2": ("nli_more/q2_wow_consistency", ["consistent", "inconsistent"]),
    }
    for name, (path, labels) in simple.items():
        rows = [
            {"premise": sentence(i), "hypothesis": f"{name} h{i}", "label": labels[i % len(labels)]}
            for i in range(40)
        ]
        _write_jsonl(d / path / "data.jsonl", rows)
    paws = [
        {"sentence1": sentence(i), "sentence2": f"p{i}", "label": "paraphrase"} for i in range(10)
    ]
    _write_jsonl(d / "nli_more/paws_wiki_dev_test/data.jsonl", paws)
    rte = [
        {
            "premise": f"{sentence(i)} Mayor {'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i % 26]}ardon met "
            f"Governor {'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[(i * 7) % 26]}elby in 2020. "
            "It approved 5 km of road.",
            "hypothesis": f"rte h{i}",
            "label": ["entailment", "not_entailment"][i % 2],
        }
        for i in range(30)
    ]
    _write_jsonl(d / "nli/rte_train.jsonl", rte)
    question = {
        "question": "Which city hosts the museum?",
        "answer": "Paris",
        "supporting_facts": [["Museum", 0], ["Paris", 0]],
        "context": [
            ["Museum", ["The museum is in Paris.", "It opened in 1901."]],
            ["Paris", ["Paris is the capital of France.", "It has 2 million people."]],
            ["Lyon", ["Lyon is a city in France.", "It lies on the Rhone."]],
        ],
    }
    hotpot = d / "hotpotqa/hotpot_dev_distractor_first100.json"
    hotpot.parent.mkdir(parents=True)
    hotpot.write_text(json.dumps([question] * 60), encoding="utf-8")
    return d


def _keys(pairs) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return {(p.premise, p.hypothesis) for p in pairs}


def test_build_keeps_evaluation_pairs_out_and_is_deterministic(shared: Path) -> None:
    splits = build(shared, seed=13)
    every = splits.train + splits.calib
    premises = {p.premise for p in every}
    assert "Test P." not in premises  # SNLI split: test
    for row in map(json.loads, (shared / "nli/snli_dev_subset.jsonl").read_text().splitlines()):
        assert (row["premise"], row["hypothesis"]) not in _keys(every)
    for row in map(json.loads, (shared / "nli/snli_test_subset.jsonl").read_text().splitlines()):
        assert (row["premise"], row["hypothesis"]) not in _keys(every)
    # unmapped labels are dropped and counted, never guessed
    assert splits.dropped["begin"] == 20 and "faithdial" not in splits.dropped
    # no duplicates, train and dev disjoint
    assert len(_keys(every)) == len(every)
    assert not _keys(splits.train) & _keys(splits.calib)
    # the dev split holds out whole premises of the real sources
    real = {"mnli", "conjnli", "snli", "fever", "scitail", "breaking_nli", "med"}
    train_p = {p.premise for p in splits.train if p.source in real}
    dev_p = {p.premise for p in splits.calib if p.source in real}
    assert not train_p & dev_p
    # every label kind is present, generated hard cases included
    assert {p.label for p in splits.train} == {E, N, C, NE}
    assert any(p.source.startswith("gen:") for p in splits.train)
    again = build(shared, seed=13)
    assert [(p.premise, p.hypothesis, p.label) for p in again.train] == [
        (p.premise, p.hypothesis, p.label) for p in splits.train
    ]
    assert "| **all** |" in table(splits)


# --------------------------------------------------------------------------- generators


def test_swap_unit_changes_the_unit_not_the_number() -> None:
    out = swap_unit("The trail is 5 km long.", random.Random(0))
    assert out == "The trail is 5 miles long."
    assert swap_unit("The trail is long.", random.Random(0)) is None


def test_change_quantifier_strengthens_the_claim() -> None:
    assert change_quantifier("Some stores open early.", random.Random(0)) is None  # capital S
    assert change_quantifier("It is often closed.", random.Random(0)) == "It is always closed."


def test_inflect_keeps_the_meaning() -> None:
    rng = random.Random(0)
    assert inflect("The shop is closed on Sundays.", rng) == "The shop is closed on Sunday."
    assert inflect("It opened on March 3, 2019.", rng) == "It opened on 3 March 2019."
    assert inflect("It has 3 rooms.", rng) == "It has three rooms."
    assert inflect("Nothing to vary here.", rng) is None


def test_join_claims_states_both_facts() -> None:
    assert join_claims("The bridge opened in 1932.", "The river is wide.") == (
        "The bridge opened in 1932, and the river is wide."
    )
    assert join_claims("A is big.", "NASA runs it.") == "A is big, and NASA runs it."


def test_polarity_forms_negate_the_main_clause_only() -> None:
    assert polarity_forms("The museum is open on Mondays.") == (
        "The museum is open on Mondays.",
        "The museum is not open on Mondays.",
    )
    assert polarity_forms("He did not finish the race.") == (
        "He did finish the race.",
        "He did not finish the race.",
    )
    assert polarity_forms("The band has never toured Asia.") == (
        "The band has toured Asia.",
        "The band has never toured Asia.",
    )
    # an auxiliary inside a relative clause, or "has" without a participle: left alone
    assert polarity_forms("The man who was tall is running.") is None
    assert polarity_forms("The village has a railway station.") is None


def test_polarity_pairs_give_a_negated_claim_every_label_against_reworded_evidence() -> None:
    pool = ["The river is wide.", "A dog sleeps.", "Prices rose in May.", "It rained."]
    labels: dict[str, list[int]] = {"pos": [], "neg": []}
    for seed in range(20):
        for p in polarity_pairs("The museum is open on Mondays.", pool, random.Random(seed), "t"):
            polarity = p.source.rsplit("-", 1)[1]
            labels[polarity].append(p.label)
            assert p.hypothesis not in p.premise.split("\n")  # never the claim verbatim
            if p.label == ENTAILMENT:
                assert ("not" in p.hypothesis or "n't" in p.hypothesis) == (polarity == "neg")
    for polarity in ("pos", "neg"):
        counts = [labels[polarity].count(label) for label in (ENTAILMENT, NEUTRAL, CONTRADICTION)]
        assert counts == [20, 20, 20]


def _shares(pairs: list, keep=lambda p: True) -> list[float]:
    chosen = [p.label for p in pairs if keep(p)]
    return [chosen.count(label) / len(chosen) for label in (ENTAILMENT, NEUTRAL, CONTRADICTION)]


def _number_forms(hypothesis: str) -> set[str]:
    """The claim's number as digits and as words ("90%" also as "90 per cent")."""
    words = {spell(n): str(n) for n in range(1, 1000)}
    m = re.search(
        r"\b(\d+)(%| per cent)?|\b(" + "|".join(sorted(words, key=len)[::-1]) + r")\b", hypothesis
    )
    assert m, hypothesis
    digits = m.group(1) or words[m.group(3)]
    return {digits, spell(int(digits))}


def test_list_binding_keeps_the_value_in_the_premise_under_every_label() -> None:
    pool = ["The river is wide.", "A dog sleeps."]
    pairs = [p for seed in range(60) for p in list_binding_pairs(pool, random.Random(seed), "t")]
    listed = lambda p: any(re.search(rf"\b{f}\b", p.premise) for f in _number_forms(p.hypothesis))  # noqa: E731
    for p in pairs:
        tag = p.source.split(":")[-1]
        if tag in ("list-right", "list-swapped"):  # the value is written in the premise
            assert listed(p), (p.premise, p.hypothesis)
        if tag == "list-swapped":
            assert p.label == CONTRADICTION
    # a value that is in the premise is entailed, contradicted or neutral about as often, and
    # a value written another way is entailed too
    assert min(_shares(pairs, listed)) > 0.2, _shares(pairs, listed)
    other = [
        p
        for p in pairs
        if listed(p)
        and not any(
            re.search(rf"\b{f}\b", p.premise) and re.search(rf"\b{f}\b", p.hypothesis)
            for f in _number_forms(p.hypothesis)
        )
    ]
    assert {p.label for p in other} == {ENTAILMENT, NEUTRAL, CONTRADICTION}


def test_role_binding_names_both_people_under_entailment_and_contradiction() -> None:
    pool = ["The river is wide."]
    names = person_names([], random.Random(0))
    pairs = [
        p for seed in range(40) for p in role_binding_pairs(names, pool, random.Random(seed), "t")
    ]
    named = lambda p: [n for n in names if n in p.hypothesis]  # noqa: E731
    for p in pairs:  # a swapped role names only people the premise names, as the right one does
        if not p.source.endswith("role-absent"):
            assert named(p) and all(n in p.premise for n in named(p)), p
    assert _shares(pairs) == pytest.approx([1 / 3, 1 / 3, 1 / 3])


def test_scope_pairs_give_negated_and_only_claims_every_label() -> None:
    pool = ["The river is wide.", "A dog sleeps."]
    pairs = [p for seed in range(200) for p in scope_pairs(pool, random.Random(seed), "t")]
    negated = lambda p: bool(re.search(r"\bnot\b|n't|cannot", p.hypothesis))  # noqa: E731
    for keep in (negated, lambda p: not negated(p), lambda p: "only" in p.premise.lower()):
        assert min(_shares(pairs, keep)) > 0.15, _shares(pairs, keep)
    overall = _shares(pairs)
    for with_cue in (_shares(pairs, negated), _shares(pairs, lambda p: not negated(p))):
        assert max(abs(a - b) for a, b in zip(with_cue, overall, strict=True)) < 0.15
    only = [p for p in pairs if p.source.endswith("scope-only")]
    plain = [p for p in pairs if p.source.endswith("scope-plain")]
    assert {p.label for p in only} == {ENTAILMENT, CONTRADICTION}  # the restriction decides
    assert NEUTRAL in {p.label for p in plain}  # its twin without "only" leaves others open


_PARAGRAPH = [
    "The Arden Museum is a natural history museum in the town of Velland.",
    "The museum was founded in 1921 by the botanist Henrik Lau.",
    "Its collection holds about 40,000 specimens of alpine plants.",
    "The museum café on the top floor serves lunch until 15:00.",
    "Admission for adults costs 12 euros, and children enter free.",
]


def test_topic_pairs_give_the_same_siblings_every_label() -> None:
    pool = ["The river is wide.", "A dog sleeps."]
    pairs = [
        p for seed in range(80) for p in topic_pairs(_PARAGRAPH, pool, random.Random(seed), "t")
    ]
    by_tag = Counter(p.source.split(":")[-1] for p in pairs)
    assert set(by_tag) == {"topic-sibling", "topic-stated", "topic-changed"}, by_tag
    assert max(by_tag.values()) - min(by_tag.values()) <= 0.2 * max(by_tag.values()), by_tag
    for p in pairs:
        lines = p.premise.split("\n")
        tag = p.source.split(":")[-1]
        seed = next(s for s in _PARAGRAPH if p.hypothesis.rstrip(".") in s)
        siblings = [s for s in _PARAGRAPH if s != seed]
        assert any(s in lines for s in siblings), p  # the same topic is always in the premise
        if tag == "topic-sibling":
            assert p.label == NEUTRAL and seed not in lines
        elif tag == "topic-stated":
            assert p.label == ENTAILMENT
        else:
            assert p.label == CONTRADICTION and seed not in lines


def test_topic_pairs_skip_a_seed_its_siblings_could_entail() -> None:
    covered = "Ada Brook won the long race in Velland."
    longer = "Ada Brook won the long race in Velland in 2019 with ease."
    pairs = [
        p
        for seed in range(40)
        for p in topic_pairs([covered, longer], [], random.Random(seed), "t")
        if p.label == NEUTRAL
    ]
    hypotheses = {p.hypothesis for p in pairs}
    assert longer in hypotheses  # says more than its sibling: neutral without it
    assert covered not in hypotheses  # its sibling entails it: never called neutral


def test_reworded_swaps_a_synonym_and_agrees_the_article() -> None:
    out = reworded("Using it that way is a mistake.", random.Random(0))
    assert out == "Using it that way is an error."
    assert reworded("The river is wide.", random.Random(0)) is None  # nothing to swap
    assert opposed("Repayments begin in April.", random.Random(0)) == "Repayments end in April."


def test_lexical_pairs_give_a_small_edit_both_labels() -> None:
    seeds = [
        "Repayments begin in the April after you finish your course.",
        "The company was founded in 1901 and mainly makes bicycles.",
        "Staff must wear a badge at least once a week.",
    ]
    pool = ["The river is wide.", "A dog sleeps on the mat."]
    pairs = [
        p for i in range(30) for s in seeds for p in lexical_pairs(s, pool, random.Random(i), "t")
    ]
    labels = Counter(p.label for p in pairs)
    assert labels[ENTAILMENT] and labels[CONTRADICTION] and not labels[NEUTRAL], labels
    # the cue "one sentence with a word or two changed" is not a contradiction cue
    assert 0.35 <= labels[ENTAILMENT] / len(pairs) <= 0.65, labels
    for p in pairs:
        assert p.hypothesis not in p.premise.split("\n")  # never verbatim
        changed = [s for s in seeds if s in p.premise.split("\n") or s == p.hypothesis]
        assert changed, p  # one side is always the sentence as written


def test_advice_pairs_give_you_should_and_you_should_not_both_labels() -> None:
    pairs = [
        p
        for i in range(40)
        for p in advice_pairs("Store the jam in a cool, dark place.", [], random.Random(i), "t")
    ]
    negated = re.compile(r"^(You shouldn't|You should not|Never|Don't|You must not|Do not)\b")
    cues = Counter((bool(negated.match(p.hypothesis)), p.label) for p in pairs)
    assert cues[(True, ENTAILMENT)] and cues[(True, CONTRADICTION)], cues
    assert cues[(False, ENTAILMENT)] and cues[(False, CONTRADICTION)], cues
    for p in pairs:  # the premise forbids it exactly when the entailed claim is negated
        forbids = p.premise.startswith(("Do not", "Never", "Please do not"))
        assert forbids == (bool(negated.match(p.hypothesis)) == (p.label == ENTAILMENT)), p
    assert advice_pairs("Avoid swimming for four weeks.", [], random.Random(0), "t") == []
