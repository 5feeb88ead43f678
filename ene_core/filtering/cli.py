"""``ene train-filter ENGS.jsonl --out DIR``: train a chunk filter from logged ENGs.

``ene_core/cli/commands.py`` registers the subcommand with :func:`add_arguments` and :func:`run`;
``python -m ene_core.filtering.cli ENGS.jsonl --out DIR`` runs the same command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import EneError

HELP = "train a chunk filter (pre-generation pruning) from logged ENGs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ene train-filter``."""
    parser.add_argument("engs", nargs="+", help="ENG JSONL files (ene eval output)")
    parser.add_argument("--out", required=True, help="the filter directory to write")
    parser.add_argument("--base", default="ene-nli-mini", help="the encoder to start from")
    parser.add_argument("--layers", type=int, default=2, help="encoder layers kept (1-6)")
    parser.add_argument("--max-length", type=int, default=128, help="tokens per pair")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--held-out", type=float, default=0.1, help="share of requests held out")
    parser.add_argument(
        "--target-kept",
        type=float,
        default=0.97,
        help="the threshold keeps this share of the held-out requests' needed chunks",
    )
    parser.add_argument(
        "--no-lexical",
        action="store_true",
        help="score with the network alone (no BM25 / coverage combination)",
    )
    parser.add_argument("--min-keep", type=int, default=1)
    parser.add_argument("--max-keep", type=int, default=None)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (0: the cores available); the same count gives the same weights",
    )
    parser.add_argument(
        "--frozen-layers",
        type=int,
        default=0,
        help="encoder layers kept frozen, their output computed once a pair (0 to --layers - 1): "
        "faster, a worse filter (docs/chunk-filter.md)",
    )
    parser.add_argument(
        "--feature-cache-mb",
        type=int,
        default=2048,
        help="memory for the frozen layers' outputs (about 1.5 KB a token); above it they are "
        "recomputed each batch",
    )
    parser.add_argument("--checkpoint-every", type=int, default=200, help="steps")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    """Read the ENGs, split by request, train, calibrate, write ``--out``. Returns 0."""
    from .labels import pairs_from_engs, read_engs
    from .training import split_groups, train_filter

    if not 0 <= args.frozen_layers < args.layers:
        raise EneError(f"--frozen-layers must be 0 to {args.layers - 1} (--layers {args.layers})")

    def engs():
        for path in args.engs:
            if not Path(path).exists():
                raise EneError(f"{path}: no such file")
            yield from read_engs(path)

    pairs, counts = pairs_from_engs(engs())
    print(", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "no ENGs", flush=True)
    if not pairs or not any(p.label for p in pairs) or all(p.label for p in pairs):
        raise EneError("the ENGs give no needed and not-needed chunks to learn from")
    train, held_out = split_groups(pairs, args.held_out, args.seed)
    if not train:
        raise EneError("every request fell in the held-out split: lower --held-out")
    print(f"{len(train)} training pairs, {len(held_out)} held out", flush=True)
    settings = train_filter(
        train,
        held_out,
        args.out,
        base=args.base,
        num_layers=args.layers,
        max_length=args.max_length,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        threads=args.threads,
        frozen_layers=args.frozen_layers,
        feature_cache_mb=args.feature_cache_mb,
        seed=args.seed,
        target_kept=args.target_kept,
        min_keep=args.min_keep,
        max_keep=args.max_keep,
        checkpoint_every=args.checkpoint_every,
        max_steps=args.max_steps,
        lexical=not args.no_lexical,
        log=lambda line: print(line, flush=True),
    )
    print(f"threshold {settings.threshold:.3f}; load it with ChunkFilter({str(args.out)!r})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ene train-filter", description=HELP)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except EneError as exc:
        print(f"ene train-filter: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
