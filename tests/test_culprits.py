"""Who contradicts a claim: a context that contradicts it alone, in a sentence about what the claim
is about (rounds.CULPRIT_SHARE of its content words, with check_bindings)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from engine_views import claim_of, streamed_and_whole
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.oracle import Scores
from ene_core.premise import content_words, word_share
from ene_core.rounds import CULPRIT_SHARE
from ene_core.testing import KeywordOracle

HOLDINGS = "The fund holds about 1,200 companies from 23 countries."
BOND = "The Global Bond Fund has an ongoing charge of 0.15 percent per year."
CLOSED = "The museum is closed on Mondays."
CAFE = "The museum café on the top floor serves lunch until 15:00."


class TopicalOracle(KeywordOracle):
    """Like a small NLI model that reads any sentence about a fund as a contradiction of a claim
    about one: entails a claim whose content words are all in the premise, contradicts one with
    "fund" in the premise, and is neutral otherwise."""

    name = "topical-oracle"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        out = []
        for premise, claim in pairs:
            have, need = set(content_words(premise)), set(content_words(claim))
            if need <= have:
                out.append(Scores(0.95, 0.02))
            elif "fund" in have:
                out.append(Scores(0.02, 0.9))
            else:
                out.append(Scores(0.05, 0.05))
        return out


def test_a_sentence_about_another_attribute_is_no_culprit() -> None:
    claim = "The fund holds about 1,500 companies."
    blind = NecessityEngine(TopicalOracle(), check_bindings=False).evaluate(claim, [BOND])
    assert (claim_of(blind, claim).status, claim_of(blind, claim).contradicted_by) == (
        "contradicted",
        [0],
    )
    eng = NecessityEngine(TopicalOracle()).evaluate(claim, [BOND])
    found = claim_of(eng, claim)  # "fund" is one of its four content words
    assert (found.status, found.contradicted_by) == ("unsupported", [])


@pytest.mark.parametrize("order", list(itertools.permutations([HOLDINGS, BOND, CLOSED])))
def test_the_sentence_about_the_claims_attribute_stays_the_culprit(order: tuple[str, ...]) -> None:
    claims = "The fund holds about 1,500 companies. The bond fund charges 0.25 percent per year."
    blind = NecessityEngine(TopicalOracle(), check_bindings=False).evaluate(claims, list(order))
    holds_blind = claim_of(blind, "The fund holds about 1,500 companies.")
    assert sorted(order[i] for i in holds_blind.contradicted_by) == sorted([HOLDINGS, BOND])
    streamed, whole = streamed_and_whole(NecessityEngine(TopicalOracle()), claims, order)
    for eng in (streamed, whole):
        holds = claim_of(eng, "The fund holds about 1,500 companies.")
        charges = claim_of(eng, "The bond fund charges 0.25 percent per year.")
        assert holds.status == "contradicted"
        assert [order[i] for i in holds.contradicted_by] == [HOLDINGS]
        assert charges.status == "contradicted"
        assert BOND in [order[i] for i in charges.contradicted_by]
    assert streamed.model_dump(exclude={"created_at", "stats"}) == whole.model_dump(
        exclude={"created_at", "stats"}
    )


@pytest.mark.parametrize(
    ("claim", "sentences", "share"),
    [
        (CLOSED, [CAFE], 1 / 3),  # "museum" of museum, closed, Mondays
        (CLOSED, ["The museum is open on Mondays."], 2 / 3),
        (CLOSED, [CAFE, "The museum is open on Mondays."], 2 / 3),  # the best sentence
        ("The fund holds about 1,500 companies.", [BOND], 1 / 4),
        ("Buzz Aldrin walked on the Moon.", ["Neil Armstrong walked on the Moon."], 2 / 4),
        ("It is.", ["It is."], 0.0),  # no content words
        (CLOSED, [], 0.0),
    ],
)
def test_word_share(claim: str, sentences: list[str], share: float) -> None:
    assert word_share(claim, sentences) == pytest.approx(share)


def test_the_threshold_keeps_a_one_word_swap_and_drops_a_subject_alone() -> None:
    swap = word_share("Buzz Aldrin walked on the Moon.", ["Neil Armstrong walked on the Moon."])
    subject = word_share("The museum café serves lunch.", ["The museum opens at ten."])
    assert swap >= CULPRIT_SHARE > subject


_WORDS = st.sampled_from(["museum", "café", "lunch", "closed", "Mondays", "the", "is", "tours"])
_TEXT = st.lists(_WORDS, max_size=8).map(" ".join)


@given(_TEXT, st.lists(_TEXT, max_size=4), _TEXT)
def test_word_share_is_a_share_of_the_best_sentence(
    claim: str, sentences: list[str], more: str
) -> None:
    share = word_share(claim, sentences)
    assert 0.0 <= share <= 1.0
    assert word_share(claim, [*sentences, more]) >= share  # another sentence never lowers it
    assert word_share(claim, sentences[::-1]) == share  # the order of sentences does not matter
    if content_words(claim):
        assert word_share(claim, [claim]) == 1.0
