"""Query and chat engines that prune: :class:`NecessityQueryEngine` and
:class:`NecessityChatEngine` wrap an engine so every answer carries its ENG and (by default)
only the sources it used."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.chat_engine.types import (
    AgentChatResponse,
    BaseChatEngine,
    StreamingAgentChatResponse,
)
from llama_index.core.schema import QueryBundle

from ene_core import Engine
from ene_core.kit.pruning import DEFAULT_KEEP, KeepPolicy

from .install import installed_handler
from .pruning import _Answered, aprune_unused, prune_unused

logger = logging.getLogger("ene.llama_index")


class _Pruning:
    """What :class:`NecessityQueryEngine` and :class:`NecessityChatEngine` share."""

    prune: bool
    engine: Engine | None
    keep: KeepPolicy
    timeout: float

    def _options(self, question: str) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "keep": self.keep,
            "question": question,
            "timeout": self.timeout,
        }

    def _finish(self, original: Any, pruned: Any) -> Any:
        """The pruned copy, or with ``prune=False`` a copy of the original with the graph."""
        if self.prune:
            return pruned
        metadata = dict(getattr(original, "metadata", None) or {})
        for key in ("ene", "ene_request_id"):
            if key in pruned.metadata:
                metadata[key] = pruned.metadata[key]
        return _Answered(original, pruned.response, []).copy(
            list(getattr(original, "source_nodes", None) or []), metadata
        )

    def _now(self, response: Any, question: str) -> Any:
        return self._finish(response, prune_unused(response, **self._options(question)))

    async def _anow(self, response: Any, question: str) -> Any:
        return self._finish(response, await aprune_unused(response, **self._options(question)))

    # -- streams: the tokens pass through as they come; the sources are pruned at the end ----------
    def _stream(self, inner: StreamingResponse, question: str) -> StreamingResponse:
        def tokens() -> Generator[str, None, None]:
            parts = []
            for token in inner.response_gen:
                parts.append(token)
                yield token
            inner.response_txt = "".join(parts)  # our own inner response, read to the end
            _settled(out, lambda: self._now(inner, question))

        out = StreamingResponse(tokens(), list(inner.source_nodes), dict(inner.metadata or {}))
        _follow(inner, out)
        return out

    def _astream(self, inner: AsyncStreamingResponse, question: str) -> AsyncStreamingResponse:
        async def tokens() -> AsyncGenerator[str, None]:
            parts = []
            async for token in inner.response_gen:
                parts.append(token)
                yield token
            inner.response_txt = "".join(parts)
            _settled(out, await _attempt(self._anow(inner, question)))

        out = AsyncStreamingResponse(tokens(), list(inner.source_nodes), dict(inner.metadata or {}))
        _follow(inner, out)
        return out

    def _chat_stream(
        self, inner: StreamingAgentChatResponse, question: str
    ) -> StreamingAgentChatResponse:
        out = _chat_copy(inner)
        _follow(inner, out)

        def chats() -> Generator[ChatResponse, None, None]:
            text = ""
            for token in inner.response_gen:
                text += token
                yield ChatResponse(message=ChatMessage(content=text), delta=token)
            _settled(out, lambda: self._now(inner, question))

        out.chat_stream = chats()
        return out

    def _achat_stream(
        self, inner: StreamingAgentChatResponse, question: str
    ) -> StreamingAgentChatResponse:
        out = _chat_copy(inner)
        _follow(inner, out)

        async def chats() -> AsyncGenerator[ChatResponse, None]:
            text = ""
            async for token in inner.async_response_gen():
                text += token
                yield ChatResponse(message=ChatMessage(content=text), delta=token)
            _settled(out, await _attempt(self._anow(inner, question)))

        out.achat_stream = chats()
        return out


def _chat_copy(inner: StreamingAgentChatResponse) -> StreamingAgentChatResponse:
    return StreamingAgentChatResponse(
        sources=list(inner.sources),
        source_nodes=list(inner.source_nodes),
        is_writing_to_memory=False,
    )


def _follow(inner: Any, out: Any) -> None:
    """Results of ``inner`` are found by ``out`` too (``handler.result(out)``)."""
    with contextlib.suppress(Exception):
        handler = installed_handler()
        if handler is not None:
            handler._track(handler.request_id(inner), out)


async def _attempt(pruning: Awaitable[Any]) -> Callable[[], Any]:
    try:
        done = await pruning
    except Exception as exc:
        return functools.partial(_raise, exc)
    return lambda: done


def _raise(exc: Exception) -> Any:
    raise exc


def _settled(out: Any, pruned: Callable[[], Any]) -> None:
    """The stream was read to the end: ``out`` takes the pruned sources (and the graph in its
    metadata, where it has one). Fail-safe: on any error the sources stay as they were."""
    try:
        done = pruned()
    except Exception:
        logger.exception("ENE could not prune the streamed answer's sources (all kept)")
        return
    out.source_nodes = list(done.source_nodes)
    if hasattr(out, "metadata"):
        out.metadata = dict(done.metadata or {})


class NecessityQueryEngine(_Pruning, BaseQueryEngine):
    """Wraps any query engine so its responses carry their ENG and (by default) pruned sources.

    ``NecessityQueryEngine(index.as_query_engine(), prune=True)`` is a drop-in query engine:
    ``query`` / ``aquery`` return a copy of the inner engine's response with ``source_nodes``
    reduced by the ``keep`` policy (default ``"safe"``, see :func:`prune_unused`). A streaming
    inner engine is answered with a streaming response again: its tokens pass through unchanged
    as they come, and ``source_nodes`` and ``metadata`` (``ene``, ``ene_pruning``) become the
    pruned ones once the stream is read to the end (pruning needs the whole answer). With
    ``prune=False`` nothing is dropped; the graph is still attached to the copy. This runs
    on the request path by design; failures keep every node. A chat engine passed here answers
    each query with ``chat`` / ``achat`` (as a ``Response``); :class:`NecessityChatEngine` keeps
    the chat interface.
    """

    def __init__(
        self,
        query_engine: BaseQueryEngine | BaseChatEngine,
        *,
        prune: bool = True,
        engine: Engine | None = None,
        keep: KeepPolicy = DEFAULT_KEEP,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(callback_manager=getattr(query_engine, "callback_manager", None))
        self.query_engine = query_engine
        self.prune = prune
        self.engine = engine
        self.keep = keep
        self.timeout = timeout

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {"query_engine": self.query_engine}

    def _query(self, query_bundle: QueryBundle) -> Any:
        inner = self.query_engine
        question = query_bundle.query_str
        if isinstance(inner, BaseChatEngine):
            return _as_response(self._now(inner.chat(question), question))
        response = inner.query(query_bundle)
        if isinstance(response, AsyncStreamingResponse):
            raise TypeError("an async streaming query engine needs `await engine.aquery(...)`")
        if isinstance(response, StreamingResponse):
            return self._stream(response, question)
        return self._now(response, question)

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        inner = self.query_engine
        question = query_bundle.query_str
        if isinstance(inner, BaseChatEngine):
            return _as_response(await self._anow(await inner.achat(question), question))
        response = await inner.aquery(query_bundle)
        if isinstance(response, AsyncStreamingResponse):
            return self._astream(response, question)
        if isinstance(response, StreamingResponse):
            return self._stream(response, question)
        return await self._anow(response, question)


def _as_response(reply: AgentChatResponse) -> Response:
    """A chat reply as a query engine's ``Response`` (what a query engine must return)."""
    return Response(reply.response, reply.source_nodes, reply.metadata)


class NecessityChatEngine(_Pruning, BaseChatEngine):
    """Wraps a chat engine: replies are copies with their ENG and (by default) pruned sources.

    ``chat`` / ``achat`` return an ``AgentChatResponse`` copy (see :func:`prune_unused`);
    ``stream_chat`` / ``astream_chat`` return a stream whose tokens pass through unchanged as
    they come and whose ``source_nodes`` are pruned once it is read to the end (pruning needs
    the whole answer). ``reset`` and ``chat_history`` are the inner engine's.
    """

    def __init__(
        self,
        chat_engine: BaseChatEngine,
        *,
        prune: bool = True,
        engine: Engine | None = None,
        keep: KeepPolicy = DEFAULT_KEEP,
        timeout: float = 30.0,
    ) -> None:
        self.chat_engine = chat_engine
        self.prune = prune
        self.engine = engine
        self.keep = keep
        self.timeout = timeout

    def reset(self) -> None:
        self.chat_engine.reset()

    @property
    def chat_history(self) -> list[Any]:
        return self.chat_engine.chat_history

    def chat(self, message: str, chat_history: list[Any] | None = None) -> AgentChatResponse:
        reply = self.chat_engine.chat(message, chat_history)
        return self._now(reply, message)  # type: ignore[no-any-return]

    async def achat(self, message: str, chat_history: list[Any] | None = None) -> AgentChatResponse:
        reply = await self.chat_engine.achat(message, chat_history)
        return await self._anow(reply, message)  # type: ignore[no-any-return]

    def stream_chat(
        self, message: str, chat_history: list[Any] | None = None
    ) -> StreamingAgentChatResponse:
        return self._chat_stream(self.chat_engine.stream_chat(message, chat_history), message)

    async def astream_chat(
        self, message: str, chat_history: list[Any] | None = None
    ) -> StreamingAgentChatResponse:
        inner = await self.chat_engine.astream_chat(message, chat_history)
        return self._achat_stream(inner, message)
