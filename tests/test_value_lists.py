"""Value lists (ene_core.rules.bindings.other_value): a claim that gives one thing the value an
evidence sentence gives another; and the engine's use of it."""

from __future__ import annotations

import re

import pytest
from engine_views import as_older, claim_of, shown_everywhere, streamed_and_whole
from hypothesis import given
from hypothesis import strategies as st

from ene_core import NecessityEngine
from ene_core.rules.bindings import other_value
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores

MEALS = "Meal expenses are reimbursed up to 25 euros for lunch and 40 euros for dinner."
SPEEDS = (
    "In Velland the speed limit is 50 km/h in built-up areas, 90 km/h on rural roads and"
    " 120 km/h on motorways."
)
PLANS = "The Basic plan costs 3.99 per month for 50 pages; the Plus plan costs 7.99 for 150 pages."
NOTICE = (
    "After probation, the notice period is one month for the employee and three months for the"
    " employer."
)
STAFF = "The company had 200 employees in 2019 and 350 in 2023."
CEREAL = (  # "per 100 g" is what every value is given per, not one of them
    "Per 100 g, the cereal contains 380 kcal, 8 g of fat, 22 g of sugars and 9 g of fibre."
)
SUGAR_LABEL = "Foods with more than 22.5 g of sugars per 100 g are labelled high in sugar."
BINS = (  # "and" inside the first item, ", and" between the items
    "In Eastbury the blue bin is for paper and cardboard, and the yellow bin is for plastic"
    " packaging and metal cans."
)


@pytest.mark.parametrize(
    ("claim", "parts", "said", "instead"),
    [
        ("Dinner is reimbursed up to 25 euros.", [MEALS], "up to 25 euros", "40 euros"),
        ("Rural roads have a speed limit of 120 km/h.", [SPEEDS], "120 km", "90 km"),
        ("The Basic plan includes 150 pages a month.", [PLANS], "150 pages a month", "50"),
        ("Employees have to give three months' notice.", [NOTICE], "three months", "one month"),
        ("The company had 200 employees in 2023.", [STAFF], "2023", "2019"),  # by its other value
        ("In Eastbury, metal cans belong in the blue bin.", [BINS], "blue", "yellow"),
        ("The cereal contains 9 g of sugars per 100 grams.", [CEREAL], "9 g", "22 g"),
        (  # among other sentences, in a sentence of its own
            "Dinner is reimbursed up to 25 euros.",
            ["Claims are due within 60 days.", MEALS],
            "up to 25 euros",
            "40 euros",
        ),
    ],
)
def test_a_value_given_to_another(claim: str, parts: list[str], said: str, instead: str) -> None:
    found = other_value(claim, parts)
    assert found is not None
    assert (found.part, found.amount.surface, found.rival.surface) == (
        len(parts) - 1,
        said,
        instead,
    )


@pytest.mark.parametrize(
    ("claim", "parts"),
    [
        ("Lunch is reimbursed up to 25 euros.", [MEALS]),  # the right binding
        ("Meals are reimbursed up to 25 euros.", [MEALS]),  # names neither: the model's call
        ("The speed limit on motorways is 120 km/h.", [SPEEDS]),
        ("The Plus plan includes 150 pages.", [PLANS]),
        ("Employers have to give three months' notice.", [NOTICE]),
        ("The company had 350 employees in 2023.", [STAFF]),
        ("In Eastbury, cardboard belongs in the blue bin.", [BINS]),
        ("In Eastbury, metal cans belong in the yellow bin.", [BINS]),
        ("Lunch costs 25 euros and dinner 40 euros.", [MEALS]),  # two values: the whole list
        ("Dinner is reimbursed up to 25 euros.", [MEALS, "Dinner is paid up to 25 euros."]),
        ("Dinner is reimbursed up to 60 euros.", [MEALS]),  # unstated: the amount check's
        (  # a compound amount, not a list
            "Light reaches the Earth in about 8 minutes.",
            ["Sunlight takes about 8 minutes and 20 seconds to reach the Earth."],
        ),
        ("Adults need 7 hours of sleep.", ["Most adults need between 7 and 9 hours of sleep."]),
        (  # alternatives name one thing
            "The phone comes with 128 GB of storage.",
            ["The phone comes with 128 GB or 256 GB of storage."],
        ),
        (  # one subject, two predicates: "fetched" is "sold", not "estimated"
            "The brooch fetched $120,000.",
            ["The brooch had been estimated to fetch $20,000, but sold for $120,000."],
        ),
        ("Dinner is reimbursed up to 40 euros.", ["Dinner is reimbursed up to 40 euros."]),
        ("The cereal contains 22 g of sugars per 100 grams.", [CEREAL]),
        (  # "per 100 g" of the label rule is no other value of the claim's sugars
            "With 22 g of sugars per 100 g, it falls just below the high-sugar threshold.",
            [CEREAL, SUGAR_LABEL],
        ),
    ],
)
def test_no_value_given_to_another(claim: str, parts: list[str]) -> None:
    assert other_value(claim, parts) is None


THINGS = ["lunch", "dinner", "parking", "taxis", "hotels", "trains"]


@given(
    st.lists(st.sampled_from(THINGS), min_size=2, max_size=4, unique=True),
    # no round values: "230 euros" is also stated by "226 euros", rounded
    st.lists(st.integers(5, 900).filter(lambda v: v % 10), min_size=4, max_size=4, unique=True),
    st.data(),
)
def test_every_item_of_a_list_binds_its_own_value(
    things: list[str], values: list[int], data: st.DataObject
) -> None:
    listed = [f"{v} euros for {t}" for v, t in zip(values, things, strict=False)]
    sentence = f"The fees are {', '.join(listed[:-1])} and {listed[-1]}."
    i = data.draw(st.integers(0, len(things) - 1))
    j = data.draw(st.integers(0, len(things) - 1))
    found = other_value(f"The fee for {things[i]} is {values[j]} euros.", [sentence])
    if i == j:
        assert found is None
    else:
        assert found is not None and found.rival.value == values[i]


ANSWER = "Dinner is reimbursed up to 25 euros."
CONTEXTS = ["Claims are due within 60 days of the trip.", MEALS]


@pytest.mark.parametrize("order", [CONTEXTS, CONTEXTS[::-1]])
def test_engine_contradicts_by_the_lists_context(order: list[str]) -> None:
    blind = NecessityEngine(KeywordOracle(), check_bindings=False).evaluate(ANSWER, order)
    assert claim_of(blind, ANSWER).status == "supported"  # every word is there
    eng = NecessityEngine(KeywordOracle()).evaluate(ANSWER, order)
    claim = claim_of(eng, ANSWER)
    assert (claim.status, [order[i] for i in claim.contradicted_by], claim.other_value) == (
        "contradicted",
        [MEALS],
        "40 euros",
    )
    right = "Lunch is reimbursed up to 25 euros."
    good = claim_of(NecessityEngine(KeywordOracle()).evaluate(right, order), right)
    assert (good.status, good.other_value, [order[i] for i in good.necessary]) == (
        "supported",
        None,
        [MEALS],
    )


def test_streamed_claims_match_the_whole_answer() -> None:
    answer = f"{ANSWER} Lunch is reimbursed up to 25 euros."
    streamed, whole = streamed_and_whole(NecessityEngine(KeywordOracle()), answer, CONTEXTS)
    assert [c.model_dump() for c in streamed.claims] == [c.model_dump() for c in whole.claims]
    assert [c.status for c in whole.claims] == ["contradicted", "supported"]


def test_an_older_eng_loads_without_the_field() -> None:
    eng = NecessityEngine(KeywordOracle()).evaluate(ANSWER, CONTEXTS)
    old = as_older(eng, "1.7", [], ["other_value"])
    assert old.claims[0].other_value is None and old.schema_version == "1.7"


def test_viewer_trace_and_cli_show_the_other_value(capsys: pytest.CaptureFixture[str]) -> None:
    shown = shown_everywhere(ANSWER, CONTEXTS, capsys)
    assert "the evidence gives instead: <q>40 euros</q>" in shown.page
    assert "the evidence gives instead: 40 euros" in shown.page
    plain, content = shown.plain, shown.content
    assert plain["ene.claim.value_held_by_another"] is True and "ene.claim.other_value" not in plain
    assert content["ene.claim.other_value"] == "40 euros"
    assert "the evidence gives instead: 40 euros" in shown.cli


# -- the claim's value stated only about something else (another sentence) ---------------------

FUNDS = [
    "The Harbour Bond Fund has an annual charge of 0.35 percent.",
    "The Northern Growth Fund has an annual charge of 0.60 percent.",
]
CACHE = [
    "Uploaded logs are retained for 45 days by default.",
    "Build caches are kept for 5 days after their last use.",
]
DEPOSITS = [
    "The three-year fixed deposit pays 2.9% a year.",
    "The one-year fixed deposit pays 3.6% a year.",
]


@pytest.mark.parametrize(
    ("claim", "parts", "instead"),
    [
        ("The Northern Growth Fund's annual charge is 0.35 percent.", FUNDS, "0.60 percent"),
        ("Build caches are deleted 45 days after their last use.", CACHE, "5 days"),
        ("The one-year fixed deposit pays 2.9% a year.", DEPOSITS, "three-year"),
        (  # a bare number stated as a temperature
            "The heated bed goes up to 260 degrees.",
            ["The nozzle reaches 260 degrees Celsius and the heated bed 100 degrees Celsius."],
            "100 degrees Celsius",
        ),
        (  # a later clause with a participle and its own subject is no continuation
            "Writes are capped at 20,000 per second on the free tier.",
            [
                "Free-tier databases are limited to 1,000 writes per second; paid plans raise"
                " this to 20,000 writes per second."
            ],
            "1,000 writes per second",
        ),
        (  # a later clause with its own verb leaves nothing out
            "Travellers on short routes receive 400 euros.",
            [
                "Travellers on short routes receive 250 euros and travellers on long routes"
                " receive 400 euros."
            ],
            "250 euros",
        ),
        (  # "60 events" and "about 2 months" state no 60 days elsewhere
            "Without a subscription, clips are kept for 60 days.",
            [
                "With 60 events a day the battery lasts about 2 months.",
                "Without a subscription, clips are stored for 24 hours; the Plus plan keeps them"
                " for 60 days.",
            ],
            "24 hours",
        ),
        (  # "a day" is a rate's unit, not a second value of the claim's
            "Adults sleep about 10 hours a day.",
            ["Adults sleep about 8 hours a day and children about 10 hours a day."],
            "about 8 hours a day",
        ),
    ],
)
def test_a_value_stated_only_about_something_else(
    claim: str, parts: list[str], instead: str
) -> None:
    found = other_value(claim, parts)
    assert found is not None and found.rival.surface == instead


@pytest.mark.parametrize(
    ("claim", "parts"),
    [
        ("The Northern Growth Fund's annual charge is 0.60 percent.", FUNDS),  # its own value
        ("Build caches are deleted 5 days after their last use.", CACHE),
        ("The three-year fixed deposit pays 2.9% a year.", DEPOSITS),
        ("The fund's annual charge is 0.35 percent.", FUNDS),  # names neither fund
        (  # the claim names no year: "$5m in 2020" or "$3m in 2019" is not its to choose
            "The company had revenue of 5 million dollars.",
            [
                "Revenue reached 5 million dollars in 2020.",
                "The company had revenue of 3 million dollars in 2019.",
            ],
        ),
        (  # a threshold, not the rival's limit
            "Files larger than 100 MB must be uploaded with the command-line tool.",
            [
                "Files up to 100 MB can be uploaded through the web interface.",
                "Larger files, up to 5 GB, must be uploaded with the command-line tool.",
            ],
        ),
        (  # "during" and "after" probation are two conditions
            "During probation the notice period is two weeks.",
            [
                "After probation, the notice period is three months for both sides.",
                "During probation, either party may end the contract with two weeks' notice.",
            ],
        ),
        (  # the later clause leaves out the subject and verb, not only the verb
            "She received a bachelor's degree in 1967 from the University of Leeds.",
            [
                "She received a bachelor's degree in 1967 and a doctorate in 1973 from the"
                " University of Leeds."
            ],
        ),
        (  # a list whose later clauses leave out the verb: the claim names neither side
            "Other buyers can borrow up to 80%.",
            [
                "First-time buyers can borrow up to 90% of the property value; other buyers up to 80%."
            ],
        ),
        (
            "The heated bed goes up to 100 degrees.",
            ["The nozzle reaches 260 degrees Celsius and the heated bed 100 degrees Celsius."],
        ),
    ],
)
def test_no_value_stated_about_something_else(claim: str, parts: list[str]) -> None:
    assert other_value(claim, parts) is None


class _NumberBlind(KeywordOracle):
    """The keyword oracle reading every number alike, as a small NLI model nearly does."""

    @staticmethod
    def _one(premise: str, claim: str) -> Scores:
        def blind(text: str) -> str:
            return re.sub(r"\d+(?:[.,]\d+)*\s*(?:%|percent)?", "N", text)

        return KeywordOracle._one(blind(premise), blind(claim))


def test_an_unstated_amount_is_contradicted_by_the_one_value_that_fits() -> None:
    contexts = [
        "The fixed-rate mortgage is offered at 3.45 percent per year.",
        "The variable-rate mortgage currently costs 4.1 percent per year.",
    ]
    answer = "The variable-rate mortgage costs 3.1 percent per year."
    claim = claim_of(NecessityEngine(_NumberBlind()).evaluate(answer, contexts), answer)
    # every probe scores alike; the bindings leave one value that fits: 4.1 percent
    assert (claim.status, claim.contradicted_by) == ("contradicted", [1])
    right = "The variable-rate mortgage costs 4.1 percent per year."
    good = claim_of(NecessityEngine(_NumberBlind()).evaluate(right, contexts), right)
    assert good.status == "supported"


# -- values a closed set names (colours, seasons, days, "high" / "low") ------------------------

BINS = (
    "Glass goes in the green container on weekdays and paper goes in the blue container on"
    " Saturdays."
)


@pytest.mark.parametrize(
    ("claim", "instead"),
    [
        ("Glass goes in the blue container on weekdays.", "green"),
        ("Paper goes in the green container on Saturdays.", "blue"),
    ],
)
def test_a_named_value_given_to_another(claim: str, instead: str) -> None:
    found = other_value(claim, [BINS])
    assert found is not None and found.rival.surface == instead


@pytest.mark.parametrize(
    ("claim", "parts"),
    [
        ("Glass goes in the green container on weekdays.", [BINS]),  # the right binding
        ("Paper goes in the blue container.", [BINS]),
        ("The containers are green and blue.", [BINS]),  # two values of the set
        (  # one word points away: a later clause that leaves out the first one's words
            "Whites would move down the list.",
            ["Blacks would move up the list, and whites would move down."],
        ),
    ],
)
def test_no_named_value_given_to_another(claim: str, parts: list[str]) -> None:
    assert other_value(claim, parts) is None
