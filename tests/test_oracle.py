"""The real NLIOracle code path on a tiny randomly initialised BERT (no downloads)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from ene_core import (  # noqa: E402
    LabelMappingError,
    ModelNotFoundError,
    NecessityEngine,
    NLIOracle,
)
from ene_core.oracle import label_indices  # noqa: E402
from ene_core.testing import make_tiny_nli_model  # noqa: E402

PAIRS = [
    ("The cat sat on the mat. " * (i % 7 + 1) + "Paris is the capital.", f"The cat sat {i}.")
    for i in range(40)
]


def test_scores_are_probabilities(tiny_model_dir: str) -> None:
    oracle = NLIOracle(tiny_model_dir, device="cpu")
    scores = oracle.score(PAIRS)
    assert len(scores) == len(PAIRS)
    assert all(
        0 <= s.entail <= 1 and 0 <= s.contra <= 1 and s.entail + s.contra <= 1 for s in scores
    )
    assert oracle.device.type == "cpu" and oracle.dtype == torch.float32
    assert oracle.revision and oracle.revision.startswith("sha256:")


def test_verdicts_do_not_depend_on_batch_neighbours(tiny_model_dir: str) -> None:
    oracle = NLIOracle(tiny_model_dir, device="cpu", batch_size=8)
    reference = oracle.score(PAIRS)
    rng = random.Random(7)
    for _ in range(3):
        order = list(range(len(PAIRS)))
        rng.shuffle(order)
        subset = order[: rng.randint(1, len(order))]
        shuffled = oracle.score([PAIRS[i] for i in subset])
        assert [reference[i] for i in subset] == shuffled  # bitwise equal
    assert [oracle.score([p])[0] for p in PAIRS[:5]] == reference[:5]


def test_truncation_is_recorded(tiny_model_dir: str) -> None:
    oracle = NLIOracle(tiny_model_dir, device="cpu", max_length=32)
    short, long = oracle.score(
        [("the cat sat.", "the cat sat."), ("the cat sat. " * 50, "the cat.")]
    )
    assert not short.truncated and long.truncated
    (huge_claim,) = oracle.score([("the cat sat.", "the cat sat on the mat. " * 40)])
    assert huge_claim.truncated


def test_engine_on_real_oracle_counts_and_cache(tiny_model_dir: str) -> None:
    engine = NecessityEngine(NLIOracle(tiny_model_dir), threshold=0.3)
    contexts = ["The cat sat on the mat.", "Paris is the capital of France.", "The tower is tall."]
    first = engine.evaluate("The cat sat on the mat. Paris is the capital.", contexts)
    second = engine.evaluate("The cat sat on the mat. Paris is the capital.", contexts)
    assert first.verdicts() == second.verdicts()
    stats = second.stats
    assert stats.forward_pairs == 0
    assert stats.cache_hits + stats.empty_premises == stats.oracle_checks
    assert first.verifier.model == tiny_model_dir
    assert first.contexts[0].tokens > 0


def test_two_way_model_maps_labels(tmp_path: Path) -> None:
    path = make_tiny_nli_model(
        str(tmp_path / "m2"), id2label={0: "not_entailment", 1: "entailment"}
    )
    oracle = NLIOracle(path)
    assert (oracle.entail_index, oracle.contra_index) == (1, None)
    assert all(s.contra == 0.0 for s in oracle.score(PAIRS[:3]))


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, (0, 2)),
        ({"0": "contradiction", "1": "entailment", "2": "neutral"}, (1, 0)),
        ({0: "entailment", 1: "not-entailment"}, (0, None)),
    ],
)
def test_label_spellings(labels: dict, expected: tuple) -> None:
    assert label_indices(labels) == expected


@pytest.mark.parametrize(
    "labels", [{0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, {0: "neutral", 1: "x"}]
)
def test_unmappable_labels_raise(labels: dict) -> None:
    with pytest.raises(LabelMappingError, match=r"config\.id2label"):
        label_indices(labels)


def test_unmappable_model_raises(tmp_path: Path) -> None:
    path = make_tiny_nli_model(str(tmp_path / "bad"), id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(LabelMappingError):
        NLIOracle(path)


def test_missing_models_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="never downloads"):
        NLIOracle("some-org/not-a-local-model")
    with pytest.raises(ModelNotFoundError, match=r"config\.json"):
        NLIOracle(tmp_path)


def test_threshold_comes_from_the_model_config(tmp_path: Path) -> None:
    path = Path(make_tiny_nli_model(str(tmp_path / "tau")))
    config = json.loads((path / "config.json").read_text())
    config["ene_threshold"] = 0.42
    (path / "config.json").write_text(json.dumps(config))
    assert NecessityEngine(NLIOracle(path)).threshold == 0.42
    assert NecessityEngine(NLIOracle(path), threshold=0.6).threshold == 0.6


def test_non_deterministic_mode_scores_the_same_pairs(tiny_model_dir: str) -> None:
    exact = NLIOracle(tiny_model_dir, device="cpu", batch_size=8).score(PAIRS)
    fast = NLIOracle(tiny_model_dir, device="cpu", batch_size=8, deterministic=False).score(PAIRS)
    assert len(fast) == len(exact)
    for a, b in zip(exact, fast, strict=True):
        assert abs(a.entail - b.entail) < 1e-4 and abs(a.contra - b.contra) < 1e-4
