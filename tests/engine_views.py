"""How tests look at one answer's ENG from the outside: a claim by its text, the answer streamed
token by token, the ``ene.claim`` events a real OpenTelemetry SDK records with content capture
off and on, and everything a user reads (viewer, trace, CLI) at once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

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

    from ene_core.kit.results import NecessityDispatcher
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


@dataclass(frozen=True)
class Shown:
    """What a user reads about a one-claim answer: the viewer's page, the claim event without and
    with content capture, and ``ene evaluate``'s output (keyword oracle)."""

    page: str
    plain: dict[str, Any]
    content: dict[str, Any]
    cli: str


def shown_everywhere(
    answer: str, contexts: Sequence[str], capsys: pytest.CaptureFixture[str]
) -> Shown:
    from ene_core.cli import main
    from ene_core.reports.viewer import render_html
    from ene_core.verifiers.keyword import KeywordOracle

    engine = NecessityEngine(KeywordOracle())
    page = render_html([engine.evaluate(answer, list(contexts))])
    plain, content = claim_events(engine, answer, contexts)
    capsys.readouterr()
    argv = ["evaluate", "--oracle", "keyword", "--answer", answer]
    assert main([*argv, *(x for c in contexts for x in ("--context", c))]) == 0
    return Shown(page, plain, content, capsys.readouterr().out)
