"""How tests look at one answer's ENG from the outside: a claim by its text, the answer streamed
token by token, and the ``ene.claim`` events a real OpenTelemetry SDK records with content
capture off and on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ene_core import Claim, EvidenceNecessityGraph, NecessityEngine


def claim_of(eng: EvidenceNecessityGraph, text: str) -> Claim:
    return next(c for c in eng.claims if c.text == text)


def streamed_and_whole(
    engine: NecessityEngine, answer: str, contexts: Sequence[str]
) -> tuple[EvidenceNecessityGraph, EvidenceNecessityGraph]:
    """The answer's ENG fed as a stream word by word, and evaluated whole; closes the engine."""
    try:
        whole = engine.evaluate(answer, list(contexts))
        stream = engine.stream(list(contexts))
        for token in re.findall(r"\S+\s*", answer):
            stream.feed(token)
        return stream.finish().result(timeout=60), whole
    finally:
        engine.close()


def claim_events(
    engine: NecessityEngine, answer: str, contexts: Sequence[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The attributes of the one ``ene.claim`` event, recorded without and with content."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ene_core.results import NecessityDispatcher
    from ene_integrations.otel import NecessitySpanRecorder

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    result = NecessityDispatcher(engine, mode="inline").dispatch("r", answer, list(contexts), "Q?")
    assert result is not None and result.ok
    NecessitySpanRecorder(provider)(result)
    NecessitySpanRecorder(provider, capture_content=True)(result)
    hidden, shown = exporter.get_finished_spans()
    (plain,) = [dict(e.attributes or {}) for e in hidden.events if e.name == "ene.claim"]
    (content,) = [dict(e.attributes or {}) for e in shown.events if e.name == "ene.claim"]
    return plain, content


def as_older(
    eng: EvidenceNecessityGraph, version: str, verifier: Sequence[str], claim: Sequence[str]
) -> EvidenceNecessityGraph:
    """``eng`` as an ENG of schema ``version`` wrote it: without the newer fields named."""
    data = eng.model_dump(mode="json")
    data["schema_version"] = version
    for name in verifier:
        del data["verifier"][name]
    for node in data["claims"]:
        for name in claim:
            del node[name]
    return EvidenceNecessityGraph.model_validate(data)
