"""Copy the recipe's built pairs with fewer one-span-swap contradictions::

    python scripts/thin_swaps.py --pairs runs/data --out runs/data_thin --contra-share 0.33

In the recipe's train split, a hypothesis that copies a premise sentence with one span of at most
three tokens replaced (``audit_cues.swapped_span``) is labelled contradiction in 60 % of its
19,567 pairs (breaking_nli, ConjNLI, the generators' ``swap`` rules), against 21 % overall. The
twins of ``build_swap_mix.py`` add the other label beside them; this drops contradictions of that
form, chosen at random, until they make up ``--contra-share`` of the form's pairs, so that a
continuation anchored to an earlier model on the recipe's rows (``--anchor``) no longer holds it
to the cue on them either. Every other pair, and the dev split, is copied unchanged.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit_cues import swapped_span
from build_nli_data import read_jsonl_gz, write_jsonl_gz
from synth_nli import CONTRADICTION, Pair


def thinned(pairs: Sequence[Pair], contra_share: float, rng: random.Random) -> list[Pair]:
    """``pairs`` in order, less the swap-form contradictions beyond ``contra_share`` of the
    swap-form pairs that remain."""
    swapped = [i for i, p in enumerate(pairs) if swapped_span(p) is not None]
    contra = [i for i in swapped if pairs[i].label == CONTRADICTION]
    others = len(swapped) - len(contra)
    keep = min(len(contra), int(contra_share * others / (1 - contra_share)))
    dropped = set(contra) - set(rng.sample(contra, keep))
    return [p for i, p in enumerate(pairs) if i not in dropped]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, required=True, help="the recipe's built pairs")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--contra-share", type=float, default=0.33)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    if not 0 <= args.contra_share < 1:
        ap.error("--contra-share must be in [0, 1)")
    train = read_jsonl_gz(args.pairs / "train.jsonl.gz")
    kept = thinned(train, args.contra_share, random.Random(args.seed))
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl_gz(kept, args.out / "train.jsonl.gz")
    for name in ("dev.jsonl.gz", "extra.jsonl.gz"):
        if (args.pairs / name).exists():
            shutil.copyfile(args.pairs / name, args.out / name)
    gone = Counter(p.source.split(":")[0] for p in train) - Counter(
        p.source.split(":")[0] for p in kept
    )
    print(f"train: {len(train)} -> {len(kept)} pairs; dropped by source: {dict(gone)}")


if __name__ == "__main__":
    main()
