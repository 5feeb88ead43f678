"""Pruning: :func:`prune_unused` / :func:`aprune_unused` return a copy of an answer whose
sources are the minimal sufficient set; an agent's output is pruned through its tool calls."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

from llama_index.core.agent.workflow import AgentOutput, ToolCallResult
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.chat_engine.types import AgentChatResponse, StreamingAgentChatResponse
from llama_index.core.schema import NodeWithScore

from ene_core import Engine, EvidenceNecessityGraph, InvalidInputError, default_engine, prune
from ene_core.kit.pruning import DEFAULT_KEEP, KeepPolicy, PruneResult

from .handler import NecessityHandler
from .install import installed_handler
from .translate import _context, _tool_context

logger = logging.getLogger("ene.llama_index")


@dataclasses.dataclass(frozen=True)
class _Answered:
    """What pruning needs from any LlamaIndex answer object, and how to copy it."""

    original: Any
    answer: str
    nodes: list[NodeWithScore]

    def contexts(self) -> list[dict[str, Any]]:
        return [_context(n) for n in self.nodes]

    def fits(self, eng: Any, engine: Engine | None) -> bool:
        """Whether ``eng`` was computed on exactly these nodes (and by ``engine``'s verifier)."""
        return _verified_by(eng, engine) and [c.id for c in eng.contexts] == [
            n.node.node_id for n in self.nodes
        ]

    def copy(self, nodes: list[NodeWithScore], metadata: dict[str, Any]) -> Any:
        item = self.original
        if isinstance(item, (StreamingResponse, AsyncStreamingResponse)):
            return Response(self.answer, nodes, metadata)
        if isinstance(item, StreamingAgentChatResponse):
            return AgentChatResponse(self.answer, list(item.sources), nodes, metadata=metadata)
        return dataclasses.replace(item, source_nodes=nodes, metadata=metadata)


def _verified_by(eng: Any, engine: Engine | None) -> bool:
    return isinstance(eng, EvidenceNecessityGraph) and (
        engine is None or eng.verifier.model == engine.oracle.name
    )


def _answered(response: Any, text: str | None) -> _Answered:
    """Read ``response`` without touching it; ``text`` is the streamed answer when known."""
    if isinstance(response, Response):
        return _Answered(response, "" if response.response is None else str(response), [])
    if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
        text = response.response_txt if response.response_txt is not None else text
    elif isinstance(response, StreamingAgentChatResponse):
        text = response.response or text
    elif isinstance(response, AgentChatResponse):
        text = response.response
    else:
        raise InvalidInputError(
            "prune_unused takes a Response, StreamingResponse, AgentChatResponse, "
            f"StreamingAgentChatResponse or AgentOutput, got {type(response).__name__}"
        )
    if text is None:
        raise InvalidInputError(
            f"this {type(response).__name__} has not been consumed: read the whole stream "
            "first (e.g. response.get_response() or iterate response.response_gen)"
        )
    return _Answered(response, text, [])


def _view(response: Any, pending: tuple[NecessityHandler, str] | None) -> _Answered:
    streamed = None
    if pending is not None:
        done = pending[0].dispatcher.results.get(pending[1])
        streamed = done.eng.answer if done is not None and done.eng is not None else None
    view = _answered(response, streamed)
    return dataclasses.replace(view, nodes=list(getattr(response, "source_nodes", None) or []))


def prune_unused(
    response: Any,
    *,
    engine: Engine | None = None,
    keep: KeepPolicy = DEFAULT_KEEP,
    question: str | None = None,
    timeout: float = 30.0,
) -> Any:
    """A copy of ``response`` whose ``source_nodes`` are the ones the answer used.

    Takes a ``Response``, an ``AgentChatResponse``, or a consumed ``StreamingResponse`` /
    ``StreamingAgentChatResponse`` (their copies are a ``Response`` / ``AgentChatResponse``).
    The original is never modified. Keeps the nodes the ``keep`` policy keeps, in order (default
    ``"safe"``: the ENG's minimal sufficient set plus the nodes that contradict a claim or back an
    uncertain verdict; ``"minimal"``, ``"necessary"``, ``"cited"``: see
    :mod:`ene_core.kit.pruning`).
    The copy's ``metadata["ene"]`` holds the graph and ``metadata["ene_pruning"]`` the kept and
    dropped node ids, ``tokens_saved``, the reason, the ``policy`` and ``why`` each kept node was
    kept (node id -> reasons). The graph is reused from the installed handler when it covers
    the same nodes, else evaluated with ``engine`` (default: the shared engine). Fail-safe: if
    evaluation fails nothing is pruned and the reason says why. For ``AsyncStreamingResponse``
    use :func:`aprune_unused`.

    An ``AgentOutput`` (what ``await agent.run(...)`` returns) is pruned through its tool calls:
    the answer's graph says which tool outputs it needed; a needed output's raw ``Response`` (a
    query engine tool's) is replaced by its pruned copy (the linked inner ENG's set), the others
    by copies with no ``source_nodes``. Every tool call stays, with its arguments and the content
    the model read. The copy's ``metadata`` (an event field) holds ``ene`` and ``ene_pruning``:
    the tool call ids kept and dropped, and per tool call the node ids kept and dropped.
    """
    if isinstance(response, AgentOutput):
        return _prune_agent(response, engine=engine, keep=keep, question=question, timeout=timeout)
    if isinstance(response, AsyncStreamingResponse) and response.response_txt is None:
        raise TypeError("an AsyncStreamingResponse needs `await aprune_unused(response)`")
    pending = _pending(response)
    if pending is not None and _needs_stream_text(response):
        with contextlib.suppress(Exception):
            pending[0].result(pending[1], timeout)
    view = _view(response, pending)
    eng, error = _graph(view, pending, question, engine, timeout)
    return _pruned(view, eng, error, keep, pending)


async def aprune_unused(
    response: Any,
    *,
    engine: Engine | None = None,
    keep: KeepPolicy = DEFAULT_KEEP,
    question: str | None = None,
    timeout: float = 30.0,
) -> Any:
    """:func:`prune_unused` for async code (also takes a consumed ``AsyncStreamingResponse``)."""
    if isinstance(response, AgentOutput):
        return await _aprune_agent(
            response, engine=engine, keep=keep, question=question, timeout=timeout
        )
    pending = _pending(response)
    if pending is not None and _needs_stream_text(response):
        with contextlib.suppress(Exception):
            await pending[0].aresult(pending[1], timeout)
    view = _view(response, pending)
    eng, error = await _agraph(view, pending, question, engine, timeout)
    return _pruned(view, eng, error, keep, pending)


def _needs_stream_text(response: Any) -> bool:
    if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
        return response.response_txt is None
    return isinstance(response, StreamingAgentChatResponse) and not response.response


def _pruned(
    view: _Answered,
    eng: EvidenceNecessityGraph | None,
    error: str | None,
    keep: KeepPolicy,
    pending: tuple[NecessityHandler, str] | None,
) -> Any:
    outcome = prune(view.nodes, eng, keep=keep)
    metadata = _metadata(view.original, eng, pending)
    ids = [n.node.node_id for n in view.nodes]
    metadata["ene_pruning"] = _info(outcome, ids, error)
    return view.copy(list(outcome.kept), metadata)


def _info(outcome: PruneResult[Any], ids: list[str], error: str | None) -> dict[str, Any]:
    """``metadata["ene_pruning"]``: what was kept and dropped (by id), and why."""
    return {
        "kept": [ids[i] for i in outcome.kept_indices],
        "dropped": [ids[i] for i in outcome.dropped_indices],
        "tokens_saved": outcome.tokens_saved,
        "reason": outcome.reason if error is None else f"{outcome.reason} ({error})",
        "policy": outcome.policy,
        "why": {
            ids[i]: [str(r) for r in reasons]
            for i, reasons in zip(outcome.kept_indices, outcome.why, strict=True)
        },
    }


def _metadata(
    original: Any, eng: EvidenceNecessityGraph | None, pending: tuple[NecessityHandler, str] | None
) -> dict[str, Any]:
    """The copy's metadata: the original's, with this request id and graph."""
    metadata = dict(getattr(original, "metadata", None) or {})
    metadata.pop("ene", None)  # a graph by another verifier or on other nodes does not apply
    if pending is not None:
        metadata["ene_request_id"] = pending[1]
    if eng is not None:
        metadata["ene"] = eng
    return metadata


def _pending(response: Any) -> tuple[NecessityHandler, str] | None:
    """The installed handler and the request id it gave this response, if any."""
    handler = installed_handler()
    if handler is None:
        return None
    try:
        return handler, handler.request_id(response)
    except KeyError:
        return None


def _known(response: Any) -> Any:
    """A graph the response already carries (``attach_metadata`` or an earlier pruning)."""
    metadata = getattr(response, "metadata", None)
    return metadata.get("ene") if isinstance(metadata, dict) else None


def _graph(
    view: _Answered | _AgentView,
    pending: tuple[NecessityHandler, str] | None,
    question: str | None,
    engine: Engine | None,
    timeout: float,
) -> tuple[EvidenceNecessityGraph | None, str | None]:
    """The response's or the handler's graph when it fits, else a fresh one; or why none."""
    try:
        eng = _known(view.original)
        if not view.fits(eng, engine) and pending:
            with contextlib.suppress(Exception):  # waiting on the handler is an optimisation
                eng = pending[0].result(pending[1], timeout).eng
        if view.fits(eng, engine):
            return eng, None
        contexts = view.contexts()
        if not contexts:
            return None, "no contexts to evaluate against"
        return (engine or default_engine()).evaluate(view.answer, contexts, question), None
    except Exception as exc:
        logger.warning("ENE pruning kept every node: %s", exc)
        return None, f"{type(exc).__name__}: {exc}"


async def _agraph(
    view: _Answered | _AgentView,
    pending: tuple[NecessityHandler, str] | None,
    question: str | None,
    engine: Engine | None,
    timeout: float,
) -> tuple[EvidenceNecessityGraph | None, str | None]:
    try:
        eng = _known(view.original)
        if not view.fits(eng, engine) and pending:
            with contextlib.suppress(Exception):
                eng = (await pending[0].aresult(pending[1], timeout)).eng
        if view.fits(eng, engine):
            return eng, None
        contexts = view.contexts()
        if not contexts:
            return None, "no contexts to evaluate against"
        return await (engine or default_engine()).aevaluate(view.answer, contexts, question), None
    except Exception as exc:
        logger.warning("ENE pruning kept every node: %s", exc)
        return None, f"{type(exc).__name__}: {exc}"


# -- pruning an agent's output: through its tool calls -----------------------------------------
_SOURCED = (Response, AgentChatResponse)  # tool outputs whose source_nodes can be pruned


@dataclasses.dataclass(frozen=True)
class _AgentView:
    """An ``AgentOutput`` as pruning sees it: the answer and this run's tool call results."""

    original: AgentOutput
    answer: str
    results: list[ToolCallResult]

    @classmethod
    def of(cls, output: AgentOutput) -> _AgentView:
        calls: list[Any] = list(output.tool_calls)  # typed ToolSelection; holds the results
        results = [t for t in calls if isinstance(t, ToolCallResult)]
        return cls(output, str(output.response.content or ""), results)

    def contexts(self) -> list[dict[str, Any]]:
        return [_tool_context(r, i) for i, r in enumerate(self.results)]

    def fits(self, eng: Any, engine: Engine | None) -> bool:
        """Whether ``eng`` covers exactly these tool outputs (in any order), by ``engine``."""
        ids = [c["id"] for c in self.contexts()]
        return (
            _verified_by(eng, engine)
            and len(set(ids)) == len(ids) == len(eng.contexts)
            and set(ids) == {c.id for c in eng.contexts}
        )

    def sourced(self) -> list[int]:
        """Positions of the tool results whose raw output carries source nodes to prune."""
        return [
            i for i, r in enumerate(self.results) if isinstance(r.tool_output.raw_output, _SOURCED)
        ]

    def pruned(
        self,
        eng: EvidenceNecessityGraph | None,
        error: str | None,
        keep: KeepPolicy,
        pending: tuple[NecessityHandler, str] | None,
        inner: dict[int, Any],
    ) -> AgentOutput:
        """The copy: every tool call stays; each sourced output's raw copy is ``inner``'s, emptied
        of its sources when the answer did not need that output."""
        ids = [c["id"] for c in self.contexts()]
        at = {ident: i for i, ident in enumerate(ids)}
        order = [at[c.id] for c in eng.contexts] if eng is not None else list(range(len(ids)))
        outcome = prune(order, eng, keep=keep)
        needed = set(outcome.kept)
        info = _info(outcome, [ids[i] for i in order], error)
        calls: list[Any] = []
        sources: dict[str, Any] = {}
        for i, result in enumerate(self.results):
            raw = inner.get(i)
            if raw is None:
                calls.append(_event_copy(result))
                continue
            if i not in needed:
                raw = _drop_sources(result.tool_output.raw_output, raw)
            sources[ids[i]] = {k: raw.metadata["ene_pruning"][k] for k in ("kept", "dropped")}
            output = result.tool_output.model_copy(update={"raw_output": raw})
            calls.append(_event_copy(result, tool_output=output))
        metadata = _metadata(self.original, eng, pending)
        metadata["ene_pruning"] = {
            **info,
            "kept": [ids[i] for i in sorted(needed)],
            "dropped": [ids[i] for i in sorted(outcome.dropped)],
            "sources": sources,
        }
        copy = _event_copy(self.original, tool_calls=calls)
        copy.metadata = metadata  # the copy's own event data, never the original's
        return copy


def _event_copy(event: Any, **update: Any) -> Any:
    """A shallow copy of a workflow event with its own dynamic-field dict (not shared)."""
    copy = event.model_copy(update=update)
    copy._data = dict(event._data)
    return copy


def _drop_sources(original: Any, pruned: Any) -> Any:
    """``pruned`` (a tool output's pruned copy) with no sources left: the answer did not need it."""
    nodes = list(original.source_nodes or [])
    eng = pruned.metadata.get("ene")
    if isinstance(eng, EvidenceNecessityGraph) and len(eng.contexts) == len(nodes):
        tokens = sum(c.tokens for c in eng.contexts)
    else:  # no graph of it: words, as the engine counts without a tokenizer
        tokens = sum(len(n.node.get_content().split()) for n in nodes)
    info = {
        "kept": [],
        "dropped": [n.node.node_id for n in nodes],
        "tokens_saved": tokens,
        "reason": "the agent's answer did not need this tool output",
        "policy": pruned.metadata.get("ene_pruning", {}).get("policy"),
        "why": {},
    }
    return dataclasses.replace(
        pruned, source_nodes=[], metadata={**pruned.metadata, "ene_pruning": info}
    )


def _tool_question(result: ToolCallResult) -> str | None:
    """The query a tool was called with (the inner engine's question)."""
    query = result.tool_kwargs.get("input")
    return query if isinstance(query, str) else None


def _prune_agent(
    output: AgentOutput,
    *,
    engine: Engine | None,
    keep: KeepPolicy,
    question: str | None,
    timeout: float,
) -> AgentOutput:
    """A copy of an agent's output whose tool outputs carry only the sources the answer needed.

    The answer's graph (the handler's, else evaluated against this run's tool outputs) says which
    tool outputs the answer needed; each needed output that carries source nodes (a query engine
    tool's ``Response``) is pruned by its own graph, the linked inner ENG
    (:func:`prune_unused`); the others keep no sources. Tool calls themselves (ids, arguments,
    the content the model read) all stay. Each level fails safe on its own.
    """
    pending = _pending(output)
    view = _AgentView.of(output)
    eng, error = _graph(view, pending, question, engine, timeout)
    options: dict[str, Any] = {"engine": engine, "keep": keep, "timeout": timeout}
    inner = {
        i: prune_unused(
            view.results[i].tool_output.raw_output,
            question=_tool_question(view.results[i]),
            **options,
        )
        for i in view.sourced()
    }
    return view.pruned(eng, error, keep, pending, inner)


async def _aprune_agent(
    output: AgentOutput,
    *,
    engine: Engine | None,
    keep: KeepPolicy,
    question: str | None,
    timeout: float,
) -> AgentOutput:
    pending = _pending(output)
    view = _AgentView.of(output)
    eng, error = await _agraph(view, pending, question, engine, timeout)
    options: dict[str, Any] = {"engine": engine, "keep": keep, "timeout": timeout}
    positions = view.sourced()
    copies = await asyncio.gather(
        *(
            aprune_unused(
                view.results[i].tool_output.raw_output,
                question=_tool_question(view.results[i]),
                **options,
            )
            for i in positions
        )
    )
    return view.pruned(eng, error, keep, pending, dict(zip(positions, copies, strict=True)))
