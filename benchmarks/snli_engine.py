"""NLI pairs through the engine: every hypothesis an answer, its premise the one context.

    python benchmarks/snli_engine.py [--data PATH] [--model PATH] [--limit N] [--show-unchecked]

Each pair's hypothesis is evaluated as an answer (no question) against its premise as the only
context, exactly as a user's answer would be. The engine's verdict for the pair: *entailment* when
every checked claim is supported, *contradiction* when any is contradicted, else *neutral*. A
hypothesis with no checked claim at all ("answer has no checkable claims") gets no verdict and is
counted wrong: an answer that goes unchecked is the fail-open case this benchmark exists to catch.

Default data: the SNLI test subset of ``../shared/data/nli/snli_test_subset.jsonl`` (1,254 pairs;
evaluation only). Prints the 3-way accuracy with unchecked pairs counted wrong, the accuracy on
the checked pairs alone, and how many pairs were unchecked. CPU, offline.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ene_core import EvidenceNecessityGraph, NecessityEngine, NLIOracle

HERE = Path(__file__).resolve().parent
SNLI = Path(os.environ.get("ENE_SNLI", HERE.parents[1] / "shared/data/nli/snli_test_subset.jsonl"))
LABELS = ("entailment", "neutral", "contradiction")


def load_pairs(path: Path, limit: int | None = None) -> list[dict[str, str]]:
    """The pairs of a ``{"premise", "hypothesis", "label"}`` JSONL file with a 3-way label."""
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("label") in LABELS:
            pairs.append(row)
    return pairs[:limit] if limit else pairs


def verdict(eng: EvidenceNecessityGraph) -> str | None:
    """The engine's 3-way verdict for one pair, ``None`` when nothing was checked."""
    claims = [c for c in eng.claims if c.checkable]
    if not claims:
        return None
    if any(c.status == "contradicted" for c in claims):
        return "contradiction"
    if all(c.status == "supported" for c in claims):
        return "entailment"
    return "neutral"


def evaluate(engine: NecessityEngine, pairs: Sequence[dict[str, str]]) -> dict[str, Any]:
    """Every pair through ``engine``; accuracy (unchecked counted wrong) and the unchecked."""
    requests = [{"answer": p["hypothesis"], "contexts": [p["premise"]]} for p in pairs]
    started = time.perf_counter()
    engs = engine.evaluate_many(requests)
    seconds = time.perf_counter() - started
    predicted = [verdict(e) for e in engs]
    right = sum(p == pair["label"] for p, pair in zip(predicted, pairs, strict=True))
    unchecked = [pair["hypothesis"] for p, pair in zip(predicted, pairs, strict=True) if p is None]
    checked = len(pairs) - len(unchecked)
    confusion = Counter(
        (pair["label"], p or "unchecked") for p, pair in zip(predicted, pairs, strict=True)
    )
    return {
        "confusion": confusion,
        "pairs": len(pairs),
        "accuracy": right / len(pairs),
        "accuracy_checked": right / checked if checked else 0.0,
        "unchecked": len(unchecked),
        "unchecked_examples": unchecked,
        "seconds": seconds,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(SNLI), help="NLI pairs JSONL (SNLI test subset)")
    parser.add_argument("--model", help="NLI model directory (default: the shipped verifier)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--limit", type=int, help="only the first N pairs")
    parser.add_argument("--show-unchecked", action="store_true", help="list unchecked hypotheses")
    args = parser.parse_args(argv)
    path = Path(args.data)
    if not path.exists():
        print(f"no data at {path}: skipped", file=sys.stderr)
        return {}
    pairs = load_pairs(path, args.limit)
    engine = NecessityEngine(NLIOracle(args.model, device=args.device))
    result = evaluate(engine, pairs)
    engine.close()
    print(
        f"{path.name}: {result['pairs']} pairs through the engine; accuracy "
        f"{result['accuracy']:.3f} (unchecked counted wrong), {result['accuracy_checked']:.3f} "
        f"on the checked pairs; {result['unchecked']} unchecked; {result['seconds']:.0f} s"
    )
    columns = (*LABELS, "unchecked")
    print("| gold \\ engine | " + " | ".join(columns) + " |\n|---|" + "---:|" * len(columns))
    for gold in LABELS:
        cells = " | ".join(str(result["confusion"][(gold, p)]) for p in columns)
        print(f"| {gold} | {cells} |")
    if args.show_unchecked:
        for text in result["unchecked_examples"]:
            print(f"  unchecked: {text}")
    return result


if __name__ == "__main__":
    main()
