"""Amounts written another way (ene_core.rules.quantities) and their use in premise packing."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import NecessityEngine, PremisePacker
from ene_core.rules.quantities import align, quantities
from ene_core.verifiers.keyword import KeywordOracle


@pytest.mark.parametrize(
    ("text", "dimension", "value", "bound"),
    [
        ("The hike covers 12,000 metres.", "length", Fraction(12000), ""),
        ("It is 12 km long.", "length", Fraction(12000), ""),
        ("The choir has two dozen singers.", "count", Fraction(24), ""),
        ("The choir has twenty-four singers.", "count", Fraction(24), ""),
        ("one hundred and five", "count", Fraction(105), ""),
        ("The meeting lasted an hour and a half.", "time", Fraction(1, 16), ""),
        ("It took half an hour.", "time", Fraction(1, 48), ""),
        ("Rinse for no less than a quarter of an hour.", "time", Fraction(1, 96), ">="),
        ("three quarters of an hour", "time", Fraction(1, 32), ""),
        ("up to a quarter of the year", "time", Fraction(36525, 400), "<="),
        ("a third of the budget", "share", Fraction(1, 3), ""),  # not a time: no unit
        ("The course runs for 42 days.", "time", Fraction(42), ""),
        ("The course runs for six weeks.", "time", Fraction(42), ""),
        ("50% of the respondents", "share", Fraction(1, 2), ""),
        ("Half of the respondents", "share", Fraction(1, 2), ""),
        ("two thirds of the seats", "share", Fraction(2, 3), ""),
        ("25 per cent of the budget", "share", Fraction(1, 4), ""),
        ("published quarterly", "frequency", Fraction(36525, 400), ""),
        ("published every three months", "frequency", Fraction(36525, 400), ""),
        ("meets four times a year", "frequency", Fraction(36525, 400), ""),
        ("holds up to 40 people", "count", Fraction(40), "<="),
        ("holds no more than 40 people", "count", Fraction(40), "<="),
        ("at least 3 kg", "mass", Fraction(3), ">="),
        ("costs $1.2 million", "money:dollars", Fraction(1_200_000), ""),
        ("a booster once a decade", "frequency", Fraction(7305, 2), ""),
        ("a booster every ten years", "frequency", Fraction(7305, 2), ""),
        ("water boils at 212°F", "temperature", Fraction(100), ""),
        ("about 98.6 degrees Fahrenheit", "temperature", Fraction(37), "~"),
        ("under 4 °C", "temperature", Fraction(4), "<"),
        ("took almost 150 years", "time", Fraction(150 * 36525, 100), "~"),
        ("nearly a century and a half", "time", Fraction(150 * 36525, 100), "~"),
        ("about 8 minutes and 20 seconds", "time", Fraction(500, 86400), "~"),
        ("2 hours, 15 minutes", "time", Fraction(135, 1440), ""),
        ("jailed for 2 years and 6 months", "time", Fraction(5 * 36525, 200), ""),
        ("containers of 100 ml or less", "volume", Fraction(1, 10), "<="),
        ("aged 18 or older", "count", Fraction(18), ">="),
        ("as many as 300 people", "count", Fraction(300), "<="),
        ("replace it once a quarter", "frequency", Fraction(36525, 400), ""),
        ("billed every quarter", "frequency", Fraction(36525, 400), ""),
        ("do the exercises three times daily", "frequency", Fraction(1, 3), ""),
        ("it is emptied twice weekly", "frequency", Fraction(7, 2), ""),
        ("the timer beeps every half minute", "frequency", Fraction(1, 2880), ""),
        ("the timer beeps every 30 seconds", "frequency", Fraction(1, 2880), ""),
        ("files larger than 50 MB are rejected", "data", Fraction(50_000_000), ">"),
        ("the tour takes roughly an hour and a quarter", "time", Fraction(5, 96), "~"),
        ("one and a quarter hours", "time", Fraction(5, 96), ""),
        ("a day and three quarters", "time", Fraction(7, 4), ""),
        ("contracts above 50,000 euros", "money:euros", Fraction(50_000), ">"),
        ("temperatures below 5 degrees", "count", Fraction(5), "<"),
        ("drivers aged 70 and over", "count", Fraction(70), ">="),
        ("children aged 5 and under travel free", "count", Fraction(5), "<="),
        ("for longer than a week", "time", Fraction(7), ">"),
        ("shorter than 20 minutes", "time", Fraction(1, 72), "<"),
        ("can take as long as half a day", "time", Fraction(1, 2), "<="),
        ("tickets for as little as 5 euros", "money:euros", Fraction(5), ">="),
    ],
)
def test_reads_the_amount(text: str, dimension: str, value: Fraction, bound: str) -> None:
    (q,) = quantities(text)
    assert (q.dimension, q.value, q.bound) == (dimension, value, bound)
    assert text[q.start : q.end] == q.surface


@pytest.mark.parametrize(
    "text",
    [
        "The second album sold well.",  # an ordinal, not a time
        "It opened in 1994.",  # a year, not an amount
        "A man walked in.",  # an article alone is no number
        "Someone left.",
        "",
    ],
)
def test_no_amount(text: str) -> None:
    assert quantities(text) == ()


@pytest.mark.parametrize(
    ("sentence", "claim", "expected"),
    [
        (
            "The hike covers 12,000 metres of forest trail.",
            "The hike is 12 kilometres long.",
            "The hike covers 12 kilometres of forest trail.",
        ),
        (  # a different value: still re-expressed in the claim's unit, so the model compares
            "The hike covers 12,000 metres of forest trail.",
            "The hike is 15 kilometres long.",
            "The hike covers 12 kilometres of forest trail.",
        ),
        (
            "The choir has two dozen singers.",
            "The choir has twenty-four singers.",
            "The choir has twenty-four singers.",
        ),
        (
            "Marketing received 25 percent of the budget.",
            "A quarter of the budget went to marketing.",
            "Marketing received a quarter of the budget.",
        ),
        (
            "50% of the respondents preferred it.",
            "Half of the respondents preferred it.",
            "Half of the respondents preferred it.",
        ),
        (
            "The magazine is published quarterly.",
            "The magazine is published every three months.",
            "The magazine is published every three months.",
        ),
        (
            "The tent sleeps no more than four people.",
            "The tent sleeps up to four people.",
            "The tent sleeps up to four people.",
        ),
        (
            "The meeting lasted 90 minutes.",
            "The meeting lasted two hours.",
            "The meeting lasted 1.5 hours.",
        ),
        (  # different bounds are different facts: left as written
            "The hall holds at least 40 people.",
            "The hall holds up to 40 people.",
            "The hall holds at least 40 people.",
        ),
        (  # a conversion that would round is not made
            "The trail is 100 metres long.",
            "The trail is 3 miles long.",
            "The trail is 100 metres long.",
        ),
        (  # one end of a range is not rewritten alone
            "Let the dough proof for 12 to 14 hours.",
            "The loaf bakes for 45 minutes.",
            "Let the dough proof for 12 to 14 hours.",
        ),
        (  # a compound unit is another dimension
            "Sound travels at 343 m/s.",
            "Sound travels at 343 metres per second.",
            "Sound travels at 343 m/s.",
        ),
        (  # temperatures: the same one in the other scale (an offset, not only a factor)
            "Pure water boils at 100 °C at sea level.",
            "At sea level, pure water boils at 212°F.",
            "Pure water boils at 212°F at sea level.",
        ),
        (  # a different temperature stays as written
            "It boils at 100 °C.",
            "It boils at 90 degrees Fahrenheit.",
            "It boils at 100 °C.",
        ),
        (  # different counts stay as written
            "The choir has 30 singers.",
            "The choir has twenty-four singers.",
            "The choir has 30 singers.",
        ),
        (  # a duration in two units is one amount
            "Sunlight takes about 8 minutes and 20 seconds to reach Earth.",
            "Sunlight takes roughly 500 seconds.",
            "Sunlight takes roughly 500 seconds to reach Earth.",
        ),
        (  # an exact amount just inside a strict bound is written as the bound
            "The Eco programme takes 3 hours 45 minutes.",
            "The Eco programme runs for just under four hours.",
            "The Eco programme takes under four hours.",
        ),
        (
            "The firm employs 320 people.",
            "The firm employs more than 300 people.",
            "The firm employs more than 300 people.",
        ),
        (  # ... and its twins: outside the bound, or far inside it, as written
            "The Eco programme takes 4 hours 15 minutes.",
            "The Eco programme runs for just under four hours.",
            "The Eco programme takes 4 hours 15 minutes.",
        ),
        (
            "The Quick programme takes 30 minutes.",
            "The Eco programme runs for under four hours.",
            "The Quick programme takes 30 minutes.",
        ),
        (
            "The firm employs 290 people.",
            "The firm employs more than 300 people.",
            "The firm employs 290 people.",
        ),
        (  # a limit ("up to", "at least") is never written from an exact amount
            "The hall holds 38 people.",
            "The hall holds up to 40 people.",
            "The hall holds 38 people.",
        ),
        (  # a rate over another period: the same rate in the claim's words
            "The API allows 600 requests per minute on the Free plan.",
            "On the Free plan, the API allows roughly 10 requests per second.",
            "The API allows roughly 10 requests per second on the Free plan.",
        ),
        (
            "She earned 11,000 dollars a month.",
            "She earned 132,000 dollars per annum.",
            "She earned 132,000 dollars per annum.",
        ),
        (  # ... and its twin: another rate stays as written
            "The plan costs 35 euros per month.",
            "The plan costs 360 euros a year.",
            "The plan costs 35 euros per month.",
        ),
        (  # "as long as" is a limit like "up to"
            "Retrieval can take up to 12 hours.",
            "Restoring data can take as long as half a day.",
            "Retrieval can take as long as half a day.",
        ),
    ],
)
def test_align(sentence: str, claim: str, expected: str) -> None:
    assert align(sentence, claim) == expected


def _facts(text: str) -> Counter[tuple[str, Fraction, str]]:
    return Counter((q.dimension, q.value, q.bound) for q in quantities(text))


_NUMBERS = st.sampled_from(
    ["3", "three", "12", "twelve", "24", "two dozen", "twenty-four", "1,500", "90", "a dozen"]
)
_UNITS = st.sampled_from(["", " metres", " km", " minutes", " hours", " days", " weeks", " kg"])
_BOUNDS = st.sampled_from(["", "up to ", "no more than ", "at least ", "about "])
_AMOUNT = st.builds(lambda b, n, u: b + n + u, _BOUNDS, _NUMBERS, _UNITS)
_SHARES = st.sampled_from(["half", "a quarter", "25%", "50 percent", "two thirds", "a third"])
_FREQ = st.sampled_from(["quarterly", "weekly", "every week", "every three months", "daily"])
_PIECE = st.one_of(_AMOUNT, _SHARES, _FREQ)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=3), st.lists(_PIECE, min_size=1, max_size=3))
def test_align_keeps_every_amount(evidence: list[str], claim: list[str]) -> None:
    """Whatever the claim says with exact amounts, limits or "about", the evidence sentence keeps
    its amounts: the same values and bounds in the same dimensions, only written another way;
    aligning twice changes nothing. (A claim's strict bound is the one exception: see below.)"""
    sentence = "The report gives " + " and then ".join(evidence) + " for the site."
    claim_text = "It says " + " and ".join(claim) + "."
    aligned = align(sentence, claim_text)
    assert _facts(aligned) == _facts(sentence)
    assert align(aligned, claim_text) == aligned


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["under", "less than", "more than", "over"]),
    st.integers(1, 400),
    st.integers(1, 400),
    st.sampled_from(["minutes", "hours", "people"]),
)
def test_an_exact_amount_is_written_as_a_strict_bound_only_where_it_meets_it(
    bound: str, n: int, m: int, unit: str
) -> None:
    """The evidence's exact amount ``m`` becomes the claim's "under n" / "more than n" only
    when it meets that bound, within a quarter of it; otherwise the sentence is as written."""
    claim = f"The queue takes {bound} {n} {unit}."
    sentence = f"The queue takes {m} {unit}."
    aligned = align(sentence, claim)
    below = bound in ("under", "less than")
    meets = (Fraction(3, 4) * n <= m < n) if below else (n < m <= Fraction(4, 3) * n)
    assert aligned == (f"The queue takes {bound} {n} {unit}." if meets else sentence)


def test_sentences_without_amounts_are_untouched() -> None:
    text = "The tower is in Paris. It was built by Gustave Eiffel's company."
    assert align(text, "The tower is 300 metres tall.") is text
    assert align("The tower is 300 metres tall.", "The tower is in Paris.") == (
        "The tower is 300 metres tall."
    )


def test_engine_packs_aligned_amounts() -> None:
    """Through the engine: with alignment the keyword oracle finds "12 kilometres" in the
    premise; with ``align_quantities=False`` it does not, and the ENG says which was used."""
    request = {
        "answer": "The hike is 12 kilometres long.",
        "contexts": ["The hike is 12,000 metres long.", "Cats purr."],
    }
    aligned = NecessityEngine(KeywordOracle())
    raw = NecessityEngine(KeywordOracle(), packer=PremisePacker(align_quantities=False))
    try:
        with_alignment = aligned.evaluate(**request)
        without = raw.evaluate(**request)
    finally:
        aligned.close()
        raw.close()
    assert with_alignment.claims[0].status == "supported"
    assert with_alignment.claims[0].necessary == [0]
    assert with_alignment.verifier.packing["quantities"] == "aligned"
    assert without.claims[0].status == "unsupported"
    assert "quantities" not in without.verifier.packing


@pytest.mark.parametrize(
    "text",
    [
        "3 days and 2 days",
        "1 hour and 90 minutes",
        "2 minutes and about 30 seconds",
        "5 km and 3 m",
    ],
)
def test_two_amounts_that_are_no_compound_stay_two(text: str) -> None:
    assert len(quantities(text)) == 2
