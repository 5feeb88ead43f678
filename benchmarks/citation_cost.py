"""What citation checking costs: extra verifier pairs and time on 100 cited answers.

    python benchmarks/citation_cost.py                  # keyword oracle + ene-nli-mini on CPU
    python benchmarks/citation_cost.py --no-model       # pair counts only (keyword oracle)

Requests: the first 100 HotpotQA dev (distractor) questions. The answer is the question's gold
supporting sentences, each followed by a marker for its paragraph (``[n]``: the paragraph's
1-based position among the question's 10, which are the contexts). To look like real answers,
with a fixed seed, about a quarter of the claims also cite a distractor paragraph (padding),
a tenth cite a distractor instead of their own (wrong) and a tenth cite nothing.

Each oracle evaluates the same requests with a fresh engine (a cold cache) with citation
checking off (``check_citations=False``) and on, ``--repeats`` times (alternating which runs
first); pairs are counted by the engine (``stats``), wall and process CPU times are medians of
the repeats (CPU time is the steadier one on a shared machine). The extra pairs are
the difference, next to the bound of ``1 + 2k`` checks per claim with ``k`` citations. The last
columns say how many of the injected padding / wrong markers the verifier flags as unneeded, and
how many of the correct markers it flags (false alarms).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from engine_throughput import cpu_name  # benchmarks/ is on sys.path when run as a script

from ene_core import EvidenceNecessityGraph, NecessityEngine, SupportOracle
from ene_core.verifiers.keyword import KeywordOracle

HOTPOT = (
    Path(__file__).resolve().parents[2] / "shared/data/hotpotqa/hotpot_dev_distractor_first100.json"
)
_END = re.compile(r"([.!?]['\")]*)\s*$")


def cite(sentence: str, markers: list[int]) -> str:
    """``sentence`` with ``[a, b]`` before its final punctuation (one form the splitter keeps
    with its sentence anywhere in the answer)."""
    if not markers:
        return sentence
    tag = " [" + ", ".join(str(m) for m in markers) + "]"
    match = _END.search(sentence)
    if match is None:
        return sentence + tag + "."
    return sentence[: match.start()] + tag + match.group(1)


def cited_requests(data: list[dict[str, Any]], limit: int, seed: int = 0) -> list[dict[str, Any]]:
    """Gold sentences with markers; ``kinds`` records each marker as gold / padding / wrong."""
    rng = random.Random(seed)
    out = []
    for item in data[:limit]:
        titles = [title for title, _ in item["context"]]
        sentences = dict(item["context"])
        claims, kinds = [], []
        for title, i in item["supporting_facts"]:
            if i >= len(sentences[title]):
                continue
            own = titles.index(title) + 1
            others = [n for n in range(1, len(titles) + 1) if n != own]
            roll = rng.random()
            if roll < 0.1:
                markers, kind = [], []  # uncited
            elif roll < 0.2:
                wrong = rng.choice(others)
                markers, kind = [wrong], ["wrong"]
            elif roll < 0.45:
                pad = rng.choice(others)
                markers, kind = [own, pad], ["gold", "padding"]
            else:
                markers, kind = [own], ["gold"]
            claims.append(cite(sentences[title][i].strip(), markers))
            kinds.append(dict(zip(markers, kind, strict=True)))
        contexts = ["".join(sents) for _, sents in item["context"]]
        out.append({"answer": " ".join(claims), "contexts": contexts, "kinds": kinds})
    return out


def run(oracle: SupportOracle, reqs: list[dict[str, Any]], citations: bool) -> dict[str, Any]:
    engine = NecessityEngine(oracle, check_citations=citations)  # fresh cache
    gc.collect()  # the previous run's garbage is not this run's time
    start, cpu = time.perf_counter(), time.process_time()
    engs: list[EvidenceNecessityGraph] = engine.evaluate_many(
        [{"answer": r["answer"], "contexts": r["contexts"]} for r in reqs]
    )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    engine.close()
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "checks": sum(e.stats.oracle_checks for e in engs),
        "pairs": sum(e.stats.forward_pairs for e in engs),
        "engs": engs,
    }


def flags(reqs: list[dict[str, Any]], engs: list[EvidenceNecessityGraph]) -> dict[str, list[int]]:
    """Per marker kind: [flagged as unneeded, total]."""
    out = {"gold": [0, 0], "padding": [0, 0], "wrong": [0, 0]}
    for req, eng in zip(reqs, engs, strict=True):
        claims = [c for c in eng.claims if c.checkable]
        if len(claims) != len(req["kinds"]):
            continue  # the splitter joined or split a gold sentence: skip the answer
        for claim, kinds in zip(claims, req["kinds"], strict=True):
            for marker, kind in kinds.items():
                out[kind][1] += 1
                out[kind][0] += marker in claim.citations_unneeded
    return out


def measure(name: str, oracle: SupportOracle, reqs: list[dict[str, Any]], repeats: int) -> dict:
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    run(oracle, reqs[:5], True)  # warm-up: model kernels
    for r in range(repeats):  # alternate which goes first
        for citations in (False, True) if r % 2 == 0 else (True, False):
            runs[citations].append(run(oracle, reqs, citations))
    off, on = runs[False][0], runs[True][0]
    engs = on["engs"]
    per_answer = [
        b.stats.forward_pairs - a.stats.forward_pairs
        for a, b in zip(off["engs"], engs, strict=True)
    ]
    bound = sum(1 + 2 * len(c.cited) for e in engs for c in e.claims if c.checkable and c.cited)
    t_off = statistics.median(r["seconds"] for r in runs[False])
    t_on = statistics.median(r["seconds"] for r in runs[True])
    cpu_off = statistics.median(r["cpu_seconds"] for r in runs[False])
    cpu_on = statistics.median(r["cpu_seconds"] for r in runs[True])
    marked = [e for e in engs if e.citation_recall is not None]
    return {
        "oracle": name,
        "answers": len(reqs),
        "claims": sum(e.counts.checkable_claims for e in engs),
        "citations": sum(len(c.cited) for e in engs for c in e.claims if c.checkable),
        "checks_off": off["checks"],
        "checks_on": on["checks"],
        "pairs_off": off["pairs"],
        "pairs_on": on["pairs"],
        "extra_pairs_per_answer": (on["pairs"] - off["pairs"]) / len(reqs),
        "extra_pairs_max": max(per_answer),
        "extra_checks_per_answer": (on["checks"] - off["checks"]) / len(reqs),
        "bound_per_answer": bound / len(reqs),
        "seconds_off": t_off,
        "seconds_on": t_on,
        "overhead": t_on / t_off - 1,
        "cpu_seconds_off": cpu_off,
        "cpu_seconds_on": cpu_on,
        "cpu_overhead": cpu_on / cpu_off - 1,
        "recall": statistics.mean(e.citation_recall or 0.0 for e in marked),
        "precision": statistics.mean(e.citation_precision or 0.0 for e in marked),
        "flags": flags(reqs, engs),
    }


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| oracle | checks off → on | forward pairs off → on | extra pairs / answer (max) "
        "| bound 1+2k / answer | wall time off → on | overhead | CPU time off → on | overhead "
        "| recall / precision | padding / wrong / gold flagged |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in results:
        f = r["flags"]

        def share(kind: str, f: dict[str, list[int]] = f) -> str:
            return f"{f[kind][0]}/{f[kind][1]}"

        lines.append(
            f"| {r['oracle']} | {r['checks_off']} → {r['checks_on']} "
            f"| {r['pairs_off']} → {r['pairs_on']} "
            f"| {r['extra_pairs_per_answer']:.2f} ({r['extra_pairs_max']}) "
            f"| {r['bound_per_answer']:.2f} "
            f"| {r['seconds_off']:.2f} s → {r['seconds_on']:.2f} s | {100 * r['overhead']:+.1f}% "
            f"| {r['cpu_seconds_off']:.2f} s → {r['cpu_seconds_on']:.2f} s "
            f"| {100 * r['cpu_overhead']:+.1f}% "
            f"| {r['recall']:.3f} / {r['precision']:.3f} "
            f"| {share('padding')} / {share('wrong')} / {share('gold')} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", help="hotpot_dev_distractor_first100.json")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per setting (2)")
    parser.add_argument("--device", default="cpu", help="the model's device (default cpu)")
    parser.add_argument("--no-model", action="store_true", help="keyword oracle only")
    parser.add_argument("--json", help="also write the results as JSON to this path")
    args = parser.parse_args()
    path = Path(args.data or os.environ.get("ENE_HOTPOT") or HOTPOT)
    if not path.exists():
        sys.exit(f"needs HotpotQA at {path} (--data PATH or $ENE_HOTPOT)")
    reqs = cited_requests(json.loads(path.read_text()), args.requests)
    run(KeywordOracle(), reqs, True)  # warm-up: the sentence-splitting caches of every chunk
    results = [measure("keyword oracle", KeywordOracle(), reqs, args.repeats)]
    if not args.no_model:
        import torch

        from ene_core import NLIOracle

        oracle = NLIOracle(device=args.device)
        name = f"{oracle.name} ({args.device}, {torch.get_num_threads()} threads)"
        results.append(measure(name, oracle, reqs, args.repeats))
    print(f"{len(reqs)} cited HotpotQA answers, {cpu_name()}, median of {args.repeats} runs\n")
    print(table(results))
    if args.json:
        for r in results:
            r["flags"] = {k: list(v) for k, v in r["flags"].items()}
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
