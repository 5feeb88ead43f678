"""Words the evidence writes another way (ene_core.paraphrases) and the packer's use of them."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine, NLIOracle
from ene_core.paraphrases import LEXICON, align, lexicon, read_entries
from ene_core.premise import PremisePacker

WORD = re.compile(r"[\w'-]+")


@pytest.mark.parametrize(
    ("sentence", "claim", "aligned"),
    [
        (
            "Repayments start in April.",
            "Repayments begin in April.",
            "Repayments begin in April.",
        ),
        (
            "A competent engineer must service each extinguisher once a year.",
            "Have a qualified engineer service each one annually.",
            "A qualified engineer must service each extinguisher annually.",
        ),
        ("Start early.", "Begin early.", "Begin early."),  # a sentence's capital is kept
        # the claim writes the sentence's own word, or no synonym of it: left alone
        ("Repayments start in April.", "Repayments start or begin in April.", None),
        ("Repayments start in April.", "Repayments stop in April.", None),
        ("Repayments restart in April.", "Repayments begin in April.", None),
        # a capital inside a sentence is a name
        ("The Start Fund opens in April.", "The begin fund opens in April.", None),
    ],
)
def test_align(sentence: str, claim: str, aligned: str | None) -> None:
    assert align(sentence, claim) == (sentence if aligned is None else aligned)


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


TERMS = sorted(lexicon().synonyms)


@given(
    st.lists(st.sampled_from([*TERMS[:200], "the", "fee", "is", "paid", "Monday"]), max_size=8),
    st.lists(st.sampled_from([*TERMS[:200], "the", "fee", "was", "charged"]), max_size=8),
)
def test_align_writes_only_the_claims_words_and_is_idempotent(
    sentence_words: list[str], claim_words: list[str]
) -> None:
    sentence, claim = " ".join(["It", *sentence_words]) + ".", " ".join(claim_words) + "."
    out = align(sentence, claim)
    assert _words(out) <= _words(sentence) | _words(claim)
    assert align(out, claim) == out


def test_the_lexicon_reads_same_both_ways_and_never_an_other() -> None:
    entries = list(read_entries())
    syn = lexicon().synonyms
    for e in entries:
        for s in e.same:
            assert s.lower() in syn[e.word] and e.word in syn[s.lower()]
    # no word is both a paraphrase and a change of another word
    for e in entries:
        assert not {s.lower() for s in e.same} & {o.lower() for o in e.other}, e


def test_a_broken_lexicon_line_names_its_file_and_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"word": "start", "same": ["begin"], "other": ["stop"]}) + "\n{oops\n"
    )
    with pytest.raises(ValueError, match=r"a\.jsonl:2"):
        list(read_entries(tmp_path))
    assert LEXICON.is_dir()


def test_the_packer_aligns_paraphrases_and_says_so() -> None:
    claim = "Repayments begin in the April after you finish your course."
    evidence = ["Repayments start in the April after you finish your course."]
    assert PremisePacker().index(evidence).premise(claim).text == claim
    assert PremisePacker().describe()["paraphrases"] == "aligned"
    off = PremisePacker(align_paraphrases=False)
    assert off.index(evidence).premise(claim).text == evidence[0]
    assert "paraphrases" not in off.describe()


def test_the_shipped_verifier_supports_a_one_word_paraphrase_once_aligned() -> None:
    """With the words as written, v3.2 calls this claim contradicted (p_contra 0.8)."""
    claim = "Repayments begin in the April after you finish your course."
    evidence = ["Repayments start in the April after you finish your course.", "Fees are due."]
    oracle = NLIOracle()
    aligned = NecessityEngine(oracle).evaluate(claim, evidence)
    raw = NecessityEngine(oracle, packer=PremisePacker(align_paraphrases=False)).evaluate(
        claim, evidence
    )
    assert aligned.claims[0].status == "supported"
    assert aligned.claims[0].necessary == [0]
    assert raw.claims[0].p_entail < aligned.claims[0].p_entail
