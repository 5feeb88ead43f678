"""A small offline world for agent and graph tests: a real InMemoryVectorStore over keyword
embeddings, and scripted chat models (real BaseChatModel subclasses) that emit tool calls, and
stream."""

from __future__ import annotations

import asyncio
import json
import re
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore

STOP = {"the", "is", "a", "an", "of", "in", "was", "how", "what", "when", "and", "it", "who"}

CORPUS = [
    Document("The Eiffel Tower is 330 metres tall.", id="tower-height"),
    Document("The Eiffel Tower was completed in 1889.", id="tower-year"),
    Document("Gustave Eiffel's company built the tower.", id="tower-builder"),
    Document("The Louvre is the most visited museum in the world.", id="louvre"),
    Document("Bananas are rich in potassium.", id="banana"),
    Document("The Seine flows through Paris.", id="seine"),
]


class FixedRetriever(BaseRetriever):
    """The same documents for every query: ``texts`` in order, ``metadata["n"]`` their index."""

    texts: list[str]

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return [Document(page_content=t, metadata={"n": i}) for i, t in enumerate(self.texts)]


class KeywordEmbeddings(Embeddings):
    """Bag of content words hashed into 256 dimensions: similar words, similar vectors."""

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * 256
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            if word not in STOP:
                vector[zlib.crc32(word.encode()) % 256] += 1.0
        norm = sum(v * v for v in vector) ** 0.5 or 1.0
        return [v / norm if norm else 1e-9 for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def make_store(corpus: Sequence[Document] = CORPUS) -> InMemoryVectorStore:
    store = InMemoryVectorStore(KeywordEmbeddings())
    store.add_documents(list(corpus))
    return store


def text_of(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


class ScriptedChatModel(BaseChatModel):
    """A chat model whose reply is ``respond(messages)``; ``bind_tools`` returns itself."""

    respond: Any

    @property
    def _llm_type(self) -> str:
        return "ene-scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.respond(messages))])


def agent_script(
    answers: dict[str, str],
    *,
    tool: str | None = "retrieve",
    queries: dict[str, list[str]] | None = None,
) -> Callable[[list[BaseMessage]], AIMessage]:
    """An agent's model: for the last user message, call ``tool`` (once per query, in one
    message: parallel tool calls) unless a tool already answered this turn; then answer."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        question = text_of(messages[humans[-1]])
        this_turn = messages[humans[-1] + 1 :]
        if tool and not any(isinstance(m, ToolMessage) for m in this_turn):
            asked = (queries or {}).get(question, [question])
            calls = [
                {"name": tool, "args": {"query": q}, "id": f"call-{len(messages)}-{i}"}
                for i, q in enumerate(asked)
            ]
            return AIMessage("", tool_calls=calls)
        return AIMessage(answers[question])

    return respond


def by_keyword(rules: Sequence[tuple[str, str]], default: str = "") -> Callable[..., AIMessage]:
    """A model that answers the reply of the first rule whose keyword is in its input."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        seen = "\n".join(text_of(m) for m in messages)
        for keyword, reply in rules:
            if keyword in seen:
                return AIMessage(reply)
        return AIMessage(default)

    return respond


class StreamingChatModel(ScriptedChatModel):
    """A :class:`ScriptedChatModel` that streams: its reply word by word, a tool call in one
    chunk. ``pace()`` runs before each word (a slow model: tests wait for ENE's worker there)."""

    pace: Any = None

    def _chunks(self, messages: list[BaseMessage]) -> list[ChatGenerationChunk]:
        message = self.respond(messages)
        if message.tool_calls:
            calls = [
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(message.tool_calls)
            ]
            return [ChatGenerationChunk(message=AIMessageChunk("", tool_call_chunks=calls))]
        words = re.findall(r"\S+\s*", text_of(message))
        return [ChatGenerationChunk(message=AIMessageChunk(word)) for word in words]

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if self.pace is not None and chunk.message.content:
                self.pace()
            yield chunk

    async def _astream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if self.pace is not None and chunk.message.content:
                await asyncio.to_thread(self.pace)
            yield chunk
