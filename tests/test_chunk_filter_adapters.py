"""The chunk filter's LangChain compressor and LlamaIndex postprocessor, with real objects."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core.filtering.model import ChunkFilter

QUESTION = "When does the Riverside store open on Saturdays?"
TEXTS = [
    "The Andromeda galaxy is about 2.5 million light-years from Earth.",
    "Riverside store opening hours: Monday to Saturday, 9:00 to 18:00. Closed on Sunday.",
    "Sourdough needs a starter of flour and water fed daily for a week.",
    "The 1912 Olympic marathon was won by Ken McArthur of South Africa.",
]


@pytest.fixture(scope="module")
def chunk_filter() -> ChunkFilter:
    return ChunkFilter()


class Broken:
    """A filter whose model fails: the adapters must keep everything."""

    threshold = 0.5

    def decide(self, question: str, chunks: list[Any]):
        real = ChunkFilter.__new__(ChunkFilter)
        real.errors, real.last_error, real.threshold = 0, None, 0.5
        real.settings = type("S", (), {"revision": "x"})()
        real.path = type("P", (), {"name": "broken"})()
        real.min_keep, real.max_keep = 1, None

        def boom(*_a: Any, **_k: Any) -> list[float]:
            raise RuntimeError("model gone")

        real._score = boom
        real._token_counts = lambda texts: [1] * len(texts)
        return real.decide(question, chunks)


# -- LangChain ----------------------------------------------------------------------------------------
lc_documents = pytest.importorskip("langchain_core.documents")
lc_callbacks = pytest.importorskip("langchain_core.callbacks")
FixedRetriever = pytest.importorskip("lc_world").FixedRetriever
lc_runnables = pytest.importorskip("langchain_core.runnables")


class Events(lc_callbacks.BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        self.events.append((name, data))


def test_compressor_in_a_contextual_compression_retriever(chunk_filter: ChunkFilter) -> None:
    retrievers = pytest.importorskip("langchain_classic.retrievers")
    from ene_integrations.langchain.filter import FILTER_EVENT, ChunkFilterCompressor

    compressor = ChunkFilterCompressor(chunk_filter=chunk_filter)
    retriever = retrievers.ContextualCompressionRetriever(
        base_compressor=compressor, base_retriever=FixedRetriever(texts=TEXTS)
    )
    events = Events()
    docs = retriever.invoke(QUESTION, config={"callbacks": [events]})
    assert [d.metadata["n"] for d in docs][:1] == [1] or 1 in [d.metadata["n"] for d in docs]
    assert 0 < len(docs) < len(TEXTS)
    decision = compressor.last_decision
    assert decision is not None and decision.error is None
    ((name, data),) = events.events
    assert name == FILTER_EVENT
    assert data["chunks"] == 4 and len(data["dropped"]) == 4 - len(docs)
    assert data["tokens_saved"] == decision.tokens_saved > 0
    assert {d["text"] for d in data["dropped"]} <= set(TEXTS)


def test_compressor_as_an_lcel_step(chunk_filter: ChunkFilter) -> None:
    from ene_integrations.langchain.filter import FILTER_EVENT, ChunkFilterCompressor

    seen = []
    step = ChunkFilterCompressor(
        chunk_filter=chunk_filter, on_decision=lambda d, docs: seen.append((d, len(docs)))
    ).as_runnable()
    chain = step | lc_runnables.RunnableLambda(lambda x: [d.page_content for d in x["documents"]])
    events = Events()
    docs = [lc_documents.Document(page_content=t) for t in TEXTS]
    kept = chain.invoke({"question": QUESTION, "documents": docs}, config={"callbacks": [events]})
    assert TEXTS[1] in kept and len(kept) < 4
    assert seen and seen[0][1] == 4
    assert [name for name, _ in events.events] == [FILTER_EVENT]


def test_compressor_keeps_everything_when_the_filter_fails() -> None:
    from ene_integrations.langchain.filter import ChunkFilterCompressor

    compressor = ChunkFilterCompressor(chunk_filter=Broken())
    docs = [lc_documents.Document(page_content=t) for t in TEXTS]
    assert list(compressor.compress_documents(docs, QUESTION)) == docs
    assert "model gone" in compressor.last_decision.error
    assert compressor.compress_documents([], QUESTION) == []


# -- LlamaIndex ---------------------------------------------------------------------------------------
li_schema = pytest.importorskip("llama_index.core.schema")


def nodes() -> list:
    return [
        li_schema.NodeWithScore(node=li_schema.TextNode(text=t, id_=f"n{i}"), score=1.0 - i / 10)
        for i, t in enumerate(TEXTS)
    ]


def test_postprocessor_in_a_query_engine_emits_its_event(chunk_filter: ChunkFilter) -> None:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from ene_integrations.llama_index.filter import ChunkFilterEvent, ChunkFilterPostprocessor

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list:
            return nodes()

    class Catch(BaseEventHandler):
        events: ClassVar[list] = []

        @classmethod
        def class_name(cls) -> str:
            return "Catch"

        def handle(self, event: Any, **kwargs: Any) -> None:
            if isinstance(event, ChunkFilterEvent):
                self.events.append(event)

    catcher = Catch()
    root = get_dispatcher()
    root.add_event_handler(catcher)
    try:
        post = ChunkFilterPostprocessor(chunk_filter=chunk_filter)
        engine = RetrieverQueryEngine.from_args(Fixed(), llm=MockLLM(), node_postprocessors=[post])
        response = engine.query(QUESTION)
    finally:
        root.event_handlers.remove(catcher)
    ids = [n.node.node_id for n in response.source_nodes]
    assert "n1" in ids and len(ids) < 4
    (event,) = catcher.events
    assert event.chunks == 4 and {d["node_id"] for d in event.dropped} == {
        "n0",
        "n1",
        "n2",
        "n3",
    } - set(ids)
    assert event.tokens_saved == post.last_decision.tokens_saved > 0


def test_postprocessor_keeps_everything_when_the_filter_fails() -> None:
    from ene_integrations.llama_index.filter import ChunkFilterPostprocessor

    post = ChunkFilterPostprocessor(chunk_filter=Broken())
    given = nodes()
    assert post.postprocess_nodes(given, query_str=QUESTION) == given
    assert "model gone" in post.last_decision.error
