"""Average the weights of two fine-tuned verifiers of one architecture (a "model soup").

    python scripts/soup.py --a ene_core/models/ene-nli-mini --b runs/v3/model \\
        --weight-b 0.5 --out runs/soup50

Writes ``(1 - w) * a + w * b`` in fp16 with ``b``'s tokenizer and config, thresholds included
(recalibrate on dev), or ``a``'s thresholds with ``--thresholds a`` (to compare soups at fixed
ones). Both models must share every parameter name and shape.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

THRESHOLDS = ("ene_threshold", "ene_contradiction_threshold")


def soup(a: Path, b: Path, weight_b: float, out: Path, thresholds: str = "b") -> None:
    wa, wb = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    if wa.keys() != wb.keys() or any(wa[k].shape != wb[k].shape for k in wa):
        raise SystemExit(f"{a} and {b} do not share one architecture")
    mixed = {
        k: ((1 - weight_b) * wa[k].float() + weight_b * wb[k].float()).to(torch.float16)
        for k in sorted(wa)
    }
    out.mkdir(parents=True, exist_ok=True)
    for f in b.iterdir():
        if f.is_file() and f.name != "model.safetensors":
            shutil.copy2(f, out / f.name)
    save_file(mixed, str(out / "model.safetensors"), metadata={"format": "pt"})
    if thresholds == "a":
        config = json.loads((out / "config.json").read_text())
        own = json.loads((a / "config.json").read_text())
        config.update({k: own[k] for k in THRESHOLDS if k in own})
        (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", type=Path, required=True)
    ap.add_argument("--b", type=Path, required=True)
    ap.add_argument("--weight-b", type=float, default=0.5)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--thresholds", choices=("a", "b"), default="b", help="whose τ and τ_c to keep")
    args = ap.parse_args()
    soup(args.a, args.b, args.weight_b, args.out, args.thresholds)


if __name__ == "__main__":
    main()
