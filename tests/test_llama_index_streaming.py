"""LlamaIndex apps that stream: verdicts reach ``on_claim`` before the stream ends (streaming
query engines, sync and async, ``stream_chat`` / ``astream_chat``, an agent's
``stream_events``), the app's tokens are unchanged, the ENG is the one without streaming,
``NecessityQueryEngine`` / ``NecessityChatEngine`` stream again, a guard stops a stream.

Real llama-index-core objects (an in-memory ``VectorStoreIndex`` with ``MockEmbedding``); the
LLMs stream word by word and wait, before each word, until ENE's worker is idle (a slow model).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.agent.workflow import AgentStream, FunctionAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.chat_engine import ContextChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool, ToolSelection
from pydantic import Field
from test_llama_index import DOCS, ExtractiveLLM

from ene_core import NecessityEngine, StreamedClaim
from ene_core.engine.streaming import same_verdict
from ene_core.kit.guard import ClaimGuard, stop
from ene_core.verifiers.keyword import KeywordOracle
from ene_integrations import llama_index as eli

QUESTION = "Tell me about Paris, the Eiffel Tower and bananas."
ANSWER = (
    "Paris is the capital of France. The Eiffel Tower is 500 metres tall. "
    "Bananas are rich in potassium."
)


def idle(engine: NecessityEngine, timeout: float = 30.0) -> None:
    """Wait until the engine's worker has nothing queued or running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = engine.worker_stats
        if stats["submitted"] == stats["completed"] + stats["failed"]:
            return
        time.sleep(0.002)


def words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)


class SlowLLM(CustomLLM):
    """Streams ``answer`` word by word, waiting for ``pace()`` before each word."""

    answer: str = ANSWER
    pace: Any = Field(default=None, exclude=True)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="slow")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def tokens() -> Iterator[CompletionResponse]:
            text = ""
            for word in words(self.answer):
                if self.pace is not None:
                    self.pace()
                text += word
                yield CompletionResponse(text=text, delta=word)

        return tokens()


class Log:
    def __init__(self) -> None:
        self.tokens = 0
        self.claims: list[tuple[str, StreamedClaim, int]] = []
        self.retracted: list[tuple[str, list[StreamedClaim]]] = []

    def on_claim(self, request_id: str, claim: StreamedClaim) -> None:
        self.claims.append((request_id, claim, self.tokens))

    def on_retract(self, request_id: str, claims: list[StreamedClaim]) -> None:
        self.retracted.append((request_id, claims))

    def early(self, total: int) -> list[int]:
        return [c.index for _, c, at in self.claims if at < total]


@pytest.fixture(autouse=True)
def offline_models() -> Iterator[None]:
    Settings.llm = ExtractiveLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    eli.uninstrument()


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    return VectorStoreIndex.from_documents([Document(text=t) for t in DOCS])


@pytest.fixture
def engine() -> Iterator[NecessityEngine]:
    engine = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    yield engine
    engine.close()


@pytest.fixture
def log(engine: NecessityEngine) -> Iterator[Log]:
    log = Log()
    eli.instrument(engine=engine, on_claim=log.on_claim, on_retract=log.on_retract)
    yield log
    eli.uninstrument()


def slow(engine: NecessityEngine) -> SlowLLM:
    return SlowLLM(pace=lambda: idle(engine))


def assert_streamed_as_the_eng(log: Log, eng: Any) -> None:
    final = [c for c in eng.claims if c.checkable]
    gone = {(r, c.index) for r, cs in log.retracted for c in cs}
    standing = [c for r, c, _ in log.claims if (r, c.index) not in gone]
    assert [c.index for c in standing] == [c.index for c in final]
    assert all(same_verdict(a, b) for a, b in zip(standing, final, strict=True))


def verdicts(eng: Any) -> dict[str, Any]:
    """The ENG minus its request id (a span id, new on every run)."""
    return {k: v for k, v in eng.verdicts().items() if k != "id"}


def test_streaming_response_gives_verdicts_before_the_stream_ends(
    index: VectorStoreIndex, engine: NecessityEngine, log: Log
) -> None:
    query_engine = index.as_query_engine(similarity_top_k=4, streaming=True, llm=slow(engine))
    response = query_engine.query(QUESTION)
    assert isinstance(response, StreamingResponse)
    tokens = []
    for token in response.response_gen:
        tokens.append(token)
        log.tokens += 1
    assert tokens == words(ANSWER)  # unchanged, as they came
    handler = eli.installed_handler()
    assert handler is not None
    eng = handler.result(response, timeout=30).eng
    assert log.early(len(tokens))[:2] == [0, 1]  # before the app read the last token
    assert log.claims[1][1].status == "contradicted"
    assert log.claims[1][1].contradicted_by_ids == [
        eng.contexts[eng.claims[1].contradicted_by[0]].id
    ]
    assert_streamed_as_the_eng(log, eng)
    plain = index.as_query_engine(similarity_top_k=4, llm=SlowLLM()).query(QUESTION)
    assert verdicts(handler.result(plain, timeout=30).eng) == verdicts(eng)
    assert engine.open_streams == 0


async def test_async_streaming_response(
    index: VectorStoreIndex, engine: NecessityEngine, log: Log
) -> None:
    query_engine = index.as_query_engine(similarity_top_k=4, streaming=True, llm=slow(engine))
    response = await query_engine.aquery(QUESTION)
    assert isinstance(response, AsyncStreamingResponse)
    tokens = []
    async for token in response.async_response_gen():
        tokens.append(token)
        log.tokens += 1
    assert "".join(tokens) == ANSWER
    handler = eli.installed_handler()
    assert handler is not None
    eng = (await handler.aresult(response, timeout=30)).eng
    assert log.early(len(tokens))[:2] == [0, 1]  # before the app read the last token
    assert_streamed_as_the_eng(log, eng)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_stream_chat_and_astream_chat(
    index: VectorStoreIndex, engine: NecessityEngine, log: Log, mode: str
) -> None:
    chat = ContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4), llm=slow(engine))
    if mode == "sync":
        reply = await asyncio.to_thread(chat.stream_chat, QUESTION)
        tokens = []
        for token in reply.response_gen:
            tokens.append(token)
            log.tokens += 1
    else:
        reply = await chat.astream_chat(QUESTION)
        tokens = []
        async for token in reply.async_response_gen():
            tokens.append(token)
            log.tokens += 1
    assert "".join(tokens) == ANSWER
    handler = eli.installed_handler()
    assert handler is not None
    eng = (await handler.aresult(reply, timeout=30)).eng
    assert eng.question == QUESTION and eng.answer == ANSWER
    assert log.early(len(tokens))[:2] == [0, 1]  # before the app read the last token
    assert_streamed_as_the_eng(log, eng)


class StreamingAgentLLM(MockFunctionCallingLLM):
    """LlamaIndex's function-calling mock, streaming its replies word by word."""

    pace: Any = Field(default=None, exclude=True)

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        reply = self._get_response_generator()(messages, **kwargs)

        async def chunks() -> AsyncIterator[ChatResponse]:
            if reply.additional_kwargs.get("tool_calls") or not reply.content:
                yield ChatResponse(message=reply, delta=reply.content or "")
                return
            text = ""
            for word in words(reply.content):
                if self.pace is not None:
                    await asyncio.to_thread(self.pace)
                text += word
                message = ChatMessage(role="assistant", content=text)
                yield ChatResponse(message=message, delta=word)

        return chunks()


def facts(input: str) -> str:
    """Facts about Paris, the Eiffel Tower and fruit."""
    return " ".join(DOCS[:3])


def agent_llm(engine: NecessityEngine | None) -> StreamingAgentLLM:
    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        if not any(m.role.value == "tool" for m in messages):
            call = ToolSelection(tool_id="call-1", tool_name="facts", tool_kwargs={"input": "x"})
            return ChatMessage(
                role="assistant", content="", additional_kwargs={"tool_calls": [call]}
            )
        return ChatMessage(role="assistant", content=ANSWER)

    return StreamingAgentLLM(
        response_generator=respond, pace=None if engine is None else (lambda: idle(engine))
    )


async def test_agent_stream_events(engine: NecessityEngine, log: Log) -> None:
    async def events(llm: StreamingAgentLLM) -> tuple[list[str], Any]:
        agent = FunctionAgent(tools=[FunctionTool.from_defaults(facts)], llm=llm)
        run = agent.run(user_msg=QUESTION)
        seen = []
        async for event in run.stream_events():
            if isinstance(event, AgentStream):
                seen.append(event.delta)
                log.tokens += 1
        return seen, await run

    handler = eli.installed_handler()
    eli.uninstrument()
    plain, plain_output = await events(agent_llm(None))
    eli.instrument(handler)
    log.tokens = 0
    streamed, output = await events(agent_llm(engine))
    assert streamed == plain and str(output) == str(plain_output)
    assert handler is not None
    eng = (await handler.aresult(output, timeout=30)).eng
    assert eng.answer == ANSWER and [c.metadata["tool"] for c in eng.contexts] == ["facts"]
    assert log.early(len(streamed))[:2] == [0, 1]
    assert log.retracted == []
    assert_streamed_as_the_eng(log, eng)


def test_necessity_query_engine_streams_and_prunes_when_exhausted(
    index: VectorStoreIndex, engine: NecessityEngine
) -> None:
    inner = index.as_query_engine(similarity_top_k=4, streaming=True, llm=SlowLLM())
    response = eli.NecessityQueryEngine(inner, engine=engine, keep="minimal").query(QUESTION)
    assert isinstance(response, StreamingResponse)
    assert len(response.source_nodes) == 4  # nothing pruned before the answer is complete
    assert list(response.response_gen) == words(ANSWER)
    kept = [n.node.get_content() for n in response.source_nodes]
    assert sorted(kept) == sorted([DOCS[0], DOCS[2]])  # the contradicted claim needs nothing
    assert response.metadata is not None and response.metadata["ene"].answer == ANSWER
    assert response.metadata["ene_pruning"]["dropped"]


async def test_necessity_query_engine_streams_async(
    index: VectorStoreIndex, engine: NecessityEngine
) -> None:
    inner = index.as_query_engine(similarity_top_k=4, streaming=True, llm=SlowLLM())
    response = await eli.NecessityQueryEngine(inner, engine=engine, keep="minimal").aquery(QUESTION)
    assert isinstance(response, AsyncStreamingResponse)
    assert "".join([t async for t in response.async_response_gen()]) == ANSWER
    assert len(response.source_nodes) == 2 and response.metadata["ene"].counts.contexts_used == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_necessity_chat_engine_streams(
    index: VectorStoreIndex, engine: NecessityEngine, mode: str
) -> None:
    inner = ContextChatEngine.from_defaults(index.as_retriever(similarity_top_k=4), llm=SlowLLM())
    chat = eli.NecessityChatEngine(inner, engine=engine, keep="minimal")
    if mode == "sync":
        reply = await asyncio.to_thread(chat.stream_chat, QUESTION)
        assert len(reply.source_nodes) == 4
        text = "".join(await asyncio.to_thread(lambda: list(reply.response_gen)))
    else:
        reply = await chat.astream_chat(QUESTION)
        text = "".join([t async for t in reply.async_response_gen()])
    assert text == ANSWER
    assert sorted(n.node.get_content() for n in reply.source_nodes) == sorted([DOCS[0], DOCS[2]])


def test_a_guard_stops_a_streaming_response(
    index: VectorStoreIndex, engine: NecessityEngine
) -> None:
    guards: dict[str, ClaimGuard] = {}
    handler = eli.instrument(
        engine=engine, on_claim=lambda rid, claim: guards[rid].on_claim(rid, claim)
    )
    query_engine = index.as_query_engine(similarity_top_k=4, streaming=True, llm=slow(engine))
    response = query_engine.query(QUESTION)
    request_id = handler.request_id(response)
    guard = guards[request_id] = ClaimGuard(
        lambda claim: stop() if claim.status == "contradicted" else None
    )
    shown = "".join(guard.wrap(response.response_gen))
    assert ANSWER.startswith(shown) and "500 metres tall." in shown and "potassium" not in shown
    assert [(c.index, a.kind) for c, a in guard.acted] == [(1, "stop")]
    result = handler.result(request_id, timeout=30)
    assert result.error is not None and "IncompleteRequestError" in result.error
    assert engine.open_streams == 0
