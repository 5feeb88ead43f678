"""Who contradicts a claim: a context that contradicts it alone, in a sentence about what the claim
is about (rounds.CULPRIT_SHARE of its content words, with check_bindings); and a claim that its
packed premise contradicts with no one to blame, but a context supports alone."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from engine_views import as_older, claim_events, claim_of, streamed_and_whole
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.engine.premise import PremisePacker
from ene_core.engine.rounds import CULPRIT_SHARE
from ene_core.text.words import content_words, word_share
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores

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


HOLDS = "The fund holds about 1,500 companies from 23 developed countries."
ALSO = "About 1,500 companies are what the fund holds, from 23 developed countries."


#: packing without the focus reading, which on its own reads this oracle's packs right (below)
UNFOCUSED = PremisePacker(focus=0)


class JuxtaposingOracle(KeywordOracle):
    """Like a small NLI model confused by a packed premise: contradicts a claim where any line
    of the premise is about a fund and lacks the claim's words; else entails a claim whose
    content words are all in the premise; else neutral."""

    name = "juxtaposing-oracle"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        out = []
        for premise, claim in pairs:
            need = set(content_words(claim))
            lines = [set(content_words(line)) for line in premise.splitlines()]
            if any("fund" in have and not need <= have for have in lines):
                out.append(Scores(0.05, 0.9))
            elif need <= set(content_words(premise)):
                out.append(Scores(0.95, 0.02))
            else:
                out.append(Scores(0.05, 0.05))
        return out


CLAIM = "The fund holds about 1,500 companies."


@pytest.mark.parametrize("order", [(HOLDS, BOND), (BOND, HOLDS)])
def test_a_claim_its_packed_premise_only_juxtaposes_is_supported_alone(
    order: tuple[str, str],
) -> None:
    blind = NecessityEngine(JuxtaposingOracle(), packer=UNFOCUSED, check_bindings=False).evaluate(
        CLAIM, list(order)
    )
    was = claim_of(blind, CLAIM)
    assert (was.status, [order[i] for i in was.contradicted_by]) == ("contradicted", [BOND])
    streamed, whole = streamed_and_whole(
        NecessityEngine(JuxtaposingOracle(), packer=UNFOCUSED), CLAIM, order
    )
    for eng in (streamed, whole):
        claim = claim_of(eng, CLAIM)
        assert (claim.status, claim.classification) == ("supported", "fragile")
        assert claim.p_entail is not None and claim.p_entail < 0.5  # the packed premise's score
        assert [order[i] for i in claim.supported_alone_by] == [HOLDS]
        assert [order[i] for i in claim.necessary] == [HOLDS] and claim.contradicted_by == []
        assert claim.p_entail_alone is not None and max(claim.p_entail_alone) > 0.9
    assert [order[i] for i in whole.minimal_sufficient_set] == [HOLDS]
    assert [order[c.index] for c in whole.contexts if not c.used] == [BOND]
    assert [c.model_dump() for c in streamed.claims] == [c.model_dump() for c in whole.claims]


def test_two_contexts_that_each_support_it_alone_make_it_robust() -> None:
    eng = NecessityEngine(JuxtaposingOracle(), packer=UNFOCUSED).evaluate(
        CLAIM, [HOLDS, BOND, ALSO]
    )
    claim = claim_of(eng, CLAIM)
    assert (claim.status, claim.classification, claim.necessary) == ("supported", "robust", [])
    assert claim.supported_alone_by == [0, 2]
    assert len(eng.minimal_sufficient_set) == 1 and eng.minimal_sufficient_set[0] in (0, 2)


def test_a_claim_no_context_supports_alone_stays_unsupported() -> None:
    claim = claim_of(
        NecessityEngine(JuxtaposingOracle(), packer=UNFOCUSED).evaluate(CLAIM, [BOND]), CLAIM
    )
    assert (claim.status, claim.supported_alone_by, claim.necessary) == ("unsupported", [], [])


def test_supported_alone_is_shown_and_an_older_eng_loads_without_it() -> None:
    from ene_core.cli.commands import render
    from ene_core.reports.viewer import render_html

    engine = NecessityEngine(JuxtaposingOracle(), packer=UNFOCUSED)
    eng = engine.evaluate(CLAIM, [BOND, HOLDS])
    assert "supported read alone by: #2" in render(eng)
    assert "supported read alone by: #2" in render_html([eng])
    plain, content = claim_events(engine, CLAIM, [BOND, HOLDS])
    assert list(plain["ene.claim.supported_alone_by"]) == [1]  # OpenTelemetry keeps a tuple
    assert content["ene.claim.supported_alone_by"] == plain["ene.claim.supported_alone_by"]
    old = as_older(eng, "1.8", [], ["supported_alone_by"])
    assert old.claims[0].supported_alone_by == [] and old.schema_version == "1.8"


def test_the_focus_reading_keeps_a_juxtaposed_sentence_out_of_the_verdict() -> None:
    # HOLDS scores far above BOND for the claim: the model also reads HOLDS alone, and the
    # blend (mean entailment, smaller contradiction) supports the claim with no rule needed.
    eng = NecessityEngine(JuxtaposingOracle()).evaluate(CLAIM, [BOND, HOLDS])
    claim = claim_of(eng, CLAIM)
    assert (claim.status, claim.necessary, claim.supported_alone_by) == ("supported", [1], [])
    assert claim.p_entail == pytest.approx((0.05 + 0.95) / 2)
    assert claim.p_contra == pytest.approx(0.02)
    assert eng.stats.focus_pairs >= 1
