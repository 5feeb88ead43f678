"""Cost of ENE's tracing recorders per evaluated request (runs on the engine's worker thread).

``NecessitySpanRecorder`` into an SDK provider with an in-memory exporter (span building only,
no network), by number of claims and contexts, with and without content capture; and
``PhoenixDocumentAnnotator.__call__`` (building and queueing the annotations; sending happens on
its own thread and is not timed). Prints a table of microseconds per request (p50 / p95).

    python benchmarks/otel_recorder.py            # 2,000 requests per row
    python benchmarks/otel_recorder.py --n 500
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ene_core import NecessityDispatcher, NecessityEngine, NecessityResult
from ene_core.verifiers.keyword import KeywordOracle
from ene_integrations.otel import NecessitySpanRecorder, document_refs
from ene_integrations.phoenix import PhoenixDocumentAnnotator


class NullSpans:
    def log_document_annotations(self, **kwargs: Any) -> None:
        pass


class NullClient:
    spans = NullSpans()


def make_result(engine: NecessityEngine, claims: int, contexts: int) -> NecessityResult:
    facts = [f"Item {i} weighs {i + 2} kilograms in storage." for i in range(contexts)]
    answer = " ".join(facts[i % contexts] for i in range(claims))
    with TracerProvider().get_tracer("bench").start_as_current_span("retrieve") as span:
        refs = document_refs(span.get_span_context(), contexts)
    dispatcher = NecessityDispatcher(engine, mode="inline")
    result = dispatcher.dispatch("r", answer, facts, metadata={"documents": refs})
    assert result is not None and result.ok, result
    return result


def timed(fn: Any, result: NecessityResult, n: int) -> tuple[float, float]:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn(result)
        samples.append((time.perf_counter_ns() - t0) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="requests per row")
    args = parser.parse_args()
    engine = NecessityEngine(KeywordOracle())
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    annotator = PhoenixDocumentAnnotator(NullClient(), flush_spans_first=False, max_queue=10**6)
    print(f"{'recorder':<34} {'claims':>6} {'contexts':>8} {'p50 us':>8} {'p95 us':>8}")
    for claims, contexts in ((2, 4), (10, 10), (50, 20)):
        result = make_result(engine, claims, contexts)
        rows = {
            "span (ids + hashes)": NecessitySpanRecorder(provider),
            "span (capture_content=True)": NecessitySpanRecorder(provider, capture_content=True),
            "phoenix annotations (queue)": annotator,
        }
        for name, recorder in rows.items():
            p50, p95 = timed(recorder, result, args.n)
            print(f"{name:<34} {claims:>6} {contexts:>8} {p50:>8.0f} {p95:>8.0f}")
            exporter.clear()
    annotator.close(30)
    engine.close()


if __name__ == "__main__":
    main()
