"""The LlamaIndex adapter against real llama-index-core objects (mock embedding, extractive LLM)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.chat_engine import (
    CondensePlusContextChatEngine,
    CondenseQuestionChatEngine,
    ContextChatEngine,
)
from llama_index.core.chat_engine.types import AgentChatResponse
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ene_core import NecessityEngine, Scores
from ene_integrations import llama_index as eli
from ene_integrations.llama_index.handler import _EventTap, _OpenSpans, _Span, _SpanTap

DOCS = [
    "Paris is the capital of France.",
    "The Eiffel Tower is 330 metres tall.",
    "Bananas are rich in potassium.",
    "The Louvre is the most visited museum in the world.",
]
TOPICS = [
    "What is the capital city of France?",
    "How tall is the Eiffel Tower?",
    "Which museum is the most visited?",
    "What is the capital of France and how tall is the Eiffel Tower?",
]
_SKIP = {"what", "which", "where", "when", "does", "tell", "about", "with", "from", "that", "this"}


class ExtractiveLLM(CustomLLM):
    """Answers with the prompt's sentences that share a keyword with the question."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="extractive")

    @staticmethod
    def answer(prompt: str) -> str:
        lines = [line.strip() for line in prompt.splitlines()]
        asks = [line for line in lines if line.lower().startswith(("query:", "user:"))]
        query = asks[-1].split(":", 1)[1] if asks else ""
        keys = {w for w in re.findall(r"[a-z]+", query.lower()) if len(w) > 3} - _SKIP
        picked: list[str] = []
        for line in lines:
            if line in asks:
                continue
            for sentence in re.split(r"(?<=\.)\s+", line):
                if sentence and keys & set(re.findall(r"[a-z]+", sentence.lower())):
                    picked.append(sentence)
        return " ".join(dict.fromkeys(picked)) or "I don't know."

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def tokens() -> Iterator[CompletionResponse]:
            text = ""
            for word in re.findall(r"\S+\s*", self.answer(prompt)):
                text += word
                yield CompletionResponse(text=text, delta=word)

        return tokens()


class DropBananas(BaseNodePostprocessor):
    """A node postprocessor that removes nodes after retrieval."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return [n for n in nodes if "Bananas" not in n.node.get_content()]


class _Faulty:
    name = "faulty"
    revision: str | None = None
    default_threshold: float | None = 0.5

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class RaisingOracle(_Faulty):
    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        raise RuntimeError("the verifier is down")


class GarbageOracle(_Faulty):
    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        return [Scores(7.0, -3.0)] * len(pairs)


class HangingOracle(_Faulty):
    def __init__(self) -> None:
        self.release = threading.Event()

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        self.release.wait(30)
        return [Scores(0.0, 0.0)] * len(pairs)


# -- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def offline_models() -> Iterator[None]:
    """Mocks everywhere so nothing reaches a hosted LLM or embedding API."""
    Settings.llm = ExtractiveLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    eli.uninstrument()


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    return VectorStoreIndex.from_documents([Document(text=t) for t in DOCS])


@pytest.fixture
def handler(keyword_engine: NecessityEngine) -> Iterator[eli.NecessityHandler]:
    yield eli.instrument(engine=keyword_engine)
    eli.uninstrument()


def ids(nodes: Sequence[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in nodes]


def texts(nodes: Sequence[NodeWithScore]) -> list[str]:
    return [n.node.get_content() for n in nodes]


def check(eng: Any, answer: str, question: str, nodes: Sequence[NodeWithScore]) -> None:
    """The graph belongs to this request: same answer, question and nodes, in order."""
    assert eng is not None
    assert eng.answer == answer
    assert eng.question == question
    assert [c.id for c in eng.contexts] == ids(nodes)


def without_ene(metadata: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (metadata or {}).items() if not k.startswith("ene")}


# -- the handler ---------------------------------------------------------------------------------
def test_query_attaches_the_graph_of_its_own_answer(index, handler) -> None:
    engine = index.as_query_engine(similarity_top_k=4)
    response = engine.query(TOPICS[0])
    assert str(response) == DOCS[0]
    result = handler.result(response, timeout=10)
    check(result.eng, DOCS[0], TOPICS[0], response.source_nodes)
    assert "ene" not in response.metadata and "ene_request_id" not in response.metadata
    paris = ids(response.source_nodes)[texts(response.source_nodes).index(DOCS[0])]
    assert [c.id for c in result.eng.contexts if c.used] == [paris]
    assert result.eng.claims[0].classification == "fragile"
    # the node-id keyed metadata LlamaIndex puts there is untouched
    assert set(response.metadata) == set(ids(response.source_nodes))


async def test_aquery(index, handler) -> None:
    response = await index.as_query_engine(similarity_top_k=4).aquery(TOPICS[3])
    result = await handler.aresult(response, timeout=10)
    check(result.eng, str(response), TOPICS[3], response.source_nodes)
    assert result.eng.counts.supported == 2
    assert result.eng.counts.contexts_used == 2


def test_sync_stream_is_evaluated_when_exhausted(index, handler) -> None:
    response = index.as_query_engine(similarity_top_k=4, streaming=True).query(TOPICS[1])
    request_id = handler.request_id(response)
    assert request_id not in handler.dispatcher.results  # nothing to evaluate before the tokens
    tokens = list(response.response_gen)
    assert "".join(tokens) == DOCS[1]
    result = handler.result(response, timeout=10)
    check(result.eng, DOCS[1], TOPICS[1], response.source_nodes)
    assert "ene" not in (response.metadata or {})


async def test_async_stream_is_evaluated_when_exhausted(index, handler) -> None:
    engine = index.as_query_engine(similarity_top_k=4, streaming=True)
    response = await engine.aquery(TOPICS[2])
    text = "".join([t async for t in response.async_response_gen()])
    assert text == DOCS[3]
    result = await handler.aresult(response, timeout=10)
    check(result.eng, DOCS[3], TOPICS[2], response.source_nodes)
    assert "ene" not in (response.metadata or {})


def test_closed_stream_records_why_and_keeps_no_state(index, handler) -> None:
    response = index.as_query_engine(similarity_top_k=4, streaming=True).query(TOPICS[3])
    first = next(response.response_gen)
    assert first
    response.response_gen.close()
    result = handler.result(response, timeout=1)
    assert result.eng is None and "closed before it finished" in result.error
    assert len(handler._spans) == 0 and len(handler._outer) == 0


async def test_cancelled_async_stream_records_why(index, handler) -> None:
    engine = index.as_query_engine(similarity_top_k=4, streaming=True)
    response = await engine.aquery(TOPICS[3])
    assert await response.response_gen.__anext__()
    await response.response_gen.aclose()
    result = await handler.aresult(response, timeout=1)
    assert result.eng is None and "closed before it finished" in result.error


def test_state_is_capped(index, keyword_engine) -> None:
    handler = eli.instrument(engine=keyword_engine, max_results=2)
    engine = index.as_query_engine(similarity_top_k=4, streaming=True)
    responses = [engine.query(TOPICS[0]) for _ in range(5)]  # never consumed
    assert len(handler._by_object) == 2 and len(responses) == 5
    spans = _OpenSpans(3)
    for i in range(5):
        spans.enter(f"s{i}", _Span(None, False))
    assert len(spans) == 3 and spans.get("s0") is None and spans.get("s4") is not None


def test_unconsumed_streams_are_evicted_after_the_ttl(index, keyword_engine) -> None:
    handler = eli.instrument(engine=keyword_engine, ttl_s=0.05)
    engine = index.as_query_engine(similarity_top_k=4, streaming=True)
    responses = [engine.query(TOPICS[0]) for _ in range(3)]
    assert len(handler._by_object) == 3
    threading.Event().wait(0.1)
    assert len(handler._by_object) == 0 and len(handler._retrievals) == 0
    assert len(responses) == 3


def _chat_engine(kind: str, index: VectorStoreIndex) -> Any:
    if kind == "condense_question":
        return CondenseQuestionChatEngine.from_defaults(index.as_query_engine(similarity_top_k=4))
    engine_type = {"condense_plus_context": CondensePlusContextChatEngine}.get(
        kind, ContextChatEngine
    )
    return engine_type.from_defaults(index.as_retriever(similarity_top_k=4))


@pytest.mark.parametrize("kind", ["condense_plus_context", "context", "condense_question"])
def test_chat_engine_responses_carry_the_graph(index, handler, kind) -> None:
    chat = _chat_engine(kind, index)
    reply = chat.chat(TOPICS[1])
    assert reply.response == DOCS[1]
    result = handler.result(reply, timeout=10)
    check(result.eng, DOCS[1], TOPICS[1], reply.source_nodes)
    assert reply.metadata is None
    chat.reset()  # the mock LLM would otherwise also quote the history
    stream = chat.stream_chat(TOPICS[0])
    assert "".join(stream.response_gen) == DOCS[0]
    check(handler.result(stream, timeout=10).eng, DOCS[0], TOPICS[0], stream.source_nodes)


async def test_async_chat_engine(index, handler) -> None:
    chat = CondensePlusContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4))
    reply = await chat.achat(TOPICS[2])
    check((await handler.aresult(reply, timeout=10)).eng, DOCS[3], TOPICS[2], reply.source_nodes)
    stream = await chat.astream_chat(TOPICS[1])
    text = "".join([t async for t in stream.async_response_gen()])
    assert text == DOCS[1]
    check((await handler.aresult(stream, timeout=10)).eng, DOCS[1], TOPICS[1], stream.source_nodes)


def test_graph_uses_the_nodes_left_after_postprocessing(index, handler) -> None:
    engine = index.as_query_engine(similarity_top_k=4, node_postprocessors=[DropBananas()])
    response = engine.query(TOPICS[0])
    eng = handler.result(response, timeout=10).eng
    assert len(response.source_nodes) == 3
    assert all("Bananas" not in c.text for c in eng.contexts)
    check(eng, DOCS[0], TOPICS[0], response.source_nodes)
    documents = handler.result(response).metadata["documents"]
    assert [d["position"] for d in documents] == [0, 1, 2]
    assert all(
        d["retriever_span_id"].startswith("VectorIndexRetriever.retrieve") for d in documents
    )


async def test_200_concurrent_aqueries_each_get_their_own_graph(index, handler) -> None:
    engine = index.as_query_engine(similarity_top_k=4)
    questions = [f"{TOPICS[i % 4]} ({i})" for i in range(200)]
    responses = await asyncio.gather(*(engine.aquery(q) for q in questions))
    results = await asyncio.gather(*(handler.aresult(r, timeout=30) for r in responses))
    assert len({r.request_id for r in results}) == 200
    for question, response, result in zip(questions, responses, results, strict=True):
        check(result.eng, str(response), question, response.source_nodes)
        assert "ene" not in response.metadata


def test_inline_mode_attaches_before_returning(index, keyword_engine) -> None:
    seen: list[str] = []
    handler = eli.instrument(
        engine=keyword_engine,
        mode="inline",
        attach_metadata=True,
        on_result=lambda rid, eng: seen.append(rid),
    )
    response = index.as_query_engine(similarity_top_k=4).query(TOPICS[2])
    assert response.metadata["ene"].answer == DOCS[3]
    assert seen == [handler.request_id(response)]


async def test_inline_mode_async_stream_has_the_graph_when_exhausted(index, keyword_engine) -> None:
    handler = eli.instrument(engine=keyword_engine, mode="inline")
    response = await index.as_query_engine(similarity_top_k=4, streaming=True).aquery(TOPICS[1])
    assert "".join([t async for t in response.async_response_gen()]) == DOCS[1]
    done = handler.dispatcher.results.get(handler.request_id(response))
    assert done.eng.answer == DOCS[1]  # no waiting: evaluated before the end


def test_instrument_twice_gives_one_result_per_query(index, keyword_engine) -> None:
    seen: list[str] = []
    first = eli.instrument(engine=keyword_engine, on_result=lambda rid, eng: seen.append(rid))
    assert eli.instrument() is first
    root = get_dispatcher()
    assert sum(isinstance(h, _EventTap) for h in root.event_handlers) == 1
    assert sum(isinstance(h, _SpanTap) for h in root.span_handlers) == 1
    engine = index.as_query_engine(similarity_top_k=4)
    responses = [engine.query(q) for q in TOPICS[:3]]
    for r in responses:
        first.result(r, timeout=10)
    assert sorted(seen) == sorted(first.request_id(r) for r in responses)
    second = eli.NecessityHandler(engine=keyword_engine)
    assert eli.instrument(second) is second and eli.installed_handler() is second
    assert sum(isinstance(h, _EventTap) for h in root.event_handlers) == 1
    assert eli.uninstrument() is True and eli.uninstrument() is False
    assert "ene_request_id" not in (engine.query(TOPICS[0]).metadata or {})


@pytest.mark.parametrize("oracle_type", [RaisingOracle, GarbageOracle, HangingOracle])
def test_faulty_oracle_leaves_the_response_identical(index, oracle_type) -> None:
    engine = index.as_query_engine(similarity_top_k=4)
    plain = engine.query(TOPICS[3])
    oracle = oracle_type()
    faulty = NecessityEngine(oracle)
    errors: list[str] = []
    handler = eli.instrument(
        engine=faulty, mode="inline", inline_timeout_s=0.2, on_error=lambda rid, e: errors.append(e)
    )
    try:
        response = engine.query(TOPICS[3])
        assert str(response) == str(plain)
        assert texts(response.source_nodes) == texts(plain.source_nodes)
        assert without_ene(response.metadata) == without_ene(plain.metadata)
        assert "ene" not in response.metadata
        result = handler.result(response, timeout=1)
        assert result.eng is None and result.error
        assert errors == [result.error]
    finally:
        if isinstance(oracle, HangingOracle):
            oracle.release.set()
        faulty.close()


def test_a_handler_bug_is_recorded_not_raised(index, handler, monkeypatch) -> None:
    def broken(node: Any) -> dict[str, Any]:
        raise ValueError("cannot read this node")

    monkeypatch.setattr("ene_integrations.llama_index.handler._context", broken)
    response = index.as_query_engine(similarity_top_k=4).query(TOPICS[0])
    assert str(response) == DOCS[0]
    result = handler.result(response, timeout=1)
    assert "cannot read this node" in result.error, result


def test_trace_is_the_span_current_at_synthesis(index, keyword_engine) -> None:
    trace_sdk = pytest.importorskip("opentelemetry.sdk.trace")
    recorded: list[Any] = []
    handler = eli.instrument(engine=keyword_engine, recorders=[recorded.append])
    tracer = trace_sdk.TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("request") as span:
        response = index.as_query_engine(similarity_top_k=4).query(TOPICS[0])
    handler.result(response, timeout=10)
    assert recorded[0].trace == span.get_span_context()
    assert recorded[0].metadata["synthesize_span_id"] == handler.request_id(response)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # OpenInference's own pydantic use
def test_openinference_spans_give_the_parent_and_the_retriever_refs(index, keyword_engine) -> None:
    oi = pytest.importorskip("openinference.instrumentation.llama_index")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = oi.LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        handler = eli.instrument(engine=keyword_engine)
        response = index.as_query_engine(similarity_top_k=4).query(TOPICS[0])
        result = handler.result(response, timeout=10)
    finally:
        instrumentor.uninstrument()
    names = {s.context.span_id: s.name for s in exporter.get_finished_spans()}
    assert names[result.trace.span_id] == "CompactAndRefine.synthesize"
    documents = result.metadata["documents"]
    assert {names[d["retriever_trace"].span_id] for d in documents} == {
        "VectorIndexRetriever.retrieve"
    }
    assert sorted(d["retriever_position"] for d in documents) == [0, 1, 2, 3]


# -- ENE never writes into what the app gets ------------------------------------------------------
def _metadata_snapshot(response: Any) -> tuple[type, str]:
    metadata = response.metadata
    for _ in metadata or {}:  # iterating right after the call must never race with ENE
        pass
    return type(metadata), json.dumps(metadata, sort_keys=True)


async def test_metadata_is_identical_with_and_without_ene_under_concurrency(
    index, keyword_engine
) -> None:
    engine = index.as_query_engine(similarity_top_k=4)
    questions = [TOPICS[i % 4] for i in range(40)]

    async def one(question: str) -> tuple[Any, ...]:
        response = await engine.aquery(question)
        snapshot = _metadata_snapshot(response)  # right after the call, while ENE evaluates
        chat = ContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4))
        reply = await chat.achat(question)
        return (response, snapshot, reply, reply.metadata)

    async def run_all() -> list[tuple[Any, ...]]:
        return list(await asyncio.gather(*(one(q) for q in questions)))

    plain = await run_all()
    handler = eli.instrument(engine=keyword_engine)
    traced = await run_all()
    for (r0, snap0, c0, m0), (r1, snap1, c1, m1) in zip(plain, traced, strict=True):
        assert snap1 == snap0 and snap1[0] is dict
        assert m0 is None and m1 is None  # a chat reply's None stays None
        assert str(r1) == str(r0) and c1.response == c0.response
    for response, snapshot, reply, _ in traced:  # after every ENG exists: still untouched
        assert (await handler.aresult(response, timeout=30)).eng is not None
        assert (await handler.aresult(reply, timeout=30)).eng is not None
        assert _metadata_snapshot(response) == snapshot and reply.metadata is None


def test_attach_metadata_is_opt_in_and_written_before_the_call_returns(index, keyword_engine):
    seen: list[Any] = []
    handler = eli.instrument(
        engine=keyword_engine,
        mode="inline",
        attach_metadata=True,
        on_result=lambda rid, eng: seen.append(threading.get_ident()),
    )
    reply = ContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4)).chat(TOPICS[0])
    assert reply.metadata["ene"] is handler.result(reply).eng  # None became a dict: asked for
    assert reply.metadata["ene_request_id"] == handler.request_id(reply)
    assert seen == [threading.get_ident()]


# -- pruning -------------------------------------------------------------------------------------
def test_prune_unused_keeps_every_necessary_node(index, keyword_engine) -> None:
    engine = index.as_query_engine(similarity_top_k=4)
    for question in TOPICS:
        response = engine.query(question)
        pruned = eli.prune_unused(
            response, engine=keyword_engine, question=question, keep="minimal"
        )
        eng = pruned.metadata["ene"]
        necessary = {eng.contexts[i].id for c in eng.claims for i in c.necessary}
        assert necessary <= set(ids(pruned.source_nodes))
        assert set(ids(pruned.source_nodes)) == {c.id for c in eng.contexts if c.used}
        info = pruned.metadata["ene_pruning"]
        assert info["dropped"] and "Bananas are rich in potassium." not in texts(
            pruned.source_nodes
        )
        assert info["tokens_saved"] == sum(c.tokens for c in eng.contexts if not c.used) > 0
        again = keyword_engine.evaluate(
            str(pruned), [n.node.get_content() for n in pruned.source_nodes]
        )
        assert again.counts.supported == eng.counts.supported
        assert len(response.source_nodes) == 4  # the original is not modified


def test_prune_unused_reevaluates_with_a_different_verifier(index, handler) -> None:
    response = index.as_query_engine(similarity_top_k=4).query(TOPICS[0])
    handler.result(response, timeout=10)
    other = NecessityEngine(GarbageOracle())
    try:
        pruned = eli.prune_unused(response, engine=other)
    finally:
        other.close()
    assert (
        "ene" not in pruned.metadata and "OracleError" in pruned.metadata["ene_pruning"]["reason"]
    )
    assert eli.prune_unused(response).metadata["ene"] is handler.result(response).eng


def test_prune_unused_fails_safe(index) -> None:
    response = index.as_query_engine(similarity_top_k=4).query(TOPICS[0])
    broken = NecessityEngine(RaisingOracle())
    try:
        pruned = eli.prune_unused(response, engine=broken)
    finally:
        broken.close()
    assert ids(pruned.source_nodes) == ids(response.source_nodes)
    assert "verifier is down" in pruned.metadata["ene_pruning"]["reason"]


def test_necessity_query_engine_prunes_sync_and_reuses_the_handlers_graph(index, handler) -> None:
    wrapped = eli.NecessityQueryEngine(index.as_query_engine(similarity_top_k=4))
    response = wrapped.query(TOPICS[3])
    assert sorted(texts(response.source_nodes)) == sorted(DOCS[:2])  # retrieval order may vary
    assert response.metadata["ene"] is handler.result(response).eng
    assert response.metadata["ene_pruning"]["tokens_saved"] > 0


async def test_necessity_query_engine_async(index, keyword_engine) -> None:
    wrapped = eli.NecessityQueryEngine(
        index.as_query_engine(similarity_top_k=4), engine=keyword_engine
    )
    response = await wrapped.aquery(TOPICS[2])
    assert texts(response.source_nodes) == [DOCS[3]]
    keep_all = eli.NecessityQueryEngine(
        index.as_query_engine(similarity_top_k=4), engine=keyword_engine, prune=False
    )
    response = await keep_all.aquery(TOPICS[2])
    assert len(response.source_nodes) == 4 and response.metadata["ene"].counts.contexts_used == 1


def test_necessity_query_engine_sync_stream(index, keyword_engine) -> None:
    inner = index.as_query_engine(similarity_top_k=4, streaming=True)
    response = eli.NecessityQueryEngine(inner, engine=keyword_engine).query(TOPICS[1])
    assert str(response) == DOCS[1]  # answered from the whole stream: pruning needs the answer
    assert texts(response.source_nodes) == [DOCS[1]]
    assert response.metadata["ene_pruning"]["dropped"]


async def test_necessity_query_engine_async_stream(index, keyword_engine) -> None:
    inner = index.as_query_engine(similarity_top_k=4, streaming=True)
    response = await eli.NecessityQueryEngine(inner, engine=keyword_engine).aquery(TOPICS[0])
    assert str(response) == DOCS[0]
    assert texts(response.source_nodes) == [DOCS[0]]
    assert response.metadata["ene"].answer == DOCS[0]


def test_prune_unused_copies_chat_replies_and_consumed_streams(index, handler) -> None:
    chat = ContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4))
    reply = chat.chat(TOPICS[1])
    before = ids(reply.source_nodes)
    pruned = eli.prune_unused(reply)
    assert isinstance(pruned, AgentChatResponse) and pruned.response == DOCS[1]
    assert texts(pruned.source_nodes) == [DOCS[1]]
    assert pruned.metadata["ene"] is handler.result(reply).eng
    assert ids(reply.source_nodes) == before and reply.metadata is None  # original untouched
    chat.reset()
    stream = chat.stream_chat(TOPICS[0])
    assert "".join(stream.response_gen) == DOCS[0]
    pruned = eli.prune_unused(stream)
    assert isinstance(pruned, AgentChatResponse) and pruned.response == DOCS[0]
    assert texts(pruned.source_nodes) == [DOCS[0]] and len(stream.source_nodes) == 4
    response = index.as_query_engine(similarity_top_k=4, streaming=True).query(TOPICS[1])
    assert "".join(response.response_gen) == DOCS[1]  # consumed without setting response_txt
    pruned = eli.prune_unused(response)  # the text comes from what ENE saw streaming
    assert str(pruned) == DOCS[1] and texts(pruned.source_nodes) == [DOCS[1]]
    assert response.response_txt is None and len(response.source_nodes) == 4
    eli.uninstrument()
    unread = index.as_query_engine(similarity_top_k=4, streaming=True).query(TOPICS[1])
    with pytest.raises(eli.InvalidInputError, match="not been consumed"):
        eli.prune_unused(unread)


@pytest.mark.parametrize("wrapper", ["query_engine", "chat_engine"])
async def test_necessity_wrappers_take_chat_engines(index, keyword_engine, wrapper) -> None:
    inner = CondensePlusContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4))
    if wrapper == "query_engine":
        wrapped: Any = eli.NecessityQueryEngine(inner, engine=keyword_engine)
        reply = wrapped.query(TOPICS[1])
        inner.reset()
        areply = await wrapped.aquery(TOPICS[0])
    else:
        wrapped = eli.NecessityChatEngine(inner, engine=keyword_engine)
        reply = wrapped.chat(TOPICS[1])
        wrapped.reset()
        areply = await wrapped.achat(TOPICS[0])
        wrapped.reset()
        stream = wrapped.stream_chat(TOPICS[0])
        assert "".join(stream.response_gen) == DOCS[0]
        assert texts(stream.source_nodes) == [DOCS[0]]
    assert reply.response == DOCS[1] and texts(reply.source_nodes) == [DOCS[1]]
    assert reply.metadata["ene_pruning"]["tokens_saved"] > 0
    assert areply.response == DOCS[0] and texts(areply.source_nodes) == [DOCS[0]]


# -- the real oracle path and the example -------------------------------------------------------
def test_real_nli_oracle_through_the_handler(index, tiny_model_dir) -> None:
    from ene_core import NLIOracle

    engine = NecessityEngine(NLIOracle(tiny_model_dir, device="cpu"))
    try:
        handler = eli.instrument(engine=engine)
        response = index.as_query_engine(similarity_top_k=4).query(TOPICS[3])
        eng = handler.result(response, timeout=60).eng
        check(eng, str(response), TOPICS[3], response.source_nodes)
        assert eng.verifier.model == tiny_model_dir and len(eng.claims) == 2
    finally:
        engine.close()


def _example() -> Any:
    path = Path(__file__).resolve().parents[1] / "examples" / "llamaindex_rag.py"
    spec = importlib.util.spec_from_file_location("llamaindex_rag_example", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_example_runs_with_the_keyword_oracle(capsys) -> None:
    out = _example().main(["--oracle", "keyword"])
    printed = capsys.readouterr().out
    assert out["eng"].counts.contexts_used == 2 and out["eng"].counts.contexts_unused == 3
    assert len(out["pruned"].source_nodes) == 2
    assert "Chunks not used:" in printed and "Bananas" in printed.split("Chunks not used:")[1]
    _example().main(["--oracle", "keyword"])
    assert capsys.readouterr().out == printed  # stable node order: the same output every run


def test_example_runs_with_the_default_verifier(capsys) -> None:
    from ene_core.verifiers.nli import DEFAULT_MODEL_DIR

    if not (DEFAULT_MODEL_DIR / "config.json").is_file():
        pytest.skip(f"the default verifier is not installed at {DEFAULT_MODEL_DIR}")
    out = _example().main([])
    assert out["eng"] is not None and out["eng"].verifier.model == "ene-nli-mini"
    assert "Claims:" in capsys.readouterr().out


class OneWordLLM(CustomLLM):
    """A fake LLM that answers every prompt with one word."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="one-word")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="Paris")

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        yield CompletionResponse(text="Paris", delta="Paris")


def test_a_one_word_answer_is_checked_as_the_answer_to_the_question(index, keyword_engine) -> None:
    handler = eli.instrument(engine=keyword_engine, mode="inline")
    question = "Which city is the capital of France?"
    response = index.as_query_engine(similarity_top_k=4, llm=OneWordLLM()).query(question)
    assert str(response) == "Paris"
    eng = handler.result(response, timeout=0).eng
    assert eng is not None and eng.question == question
    (claim,) = eng.claims
    assert claim.text == "Paris" and claim.hypothesis == "The capital of France is Paris."
    assert claim.status == "supported"
    assert [eng.contexts[i].text for i in claim.necessary] == [DOCS[0]]
