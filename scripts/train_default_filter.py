"""Train the default chunk filter shipped in ``ene_core/models/chunk-filter`` (issue 55).

    python scripts/build_filter_data.py --out /tmp/filter_data
    nohup python scripts/train_default_filter.py --data /tmp/filter_data --out /tmp/cf-run \
        > /tmp/cf-run.log 2>&1 &
    # then copy filter.json and delta.safetensors into ene_core/models/chunk-filter/

One thread, the CPU, minutes. The threshold is calibrated on the held-out pairs only
(HotpotQA 48-59 and necessity_fresh4; see build_filter_data.py): the highest one that keeps
``--target-kept`` of their needed chunks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ene_core.filtering.training import read_pairs, train_filter  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="/tmp/filter_data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--target-kept", type=float, default=0.97)
    parser.add_argument("--max-steps", type=int, default=None)
    args = parser.parse_args()
    data = Path(args.data)
    train_filter(
        read_pairs(data / "train.jsonl"),
        read_pairs(data / "dev.jsonl"),
        args.out,
        num_layers=args.layers,
        max_length=args.max_length,
        epochs=args.epochs,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        target_kept=args.target_kept,
        max_steps=args.max_steps,
        log=lambda line: print(line, flush=True),
    )


if __name__ == "__main__":
    main()
