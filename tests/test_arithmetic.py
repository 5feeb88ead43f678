"""Comparisons the evidence's amounts settle (ene_core.rules.arithmetic) and the engine's use of them."""

from __future__ import annotations

import pytest
from engine_views import as_older, claim_events, claim_of, streamed_and_whole
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.rules.arithmetic import derive
from ene_core.verifiers.keyword import KeywordOracle

HEIGHTS = ["Mount Everest is 8,849 metres high.", " K2 is 8,611 metres high."]
FARES = ["A bus ticket costs 12 euros.", " The express train costs 39 euros."]


@pytest.mark.parametrize(
    ("claim", "parts", "verdict", "working"),
    [
        (
            "Everest is 238 metres taller than K2.",
            HEIGHTS,
            "supported",
            "8,849 metres - 8,611 metres = 238 metres taller",
        ),
        (
            "K2 is taller than Everest.",
            HEIGHTS,
            "contradicted",
            "8,611 metres vs 8,849 metres: taller",
        ),
        ("Everest is 238 metres shorter than K2.", HEIGHTS, "contradicted", None),
        ("The bus is cheaper than the express train.", FARES, "supported", None),
        ("The express train is cheaper than the bus.", FARES, "contradicted", None),
        (
            "Napoleon died six years after his defeat at Waterloo.",
            [
                "After his defeat at Waterloo in 1815, Napoleon was exiled to Saint Helena, where "
                "he died in 1821.",
                "\nNapoleon was born in Ajaccio, Corsica, in 1769.",
            ],
            "supported",
            "1821 - 1815 = six years after",
        ),
        (
            "The Hundred Years' War actually lasted 116 years.",
            ["The Hundred Years' War between England and France lasted from 1337 to 1453."],
            "supported",
            "1453 - 1337 = 116 years",
        ),
        (  # "took" a duration: the gap between the sentence's two years
            "The Alder Canal took eight years to dig.",
            ["The Alder Canal was dug between 1794 and 1802 to carry coal."],
            "supported",
            "1802 - 1794 = eight years",
        ),
        (
            "Newborns have fewer bones than adults.",
            [
                "An adult human skeleton has 206 bones, while a newborn has around 270.",
                "\nEach human hand contains 27 bones.",
            ],
            "contradicted",
            None,
        ),
        (
            "The trip is 30 minutes in total.",
            ["The trip has a walk of 10 minutes and a ride of 20 minutes."],
            "supported",
            "10 minutes + 20 minutes = 30 minutes",
        ),
        (
            "The loaf bakes for 45 minutes in total.",
            [
                "Bake the loaf at 250 °C for 20 minutes with the lid on, then remove the lid and "
                "bake for another 25 minutes at 230 °C."
            ],
            "supported",
            "20 minutes + 25 minutes = 45 minutes",
        ),
        (  # the fixed rate's sentence also has a share of another kind of thing: bound by words
            "The fixed-rate mortgage is cheaper than the variable one.",
            [
                "The fixed-rate mortgage costs 3.45 euros a day, with a loan-to-value of 80 percent.",
                "\nThe variable-rate mortgage costs 4.10 euros a day.",
            ],
            "supported",
            None,
        ),
    ],
)
def test_derived(claim: str, parts: list[str], verdict: str, working: str | None) -> None:
    found = derive(claim, parts)
    assert found is not None and found.verdict == verdict
    if working is not None:
        assert found.working == working


@pytest.mark.parametrize(
    ("claim", "parts"),
    [
        ("Everest is 300 metres taller than K2.", HEIGHTS),  # another difference: not derived
        ("Everest is 238 metres taller than Lhotse.", HEIGHTS),  # Lhotse's height: not given
        ("Everest is 238 feet taller than K2.", HEIGHTS),  # the difference is in metres
        ("Everest is 238 metres taller than K2 and lies in Nepal.", HEIGHTS),  # Nepal: not read
        ("Everest is taller than 8,000 metres.", HEIGHTS),  # a bound, not a comparison
        ("Everest, at 8,849 metres, is taller than K2.", HEIGHTS),  # its own amounts: the model's
        ("Everest is higher.", HEIGHTS),  # against what?
        (
            "Napoleon died after his defeat at Waterloo.",
            ["He lost at Waterloo in 1815.", " He died in 1821."],
        ),
        ("The bus is cheaper than the tram.", FARES),
        ("The bus is cheaper than the train.", ["The bus and the train cost 12 euros."]),
        ("Owls hunt at night.", ["Owls hunt at night."]),
        # another gap is the model's to judge, as is a duration of another unit
        (
            "The Alder Canal took nine years to dig.",
            ["The Alder Canal was dug between 1794 and 1802."],
        ),
        ("The journey took three hours.", ["The canal was dug between 1794 and 1802."]),
        ("The loaf bakes for 50 minutes in total.", ["Bake the loaf for 20 minutes, then 25."]),
        (  # two pairs make 30 minutes: which two is not settled
            "The trip takes 30 minutes in total.",
            ["The trip has a walk of 10 minutes, a ride of 20 minutes and a wait of 10 minutes."],
        ),
        (  # the oven's minutes, not the dough's: no clause shares the claim's words
            "The loaf rises for 45 minutes in total.",
            ["Knead for 20 minutes.", " Bake for 25 minutes."],
        ),
        (  # two kinds bound on both sides: "more" of which?
            "The bus takes more than the train.",
            [
                "The bus costs 12 euros and takes 90 minutes.",
                " The train costs 39 euros and takes 45 minutes.",
            ],
        ),
    ],
)
def test_not_derived(claim: str, parts: list[str]) -> None:
    assert derive(claim, parts) is None


NAMES = ["Arden", "Belmont", "Corvin", "Dunmore", "Elster"]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(NAMES),
    st.sampled_from(NAMES),
    st.integers(100, 9000),
    st.integers(100, 9000),
    st.booleans(),
    st.integers(-3, 3),
)
def test_differences_follow_the_arithmetic(
    x: str, y: str, a: int, b: int, flip: bool, off: int
) -> None:
    """A claimed difference is supported iff it is right and in the right direction, and never
    derived when it is wrong; the order of the evidence does not matter. (Heights of four
    digits look like years: they must still be read as lengths.)"""
    if x == y or a == b:
        return
    parts = [f"Mount {x} is {a} metres high.", f" Mount {y} is {b} metres high."]
    word = "shorter" if flip else "taller"
    gap = abs(a - b) + off
    claim = f"Mount {x} is {gap} metres {word} than Mount {y}."
    found = derive(claim, parts)
    back = derive(claim, parts[::-1])
    assert (found is None) == (back is None)
    if found is not None and back is not None:
        assert (found.verdict, found.working) == (back.verdict, back.working)
    if off and gap % 10:  # "300" may be 301 rounded; "301" is exact
        assert found is None
    elif not off:
        assert found is not None
        assert found.verdict == ("supported" if (a > b) != flip else "contradicted")


CONTEXTS = [
    "Mount Everest is 8,849 metres high.",
    "The Karakoram range lies in Pakistan.",
    "K2 is 8,611 metres high.",
]


def test_engine_supports_a_difference_with_both_amounts_necessary() -> None:
    answer = "Everest is 238 metres taller than K2."
    checked = claim_of(NecessityEngine(KeywordOracle()).evaluate(answer, CONTEXTS), answer)
    blind = claim_of(
        NecessityEngine(KeywordOracle(), check_amounts=False).evaluate(answer, CONTEXTS), answer
    )
    assert blind.status == "unsupported" and blind.arithmetic is None
    assert (checked.status, checked.classification, checked.necessary) == (
        "supported",
        "joint",
        [0, 2],
    )
    assert checked.arithmetic == "8,849 metres - 8,611 metres = 238 metres taller"


def test_engine_contradicts_a_wrong_order_by_both_chunks() -> None:
    answer = "K2 is taller than Everest."
    eng = NecessityEngine(KeywordOracle()).evaluate(answer, CONTEXTS)
    claim = claim_of(eng, answer)
    assert claim.status == "contradicted" and claim.contradicted_by == [0, 2]
    reordered = claim_of(NecessityEngine(KeywordOracle()).evaluate(answer, CONTEXTS[::-1]), answer)
    assert reordered.status == "contradicted" and reordered.contradicted_by == [0, 2]
    assert reordered.arithmetic == claim.arithmetic


def test_streamed_claims_match_the_whole_answer() -> None:
    answer = "Everest is 238 metres taller than K2. K2 is taller than Everest."
    streamed, whole = streamed_and_whole(NecessityEngine(KeywordOracle()), answer, CONTEXTS)
    assert [c.model_dump() for c in streamed.claims] == [c.model_dump() for c in whole.claims]
    assert [c.status for c in whole.claims] == ["supported", "contradicted"]


def test_an_older_eng_loads_without_the_field() -> None:
    eng = NecessityEngine(KeywordOracle()).evaluate("Owls hunt at night.", ["Owls hunt at night."])
    assert all(c.arithmetic is None for c in as_older(eng, "1.6", [], ["arithmetic"]).claims)


def test_viewer_trace_and_cli_show_the_working(capsys: pytest.CaptureFixture[str]) -> None:
    from ene_core.cli import main
    from ene_core.reports.viewer import render_html

    answer = "Everest is 238 metres taller than K2."
    working = "8,849 metres - 8,611 metres = 238 metres taller"
    engine = NecessityEngine(KeywordOracle())
    page = render_html([engine.evaluate(answer, CONTEXTS)])
    assert f"worked out: <q>{working}</q>" in page and f"worked out: {working}" in page
    plain, content = claim_events(engine, answer, CONTEXTS)
    assert plain["ene.claim.arithmetic"] is True and "ene.claim.arithmetic_working" not in plain
    assert content["ene.claim.arithmetic_working"] == working
    argv = ["evaluate", "--oracle", "keyword", "--answer", answer]
    assert main([*argv, *(x for c in CONTEXTS for x in ("--context", c))]) == 0
    assert f"worked out: {working}" in capsys.readouterr().out
