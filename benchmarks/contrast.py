"""Score the engine on the contrast dev set (``benchmarks/data/contrast_dev.jsonl``)::

    python benchmarks/contrast.py [--model PATH] [--raw-quantities] [--json OUT]

Each item is one claim against one to three chunks, of one kind: *negation* (the claim says
with a negation what a chunk says with a privative word, antonym, bound or quantifier, and
twins), *quantity* (the same amount written another way, and a different one), *binding* (two
parallel facts about different entities: the claim gives one entity the other's value, or the
right one) and *control* (plain supported, unsupported and contradicted claims). Prints the
share of claims whose status (supported / contradicted / unsupported) is right, overall and
per kind. It is a dev set: tune on it, and report the sealed sets separately.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from ene_core import NecessityEngine, NLIOracle, PremisePacker

DATA = Path(__file__).resolve().parent / "data" / "contrast_dev.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="model dir (default: the shipped verifier)")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--raw-quantities", action="store_true", help="amounts as written (no alignment)"
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="print every wrong item")
    args = ap.parse_args()
    items = [
        json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line
    ]
    engine = NecessityEngine(
        oracle=NLIOracle(args.model) if args.model else None,
        packer=PremisePacker(align_quantities=not args.raw_quantities),
    )
    requests = [{"answer": it["claim"], "contexts": it["chunks"], "id": it["id"]} for it in items]
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for it, eng in zip(items, engine.evaluate_many(requests), strict=False):
        claim = next(c for c in eng.claims if c.status is not None)
        ok = claim.status == it["status"]
        total[it["kind"]] += 1
        right[it["kind"]] += ok
        if args.verbose and not ok:
            print(f"  {it['id']}: {claim.status} (gold {it['status']}) {it['claim']}")
    rows = {k: right[k] / total[k] for k in sorted(total)}
    rows["overall"] = sum(right.values()) / sum(total.values())
    print("| kind | items | right |\n|---|---|---|")
    for k in [*sorted(total), "overall"]:
        n = total[k] if k != "overall" else sum(total.values())
        print(f"| {k} | {n} | {rows[k]:.3f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
