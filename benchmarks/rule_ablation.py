"""Each engine rule switched off alone, with the shipped verifier: the table in docs/benchmarks.md.

    OMP_NUM_THREADS=1 python benchmarks/rule_ablation.py [--model PATH] [--json OUT] [--limit N]

Configurations: every rule, each rule of :data:`ene_core.verifiers.protocol.RULES` off alone, no
rule, and then the rules that pay on the sealed test together (the issue's rule for the embedded
model's default: a rule stays on only where switching it off alone lowers the sealed test's
claim status; a tie does not pay). Each runs once on

* the seven necessity dev sets together (``necessity_dev.jsonl`` and ``necessity_fresh*.jsonl``;
  1,464 claims): claim-status accuracy, necessity F1, supported claims called contradicted,
  contradicted claims found;
* the sealed test set (``necessity_test.jsonl``; reported, never used to choose, except by the
  issue's rule: a rule stays on by default only where it pays there);
* the SNLI test subset through the engine (``benchmarks/snli_engine.py``): accuracy (unchecked
  counted wrong) and real contradictions found.

One verifier and one score cache serve every configuration (scores are batch-invariant, so a
cached pair's scores are the ones a fresh run would compute); only the pairs a rule adds or
changes are scored again. ``--json OUT`` keeps each configuration's figures as it finishes and a
rerun skips those already there. CPU, offline.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import necessity_dev  # noqa: E402
import snli_engine  # noqa: E402

from ene_core import NecessityEngine, NLIOracle  # noqa: E402
from ene_core.engine.scoring import ScoreCache  # noqa: E402
from ene_core.verifiers.protocol import RULES  # noqa: E402

DEV = ["necessity_dev.jsonl"] + [f"necessity_fresh{n}.jsonl" for n in ("", "2", "3", "4", "5", "6")]
TEST = "necessity_test.jsonl"
# each a --rules spec, read over the verifier's own rules: "all,no-NAME" is every rule but one
CONFIGS = ["all", *(f"all,no-{name}" for name in RULES), "none"]


def necessity(engine: NecessityEngine, cases: list[Any]) -> dict[str, Any]:
    result = necessity_dev.evaluate(engine, cases)
    confusion = result["confusion"]
    overall = result["overall"]
    right = sum(confusion[s][s] for s in necessity_dev.STATUSES)
    return {
        "claims": overall["claims"],
        "right": right,
        "status": overall["status_accuracy"],
        "f1": overall["necessity_f1"],
        "supported_contradicted": confusion["supported"]["contradicted"],
        "supported_total": sum(confusion["supported"].values()),
        "contradicted_found": confusion["contradicted"]["contradicted"],
        "contradicted_total": sum(confusion["contradicted"].values()),
        "seconds": result["seconds"],
    }


def snli(engine: NecessityEngine, pairs: list[dict[str, str]]) -> dict[str, Any]:
    result = snli_engine.evaluate(engine, pairs)
    confusion = result["confusion"]
    return {
        "pairs": result["pairs"],
        "accuracy": result["accuracy"],
        "contradicted_found": confusion["contradiction", "contradiction"],
        "contradicted_total": sum(
            n for (gold, _), n in confusion.items() if gold == "contradiction"
        ),
        "unchecked": result["unchecked"],
        "seconds": result["seconds"],
    }


def run(config: str, oracle: Any, cache: ScoreCache, data: dict[str, Any]) -> dict[str, Any]:
    engine = NecessityEngine(oracle, rules=config)
    engine.cache = cache  # shared: only the pairs this configuration changes are scored
    try:
        out = {
            "rules": sorted(engine.rules),
            "dev": necessity(engine, data["dev"]),
            "test": necessity(engine, data["test"]),
            "snli": snli(engine, data["snli"]) if data["snli"] else None,
        }
    finally:
        engine.close()
    return out


def _cell(block: dict[str, Any] | None, key: str) -> str:
    return "not measured" if block is None else f"{block[key]:.3f}"


def table(results: dict[str, dict[str, Any]]) -> str:
    head = (
        "| rules | dev status | dev F1 | dev supported → contradicted | dev contradicted found "
        "| test status | test F1 | test supported → contradicted | test contradicted found "
        "| SNLI accuracy | SNLI contradictions found |"
    )
    lines = [head, "|---|" + "---:|" * 10]
    for config in [*CONFIGS, *(c for c in results if c not in CONFIGS)]:
        r = results.get(config)
        if r is None:
            continue
        dev, test, nli = r["dev"], r["test"], r["snli"]
        found = (
            "not measured"
            if nli is None
            else f"{nli['contradicted_found']} / {nli['contradicted_total']}"
        )
        lines.append(
            f"| {config} | {dev['status']:.3f} | {dev['f1']:.3f} | "
            f"{dev['supported_contradicted']} / {dev['supported_total']} | "
            f"{dev['contradicted_found']} / {dev['contradicted_total']} | "
            f"{test['status']:.3f} | {test['f1']:.3f} | "
            f"{test['supported_contradicted']} / {test['supported_total']} | "
            f"{test['contradicted_found']} / {test['contradicted_total']} | "
            f"{_cell(nli, 'accuracy')} | {found} |"
        )
    return "\n".join(lines)


def default_rules(results: dict[str, dict[str, Any]]) -> list[str]:
    """The issue's rule: a rule stays on only where it pays on the sealed test (every rule's
    claim status there above the status with that rule off alone)."""
    full = results["all"]["test"]["status"]
    return [
        name
        for name in RULES
        if f"all,no-{name}" in results and full > results[f"all,no-{name}"]["test"]["status"]
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="NLI model directory (default: the shipped verifier)")
    parser.add_argument("--json", metavar="OUT", help="keep the figures; a rerun skips those there")
    parser.add_argument("--limit", type=int, help="only the first N answers / pairs of each set")
    parser.add_argument(
        "--only", nargs="*", help="these configurations only (--rules specs: all, all,no-NAME ...)"
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    data_dir = HERE / "data"
    dev = [c for name in DEV for c in necessity_dev.load_cases(data_dir / name)[: args.limit]]
    data = {
        "dev": dev,
        "test": necessity_dev.load_cases(data_dir / TEST)[: args.limit],
        "snli": snli_engine.load_pairs(snli_engine.SNLI, args.limit)
        if snli_engine.SNLI.exists()
        else [],
    }
    out = Path(args.json) if args.json else None
    results: dict[str, dict[str, Any]] = (
        json.loads(out.read_text()) if out is not None and out.exists() else {}
    )
    oracle = NLIOracle(args.model)
    cache = ScoreCache(1 << 22)
    configs = list(args.only or CONFIGS)
    if not args.only:
        configs.append("chosen")
    for config in configs:
        if config == "chosen":  # once the ablation is in: the rules that pay, together
            if not all(c in results for c in CONFIGS):
                continue
            config = ",".join(["none", *default_rules(results)])
        if config in results:
            continue
        started = time.perf_counter()
        results[config] = run(config, oracle, cache, data)
        print(f"{config}: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        if out is not None:
            out.write_text(json.dumps(results, indent=1))
    print(table(results))
    if "all" in results:
        print(f"\nrules that pay on the sealed test: {', '.join(default_rules(results)) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
