"""Sanity checks of the shipped default verifier ``ene-nli-mini`` (not its evaluation).

The evaluation lives in ``benchmarks/eval_verifier.py``; these tests only check that the
packaged weights load offline, get a handful of obvious pairs right and are deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

MODEL_DIR = Path(__file__).resolve().parents[1] / "ene_core" / "models" / "ene-nli-mini"

OBVIOUS = [
    # (premise, hypothesis, expected label)
    (
        "The Eiffel Tower was completed in 1889 and is 330 metres tall.",
        "The Eiffel Tower was completed in 1889.",
        "entailment",
    ),
    (
        "A man in a blue shirt is riding a bicycle down the street.",
        "A man is riding a bicycle.",
        "entailment",
    ),
    (
        "The Eiffel Tower was completed in 1889 and is 330 metres tall.",
        "The Eiffel Tower is 500 metres tall.",
        "contradiction",
    ),
    (
        "The company reported revenue of 12 million dollars in 2019.",
        "The company reported revenue of 45 million dollars in 2019.",
        "contradiction",
    ),
    (
        "The Eiffel Tower was completed in 1889 and is 330 metres tall.",
        "The Eiffel Tower was designed by a committee of Italian architects.",
        "neutral",
    ),
]


@pytest.fixture(scope="module")
def model_and_tokenizer(device: str):  # type: ignore[no-untyped-def]
    if not (MODEL_DIR / "model.safetensors").exists():
        pytest.fail(f"the shipped model is missing: {MODEL_DIR}")
    tok = transformers.AutoTokenizer.from_pretrained(MODEL_DIR, local_files_only=True)
    model = (
        transformers.AutoModelForSequenceClassification.from_pretrained(
            MODEL_DIR, local_files_only=True
        )
        .float()
        .to(device)
        .eval()
    )
    return model, tok


def _probs(model, tok, premise: str, hypothesis: str):  # type: ignore[no-untyped-def]
    enc = tok(
        premise,
        hypothesis,
        truncation="only_first",
        max_length=model.config.ene_max_length,
        return_tensors="pt",
    ).to(model.device)
    with torch.inference_mode():
        return torch.softmax(model(**enc).logits.float(), dim=-1)[0].cpu()


def test_config_carries_the_engine_contract() -> None:
    cfg = json.loads((MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    assert {int(k): v for k, v in cfg["id2label"].items()} == {
        0: "entailment",
        1: "neutral",
        2: "contradiction",
    }
    assert 0.0 < cfg["ene_threshold"] < 1.0
    assert cfg["ene_max_length"] in range(64, 513)
    assert cfg.get("torch_dtype", cfg.get("dtype")) == "float16"
    assert (MODEL_DIR / "MODEL_CARD.md").exists()
    size_mb = (MODEL_DIR / "model.safetensors").stat().st_size / 2**20
    assert size_mb < 60


@pytest.mark.parametrize(("premise", "hypothesis", "expected"), OBVIOUS)
def test_obvious_pairs(
    model_and_tokenizer,
    premise: str,
    hypothesis: str,  # type: ignore[no-untyped-def]
    expected: str,
) -> None:
    model, tok = model_and_tokenizer
    p = _probs(model, tok, premise, hypothesis)
    assert model.config.id2label[int(p.argmax())] == expected, p.tolist()


def test_supported_rule_on_packed_premise(model_and_tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Evidence in the middle of a packed premise is found; removing it leaves no support."""
    model, tok = model_and_tokenizer
    tau = model.config.ene_threshold
    evidence = "Marie Curie won the Nobel Prize in Chemistry in 1911."
    others = [
        "Paris is the capital of France.",
        "The Seine flows through the city.",
        "Many tourists visit the Louvre every year.",
    ]
    claim = "Marie Curie won the Nobel Prize in Chemistry in 1911."
    with_it = _probs(model, tok, "\n".join([others[0], evidence, *others[1:]]), claim)
    without = _probs(model, tok, "\n".join(others), claim)
    assert with_it[0] >= tau and with_it[0] > with_it[2]
    assert not (without[0] >= tau and without[0] > without[2])


def test_deterministic(model_and_tokenizer) -> None:  # type: ignore[no-untyped-def]
    model, tok = model_and_tokenizer
    premise, hypothesis, _ = OBVIOUS[0]
    a = _probs(model, tok, premise, hypothesis)
    b = _probs(model, tok, premise, hypothesis)
    assert torch.equal(a, b)


def test_loads_through_nli_oracle(device: str) -> None:
    """``NLIOracle()`` with no argument loads this model, its τ, and gives the same verdicts."""
    ene_core = pytest.importorskip("ene_core")
    if not hasattr(ene_core, "NLIOracle"):
        pytest.skip("ene_core.NLIOracle is not there yet")
    from ene_core.verifiers.verdict import decide

    cfg = json.loads((MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    oracle = ene_core.NLIOracle(device=device)
    assert oracle.default_threshold == pytest.approx(cfg["ene_threshold"])
    assert oracle.max_length == cfg["ene_max_length"]
    scores = oracle.score([(p, h) for p, h, _ in OBVIOUS])
    verdicts = [decide(s, oracle.default_threshold) for s in scores]
    expected = {
        "entailment": "supported",
        "contradiction": "contradicted",
        "neutral": "unsupported",
    }
    assert verdicts == [expected[label] for _, _, label in OBVIOUS]
