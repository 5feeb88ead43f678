"""Amounts the evidence states (ene_core.rules.grounding) and the engine's use of them."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from engine_views import as_older, claim_events, claim_of, streamed_and_whole
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.rules.amounts import amounts
from ene_core.rules.grounding import computed, rivals, substitute, unstated
from ene_core.rules.masking import difference, masked
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores


@pytest.mark.parametrize(
    ("claim", "premise"),
    [
        ("The trail is 12 kilometres long.", "The trail runs for 12,000 metres."),
        ("The hall holds up to 40 people.", "The hall holds no more than 40 people."),
        ("The hall holds 40 people.", "The hall holds up to 40 people."),
        ("Light travels at about 300,000 km per second.", "Light travels at 299,792 km/s."),
        ("More than 20 people came.", "25 people came."),
        ("The store opens at 9 am.", "The store opens at 9:00."),
        ("Quiet hours start at 22:00.", "Quiet hours run from 10 pm to 7 am."),
        ("Water boils at 212 °F.", "Water boils at 100 degrees Celsius."),
        ("The default timeout is 30 seconds.", "timeout (default 30): seconds to wait."),
        ("They work from home three days a week.", "They work from home 3 days per week."),
        ("Python 3.12 is one of the versions tested.", "Tested on Python 3.11 and 3.12."),
        ("The bridge opened in 1932.", "Opened in 1932, the bridge spans the bay."),
        ("A quarter of the budget goes to rent.", "Rent takes 25 percent of the budget."),
        ("The meeting is held weekly.", "The meeting is held every Monday."),  # not checked
        ("Two people are walking.", "A man and a woman walk along a path."),  # a count, no rival
        ("She moved at the age of 3.", "She moved at the age of 3 years."),
        ("Madonna is 50 years old.", "The 50-year-old singer fell from a horse."),
        ("He was king from 1900 to 1946.", "Victor Emmanuel III (1869-1947), king (1900-1946)."),
        ("He was born on 27 April 1994.", "He was born on the 27th of April, 1994."),
        ("The fee is 500 pounds.", "The fee is £500."),
        ("The firm has 1,200 staff.", "The firm has 1,187 staff."),  # rounded
        ("Sales rose 15%.", "Sales rose 15.3%."),
        ("The Sun is 150 million km away.", "The Sun is 149.6 million km away."),
        ("The shop opens at 12:00.", "The shop opens at noon."),
        ("Teenagers need 8 to 10 hours.", "Teenagers need 8 to 10 hours a night."),
        ("The file is 2 GB.", "The file is 2,000 MB."),
        ("He was born on 4 January 1983.", "He was born January 4 , 1983."),
        ("Sales increased by 4%.", "Sales rose 4 percent."),
        ("Sales were 4% higher.", "Sales rose 4 percent."),  # no verb in the claim
        ("The return is due in July 2025.", "Returns must be filed by 31 July 2025."),
        ("It sank in 1912.", "It sank on 15 April 1912."),
        ("It ran between 21 and 28 January.", "It ran between January 21 and 28."),
        ("It opened on 23 February 2011.", "It ran from 23 February to 6 March 2011."),
        ("The adult dose is 0.5 g.", "The adult dose is 500 mg."),
        ("Take 400 micrograms of folic acid.", "Take 400 µg of folic acid daily."),
        ("The battery holds 1.5 kWh.", "The battery holds 1,500 Wh."),
        ("The park covers 40 hectares.", "The park covers 0.4 square kilometres."),
        ("It costs 30 euros a month.", "It costs 30 euros per month."),
        ("It costs 30 euros.", "It costs 30 euros per year."),  # no period in the claim
        ("The plan costs 4.90 euros a month.", "The plan: 4.90 euros per month, 25 days a year."),
        ("Containers hold up to 100 ml.", "Containers of 100 ml or less are allowed."),
        ("Members must be 18 or older.", "Members must be at least 18."),
        ("Rinse for no less than a quarter of an hour.", "Rinse for at least 15 minutes."),
        ("Check in three quarters of an hour early.", "Check in 45 minutes early."),
        ("The flight takes less than 2 hours.", "The flight takes 95 minutes."),  # "<", not "up to"
        ("Drink 2 litres a day.", "Drink 2,000 ml a day."),
        ("The API allows roughly 10 requests per second.", "It allows 600 requests per minute."),
        ("It costs 360 euros a year.", "It costs 30 euros per month."),
        ("Take it twice a day.", "Take one tablet every 12 hours."),  # the same frequency
        ("The bins are emptied weekly.", "Bins are emptied every week."),
        (  # no frequency in the evidence: "every year" may be its "annual"
            "The festival is held every year.",
            "The annual festival draws 5,000 visitors.",
        ),
        (  # "a second dose" is an ordinal, not a second of time or a rate
            "Puppies get their first vaccination at eight weeks.",
            "Puppies receive their first vaccination at 8 weeks and a second dose at 12 weeks.",
        ),
        ("The SDK checks for changes twice a minute.", "The SDK polls every 30 seconds."),
        ("Keep it for up to a fortnight.", "Store it for up to two weeks."),  # "a" unit
        (  # clock times in words
            "You can start at half past seven and work until 7 in the evening.",
            "Staff may start work from 7:30 am and finish as late as 7 pm.",
        ),
        ("Doors open at a quarter to eight.", "Doors open at 7:45 pm."),
        ("The office opens at nine o'clock.", "The office opens at 9 am."),
        ("Add half a litre of milk.", "Add 500 ml of milk."),  # a part of any unit
        ("You need a quarter of a kilo of flour.", "Add 250 g of flour."),
        ("Drink a litre and a half of water.", "Drink 1.5 litres of water."),
        ("A dozen species bear her name.", "Twelve species are named after her."),
        ("Half a dozen species bear her name.", "Nine species are named after her."),  # not read
        (
            "The call came sometime after 9 o'clock.",
            "The call came at about 9:40.",
        ),  # no bound read
    ],
)
def test_stated(claim: str, premise: str) -> None:
    assert unstated(claim, premise) == ()


@pytest.mark.parametrize(
    ("claim", "premise", "missing", "rival"),
    [
        ("The heel-to-toe drop is 8 cm.", "The heel-to-toe drop is 8 mm.", ["8 cm"], "8 mm"),
        ("The bag may weigh 23 kg.", "The bag may weigh 32 kg.", ["23 kg"], "32 kg"),
        ("The allowance is 40 dollars.", "The allowance is 40 euros.", ["40 dollars"], "40 euros"),
        ("Priya became CFO in 2021.", "Priya became CFO in 2019.", ["2021"], "2019"),
        ("Quiet hours start at 23:00.", "Quiet hours start at 10 pm.", ["23:00"], "10 pm"),
        ("Water boils at 100 °F.", "Water boils at 100 °C.", ["100 °F"], "100 °C"),
        (
            "About 500,000 years.",
            "About 50,000 years.",
            ["About 500,000 years"],
            "About 50,000 years",
        ),
        ("Fewer than 10 were sold.", "12 were sold.", ["Fewer than 10"], "12"),
        # "up to" says the most there is: a value under it is another amount
        ("The hall holds up to 40 people.", "The hall holds 35 people.", ["up to 40"], "35"),
        ("Two people are walking.", "Three people walk along a path.", ["Two"], "Three"),
        ("The firm has 1,200 staff.", "The firm has 1,287 staff.", ["1,200"], "1,287"),
        ("It weighs 3.4 kg.", "It weighs 3 kg.", ["3.4 kg"], "3 kg"),  # more precise than stated
        ("They need 6 to 7 hours.", "They need 8 to 10 hours.", ["6", "7 hours"], "8"),
        ("The app needs 500 GB.", "The app needs 500 MB.", ["500 GB"], "500 MB"),
        (
            "The 2024 tax return is due by 31 July 2024.",
            "Tax returns for 2024 must be filed by 31 July 2025.",
            ["31 July 2024"],
            "31 July 2025",
        ),
        ("It sank on 15 April 1912.", "It sank in April 1912.", ["15 April 1912"], "April 1912"),
        (
            "Hardware sales rose 4 percent.",
            "Hardware sales declined 4 percent as customers waited.",
            ["rose 4 percent"],
            "declined 4 percent",
        ),
        (
            "A card costs 30 euros per month.",
            "A card costs 30 euros per year.",
            ["30 euros per month"],
            "30 euros per year",
        ),
        (
            "The Sun is 93 million km away.",
            "The Sun is 93 million miles away.",
            ["93 million km"],
            "93 million miles",
        ),
        (  # two limits: the same thing, one value
            "Containers of up to 200 ml are allowed.",
            "Containers must hold 100 ml or less.",
            ["up to 200 ml"],
            "100 ml or less",
        ),
        ("You must be at least 18.", "You must be 21 or older.", ["at least 18"], "21 or older"),
        (
            "Each key is limited to 100 requests per hour.",
            "Each key is limited to 100 requests per minute.",
            ["100 requests per hour"],
            "100 requests per minute",
        ),
        (
            "You can start at half past seven.",
            "Staff may start work from 8:30 am.",
            ["half past seven"],
            "8:30 am",
        ),
        ("Work ends at 7 in the evening.", "Work ends at 7 am.", ["7 in the evening"], "7 am"),
        ("Add half a litre of milk.", "Add 1 litre of milk.", ["half a litre"], "1 litre"),
        (
            "A dozen species bear her name.",
            "Nine species are named after her.",
            ["A dozen"],
            "Nine",
        ),
        (
            "Drink a litre and a half of water.",
            "Drink 1 litre of water.",
            ["a litre and a half"],
            "1 litre",
        ),
        (
            "The SDK checks for changes twice a minute.",
            "The SDK polls every 20 seconds.",
            ["twice a minute"],
            "every 20 seconds",
        ),
        ("The dose is 500 g.", "The dose is 500 mg.", ["500 g"], "500 mg"),
        ("It has 380 kJ per bar.", "It has 380 kcal per bar.", ["380 kJ"], "380 kcal"),
        ("Its top speed is 25 mph.", "Its top speed is 15 mph.", ["25 mph"], "15 mph"),
    ],
)
def test_unstated_and_rival(claim: str, premise: str, missing: list[str], rival: str) -> None:
    found = unstated(claim, premise)
    assert [a.surface for a in found] == missing
    assert rivals(found[0], premise)[0].surface == rival


def test_dates_need_a_month_with_a_day_or_a_year() -> None:
    assert [a.kind for a in amounts("You may go in March, or on 3 May.")] == ["date"]
    assert [(a.surface, a.kind) for a in amounts("On the 27th of April, 1994, the third")] == [
        ("27th of April, 1994", "date"),
        ("third", "count"),
    ]


def test_an_ordinal_is_checked_as_a_label() -> None:
    assert unstated("He was the third man.", "He was the 3rd man.") == ()
    (found,) = unstated("He finished 4th.", "He finished third, after 2 others.")
    assert (found.surface, found.label, rivals(found, "He finished 3rd.")) == ("4th", True, ())
    assert unstated("It first opened in 1879.", "It opened in 1879 with 40 suits.") == ()


def test_a_label_is_checked_but_has_no_rival() -> None:
    found = unstated("Python 3.13 is among the tested versions.", "Tested on Python 3.12.")
    assert [a.surface for a in found] == ["3.13"]
    assert found[0].label
    assert rivals(found[0], "Tested on Python 3.12.") == ()


def test_rivals_are_distinct_and_limited() -> None:
    premise = "Fees: 10 euros, 10 euros, 20 euros, 30 euros, 40 euros and 50 euros."
    (amount,) = unstated("The fee is 15 euros.", premise)
    assert [r.surface for r in rivals(amount, premise)] == ["10 euros", "20 euros", "30 euros"]


def test_rivals_among_the_claims_words_come_first() -> None:
    premise = "The Basic account costs 4.90 euros per month. A credit card costs 30 euros per year."
    claim = "A credit card costs 30 euros per month."
    (amount,) = unstated(claim, premise)
    assert [r.surface for r in rivals(amount, premise)] == [
        "4.90 euros per month",
        "30 euros per year",
    ]
    assert [r.surface for r in rivals(amount, premise, claim=claim)] == [
        "30 euros per year",
        "4.90 euros per month",
    ]


def test_substitute() -> None:
    claim = "The drop is 8 cm today."
    (amount,) = unstated(claim, "The drop is 8 mm.")
    (rival,) = rivals(amount, "The drop is 8 mm.")
    assert substitute(claim, amount, rival) == "The drop is 8 mm today."


_PIECES = [
    "8 cm",
    "12 kilometres",
    "up to 40",
    "about 300,000 km/s",
    "in 1932",
    "at 23:00",
    "at 9 am",
    "212 °F",
    "a quarter",
    "25 percent",
    "three days a week",
    "Python 3.12",
    "two dozen",
    "$5",
    "over 20",
    "half an hour",
    "a quarter of an hour",
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5),
    st.lists(st.sampled_from(_PIECES), max_size=5),
)
def test_properties(claim_pieces: list[str], other: list[str]) -> None:
    claim = "It is " + " and ".join(claim_pieces) + "."
    premise = "Also " + " and ".join(other) + "." if other else "Nothing."
    # a text states its own amounts, and so does any premise that contains it
    assert unstated(claim, claim) == ()
    assert unstated(claim, premise + " " + claim) == ()
    missing = unstated(claim, premise)
    assert set(missing) <= set(amounts(claim))
    for a in missing:
        assert claim[a.start : a.end] == a.surface
        for r in rivals(a, premise):
            assert a not in unstated(substitute(claim, a, r), premise) or r.kind != a.kind


_AMOUNTISH = re.compile(
    r"\d[\d,.:]*|\b(?:cm|mm|km|kg|g|miles|pounds|dollars|euros|percent|am|pm|°[cf]|degrees"
    r"|celsius|fahrenheit)\b",
    re.IGNORECASE,
)


class NumberBlindOracle(KeywordOracle):
    """Entails iff the premise has every content word of the claim that is not an amount: blind
    to amounts the way a small NLI model is (a little surer when the amounts match too)."""

    name = "number-blind-oracle"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        blind = [(_AMOUNTISH.sub(" ", p), _AMOUNTISH.sub(" ", c)) for p, c in pairs]
        scores = super().score(blind)
        return [
            Scores(s.entail - 0.05, s.contra) if s.entail > 0.5 and _tokens(c) - _tokens(p) else s
            for s, (p, c) in zip(scores, pairs, strict=True)
        ]


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _AMOUNTISH.findall(text)}


def test_engine_contradicts_a_claim_the_evidence_states_with_another_amount() -> None:
    contexts = ["The shoe weighs 250 g.", "The heel-to-toe drop is 8 mm."]
    answer = "The heel-to-toe drop is 8 cm."
    checked = NecessityEngine(NumberBlindOracle()).evaluate(answer, contexts)
    blind = NecessityEngine(NumberBlindOracle(), check_amounts=False).evaluate(answer, contexts)
    claim = claim_of(checked, answer)
    assert claim_of(blind, answer).status == "supported"
    assert claim.status == "contradicted"
    assert claim.contradicted_by == [1]
    assert claim.unstated_amounts == ["8 cm"]
    assert checked.verifier.check_amounts is True
    assert blind.verifier.check_amounts is False


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        # worked out from the claim's own 25 pounds: not the evidence's 25 written wrongly
        (
            "Ice fees are 25 pounds per player, so a team of four pays 100 pounds a game.",
            "unsupported",
        ),
        (
            "Ice fees are 25 pounds per player, which for a team of four is 100 pounds a game.",
            "unsupported",
        ),
        # the same 25 pounds given to another thing: the evidence's 25 is the rival
        ("Ice fees are 25 pounds per player, and a guest pays 100 pounds a game.", "contradicted"),
    ],
)
def test_no_probe_puts_back_an_amount_the_claim_draws_a_consequence_from(
    answer: str, status: str
) -> None:
    contexts = [
        "Ice fees are 25 pounds per player per game; a team of four players pays them.",
        "A guest pays 25 pounds a game.",
    ]
    claim = claim_of(NecessityEngine(NumberBlindOracle()).evaluate(answer, contexts), answer)
    assert claim.status == status
    assert claim.unstated_amounts == ["100 pounds"]


def test_engine_never_supports_an_amount_nowhere_stated() -> None:
    answer = "Checked bags may weigh up to 23 pounds."
    eng = NecessityEngine(NumberBlindOracle()).evaluate(answer, ["Checked bags may weigh 23 kg."])
    claim = claim_of(eng, answer)
    assert claim.status == "unsupported"  # 23 kg is no rival of a sum of money: nothing swapped
    assert claim.unstated_amounts == ["up to 23 pounds"]
    assert eng.minimal_sufficient_set == []


def test_the_chunk_that_states_the_amount_is_necessary() -> None:
    contexts = ["Check-in opens at the front desk.", "Check-in opens at 15:00."]
    answer = "Check-in opens at 15:00."
    checked = claim_of(NecessityEngine(NumberBlindOracle()).evaluate(answer, contexts), answer)
    blind = claim_of(
        NecessityEngine(NumberBlindOracle(), check_amounts=False).evaluate(answer, contexts),
        answer,
    )
    assert blind.classification == "robust"  # the blind verifier reads either chunk as enough
    assert (checked.status, checked.necessary, checked.classification) == (
        "supported",
        [1],
        "fragile",
    )


def test_amount_verdicts_do_not_depend_on_context_order() -> None:
    contexts = [
        "The drop is 8 mm.",
        "The stack height is 30 mm.",
        "The shoe weighs 250 g.",
        "Check-in opens at 15:00.",
    ]
    answer = "The drop is 8 cm. The stack height is 3 cm. Check-in opens at 16:00."
    engine = NecessityEngine(NumberBlindOracle())
    forward = engine.evaluate(answer, contexts)
    backward = engine.evaluate(answer, contexts[::-1])
    last = len(contexts) - 1
    for a, b in zip(forward.claims, backward.claims, strict=True):
        assert (a.status, a.unstated_amounts) == (b.status, b.unstated_amounts)
        assert a.contradicted_by == sorted(last - i for i in b.contradicted_by)
    # 30 mm is 3 cm; the clock time's only rival is 15:00
    assert [c.status for c in forward.claims] == ["contradicted", "supported", "contradicted"]
    assert forward.claims[2].contradicted_by == [3]


def test_streamed_claims_match_the_whole_answer() -> None:
    answer = "The drop is 8 cm. The shoe weighs 250 g."
    contexts = ["The drop is 8 mm.", "The shoe weighs 250 g."]
    streamed, whole = streamed_and_whole(NecessityEngine(NumberBlindOracle()), answer, contexts)
    assert [c.model_dump() for c in streamed.claims] == [c.model_dump() for c in whole.claims]


def test_an_older_eng_loads_without_the_new_fields() -> None:
    eng = NecessityEngine(KeywordOracle()).evaluate("Owls hunt at night.", ["Owls hunt at night."])
    old = as_older(eng, "1.5", ["check_amounts"], ["unstated_amounts"])
    assert old.verifier.check_amounts is None
    assert all(c.unstated_amounts == [] for c in old.claims)


def test_viewer_and_trace_show_the_amounts_not_in_the_evidence() -> None:
    from ene_core.reports.viewer import render_html

    answer, contexts = "The <b>drop</b> is 8 cm.", ["The drop is 8 mm."]
    engine = NecessityEngine(NumberBlindOracle())
    eng = engine.evaluate(answer, contexts)
    assert eng.claims[0].unstated_amounts == ["8 cm"]
    page = render_html([eng])
    assert "not in the evidence: <q>8 cm</q>" in page and "not in the evidence: 8 cm" in page
    plain, content = claim_events(engine, answer, contexts)
    assert plain["ene.claim.unstated_amount_count"] == 1
    assert "ene.claim.unstated_amounts" not in plain
    assert list(content["ene.claim.unstated_amounts"]) == ["8 cm"]


def test_cli_shows_the_amounts_not_in_the_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    from ene_core.cli import main

    argv = ["evaluate", "--oracle", "keyword", "--answer", "The drop is 8 cm and light."]
    assert main([*argv, "--context", "The drop is 8 mm and light."]) == 0
    assert "not in the evidence: 8 cm" in capsys.readouterr().out


def test_the_contradiction_names_the_amount_among_the_claims_words() -> None:
    contexts = [
        "The Basic account costs 4.90 euros per week.",
        "A credit card costs 30 euros per year.",
    ]
    answer = "A credit card costs 30 euros per month."  # "month": in neither, so not supported
    for order in (contexts, contexts[::-1]):
        claim = claim_of(NecessityEngine(NumberBlindOracle()).evaluate(answer, order), answer)
        assert claim.status == "contradicted"
        assert claim.unstated_amounts == ["30 euros per month"]
        assert [order[i] for i in claim.contradicted_by] == [contexts[1]]


@pytest.mark.parametrize(
    ("claim", "premise", "amount"),
    [
        (  # a count times a stated amount
            "For all zones, a year's pass comes to 1,180 euros.",
            "A monthly pass costs 118 euros for all zones. A year's pass costs the same as ten"
            " monthly passes.",
            "1,180 euros",
        ),
        (  # a stated rate times the claim's own duration
            "Renting for four days would cost 68 euros in surcharges.",
            "Young drivers pay a surcharge of 17 euros per day.",
            "68 euros",
        ),
        (  # a difference, worded as a saving
            "Booking online saves you 15 euros.",
            "A ticket costs 45 euros online and 60 euros at the desk.",
            "15 euros",
        ),
        (  # the gap between two periods
            "Men can donate every 12 weeks, while women have to wait four weeks longer.",
            "Men can donate whole blood every 12 weeks and women every 16 weeks.",
            "four weeks",
        ),
        (  # years of two sentences, with "after" and "roughly": 1651 - 1487 = 164
            "A fire in 1651, roughly 165 years after the hall was finished, destroyed the roof.",
            "The hall was built between 1482 and 1487. A fire in 1651 destroyed the roof.",
            "roughly 165 years",
        ),
        (  # a date's year
            "Divers found the wreck in 1989, nearly 200 years after she sank.",
            "The ship sank on 14 November 1794. Divers located the wreck in 1989.",
            "nearly 200 years",
        ),
        (  # two years of one sentence need no wording of a computation: 1834 to 1902
            "Once the guild was dissolved in 1834, it was a school for nearly 70 years.",
            "After the guild was dissolved in 1834, the hall served as a school until 1902.",
            "nearly 70 years",
        ),
        (  # a bound near its value: 116 years
            "The mill ground grain for well over a century.",
            "The mill was built in 1796 to grind grain and worked until 1912.",
            "over a century",
        ),
        (  # a share in words that two amounts give: 4 of 8 hours
            "On low it needs about 8 hours, or roughly half that on high.",
            "Cook on low for 8 hours or on high for 4 to 5 hours.",
            "roughly half",
        ),
        (  # what a share leaves of a stated amount: 96 pounds less 25%
            "A full plot is 96 pounds a year, so an over-65 resident would pay 72 pounds.",
            "A full plot costs 96 pounds a year; residents over 65 get a 25% reduction.",
            "72 pounds",
        ),
        (  # a sum of a bound: 28 plus up to 30 is at most 58
            "It has a crew of 28 and takes up to 30 scientists on top of that, so as many as 58"
            " people.",
            "The vessel carries a crew of 28 plus up to 30 scientists.",
            "as many as 58",
        ),
        (  # a change: 140 to 212 is more than half as many again
            "The colony has grown by more than half since 2019, reaching 212 adults.",
            "The colony was counted at 212 adults in June 2024, up from 140 in 2019.",
            "grown by more than half",
        ),
        (  # a rate per thing times as many of them as the claim names, with no cue worded
            "You can bring a maximum of two dogs, which would add 80 pounds to the cost.",
            "Up to two dogs are allowed per boat for a fee of 40 pounds per dog.",
            "80 pounds",
        ),
        (  # a rate per unit times the claim's amount in another unit of it: 35 g x 20 m2
            "For a patch of 20 square metres, you'll need about 700 grams of seed.",
            "Sow lawn seed at a rate of 35 grams per square metre.",
            "about 700 grams",
        ),
        (  # "per kg of body weight" of "a 4 kg lamb": 200 ml x 4
            "Over its first day a 4 kg lamb needs 800 ml of colostrum.",
            "Each lamb needs 200 ml of colostrum per kg of body weight within 24 hours.",
            "800 ml",
        ),
        (  # the hours between two clock times of one sentence
            "You take the two doses four hours apart.",
            "Take the first sachet at 4 pm and the second at 8 pm.",
            "four hours",
        ),
        (  # the total of one sentence's list of three, with no cue worded
            "Mix the oats, almonds and seeds: that gives you 450 g of dry ingredients.",
            "Combine 300 g of rolled oats, 100 g of chopped almonds and 50 g of pumpkin seeds.",
            "450 g",
        ),
        (  # a rate per gram of an amount in kilograms
            "A 2 kg bag costs 2,000 euros.",
            "Saffron costs 1 euro per gram.",
            "2,000 euros",
        ),
        (  # the days of a range of weekdays, both ends in
            "Today it is open five days a week.",
            "Today the market has 64 stalls and is open Tuesday to Saturday.",
            "five days a week",
        ),
        ("The shop is open seven days a week.", "Open Mon-Sun, 9 am to 5 pm.", "seven days a week"),
        (  # the days of a range of dates of one sentence, both ends in
            "The trip lasts five days.",
            "The trip runs from Monday 9 June to Friday 13 June.",
            "five days",
        ),
        ("The festival lasts three days.", "It runs from 30 June to 2 July 2025.", "three days"),
        (  # an amount given with a frequency, over the claim's period
            "The usual dose is 1,500 mg a day.",
            "Take 500 mg three times a day for 7 days.",
            "1,500 mg a day",
        ),
        ("You take 28 g a week.", "Take 2 g every 12 hours.", "28 g a week"),
        (  # a rate per 100 of a unit, for the case the claim opens with
            "Paying 2,000 pounds in cash into a branch would cost you 14 pounds.",
            "Cash deposits at a branch cost 0.70 pounds per 100 pounds deposited.",
            "14 pounds",
        ),
        (
            "For 400 g of pasta you'll want roughly 4 litres of water.",
            "Use about 1 litre of water per 100 g of pasta.",
            "roughly 4 litres",
        ),
        (  # a rate per unit and month, "per person" for "people"
            "Keeping 1,000 GB in the Cold tier would cost 6 dollars a month.",
            "Cold tier storage costs 0.006 dollars per GB per month.",
            "6 dollars a month",
        ),
        ("Four people would pay 60 euros.", "Entry is 15 euros per person.", "60 euros"),
        (  # a rate per thing and night, over the nights the claim names
            "Bringing two dogs for three nights adds 18 pounds to the bill.",
            "Dogs are welcome at 3 pounds per dog per night.",
            "18 pounds",
        ),
        (  # a rate per thing and month, over the claim's period
            "Ten users would pay 840 dollars a year.",
            "Business costs 7 dollars per user per month.",
            "840 dollars a year",
        ),
        (  # a rate per a number of things, of an area
            "Six hens need at least 2 square metres indoors.",
            "Allow at least 1 square metre of indoor space for every 3 hens.",
            "at least 2 square metres",
        ),
        (  # a rate per square metre, for an area the claim gives as its case
            "For a patch of 20 square metres, you'll need about 700 grams of seed.",
            "Sow grass seed at 35 grams per square metre.",
            "about 700 grams",
        ),
    ],
)
def test_computed_from_the_evidence(claim: str, premise: str, amount: str) -> None:
    assert [a.surface for a in computed(claim, premise)] == [amount]
    assert amount not in [a.surface for a in unstated(claim, premise)]


@pytest.mark.parametrize(
    ("claim", "premise"),
    [
        (  # no computation worded
            "A year's pass is 1,180 euros.",
            "A monthly pass costs 118 euros. A year's pass costs the same as ten monthly passes.",
        ),
        (  # worded, but no product of two amounts gives it
            "For all zones, a year's pass comes to 1,200 euros.",
            "A monthly pass costs 118 euros for all zones. A year's pass costs the same as ten"
            " monthly passes.",
        ),
        (  # a bound is no factor: "up to 4 days" times 17 euros is no total
            "Renting would cost 68 euros in surcharges.",
            "Young drivers pay a surcharge of 17 euros per day for up to 4 days.",
        ),
        (  # another gap: 1834 to 1902 is 68 years, not 80
            "Once the guild was dissolved in 1834, it was a school for 80 years.",
            "After the guild was dissolved in 1834, the hall served as a school until 1902.",
        ),
        (  # a bound far from its value: 1796 to 2012 is not "over a century" of anything
            "The mill ground grain for over a century.",
            "The mill was built in 1796 and restored in 2012.",
        ),
        (  # years of two sentences, and no computation worded
            "The hall was a school for 164 years.",
            "The hall was finished in 1487. A fire broke out in 1651.",
        ),
        (  # a share of a stated amount, with no computation worded
            "The permit is 40 pounds a year.",
            "A permit costs 80 pounds a year. Electric cars receive a 50% discount.",
        ),
        (  # a share in digits is stated, not computed: 4 of 8 hours is not "50 percent"
            "On high it needs 50 percent of the time.",
            "Cook on low for 8 hours or on high for 4 hours.",
        ),
        (  # "at least" is no bound near a value: the gap must be the claim's
            "The passport must be valid for at least six months after departure.",
            "Passports issued between 2010 and 2015 must be valid for three months.",
        ),
        (  # another gap: 4 pm to 8 pm is not five hours
            "You take the two doses five hours apart.",
            "Take the first sachet at 4 pm and the second at 8 pm.",
        ),
        (  # clock times of two sentences, and no computation worded
            "You take the two doses four hours apart.",
            "Take the first sachet at 4 pm. Take the second at 8 pm.",
        ),
        (  # not the list's total
            "That gives you 400 g of dry ingredients.",
            "Combine 300 g of rolled oats, 100 g of chopped almonds and 50 g of pumpkin seeds.",
        ),
        (  # a list across two sentences is no total of one
            "That gives you 450 g of dry ingredients.",
            "Combine 300 g of rolled oats. Add 100 g of chopped almonds and 50 g of pumpkin seeds.",
        ),
        (  # a rate per dog is no rate per cat
            "You can bring two cats, which would add 80 pounds to the cost.",
            "Up to two dogs are allowed per boat for a fee of 40 pounds per dog.",
        ),
        (  # the rate per dog, but not the product: 2 x 40 is not 90
            "You can bring two dogs, which would add 90 pounds to the cost.",
            "Up to two dogs are allowed per boat for a fee of 40 pounds per dog.",
        ),
        (  # a rate per litre says nothing of a mass
            "A 2 kg bag costs 2,000 euros.",
            "Saffron oil costs 1 euro per litre.",
        ),
        ("Today it is open six days a week.", "It is open Tuesday to Saturday."),
        (
            "Paying 2,000 pounds in cash into a branch would cost you 16 pounds.",
            "Cash deposits at a branch cost 0.70 pounds per 100 pounds deposited.",
        ),
        ("The usual dose is 1,000 mg a day.", "Take 500 mg three times a day for 7 days."),
        (
            "Bringing two dogs for two nights adds 18 pounds to the bill.",
            "Dogs are welcome at 3 pounds per dog per night.",
        ),
        (  # the frequency is not the amount's
            "The usual dose is 1,500 mg a day.",
            "Tablets contain 500 mg. Take them with food three times a day.",
        ),
        ("The trip lasts four days.", "The trip runs from Monday 9 June to Friday 13 June."),
        (  # two dates of two sentences are no range
            "The trip lasts five days.",
            "The coach leaves on 9 June. Parents collect the children on 13 June.",
        ),
    ],
)
def test_not_computed(claim: str, premise: str) -> None:
    assert computed(claim, premise) == ()


def test_an_amount_computed_once_is_computed_where_it_is_written_again() -> None:
    claim = (
        "It is paid in two parts: 1,000 euros after the first month, and another 1,000 euros"
        " once they pass probation."
    )
    premise = (
        "The referral bonus is 2,000 euros. Half of the bonus is paid after the first month, and"
        " the rest once they pass probation."
    )
    assert [a.surface for a in computed(claim, premise)] == ["1,000 euros", "1,000 euros"]
    assert unstated(claim, premise) == ()


PASSES = "A monthly pass costs 118 euros. An annual pass comes to the price of ten monthly passes."
DOOR = "Entry costs 38 pounds online or 45 pounds at the door."


@pytest.mark.parametrize(
    ("claim", "premise", "read"),
    [
        ("An annual pass comes to 1,180 euros.", PASSES, "An annual pass comes to some euros."),
        (
            "Two passes would cost 236 euros.",
            "A monthly pass costs 118 euros.",
            "Two passes would cost some euros.",
        ),
        (
            "The loaf bakes for 45 minutes in total.",
            "Bake for 20 minutes with the lid on, then another 25 minutes without it.",
            "The loaf bakes for some minutes in total.",
        ),
        ("Booking online saves you 7 pounds.", DOOR, "Booking online saves you some pounds."),
        (
            "Divers found it in 1989, nearly 200 years after she sank.",
            "The ship sank on 14 November 1794. Divers located the wreck in 1989.",
            "Divers found it in 1989, some years after she sank.",
        ),
        (  # the whole number goes, its scale word too
            "It costs 2 billion euros in total.",
            "Phase one cost 1.5 billion euros and phase two 0.5 billion euros.",
            "It costs some euros in total.",
        ),
        (
            "The loaf bakes for an hour and a half in total.",
            "Bake for 60 minutes with the lid on, then another 30 minutes without it.",
            "The loaf bakes for some time in total.",
        ),
        (
            "The mine was worked for 147 years, from 1742.",
            "Mining began in 1742 and ended in 1889.",
            "The mine was worked for some years, from 1742.",
        ),
    ],
)
def test_amounts_the_evidence_computes_are_masked_for_the_model(
    claim: str, premise: str, read: str
) -> None:
    assert masked(claim, premise) == read


@pytest.mark.parametrize(
    ("claim", "premise"),
    [
        ("An annual pass comes to 1,200 euros.", PASSES),  # a wrong total: unstated, as written
        ("An annual pass costs 118 euros.", PASSES),  # stated, nothing computed
        ("Online entry is 7 pounds less than at the door.", DOOR),  # which side is less?
        ("In total, 236 euros buys two passes and 5 euros more.", PASSES),  # 5 unstated
    ],
)
def test_claims_with_nothing_computed_or_something_unstated_are_read_as_written(
    claim: str, premise: str
) -> None:
    assert masked(claim, premise) == claim


def test_a_computed_amount_is_supported_by_its_operands_jointly() -> None:
    contexts = [
        "A monthly pass costs 118 euros.",
        "An annual pass comes to the price of ten monthly passes.",
        "Children travel free.",
    ]
    right, wrong = "An annual pass comes to 1,180 euros.", "An annual pass comes to 1,200 euros."
    engine = NecessityEngine(KeywordOracle())
    got = claim_of(engine.evaluate(right, contexts), right)
    assert (got.status, got.necessary, got.unstated_amounts) == ("supported", [0, 1], [])
    assert got.computed_amounts == ["1,180 euros"]
    got = claim_of(engine.evaluate(wrong, contexts), wrong)
    assert (got.status, got.unstated_amounts) == ("unsupported", ["1,200 euros"])
    assert got.computed_amounts == []
    unchecked = NecessityEngine(KeywordOracle(), check_amounts=False)
    got = claim_of(unchecked.evaluate(right, contexts), right)
    assert got.status == "unsupported"  # the model alone cannot multiply


class _DoubtsTheCount(KeywordOracle):
    """Calls every claim contradicted by a premise that counts "ten monthly passes"."""

    @staticmethod
    def _one(premise: str, claim: str) -> Scores:
        return (
            Scores(0.02, 0.95) if "ten monthly" in premise else KeywordOracle._one(premise, claim)
        )


def test_a_claim_read_with_its_computed_amounts_masked_is_never_contradicted() -> None:
    contexts = ["A monthly pass costs 118 euros.", "An annual pass is ten monthly passes."]
    claim = "An annual pass comes to 1,180 euros."
    got = claim_of(NecessityEngine(_DoubtsTheCount()).evaluate(claim, contexts), claim)
    assert (got.status, got.contradicted_by) == ("unsupported", [])


RULES = (
    "Repositories are limited to 5 GB, and individual files larger than 50 MB are rejected on"
    " push. Contracts above 50,000 euros must be signed by two managing directors. Accounts"
    " holding less than 50,000 euros pay no custody fee. Power banks rated between 100 and 160"
    " Wh need airline approval. A licence that expired more than 6 months ago is void."
)


@pytest.mark.parametrize(
    "claim",
    [
        "A push that contains a 60 MB file will be rejected.",
        "A contract worth 80,000 euros must be signed by both managing directors.",
        "If you hold 30,000 euros in your account, you pay no custody fee.",
        "A 120 Wh power bank needs airline approval.",
    ],
)
def test_a_case_the_evidence_s_condition_takes_in_is_not_unstated(claim: str) -> None:
    assert unstated(claim, RULES) == ()


@pytest.mark.parametrize(
    ("claim", "amount"),
    [
        ("The file size limit is 60 MB.", "60 MB"),  # a value the claim states, not a case
        ("A push that contains a 40 MB file will be rejected.", "40 MB"),  # outside the bound
        ("A contract worth 30,000 euros must be signed by two directors.", "30,000 euros"),
        # a bound of another thing: "more than 6 months" shares one word with the claim
        ("A 45-year-old needs to renew their licence every 15 years.", "45-year"),
    ],
)
def test_a_value_no_condition_of_its_own_takes_in_stays_unstated(claim: str, amount: str) -> None:
    assert amount in [a.surface for a in unstated(claim, RULES)]


def test_a_sentence_s_first_word_is_no_label() -> None:
    (amount,) = amounts("A 120 Wh power bank needs approval.")
    assert not amount.label
    assert amounts("Python 3.13 is out.")[0].label


def test_a_frequency_the_evidence_gives_otherwise_is_unstated() -> None:
    claim = "After the booster, the vaccines are repeated every year."
    premise = (
        "A booster is given at 15 months; after that, the vaccines are repeated every three years."
    )
    (missing,) = unstated(claim, premise)
    assert missing.surface == "every year"
    assert [r.surface for r in rivals(missing, premise)] == ["every three years"]


def test_the_computed_amounts_are_shown_and_older_engs_load_without_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ene_core.cli import main
    from ene_core.reports.viewer import render_html

    answer = "An annual pass comes to 1,180 euros."
    contexts = ["A monthly pass costs 118 euros.", "An annual pass comes to ten monthly passes."]
    engine = NecessityEngine(KeywordOracle())
    eng = engine.evaluate(answer, contexts)
    assert "computed from the evidence: <q>1,180 euros</q>" in render_html([eng])
    plain, content = claim_events(engine, answer, contexts)
    assert plain["ene.claim.computed_amount_count"] == 1
    assert "ene.claim.computed_amounts" not in plain
    assert list(content["ene.claim.computed_amounts"]) == ["1,180 euros"]
    argv = ["evaluate", "--oracle", "keyword", "--answer", answer]
    assert main([*argv, *(a for c in contexts for a in ("--context", c))]) == 0
    assert "computed from the evidence: 1,180 euros" in capsys.readouterr().out
    old = as_older(eng, "1.10", [], ["computed_amounts"])
    assert old.claims[0].computed_amounts == [] and old.schema_version == "1.10"


@pytest.mark.parametrize(
    ("claim", "premise", "missing"),
    [
        (  # the case a computed amount is worked out for is the claim's own
            "Paying 2,000 pounds in cash would cost you 14 pounds.",
            "Cash deposits cost 0.70 pounds per 100 pounds deposited.",
            [],
        ),
        (
            "If you deposit 2,000 pounds in cash, it costs 14 pounds.",
            "Cash deposits cost 0.70 pounds per 100 pounds deposited.",
            [],
        ),
        (  # a count it states, not a case: the evidence's "up to two" still rivals it
            "You can bring three dogs, which would add 120 pounds to the cost.",
            "Up to two dogs are allowed per boat for a fee of 40 pounds per dog.",
            ["three"],
        ),
        (  # a wrong result: the case and the result are both unstated
            "Paying 2,000 pounds in cash would cost you 16 pounds.",
            "Cash deposits cost 0.70 pounds per 100 pounds deposited.",
            ["2,000 pounds", "16 pounds"],
        ),
    ],
)
def test_a_case_a_computed_amount_is_worked_out_for(
    claim: str, premise: str, missing: list[str]
) -> None:
    assert [a.surface for a in unstated(claim, premise)] == missing


def test_a_difference_said_to_be_more_or_less_is_told_apart() -> None:
    claim = "Online entry is 7 pounds less than at the door, and costs 38 pounds."
    seven, thirty_eight = amounts(claim)
    assert difference(claim, seven) and not difference(claim, thirty_eight)
