"""The weight soup (scripts/soup.py): a weighted mean of two checkpoints, with the thresholds of
the one asked for."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from safetensors.torch import load_file, save_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from soup import soup  # noqa: E402


def _model(folder: Path, fill: float, tau: float, tau_c: float) -> Path:
    folder.mkdir()
    weights = {"a.weight": torch.full((3, 2), fill), "b.bias": torch.arange(4.0) * fill}
    save_file(weights, str(folder / "model.safetensors"))
    config = {"ene_threshold": tau, "ene_contradiction_threshold": tau_c, "hidden_size": 2}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text(json.dumps({"owner": folder.name}))
    return folder


@pytest.mark.parametrize("thresholds", ["a", "b"])
def test_soup_is_the_weighted_mean_with_the_chosen_thresholds(
    tmp_path: Path, thresholds: str
) -> None:
    a = _model(tmp_path / "a", 1.0, 0.31, 0.39)
    b = _model(tmp_path / "b", 3.0, 0.33, 0.30)
    out = tmp_path / "out"
    soup(a, b, 0.25, out, thresholds)
    mixed = load_file(str(out / "model.safetensors"))
    assert mixed["a.weight"].dtype == torch.float16
    assert torch.allclose(mixed["a.weight"].float(), torch.full((3, 2), 1.5))
    assert torch.allclose(mixed["b.bias"].float(), torch.arange(4.0) * 1.5)
    config = json.loads((out / "config.json").read_text())
    want = (0.31, 0.39) if thresholds == "a" else (0.33, 0.30)
    assert (config["ene_threshold"], config["ene_contradiction_threshold"]) == want
    assert config["hidden_size"] == 2
    assert json.loads((out / "tokenizer.json").read_text()) == {"owner": "b"}


def test_soup_refuses_two_architectures(tmp_path: Path) -> None:
    a = _model(tmp_path / "a", 1.0, 0.31, 0.39)
    b = tmp_path / "b"
    b.mkdir()
    save_file({"a.weight": torch.zeros(2, 2)}, str(b / "model.safetensors"))
    with pytest.raises(SystemExit, match="one architecture"):
        soup(a, b, 0.5, tmp_path / "out")
