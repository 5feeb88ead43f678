"""Request latency of a LangChain app with and without ENE's handler: the example RAG chain
(``--app chain``) or the example agent (``--app agent``: ``create_agent`` with a retrieval tool,
two model calls per request), plus a memory check over many agent runs (``--memory-runs``).

The handler runs in its default (background) mode: a request only records callbacks and
enqueues its evaluation; the verifier runs on the engine's worker thread, in the same process.
Variants run in alternating blocks of 50 requests (ENE's evaluation backlog is drained between
blocks, so its CPU use lands on its own requests only), which spreads machine noise evenly:

* ``without``       - no callbacks at all (the baseline)
* ``no-op handler`` - an empty LangChain callback handler: LangChain's own cost of any handler
* ``ENE callbacks`` - ENE's handler with evaluation switched off: the adapter's own cost
* ``ENE``           - ENE's handler as shipped: callbacks + evaluation on the worker thread

    python benchmarks/langchain_overhead.py                   # default verifier
    python benchmarks/langchain_overhead.py --oracle keyword  # no model needed
    python benchmarks/langchain_overhead.py --app agent --memory-runs 10000
"""

from __future__ import annotations

import argparse
import runpy
import statistics
import sys
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from ene_integrations.langchain import NecessityCallbackHandler

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CHAIN = EXAMPLES / "langchain_rag.py"
AGENT = EXAMPLES / "langgraph_agent.py"


class NoopHandler(BaseCallbackHandler):
    run_inline = True


BLOCK = 50  # requests in a row per variant; the evaluation backlog is drained between blocks


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def build_app(app: str, latency_ms: float) -> tuple[Any, Any]:
    """``(runnable, input)`` for one request of the chosen example app."""
    if app == "agent":
        example = runpy.run_path(str(AGENT), run_name="langgraph_agent_example")
        question = {"messages": [{"role": "user", "content": example["QUESTION"]}]}
        return example["build_agent"](model_latency_s=latency_ms / 1000), question
    example = runpy.run_path(str(CHAIN), run_name="langchain_rag_example")
    chain = example["build_chain"](example["build_retriever"](), latency_ms / 1000 or None)
    return chain, example["QUESTION"]


def run(app: str, engine: Any, requests: int, latency_ms: float) -> dict[str, Any]:
    ene = NecessityCallbackHandler(engine)
    callbacks_only = NecessityCallbackHandler(engine)
    callbacks_only.dispatcher.dispatch = lambda *args, **kwargs: None  # type: ignore[method-assign]
    variants: dict[str, Any] = {
        "without": None,
        "no-op handler": NoopHandler(),
        "ENE callbacks": callbacks_only,
        "ENE": ene,
    }
    chain, question = build_app(app, latency_ms)
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}  # the request thread's CPU
    failed, evaluated, backlog = 0, 0, 0.0
    blocks = -(-requests // BLOCK)
    for block in range(blocks + 1):  # block 0 warms up every path and the score cache
        order = list(variants.items())
        order = order[block % len(order) :] + order[: block % len(order)]  # rotate who is first
        for name, handler in order:
            ids = [uuid.uuid4() for _ in range(BLOCK)]
            for run_id in ids:
                config = {} if handler is None else {"callbacks": [handler], "run_id": run_id}
                start, start_cpu = time.perf_counter(), time.thread_time()
                chain.invoke(question, config=config)
                if block:
                    times[name].append((time.perf_counter() - start) * 1000)
                    cpu[name].append((time.thread_time() - start_cpu) * 1000)
            if handler is ene:  # drain before the next block, so it runs on a quiet process
                done = time.perf_counter()
                results = [ene.result(run_id, timeout=900) for run_id in ids]
                backlog = max(backlog, time.perf_counter() - done)
                failed += sum(r.eng is None for r in results)
                evaluated += len(results)
    return {
        "latency_ms": latency_ms,
        "times": {name: values[:requests] for name, values in times.items()},
        "cpu": {name: values[:requests] for name, values in cpu.items()},
        "evaluated": evaluated,
        "failed": failed,
        "backlog_s": backlog,
    }


def memory_check(app: str, runs: int) -> dict[str, Any]:
    """Python heap growth over ``runs`` requests with ENE attached (tracemalloc), after a warm-up
    of 1,000; results are kept by the handler (bounded by ``max_results``), so this also reports
    the handler's own state, which must be empty once every request has ended. Evaluations use
    the keyword oracle so that 10k runs take a minute, not an hour of verifier time."""
    from ene_core import NecessityEngine
    from ene_core.verifiers.keyword import KeywordOracle

    engine = NecessityEngine(KeywordOracle())
    handler = NecessityCallbackHandler(engine, max_results=1000)
    chain, question = build_app(app, 0.0)
    ids = [uuid.uuid4() for _ in range(runs)]
    tracemalloc.start()
    marks: dict[int, int] = {}
    for i, run_id in enumerate(ids, 1):
        chain.invoke(question, config={"callbacks": [handler], "run_id": run_id})
        if i % 1000 == 0:
            handler.result(run_id, timeout=900)  # let the evaluation worker catch up
            marks[i] = tracemalloc.get_traced_memory()[0]
    handler.result(ids[-1], timeout=900)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "runs": runs,
        "marks": marks,
        "current": current,
        "peak": peak,
        "pending": handler.pending,
        "run_state": len(handler._runs),
        "results_kept": len(handler.dispatcher.results),
        "ok": sum(handler.dispatcher.results.get(str(r)) is not None for r in ids[-1000:]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--oracle", choices=["default", "keyword"], default="default")
    parser.add_argument(
        "--model-latency-ms",
        type=float,
        nargs="+",
        default=[0.0, 20.0],
        help="simulated model latencies; 0 is the bare fake chain (the worst case for ENE)",
    )
    parser.add_argument("--app", choices=["chain", "agent"], default="chain")
    parser.add_argument("--memory-runs", type=int, default=0, help="e.g. 10000; 0: skip")
    args = parser.parse_args(argv)
    example = runpy.run_path(str(CHAIN), run_name="langchain_rag_example")
    engine = example["make_engine"](args.oracle)
    rows = [run(args.app, engine, args.requests, ms) for ms in args.model_latency_ms]

    print(
        f"\nLangChain request latency ({args.app}), {args.requests} requests per variant, "
        f"oracle={engine.oracle.name}, background mode\n"
    )
    print(
        "| model latency | variant | p50 | p95 | p50 ratio | p95 ratio | request-thread CPU p50 |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        base = row["times"]["without"]
        b50, b95 = percentile(base, 50), percentile(base, 95)
        for name, values in row["times"].items():
            p50, p95 = percentile(values, 50), percentile(values, 95)
            print(
                f"| {row['latency_ms']:.0f} ms | {name} | {p50:.2f} ms | {p95:.2f} ms "
                f"| {p50 / b50:.3f} | {p95 / b95:.3f} "
                f"| {statistics.median(row['cpu'][name]):.2f} ms |"
            )
    print()
    for row in rows:
        print(
            f"model latency {row['latency_ms']:.0f} ms: {row['evaluated']} evaluated, "
            f"{row['failed']} failed, longest evaluation backlog after a block "
            f"of {BLOCK} requests {row['backlog_s']:.2f} s"
        )
    if args.memory_runs:
        mem = memory_check(args.app, args.memory_runs)
        print(f"\nMemory over {mem['runs']} {args.app} runs with ENE (tracemalloc, Python heap):\n")
        print("| runs | heap |")
        print("|---:|---:|")
        for i, size in mem["marks"].items():
            print(f"| {i} | {size / 2**20:.2f} MiB |")
        first, last = min(mem["marks"]), max(mem["marks"])
        growth = (mem["marks"][last] - mem["marks"][first]) / max(last - first, 1)
        print(
            f"\ngrowth after run {first}: {growth:.0f} bytes/run; peak {mem['peak'] / 2**20:.2f} "
            f"MiB; handler state after the last run: {mem['pending']} pending roots, "
            f"{mem['run_state']} runs; results kept {mem['results_kept']} (max_results=1000)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
