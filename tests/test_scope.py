"""Scope the evidence narrows: a claim about every item of a kind against evidence that restricts
that kind ("only on the Enterprise plan", "except the Saver rate") is contradicted by it."""

from __future__ import annotations

import itertools

import pytest
from engine_views import claim_of, streamed_and_whole
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.rules.scope import excepted, narrowed
from ene_core.verifiers.keyword import KeywordOracle

PLANS = "Email support is available to all customers; phone support is only available on the Enterprise plan."
RATES = "Breakfast is served from 7:00 to 10:30 and is included in all rates except the Saver rate."
PITR = "Point-in-time recovery is available on the Business plan only, covering the last 7 days."


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("Phone support is available on every plan.", PLANS),
        ("Breakfast is included with every room rate.", RATES),
        ("Breakfast is included in all of the rates.", RATES),
        ("Point-in-time recovery is available on all plans.", PITR),
        ("Breakfast is included with every rate.", RATES.replace("except", "except for")),
        ("Any browser can run the app.", "The app runs only in the Chrome browser."),
        ("Each room has a balcony.", "Apart from the attic room, the hotel's rooms have a balcony."),
        ("All files can be shared.", "Sharing is limited to files under 2 GB."),
    ],
)  # fmt: skip
def test_narrowed(claim: str, sentence: str) -> None:
    assert narrowed(claim, ["Unrelated words here.", sentence]) == 1


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("Email support is available to all customers.", PLANS),  # "only" restricts plans
        ("Refunds are given for all items.", "Refunds are given for all items except on Sundays."),
        ("Admins can delete any project.", "Only admins can delete any project."),  # who, not what
        ("The train runs every 30 minutes.", "The train runs every 30 minutes, except on Sundays."),
        ("The bus leaves every hour.", "The bus leaves every hour, except at night."),  # frequency
        ("Breakfast is included with every rate except Saver.", RATES),  # the claim restricts
        ("Not every plan includes phone support.", PLANS),  # the claim denies the universal
        ("Phone support is available on the Enterprise plan.", PLANS),  # no universal
        (
            "Court orders are made without any future effect.",  # "any" after a negation
            "Court orders are made with only immediate effect, and without any future effect.",
        ),
        (
            "Sunlight is the main source of energy for all of the organisms in most food chains.",
            "Sunlight provides the energy that drives nearly all ecosystems although only"
            " photosynthetic organisms use it directly as an energy source.",
        ),  # another clause, with its own subject and predicate
        ("Phone support is available on every plan.", "Only Enterprise customers get a manager."),
        ("Every plan includes backups.", "Phone support is only available on the Enterprise plan."),
    ],
)  # fmt: skip
def test_not_narrowed(claim: str, sentence: str) -> None:
    assert narrowed(claim, [sentence]) is None


@given(
    st.sampled_from(["plan", "rate", "room", "browser"]),
    st.sampled_from(["plan", "rate", "room", "browser"]),
    st.sampled_from(["all {n}s", "every {n}", "each {n}", "any {n}"]),
    st.sampled_from(["only on the Gold {n}", "on the Gold {n} only", "on every {n} except the Gold {n}"]),
)  # fmt: skip
def test_only_the_claims_own_noun_is_narrowed(
    mine: str, theirs: str, universal: str, restriction: str
) -> None:
    claim = f"Free parking is offered on {universal.format(n=mine)}."
    sentence = f"Free parking is offered {restriction.format(n=theirs)}."
    assert (narrowed(claim, [sentence]) == 0) == (mine == theirs)
    assert (
        narrowed(
            claim.replace("Free parking is offered", "Laundry service is included"), [sentence]
        )
        is None
    )  # off topic


@pytest.mark.parametrize(
    "order", list(itertools.permutations(["Prices include VAT.", PLANS, "Calls are recorded."]))
)
def test_engine_contradicts_a_claim_the_evidence_narrows(order: tuple[str, ...]) -> None:
    answer = "Phone support is available on all plans. Email support is available to all customers."
    blind = NecessityEngine(KeywordOracle(), check_bindings=False).evaluate(answer, list(order))
    assert claim_of(blind, "Phone support is available on all plans.").status == "supported"
    streamed, whole = streamed_and_whole(NecessityEngine(KeywordOracle()), answer, order)
    for eng in (streamed, whole):
        phone = claim_of(eng, "Phone support is available on all plans.")
        email = claim_of(eng, "Email support is available to all customers.")
        assert (phone.status, [order[i] for i in phone.contradicted_by]) == (
            "contradicted",
            [PLANS],
        )
        assert (email.status, [order[i] for i in email.necessary]) == ("supported", [PLANS])
    assert streamed.model_dump(exclude={"created_at", "stats"}) == whole.model_dump(
        exclude={"created_at", "stats"}
    )


# -- what the evidence excepts ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        (
            "The warranty covers water damage.",
            "The two-year warranty covers manufacturing faults but not water damage.",
        ),
        ("The gallery is open on Tuesdays.", "The gallery is open daily except Tuesdays."),
        ("You can pay with a prepaid card.", "You can pay by any card other than a prepaid card."),
        (
            "The fare includes checked luggage.",
            "The fare includes a seat and a meal, excluding checked luggage.",
        ),
    ],
)
def test_excepted(claim: str, sentence: str) -> None:
    assert excepted(claim, ["Prices include VAT.", sentence]) == 1


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        (  # the rest of the sentence, not the exception
            "The warranty covers manufacturing faults.",
            "The two-year warranty covers manufacturing faults but not water damage.",
        ),
        ("The gallery is closed on Tuesdays.", "The gallery is open daily except Tuesdays."),
        ("Guide dogs are allowed.", "Pets are not allowed, except guide dogs."),  # a negated rule
        ("The warranty does not cover water damage.", "It covers faults but not water damage."),
        (  # another predicate for the excepted item
            "Basic fares can be exchanged.",
            "Refunds are available for all fares except Basic fares, which can be exchanged.",
        ),
        (  # the claim excepts it too
            "The gallery is open every day except Tuesdays.",
            "The gallery is open daily except Tuesdays.",
        ),
    ],
)
def test_not_excepted(claim: str, sentence: str) -> None:
    assert excepted(claim, [sentence]) is None


def test_engine_contradicts_what_the_evidence_excepts() -> None:
    contexts = ["Prices include VAT.", "The gallery is open daily except Tuesdays."]
    answer = "The gallery is open on Tuesdays."
    blind = NecessityEngine(KeywordOracle(), check_bindings=False).evaluate(answer, contexts)
    assert claim_of(blind, answer).status == "supported"  # every word is there
    claim = claim_of(NecessityEngine(KeywordOracle()).evaluate(answer, contexts), answer)
    assert (claim.status, claim.contradicted_by) == ("contradicted", [1])
