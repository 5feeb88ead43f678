"""Negation written another way or not at all (ene_core.rules.polarity), a clause that opens like the
claim read alone (ene_core.rules.bindings.own_clause), and the engine's use of them."""

from __future__ import annotations

import re

import pytest
from engine_views import claim_of
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.engine.premise import PremisePacker
from ene_core.rules.bindings import own_clause
from ene_core.rules.polarity import align, flipped, opposite, turned
from ene_core.verifiers.keyword import KeywordOracle


@pytest.mark.parametrize(
    ("sentence", "claim", "aligned"),
    [
        (
            "The painting is unsigned.",
            "The painting was not signed.",
            "The painting is not signed.",
        ),
        ("It is impassable in winter.", "It is not passable.", "It is not passable in winter."),
        ("This is illegal.", "This isn't legal.", "This is not legal."),
        ("The room is not available.", "The room is unavailable.", "The room is unavailable."),
        ("Results were inaccurate.", "Results are not accurate.", "Results were not accurate."),
        # no privative: the prefix does not join the claim's word, or joins no adjective
        ("Doctors inform patients.", "Doctors do not form opinions.", "Doctors inform patients."),
        ("They install it.", "They did not stall.", "They install it."),
        ("The diary is untranslated.", "It was never translated.", "The diary is untranslated."),
        ("The room is available.", "The room is unavailable.", "The room is available."),
        ("It is unsigned.", "Unsigned, not signed.", "It is unsigned."),  # both: left alone
    ],
)
def test_align(sentence: str, claim: str, aligned: str) -> None:
    assert align(sentence, claim) == aligned


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("The firmware update is not optional.", "Installing the firmware update is optional."),
        ("The firmware update is optional.", "Installing the firmware update is not optional."),
        ("The Gold card doesn't charge fees.", "The Gold card charges fees."),
        ("He did not finish the race.", "In 2003, he finished the race."),
        ("There is no entrance fee.", "There is an entrance fee for adults."),
        ("The bridge cannot carry trucks.", "The bridge can carry trucks."),
    ],
)
def test_flipped(claim: str, sentence: str) -> None:
    assert flipped(claim, ["Unrelated words here.", sentence]) == 1


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("He did not finish the race.", "In 2003, he did not finish the race."),  # same polarity
        ("The update may not be optional.", "The update is optional."),  # a hedge
        ("The drug is not approved for children.", "The drug is approved for adults only."),
        ("Tickets are not refundable after 24 hours.", "Tickets are refundable within 24 hours."),
        ("The museum is not open.", "The museum is closed, but the park is open daily."),
        (
            "The senator did not vote on the bill.",
            "The senator abstained from the vote on the bill.",
        ),
        ("He was crowned King.", "He was proclaimed, but never crowned, King."),  # a contrast
        ("Plants with little woody growth.", "Plants with little or no woody growth."),
        ("No, the sky is blue.", "The sky is blue."),  # a reply, not a negation
        ("The pass is open all year.", "The pass is never closed, even in winter."),
    ],
)
def test_not_flipped(claim: str, sentence: str) -> None:
    assert flipped(claim, [sentence]) is None


WORDS = st.sampled_from(["museum", "gallery", "park", "opens", "early", "daily", "free", "late"])


@given(st.lists(WORDS, min_size=2, max_size=6))
def test_a_statement_and_its_negation_flip_each_other(words: list[str]) -> None:
    said = "The " + " ".join(words) + " is open."
    negated = "The " + " ".join(words) + " is not open."
    assert flipped(said, [negated]) == 0 and flipped(negated, [said]) == 0
    assert flipped(said, [said]) is None and flipped(negated, [negated]) is None


def test_own_clause() -> None:
    assert (
        own_clause("The blue line runs to the harbour, while the green line runs to the airport.")
        == "The blue line runs to the harbour."
    )
    assert own_clause("The line runs to the harbour and on to the airport.") == (
        "The line runs to the harbour and on to the airport."
    )


def test_engine_contradicts_a_flipped_claim_by_its_context_in_any_order() -> None:
    answer = "The firmware update is not optional."
    contexts = ["Updates ship monthly.", "Installing the firmware update is optional."]
    blind = NecessityEngine(KeywordOracle(), check_bindings=False).evaluate(answer, contexts)
    assert claim_of(blind, answer).status == "supported"  # every word is there
    for order in (contexts, contexts[::-1]):
        claim = claim_of(NecessityEngine(KeywordOracle()).evaluate(answer, order), answer)
        assert (claim.status, [order[i] for i in claim.contradicted_by]) == (
            "contradicted",
            [contexts[1]],
        )


def test_the_packer_aligns_negation_and_says_so() -> None:
    claim = "The painting was not signed by the artist."
    index = PremisePacker().index(["The painting is unsigned."])
    assert index.premise(claim).text == "The painting is not signed."
    assert PremisePacker().describe()["negation"] == "aligned"
    off = PremisePacker(align_negation=False)
    assert (
        off.index(["The painting is unsigned."]).premise(claim).text == "The painting is unsigned."
    )
    assert "negation" not in off.describe()


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("The pram won a gold medal in 1893.", "The pram won a silver medal in 1893."),
        ("Adding salt raises the boiling point.", "Adding salt lowers the boiling point."),
        ("The shop is open on Sundays.", "The shop is closed on Sundays."),
        ("The museum opens before 9 am.", "The museum opens after 9 am."),
        ("Entry is free on Mondays.", "Entry is free on Tuesdays."),
        ("The bonus is paid in December.", "The bonus is paid in March."),
        ("The heater can be used outdoors.", "The heater can be used indoors."),
        ("The new filter reduces noise.", "The new filter increases noise."),
    ],
)
def test_opposite(claim: str, sentence: str) -> None:
    assert opposite(claim, ["Unrelated words here.", sentence]) == 1
    assert turned(claim, ["Unrelated words here.", sentence]) == 1


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("The pram won a gold medal.", "The pram won a gold medal and a silver medal."),  # both
        ("The museum is open in summer.", "The museum is open in summer and winter."),
        ("The shop may open on Sundays.", "The shop is closed on Sundays."),  # a hedge
        ("The shop is not open on Sundays.", "The shop is closed on Sundays."),  # negation
        ("The pram won a gold medal.", "The pram won a medal."),  # nothing in its place
        ("The river flows north.", "The river flows north past the town."),
    ],
)
def test_no_opposite(claim: str, sentence: str) -> None:
    assert opposite(claim, [sentence]) is None


@given(st.sampled_from(["gold", "silver", "bronze"]), st.sampled_from(["gold", "silver", "bronze"]))
def test_a_medal_is_another_medal_only_when_it_differs(mine: str, theirs: str) -> None:
    found = opposite(f"She won a {mine} medal.", [f"She won a {theirs} medal in Paris."])
    assert (found == 0) == (mine != theirs)


PIECES = st.sampled_from(
    [
        "The", "fee", "is", "not", "n't", "never", "no", "only", "but", "and", "while", ",", ";",
        "25", "euros", "40 euros", "for", "lunch", "dinner", "gold", "silver", "open", "closed",
        "unsigned", "signed", "up to", "100 ml or less", "8 minutes and 20 seconds", "per minute",
        "may", "always", "before", "after", ".", "don't", "cannot", "1990", "in", "every", "all",
        "except", "plan", "plans",
    ]
)  # fmt: skip
SENTENCE = st.lists(PIECES, max_size=14).map(" ".join)


@given(SENTENCE, st.lists(SENTENCE, max_size=3))
def test_the_rules_never_raise_and_answer_alike(claim: str, parts: list[str]) -> None:
    from ene_core.rules.bindings import (
        other_holder,
        other_subject,
        other_value,
        reversed_route,
        same_opening,
    )
    from ene_core.rules.scope import narrowed

    for rule in (flipped, opposite, turned, other_value, other_holder, reversed_route, narrowed):
        found = rule(claim, parts)
        assert found == rule(claim, list(parts))  # deterministic
        index = found if isinstance(found, int) or found is None else found.part
        assert index is None or 0 <= index < len(parts)
    assert all(0 <= i < len(parts) for i in same_opening(parts, claim))
    assert all(0 <= i < len(parts) and c for i, c in other_subject(parts, claim))
    for part in parts:
        aligned = align(part, claim)
        assert align(aligned, claim) == aligned  # aligning twice changes nothing
        if not re.search(r"\b(?:not|un|non|in|im|il|ir|dis)|n't", claim + part, re.IGNORECASE):
            assert aligned == part


def test_what_align_reads_of_a_claim_is_cached_once_per_claim_and_bounded() -> None:
    from ene_core.rules import polarity

    polarity._claim_words.cache_clear()
    polarity._align.cache_clear()
    claim = "The painting was not signed."
    first = [align(s, claim) for s in ("It is unsigned.", "It is unsigned and unsold.")]
    assert polarity._claim_words.cache_info().misses == 1
    polarity._align.cache_clear()
    polarity._claim_words.cache_clear()
    assert [align(s, claim) for s in ("It is unsigned.", "It is unsigned and unsold.")] == first
    assert first == ["It is not signed.", "It is not signed and unsold."]
    assert polarity._claim_words.cache_info().maxsize == 1 << 12
