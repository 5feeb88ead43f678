"""Train the default chunk filter shipped in ``ene_core/models/chunk-filter`` (issue 55).

    python scripts/build_filter_data.py --out /tmp/filter_data
    nohup python scripts/train_default_filter.py --data /tmp/filter_data --out /tmp/cf-run \
        --no-qnli --epochs 4 --lr 2e-4 \
        > /tmp/cf-run.log 2>&1 &
    # then copy filter.json and delta.safetensors into ene_core/models/chunk-filter/

One thread, the CPU, minutes. The shipped filter was trained without the QNLI pairs
(``--no-qnli``: on the held-out pairs they made it worse, combined AUC 0.794 against 0.837). The
threshold is calibrated on the held-out pairs only (HotpotQA 48-59 and necessity_fresh4; see
build_filter_data.py): the highest one that keeps :data:`TARGETS` of their needed chunks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ene_core.filtering.training import read_pairs, train_filter  # noqa: E402

# The held-out sets that mirror issue 55's acceptance sets, and the share of needed chunks each
# must keep: a needed passage among passages of other questions (kept for >= 0.98 of them) and
# hand-written RAG cases with same-topic distractors (>= 0.95). HotpotQA 48-59 with all ten
# paragraphs is measured but not a constraint (see docs/chunk-filter.md).
TARGETS = {"hotpot-iso": 0.98, "necessity_fresh4": 0.95}


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
    parser.add_argument("--no-qnli", action="store_true", help="leave the QNLI pairs out")
    args = parser.parse_args()
    data = Path(args.data)
    train = read_pairs(data / "train.jsonl")
    if args.no_qnli:
        train = [p for p in train if p.source != "qnli"]
    train_filter(
        train,
        read_pairs(data / "dev.jsonl"),
        args.out,
        num_layers=args.layers,
        max_length=args.max_length,
        epochs=args.epochs,
        learning_rate=args.lr,
        batch_size=args.batch_size,
        target_kept=args.target_kept,
        targets=TARGETS,
        max_steps=args.max_steps,
        log=lambda line: print(line, flush=True),
    )


if __name__ == "__main__":
    main()
