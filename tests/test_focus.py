"""The focus reading: a premise that packs weak sentences beside its best one is also read as
its leading sentences alone, and the two readings are blended."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.engine.premise import PremisePacker
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores
from ene_core.verifiers.verdict import blend, decide

BEST = "The fund's ongoing charge is 0.15 percent per year, taken from the fund's assets."
WEAK = "The fund's manager joined in 2004."
CLAIM = "The fund's ongoing charge is 0.15 percent per year."


def test_a_weak_sentence_packed_beside_the_best_one_is_left_out_of_the_focus() -> None:
    premise = PremisePacker().index([WEAK, BEST]).premise(CLAIM)
    assert premise.text == f"{BEST}\n{WEAK}" or premise.text == f"{WEAK}\n{BEST}"
    assert [p.strip() for p in premise.focus] == [BEST]
    assert premise.key != premise.text  # the cache tells the two readings' pairs apart


def test_sentences_that_score_alike_have_no_focus() -> None:
    twin = "The ongoing charge of the fund is 0.15 percent per year."
    premise = PremisePacker().index([BEST, twin]).premise(CLAIM)
    assert len(premise.parts) == 2 and premise.focus == () and premise.key == premise.text


def test_focus_zero_turns_the_second_reading_off() -> None:
    off = PremisePacker(focus=0)
    assert off.index([WEAK, BEST]).premise(CLAIM).focus == ()
    assert "focus" not in off.describe() and PremisePacker().describe()["focus"] == "0.3"
    eng = NecessityEngine(KeywordOracle(), packer=off).evaluate(CLAIM, [WEAK, BEST])
    assert eng.stats.focus_pairs == 0


def test_the_second_reading_costs_one_pair_and_is_counted() -> None:
    oracle = KeywordOracle()
    eng = NecessityEngine(oracle, cache_size=0).evaluate(CLAIM, [WEAK, BEST])
    assert eng.stats.focus_pairs >= 1
    assert oracle.pairs_scored == eng.stats.forward_pairs  # the second readings included


probability = st.floats(0.0, 1.0)


@given(probability, probability, probability, probability)
def test_blend_means_entailment_and_keeps_the_smaller_contradiction(
    e1: float, c1: float, e2: float, c2: float
) -> None:
    c1, c2 = c1 * (1 - e1), c2 * (1 - e2)  # each a distribution
    mixed = blend(Scores(e1, c1), Scores(e2, c2))
    assert mixed.entail == pytest.approx((e1 + e2) / 2)
    assert mixed.contra == min(c1, c2)
    assert mixed.entail + mixed.contra <= 1.0 + 1e-9
    # a contradiction must hold in both readings
    if decide(mixed, 0.5) == "contradicted":
        assert min(c1, c2) >= 0.5


def test_blend_keeps_truncation() -> None:
    assert blend(Scores(0.5, 0.1, truncated=True), Scores(0.5, 0.1)).truncated


class _Sure(KeywordOracle):
    """Every pair entails (0.9): the leading sentences always settle the verdict."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        self.pairs_scored += len(pairs)
        self.read += [premise for premise, _ in pairs]
        return [Scores(0.9, 0.05) for _ in pairs]


def test_leading_sentences_that_settle_the_verdict_spare_the_whole_premise() -> None:
    oracle = _Sure()
    engine = NecessityEngine(oracle, threshold=0.3)
    eng = engine.evaluate(CLAIM, [WEAK, BEST])
    whole = PremisePacker().index(sorted([WEAK, BEST])).premise(CLAIM)
    assert whole.focus  # the check has two readings, and only its leading sentences are read
    assert not any(WEAK in text and BEST in text for text in oracle.read)
    assert eng.claims[0].status == "supported" and eng.claims[0].p_entail == 0.9
    assert oracle.pairs_scored == eng.stats.forward_pairs and eng.stats.focus_pairs == 0


@given(st.floats(0.01, 1.0), probability, probability, probability, probability)
def test_leading_sentences_that_settle_give_the_blends_verdict(
    tau: float, e1: float, c1: float, e2: float, c2: float
) -> None:
    """Where the leading sentences settle (entail at least 2 τ and more than twice what they
    contradict), the blend is supported whatever the whole premise reads."""
    c1, c2 = c1 * (1 - e1), c2 * (1 - e2)
    focus, whole = Scores(e1, c1), Scores(e2, c2)
    settles = NecessityEngine(KeywordOracle(), threshold=tau)._settles(focus)
    if settles:
        assert decide(blend(whole, focus), tau, tau) == "supported" == decide(focus, tau, tau)
