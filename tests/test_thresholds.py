"""The entailment threshold τ and the separate contradiction threshold."""

from __future__ import annotations

import json

import pytest

from ene_core import EvidenceNecessityGraph, NecessityEngine
from ene_core.errors import InvalidInputError
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores
from ene_core.verifiers.verdict import decide


@pytest.mark.parametrize(
    ("entail", "contra", "tau", "tau_c", "verdict"),
    [
        (0.6, 0.1, 0.5, None, "supported"),
        (0.1, 0.45, 0.4, None, "contradicted"),  # τ_c defaults to τ
        (0.1, 0.45, 0.4, 0.5, "unsupported"),  # stricter τ_c: unsure is unsupported
        (0.1, 0.55, 0.4, 0.5, "contradicted"),
        (0.3, 0.35, 0.6, 0.3, "contradicted"),
        (0.35, 0.35, 0.3, 0.3, "unsupported"),  # a tie is never a verdict
    ],
)
def test_decide(
    entail: float, contra: float, tau: float, tau_c: float | None, verdict: str
) -> None:
    assert decide(Scores(entail, contra), tau, tau_c) == verdict


class _Calibrated(KeywordOracle):
    default_threshold = 0.4
    default_contradiction_threshold = 0.95  # stricter than the keyword oracle's 0.9


ANSWER = "The library opened in 1990."
CONTEXTS = ["The library opened in 1987 after a long campaign."]


def test_engine_uses_the_models_contradiction_threshold() -> None:
    # the model's verdicts alone: with the amount check the evidence's 1987 contradicts 1990
    engine = NecessityEngine(_Calibrated(), check_amounts=False)
    try:
        assert (engine.threshold, engine.contradiction_threshold) == (0.4, 0.95)
        eng = engine.evaluate(ANSWER, CONTEXTS)
        # p_contra 0.9 < 0.95: not contradicted, so fail-closed unsupported
        assert eng.claims[0].status == "unsupported"
        assert eng.verifier.contradiction_threshold == 0.95
    finally:
        engine.close()


def test_an_explicit_threshold_replaces_both_calibrated_values() -> None:
    engine = NecessityEngine(_Calibrated(), threshold=0.5)
    try:
        assert engine.contradiction_threshold == 0.5
        assert engine.evaluate(ANSWER, CONTEXTS).claims[0].status == "contradicted"
    finally:
        engine.close()
    engine = NecessityEngine(_Calibrated(), threshold=0.5, contradiction_threshold=0.6)
    try:
        assert engine.contradiction_threshold == 0.6
    finally:
        engine.close()
    with pytest.raises(InvalidInputError, match="contradiction_threshold"):
        NecessityEngine(KeywordOracle(), contradiction_threshold=1.5)


def test_eng_without_contradiction_threshold_still_loads() -> None:
    engine = NecessityEngine(KeywordOracle())
    try:
        data = json.loads(engine.evaluate(ANSWER, CONTEXTS).to_json())
    finally:
        engine.close()
    assert data["verifier"]["contradiction_threshold"] == 0.5
    del data["verifier"]["contradiction_threshold"]
    old = EvidenceNecessityGraph.from_json(json.dumps(data))
    assert old.verifier.contradiction_threshold is None
