"""Query latency of a LlamaIndex query engine with the ENE handler versus without.

The example's index and extractive mock LLM (``examples/llamaindex_rag.py``); the LLM can be
given a simulated latency (``--llm-ms``, a sleep, as a hosted model's network wait). Runs with
and without ``instrument()`` alternate in blocks so machine drift hits both alike; the table
shows p50 / p95 per query and their ratios (target: with / without <= 1.02 in background mode).

    python benchmarks/llamaindex_overhead.py                       # 1,000 queries per arm
    python benchmarks/llamaindex_overhead.py --llm-ms 0 20 --oracle default
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.embeddings import MockEmbedding

from ene_core import NecessityEngine, NLIOracle
from ene_integrations.llama_index import NecessityHandler

ROOT = Path(__file__).resolve().parents[1]


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location(
        "example", ROOT / "examples" / "llamaindex_rag.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(
    example: Any, engine: NecessityEngine, llm_ms: float, n: int, block: int, mode: str
) -> dict[str, Any]:
    class SlowLLM(example.ExtractiveLLM):  # type: ignore[name-defined,misc]
        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
            time.sleep(llm_ms / 1000)
            return super().complete(prompt, formatted, **kw)

    Settings.llm = SlowLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    index = VectorStoreIndex.from_documents([Document(text=t) for t in example.DOCUMENTS])
    query_engine = index.as_query_engine(similarity_top_k=len(example.DOCUMENTS))
    questions = [f"{example.QUESTION} ({i})" for i in range(n)]
    for q in questions[:20]:  # warm-up, both arms
        query_engine.query(q)
    times: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}  # the request thread's own CPU time
    handler = NecessityHandler(engine, mode=mode)  # what instrument() installs, toggled here
    responses = []
    for start in range(0, n, block):
        for instrumented in (False, True) if (start // block) % 2 == 0 else (True, False):
            if instrumented:
                handler.attach()
            for q in questions[start : start + block]:
                began, began_cpu = time.perf_counter(), time.thread_time()
                response = query_engine.query(q)
                times[instrumented].append(time.perf_counter() - began)
                cpu[instrumented].append(time.thread_time() - began_cpu)
                if instrumented:
                    responses.append(response)
            handler.detach()
    results = [handler.result(r, timeout=300) for r in responses]
    durations = [r.eng.stats.duration_ms for r in results if r.eng is not None]
    return {
        "times": times,
        "cpu": cpu,
        "evaluated": len(durations),
        "queries": len(responses),
        "eval_ms": statistics.median(durations) if durations else float("nan"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1000, help="queries per arm")
    parser.add_argument("--block", type=int, default=50, help="queries per alternating block")
    parser.add_argument("--llm-ms", type=float, nargs="+", default=[0.0, 20.0])
    parser.add_argument("--mode", choices=["background", "inline"], default="background")
    parser.add_argument("--oracle", choices=["keyword", "default"], default="keyword")
    parser.add_argument(
        "--cache",
        action="store_true",
        help="keep the score cache (the benchmark repeats one answer; without the cache every "
        "request pays a full evaluation, as distinct answers would)",
    )
    args = parser.parse_args(argv)

    example = load_example()
    if args.oracle == "keyword":
        from ene_core.verifiers.keyword import KeywordOracle

        oracle: Any = KeywordOracle()
    else:
        oracle = NLIOracle()
    engine = NecessityEngine(oracle, cache_size=65_536 if args.cache else 0)
    rows = []
    for llm_ms in args.llm_ms:
        out = run(example, engine, llm_ms, args.n, args.block, args.mode)
        base, ene = out["times"][False], out["times"][True]
        p50 = (statistics.median(base) * 1e3, statistics.median(ene) * 1e3)
        p95 = (percentile(base, 0.95) * 1e3, percentile(ene, 0.95) * 1e3)
        cpu = [statistics.median(out["cpu"][arm]) * 1e3 for arm in (False, True)]
        rows.append((llm_ms, p50, p95, cpu, out["eval_ms"], out["evaluated"], out["queries"]))
    oracle = engine.oracle.name
    cache = "score cache on" if args.cache else "no score cache"
    print(
        f"\nLlamaIndex query latency, {args.n} queries per arm, mode={args.mode}, {oracle}, {cache}"
    )
    print(f"python {sys.version.split()[0]}; blocks of {args.block} alternate with/without\n")
    print(
        "| LLM latency | p50 without | p50 with | p50 ratio | p95 without | p95 with | p95 ratio "
        "| request-thread CPU added (p50) | evaluation (p50, worker) | ENGs |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for llm_ms, p50, p95, cpu, eval_ms, evaluated, total in rows:
        print(
            f"| {llm_ms:.0f} ms | {p50[0]:.2f} ms | {p50[1]:.2f} ms | {p50[1] / p50[0]:.3f} "
            f"| {p95[0]:.2f} ms | {p95[1]:.2f} ms | {p95[1] / p95[0]:.3f} "
            f"| {(cpu[1] - cpu[0]) * 1e3:.0f} µs | {eval_ms:.2f} ms | {evaluated}/{total} |"
        )
    engine.close()


if __name__ == "__main__":
    main()
