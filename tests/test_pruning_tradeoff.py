"""benchmarks/pruning_tradeoff.py counts right and calibrates on dev (keyword oracle: plumbing)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Case 1: a contradicted claim (the 330-metre chunk) and a supported one; bananas are unused.
# Case 2: the keyword oracle misses "darkness" (entailment 0.27, tau 0.5): minimal pruning drops
# the owl chunk that claim 0 truly needs; bread is unused.
ROWS = [
    {
        "id": "c1",
        "answer": "The Eiffel Tower is 500 metres tall. Paris is the capital of France.",
        "chunks": [
            {"id": "t", "text": "The Eiffel Tower is 330 metres tall."},
            {"id": "b", "text": "Bananas are yellow."},
            {"id": "p", "text": "Paris is the capital of France."},
        ],
        "claims": [
            {"text": "The Eiffel Tower is 500 metres tall.", "status": "contradicted",
             "contradicted_by": ["t"]},
            {"text": "Paris is the capital of France.", "status": "supported", "necessary": ["p"]},
        ],
    },
    {
        "id": "c2",
        "answer": "Owls hunt in darkness. Cats purr.",
        "chunks": [
            {"id": "o", "text": "Owls hunt at night."},
            {"id": "c", "text": "Cats purr."},
            {"id": "x", "text": "Bread is baked."},
        ],
        "claims": [
            {"text": "Owls hunt in darkness.", "status": "supported", "necessary": ["o"]},
            {"text": "Cats purr.", "status": "supported", "necessary": ["c"]},
        ],
    },
]  # fmt: skip


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(ROOT / "benchmarks"))  # it imports necessity_dev
    spec = importlib.util.spec_from_file_location(
        "pruning_tradeoff", ROOT / "benchmarks" / "pruning_tradeoff.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["pruning_tradeoff"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_policies_and_calibration_with_the_keyword_oracle(
    bench: ModuleType, tmp_path: Path
) -> None:
    dev, out = tmp_path / "dev.jsonl", tmp_path / "out.json"
    dev.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    args = ["--dev", str(dev), "--sets", "dev", "--oracle", "keyword", "--json", str(out)]
    assert bench.main([*args, "--calibrate", "--z", "0", "--engs", str(tmp_path / "g")]) == 0
    result = json.loads(out.read_text())
    calibration = result["calibration"]
    assert calibration["goal_met"] and sum(calibration["margins"].values()) == 0.25
    rows = result["sets"]["dev"]["policies"]
    assert rows["safe"] == {
        "safety": 1.0,
        "unused_dropped": 1.0,
        "tokens_saved": pytest.approx(6 / 25),  # bananas and bread: 3 + 3 of 25 words
        "contradicting_kept": 1.0,
    }
    assert rows["minimal"]["safety"] == pytest.approx(2 / 3)
    assert rows["minimal"]["contradicting_kept"] == 0.0
    assert rows["cited"]["unused_dropped"] == 0.0  # no citations: nothing pruned
    # the graphs are reused from --engs; the default margins are the module's constants
    assert bench.main([*args, "--engs", str(tmp_path / "g")]) == 0
    again = json.loads(out.read_text())
    assert again["sets"]["dev"]["seconds"] is None and "calibration" not in again


def test_wilson_lower_bound(bench: ModuleType) -> None:
    assert bench.wilson_low(0, 0, 1.96) == 0.0
    assert bench.wilson_low(10, 10, 0.0) == 1.0
    assert bench.wilson_low(183, 186, 1.96) == pytest.approx(0.954, abs=1e-3)
