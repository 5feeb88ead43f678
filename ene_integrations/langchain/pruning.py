"""Runtime pruning: :class:`NecessityPruner` (an LCEL step or a graph node) and
:func:`pruning_middleware` (inside ``create_agent``) drop the documents the answer did not use."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig

from ene_core import Engine, EvidenceNecessityGraph, default_engine, prune
from ene_core.kit.pruning import DEFAULT_KEEP, KEEP_POLICIES, KeepPolicy
from ene_core.kit.runs import normalise

from .translate import _artifact_documents, _is_document, _text

logger = logging.getLogger("ene.langchain")


class NecessityPruner(Runnable[Mapping[str, Any], dict[str, Any]]):
    """Keep the documents the answer used, in their original order: an LCEL step or a node.

    *Sources mode* (the input has ``answer_key``): a mapping with the answer, the documents
    (``context_key``) and, optionally, the question. Output: the same mapping with the documents
    reduced by the ``keep`` policy (default ``"safe"``: the ENG's minimal sufficient set plus the
    documents that contradict a claim or back an uncertain verdict; ``"minimal"``, ``"necessary"``,
    ``"cited"``: see :mod:`ene_core.kit.pruning`), plus ``evidence`` (the ENG) and
    ``tokens_before``/``tokens_after``::

        RunnableParallel({"context": retriever, "question": RunnablePassthrough()})
            .assign(answer=rag_chain).pipe(NecessityPruner())

    *Messages mode* (no ``answer_key`` but ``messages_key``: an agent's or a ``MessagesState``
    graph's state): the answer is the final AI message, the question the last human message,
    the documents the artifacts of this turn's tool messages; the output has the same messages
    with unused documents dropped from those artifacts (copies; the content the model read is
    unchanged), plus ``evidence``/``tokens_before``/``tokens_after``. Use it after an agent
    (``agent | NecessityPruner()``) or as the last node of a graph (messages keep their ids,
    so LangGraph replaces them); inside ``create_agent`` use :func:`pruning_middleware`.

    Evaluates on the request path by design (micro-batched with concurrent requests). If the
    evaluation fails or takes longer than ``timeout_s``, nothing is pruned, ``evidence`` is
    ``None`` and the failure is logged.
    """

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        answer_key: str = "answer",
        context_key: str = "context",
        question_key: str = "question",
        evidence_key: str = "evidence",
        messages_key: str = "messages",
        keep: KeepPolicy = DEFAULT_KEEP,
        timeout_s: float = 30.0,
    ) -> None:
        self._engine = engine
        self.answer_key = answer_key
        self.context_key = context_key
        self.question_key = question_key
        self.evidence_key = evidence_key
        self.messages_key = messages_key
        if keep not in KEEP_POLICIES:
            raise ValueError(f"keep must be one of {KEEP_POLICIES}, got {keep!r}")
        self.keep = keep
        self.timeout_s = timeout_s
        self._logged: set[str] = set()

    @property
    def engine(self) -> Engine:
        return self._engine if self._engine is not None else default_engine()

    def invoke(
        self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._call_with_config(self._prune, input, config, run_type="chain")

    async def ainvoke(
        self, input: Mapping[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await self._acall_with_config(self._aprune, input, config, run_type="chain")

    def _prune(self, input: Mapping[str, Any]) -> dict[str, Any]:
        job = self._read(input)
        eng = None
        if job.answer is not None and job.documents:
            try:
                eng = self.engine.submit(job.answer, job.documents, job.question).result(
                    timeout=self.timeout_s
                )
            except Exception as exc:
                self._failed(exc)
        return self._write(input, job, eng)

    async def _aprune(self, input: Mapping[str, Any]) -> dict[str, Any]:
        job = self._read(input)
        eng = None
        if job.answer is not None and job.documents:
            try:
                eng = await asyncio.wait_for(
                    self.engine.aevaluate(job.answer, job.documents, job.question),
                    self.timeout_s,
                )
            except Exception as exc:
                self._failed(exc)
        return self._write(input, job, eng)

    def _read(self, input: Mapping[str, Any]) -> _PruneJob:
        """Wiring errors (wrong keys or types) raise: they are the caller's bug, not ENE's."""
        if not isinstance(input, Mapping):
            raise TypeError(f"NecessityPruner needs a mapping, got {type(input).__name__}")
        if self.answer_key not in input and self.messages_key in input:
            return _PruneJob.from_messages(list(input[self.messages_key]))
        for key in (self.answer_key, self.context_key):
            if key not in input:
                raise KeyError(
                    f"NecessityPruner input has no {key!r} (keys: {sorted(input)}); "
                    f"set answer_key=/context_key=, or pass a state with {self.messages_key!r}"
                )
        answer = input[self.answer_key]
        if not isinstance(answer, str):
            raise TypeError(f"{self.answer_key!r} must be a str, got {type(answer).__name__}")
        question = input.get(self.question_key)
        documents = list(input[self.context_key])
        return _PruneJob(answer, documents, question if isinstance(question, str) else None)

    def _failed(self, error: BaseException) -> None:
        kind = type(error).__name__
        if kind not in self._logged:  # log each kind of failure once
            self._logged.add(kind)
            logger.warning("ENE pruning skipped (nothing pruned): %s: %s", kind, error)

    def _write(
        self, input: Mapping[str, Any], job: _PruneJob, eng: EvidenceNecessityGraph | None
    ) -> dict[str, Any]:
        result = prune(job.documents, eng, keep=self.keep)
        before = None if eng is None else sum(c.tokens for c in eng.contexts)
        after = None if before is None else before - result.tokens_saved
        out = {**input, self.evidence_key: eng, "tokens_before": before, "tokens_after": after}
        if job.messages is None:
            out[self.context_key] = result.kept
        else:
            out[self.messages_key] = job.pruned_messages(result.kept)
        return out


@dataclass
class _PruneJob:
    """What a pruner evaluates; in messages mode also the messages and their artifacts."""

    answer: str | None
    documents: list[Any]
    question: str | None = None
    messages: list[Any] | None = None
    tools: list[int] = field(default_factory=list)  # positions of this turn's tool messages

    @classmethod
    def from_messages(cls, messages: list[Any]) -> _PruneJob:
        final = messages[-1] if messages else None
        answer = None
        if isinstance(final, AIMessage) and not final.tool_calls:
            answer = _text(final.content)
        humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        start = humans[-1] + 1 if humans else 0
        question = _text(messages[humans[-1]].content) if humans else None
        tools: list[int] = []
        documents: dict[str, Any] = {}  # each document once (by id, else by text)
        for i in range(start, len(messages)):
            m = messages[i]
            if isinstance(m, ToolMessage) and _artifact_documents(m.artifact):
                tools.append(i)
                for doc in _artifact_documents(m.artifact):
                    documents.setdefault(_doc_key(doc), doc)
        return cls(answer, list(documents.values()), question, messages, tools)

    def pruned_messages(self, kept: list[Any]) -> list[Any]:
        """The messages with this turn's artifacts reduced to ``kept`` (copies, same ids)."""
        assert self.messages is not None
        keys = {_doc_key(d) for d in kept}
        out = list(self.messages)
        for i in self.tools:
            message = out[i]
            artifact = message.artifact
            if _is_document(artifact):
                artifact = [artifact]
            new = [d for d in artifact if not _is_document(d) or _doc_key(d) in keys]
            if len(new) != len(artifact):
                out[i] = message.model_copy(update={"artifact": new})
        return out


def _doc_key(doc: Any) -> str:
    """A document's identity, as :mod:`ene_core.kit.runs` sees it: its id, else its text."""
    if isinstance(doc, Mapping):
        ident, text = doc.get("id"), doc["page_content"]
    else:
        ident, text = doc.id, doc.page_content
    return f"id:{ident}" if ident else f"text:{normalise(text)}"


def pruning_middleware(
    engine: Engine | None = None,
    *,
    keep: KeepPolicy = DEFAULT_KEEP,
    timeout_s: float = 30.0,
) -> Any:
    """An agent middleware for ``create_agent(..., middleware=[pruning_middleware()])``: after
    the agent answers, unused documents are dropped from this turn's tool-message artifacts
    (the sources an app shows; the messages keep their ids and content). Needs ``langchain``
    (>= 1.0). Fail-safe like :class:`NecessityPruner`: on failure nothing is pruned."""
    from langchain.agents.middleware import AgentMiddleware

    pruner = NecessityPruner(engine, keep=keep, timeout_s=timeout_s)

    def changed(state: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any] | None:
        before = list(state.get("messages", ()))
        updates = [m for m, old in zip(out["messages"], before, strict=False) if m is not old]
        return {"messages": updates} if updates else None

    class NecessityPruningMiddleware(AgentMiddleware):  # type: ignore[misc]
        """Drops unused documents from tool artifacts after the agent answers."""

        def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            messages = {"messages": list(state.get("messages", ()))}
            return changed(state, pruner._prune(messages))

        async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            messages = {"messages": list(state.get("messages", ()))}
            return changed(state, await pruner._aprune(messages))

    return NecessityPruningMiddleware()
