"""LlamaIndex instrumentation -> the run model: :class:`NecessityHandler`.

Its event and span taps, registered on LlamaIndex's root dispatcher, follow the span tree and
turn each synthesis, combination and agent run into one request for a
:class:`~ene_core.NecessityDispatcher` (see the package docstring for the rules); results are
found by request id or by the object the app got.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from llama_index.core.agent.workflow import AgentWorkflow, BaseWorkflowAgent, ToolCallResult
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.chat_engine.types import BaseChatEngine
from llama_index.core.instrumentation import Dispatcher, get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatInProgressEvent,
    LLMChatStartEvent,
    LLMCompletionEndEvent,
    LLMCompletionInProgressEvent,
    LLMCompletionStartEvent,
)
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.events.synthesis import SynthesizeEndEvent
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.llms.llm import BaseLLM
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.workflow import Workflow

from ene_core import (
    Engine,
    EvidenceNecessityGraph,
    ExpiringDict,
    IncompleteRequestError,
    NecessityDispatcher,
    NecessityResult,
    RunRecorder,
    dispatch_decision,
)
from ene_core.graph import SOURCE_KEY
from ene_core.kit.answer_streams import AnswerStreams, OnClaim, OnRetract
from ene_core.kit.results import Mode
from ene_core.kit.runs import normalise
from ene_core.text.contexts import stable_id

from .filter import ChunkFilterEvent
from .streams import _as_async, _atap, _tap
from .translate import (
    _agent_answer,
    _context,
    _current_span_context,
    _default_recorders,
    _document,
    _llama_span_context,
    _message,
    _query_text,
    _start_question,
    _tool_context,
    _user_message,
)

logger = logging.getLogger("ene.llama_index")
_ENGINES = (BaseQueryEngine, BaseChatEngine)
_AGENTS = (BaseWorkflowAgent, AgentWorkflow)
_RECORDED = ("agent", "workflow")  # units whose model calls and contexts a RunRecorder records
_MAX_DEPTH = 256  # span-tree walks stop here (cycles cannot happen; this bounds bad data)
_MAX_FILTER_CALLS = 64  # chunk filter records kept per engine call (later ones are ignored)


class _Span(NamedTuple):
    parent: str | None
    engine: bool  # the span is a query or chat engine call, whose result gets the ENG too
    message: str | None = None  # a chat engine call's user message


class _OpenSpans:
    """Bounded span id -> value map, written on every span.

    Owner: the handler. Bound: ``max_size``; beyond it the oldest entries are forgotten (a span
    that never exits is dropped, never kept). Evicted: on span exit or drop. A plain dict (its
    single operations are atomic) keeps the per-span cost to a few hundred nanoseconds.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._open: dict[str, Any] = {}
        self._lock = threading.Lock()

    def enter(self, span_id: str, span: Any) -> None:
        self._open[span_id] = span
        if len(self._open) > self.max_size:
            with self._lock:
                while len(self._open) > self.max_size:
                    try:
                        del self._open[next(iter(self._open))]
                    except (KeyError, RuntimeError, StopIteration):  # raced with another thread
                        break

    def exit(self, span_id: str) -> Any:
        return self._open.pop(span_id, None)

    def get(self, span_id: str) -> Any:
        return self._open.get(span_id)

    def __len__(self) -> int:
        return len(self._open)


@dataclasses.dataclass
class _Unit:
    """One answer being produced: a synthesis, a combining ``get_response``, an agent run, or a
    workflow run (evaluated when one of its steps calls an LLM itself)."""

    request_id: str
    root: str  # the outermost span: links to inner answers are looked up within it
    kind: str  # "synthesis" | "combine" | "agent" | "workflow"
    question: str | None
    contexts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    recorder: RunRecorder | None = None  # agents: tool outputs and model calls
    llm_spans: list[str] = dataclasses.field(default_factory=list)
    filters: list[Any] = dataclasses.field(default_factory=list)  # chunk filter calls before it


class NecessityHandler:
    """Evaluates every answer: syntheses, combined answers and agent runs.

    Results by request id, by the object the app got, or by callback. Use :func:`instrument`
    rather than constructing one; the options are the ones of
    :class:`~ene_core.kit.results.NecessityDispatcher` (``mode="inline"`` evaluates before the
    answer is returned, blocking the calling thread - for ``aquery`` the event loop - for at most
    ``inline_timeout_s``; streams are evaluated when exhausted), plus ``attach_metadata``, and
    ``on_claim(request_id, claim)`` / ``on_retract(request_id, claims)``: each claim's verdict
    while a streamed answer is being read (``StreamingResponse``, ``AsyncStreamingResponse``,
    ``stream_chat`` / ``astream_chat``, an agent's streamed LLM calls; see
    :mod:`ene_core.kit.answer_streams`).
    """

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        mode: Mode = "background",
        on_result: Callable[[str, EvidenceNecessityGraph], Any] | None = None,
        on_error: Callable[[str, str], Any] | None = None,
        recorders: Iterable[Callable[[NecessityResult], Any]] = (),
        inline_timeout_s: float = 30.0,
        ttl_s: float = 600.0,
        max_results: int = 10_000,
        max_open_spans: int = 20_000,
        attach_metadata: bool = False,
        on_claim: OnClaim | None = None,
        on_retract: OnRetract | None = None,
    ) -> None:
        self._answers = (
            None
            if on_claim is None
            else AnswerStreams(
                lambda: self.dispatcher.engine,
                on_claim,
                on_retract,
                ttl_s=ttl_s,
                max_requests=max_results,
            )
        )
        settle = [] if self._answers is None else [self._answers.settle]
        self.dispatcher = NecessityDispatcher(
            engine,
            mode=mode,
            on_result=on_result,
            on_error=on_error,
            recorders=[*settle, *_default_recorders(), *recorders],
            inline_timeout_s=inline_timeout_s,
            ttl_s=ttl_s,
            max_results=max_results,
        )
        self.attach_metadata = attach_metadata
        self._spans = _OpenSpans(max_open_spans)
        # Span id -> the unit (request id) it works for; LLM spans stay until their unit ends,
        # because a streamed LLM call reports its end after its span exited.
        self._owners = _OpenSpans(max_open_spans)
        # Unit span id -> unit, while it is being produced. Evicted: when it ends, or ttl.
        self._units: ExpiringDict[str, _Unit] = ExpiringDict(ttl_s=ttl_s, max_size=max_results)
        # Engine span id -> request id, so the engine call's own result is found by identity.
        self._outer: ExpiringDict[str, str] = ExpiringDict(ttl_s=ttl_s, max_size=max_results)
        # Root span id -> normalised answer -> request id: inner answers, for links.
        self._inner: ExpiringDict[str, dict[str, str]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        # Root span id -> node id -> (retriever span id, position, OTel span context).
        self._retrievals: ExpiringDict[str, dict[str, tuple[str, int, Any]]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        # Engine (or root) span id -> the chunk filter records made under it, for the synthesis
        # that follows. Evicted: when that span ends, or ttl.
        self._filters: ExpiringDict[str, list[Any]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        # id(object) -> (weak ref, request id): results by the object the app got, which ENE
        # never writes into (unless attach_metadata). Evicted: ttl or size.
        self._by_object: ExpiringDict[int, tuple[weakref.ref[Any], str]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        self.event_handler = _EventTap(owner=self)
        self.span_handler = _SpanTap(owner=self)

    # -- results ----------------------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        return self.dispatcher.mode

    def result(self, key: Any, timeout: float | None = None) -> NecessityResult:
        """The result for a request id or a response; ``TimeoutError`` if not ready in time."""
        return self.dispatcher.result(self.request_id(key), timeout)

    async def aresult(self, key: Any, timeout: float | None = None) -> NecessityResult:
        """Like :meth:`result` without blocking the event loop."""
        return await self.dispatcher.aresult(self.request_id(key), timeout)

    def request_id(self, key: Any) -> str:
        """The request id of an object this handler saw (a ``str`` is returned as is).

        Objects: what a query / chat engine call or an agent run returned (``Response``,
        ``AgentChatResponse``, streaming ones, ``AgentOutput``), a synthesizer's response, or a
        copy made by :func:`prune_unused`.
        """
        if isinstance(key, str):
            return key
        stop_event = getattr(key, "get_stop_event", None)  # a WorkflowHandler: its StopEvent
        if callable(stop_event) and not isinstance(key, type):
            key = stop_event() or key
        with contextlib.suppress(TypeError):
            ref, request_id = self._by_object.get(id(key)) or (None, None)
            if ref is not None and ref() is key:
                return str(request_id)
        metadata = getattr(key, "metadata", None)  # a copy made by prune_unused or attach_metadata
        if isinstance(metadata, dict) and isinstance(metadata.get("ene_request_id"), str):
            return metadata["ene_request_id"]
        raise KeyError(f"no ENE request id for this {type(key).__name__}: was it instrumented?")

    def linked(self, key: Any) -> dict[str, NecessityResult]:
        """The finished results of the inner requests whose answers this result's contexts are.

        E.g. for an agent's answer, the ENGs of the query engine tools it read; for a
        sub-question engine's answer, one per sub-question. Keys are the context ids.
        """
        done = self.dispatcher.results.get(self.request_id(key))
        eng = done.eng if done is not None else None
        out: dict[str, NecessityResult] = {}
        for context in eng.contexts if eng is not None else []:
            source = context.metadata.get(SOURCE_KEY)
            inner = self.dispatcher.results.get(source) if isinstance(source, str) else None
            if inner is not None:
                out[context.id] = inner
        return out

    # -- installation -----------------------------------------------------------------------------
    def attach(self, dispatcher: Dispatcher | None = None) -> None:
        """Register on ``dispatcher`` (the root one by default). Prefer :func:`instrument`."""
        target = dispatcher or get_dispatcher()
        if self.event_handler not in target.event_handlers:
            target.add_event_handler(self.event_handler)
        if self.span_handler not in target.span_handlers:
            target.add_span_handler(self.span_handler)

    def detach(self, dispatcher: Dispatcher | None = None) -> None:
        target = dispatcher or get_dispatcher()
        target.event_handlers[:] = [h for h in target.event_handlers if h is not self.event_handler]
        target.span_handlers[:] = [h for h in target.span_handlers if h is not self.span_handler]

    # -- spans ------------------------------------------------------------------------------------
    def _span_enter(self, id_: str, parent: str | None, instance: Any, bound_args: Any) -> None:
        engine = isinstance(instance, _ENGINES)
        args = getattr(bound_args, "arguments", None) or {}
        message = args.get("message") if isinstance(instance, BaseChatEngine) else None
        self._spans.enter(id_, _Span(parent, engine, message if isinstance(message, str) else None))
        owner = self._owners.get(parent) if parent else None
        if isinstance(instance, BaseSynthesizer) and ("nodes" in args or "text_chunks" in args):
            if "nodes" in args:  # synthesize: the nodes it was given are what it saw
                owner = id_
                self._owners.enter(id_, owner)  # first: its get_response calls are never combines
                contexts = [_context(n) for n in args["nodes"] or []]
                self._start(id_, "synthesis", _query_text(args.get("query")), contexts)
            elif owner is None or self._unit_kind(owner) in _RECORDED:
                # get_response outside a synthesis: a router combining its engines' answers
                chunks = [c for c in args["text_chunks"] or [] if isinstance(c, str)]
                contexts = [{"id": stable_id(c, i), "text": c} for i, c in enumerate(chunks)]
                self._start(id_, "combine", _query_text(args.get("query_str")), contexts)
                owner = id_
        elif isinstance(instance, _AGENTS) and "start_event" in args:
            self._start(id_, "agent", _user_message(args["start_event"]), [])
            owner = id_
        elif isinstance(instance, Workflow) and "start_event" in args and owner is None:
            self._start(id_, "workflow", _start_question(args["start_event"]), [])
            owner = id_
        if owner is not None:
            self._owners.enter(id_, owner)
            if isinstance(instance, BaseLLM):
                unit = self._units.get(owner)
                if unit is not None and unit.kind in _RECORDED:
                    unit.llm_spans.append(id_)

    def _span_end(self, id_: str, result: Any, error: BaseException | None = None) -> None:
        span = self._spans.exit(id_)
        owner = self._owners.get(id_)
        if owner is not None and owner != id_ and isinstance(result, ToolCallResult):
            self._tool_result(owner, result)
        if owner == id_:
            self._finish_unit(id_, result, error, span.parent if span is not None else None)
        if owner is not None and id_ not in self._owners_late(owner):
            self._owners.exit(id_)
        if span is None:
            return
        if span.parent is None:
            self._retrievals.pop(id_)
            self._inner.pop(id_)
        if span.parent is None or span.engine:
            self._filters.pop(id_)
        if span.engine:
            request_id = self._outer.pop(id_)
            if request_id is not None and result is not None:
                self._track(request_id, result, returned=True)

    def _owners_late(self, owner: str) -> list[str]:
        unit = self._units.get(owner)
        return unit.llm_spans if unit is not None else []

    def _ancestors(self, span_id: str | None) -> Iterator[tuple[str, _Span]]:
        for _ in range(_MAX_DEPTH):
            span = self._spans.get(span_id) if span_id else None
            if span is None:
                return
            yield span_id, span  # type: ignore[misc]
            span_id = span.parent

    def _unit_kind(self, span_id: str) -> str | None:
        unit = self._units.get(span_id)
        return unit.kind if unit is not None else None

    # -- units: what each answer saw ---------------------------------------------------------------
    def _start(self, id_: str, kind: str, question: str | None, contexts: list[Any]) -> None:
        chain = list(self._ancestors(id_))
        root = chain[-1][0] if chain else id_
        chats = [s.message for _, s in chain if s.message is not None]
        if chats and kind != "agent":
            question = chats[-1]  # the user's message, not a condensed or rewritten query
        recorder = RunRecorder() if kind in _RECORDED else None
        if recorder is not None:
            recorder.root_input(question or "")
        self._units.put(id_, _Unit(id_, root, kind, question, contexts, recorder))

    def _tool_result(self, owner: str, result: Any) -> None:
        unit = self._units.get(owner)
        if unit is None or unit.recorder is None:
            return
        context = _tool_context(result, len(unit.contexts))
        with contextlib.suppress(KeyError):  # a query engine tool: its answer has its own ENG
            context["metadata"][SOURCE_KEY] = self.request_id(result.tool_output.raw_output)
        unit.contexts.append(context)
        unit.recorder.documents([context], origin=result.tool_name)

    def _model_start(self, span_id: str | None, inputs: Any) -> None:
        unit = self._agent_of(span_id)
        if unit is not None and unit.recorder is not None:
            unit.recorder.model_start(span_id, inputs)  # type: ignore[arg-type]

    def _model_end(self, span_id: str | None, text: str | None) -> None:
        unit = self._agent_of(span_id)
        if unit is not None and unit.recorder is not None:
            unit.recorder.model_end(span_id, text)  # type: ignore[arg-type]

    def _agent_of(self, span_id: str | None) -> _Unit | None:
        """The agent or workflow unit whose model calls ``span_id`` belongs to."""
        owner = self._owners.get(span_id) if span_id else None
        unit = self._units.get(owner) if owner else None
        return unit if unit is not None and unit.kind in _RECORDED else None

    def _finish_unit(
        self, id_: str, result: Any, error: BaseException | None, parent: str | None
    ) -> None:
        """A combining ``get_response`` or an agent run ended (syntheses end on their event)."""
        unit = self._units.pop(id_)
        if unit is None:
            return
        if unit.kind == "synthesis":  # its SynthesizeEndEvent (before the exit) never came
            if error is not None:
                self.dispatcher.record_error(id_, error)
            return
        for span_id, span in self._ancestors(parent):
            if span.engine:  # the engine call returns this answer (e.g. a router's combination)
                self._outer.put(span_id, id_)
        for span_id in unit.llm_spans:
            self._owners.exit(span_id)
        if unit.kind == "workflow" and not unit.llm_spans:
            return  # no step called an LLM itself: its query engines and agents have their ENGs
        trace = _llama_span_context(id_) or _current_span_context()
        metadata = {"framework": "llama_index", "kind": unit.kind, "root_span_id": unit.root}
        if error is not None:
            self._decided(id_, None)
            self.dispatcher.record_error(id_, error, trace=trace, metadata=metadata)
            return
        answer = result
        if unit.kind in _RECORDED:
            answer = getattr(result, "result", result)  # the StopEvent's result: what run() gives
            self._track(id_, answer)
            if unit.kind == "workflow":
                self._track(id_, result)  # the StopEvent: what the run's handler returns
            answer = _agent_answer(answer)
            answer = getattr(answer, "text", answer)  # e.g. the CompletionResponse of acomplete
        if not isinstance(answer, str):  # e.g. a streamed combination: not evaluated
            reason = f"the {unit.kind} returned {type(answer).__name__}, not text"
            self._decided(id_, None)
            self.dispatcher.record_skipped(id_, reason, trace=trace, metadata=metadata)
            return
        self._evaluate(unit, answer, trace, metadata)

    def _evaluate(self, unit: _Unit, answer: str, trace: Any, metadata: dict[str, Any]) -> None:
        """Decide with the run model and dispatch; remember the answer for outer links."""
        recorder = self._recorder(unit, self._link(unit, answer))
        decision = recorder.decide(answer)
        if unit.kind == "agent" and decision.ok:
            metadata["tools"] = ",".join(sorted({c["metadata"]["tool"] for c in decision.contexts}))
        sources = [c.get("metadata", {}).get(SOURCE_KEY) for c in decision.contexts]
        if any(sources):
            metadata["linked_request_ids"] = ",".join(s for s in sources if s)
        if answer.strip():
            self._inner.setdefault(unit.root, dict)[normalise(answer)] = unit.request_id
        self._decided(unit.request_id, decision.answer if decision.ok else None)
        dispatch_decision(
            self.dispatcher, unit.request_id, decision, trace=trace, metadata=metadata
        )

    @staticmethod
    def _recorder(unit: _Unit, contexts: list[dict[str, Any]]) -> RunRecorder:
        """The unit's run model: an agent's own; a synthesis saw exactly its nodes."""
        if unit.recorder is not None:
            return unit.recorder
        recorder = RunRecorder()
        recorder.root_input(unit.question or "")
        recorder.documents(contexts, origin=unit.request_id, tagged=True)
        for record in unit.filters:
            recorder.chunk_filter(record)
        return recorder

    # -- verdicts while an answer streams ----------------------------------------------------------
    def _token(self, request_id: str, call: Any, delta: Any, unit: _Unit) -> None:
        """A text token of a model call that may write ``unit``'s answer."""
        if self._answers is not None and isinstance(delta, str) and delta:
            recorder = self._recorder(unit, unit.contexts)
            self._answers.token(request_id, call, delta, lambda: recorder.candidate(call))

    def _decided(self, request_id: str, answer: str | None) -> None:
        if self._answers is not None:
            self._answers.decided(request_id, answer)

    def _link(self, unit: _Unit, answer: str) -> list[dict[str, Any]]:
        """Name, in each context, the inner request whose answer it carries (``ene_source``)."""
        inner = {a: r for a, r in self._inner.get(unit.root, {}).items() if a and r}
        if not inner:
            return unit.contexts
        out = []
        for context in unit.contexts:
            meta = context.get("metadata") or {}
            if SOURCE_KEY not in meta:
                text = f" {normalise(context['text'])} "
                found = [r for a, r in inner.items() if f" {a} " in text]
                if found:
                    context = {**context, "metadata": {**meta, SOURCE_KEY: found[-1]}}
            out.append(context)
        return out

    # -- events -----------------------------------------------------------------------------------
    def _on_event(self, event: BaseEvent) -> None:
        if isinstance(event, SynthesizeEndEvent):
            self._synthesized(event)
        elif isinstance(event, RetrievalEndEvent):
            self._retrieved(event)
        elif isinstance(event, ChunkFilterEvent):
            self._filtered(event)
        elif isinstance(event, LLMChatStartEvent):
            self._model_start(event.span_id, [_message(m) for m in event.messages])
        elif isinstance(event, LLMChatEndEvent):
            message = event.response.message if event.response is not None else None
            self._model_end(event.span_id, message.content if message is not None else None)
            unit = self._agent_of(event.span_id)
            if self._answers and unit and message is not None and _message(message).tool_calls:
                self._answers.exclude(unit.request_id, event.span_id)
        elif isinstance(event, LLMCompletionStartEvent):
            self._model_start(event.span_id, event.prompt)
        elif isinstance(event, LLMCompletionEndEvent):
            self._model_end(event.span_id, event.response.text)
        elif isinstance(event, (LLMChatInProgressEvent, LLMCompletionInProgressEvent)):
            self._streamed(event)

    def _streamed(self, event: LLMChatInProgressEvent | LLMCompletionInProgressEvent) -> None:
        """A token of an agent's LLM call (a synthesis's tokens come through its stream tap)."""
        unit = self._agent_of(event.span_id) if self._answers is not None else None
        if unit is None or self._answers is None:
            return
        message = getattr(event.response, "message", None)
        if message is not None and _message(message).tool_calls:
            self._answers.exclude(unit.request_id, event.span_id)
        else:
            self._token(unit.request_id, event.span_id, event.response.delta, unit)

    def _retrieved(self, event: RetrievalEndEvent) -> None:
        chain = list(self._ancestors(event.span_id))
        if not chain or event.span_id is None:
            return
        unit = self._agent_of(event.span_id)
        if unit is not None and unit.kind == "workflow" and unit.recorder is not None:
            nodes = [_context(n) for n in event.nodes]  # a workflow step's own retrieval
            unit.recorder.documents(nodes, origin=event.span_id)
        trace = _llama_span_context(event.span_id)
        found = {n.node.node_id: (event.span_id, i, trace) for i, n in enumerate(event.nodes)}
        self._retrievals.setdefault(chain[-1][0], dict).update(found)

    def _filtered(self, event: ChunkFilterEvent) -> None:
        """A chunk filter call, for the answer that follows it: kept under the nearest engine
        call above it (its synthesis takes it), else given to the agent or workflow running it,
        else kept under the root span."""
        record = event.model_dump(exclude={"timestamp", "tags"})
        chain = list(self._ancestors(event.span_id))
        key = next((span_id for span_id, span in chain if span.engine), None)
        unit = self._agent_of(event.span_id) if key is None else None
        if unit is not None and unit.recorder is not None:
            unit.recorder.chunk_filter(record)
            return
        key = key or (chain[-1][0] if chain else None)
        if key is not None:
            records = self._filters.setdefault(key, list)
            if len(records) < _MAX_FILTER_CALLS:
                records.append(record)

    def _synthesized(self, event: SynthesizeEndEvent) -> None:
        request_id = event.span_id or f"synthesize-{uuid.uuid4()}"
        try:
            response = event.response
            self._track(request_id, response)
            unit = self._units.pop(request_id) if event.span_id else None
            chain = list(self._ancestors(event.span_id))
            if unit is None:  # no span enter seen: fall back to the response's nodes
                question = _query_text(event.query)
                nodes = [_context(n) for n in response.source_nodes or []]
                root = chain[-1][0] if chain else request_id
                unit = _Unit(request_id, root, "synthesis", question, nodes)
            for span_id, span in chain:
                if span.engine:
                    self._outer.put(span_id, request_id)
            for span_id, _ in chain:  # the filter calls of its engine call (or its root)
                unit.filters.extend(self._filters.pop(span_id) or ())
            found = self._retrievals.get(unit.root, {})
            trace = _llama_span_context(event.span_id) or _current_span_context()
            metadata = {
                "framework": "llama_index",
                "kind": "synthesis",
                "synthesize_span_id": event.span_id,
                "root_span_id": unit.root,
                "documents": [_document(c["id"], i, found) for i, c in enumerate(unit.contexts)],
            }
            job = _Job(self, unit, trace, metadata)
            each = job.token if self._answers is not None else None
            if isinstance(response, StreamingResponse):
                response.response_gen = _tap(response.response_gen, job.run, job.abandon, each)
            elif isinstance(response, AsyncStreamingResponse):
                inline = self.mode == "inline"
                response.response_gen = _atap(
                    response.response_gen,
                    job.arun if inline else _as_async(job.run),
                    job.abandon,
                    each,
                )
            else:
                job.run(str(response) if response.response is not None else "")
        except Exception as exc:
            logger.exception("ENE could not handle the synthesis %s", request_id)
            self.dispatcher.record_error(request_id, exc)

    # -- correlating results with the objects the app got ----------------------------------------
    def _track(self, request_id: str, response: Any, *, returned: bool = False) -> None:
        """Remember ``response`` (by identity, weakly) as belonging to ``request_id``.

        Nothing is written into it, except with ``attach_metadata`` when the engine call that
        ``returned`` it is exiting: in the caller's thread, before the app gets it.
        """
        try:
            self._by_object.put(id(response), (weakref.ref(response), request_id))
        except TypeError:  # not weak-referenceable: reachable by request id only
            return
        if returned and self.attach_metadata:
            self._attach(request_id, response)

    def _attach(self, request_id: str, response: Any) -> None:
        if not hasattr(response, "metadata"):
            return
        if response.metadata is None:
            response.metadata = {}
        if not isinstance(response.metadata, dict):
            return
        response.metadata["ene_request_id"] = request_id
        done = self.dispatcher.results.get(request_id)
        if done is not None and done.eng is not None:
            response.metadata["ene"] = done.eng


@dataclasses.dataclass(frozen=True)
class _Job:
    """One synthesis waiting for its answer text: dispatches once, or records why it did not."""

    handler: NecessityHandler
    unit: _Unit
    trace: Any
    metadata: dict[str, Any]

    def run(self, answer: str) -> None:
        self.handler._evaluate(self.unit, answer, self.trace, self.metadata)

    async def arun(self, answer: str) -> None:
        await asyncio.to_thread(self.run, answer)

    def token(self, delta: str) -> None:
        """A token of the streamed answer, as the app reads it (never raises)."""
        self.handler._token(self.unit.request_id, "synthesis", delta, self.unit)

    def abandon(self, error: BaseException) -> None:
        self.handler._decided(self.unit.request_id, None)
        reason = (
            IncompleteRequestError(
                "the stream was closed before it finished; nothing was evaluated"
            )
            if isinstance(error, (GeneratorExit, asyncio.CancelledError))
            else error
        )
        self.handler.dispatcher.record_error(
            self.unit.request_id, reason, trace=self.trace, metadata=self.metadata
        )


# -- the LlamaIndex-facing handler objects ---------------------------------------------------
class _EventTap(BaseEventHandler):
    owner: Any = None

    @classmethod
    def class_name(cls) -> str:
        return "EneEventHandler"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        try:
            self.owner._on_event(event)
        except Exception:
            logger.exception("ENE event handler failed on %s", type(event).__name__)


class _SpanTap(BaseSpanHandler[Any]):
    """Keeps only the span tree (parent and engine flag per open span); creates no span objects."""

    owner: Any = None

    def __init__(self, owner: NecessityHandler) -> None:
        super().__init__()
        self.owner = owner

    @classmethod
    def class_name(cls) -> str:
        return "EneSpanHandler"

    def span_enter(
        self,
        id_: str,
        bound_args: Any,
        instance: Any = None,
        parent_id: str | None = None,
        tags: Any = None,
        **kwargs: Any,
    ) -> None:
        try:
            self.owner._span_enter(id_, parent_id, instance, bound_args)
        except Exception:
            logger.exception("ENE span handler failed")

    def span_exit(
        self, id_: str, bound_args: Any, instance: Any = None, result: Any = None, **kwargs: Any
    ) -> None:
        try:
            self.owner._span_end(id_, result)
        except Exception:
            logger.exception("ENE span handler failed")

    def span_drop(
        self, id_: str, bound_args: Any, instance: Any = None, err: Any = None, **kwargs: Any
    ) -> None:
        try:
            self.owner._span_end(id_, None, err if isinstance(err, BaseException) else None)
        except Exception:
            logger.exception("ENE span handler failed")

    def new_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    def prepare_to_exit_span(self, *args: Any, **kwargs: Any) -> None:
        return None

    def prepare_to_drop_span(self, *args: Any, **kwargs: Any) -> None:
        return None
