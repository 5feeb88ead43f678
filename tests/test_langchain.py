"""LangChain adapter: the callback handler in every run mode, instrument(), and the pruner.

Real langchain-core objects throughout; the model is a small deterministic chat model whose
answer depends on the question, so every ENG can be traced back to its own request.
"""

from __future__ import annotations

import asyncio
import re
import runpy
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.tools import tool

from ene_core import NecessityEngine, NecessityResult, Scores, SupportOracle
from ene_core.text.contexts import stable_id
from ene_core.verifiers.keyword import KeywordOracle
from ene_integrations.langchain import (
    CONTEXT_TAG,
    NecessityCallbackHandler,
    NecessityPruner,
    instrument,
    tag_context,
    uninstrument,
)

# -- a small RAG world: three documents per topic, the answer uses the first two --------------


def docs_for(topic: str) -> list[Document]:
    return [
        Document(f"The {topic} festival takes place in spring."),  # id None: stable id
        Document(f"The {topic} festival attracts many visitors.", id=f"{topic}-visitors"),
        Document(f"Tickets for the {topic} concerts are sold online.", id=f"{topic}-tickets"),
    ]


def answer_for(topic: str) -> str:
    return (
        f"The {topic} festival takes place in spring. The {topic} festival attracts many visitors."
    )


class TopicRetriever(BaseRetriever):
    """Returns the topic's documents (``extra`` adds more); async calls yield to the loop."""

    extra: tuple[str, ...] = ()

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return docs_for(query) + [Document(text) for text in self.extra]

    async def _aget_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        await asyncio.sleep(0.001 * (hash(query) % 4))
        return docs_for(query) + [Document(text) for text in self.extra]


class OuterRetriever(BaseRetriever):
    """A retriever that calls another retriever (nested) and adds one document."""

    inner: BaseRetriever

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = self.inner.invoke(query, config={"callbacks": run_manager.get_child()})
        return [*found, Document(f"The {query} archive lists every edition.")]


class AnswerModel(BaseChatModel):
    """Answers ``answer_for(topic)`` for a prompt ending in ``Question: topic``."""

    @property
    def _llm_type(self) -> str:
        return "ene-test-answer"

    @staticmethod
    def _text(messages: list[BaseMessage]) -> str:
        topic = str(messages[-1].content).rsplit("Question:", 1)[-1].strip()
        return answer_for(topic)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        message = AIMessage(content=self._text(messages))
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        await asyncio.sleep(0)
        return self._generate(messages)

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        for piece in re.findall(r"\S+\s*", self._text(messages)):
            if run_manager:
                run_manager.on_llm_new_token(piece)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))


PROMPT = ChatPromptTemplate.from_messages([("human", "Context:\n{context}\nQuestion: {question}")])


def format_docs(docs: list[Document]) -> str:
    return "\n".join(d.page_content for d in docs)


def rag_chain(retriever: Any = None) -> Any:
    retriever = retriever if retriever is not None else TopicRetriever()
    return (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | PROMPT
        | AnswerModel()
        | StrOutputParser()
    )


def assert_belongs(result: NecessityResult, topic: str) -> None:
    """The ENG is this request's: its answer, its documents, its question; doc 2 unused."""
    assert result.error is None, result.error
    eng = result.eng
    assert eng is not None
    assert eng.answer == answer_for(topic)
    assert eng.question == topic
    assert [c.text for c in eng.contexts] == [d.page_content for d in docs_for(topic)]
    assert eng.minimal_sufficient_set == [0, 1]
    assert [c.necessary for c in eng.claims] == [[0], [1]]


@pytest.fixture(scope="module")
def engine() -> Any:
    engine = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    yield engine
    engine.close()


@pytest.fixture
def handler(engine: NecessityEngine) -> NecessityCallbackHandler:
    return NecessityCallbackHandler(engine)


def wait_until(condition: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)
    return bool(condition())


# -- run modes ----------------------------------------------------------------------------------


def test_invoke_records_the_requests_eng_with_ids_and_metadata(
    handler: NecessityCallbackHandler,
) -> None:
    run_id = uuid.uuid4()
    out = rag_chain().invoke("tulip", config={"callbacks": [handler], "run_id": run_id})
    assert out == answer_for("tulip")
    result = handler.result(run_id, timeout=10)
    assert_belongs(result, "tulip")
    docs = docs_for("tulip")
    ids = [c.id for c in result.eng.contexts]
    assert ids == [stable_id(docs[0].page_content, 0), "tulip-visitors", "tulip-tickets"]
    assert result.metadata["context_source"] == "input"
    assert [d["position"] for d in result.metadata["documents"]] == [0, 1, 2]
    assert handler.pending == 0 and len(handler._runs) == 0


def test_with_config_and_on_result(engine: NecessityEngine) -> None:
    seen: list[tuple[str, Any]] = []
    handler = NecessityCallbackHandler(engine, on_result=lambda rid, eng: seen.append((rid, eng)))
    run_id = uuid.uuid4()
    chain = rag_chain().with_config(callbacks=[handler])
    assert chain.invoke("maple", config={"run_id": run_id}) == answer_for("maple")
    assert_belongs(handler.result(run_id, timeout=10), "maple")
    assert wait_until(lambda: len(seen) == 1)
    assert seen[0][0] == str(run_id) and seen[0][1].answer == answer_for("maple")


async def test_ainvoke_and_aresult(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    out = await rag_chain().ainvoke("cedar", config={"callbacks": [handler], "run_id": run_id})
    assert out == answer_for("cedar")
    assert_belongs(await handler.aresult(run_id, timeout=10), "cedar")


def test_batch_on_worker_threads(handler: NecessityCallbackHandler) -> None:
    topics = [f"birch{i}" for i in range(12)]
    ids = [uuid.uuid4() for _ in topics]
    configs = [{"callbacks": [handler], "run_id": r, "max_concurrency": 4} for r in ids]
    assert rag_chain().batch(topics, config=configs) == [answer_for(t) for t in topics]
    for topic, run_id in zip(topics, ids, strict=True):
        assert_belongs(handler.result(run_id, timeout=10), topic)


def test_stream_full(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    chunks = list(rag_chain().stream("poppy", config={"callbacks": [handler], "run_id": run_id}))
    assert len(chunks) > 1 and "".join(chunks) == answer_for("poppy")
    assert_belongs(handler.result(run_id, timeout=10), "poppy")


async def test_astream_full(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    chunks = [
        c
        async for c in rag_chain().astream(
            "lotus", config={"callbacks": [handler], "run_id": run_id}
        )
    ]
    assert "".join(chunks) == answer_for("lotus")
    assert_belongs(await handler.aresult(run_id, timeout=10), "lotus")


async def test_astream_events_v2(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    kinds = set()
    config = {"callbacks": [handler], "run_id": run_id}
    async for event in rag_chain().astream_events("orchid", version="v2", config=config):
        kinds.add(event["event"])
    assert {"on_retriever_end", "on_chat_model_stream", "on_chain_end"} <= kinds
    assert_belongs(await handler.aresult(run_id, timeout=10), "orchid")


def test_parallel_retrievers_on_threads_are_both_kept_each_document_once(
    handler: NecessityCallbackHandler,
) -> None:
    extra = TopicRetriever(extra=("Festival parking opens at noon.",))
    chain = (
        RunnableParallel(a=TopicRetriever(), b=extra, question=RunnablePassthrough()).assign(
            context=lambda x: format_docs(x["a"] + x["b"])
        )
        | PROMPT
        | AnswerModel()
        | StrOutputParser()
    )
    run_id = uuid.uuid4()
    chain.invoke("iris", config={"callbacks": [handler], "run_id": run_id})
    eng = handler.result(run_id, timeout=10).eng
    texts = sorted(c.text for c in eng.contexts)
    expected = [d.page_content for d in docs_for("iris")] + ["Festival parking opens at noon."]
    assert texts == sorted(expected)  # both retrievers' documents, each once
    assert eng.counts.supported == 2
    assert [c.classification for c in eng.claims] == ["fragile", "fragile"]  # not "robust"


def test_nested_retriever_counts_only_the_outermost(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    rag_chain(OuterRetriever(inner=TopicRetriever())).invoke(
        "fern", config={"callbacks": [handler], "run_id": run_id}
    )
    eng = handler.result(run_id, timeout=10).eng
    expected = [d.page_content for d in docs_for("fern")] + [
        "The fern archive lists every edition."
    ]
    assert [c.text for c in eng.contexts] == expected


def test_retriever_inside_a_tool_belongs_to_the_request(handler: NecessityCallbackHandler) -> None:
    retriever = TopicRetriever()

    @tool
    def search(query: str) -> str:
        """Search the festival notes."""
        return format_docs(retriever.invoke(query))

    chain = (
        RunnableLambda(lambda q: {"context": search.invoke(q), "question": q})
        | PROMPT
        | AnswerModel()
        | StrOutputParser()
    )
    run_id = uuid.uuid4()
    chain.invoke("lupin", config={"callbacks": [handler], "run_id": run_id})
    assert_belongs(handler.result(run_id, timeout=10), "lupin")


def test_tag_context_uses_the_reranked_documents(handler: NecessityCallbackHandler) -> None:
    rerank = RunnableLambda(lambda docs: list(reversed(docs[:2])))
    run_id = uuid.uuid4()
    rag_chain(tag_context(TopicRetriever() | rerank)).invoke(
        "aster", config={"callbacks": [handler], "run_id": run_id}
    )
    result = handler.result(run_id, timeout=10)
    docs = docs_for("aster")
    assert [c.text for c in result.eng.contexts] == [docs[1].page_content, docs[0].page_content]
    assert result.metadata["context_source"] == "tagged"
    assert result.eng.counts.contexts_unused == 0


def test_tagged_retriever_and_tag_name(handler: NecessityCallbackHandler) -> None:
    tagged = tag_context(TopicRetriever())
    assert CONTEXT_TAG in tagged.config["tags"]
    run_id = uuid.uuid4()
    rag_chain(tagged).invoke("daisy", config={"callbacks": [handler], "run_id": run_id})
    result = handler.result(run_id, timeout=10)
    assert result.metadata["context_source"] == "tagged"
    assert_belongs(result, "daisy")


def test_handler_attached_below_the_top_treats_its_run_as_the_root(engine: NecessityEngine) -> None:
    seen: list[tuple[str, Any]] = []
    handler = NecessityCallbackHandler(engine, on_result=lambda rid, eng: seen.append((rid, eng)))
    inner = rag_chain().with_config(callbacks=[handler])
    outer = RunnableParallel(answer=inner, question=RunnablePassthrough())  # outer run unseen
    assert outer.invoke("hazel") == {"answer": answer_for("hazel"), "question": "hazel"}
    assert wait_until(lambda: len(seen) == 1)
    assert_belongs(handler.result(seen[0][0], timeout=1), "hazel")
    assert handler.pending == 0


def test_runs_without_retrieval_are_skipped_at_once(
    handler: NecessityCallbackHandler, engine: NecessityEngine
) -> None:
    before = engine.worker_stats["submitted"]
    run_id = uuid.uuid4()
    chain = PROMPT | AnswerModel() | StrOutputParser()
    chain.invoke(
        {"context": "x", "question": "rose"}, config={"callbacks": [handler], "run_id": run_id}
    )
    result = handler.result(run_id, timeout=0)  # at once: the run has ended
    assert result.eng is None and result.error is None
    assert "no retrieved documents" in (result.skipped or "")
    assert engine.worker_stats["submitted"] == before and handler.pending == 0


# -- inline mode ---------------------------------------------------------------------------------


def test_inline_mode_has_the_result_when_invoke_returns(engine: NecessityEngine) -> None:
    handler = NecessityCallbackHandler(engine, mode="inline")
    run_id = uuid.uuid4()
    rag_chain().invoke("violet", config={"callbacks": [handler], "run_id": run_id})
    assert handler.dispatcher.results.get(str(run_id)) is not None  # no waiting
    assert_belongs(handler.result(run_id, timeout=0), "violet")


async def test_inline_mode_under_ainvoke(engine: NecessityEngine) -> None:
    handler = NecessityCallbackHandler(engine, mode="inline")
    assert handler.run_inline is False  # async runs evaluate in an executor, not on the loop
    run_id = uuid.uuid4()
    await rag_chain().ainvoke("lily", config={"callbacks": [handler], "run_id": run_id})
    assert handler.dispatcher.results.get(str(run_id)) is not None
    assert_belongs(await handler.aresult(run_id, timeout=0), "lily")


# -- correlation under concurrency --------------------------------------------------------------


async def test_200_concurrent_ainvoke_each_eng_is_its_own(
    handler: NecessityCallbackHandler,
) -> None:
    topics = [f"topic{i}" for i in range(200)]
    ids = [uuid.uuid4() for _ in topics]
    chain = rag_chain()
    outs = await asyncio.gather(
        *(
            chain.ainvoke(t, config={"callbacks": [handler], "run_id": r})
            for t, r in zip(topics, ids, strict=True)
        )
    )
    assert outs == [answer_for(t) for t in topics]
    results = await asyncio.gather(*(handler.aresult(r, timeout=30) for r in ids))
    for topic, result in zip(topics, results, strict=True):
        assert_belongs(result, topic)
    assert handler.pending == 0


async def test_200_abatch_each_eng_is_its_own(handler: NecessityCallbackHandler) -> None:
    topics = [f"item{i}" for i in range(200)]
    ids = [uuid.uuid4() for _ in topics]
    configs = [{"callbacks": [handler], "run_id": r} for r in ids]
    outs = await rag_chain().abatch(topics, config=configs)
    assert outs == [answer_for(t) for t in topics]
    for topic, run_id in zip(topics, ids, strict=True):
        assert_belongs(await handler.aresult(run_id, timeout=30), topic)


# -- early-closed streams and bounded state -----------------------------------------------------


def test_stream_closed_early_records_the_failure_and_keeps_no_state(
    handler: NecessityCallbackHandler,
) -> None:
    run_id = uuid.uuid4()
    stream = rag_chain().stream("thyme", config={"callbacks": [handler], "run_id": run_id})
    first = next(stream)
    stream.close()  # the model finishes after the root ended: late events are ignored
    assert first
    result = handler.result(run_id, timeout=10)
    assert result.eng is None and "IncompleteRequestError" in (result.error or "")
    assert handler.pending == 0 and len(handler._runs) == 0


async def test_astream_closed_early(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    stream = rag_chain().astream("sage", config={"callbacks": [handler], "run_id": run_id})
    async for _ in stream:
        break
    await stream.aclose()
    result = await handler.aresult(run_id, timeout=10)
    assert "IncompleteRequestError" in (result.error or "")
    assert handler.pending == 0


def test_roots_that_never_end_are_evicted_after_the_ttl_and_by_the_cap(
    engine: NecessityEngine,
) -> None:
    handler = NecessityCallbackHandler(engine, state_ttl_s=0.2)
    stream = rag_chain().stream("mint", config={"callbacks": [handler]})
    next(stream)  # left open: the root has not ended
    assert handler.pending == 1
    time.sleep(0.3)
    assert handler.pending == 0 and len(handler._runs) == 0
    stream.close()  # ends a root the handler already forgot: tolerated
    assert handler.pending == 0

    capped = NecessityCallbackHandler(engine, max_pending=3)
    streams = [rag_chain().stream(f"basil{i}", config={"callbacks": [capped]}) for i in range(5)]
    for s in streams:
        next(s)
    assert capped.pending == 3
    for s in streams:
        s.close()
    assert capped.pending == 0


# -- never breaking the host --------------------------------------------------------------------


class RaisingOracle:
    """Implements the SupportOracle protocol and fails on every call."""

    name: str = "raising"
    revision: str | None = None
    default_threshold: float | None = 0.5

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        raise RuntimeError("verifier is down")

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class GarbageOracle(RaisingOracle):
    name = "garbage"

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        return [Scores(7.5, -2.0) for _ in pairs]


class HangingOracle(RaisingOracle):
    name = "hanging"

    def __init__(self) -> None:
        self.release = threading.Event()

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        self.release.wait(30)
        return [Scores(0.9, 0.0) for _ in pairs]


@pytest.mark.parametrize("oracle_cls", [RaisingOracle, GarbageOracle])
@pytest.mark.parametrize("mode", ["background", "inline"])
def test_failing_oracle_leaves_the_output_identical_and_is_recorded(
    oracle_cls: type, mode: str
) -> None:
    oracle = oracle_cls()
    assert isinstance(oracle, SupportOracle)
    engine = NecessityEngine(oracle, max_wait_ms=1)
    errors: list[str] = []
    handler = NecessityCallbackHandler(
        engine, mode=mode, on_error=lambda rid, msg: errors.append(msg)
    )
    handler.raise_error = True  # must not matter
    try:
        plain = rag_chain().invoke("oak")
        run_id = uuid.uuid4()
        assert rag_chain().invoke("oak", config={"callbacks": [handler], "run_id": run_id}) == plain
        result = handler.result(run_id, timeout=10)
        assert result.eng is None and "OracleError" in (result.error or "")
        assert wait_until(lambda: len(errors) == 1)
    finally:
        engine.close()


def test_hanging_oracle_does_not_hold_the_chain() -> None:
    oracle = HangingOracle()
    engine = NecessityEngine(oracle, max_wait_ms=1)
    background = NecessityCallbackHandler(engine)
    inline = NecessityCallbackHandler(engine, mode="inline", inline_timeout_s=0.2)
    try:
        plain = rag_chain().invoke("elm")
        bg_id, in_id = uuid.uuid4(), uuid.uuid4()
        assert (
            rag_chain().invoke("elm", config={"callbacks": [background], "run_id": bg_id}) == plain
        )
        with pytest.raises(TimeoutError):
            background.result(bg_id, timeout=0.05)  # still evaluating: nothing recorded yet
        assert rag_chain().invoke("elm", config={"callbacks": [inline], "run_id": in_id}) == plain
        result = inline.result(in_id, timeout=0)
        assert result.eng is None and "TimeoutError" in (result.error or "")
    finally:
        oracle.release.set()
        engine.close()


def test_a_failing_callback_body_never_reaches_the_chain(handler: NecessityCallbackHandler) -> None:
    def broken() -> Any:
        raise RuntimeError("tracing seam broke")

    handler._span_context = broken  # every root start now fails inside the handler
    handler.raise_error = True
    plain = rag_chain().invoke("ash")
    assert rag_chain().invoke("ash", config={"callbacks": [handler]}) == plain
    assert handler.pending == 0


def test_bad_tagged_output_falls_back_to_the_retriever(handler: NecessityCallbackHandler) -> None:
    run_id = uuid.uuid4()
    odd = tag_context(RunnableLambda(lambda docs: 42))  # not documents: ignored
    chain = (
        {"context": TopicRetriever() | format_docs, "question": RunnablePassthrough()}
        | RunnableLambda(lambda x: {**x, "odd": odd.invoke(x["context"])})
        | PROMPT
        | AnswerModel()
        | StrOutputParser()
    )
    chain.invoke("pine", config={"callbacks": [handler], "run_id": run_id})
    result = handler.result(run_id, timeout=10)
    assert result.metadata["context_source"] == "input"
    assert_belongs(result, "pine")


# -- process-wide installation ------------------------------------------------------------------


def test_instrument_twice_gives_one_result_per_request(engine: NecessityEngine) -> None:
    seen: list[str] = []
    before = engine.worker_stats["submitted"]
    handler = instrument(engine=engine, on_result=lambda rid, eng: seen.append(rid))
    try:
        assert instrument() is handler and instrument() is handler
        chain = rag_chain()
        ids = [uuid.uuid4() for _ in range(4)]
        chain.invoke("reed", config={"run_id": ids[0]})  # no callbacks given
        chain.invoke("sedge", config={"run_id": ids[1], "callbacks": [handler]})  # and explicit
        chain.batch(["rush", "moss"], config=[{"run_id": ids[2]}, {"run_id": ids[3]}])
        thread = threading.Thread(target=chain.invoke, args=("kelp",), kwargs={"config": {}})
        thread.start()  # a fresh thread (empty context) is covered too
        thread.join()
        for run_id, topic in zip(ids, ["reed", "sedge", "rush", "moss"], strict=True):
            assert_belongs(handler.result(run_id, timeout=10), topic)
        assert wait_until(lambda: len(seen) == 5)
        assert len(set(seen)) == 5 and engine.worker_stats["submitted"] - before == 5
        own = NecessityCallbackHandler(engine)  # an explicit handler replaces the installed one
        mine = uuid.uuid4()
        chain.invoke("kelp", config={"run_id": mine, "callbacks": [own]})
        assert_belongs(own.result(mine, timeout=10), "kelp")
        with pytest.raises(TimeoutError):
            handler.result(mine, timeout=0.05)
    finally:
        uninstrument()
    after = uuid.uuid4()
    rag_chain().invoke("reed", config={"run_id": after})
    with pytest.raises(TimeoutError):
        handler.result(after, timeout=0.05)


async def test_instrument_covers_ainvoke_and_astream_events(engine: NecessityEngine) -> None:
    handler = instrument(NecessityCallbackHandler(engine))
    try:
        first, second = uuid.uuid4(), uuid.uuid4()
        await rag_chain().ainvoke("peony", config={"run_id": first})
        async for _ in rag_chain().astream_events(
            "zinnia", version="v2", config={"run_id": second}
        ):
            pass
        assert_belongs(await handler.aresult(first, timeout=10), "peony")
        assert_belongs(await handler.aresult(second, timeout=10), "zinnia")
    finally:
        uninstrument()


# -- OpenTelemetry seam -------------------------------------------------------------------------


async def test_trace_is_the_span_current_at_the_root_start(engine: NecessityEngine) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    recorded: list[NecessityResult] = []
    handler = NecessityCallbackHandler(engine, recorders=[recorded.append])
    tracer = sdk.TracerProvider().get_tracer("test")
    sync_id, async_id = uuid.uuid4(), uuid.uuid4()
    with tracer.start_as_current_span("request") as span:
        rag_chain().invoke("yew", config={"callbacks": [handler], "run_id": sync_id})
    with tracer.start_as_current_span("arequest") as aspan:
        await rag_chain().ainvoke("fir", config={"callbacks": [handler], "run_id": async_id})
    assert handler.result(sync_id, timeout=10).trace == span.get_span_context()
    assert (await handler.aresult(async_id, timeout=10)).trace == aspan.get_span_context()
    assert wait_until(lambda: len(recorded) == 2)


# -- pruning --------------------------------------------------------------------------------------


def sources_chain(pruner: NecessityPruner) -> Any:
    answer = (
        RunnableLambda(lambda x: {"context": format_docs(x["context"]), "question": x["question"]})
        | PROMPT
        | AnswerModel()
        | StrOutputParser()
    )
    return (
        RunnableParallel(
            {
                "context": TopicRetriever(extra=("Owls hunt at night.",)),
                "question": RunnablePassthrough(),
            }
        )
        .assign(answer=answer)
        .pipe(pruner)
    )


@pytest.mark.parametrize("keep", ["minimal", "necessary"])
def test_pruner_keeps_every_necessary_document_and_drops_unused(
    engine: NecessityEngine, keep: str
) -> None:
    out = sources_chain(NecessityPruner(engine, keep=keep)).invoke("heron")
    docs = docs_for("heron")
    eng = out["evidence"]
    assert out["answer"] == answer_for("heron") and out["question"] == "heron"
    assert out["context"] == docs[:2]  # original order
    necessary = {i for claim in eng.claims for i in claim.necessary}
    assert necessary == {0, 1}
    assert out["tokens_before"] == sum(c.tokens for c in eng.contexts)
    assert out["tokens_after"] == eng.contexts[0].tokens + eng.contexts[1].tokens


async def test_pruner_async_and_custom_keys(engine: NecessityEngine) -> None:
    pruner = NecessityPruner(engine, answer_key="reply", context_key="sources", evidence_key="eng")
    docs = docs_for("crane")
    out = await pruner.ainvoke({"reply": answer_for("crane"), "sources": docs, "extra": 1})
    assert out["sources"] == docs[:2] and out["extra"] == 1 and out["eng"].counts.supported == 2


@pytest.mark.parametrize("oracle_cls", [RaisingOracle, GarbageOracle])
async def test_pruner_failure_prunes_nothing(oracle_cls: type) -> None:
    engine = NecessityEngine(oracle_cls(), max_wait_ms=1)
    try:
        pruner = NecessityPruner(engine)
        docs = docs_for("swan")
        item = {"answer": answer_for("swan"), "context": docs}
        for out in (pruner.invoke(item), await pruner.ainvoke(item)):
            assert out["context"] == docs and out["evidence"] is None
            assert out["tokens_before"] is None
    finally:
        engine.close()


def test_pruner_timeout_prunes_nothing() -> None:
    oracle = HangingOracle()
    engine = NecessityEngine(oracle, max_wait_ms=1)
    try:
        docs = docs_for("gull")
        out = NecessityPruner(engine, timeout_s=0.1).invoke(
            {"answer": answer_for("gull"), "context": docs}
        )
        assert out["context"] == docs and out["evidence"] is None
    finally:
        oracle.release.set()
        engine.close()


def test_pruner_wiring_errors_raise(engine: NecessityEngine) -> None:
    with pytest.raises(KeyError, match="context_key"):
        NecessityPruner(engine).invoke({"answer": "x", "docs": []})
    with pytest.raises(ValueError, match="keep"):
        NecessityPruner(engine, keep="all")  # type: ignore[arg-type]


# -- the example, end to end --------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "langchain_rag.py"


def run_example(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    namespace = runpy.run_path(str(EXAMPLE), run_name="langchain_rag_example")
    assert namespace["main"](list(argv)) == 0
    return capsys.readouterr().out


def test_example_runs_with_the_keyword_oracle(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_example(capsys, "--oracle", "keyword")
    assert "needs: range" in out and "needs: charging" in out
    unused = out.split("Unused chunks:")[1].split("Contexts:")[0]
    assert "weight:" in unused and "range:" not in unused
    assert "sources kept: ['range', 'charging']" in out


def test_example_runs_with_the_default_verifier(capsys: pytest.CaptureFixture[str]) -> None:
    from ene_core.verifiers.nli import DEFAULT_MODEL_DIR

    if not (DEFAULT_MODEL_DIR / "config.json").is_file():
        pytest.skip(f"the default verifier is not installed yet at {DEFAULT_MODEL_DIR}")
    out = run_example(capsys)
    assert "Claims:" in out and "Necessary chunks:" in out and "sources kept:" in out


async def test_real_nli_oracle_path_through_the_handler(tiny_model_dir: str) -> None:
    from ene_core import NLIOracle

    engine = NecessityEngine(NLIOracle(model=tiny_model_dir), max_wait_ms=1)
    try:
        handler = NecessityCallbackHandler(engine)
        sync_id, async_id = uuid.uuid4(), uuid.uuid4()
        rag_chain().invoke("paris", config={"callbacks": [handler], "run_id": sync_id})
        await rag_chain().ainvoke("france", config={"callbacks": [handler], "run_id": async_id})
        for run_id, topic in ((sync_id, "paris"), (async_id, "france")):
            result = await handler.aresult(run_id, timeout=60)
            assert result.error is None and result.eng is not None  # verdicts are random
            assert result.eng.answer == answer_for(topic)
            assert [c.text for c in result.eng.contexts] == [
                d.page_content for d in docs_for(topic)
            ]
            assert result.eng.verifier.model == engine.oracle.name
    finally:
        engine.close()


async def test_pruner_at_the_end_of_a_streamed_chain(engine: NecessityEngine) -> None:
    chain = sources_chain(NecessityPruner(engine))
    streamed = list(chain.stream("egret"))
    astreamed = [chunk async for chunk in chain.astream("egret")]
    for chunks in (streamed, astreamed):
        assert len(chunks) == 1  # the pruner needs the whole answer: one final mapping
        assert chunks[0]["answer"] == answer_for("egret")
        assert chunks[0]["context"] == docs_for("egret")[:2]


def test_a_one_word_answer_is_checked_as_the_answer_to_the_question(
    engine: NecessityEngine,
) -> None:
    """A real RAG chain (in-memory vector store, fake chat model answering one word): the
    user's question reaches the engine, which checks "1889" as its answer."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from lc_world import make_store

    retriever = make_store().as_retriever(search_kwargs={"k": 2})
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | PROMPT
        | FakeListChatModel(responses=["1889"])
        | StrOutputParser()
    )
    handler = NecessityCallbackHandler(engine, mode="inline")
    run_id = uuid.uuid4()
    question = "In what year was the Eiffel Tower completed?"
    assert chain.invoke(question, config={"callbacks": [handler], "run_id": run_id}) == "1889"
    eng = handler.result(run_id, timeout=0).eng
    assert eng is not None and eng.question == question
    (claim,) = eng.claims
    assert claim.text == "1889" and claim.hypothesis == "The Eiffel Tower was completed in 1889."
    assert claim.status == "supported"
    assert [eng.contexts[i].id for i in claim.necessary] == ["tower-year"]
