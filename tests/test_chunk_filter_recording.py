"""What the chunk filter dropped, recorded in the ENG (issue 55): ``filtered_contexts``,
``chunk_filter`` and the counts, never as contexts or unused ones; the span's ``ene.filter.*``.

Real LangChain and LlamaIndex objects (a ContextualCompressionRetriever with the compressor, a
query engine with the postprocessor), the filter shipped with ENE, the keyword engine, and the
OpenTelemetry SDK's in-memory exporter.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ene_core import EvidenceNecessityGraph, NecessityEngine
from ene_core.engine.request import Request, filter_call
from ene_core.errors import InvalidInputError
from ene_core.kit.runs import RunRecorder

QUESTION = "When does the Riverside store open on Saturdays?"
TEXTS = [
    "The Andromeda galaxy is about 2.5 million light-years from Earth.",
    "Riverside store opening hours: Monday to Saturday, 9:00 to 18:00. Closed on Sunday.",
    "Sourdough needs a starter of flour and water fed daily for a week.",
    "The 1912 Olympic marathon was won by Ken McArthur of South Africa.",
]


def answer_from(prompt: str) -> str:
    """The answering model: the prompt's line about Saturday (what a kept chunk says)."""
    lines = [line for line in prompt.splitlines() if "Saturday" in line and "?" not in line]
    return lines[0].strip() if lines else "I don't know."


# -- the core: the record, the ENG, the rule of the run model ---------------------------------------
CALL = {
    "chunks": 4,
    "kept": [1, 2],
    "dropped": [
        {"index": 0, "text": TEXTS[0], "score": 0.02},
        {"index": 3, "text": TEXTS[3], "score": 0.05, "node_id": "n3"},
    ],
    "tokens_kept": 30,
    "tokens_saved": 25,
    "threshold": 0.4,
    "model": "chunk-filter",
    "revision": "r1",
}


def test_the_eng_lists_the_filtered_chunks_apart_from_its_contexts(keyword_engine) -> None:
    eng = keyword_engine.evaluate(TEXTS[1], [TEXTS[1], TEXTS[2]], QUESTION, filtered=[CALL])
    assert [c.text for c in eng.contexts] == [TEXTS[1], TEXTS[2]]
    assert [(f.index, f.text, f.score, f.id) for f in eng.filtered_contexts] == [
        (0, TEXTS[0], 0.02, None),
        (3, TEXTS[3], 0.05, "n3"),
    ]
    assert [c.text for c in eng.unused_contexts] == [TEXTS[2]]
    record = eng.chunk_filter
    assert record is not None
    assert (record.chunks, record.kept, record.dropped, record.calls) == (4, 2, 2, 1)
    assert (record.tokens_saved, record.threshold, record.model) == (25, 0.4, "chunk-filter")
    assert eng.counts.contexts == 2 and eng.counts.contexts_unused == 1
    assert eng.counts.contexts_filtered == 2 and eng.counts.tokens_filtered == 25
    assert eng.schema_version == "1.13"
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng


def test_without_a_filter_nothing_is_listed_and_older_engs_still_load(keyword_engine) -> None:
    eng = keyword_engine.evaluate(TEXTS[1], [TEXTS[1]], QUESTION)
    assert eng.filtered_contexts == [] and eng.chunk_filter is None
    assert eng.counts.contexts_filtered == eng.counts.tokens_filtered == 0
    old = eng.model_dump(mode="json", exclude={"filtered_contexts", "chunk_filter"})
    old["schema_version"] = "1.12"
    del old["counts"]["contexts_filtered"], old["counts"]["tokens_filtered"]
    loaded = EvidenceNecessityGraph.from_dict(old)
    assert loaded.schema_version == "1.12" and loaded.chunk_filter is None
    assert loaded.counts.contexts_filtered == 0 and loaded.filtered_contexts == []


def test_a_dropped_chunk_the_model_saw_after_all_is_not_filtered(keyword_engine) -> None:
    second = {"chunks": 2, "kept": [1], "dropped": [{"index": 0, "text": TEXTS[1]}]}
    eng = keyword_engine.evaluate(TEXTS[1], [TEXTS[1]], QUESTION, filtered=[CALL, second])
    assert [f.text for f in eng.filtered_contexts] == [TEXTS[0], TEXTS[3]]
    assert [f.call for f in eng.filtered_contexts] == [0, 0]
    assert eng.chunk_filter.calls == 2 and eng.chunk_filter.dropped == 3
    assert eng.chunk_filter.chunks == 6 and eng.chunk_filter.kept == 3


def test_the_json_form_carries_the_filter_calls() -> None:
    request = Request.from_mapping(
        {"answer": TEXTS[1], "contexts": [TEXTS[1]], "question": QUESTION, "filtered": [CALL]}
    )
    (call,) = request.filtered
    assert filter_call(call.as_json()) == call
    with pytest.raises(InvalidInputError, match="'dropped'"):
        Request.from_mapping({"answer": "a", "contexts": [], "filtered": [{"kept": 1}]})
    with pytest.raises(InvalidInputError, match="list of filter calls"):
        Request.from_mapping({"answer": "a", "contexts": [], "filtered": CALL})
    with pytest.raises(InvalidInputError, match="only 1 chunks"):
        filter_call({"chunks": 1, "kept": 1, "dropped": [{"text": "x"}]})


def test_a_remote_engine_sends_the_filter_calls_in_the_json_form(keyword_engine) -> None:
    httpx = pytest.importorskip("httpx")
    import json

    from ene_core.service.remote import RemoteEngine

    bodies: list[Any] = []

    def serve(request: Any) -> Any:  # what ene serve does with a body: its JSON form
        bodies.append(json.loads(request.content))
        return httpx.Response(200, text=keyword_engine.evaluate_many(bodies[-1:])[0].to_json())

    transport = httpx.MockTransport(serve)
    with RemoteEngine("http://ene", retries=0, transport=transport) as remote:
        eng = remote.submit(TEXTS[1], [TEXTS[1]], QUESTION, filtered=[CALL]).result(timeout=10)
        plain = remote.evaluate(TEXTS[1], [TEXTS[1]], QUESTION)
    assert [f.text for f in eng.filtered_contexts] == [TEXTS[0], TEXTS[3]]
    assert eng.chunk_filter.tokens_saved == 25 and eng.counts.contexts_filtered == 2
    assert bodies[0]["filtered"][0]["dropped"][1]["id"] == "n3"
    assert "filtered" not in bodies[1] and plain.chunk_filter is None


def test_the_run_keeps_the_filter_calls_made_before_its_answering_call() -> None:
    recorder = RunRecorder()
    recorder.root_input(QUESTION)
    recorder.documents([TEXTS[1]], origin="retriever")
    recorder.chunk_filter(CALL)
    recorder.model_start("answer", f"Context: {TEXTS[1]}\nQuestion: {QUESTION}")
    recorder.chunk_filter({"dropped": [{"text": TEXTS[2]}]})  # a later retrieval's filter
    recorder.model_end("answer", TEXTS[1])
    decision = recorder.decide(TEXTS[1])
    assert decision.ok and [c.dropped[0].text for c in decision.filtered] == [TEXTS[0]]


# -- the shipped filter ---------------------------------------------------------------------------
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core.filtering.model import ChunkFilter  # noqa: E402


@pytest.fixture(scope="module")
def top_two() -> ChunkFilter:
    """Keeps exactly the best two chunks (no score reaches the threshold; min and max keep 2)."""
    return ChunkFilter(threshold=2.0, min_keep=2, max_keep=2)


def check_recorded(eng: EvidenceNecessityGraph, decision: Any) -> None:
    """The ENG's contexts are the kept chunks, its filtered contexts the dropped ones."""
    assert decision is not None and decision.error is None and len(decision.kept) == 2
    assert 1 in decision.kept  # the store's hours: the chunk the answer needs
    assert sorted(c.text for c in eng.contexts) == sorted(TEXTS[i] for i in decision.kept)
    assert [(f.index, f.text) for f in eng.filtered_contexts] == [
        (i, TEXTS[i]) for i in decision.dropped
    ]
    assert [f.score for f in eng.filtered_contexts] == [
        decision.scores[i] for i in decision.dropped
    ]
    other = TEXTS[next(i for i in decision.kept if i != 1)]
    assert [c.text for c in eng.unused_contexts] == [other]  # kept, not used; never a dropped one
    assert [c.text for c in eng.contexts if c.used] == [TEXTS[1]]
    assert eng.counts.contexts == 2 and eng.counts.contexts_unused == 1
    assert eng.counts.contexts_filtered == 2
    assert eng.counts.tokens_filtered == decision.tokens_saved > 0
    record = eng.chunk_filter
    assert (record.chunks, record.kept, record.dropped) == (4, 2, 2)
    assert record.tokens_saved == decision.tokens_saved and record.errors == []
    assert record.threshold == 2.0 and record.model == "chunk-filter"


# -- LangChain ------------------------------------------------------------------------------------
lc_documents = pytest.importorskip("langchain_core.documents")
FixedRetriever = pytest.importorskip("lc_world").FixedRetriever
lc_runnables = pytest.importorskip("langchain_core.runnables")
lc_models = pytest.importorskip("langchain_core.language_models")
lc_messages = pytest.importorskip("langchain_core.messages")
lc_outputs = pytest.importorskip("langchain_core.outputs")
lc_prompts = pytest.importorskip("langchain_core.prompts")
lc_parsers = pytest.importorskip("langchain_core.output_parsers")


class AnswerModel(lc_models.BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "ene-test-filter"

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kw: Any):
        text = answer_from("\n".join(str(m.content) for m in messages))
        message = lc_messages.AIMessage(content=text)
        return lc_outputs.ChatResult(generations=[lc_outputs.ChatGeneration(message=message)])


PROMPT = lc_prompts.ChatPromptTemplate.from_messages(
    [("human", "Context:\n{context}\nQuestion: {question}")]
)


def rag_chain(retriever: Any) -> Any:
    def join(docs: list) -> str:
        return "\n".join(d.page_content for d in docs)

    return (
        {"context": retriever | join, "question": lc_runnables.RunnablePassthrough()}
        | PROMPT
        | AnswerModel()
        | lc_parsers.StrOutputParser()
    )


@pytest.fixture(scope="module")
def engine() -> Iterator[NecessityEngine]:
    from ene_core.verifiers.keyword import KeywordOracle

    engine = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    yield engine
    engine.close()


def compression(top_two: ChunkFilter) -> tuple[Any, Any]:
    retrievers = pytest.importorskip("langchain_classic.retrievers")
    from ene_integrations.langchain import ChunkFilterCompressor

    compressor = ChunkFilterCompressor(chunk_filter=top_two)
    retriever = retrievers.ContextualCompressionRetriever(
        base_compressor=compressor, base_retriever=FixedRetriever(texts=TEXTS)
    )
    return compressor, retriever


def test_langchain_eng_lists_what_the_compressor_dropped(engine, top_two) -> None:
    from ene_integrations.langchain import NecessityCallbackHandler

    compressor, retriever = compression(top_two)
    handler = NecessityCallbackHandler(engine)
    run_id = uuid.uuid4()
    out = rag_chain(retriever).invoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    assert out == TEXTS[1]
    result = handler.result(run_id, timeout=10)
    assert result.error is None and result.eng is not None, result.error or result.skipped
    check_recorded(result.eng, compressor.last_decision)


def test_langchain_filter_events_stay_with_their_own_request(engine, top_two) -> None:
    from ene_integrations.langchain import NecessityCallbackHandler

    _, retriever = compression(top_two)
    handler = NecessityCallbackHandler(engine)
    ids = [uuid.uuid4() for _ in range(3)]
    configs = [{"callbacks": [handler], "run_id": r, "max_concurrency": 3} for r in ids]
    rag_chain(retriever).batch([QUESTION] * 3, config=configs)
    for run_id in ids:
        eng = handler.result(run_id, timeout=10).eng
        assert eng.chunk_filter.calls == 1 and eng.counts.contexts_filtered == 2
    plain = uuid.uuid4()  # no filter in this chain: nothing listed
    rag_chain(FixedRetriever(texts=TEXTS)).invoke(
        QUESTION, config={"callbacks": [handler], "run_id": plain}
    )
    eng = handler.result(plain, timeout=10).eng
    assert eng.chunk_filter is None and len(eng.contexts) == 4


@pytest.mark.parametrize("payload", [{"dropped": "oops"}, ["not", "a", "record"], None])
def test_langchain_a_malformed_filter_event_is_recorded_not_raised(
    engine, payload: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from langchain_core.callbacks.manager import dispatch_custom_event

    from ene_integrations.langchain import FILTER_EVENT, NecessityCallbackHandler

    def retrieve(question: str) -> list:
        dispatch_custom_event(FILTER_EVENT, payload)
        return [lc_documents.Document(page_content=t) for t in TEXTS[1:3]]

    handler = NecessityCallbackHandler(engine)
    run_id = uuid.uuid4()
    chain = rag_chain(lc_runnables.RunnableLambda(retrieve))
    with caplog.at_level(logging.WARNING, logger="ene"):
        out = chain.invoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    assert out == answer_from(TEXTS[1])
    eng = handler.result(run_id, timeout=10).eng
    assert eng is not None and len(eng.contexts) == 2 and eng.filtered_contexts == []
    assert eng.chunk_filter is not None and eng.chunk_filter.calls == 1
    assert eng.chunk_filter.errors[0].startswith("unreadable chunk filter record")
    assert "unreadable chunk filter record" in caplog.text


# -- OpenTelemetry ------------------------------------------------------------------------------------
def test_the_span_carries_the_filters_counts(engine, top_two) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ene_integrations.langchain import NecessityCallbackHandler
    from ene_integrations.otel import SPAN_NAME, NecessitySpanRecorder

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handler = NecessityCallbackHandler(
        engine, mode="inline", recorders=[NecessitySpanRecorder(provider)]
    )
    compressor, retriever = compression(top_two)
    rag_chain(retriever).invoke(QUESTION, config={"callbacks": [handler]})
    rag_chain(FixedRetriever(texts=TEXTS)).invoke(QUESTION, config={"callbacks": [handler]})
    filtered, plain = [s for s in exporter.get_finished_spans() if s.name == SPAN_NAME]
    decision = compressor.last_decision
    assert filtered.attributes["ene.filter.dropped"] == 2
    assert filtered.attributes["ene.filter.kept"] == 2
    assert filtered.attributes["ene.filter.tokens_saved"] == decision.tokens_saved > 0
    assert filtered.attributes["ene.filter.errors"] == 0
    assert filtered.attributes["ene.contexts.total"] == 2
    assert not any(key.startswith("ene.filter.") for key in plain.attributes)
    assert plain.attributes["ene.contexts.total"] == 4


# -- LlamaIndex -----------------------------------------------------------------------------------
def llama_engine(postprocessor: Any) -> Any:
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.schema import NodeWithScore, TextNode

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list:
            return [
                NodeWithScore(node=TextNode(text=t, id_=f"n{i}"), score=1.0 - i / 10)
                for i, t in enumerate(TEXTS)
            ]

    class AnswerLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="ene-test-filter")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> CompletionResponse:
            return CompletionResponse(text=answer_from(prompt))

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any) -> Any:
            raise NotImplementedError

    return RetrieverQueryEngine.from_args(
        Fixed(), llm=AnswerLLM(), node_postprocessors=[postprocessor]
    )


@pytest.fixture
def llama_handler(engine: NecessityEngine) -> Iterator[Any]:
    pytest.importorskip("llama_index.core")
    from ene_integrations import llama_index as eli

    yield eli.instrument(engine=engine)
    eli.uninstrument()


def test_llama_index_eng_lists_what_the_postprocessor_dropped(llama_handler, top_two) -> None:
    from ene_integrations.llama_index import ChunkFilterPostprocessor

    post = ChunkFilterPostprocessor(chunk_filter=top_two)
    response = llama_engine(post).query(QUESTION)
    result = llama_handler.result(response, timeout=10)
    assert result.error is None and result.eng is not None, result.error or result.skipped
    eng = result.eng
    decision = post.last_decision
    check_recorded(eng, decision)
    assert [c.id for c in eng.contexts] == [n.node.node_id for n in response.source_nodes]
    assert [f.id for f in eng.filtered_contexts] == [f"n{i}" for i in decision.dropped]
    assert len(llama_handler._filters) == 0  # nothing left behind once the query ended
    again = llama_handler.result(llama_engine(post).query(QUESTION), timeout=10).eng
    assert again.chunk_filter.calls == 1  # each query its own filter call


def test_llama_index_a_malformed_filter_event_is_recorded(llama_handler, caplog) -> None:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor

    from ene_integrations.llama_index.filter import ChunkFilterEvent, dispatcher

    class Garbled(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes: list, query_bundle: Any = None) -> list:
            dispatcher.event(ChunkFilterEvent(chunks=4, kept=[1], dropped=[{"index": 0}]))
            return nodes[1:2]

    with caplog.at_level(logging.WARNING, logger="ene"):
        response = llama_engine(Garbled()).query(QUESTION)
    assert str(response) == answer_from(TEXTS[1])
    eng = llama_handler.result(response, timeout=10).eng
    assert eng is not None and [c.text for c in eng.contexts] == [TEXTS[1]]
    assert eng.filtered_contexts == [] and "unreadable" in eng.chunk_filter.errors[0]
    assert "unreadable chunk filter record" in caplog.text
