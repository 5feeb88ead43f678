"""How fast ``ene train-filter`` trains, and what the trained filter scores on held-out pairs.

    python benchmarks/filter_training.py                         # the settings below, 1 round
    python benchmarks/filter_training.py --rounds 2 --json out.json
    python benchmarks/filter_training.py --config "old:frozen_layers=0,threads=1" \\
        --config "head:tree=/tmp/head" --max-pairs 1000 --epochs 1

The pairs are the shipped filter's (``scripts/build_filter_data.py``, built into a temporary
folder unless ``--data`` names one; QNLI left out as for the shipped filter): 3,026 training pairs
(HotpotQA dev 0-47 and the hand-written necessity sets) and 440 held-out pairs (HotpotQA 48-59,
necessity_fresh4). Each configuration runs :func:`~ene_core.filtering.training.train_filter` in its
own process (torch's thread count is per process), the configurations in turn (interleaved
across ``--rounds``, so that a busy neighbour on a shared machine slows them alike).

Training pairs/s counts each pair once an epoch, over the time ``train_filter`` took less the
time it spent scoring (the held-out pairs after each epoch, the training pairs for the lexical
combination), calibrating and writing files: it includes loading the network, tokenising and
computing the frozen layers' outputs; loop pairs/s is the training steps' alone, as
``train_filter`` records it (not recorded before ``frozen_layers``). Held-out AUC is the written filter's (int8, lexical
combination) and the network's alone at the best epoch. A configuration is
``name:key=value,...`` with ``train_filter`` keywords, and ``tree=DIR`` to run the
``ene_core`` of another checkout (``git archive REV ene_core | tar -x -C DIR``: the code before
a change). Prints a table; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFIGS = [
    "every layer trained (the default):frozen_layers=0",
    "layer 0 frozen (--frozen-layers 1):frozen_layers=1",
    "every layer trained, 2 threads:frozen_layers=0,threads=2",
]

# Runs in a fresh process: train, time the parts that are not training, print one JSON line.
CHILD = r"""
import json, sys, time
spec = json.loads(sys.argv[1])
if spec.get("tree"):
    sys.path.insert(0, spec["tree"])
import ene_core.filtering.training as training
import torch, transformers.models.bert.modeling_bert  # imported before the clock starts
assert not spec.get("tree") or training.__file__.startswith(spec["tree"]), training.__file__
spent = {"other": 0.0}
def timed(fn):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent["other"] += time.perf_counter() - t
    return wrapper
for name in ("score_pairs", "save_delta", "fit_combiner", "pair_features", "calibrate", "keep_curve",
             "_quantized"):
    setattr(training, name, timed(getattr(training, name)))
train = training.read_pairs(spec["train"])
dev = training.read_pairs(spec["dev"])
train = [p for p in train if p.source != "qnli"][: spec["max_pairs"] or None]
targets = {"hotpot-iso": 0.98, "necessity_fresh4": 0.95}
started = time.perf_counter()
settings = training.train_filter(
    train, dev, spec["out"], epochs=spec["epochs"], targets=targets, log=lambda line: None,
    **spec["kwargs"],
)
wall = time.perf_counter() - started
t = settings.training
print(json.dumps({
    "train_pairs": len(train), "held_out_pairs": len(dev), "epochs": spec["epochs"],
    "threads": torch.get_num_threads(), "wall_s": wall, "train_s": wall - spent["other"],
    "pairs_per_s": len(train) * t["epochs"] / (wall - spent["other"]),
    "held_out_auc": t["held_out_auc"], "held_out_auc_network": t["held_out_auc_network"],
    "threshold": settings.threshold, "loop_pairs_per_s": t.get("pairs_per_second"),
}))
"""


def parse_config(text: str) -> tuple[str, dict, str | None]:
    name, _, rest = text.partition(":")
    kwargs: dict = {}
    tree = None
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key == "tree":
            tree = value
        else:
            kwargs[key] = json.loads(value)
    return name, kwargs, tree


def run_one(config: str, data: Path, epochs: int, max_pairs: int, work: Path) -> dict:
    name, kwargs, tree = parse_config(config)
    out = Path(tempfile.mkdtemp(dir=work))
    spec = {
        "train": str(data / "train.jsonl"),
        "dev": str(data / "dev.jsonl"),
        "out": str(out),
        "epochs": epochs,
        "max_pairs": max_pairs,
        "kwargs": kwargs,
        "tree": tree,
    }
    env = dict(os.environ, PYTHONPATH=tree or str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec)],
        env=env,
        cwd=str(work),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{name}: failed\n{done.stderr[-3000:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row["config"] = name
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a folder with train.jsonl and dev.jsonl (Pair rows)")
    parser.add_argument("--config", action="append", help="name:key=value,... (repeatable)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-pairs", type=int, default=0, help="the first N training pairs")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    configs = args.config or CONFIGS
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = Path(args.data) if args.data else work / "data"
        if not args.data:
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "build_filter_data.py"),
                    "--out",
                    str(data),
                ],
                check=True,
                capture_output=True,
            )
        print(
            "| configuration | round | threads | training pairs/s | s per 1,000 pairs | "
            "loop pairs/s | wall s (all) | held-out AUC (filter) | held-out AUC (network) | "
            "threshold |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
        rows = []
        for round_ in range(args.rounds):
            for config in configs:
                row = run_one(config, data, args.epochs, args.max_pairs, work)
                row["round"] = round_
                rows.append(row)
                print(
                    f"| {row['config']} | {row['round']} | {row['threads']} | "
                    f"{row['pairs_per_s']:.1f} | {1000 / row['pairs_per_s']:.1f} | "
                    f"{row['loop_pairs_per_s'] or '-'} | {row['wall_s']:.0f} | "
                    f"{row['held_out_auc']:.4f} | {row['held_out_auc_network']:.4f} | "
                    f"{row['threshold']:.3f} |",
                    flush=True,
                )
    first = rows[0]
    print(
        f"\n{first['train_pairs']} training pairs x {first['epochs']} epochs, "
        f"{first['held_out_pairs']} held-out pairs; {os.cpu_count()} CPUs on this machine"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
