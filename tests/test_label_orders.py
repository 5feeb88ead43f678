"""Verdicts follow the verifier: tiny NLI heads with the label orders of the public models
(entailment at index 0, 1 or 2; upper-case names; 2-label heads) whose bias makes one label win
every pair; the engine's verdict must be that label's, whatever the order."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core import NecessityEngine, NLIOracle
from ene_core.testing import make_tiny_nli_model

# the label orders of public NLI / grounding models
ORDERS = {
    "entailment first (MoritzLaurer DeBERTa-v3 NLI)": ["entailment", "neutral", "contradiction"],
    "entailment second (cross-encoder/nli-deberta-v3)": ["contradiction", "entailment", "neutral"],
    "entailment last, upper case (roberta-large-mnli)": ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"],
    "entailment last (facebook/bart-large-mnli)": ["contradiction", "neutral", "entailment"],
    "2 labels (entailment / not_entailment)": ["entailment", "not_entailment"],
    "2 labels, supported first": ["SUPPORTED", "UNSUPPORTED"],
    "2 labels, supported second (grounding heads)": ["unsupported", "supported"],
}
VERDICT = {
    "entailment": "supported",
    "supported": "supported",
    "contradiction": "contradicted",
    "neutral": "unsupported",
    "not_entailment": "unsupported",
    "unsupported": "unsupported",
}
CASES = [(name, i) for name, labels in ORDERS.items() for i in range(len(labels))]
ANSWER = "The museum opens at nine."
CONTEXTS = ["The museum opens at nine on weekdays.", "Tickets cost five euros."]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("orders"))


@pytest.mark.parametrize(("order", "winner"), CASES)
def test_the_verdict_is_the_winning_label(root: str, order: str, winner: int) -> None:
    labels = ORDERS[order]
    path = make_tiny_nli_model(
        f"{root}/{abs(hash(order))}-{winner}",
        id2label=dict(enumerate(labels)),
        favour=winner,
    )
    oracle = NLIOracle(path)
    engine = NecessityEngine(oracle)
    assert engine.rules == frozenset()  # not the embedded model: its rules are off
    eng = engine.evaluate(ANSWER, CONTEXTS)
    expected = VERDICT[labels[winner].lower()]
    claim = eng.claims[0]
    assert claim.status == expected, (order, labels[winner], claim.p_entail, claim.p_contra)
    if expected == "supported":
        assert claim.p_entail > 0.9
    if expected == "contradicted":
        assert claim.p_contra > 0.9 and claim.contradicted_by
