"""How many rows the model reads, and what for: the table in docs/benchmarks.md ("Model rows").

    OMP_NUM_THREADS=1 python benchmarks/row_cost.py [--sets dev fresh ... test] [--json OUT]
        [--memo FILE] [--rules SPEC] [--limit N]

For each necessity set (``benchmarks/data/necessity_<set>.jsonl``; default: the five dev sets,
the two held-out fresh sets and the sealed test) it runs the shipped engine (its default rules)
with a fresh score cache and prints

* ``rows``: the pairs the verifier was handed (counted in the oracle's ``score_parts``), beside
  ``Σ stats.forward_pairs`` of the ENGs (the two must agree) and the naive loop, each claim
  against all chunks joined and then each chunk left out: ``Σ (1 + N)`` over the checked claims;
* the rows by purpose: each round of the plan says what its checks are for
  (:class:`~ene_core.engine.scoring.Checks`); a row the oracle reads is charged to the first
  check of its round that asks for it (a pair asked twice, or already in the cache, costs
  nothing), the second reading of a premise, as its leading sentences, to ``focus (<purpose>)``;
* claim-status accuracy and necessity F1 (``benchmarks/necessity_dev.py``).

The verifier's scores are kept in ``--memo`` (pairs by premise pieces and claim; the CPU pass
is batch-invariant, so a kept score is the one a fresh call computes): a rerun scores only the
pairs it has not seen, while the engine still sends, and this script still counts, every row.
CPU, offline.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import necessity_dev  # noqa: E402

from ene_core import NecessityEngine, NLIOracle  # noqa: E402
from ene_core.engine.scoring import Check, _Tally  # noqa: E402
from ene_core.verifiers.protocol import Scores  # noqa: E402

DEV = ["dev", "fresh", "fresh2", "fresh3", "fresh4"]
HELD_OUT = ["fresh5", "fresh6"]
TEST = ["test"]
FOCUS = "focus"  # a premise's second reading, as its leading sentences


class MemoOracle(NLIOracle):
    """The shipped verifier, counting the rows it is handed (by purpose) and keeping their
    scores."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.memo: dict[tuple[tuple[str, ...], str], Scores] = {}
        self.rows = 0
        self.labels: dict[tuple[tuple[str, ...], str], str] = {}  # this round's: pair -> purpose
        self.purposes: Counter[str] = Counter()

    def score_parts(
        self,
        pairs: Sequence[tuple[Sequence[str], str]],
        on_scored: Callable[[list[int], list[Scores]], None] | None = None,
    ) -> list[Scores]:
        self.rows += len(pairs)
        keys = [(tuple(parts), claim) for parts, claim in pairs]
        self.purposes.update(self.labels.get(k, "untagged") for k in keys)
        todo = sorted({k for k in keys if k not in self.memo})
        for key, value in zip(todo, super().score_parts(todo), strict=True):
            self.memo[key] = value
        out = [self.memo[k] for k in keys]
        if on_scored is not None:
            on_scored(list(range(len(out))), out)
        return out


class RowEngine(NecessityEngine):
    """The engine, telling its oracle what each pair of a round is for: the purpose of the first
    check that asks for it (a premise's second reading: ``focus (<purpose>)``)."""

    oracle: MemoOracle

    def _score_round(
        self, asks: Mapping[int, list[Check]], tallies: list[_Tally]
    ) -> Iterator[tuple[int, list[Scores]]]:
        labels = self.oracle.labels
        labels.clear()
        for checks in asks.values():
            sections = getattr(checks, "sections", ()) or (("untagged", len(checks)),)
            purposes = [purpose for purpose, count in sections for _ in range(count)]
            for (premise, claim), purpose in zip(checks, purposes, strict=True):
                labels.setdefault((premise.parts or (premise.text,), claim), purpose)
                if premise.focus:
                    labels.setdefault((premise.focus, claim), f"{FOCUS} ({purpose})")
        yield from super()._score_round(asks, tallies)


def measure(oracle: MemoOracle, cases: list[Any], rules: str | None) -> dict[str, Any]:
    engine = RowEngine(oracle, rules=rules)
    before = oracle.rows
    oracle.purposes.clear()
    try:
        result = necessity_dev.evaluate(engine, cases)
    finally:
        engine.close()
    overall = result["overall"]
    return {
        "answers": len(cases),
        "claims": overall["claims"],
        "rows": oracle.rows - before,
        "forward_pairs": result["forward_pairs"],
        "naive": sum(len(c.claims) * (1 + len(c.chunks)) for c in cases),
        "status": overall["status_accuracy"],
        "f1": overall["necessity_f1"],
        "purposes": dict(oracle.purposes.most_common()),
        "verdicts": [[c["predicted"], c["necessary"], c["p_entail"]] for c in result["claims"]],
    }


def report(results: Mapping[str, dict[str, Any]]) -> str:
    lines = [
        "| set | answers | claims | model rows | Σ forward_pairs | naive Σ(1+N) | rows / naive "
        "| claim status | necessity F1 |",
        "|---|" + "---:|" * 8,
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['answers']} | {r['claims']} | {r['rows']:,} | {r['forward_pairs']:,} "
            f"| {r['naive']:,} | {r['rows'] / r['naive']:.2f} | {r['status']:.3f} "
            f"| {r['f1']:.3f} |"
        )
    purposes = sorted(
        {p for r in results.values() for p in r["purposes"]},
        key=lambda p: -sum(r["purposes"].get(p, 0) for r in results.values()),
    )
    lines += ["", "| rows for | " + " | ".join(results) + " |", "|---|" + "---:|" * len(results)]
    for p in purposes:
        cells = " | ".join(f"{r['purposes'].get(p, 0):,}" for r in results.values())
        lines.append(f"| {p} | {cells} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", default=DEV + HELD_OUT + TEST)
    parser.add_argument("--rules", help="a --rules spec (default: the verifier's own)")
    parser.add_argument("--limit", type=int, help="only the first N answers of each set")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    parser.add_argument(
        "--memo", default="/tmp/ene_row_cost_memo.pkl", help="kept scores ('' : none)"
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    memo_path = Path(args.memo) if args.memo else None
    kept = (
        pickle.loads(memo_path.read_bytes()) if memo_path is not None and memo_path.exists() else {}
    )
    oracle = MemoOracle()
    oracle.memo = kept.setdefault((oracle.name, oracle.revision), {})  # one verifier's scores
    results = {}
    try:
        for name in args.sets:
            cases = necessity_dev.load_cases(HERE / "data" / f"necessity_{name}.jsonl")
            results[name] = measure(oracle, cases[: args.limit], args.rules)
            print(f"{name}: {results[name]['rows']} rows", file=sys.stderr, flush=True)
    finally:
        if memo_path is not None:
            memo_path.write_bytes(pickle.dumps(kept))
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
