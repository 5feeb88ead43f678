"""End to end against a real Arize Phoenix: the LangChain and LlamaIndex examples export OTLP/HTTP
to Phoenix (``python -m ene_integrations.otel``), then Phoenix's REST API and GraphQL must show
the ``ene.evaluate`` EVALUATOR span with the right attributes, in the right place, and one
``ene.necessity`` annotation per retrieved document with the right label and score.

Set ``ENE_UPDATE_DOCS_SCREENSHOT=1`` to also refresh ``docs/phoenix-*.png``.
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ene_core import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
Phoenix = Any  # tests/e2e/conftest.py's Phoenix server handle
pytestmark = pytest.mark.slow
ORACLE = os.environ.get("ENE_E2E_ORACLE", "keyword")  # deterministic verdicts to assert on
T = TypeVar("T")


def wait_for(probe: Callable[[], T | None], what: str, timeout: float = 120.0) -> T:
    """Poll until ``probe`` returns something truthy (Phoenix ingests asynchronously; an
    annotation that arrives before its span is retried by Phoenix after about 10 s)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.5)


def run_example(phoenix: Phoenix, script: str, project: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    env["PHOENIX_COLLECTOR_ENDPOINT"] = phoenix.base_url  # turns on document annotations
    command = [
        sys.executable,
        "-m",
        "ene_integrations.otel",
        "--endpoint",
        phoenix.otlp_endpoint,
        "--project",
        project,
        str(REPO / script),
        "--oracle",
        ORACLE,
    ]
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def documents_of(span: dict[str, Any]) -> list[str]:
    attrs = span["attributes"]
    out = []
    while f"retrieval.documents.{len(out)}.document.content" in attrs:
        out.append(attrs[f"retrieval.documents.{len(out)}.document.content"])
    return out


def traced(phoenix: Phoenix, project: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ENE spans, every span) once Phoenix has the ENE spans and their annotated retrievers."""
    found: dict[str, Any] = {}

    def ready() -> bool:
        spans = phoenix.spans(project)
        ene = [s for s in spans if s["name"] == "ene.evaluate"]
        if not ene:
            return False
        for span in ene:
            retriever = retriever_of(span, spans)
            if retriever is None:
                return False
            n = len(documents_of(retriever))
            if len(phoenix.document_evaluations(retriever["id"])) < n:
                return False
        found.update(ene=ene, spans=spans)
        return True

    wait_for(ready, f"ENE spans and document annotations in project {project!r}")
    return found["ene"], found["spans"]


def retriever_of(span: dict[str, Any], spans: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The retriever span (the one listing documents) in the same trace as ``span``."""
    trace_id = span["context"]["trace_id"]
    for s in spans:
        if (
            s["context"]["trace_id"] == trace_id
            and s["span_kind"] == "RETRIEVER"
            and documents_of(s)
        ):
            return s
    return None


def check_evaluator(span: dict[str, Any], framework: str, texts: list[str]) -> None:
    """The contract of docs/tracing.md, as Phoenix stored it."""
    a = span["attributes"]
    assert span["span_kind"] == "EVALUATOR"
    assert a["ene.framework"] == framework and a["ene.status"] == "ok"
    assert a["ene.schema_version"] == SCHEMA_VERSION
    assert a["ene.placement"] == "child"
    assert a["ene.contexts.total"] == len(texts)
    assert a["ene.contexts.used"] + a["ene.contexts.unused"] == len(texts)
    assert a["ene.claims.supported"] == a["ene.claims.checkable"] == 2
    assert a["evaluations.0.evaluation.name"] == "ene.support"
    assert a["evaluations.0.evaluation.label"] == "supported"
    assert a["evaluations.0.evaluation.score"] == 1.0
    assert a["evaluations.1.evaluation.name"] == "ene.context_use"
    genai = [e for e in span["events"] if e["name"] == "gen_ai.evaluation.result"]
    assert genai[0]["attributes"]["gen_ai.evaluation.name"] == "ene.support"
    assert genai[0]["attributes"]["gen_ai.evaluation.score.label"] == "supported"
    claims = [e["attributes"] for e in span["events"] if e["name"] == "ene.claim"]
    assert [c["ene.claim.index"] for c in claims] == [0, 1]
    assert all(c["ene.claim.status"] == "supported" for c in claims)
    # content capture is off by default: no chunk or answer text anywhere on the span
    assert "input.value" not in a
    blob = repr(a) + repr(span["events"])
    assert not [t for t in texts if t in blob]


def check_annotations(
    phoenix: Phoenix, span: dict[str, Any], retriever: dict[str, Any], necessary: set[str]
) -> list[dict[str, Any]]:
    """One ``ene.necessity`` annotation per retrieved document, consistent with the ENE span."""
    a = span["attributes"]
    texts = documents_of(retriever)
    annotations = sorted(
        phoenix.document_evaluations(retriever["id"]), key=lambda d: d["documentPosition"]
    )
    assert [d["documentPosition"] for d in annotations] == list(range(len(texts)))
    ids = list(a["ene.contexts.ids"])
    unused = set(a.get("ene.contexts.unused_ids", ()))
    needed = set(a.get("ene.contexts.necessary_ids", ()))
    for d, text, context_id in zip(annotations, texts, ids, strict=True):
        assert d["name"] == "ene.necessity" and d["annotatorKind"] == "CODE"
        label = "necessary" if text in necessary else "unused"
        assert d["label"] == label, (text, d)
        assert (context_id in needed) == (label == "necessary")
        assert (context_id in unused) == (label == "unused")
        assert (d["score"] > 0) == (label == "necessary")
        if label == "necessary":
            assert d["explanation"].startswith("Needed by claim ")
    assert sum(d["score"] for d in annotations) == pytest.approx(1.0, abs=1e-4)
    return annotations


@pytest.fixture(scope="module")
def langchain_trace(phoenix: Phoenix) -> dict[str, Any]:
    project = "ene-e2e-langchain"
    output = run_example(phoenix, "examples/langchain_rag.py", project)
    ene, spans = traced(phoenix, project)
    return {"project": project, "output": output, "ene": ene, "spans": spans}


def test_langchain_example_in_phoenix(phoenix: Phoenix, langchain_trace: dict[str, Any]) -> None:
    example = runpy.run_path(str(REPO / "examples/langchain_rag.py"))
    chunks = dict(example["CHUNKS"])
    key_of = {text: key for key, text in chunks.items()}
    necessary = {chunks["range"], chunks["charging"]}  # what the example's answer uses
    ene, spans = langchain_trace["ene"], langchain_trace["spans"]
    assert ene  # the handler's chain (the pruner chain evaluates without a handler)
    by_id = {s["context"]["span_id"]: s for s in spans}
    for span in ene:
        parent = by_id[span["parent_id"]]  # OpenInference's span for the root run
        assert parent["parent_id"] is None and parent["span_kind"] == "CHAIN"
        assert parent["context"]["trace_id"] == span["context"]["trace_id"]
        retriever = retriever_of(span, spans)
        assert retriever is not None
        texts = documents_of(retriever)
        check_evaluator(span, "langchain", texts)
        if ORACLE == "keyword":
            assert span["attributes"]["ene.verifier.model"] == "keyword-oracle"
        assert list(span["attributes"]["ene.contexts.ids"]) == [key_of[t] for t in texts]
        annotations = check_annotations(phoenix, span, retriever, necessary)
        assert sum(d["label"] == "necessary" for d in annotations) == 2


def test_llamaindex_example_in_phoenix(phoenix: Phoenix) -> None:
    pytest.importorskip("llama_index.core")
    project = "ene-e2e-llamaindex"
    run_example(phoenix, "examples/llamaindex_rag.py", project)
    documents = runpy.run_path(str(REPO / "examples/llamaindex_rag.py"))["DOCUMENTS"]
    ene, spans = traced(phoenix, project)
    assert len(ene) >= 1  # the query, and NecessityQueryEngine's own query
    by_id = {s["context"]["span_id"]: s for s in spans}
    for span in ene:
        parent = by_id[span["parent_id"]]  # the span current at SynthesizeEndEvent
        assert parent["context"]["trace_id"] == span["context"]["trace_id"]
        assert "synthesize" in parent["name"].lower()
        retriever = retriever_of(span, spans)
        assert retriever is not None
        texts = documents_of(retriever)
        assert sorted(texts) == sorted(documents)
        check_evaluator(span, "llama_index", texts)
        node_ids = [
            retriever["attributes"][f"retrieval.documents.{i}.document.id"]
            for i in range(len(texts))
        ]
        assert list(span["attributes"]["ene.contexts.ids"]) == node_ids
        check_annotations(phoenix, span, retriever, {documents[0], documents[1]})


def screenshot(phoenix: Phoenix, path: str, out: Path, browser: list[str]) -> Path:
    command = [
        *browser,
        "--hide-scrollbars",
        "--virtual-time-budget=8000",
        "--window-size=1600,1100",
        "--force-prefers-reduced-motion",
        f"--screenshot={out}",
        f"{phoenix.base_url}{path}",
    ]
    subprocess.run(command, capture_output=True, timeout=180, check=False)
    assert out.exists(), "chromium wrote no screenshot"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 30_000  # a rendered page, not a blank one
    return out


def test_screenshot_of_the_trace(
    phoenix: Phoenix,
    langchain_trace: dict[str, Any],
    headless_chromium: Callable[[Path], list[str]],
    tmp_path: Path,
) -> None:
    span = langchain_trace["ene"][0]
    retriever = retriever_of(span, langchain_trace["spans"])
    assert retriever is not None
    trace_id = span["context"]["trace_id"]
    shots = {
        "phoenix-trace.png": f"/redirects/traces/{trace_id}",
        "phoenix-evaluator.png": f"/redirects/spans/{span['context']['span_id']}",
        "phoenix-documents.png": f"/redirects/spans/{retriever['context']['span_id']}",
    }
    for name, path in shots.items():
        browser = headless_chromium(tmp_path / f"profile-{name}")
        out = screenshot(phoenix, path, tmp_path / name, browser)
        if os.environ.get("ENE_UPDATE_DOCS_SCREENSHOT") == "1":
            shutil.copyfile(out, REPO / "docs" / name)
