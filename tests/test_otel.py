"""OpenTelemetry span recorder and Phoenix document annotations (SDK InMemorySpanExporter).

The span contract of docs/tracing.md: name, kind, timestamps, placement (child / link / root),
flat attributes, inline evaluations, GenAI events, per-claim events, content capture, limits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from ene_core import SCHEMA_VERSION, NecessityDispatcher, NecessityEngine, NecessityResult
from ene_integrations.otel import (
    CLAIM_EVENT,
    GENAI_EVENT,
    SPAN_NAME,
    NecessitySpanRecorder,
    answer_evaluations,
    current_span_context,
    default_recorders,
    document_refs,
)
from ene_integrations.phoenix import (
    PhoenixDocumentAnnotator,
    document_annotations,
    document_ref,
)

CONTEXTS = [
    {"id": "paris", "text": "Paris is the capital of France."},
    {"id": "banana", "text": "Bananas are a yellow fruit."},
    {"id": "tower", "text": "The Eiffel Tower stands in Paris."},
    {"id": "tower2", "text": "In Paris the Eiffel Tower stands tall."},
]
ANSWER = "Paris is the capital of France. The Eiffel Tower stands in Paris. Berlin has 9 moons."
SECRET_WORDS = ("capital", "Bananas", "Eiffel", "Berlin", "moons")


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


@pytest.fixture
def global_provider(provider: TracerProvider) -> Iterator[TracerProvider]:
    """Install ``provider`` globally for one test (OpenTelemetry allows it once per process)."""
    saved = trace._TRACER_PROVIDER
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace.set_tracer_provider(provider)
    yield provider
    trace._TRACER_PROVIDER = saved
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    if saved is not None:
        trace._TRACER_PROVIDER_SET_ONCE._done = True


def evaluate(engine: NecessityEngine, *, trace_ctx: Any = None, **kw: Any) -> NecessityResult:
    dispatcher = NecessityDispatcher(engine, mode="inline")
    out = dispatcher.dispatch("req-1", ANSWER, CONTEXTS, "What about Paris?", trace=trace_ctx, **kw)
    assert out is not None and out.ok
    return out


def request_span(provider: TracerProvider) -> Any:
    with provider.get_tracer("app").start_as_current_span("rag") as span:
        ctx = current_span_context()
    assert ctx == span.get_span_context()
    return ctx


def only_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    spans = [s for s in exporter.get_finished_spans() if s.name == SPAN_NAME]
    assert len(spans) == 1
    return spans[0]


def all_strings(span: ReadableSpan) -> list[str]:
    values: list[Any] = list(span.attributes.values())
    for event in span.events:
        values += list(event.attributes.values())
    flat: list[str] = []
    for v in values:
        flat += [str(x) for x in v] if isinstance(v, tuple | list) else [str(v)]
    return flat


# -- the seam ----------------------------------------------------------------------------------
def test_current_span_context_outside_inside_and_without_opentelemetry(
    provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert current_span_context() is None
    with provider.get_tracer("t").start_as_current_span("s") as span:
        assert current_span_context() == span.get_span_context()
        monkeypatch.setitem(__import__("sys").modules, "opentelemetry", None)
        assert current_span_context() is None  # opentelemetry not importable: None, no raise


def test_default_recorders_only_with_an_sdk_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("PHOENIX_COLLECTOR_ENDPOINT", "PHOENIX_ENDPOINT", "PHOENIX_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)
    assert default_recorders() == []
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", "http://127.0.0.1:9")
    assert default_recorders() == []  # no spans, so no retriever spans to annotate either
    assert default_recorders(phoenix=True) == []


def test_default_recorders_with_a_global_sdk_provider(
    global_provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("PHOENIX_COLLECTOR_ENDPOINT", "PHOENIX_ENDPOINT", "PHOENIX_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    recorders = default_recorders()
    assert [type(r) for r in recorders] == [NecessitySpanRecorder]
    pytest.importorskip("phoenix.client")
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", "http://127.0.0.1:9")
    assert [type(r) for r in default_recorders()] == [
        NecessitySpanRecorder,
        PhoenixDocumentAnnotator,
    ]
    assert [type(r) for r in default_recorders(phoenix=False)] == [NecessitySpanRecorder]


# -- the span contract --------------------------------------------------------------------------
def test_span_contract(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    result = evaluate(keyword_engine, metadata={"framework": "test", "skip": {"a": 1}})
    NecessitySpanRecorder(provider)(result)
    span = only_span(exporter)
    a = span.attributes
    assert span.start_time == result.started_ns and span.end_time == result.ended_ns
    assert span.instrumentation_scope.name == "ene"
    assert a["openinference.span.kind"] == "EVALUATOR"
    assert a["ene.schema_version"] == SCHEMA_VERSION and a["ene.status"] == "ok"
    assert a["ene.verifier.model"] == "keyword-oracle" and a["ene.verifier.threshold"] == 0.5
    eng = result.eng
    assert eng is not None
    assert (a["ene.claims.total"], a["ene.claims.supported"]) == (3, eng.counts.supported)
    assert a["ene.claims.supported"] == 2 and a["ene.claims.unsupported"] == 1
    assert a["ene.contexts.total"] == 4 and a["ene.contexts.unused"] == eng.counts.contexts_unused
    assert tuple(a["ene.contexts.unused_ids"]) == tuple(c.id for c in eng.unused_contexts)
    assert "banana" in a["ene.contexts.unused_ids"]
    assert a["ene.tokens.saved"] == eng.counts.tokens_saved
    assert a["ene.oracle.checks"] == eng.stats.oracle_checks
    assert a["ene.framework"] == "test" and "ene.metadata.skip" not in a
    for value in a.values():  # flat: primitives or homogeneous lists only
        assert isinstance(value, str | bool | int | float | tuple)
        if isinstance(value, tuple):
            assert len({type(x) for x in value}) <= 1
    # OpenInference inline evaluations, mirrored by GenAI events
    names = [a[f"evaluations.{i}.evaluation.name"] for i in range(3)]
    assert names == ["ene.support", "ene.context_use", "ene.fragility"]
    assert a["evaluations.0.evaluation.label"] == "unsupported"
    assert a["evaluations.0.evaluation.score"] == pytest.approx(2 / 3, abs=1e-6)
    assert a["evaluations.0.evaluation.annotator_kind"] == "CODE"
    assert "claim 3" in a["evaluations.0.evaluation.explanation"]  # the third, counted from 1
    genai = [e for e in span.events if e.name == GENAI_EVENT]
    assert [e.attributes["gen_ai.evaluation.name"] for e in genai] == names
    assert genai[0].attributes["gen_ai.evaluation.score.label"] == "unsupported"
    assert genai[0].attributes["gen_ai.evaluation.score.value"] == pytest.approx(2 / 3, abs=1e-6)
    # one ene.claim event per checkable claim
    claims = [e.attributes for e in span.events if e.name == CLAIM_EVENT]
    assert [c["ene.claim.index"] for c in claims] == [0, 1, 2]
    assert claims[0]["ene.claim.status"] == "supported"
    assert tuple(claims[0]["ene.claim.necessary_context_ids"]) == ("paris",)
    assert claims[1]["ene.claim.classification"] == "robust"  # two towers: neither necessary
    assert claims[2]["ene.claim.status"] in ("unsupported", "contradicted")
    assert claims[0]["ene.claim.p_entail"] == pytest.approx(eng.claims[0].p_entail)
    assert a["ene.claim_events.dropped"] == 0 and span.dropped_events == 0


def test_content_is_not_exported_by_default(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    NecessitySpanRecorder(provider)(evaluate(keyword_engine))
    span = only_span(exporter)
    text = " ".join(all_strings(span))
    assert not [w for w in SECRET_WORDS if w in text]
    assert "input.value" not in span.attributes
    assert len(span.attributes["ene.answer.sha256"]) == 16
    assert all("ene.claim.sha256" in e.attributes for e in span.events if e.name == CLAIM_EVENT)


def test_content_capture_opt_in(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    NecessitySpanRecorder(provider, capture_content=True)(evaluate(keyword_engine))
    span = only_span(exporter)
    assert span.attributes["input.value"] == ANSWER
    assert span.attributes["ene.question"] == "What about Paris?"
    claims = [e.attributes for e in span.events if e.name == CLAIM_EVENT]
    assert claims[2]["ene.claim.text"] == "Berlin has 9 moons."


def test_a_short_answer_shows_what_the_verifier_read(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    dispatcher = NecessityDispatcher(keyword_engine, mode="inline")
    result = dispatcher.dispatch("req-2", "Paris", CONTEXTS, "Which city is the capital of France?")
    assert result is not None and result.ok
    NecessitySpanRecorder(provider)(result)
    NecessitySpanRecorder(provider, capture_content=True)(result)
    hidden, shown = [s for s in exporter.get_finished_spans() if s.name == SPAN_NAME]
    explanation = hidden.attributes["evaluations.0.evaluation.explanation"]
    assert "read as the answer to the question: claim 1" in explanation
    (claim,) = [e.attributes for e in hidden.events if e.name == CLAIM_EVENT]
    assert claim["ene.claim.status"] == "supported" and claim["ene.claim.read_as_answer"] is True
    assert "ene.claim.hypothesis" not in claim and "capital" not in " ".join(all_strings(hidden))
    (claim,) = [e.attributes for e in shown.events if e.name == CLAIM_EVENT]
    assert claim["ene.claim.hypothesis"] == "The capital of France is Paris."


# -- placement ---------------------------------------------------------------------------------
def test_child_of_the_request_span(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    ctx = request_span(provider)
    NecessitySpanRecorder(provider)(evaluate(keyword_engine, trace_ctx=ctx))
    span = only_span(exporter)
    assert span.parent is not None and span.parent.span_id == ctx.span_id
    assert span.context.trace_id == ctx.trace_id
    assert not span.links and span.attributes["ene.placement"] == "child"


def test_link_mode_is_a_carrier_span_with_exactly_one_link(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    ctx = request_span(provider)
    NecessitySpanRecorder(provider, link_mode="link")(evaluate(keyword_engine, trace_ctx=ctx))
    span = only_span(exporter)
    assert span.parent is None and span.context.trace_id != ctx.trace_id
    assert len(span.links) == 1
    assert span.links[0].context == ctx
    assert span.links[0].attributes["ene.link.type"] == "evaluates"
    assert span.attributes["ene.placement"] == "link"


def test_auto_links_late_evaluations(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    ctx = request_span(provider)
    result = evaluate(keyword_engine, trace_ctx=ctx)
    recorder = NecessitySpanRecorder(provider, link_after_s=60)
    assert recorder.placement(result) == "child"
    late = NecessityResult(
        "late", result.eng, None, result.started_ns, result.started_ns + 61 * 10**9, ctx
    )
    assert recorder.placement(late) == "link"
    recorder(late)
    assert len(only_span(exporter).links) == 1


def test_no_request_span_gives_a_root_even_inside_another_span(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    result = evaluate(keyword_engine)
    with provider.get_tracer("app").start_as_current_span("unrelated"):
        NecessitySpanRecorder(provider)(result)  # e.g. inline mode, on the caller's thread
    span = only_span(exporter)
    assert span.parent is None and not span.links
    assert span.attributes["ene.placement"] == "root"


def test_dispatcher_background_mode_parents_on_the_worker_thread(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    recorder = NecessitySpanRecorder(provider)
    dispatcher = NecessityDispatcher(keyword_engine, recorders=[recorder])
    threads: list[str] = []
    dispatcher.recorders.append(lambda r: threads.append(threading.current_thread().name))
    with provider.get_tracer("app").start_as_current_span("rag") as rag:
        dispatcher.dispatch("bg", ANSWER, CONTEXTS, trace=current_span_context())
    dispatcher.result("bg", timeout=10)
    span = only_span(exporter)
    assert span.parent is not None and span.parent.span_id == rag.get_span_context().span_id
    assert threads and threads[0] != threading.current_thread().name
    assert recorder.stats["spans"] == 1


# -- errors, limits, truncation -----------------------------------------------------------------
def test_error_result(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    failed = NecessityResult("bad", None, "OracleError: model crashed", 10, 20, None, None)
    NecessitySpanRecorder(provider)(failed)
    span = only_span(exporter)
    assert span.status.status_code is trace.StatusCode.ERROR
    assert span.status.description == "OracleError: model crashed"
    assert span.attributes["error.type"] == "OracleError"
    assert span.attributes["ene.status"] == "error" and not span.events


def test_recorder_never_raises(provider: TracerProvider, caplog: pytest.LogCaptureFixture) -> None:
    recorder = NecessitySpanRecorder(provider)
    with caplog.at_level(logging.WARNING, logger="ene.otel"):
        recorder(object())  # not a NecessityResult
        recorder(None)
    assert recorder.stats["failures"] == 2
    assert len([r for r in caplog.records if r.name == "ene.otel"]) == 1  # logged once


def test_sdk_limits_are_respected_and_drops_counted(
    keyword_engine: NecessityEngine,
    exporter: InMemorySpanExporter,
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = SpanLimits(max_span_attributes=12, max_events=4, max_event_attributes=3)
    tp = TracerProvider(span_limits=limits)
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = NecessitySpanRecorder(tp)
    with caplog.at_level(logging.WARNING):
        recorder(evaluate(keyword_engine))
    span = only_span(exporter)
    assert span.dropped_attributes == 0 and span.dropped_events == 0  # we capped, not the SDK
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]
    a = span.attributes
    assert len(a) == 12 and a["openinference.span.kind"] == "EVALUATOR"
    assert a["ene.attributes.dropped"] > 0
    assert [e.name for e in span.events] == [GENAI_EVENT] * 3 + [CLAIM_EVENT]
    assert a["ene.claim_events.dropped"] == 2
    assert all(len(e.attributes) <= 3 for e in span.events)
    assert recorder.stats["dropped_events"] == 2


def test_an_evaluation_cut_by_the_attribute_cap_is_omitted_whole(
    keyword_engine: NecessityEngine, exporter: InMemorySpanExporter
) -> None:
    result = evaluate(keyword_engine)
    recorder = NecessitySpanRecorder(TracerProvider())
    assert result.eng is not None
    keys = list(recorder._attributes(result, "root", answer_evaluations(result.eng), 0)[0])
    first = keys.index("evaluations.0.evaluation.name")
    assert keys[first + 1] == "evaluations.0.evaluation.score"
    tp = TracerProvider(span_limits=SpanLimits(max_span_attributes=first + 2))
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    NecessitySpanRecorder(tp)(result)  # room for evaluations.0's name only
    a = only_span(exporter).attributes
    assert not [k for k in a if k.startswith("evaluations.")]
    assert a["ene.attributes.dropped"] > 0 and a["openinference.span.kind"] == "EVALUATOR"


def test_sampled_out_requests_cost_nothing(
    keyword_engine: NecessityEngine, exporter: InMemorySpanExporter
) -> None:
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    tp = TracerProvider(sampler=ALWAYS_OFF)
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    recorder = NecessitySpanRecorder(tp)
    recorder(evaluate(keyword_engine))
    assert exporter.get_finished_spans() == ()
    assert recorder.stats["failures"] == 0


def test_own_caps_and_truncation(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    contexts = [{"id": f"doc-{i:02d}-" + "x" * 60, "text": f"Filler {i}."} for i in range(30)]
    contexts.append(CONTEXTS[0])
    dispatcher = NecessityDispatcher(keyword_engine, mode="inline")
    result = dispatcher.dispatch("r", ANSWER, contexts)
    assert result is not None
    recorder = NecessitySpanRecorder(
        provider, max_value_length=32, max_claim_events=1, max_list_items=5
    )
    recorder(result)
    a = only_span(exporter).attributes
    assert len(a["ene.contexts.unused_ids"]) == 5
    assert all(len(x) <= 32 and x.endswith("…") for x in a["ene.contexts.unused_ids"])
    assert a["ene.list_items.dropped"] >= 25
    assert a["ene.claim_events.dropped"] == 2
    assert all(len(v) <= 32 for v in a.values() if isinstance(v, str))


# -- the adapters, in every mode ------------------------------------------------------------------
class OTelLogs(logging.Handler):
    """Collects WARNING+ records from OpenTelemetry's loggers (e.g. 'Failed to detach context')."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("opentelemetry"):
            self.records.append(record)


@pytest.fixture
def otel_logs() -> Iterator[OTelLogs]:
    grab = OTelLogs()
    logging.getLogger().addHandler(grab)
    yield grab
    logging.getLogger().removeHandler(grab)


def wait_for_spans(exporter: InMemorySpanExporter, n: int) -> list[ReadableSpan]:
    for _ in range(200):
        spans = [s for s in exporter.get_finished_spans() if s.name == SPAN_NAME]
        if len(spans) >= n:
            return spans
        threading.Event().wait(0.05)
    raise AssertionError(f"expected {n} {SPAN_NAME} spans, got {len(spans)}")


def check_placement(
    spans: list[ReadableSpan], parents: dict[int, int], framework: str, link_mode: str
) -> None:
    """One span per request, placed by the span that was current for its request: its child,
    or (link mode) a new trace with exactly one link to it."""
    assert len({s.attributes["ene.request_id"] for s in spans}) == len(spans)
    for span in spans:
        if link_mode == "link":
            assert span.parent is None and len(span.links) == 1
            target = span.links[0].context
            assert span.context.trace_id != target.trace_id
        else:
            assert span.parent is not None and not span.links
            target = span.parent
        assert parents[target.trace_id] == target.span_id
        assert span.attributes["ene.placement"] == ("link" if link_mode == "link" else "child")
        assert span.attributes["ene.framework"] == framework
        assert span.attributes["ene.status"] == "ok"
        assert span.attributes["ene.contexts.total"] == 4
        assert span.attributes["ene.claims.supported"] == 2
    targets = [(s.links[0].context if s.links else s.parent).span_id for s in spans]
    assert sorted(set(targets)) == sorted(parents.values())


LC_MODES = ["invoke", "ainvoke", "stream", "astream", "batch", "abatch"]


@pytest.mark.parametrize(
    ("handler_mode", "link_mode"),
    [("background", "auto"), ("inline", "auto"), ("background", "link")],
)
@pytest.mark.parametrize("mode", LC_MODES)
def test_langchain_modes(
    mode: str,
    handler_mode: str,
    link_mode: str,
    keyword_engine: NecessityEngine,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    otel_logs: OTelLogs,
) -> None:
    pytest.importorskip("langchain_core")
    import asyncio

    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough

    from ene_integrations.langchain import NecessityCallbackHandler

    class ListRetriever(BaseRetriever):
        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return [Document(c["text"], id=c["id"]) for c in CONTEXTS]

    prompt = ChatPromptTemplate.from_template("{context}\n\nQuestion: {question}")
    chain = (
        {"context": ListRetriever(), "question": RunnablePassthrough()}
        | prompt
        | FakeListChatModel(responses=[ANSWER])
        | StrOutputParser()
    )
    recorder = NecessitySpanRecorder(provider, link_mode=link_mode)  # type: ignore[arg-type]
    handler = NecessityCallbackHandler(keyword_engine, mode=handler_mode, recorders=[recorder])
    config: Any = {"callbacks": [handler]}
    tracer = provider.get_tracer("app")
    parents: dict[int, int] = {}

    async def run(i: int) -> list[str]:
        with tracer.start_as_current_span(f"request-{i}") as span:
            ctx = span.get_span_context()
            parents[ctx.trace_id] = ctx.span_id
            if mode == "invoke":
                return [chain.invoke("q", config)]
            if mode == "ainvoke":
                return [await chain.ainvoke("q", config)]
            if mode == "stream":
                return ["".join(chain.stream("q", config))]
            if mode == "astream":
                return ["".join([c async for c in chain.astream("q", config)])]
            if mode == "batch":
                return chain.batch(["q1", "q2"], config)
            return await chain.abatch(["q1", "q2"], config)

    async def main() -> list[str]:
        out: list[str] = []
        for i in range(2):
            out += await run(i)
        return out

    outputs = asyncio.run(main())
    per_request = 2 if "batch" in mode else 1
    assert outputs == [ANSWER] * 2 * per_request  # the app's output is untouched
    spans = wait_for_spans(exporter, 2 * per_request)
    assert len(spans) == 2 * per_request
    check_placement(spans, parents, "langchain", link_mode)  # a batch: both under its span
    assert recorder.stats["failures"] == 0
    assert not otel_logs.records


LI_MODES = ["query", "aquery", "stream", "astream", "batch"]


@pytest.mark.parametrize("link_mode", ["auto", "link"])
@pytest.mark.parametrize("mode", LI_MODES)
def test_llama_index_modes(
    mode: str,
    link_mode: str,
    keyword_engine: NecessityEngine,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    otel_logs: OTelLogs,
) -> None:
    pytest.importorskip("llama_index.core")
    import asyncio

    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback

    from ene_integrations import llama_index as eli

    class FixedLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="fixed")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
            return CompletionResponse(text=ANSWER)

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any) -> Any:
            def gen() -> Iterator[CompletionResponse]:
                text = ""
                for word in ANSWER.split(" "):
                    delta = word if not text else " " + word
                    text += delta
                    yield CompletionResponse(text=text, delta=delta)

            return gen()

    Settings.llm = FixedLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    index = VectorStoreIndex.from_documents([Document(text=c["text"]) for c in CONTEXTS])
    recorder = NecessitySpanRecorder(provider, link_mode=link_mode)  # type: ignore[arg-type]
    eli.uninstrument()
    handler = eli.instrument(engine=keyword_engine, recorders=[recorder])
    tracer = provider.get_tracer("app")
    parents: dict[int, int] = {}

    async def run(i: int) -> str:
        streaming = mode in ("stream", "astream")
        engine = index.as_query_engine(similarity_top_k=4, streaming=streaming)
        with tracer.start_as_current_span(f"request-{i}") as span:
            ctx = span.get_span_context()
            parents[ctx.trace_id] = ctx.span_id
            if mode == "query":
                return str(engine.query("Paris?"))
            if mode == "stream":
                return "".join(engine.query("Paris?").response_gen)
            if mode == "astream":
                response = await engine.aquery("Paris?")
                return "".join([t async for t in response.async_response_gen()])
            return str(await engine.aquery("Paris?"))

    async def main() -> list[str]:
        if mode == "batch":  # concurrent requests, each in its own span
            return list(await asyncio.gather(run(0), run(1)))
        return [await run(0), await run(1)]

    try:
        outputs = asyncio.run(main())
        assert outputs == [ANSWER] * 2
        spans = wait_for_spans(exporter, 2)
    finally:
        eli.uninstrument()
    assert len(spans) == 2 and handler.dispatcher.recorders[-1] is recorder
    check_placement(spans, parents, "llama_index", link_mode)
    assert recorder.stats["failures"] == 0
    assert not otel_logs.records


# -- Phoenix document annotations ---------------------------------------------------------------
def test_document_refs_and_ref_formats(provider: TracerProvider) -> None:
    ctx = request_span(provider)
    refs = document_refs(ctx, 2, start=1)
    hex_id = f"{ctx.span_id:016x}"
    assert refs == [{"span_id": hex_id, "position": 1}, {"span_id": hex_id, "position": 2}]
    assert document_refs(None, 2) == [None, None]
    assert document_ref({"span_id": ctx.span_id, "position": 3}) == (hex_id, 3)
    llama = {"position": 0, "retriever_trace": ctx, "retriever_position": 4}
    assert document_ref(llama) == (hex_id, 4)
    assert document_ref({"span_context": ctx, "position": 0}) == (hex_id, 0)
    for bad in (None, {"run_id": "x", "position": 0}, {"span_id": "nothex", "position": 0}):
        assert document_ref(bad) is None
    assert document_ref({"span_id": hex_id, "position": -1}) is None
    assert document_ref({"span_id": hex_id, "position": True}) is None


def test_document_annotations_labels_scores_and_explanations(
    keyword_engine: NecessityEngine, provider: TracerProvider
) -> None:
    retriever = request_span(provider)
    refs = document_refs(retriever, len(CONTEXTS))
    refs[2] = None  # this context's retriever span is unknown: no annotation
    result = evaluate(keyword_engine, metadata={"documents": refs})
    anns = document_annotations(result)
    # "tower" and "tower2" tie for the robust claim; the engine breaks ties by content (not
    # position) and keeps "tower2".
    assert [(a["document_position"], a["result"]["label"]) for a in anns] == [
        (0, "necessary"),
        (1, "unused"),
        (3, "used"),
    ]
    eng = result.eng
    assert eng is not None
    for ann in anns:
        ctx = eng.contexts[ann["document_position"]]
        assert ann["name"] == "ene.necessity" and ann["annotator_kind"] == "CODE"
        assert ann["span_id"] == f"{retriever.span_id:016x}"
        assert ann["result"]["score"] == pytest.approx(ctx.necessity_score)
        assert ann["metadata"]["context_id"] == ctx.id
    assert anns[0]["result"]["explanation"].startswith("Needed by claim 1")  # counted from 1
    assert "Paris" not in anns[0]["result"]["explanation"]
    with_text = document_annotations(result, capture_content=True)
    assert '"Paris is the capital of France."' in with_text[0]["result"]["explanation"]
    assert document_annotations(evaluate(keyword_engine)) == []  # no documents metadata


class RecordingSpans:
    """Stands in for ``phoenix.client.Client().spans``; fails the first ``fail`` calls."""

    def __init__(self, fail: int = 0) -> None:
        self.calls: list[list[dict[str, Any]]] = []
        self.fail = fail

    def log_document_annotations(self, *, document_annotations: list[Any], sync: bool) -> None:
        if self.fail:
            self.fail -= 1
            raise ConnectionError("phoenix is down")
        assert sync is False
        self.calls.append(list(document_annotations))


class RecordingClient:
    def __init__(self, fail: int = 0) -> None:
        self.spans = RecordingSpans(fail)


def test_annotator_batches_counts_failures_and_never_raises(
    keyword_engine: NecessityEngine, provider: TracerProvider, caplog: pytest.LogCaptureFixture
) -> None:
    retriever = request_span(provider)
    result = evaluate(keyword_engine, metadata={"documents": document_refs(retriever, 4)})
    client = RecordingClient(fail=1)
    annotator = PhoenixDocumentAnnotator(client, batch_size=3, flush_interval_s=0.05)
    with caplog.at_level(logging.WARNING, logger="ene.phoenix"):
        annotator(result)  # 4 annotations: a batch of 3 (fails), then 1
        assert annotator.flush(10)
        annotator(result)
        annotator(result)
        assert annotator.flush(10)
    stats = annotator.stats
    assert stats["queued"] == 12 and stats["failed"] == 3 and stats["sent"] == 9
    assert sum(len(c) for c in client.spans.calls) == 9
    assert max(len(c) for c in client.spans.calls) == 3
    assert len([r for r in caplog.records if "phoenix is down" in r.getMessage()]) == 1
    annotator.close(1)
    annotator(result)  # after close: ignored, no raise
    assert annotator.stats["queued"] == 12


def test_annotator_sends_on_its_own_in_batches(
    keyword_engine: NecessityEngine, provider: TracerProvider
) -> None:
    retriever = request_span(provider)
    result = evaluate(keyword_engine, metadata={"documents": document_refs(retriever, 4)})
    client = RecordingClient()
    annotator = PhoenixDocumentAnnotator(client, flush_interval_s=2.0)
    annotator(result)
    annotator(result)  # joins the waiting batch
    for _ in range(300):  # no flush(): the thread sends once the oldest has waited
        if annotator.stats["sent"] == 8:
            break
        threading.Event().wait(0.05)
    assert annotator.stats["sent"] == 8 and annotator.stats["batches"] == 1
    assert [len(c) for c in client.spans.calls] == [8]
    annotator.close(1)


def test_annotator_queue_is_bounded(
    keyword_engine: NecessityEngine, provider: TracerProvider
) -> None:
    retriever = request_span(provider)
    result = evaluate(keyword_engine, metadata={"documents": document_refs(retriever, 4)})
    gate = threading.Event()

    class Slow(RecordingSpans):
        def log_document_annotations(self, **kw: Any) -> None:
            gate.wait(5)
            super().log_document_annotations(**kw)

    client = RecordingClient()
    client.spans = Slow()
    annotator = PhoenixDocumentAnnotator(client, batch_size=1, max_queue=4, flush_interval_s=0.01)
    for _ in range(3):
        annotator(result)
    gate.set()
    assert annotator.flush(10)
    stats = annotator.stats
    assert stats["dropped"] >= 4 and stats["sent"] + stats["dropped"] == 12


def test_annotator_speaks_the_phoenix_rest_api(
    keyword_engine: NecessityEngine, provider: TracerProvider
) -> None:
    """The real arize-phoenix-client over an httpx mock transport: URL and body."""
    pytest.importorskip("phoenix.client")
    import json

    import httpx
    from phoenix.client import Client

    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(202, json={"data": []})

    http = httpx.Client(base_url="http://phoenix.test", transport=httpx.MockTransport(handle))
    annotator = PhoenixDocumentAnnotator(Client(http_client=http), flush_spans_first=False)
    retriever = request_span(provider)
    annotator(evaluate(keyword_engine, metadata={"documents": document_refs(retriever, 4)}))
    assert annotator.flush(10) and annotator.stats["sent"] == 4
    assert len(seen) == 1 and seen[0].url.path == "/v1/document_annotations"
    body = json.loads(seen[0].content)["data"]
    assert [d["result"]["label"] for d in body] == ["necessary", "unused", "unused", "used"]
    assert {d["span_id"] for d in body} == {f"{retriever.span_id:016x}"}


# -- with OpenInference's instrumentors: parents and retriever spans ----------------------------
@pytest.mark.parametrize("handler_mode", ["background", "inline"])
@pytest.mark.parametrize("mode", LC_MODES)
def test_langchain_with_openinference_parents_and_document_annotations(
    mode: str,
    handler_mode: str,
    keyword_engine: NecessityEngine,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    otel_logs: OTelLogs,
) -> None:
    """OpenInference's spans are never current: the ENE span's parent is OpenInference's span
    for the root run, and the annotations target the retriever span of the same trace."""
    pytest.importorskip("langchain_core")
    oi = pytest.importorskip("openinference.instrumentation.langchain")
    import asyncio

    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableParallel, RunnablePassthrough

    from ene_integrations.langchain import NecessityCallbackHandler

    class ListRetriever(BaseRetriever):
        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return [Document(c["text"], id=c["id"]) for c in CONTEXTS]

    chain = (
        RunnableParallel({"context": ListRetriever(), "question": RunnablePassthrough()})
        | (lambda x: f"{x['context']} {x['question']}")
        | FakeListChatModel(responses=[ANSWER])
    )
    instrumentor = oi.LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    handler = NecessityCallbackHandler(
        keyword_engine, mode=handler_mode, recorders=[NecessitySpanRecorder(provider)]
    )
    config: Any = {"callbacks": [handler]}

    async def run() -> int:
        if mode == "invoke":
            chain.invoke("q", config)
        elif mode == "ainvoke":
            await chain.ainvoke("q", config)
        elif mode == "stream":
            list(chain.stream("q", config))
        elif mode == "astream":
            [c async for c in chain.astream("q", config)]
        elif mode == "batch":
            return len(chain.batch(["q1", "q2"], config))
        else:
            return len(await chain.abatch(["q1", "q2"], config))
        return 1

    try:
        n = asyncio.run(run())
        spans = wait_for_spans(exporter, n)
    finally:
        instrumentor.uninstrument()
    finished = {s.context.span_id: s for s in exporter.get_finished_spans()}
    for span in spans:
        assert span.parent is not None
        root = finished[span.parent.span_id]
        assert root.parent is None and root.attributes["openinference.span.kind"] == "CHAIN"
        retriever = next(
            s
            for s in finished.values()
            if s.attributes.get("openinference.span.kind") == "RETRIEVER"
            and s.context.trace_id == span.context.trace_id
        )
        result = handler.result(str(span.attributes["ene.request_id"]), timeout=5)
        anns = document_annotations(result)
        assert {a["span_id"] for a in anns} == {f"{retriever.context.span_id:016x}"}
        assert [a["document_position"] for a in anns] == [0, 1, 2, 3]
        assert anns[0]["result"]["label"] == "necessary"
        content = retriever.attributes["retrieval.documents.0.document.content"]
        assert content == CONTEXTS[0]["text"]
    assert not otel_logs.records


@pytest.mark.parametrize("mode", LI_MODES)
def test_llama_index_with_openinference_parents_and_document_annotations(
    mode: str,
    keyword_engine: NecessityEngine,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
    otel_logs: OTelLogs,
) -> None:
    """The ENE span's parent is OpenInference's synthesize span; annotations target the
    retriever span that lists the documents, in the same trace."""
    pytest.importorskip("llama_index.core")
    oi = pytest.importorskip("openinference.instrumentation.llama_index")
    import asyncio

    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    from ene_integrations import llama_index as eli

    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    index = VectorStoreIndex.from_documents([Document(text=c["text"]) for c in CONTEXTS])
    instrumentor = oi.LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    eli.uninstrument()
    handler = eli.instrument(engine=keyword_engine, recorders=[NecessitySpanRecorder(provider)])
    engine = index.as_query_engine(similarity_top_k=4, streaming=mode in ("stream", "astream"))

    async def one() -> Any:
        if mode == "query":
            return engine.query("Paris?")
        if mode == "stream":
            response = engine.query("Paris?")
            list(response.response_gen)
            return response
        response = await engine.aquery("Paris?")
        if mode == "astream":
            [t async for t in response.async_response_gen()]
        return response

    async def main() -> list[Any]:
        if mode == "batch":
            return list(await asyncio.gather(one(), one()))
        return [await one()]

    try:
        responses = asyncio.run(main())
        results = [handler.result(r, timeout=10) for r in responses]
        spans = wait_for_spans(exporter, len(responses))
    finally:
        eli.uninstrument()
        instrumentor.uninstrument()
    finished = {s.context.span_id: s for s in exporter.get_finished_spans()}
    by_request = {s.attributes["ene.request_id"]: s for s in spans}
    for result in results:
        span = by_request[result.request_id]
        parent = finished[span.parent.span_id]
        assert "synthesize" in parent.name.lower()
        retriever = next(  # the retriever span that lists the documents (not _retrieve)
            s
            for s in finished.values()
            if "retrieval.documents.0.document.content" in s.attributes
            and s.context.trace_id == span.context.trace_id
        )
        anns = document_annotations(result)
        assert len(anns) == 4
        assert {a["span_id"] for a in anns} == {f"{retriever.context.span_id:016x}"}
        assert sorted(a["document_position"] for a in anns) == [0, 1, 2, 3]
    assert not otel_logs.records


def test_configure_otlp_builds_a_provider_for_phoenix() -> None:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from ene_integrations.otel import configure_otlp

    tp = configure_otlp(
        "http://127.0.0.1:9/v1/traces", project_name="demo", service_name="svc", set_global=False
    )
    try:
        assert tp.resource.attributes["openinference.project.name"] == "demo"
        assert tp.resource.attributes["service.name"] == "svc"
        processors = tp._active_span_processor._span_processors
        assert [type(p) for p in processors] == [BatchSpanProcessor]
        assert processors[0].span_exporter._endpoint == "http://127.0.0.1:9/v1/traces"
        assert trace.get_tracer_provider() is not tp
    finally:
        tp.shutdown()


# -- the launcher: fail fast without a collector -------------------------------------------------
def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_launcher_without_a_collector_fails_at_once_with_one_message(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    marker = tmp_path / "ran"
    script = tmp_path / "app.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('yes')\n")
    endpoint = f"http://127.0.0.1:{_free_port()}/v1/traces"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ene_integrations.otel", "--endpoint", endpoint, str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1
    assert elapsed < 5, elapsed  # was about 2.5 minutes of retries (66 errors) before
    (line,) = done.stderr.splitlines()
    assert f"no OTLP collector at {endpoint}" in line and "Connection refused" in line
    assert "--no-check" in line and not marker.exists()  # the script did not run
    missing = subprocess.run(
        [sys.executable, "-m", "ene_integrations.otel", str(tmp_path / "nope.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert missing.returncode == 1 and "no such script" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_check_endpoint_accepts_a_listening_server_and_names_what_is_wrong() -> None:
    import socket

    from ene_integrations.otel import check_endpoint

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert check_endpoint(f"http://127.0.0.1:{port}/v1/traces") is None
    assert "Connection refused" in (check_endpoint(f"http://127.0.0.1:{port}/v1/traces") or "")
    assert check_endpoint("ftp://example.org/x") == "not an http:// or https:// URL"
    assert check_endpoint("http://127.0.0.1:99999/x").startswith("not a URL")


# -- citations and contradictions -----------------------------------------------------------------
def test_citation_scores_and_claim_flags(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    answer = (
        "Paris is the capital of France [1, 2]. Bananas are a yellow fruit [3]. "
        "The Eiffel Tower stands in Paris. The tower is 500 metres tall [4]."
    )
    contexts = [*CONTEXTS[:3], {"id": "height", "text": "The tower is 330 metres tall."}]
    dispatcher = NecessityDispatcher(keyword_engine, mode="inline")
    result = dispatcher.dispatch("req-c", answer, contexts, None)
    assert result is not None and result.eng is not None
    NecessitySpanRecorder(provider)(result)
    span = only_span(exporter)
    a = span.attributes
    # recall: claim 0 only ([2] is padding); claim 1 cites the tower, claim 2 nothing, claim 3
    # is contradicted by its own citation. Precision: [1] of [1], [2], [3], [4].
    assert a["ene.citation.recall"] == pytest.approx(1 / 4)
    assert a["ene.citation.precision"] == pytest.approx(1 / 4)
    names = [e.attributes["gen_ai.evaluation.name"] for e in span.events if e.name == GENAI_EVENT]
    assert names[-2:] == ["ene.citation_recall", "ene.citation_precision"]
    i = names.index("ene.citation_precision")
    assert a[f"evaluations.{i}.evaluation.label"] == "imprecise"
    assert "[2] of claim 1" in a[f"evaluations.{i}.evaluation.explanation"]
    claims = [e.attributes for e in span.events if e.name == CLAIM_EVENT]
    assert claims[0]["ene.claim.citation_supported"] is True
    assert tuple(claims[0]["ene.claim.cited"]) == (1, 2)
    assert tuple(claims[0]["ene.claim.citations_unneeded"]) == (2,)
    assert claims[1]["ene.claim.citation_supported"] is False
    assert tuple(claims[1]["ene.claim.citations_missing"]) == (2,)
    assert claims[2]["ene.claim.citation_supported"] is False  # uncited
    assert claims[3]["ene.claim.status"] == "contradicted"
    assert tuple(claims[3]["ene.claim.contradicted_by_context_ids"]) == ("height",)
    assert "ene.claim.contradicted_by_context_ids" not in claims[0]


def test_no_citation_attributes_without_markers(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    NecessitySpanRecorder(provider)(evaluate(keyword_engine))
    span = only_span(exporter)
    assert not [k for k in span.attributes if "citation" in k]
    assert not [k for e in span.events for k in e.attributes if "citation" in k]


def test_chunks_carrying_an_inner_answer_name_its_request(
    keyword_engine: NecessityEngine, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    contexts = [
        {
            "id": "tool-1",
            "text": "Paris is the capital of France.",
            "metadata": {"ene_source": "q-7"},
        },
        {"id": "doc-2", "text": "Bananas are yellow."},
    ]
    out = NecessityDispatcher(keyword_engine, mode="inline").dispatch(
        "agent-1", "Paris is the capital of France.", contexts, "Where?"
    )
    assert out is not None and out.ok
    NecessitySpanRecorder(provider)(out)
    assert only_span(exporter).attributes["ene.contexts.sources"] == ("q-7", "")
    exporter.clear()
    NecessitySpanRecorder(provider)(evaluate(keyword_engine))  # no inner answers: no attribute
    assert "ene.contexts.sources" not in only_span(exporter).attributes
