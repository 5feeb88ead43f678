"""Cascade: the first verifier decides what it is sure of, the second the rest; the ENG says
which decided each claim."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import Cascade, NecessityEngine, Scores, decide
from ene_core.testing import KeywordOracle


class TableOracle:
    """Scores looked up by claim (the premise is ignored); unknown claims score 0."""

    revision = "1"
    default_threshold = 0.5

    def __init__(self, name: str, table: Mapping[str, Scores]) -> None:
        self.name = name
        self.table = dict(table)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        return [self.table.get(claim, Scores(0.0, 0.0)) for _, claim in pairs]


probability = st.floats(0.0, 1.0, allow_nan=False)
scores = st.tuples(probability, probability).map(lambda ec: Scores(ec[0], min(ec[1], 1.0 - ec[0])))


@settings(max_examples=200, deadline=None)
@given(
    first=st.lists(scores, min_size=1, max_size=12),
    then=st.lists(scores, min_size=12, max_size=12),
    band=st.floats(0.0, 0.5),
    tau=st.floats(0.05, 1.0),
    tau_c=st.floats(0.05, 1.0),
)
def test_the_cascade_never_changes_a_verdict_the_first_is_sure_of(
    first: list[Scores], then: list[Scores], band: float, tau: float, tau_c: float
) -> None:
    claims = [f"claim {n}" for n in range(len(first))]
    cascade = Cascade(
        TableOracle("a", dict(zip(claims, first, strict=False))),
        TableOracle("b", dict(zip(claims, then, strict=False))),
        band=band,
        threshold=tau,
        contradiction_threshold=tau_c,
    )
    out = cascade.score([("premise", c) for c in claims])
    for mine, got, other in zip(first, out, then, strict=False):
        if not cascade.unsure(mine):
            assert got.verifier == "a" and decide(got, tau, tau_c) == decide(mine, tau, tau_c)
        else:
            assert got.verifier == "b" and (got.entail, got.contra) == (other.entail, other.contra)
    assert cascade.escalated == sum(cascade.unsure(s) for s in first)


def test_the_eng_names_the_verifier_that_decided_each_claim() -> None:
    first = TableOracle(
        "first", {"Owls hunt at night.": Scores(0.95, 0.0), "Owls sing.": Scores(0.52, 0.0)}
    )
    cascade = Cascade(first, KeywordOracle(), band=0.1)
    engine = NecessityEngine(cascade)
    assert engine.threshold == 0.5 and cascade.name.startswith("cascade(first -> keyword-oracle")
    eng = engine.evaluate("Owls hunt at night. Owls sing.", ["Owls hunt at night."])
    sure, unsure = eng.claims
    assert sure.decided_by == "first" and sure.status == "supported"
    assert unsure.decided_by == "keyword-oracle" and unsure.status == "unsupported"
    assert eng.verifier.model == cascade.name


def test_band_zero_escalates_only_exact_ties_and_a_wide_band_everything() -> None:
    first = TableOracle("a", {"x": Scores(0.7, 0.1)})
    assert not Cascade(first, KeywordOracle(), band=0.0).unsure(Scores(0.7, 0.1))
    assert Cascade(first, KeywordOracle(), band=1.0).unsure(Scores(0.7, 0.1))
    with pytest.raises(ValueError):
        Cascade(first, KeywordOracle(), band=1.5)
