"""Bindings the evidence gives otherwise (ene_core.rules.bindings): unique roles and sentences that
open like the claim; and the engine's use of them."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from engine_views import as_older, claim_of, shown_everywhere, streamed_and_whole

from ene_core import NecessityEngine
from ene_core.rules.bindings import other_holder, other_subject, reversed_route, same_opening
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores

MOON = [
    "On 20 July 1969, Neil Armstrong became the first person to walk on the Moon.",
    "Buzz Aldrin joined Armstrong on the lunar surface 19 minutes later.",
]


@pytest.mark.parametrize(
    ("claim", "parts", "holder"),
    [
        ("Buzz Aldrin was the first person to walk on the Moon.", MOON, "Neil Armstrong"),
        (
            "Julius Caesar was the first Roman emperor.",
            [
                "Augustus became the first Roman emperor in 27 BC.",  # a date does not narrow it
                " Julius Caesar was appointed dictator for life.",
            ],
            "Augustus",
        ),
        (
            "Saturn is the largest planet in the Solar System.",
            [
                "Jupiter is the largest planet in the Solar System, with 95 moons.",
                " Saturn is the second-largest planet.",
            ],
            "Jupiter",
        ),
        (
            "Flying squirrels are the only mammals capable of true flight.",
            ["Bats are the only mammals capable of true flight.", " Flying squirrels glide."],
            "Bats",
        ),
        (  # "top", a possessive, and the claim's subject named later in the same sentence
            "Ade Okoro was the club's top scorer with 19 league goals.",
            [
                "Striker Jonas Miel was the club's top scorer with 19 league goals, while"
                " midfielder Ade Okoro led the team in assists with 11."
            ],
            "Striker Jonas Miel",
        ),
    ],
)
def test_another_holder(claim: str, parts: list[str], holder: str) -> None:
    found = other_holder(claim, parts)
    assert found is not None and found.holder == holder and found.part == 0


@pytest.mark.parametrize(
    ("claim", "parts"),
    [
        ("Neil Armstrong was the first person to walk on the Moon.", MOON),  # the holder
        ("Buzz Aldrin was not the first person to walk on the Moon.", MOON),  # negated
        ("Buzz Aldrin was one of the first people on the Moon.", MOON),  # not unique
        ("Buzz Aldrin was the second person to walk on the Moon.", MOON),  # another role
        (  # the same words narrowed: another role
            "Marie Curie was the first woman to win the Nobel Prize.",
            [
                "Elinor Ostrom was the first woman to win the Nobel Prize in Economics.",
                " Marie Curie won two Nobel Prizes.",
            ],
        ),
        (  # an alias the evidence never names apart: it may be the same man
            "Octavian was the first Roman emperor.",
            ["Augustus became the first Roman emperor in 27 BC.", " Rome grew."],
        ),
        (  # the evidence names the subject within the holder: one thing, two names
            "The thigh bone is the longest bone in the body.",
            ["The femur, or thigh bone, is the longest bone in the body.", " Bones grow."],
        ),
        (  # a role with a word the claim's lacks: another role
            "Buzz Aldrin was the first person to walk on the Moon.",
            ["Neil Armstrong was the first American person to walk on the Moon.", *MOON[1:]],
        ),
        (  # another owner's role: "the team's" is not "the club's"
            "Ade Okoro was the club's top scorer.",
            ["Jonas Miel was the team's top scorer, while Ade Okoro led in assists."],
        ),
        (  # the evidence gives the role to the claim's subject too
            "Ade Okoro was the top scorer.",
            ["Jonas Miel was the top scorer.", " Ade Okoro was the top scorer."],
        ),
    ],
)
def test_no_other_holder(claim: str, parts: list[str]) -> None:
    assert other_holder(claim, parts) is None


ANSWER = "Buzz Aldrin was the first person to walk on the Moon."
CONTEXTS = [MOON[1], "Apollo 12 landed in November 1969.", MOON[0]]


def test_engine_contradicts_by_the_holders_context_in_any_order() -> None:
    blind = claim_of(
        NecessityEngine(KeywordOracle(), check_bindings=False).evaluate(ANSWER, CONTEXTS), ANSWER
    )
    assert blind.status == "supported"  # every word is there
    eng = NecessityEngine(KeywordOracle()).evaluate(ANSWER, CONTEXTS)
    claim = claim_of(eng, ANSWER)
    assert (claim.status, claim.contradicted_by, claim.other_holder) == (
        "contradicted",
        [2],
        "Neil Armstrong",
    )
    assert eng.verifier.check_bindings is True and eng.minimal_sufficient_set == []
    reordered = claim_of(NecessityEngine(KeywordOracle()).evaluate(ANSWER, CONTEXTS[::-1]), ANSWER)
    assert (reordered.status, reordered.contradicted_by) == ("contradicted", [0])


def test_the_holder_is_supported() -> None:
    answer = "Neil Armstrong was the first person to walk on the Moon."
    claim = claim_of(NecessityEngine(KeywordOracle()).evaluate(answer, CONTEXTS), answer)
    assert (claim.status, claim.other_holder) == ("supported", None)


def test_streamed_claims_match_the_whole_answer() -> None:
    answer = f"{ANSWER} Armstrong walked on the Moon in 1969."
    streamed, whole = streamed_and_whole(NecessityEngine(KeywordOracle()), answer, CONTEXTS)
    assert [c.model_dump() for c in streamed.claims] == [c.model_dump() for c in whole.claims]
    assert whole.claims[0].status == "contradicted"


def test_an_older_eng_loads_without_the_fields() -> None:
    eng = NecessityEngine(KeywordOracle()).evaluate("Owls hunt at night.", ["Owls hunt at night."])
    old = as_older(eng, "1.6", ["check_bindings"], ["other_holder"])
    assert old.verifier.check_bindings is None and old.claims[0].other_holder is None


def test_viewer_trace_and_cli_show_the_other_holder(capsys: pytest.CaptureFixture[str]) -> None:
    shown = shown_everywhere(ANSWER, CONTEXTS, capsys)
    assert "the evidence gives it to: <q>Neil Armstrong</q>" in shown.page
    assert "the evidence gives it to: Neil Armstrong" in shown.page
    plain, content = shown.plain, shown.content
    assert plain["ene.claim.role_held_by_another"] is True and "ene.claim.other_holder" not in plain
    assert content["ene.claim.other_holder"] == "Neil Armstrong"
    assert "the evidence gives it to: Neil Armstrong" in shown.cli


@pytest.mark.parametrize(
    ("claim", "parts", "found"),
    [
        (
            "Jonas Ek directed the orchestra in Malmo.",
            [
                "Jonas Ek directed the orchestra in Uppsala.",
                "Rita Sol directed the orchestra in Malmo.",
            ],
            [0],
        ),
        ("The older bridge was built of iron.", ["The older bridge was built of stone."], [0]),
        (  # the opening stops at the verb: "founded" and "enlarged" may both be true
            "Princeton High School was enlarged.",
            ["Princeton High School was founded in 1867."],
            [],
        ),
        ("The Riverside store is closed on Sundays.", ["The Riverside store hosts a café."], []),
        (  # less than half of the claim
            "A full charge of the X200 battery takes about three hours.",
            ["A full charge of the battery takes three hours."],
            [],
        ),
        (
            "Jonas Ek directed the orchestra in Malmo.",
            ["Jonas Ek directed the orchestra in Malmo."],
            [],
        ),
        ("Jonas Ek conducts in Malmo.", ["Jonas Ek conducts in Uppsala."], [0]),  # "-s" + "in"
        ("The Ek orchestra of Malmo.", ["The Ek orchestra of Uppsala."], []),  # no verb it knows
        ("The blue line runs to the airport.", ["The blue line runs to the harbour."], [0]),
        (  # a past tense not in "-ed"
            "The Arden Prize went to a novel about whaling.",
            ["The Arden Prize went to a novel about a lighthouse."],
            [0],
        ),
    ],
)
def test_same_opening(claim: str, parts: list[str], found: list[int]) -> None:
    assert same_opening(parts, claim) == found


class BagOfWordsOracle(KeywordOracle):
    """Reads a premise as a bag of words, like a small NLI model: entails a claim whose words
    are all there, and contradicts it where a premise of one sentence has all but its last."""

    name = "bag-of-words-oracle"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        out = []
        for premise, claim in pairs:
            words = re.findall(r"\w+", claim.lower())
            have = set(re.findall(r"\w+", premise.lower()))
            if set(words) <= have:
                out.append(Scores(0.95, 0.02))
            elif "\n" not in premise.strip() and set(words[:-1]) <= have:
                out.append(Scores(0.02, 0.9))
            else:
                out.append(Scores(0.05, 0.05))
        return out


ORCHESTRAS = [
    "Jonas Ek directed the orchestra in Uppsala.",
    "Rita Sol directed the orchestra in Malmo.",
]


@pytest.mark.parametrize("order", [ORCHESTRAS, ORCHESTRAS[::-1]])
def test_engine_reads_a_sentence_that_opens_like_the_claim_alone(order: list[str]) -> None:
    wrong, right = (
        "Jonas Ek directed the orchestra in Malmo.",
        "Jonas Ek directed the orchestra in Uppsala.",
    )
    answer = f"{wrong} {right}"
    blind = NecessityEngine(BagOfWordsOracle(), check_bindings=False).evaluate(answer, order)
    assert claim_of(blind, wrong).status == "supported"  # every word is in the two chunks
    eng = NecessityEngine(BagOfWordsOracle()).evaluate(answer, order)
    bad, good = claim_of(eng, wrong), claim_of(eng, right)
    assert (bad.status, [order[i] for i in bad.contradicted_by]) == (
        "contradicted",
        [ORCHESTRAS[0]],
    )
    assert bad.necessary == [] and good.status == "supported"
    assert [order[i] for i in good.necessary] == [ORCHESTRAS[0]]


VOYAGE = "The Titanic sailed from Southampton to New York on its maiden voyage."


@pytest.mark.parametrize(
    ("claim", "parts", "found"),
    [
        ("The Titanic sailed from New York to Southampton.", [VOYAGE], 0),
        (
            "The firm moved from Seattle to Austin in 2019.",
            ["Rain.", "It moved from Austin to Seattle."],
            1,
        ),
        ("The Titanic sailed from Southampton to New York.", [VOYAGE], None),  # the same way
        (
            "Trains run from Rangiya to Dibrugarh.",
            ["Trains run from Dibrugarh to Rangiya and vice versa."],
            None,
        ),
        (
            "The war lasted from 1337 to 1453.",
            ["The war lasted from 1453 to 1337."],
            None,
        ),  # a range
        (  # the evidence says it both ways
            "Ferries run from Malta to Gozo.",
            ["Ferries run from Gozo to Malta.", "Ferries also run from Malta to Gozo."],
            None,
        ),
    ],
)
def test_reversed_route(claim: str, parts: list[str], found: int | None) -> None:
    assert reversed_route(claim, parts) == found


def test_engine_contradicts_a_route_the_other_way_round() -> None:
    answer = "The Titanic sailed from New York to Southampton."
    contexts = ["It sank in April 1912.", VOYAGE]
    blind = NecessityEngine(KeywordOracle(), check_bindings=False).evaluate(answer, contexts)
    assert claim_of(blind, answer).status == "supported"  # every word is there
    for order in (contexts, contexts[::-1]):
        claim = claim_of(NecessityEngine(KeywordOracle()).evaluate(answer, order), answer)
        assert claim.status == "contradicted"
        assert [order[i] for i in claim.contradicted_by] == [VOYAGE]


STAGES = "Raman won the mountain stage to Culver Pike, while Voss took the final time trial."


@pytest.mark.parametrize(
    ("claim", "parts", "found"),
    [
        (
            "Voss won the mountain stage to Culver Pike.",
            ["Rain.", STAGES],
            [
                (1, "Raman won the mountain stage to Culver Pike."),
                (1, "Voss took the final time trial."),
            ],
        ),
        (  # the predicate said through half of the claim, then otherwise
            "Guard Malik Osei led the league in rebounds, averaging 11.8 a game.",
            [
                "Guard Malik Osei averaged 22.4 points per game, and centre Tomas Brandt led the"
                " league in rebounds with 11.8 per game."
            ],
            [
                (0, "centre Tomas Brandt led the league in rebounds with 11.8 per game."),
                (0, "Guard Malik Osei averaged 22.4 points per game."),
            ],
        ),
        ("Raman won the mountain stage to Culver Pike.", [STAGES], []),  # her own clause
        (  # the claim's subject in no other clause of that sentence
            "Voss won the mountain stage to Culver Pike.",
            ["Raman won the mountain stage to Culver Pike.", "Voss took the final time trial."],
            [],
        ),
        (  # one clause with both: a swap the model reads whole ("along with")
            "Kenny Burke produced the film with Taylor.",
            ["Taylor produced the film along with Kenny Burke."],
            [],
        ),
        (  # the claim's subject clause without a verb: a sentence cut at a bracket
            "Thierry is a retired French footballer.",
            ["Thierry Henry (; born 1977) is a retired French footballer."],
            [],
        ),
        ("Voss won the stage.", ["Raman won it; Voss was second."], []),  # under three words said
    ],
)
def test_other_subject(claim: str, parts: list[str], found: list[tuple[int, str]]) -> None:
    assert other_subject(parts, claim) == found


class ClauseOracle(KeywordOracle):
    """Contradicts a claim whose subject's words a one-clause premise lacks but whose other words
    it has (another subject, same predicate); otherwise the keyword oracle's reading."""

    name = "clause-oracle"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        out = []
        for premise, claim in pairs:
            first, rest = claim.split(" ", 1)
            have = set(re.findall(r"\w+", premise.lower()))
            one = "\n" not in premise.strip() and premise.count(",") == 0
            if one and first.lower() not in have and set(re.findall(r"\w+", rest.lower())) <= have:
                out.append(Scores(0.02, 0.9))
            else:
                out.append(self._one(premise, claim))
        return out


@pytest.mark.parametrize(
    "order", [[STAGES, "The race ended in Elmshire."], ["The race ended in Elmshire.", STAGES]]
)
def test_engine_reads_another_subjects_clause_alone(order: list[str]) -> None:
    wrong = "Voss won the mountain stage to Culver Pike."
    blind = NecessityEngine(ClauseOracle(), check_bindings=False).evaluate(wrong, order)
    assert claim_of(blind, wrong).status == "supported"  # every word is in the sentence
    streamed, whole = streamed_and_whole(NecessityEngine(ClauseOracle()), wrong, order)
    for eng in (streamed, whole):
        bad = claim_of(eng, wrong)
        assert (bad.status, [order[i] for i in bad.contradicted_by]) == ("contradicted", [STAGES])
    right = "Raman won the mountain stage to Culver Pike."
    eng = NecessityEngine(ClauseOracle()).evaluate(right, order)
    assert claim_of(eng, right).status == "supported"
