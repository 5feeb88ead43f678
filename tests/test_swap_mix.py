"""The one-span swap twins (scripts/build_swap_mix.py, scripts/data/paraphrase_lexicon/), the
"one span swapped" cue of scripts/audit_cues.py, and the hand-written swap probe
(benchmarks/data/swap_probe.jsonl)."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

pytest.importorskip("pysbd")

from audit_cues import swapped_span  # noqa: E402
from build_swap_mix import (  # noqa: E402
    LEXICON,
    Entry,
    Lexicon,
    read_lexicon,
    replace_at,
    sentences,
    swap_pairs,
    twins,
)
from synth_nli import ENTAILMENT, NOT_ENTAILMENT, Pair  # noqa: E402

PROBE = ROOT / "benchmarks" / "data" / "swap_probe.jsonl"
NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor)\b|n't\b", re.IGNORECASE)


def test_every_lexicon_line_is_an_entry_with_both_sides() -> None:
    lines = [
        (path.name, n, line)
        for path in sorted(LEXICON.glob("*.jsonl"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]
    assert len(lines) >= 300
    for name, n, line in lines:
        row = json.loads(line)
        assert row["word"].strip(), (name, n)
        assert row["same"] and row["other"], (name, n)
        assert row["word"].lower() not in {s.lower() for s in row["same"] + row["other"]}
        assert not set(row["same"]) & set(row["other"]), (name, n)
    words = [json.loads(line)["word"].lower() for _, _, line in lines]
    assert len(set(words)) == len(words) == len(read_lexicon())


def test_paraphrases_add_no_negation() -> None:
    """A "same" replacement that brought a negation in would teach the negation cue again."""
    for e in read_lexicon().entries.values():
        if not NEGATION.search(e.word):
            assert not any(NEGATION.search(s) for s in e.same), e


def test_twins_replace_the_same_word_in_the_same_place() -> None:
    entry = Entry("start", ("begin",), ("stop",))
    same, other = twins("Repayments start in April.", Lexicon([entry]), random.Random(0))
    assert (same, other) == ("Repayments begin in April.", "Repayments stop in April.")
    assert twins("Repayments restart in April.", Lexicon([entry]), random.Random(0)) is None
    assert twins("The Start Fund opens in April.", Lexicon([entry]), random.Random(0)) is None
    assert twins("Start in April.", Lexicon([entry]), random.Random(0)) == (
        "Begin in April.",
        "Stop in April.",
    )


def test_no_change_brings_in_a_negation() -> None:
    lexicon = Lexicon(
        [Entry("must", ("has to",), ("must not",)), Entry("start", ("begin",), ("stop",))]
    )
    assert twins("You must pay.", lexicon, random.Random(0)) is None
    assert twins("You must start early.", lexicon, random.Random(0)) == (
        "You must begin early.",
        "You must stop early.",
    )
    negated = Lexicon([Entry("must not", ("may not",), ("must",))])
    assert twins("You must not pay.", negated, random.Random(0)) == (
        "You may not pay.",
        "You must pay.",
    )


def test_replacement_keeps_capitals_and_fixes_the_article() -> None:
    assert replace_at("Start early.", 0, 5, "begin") == "Begin early."
    assert replace_at("It is a large room.", 8, 13, "enormous") == "It is an enormous room."
    assert replace_at("An easy route.", 3, 7, "simple") == "A simple route."


@given(
    st.lists(
        st.sampled_from(["the", "pool", "opens", "at", "noon", "daily", "for", "members"]),
        min_size=4,
        max_size=12,
    )
)
def test_both_twins_carry_the_one_span_cue(words: list[str]) -> None:
    """By construction both hypotheses are the sentence with one span swapped: the cue the
    audit measures is then given to both labels alike."""
    sentence = "The " + " ".join(words) + " closes today."
    lexicon = Lexicon([Entry("closes", ("shuts",), ("opens late",))])
    pairs = list(swap_pairs([sentence], lexicon, random.Random(1), per_premise=1))
    assert [p.label for p in pairs] == [ENTAILMENT, NOT_ENTAILMENT]
    assert {swapped_span(p) for p in pairs} == {("closes", "shuts"), ("closes", "opens late")}


def test_swap_pairs_is_deterministic_and_capped_per_premise() -> None:
    premise = "The gym opens at six. Members must book a slot. The pool closes at ten."
    lexicon = read_lexicon()
    runs = [list(swap_pairs([premise], lexicon, random.Random(3), 2)) for _ in range(2)]
    assert runs[0] == runs[1]
    assert len(runs[0]) <= 4 and len(runs[0]) % 2 == 0
    assert all(isinstance(p, Pair) and p.premise == premise for p in runs[0])


def test_sentences_keep_only_readable_lengths() -> None:
    text = "Short one. This sentence has exactly eight words in it. " + "Word " * 50 + "end."
    assert sentences(text) == ["This sentence has exactly eight words in it."]


def test_swapped_span_finds_one_replaced_span_only() -> None:
    assert swapped_span(
        Pair("The hall holds up to 40 people.", "The hall holds no more than 40 people.", 0, "x")
    ) == ("up to", "no more than")
    assert (
        swapped_span(Pair("The hall holds 40 people.", "The hall holds 40 people.", 0, "x")) is None
    )
    assert (
        swapped_span(
            Pair("The hall holds up to 40 people.", "A room for forty guests is available.", 0, "x")
        )
        is None
    )


def test_the_probe_is_twinned_and_each_pair_is_one_span_apart() -> None:
    rows = [json.loads(line) for line in PROBE.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) >= 120
    assert len({r["id"] for r in rows}) == len(rows)
    labels = [r["label"] for r in rows]
    assert labels.count("entailment") == labels.count("contradiction")
    apart = [swapped_span(Pair(r["premise"], r["hypothesis"], 0, "probe"), 5) for r in rows]
    assert sum(a is not None for a in apart) >= 0.9 * len(rows)
