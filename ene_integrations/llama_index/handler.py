"""LlamaIndex adapter: every answer gets its Evidence Necessity Graph, the app's objects untouched.

>>> from ene_integrations.llama_index import instrument
>>> handler = instrument()                      # once, at start-up; idempotent
>>> response = query_engine.query("...")
>>> handler.result(response, timeout=5).eng     # by the response object, or by request id

How it works. ``instrument()`` registers an event handler and a span handler on LlamaIndex's
root instrumentation dispatcher and translates what they see into one evaluation per answer,
decided by the framework-free run model (:class:`ene_core.RunRecorder`):

* **synthesis** (``synthesize`` / ``asynthesize`` span): contexts = the nodes the synthesizer
  was given (after postprocessing; for a sub-question engine the "Sub question / Response"
  pairs, not the raw chunks), answer = its response text (streams: when exhausted), question =
  the chat user's message when inside a chat engine, else the query. Request id: the span id.
* **combination** (a synthesizer's ``get_response`` outside a synthesis, e.g. a multi-selector
  router combining its engines' answers): contexts = the texts it combined.
* **agent run** (``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``): tool results and the LLM
  calls' messages are recorded; answer = the ``AgentOutput`` the run returned, contexts = the
  tool outputs in the input of the LLM call that wrote it, question = the user's message.

A context that carries an inner request's answer (a query engine tool's output, a sub-answer, a
router branch) names it in ``metadata["ene_source"]``; :meth:`NecessityHandler.linked` returns
those inner results, so necessity can be followed down to the chunks. The span tree tells which
engine call returned which answer, so ``handler.result(obj)`` works on what the call returned.

Never touches the app's objects: results are found by the returned object's identity (a weak
reference, never an attribute or a metadata key) or by request id, through
``handler.result`` / ``aresult``, ``on_result`` callbacks and tracing spans. With
``attach_metadata=True`` the handler also writes ``metadata["ene_request_id"]`` (and
``metadata["ene"]`` when the graph is ready, i.e. in inline mode) into the object an engine call
returns, in the caller's thread before the call returns; never later, never from another thread.

Never breaks the host: LlamaIndex silently swallows handler exceptions, so every handler body
logs and records its own failure as an ENG-less result. State that outlives a call is bounded:
open spans by a size cap; object identities (weak), retrieval positions and results by a TTL and
a size cap.

Pruning: :func:`prune_unused` / :func:`aprune_unused` return a copy of a ``Response``,
``AgentChatResponse`` or consumed streaming response whose ``source_nodes`` are the minimal
sufficient set, or of an ``AgentOutput`` whose tool outputs keep only the sources it needed;
:class:`NecessityQueryEngine` wraps a query (or chat) engine and :class:`NecessityChatEngine` a
chat engine to do so on every call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import uuid
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
)
from typing import Any, NamedTuple

from llama_index.core.agent.workflow import (
    AgentOutput,
    AgentWorkflow,
    BaseWorkflowAgent,
    ToolCallResult,
)
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
from llama_index.core.instrumentation import Dispatcher, get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import (
    LLMChatEndEvent,
    LLMChatStartEvent,
    LLMCompletionEndEvent,
    LLMCompletionStartEvent,
)
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.events.synthesis import SynthesizeEndEvent
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.llms.llm import BaseLLM
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ene_core import (
    Engine,
    EvidenceNecessityGraph,
    ExpiringDict,
    IncompleteRequestError,
    InvalidInputError,
    Message,
    NecessityDispatcher,
    NecessityResult,
    RunRecorder,
    default_engine,
    dispatch_decision,
    prune,
)
from ene_core.contexts import stable_id
from ene_core.graph import SOURCE_KEY
from ene_core.pruning import KeepPolicy
from ene_core.results import Mode
from ene_core.runs import normalise

__all__ = [
    "NecessityChatEngine",
    "NecessityHandler",
    "NecessityQueryEngine",
    "aprune_unused",
    "installed_handler",
    "instrument",
    "prune_unused",
    "uninstrument",
]

logger = logging.getLogger("ene.llama_index")
_ENGINES = (BaseQueryEngine, BaseChatEngine)
_AGENTS = (BaseWorkflowAgent, AgentWorkflow)
_MAX_DEPTH = 256  # span-tree walks stop here (cycles cannot happen; this bounds bad data)
_ROLES = {"function": "tool", "chatbot": "assistant", "model": "assistant", "developer": "system"}


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
    """One answer being produced: a synthesis, a combining ``get_response``, or an agent run."""

    request_id: str
    root: str  # the outermost span: links to inner answers are looked up within it
    kind: str  # "synthesis" | "combine" | "agent"
    question: str | None
    contexts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    recorder: RunRecorder | None = None  # agents: tool outputs and model calls
    llm_spans: list[str] = dataclasses.field(default_factory=list)


class NecessityHandler:
    """Evaluates every answer: syntheses, combined answers and agent runs.

    Results by request id, by the object the app got, or by callback. Use :func:`instrument`
    rather than constructing one; the options are the ones of
    :class:`~ene_core.results.NecessityDispatcher` (``mode="inline"`` evaluates before the
    answer is returned, blocking the calling thread - for ``aquery`` the event loop - for at most
    ``inline_timeout_s``; streams are evaluated when exhausted), plus ``attach_metadata``.
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
    ) -> None:
        self.dispatcher = NecessityDispatcher(
            engine,
            mode=mode,
            on_result=on_result,
            on_error=on_error,
            recorders=[*_default_recorders(), *recorders],
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
        self._answers: ExpiringDict[str, dict[str, str]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        # Root span id -> node id -> (retriever span id, position, OTel span context).
        self._retrievals: ExpiringDict[str, dict[str, tuple[str, int, Any]]] = ExpiringDict(
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
            elif owner is None or self._unit_kind(owner) == "agent":
                # get_response outside a synthesis: a router combining its engines' answers
                chunks = [c for c in args["text_chunks"] or [] if isinstance(c, str)]
                contexts = [{"id": stable_id(c, i), "text": c} for i, c in enumerate(chunks)]
                self._start(id_, "combine", _query_text(args.get("query_str")), contexts)
                owner = id_
        elif isinstance(instance, _AGENTS) and "start_event" in args:
            self._start(id_, "agent", _user_message(args["start_event"]), [])
            owner = id_
        if owner is not None:
            self._owners.enter(id_, owner)
            if isinstance(instance, BaseLLM):
                unit = self._units.get(owner)
                if unit is not None and unit.kind == "agent":
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
            self._answers.pop(id_)
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
        recorder = RunRecorder() if kind == "agent" else None
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
        owner = self._owners.get(span_id) if span_id else None
        unit = self._units.get(owner) if owner else None
        return unit if unit is not None and unit.kind == "agent" else None

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
        trace = _llama_span_context(id_) or _current_span_context()
        metadata = {"framework": "llama_index", "kind": unit.kind, "root_span_id": unit.root}
        if error is not None:
            self.dispatcher.record_error(id_, error, trace=trace, metadata=metadata)
            return
        answer = result
        if unit.kind == "agent":
            answer = getattr(result, "result", result)  # the StopEvent's result: what run() gives
            self._track(id_, answer)
            answer = _agent_answer(answer)
        if not isinstance(answer, str):  # e.g. a streamed combination: not evaluated
            reason = f"the {unit.kind} returned {type(answer).__name__}, not text"
            self.dispatcher.record_skipped(id_, reason, trace=trace, metadata=metadata)
            return
        self._evaluate(unit, answer, trace, metadata)

    def _evaluate(self, unit: _Unit, answer: str, trace: Any, metadata: dict[str, Any]) -> None:
        """Decide with the run model and dispatch; remember the answer for outer links."""
        contexts = self._link(unit, answer)
        recorder = unit.recorder
        if recorder is None:  # a synthesis saw exactly its nodes: they are the context
            recorder = RunRecorder()
            recorder.root_input(unit.question or "")
            recorder.documents(contexts, origin=unit.request_id, tagged=True)
        decision = recorder.decide(answer)
        if unit.recorder is not None and decision.ok:
            metadata["tools"] = ",".join(sorted({c["metadata"]["tool"] for c in decision.contexts}))
        sources = [c.get("metadata", {}).get(SOURCE_KEY) for c in decision.contexts]
        if any(sources):
            metadata["linked_request_ids"] = ",".join(s for s in sources if s)
        if answer.strip():
            self._answers.setdefault(unit.root, dict)[normalise(answer)] = unit.request_id
        dispatch_decision(
            self.dispatcher, unit.request_id, decision, trace=trace, metadata=metadata
        )

    def _link(self, unit: _Unit, answer: str) -> list[dict[str, Any]]:
        """Name, in each context, the inner request whose answer it carries (``ene_source``)."""
        inner = {a: r for a, r in self._answers.get(unit.root, {}).items() if a and r}
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
        elif isinstance(event, LLMChatStartEvent):
            self._model_start(event.span_id, [_message(m) for m in event.messages])
        elif isinstance(event, LLMChatEndEvent):
            message = event.response.message if event.response is not None else None
            self._model_end(event.span_id, message.content if message is not None else None)
        elif isinstance(event, LLMCompletionStartEvent):
            self._model_start(event.span_id, event.prompt)
        elif isinstance(event, LLMCompletionEndEvent):
            self._model_end(event.span_id, event.response.text)

    def _retrieved(self, event: RetrievalEndEvent) -> None:
        chain = list(self._ancestors(event.span_id))
        if not chain or event.span_id is None:
            return
        trace = _llama_span_context(event.span_id)
        found = {n.node.node_id: (event.span_id, i, trace) for i, n in enumerate(event.nodes)}
        self._retrievals.setdefault(chain[-1][0], dict).update(found)

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
            if isinstance(response, StreamingResponse):
                response.response_gen = _tap(response.response_gen, job.run, job.abandon)
            elif isinstance(response, AsyncStreamingResponse):
                inline = self.mode == "inline"
                response.response_gen = _atap(
                    response.response_gen, job.arun if inline else _as_async(job.run), job.abandon
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

    def abandon(self, error: BaseException) -> None:
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


# -- stream taps ----------------------------------------------------------------------------------
def _tap(
    tokens: Iterator[str], done: Callable[[str], Any], failed: Callable[[BaseException], Any]
) -> Generator[str, None, None]:
    """Yield ``tokens`` unchanged; call ``done(text)`` once exhausted, ``failed`` otherwise."""
    parts: list[str] = []
    try:
        for token in tokens:
            parts.append(token)
            yield token
    except BaseException as exc:
        _quietly(failed, exc)
        raise
    _quietly(done, "".join(parts))


async def _atap(
    tokens: AsyncIterator[str],
    done: Callable[[str], Awaitable[Any]],
    failed: Callable[[BaseException], Any],
) -> AsyncGenerator[str, None]:
    parts: list[str] = []
    try:
        async for token in tokens:
            parts.append(token)
            yield token
    except BaseException as exc:
        _quietly(failed, exc)
        raise
    try:
        await done("".join(parts))
    except Exception:
        logger.exception("ENE failed after the stream ended")


def _as_async(run: Callable[[str], Any]) -> Callable[[str], Awaitable[None]]:
    async def call(answer: str) -> None:
        run(answer)

    return call


def _quietly(func: Callable[..., Any], *args: Any) -> None:
    try:
        func(*args)
    except Exception:
        logger.exception("ENE stream hook %r failed", func)


# -- translation helpers --------------------------------------------------------------------------
def _context(node: NodeWithScore) -> dict[str, Any]:
    """What the LLM saw of ``node`` (its text with LLM-visible metadata), keyed by node id."""
    inner = node.node
    return {
        "id": inner.node_id,
        "text": inner.get_content(metadata_mode=MetadataMode.LLM),
        "metadata": {"score": node.score, "ref_doc_id": inner.ref_doc_id},
    }


def _tool_context(result: ToolCallResult, position: int) -> dict[str, Any]:
    """What the model read of a tool call's result, keyed by the tool call id."""
    text = str(result.tool_output.content)
    return {
        "id": result.tool_id or stable_id(text, position),
        "text": text,
        "metadata": {"tool": result.tool_name},
    }


def _document(
    node_id: str, position: int, found: dict[str, tuple[str, int, Any]]
) -> dict[str, Any]:
    retriever = found.get(node_id)
    return {
        "node_id": node_id,
        "position": position,
        "retriever_span_id": retriever[0] if retriever else None,
        "retriever_position": retriever[1] if retriever else None,
        "retriever_trace": retriever[2] if retriever else None,
    }


def _query_text(query: Any) -> str | None:
    if isinstance(query, str):
        return query
    text = getattr(query, "query_str", None)
    return text if isinstance(text, str) else None


def _message(message: Any) -> Message:
    """A LlamaIndex ``ChatMessage`` as the run model's :class:`~ene_core.Message`."""
    role = str(getattr(message.role, "value", message.role))
    calls = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or []
    text = message.content if isinstance(message.content, str) else ""
    return Message(_ROLES.get(role, role), text, tool_calls=len(calls))


def _user_message(start_event: Any) -> str | None:
    """The user's message of an agent run: ``user_msg``, else the history's last user turn."""
    getter = getattr(start_event, "get", None)
    if getter is None:
        return None
    user_msg = getter("user_msg")
    if isinstance(user_msg, str):
        return user_msg
    if user_msg is not None:
        return _message(user_msg).text or None
    history = [_message(m) for m in getter("chat_history") or []]
    users = [m.text for m in history if m.role == "user" and m.text]
    return users[-1] if users else None


def _agent_answer(output: Any) -> Any:
    """The text an agent run gave the app (``AgentOutput.response``), else the output as is."""
    message = getattr(output, "response", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else output


def _llama_span_context(span_id: str | None) -> Any:
    """The OTel SpanContext that an OTel span handler (e.g. OpenInference) made for a span."""
    if not span_id:
        return None
    try:
        for handler in get_dispatcher().span_handlers:
            span = handler.open_spans.get(span_id)
            otel = getattr(span, "_otel_span", None) if span is not None else None
            if otel is not None:
                return otel.get_span_context()
    except Exception:
        logger.debug("no OTel span for %s", span_id, exc_info=True)
    return None


def _current_span_context() -> Any:
    try:
        from ..otel import current_span_context
    except ImportError:
        return None
    return current_span_context()


def _default_recorders() -> list[Callable[[NecessityResult], Any]]:
    try:
        from ..otel import default_recorders
    except ImportError:
        return []
    try:
        return list(default_recorders())
    except Exception:
        logger.exception("ENE could not create the OpenTelemetry recorders")
        return []


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


# -- installation ---------------------------------------------------------------------------------
_install_lock = threading.Lock()


def installed_handler() -> NecessityHandler | None:
    """The handler :func:`instrument` registered on the root dispatcher, if any."""
    for tap in get_dispatcher().event_handlers:
        if isinstance(tap, _EventTap):
            return tap.owner  # type: ignore[no-any-return]
    return None


def instrument(handler: NecessityHandler | None = None, **options: Any) -> NecessityHandler:
    """Register ``handler`` (or a new one built from ``options``) for every synthesis.

    Idempotent: a second call returns the installed handler (pass a handler to replace it).
    ``options`` are those of :class:`NecessityHandler` (``engine``, ``mode``, ``on_result``,
    ``on_error``, ``recorders``, ...), the same as the LangChain handler's.
    """
    with _install_lock:
        existing = installed_handler()
        if handler is None:
            if existing is not None:
                if options:
                    logger.warning("ENE is already instrumented; call uninstrument() first")
                return existing
            handler = NecessityHandler(**options)
        if existing is not None and existing is not handler:
            existing.detach()
        handler.attach()
        return handler


def uninstrument() -> bool:
    """Remove the installed handler; ``True`` if there was one."""
    with _install_lock:
        handler = installed_handler()
        if handler is None:
            return False
        handler.detach()
        return True


# -- pruning --------------------------------------------------------------------------------------
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
    keep: KeepPolicy = "minimal",
    question: str | None = None,
    timeout: float = 30.0,
) -> Any:
    """A copy of ``response`` whose ``source_nodes`` are the ones the answer used.

    Takes a ``Response``, an ``AgentChatResponse``, or a consumed ``StreamingResponse`` /
    ``StreamingAgentChatResponse`` (their copies are a ``Response`` / ``AgentChatResponse``).
    The original is never modified. Keeps the ENG's minimal sufficient set (``keep="necessary"``:
    only nodes some claim needs on its own), in order. The copy's ``metadata["ene"]`` holds the
    graph and ``metadata["ene_pruning"]`` the kept/dropped node ids, ``tokens_saved`` and the
    reason. The graph is reused from the installed handler when it covers the same nodes, else
    evaluated with ``engine`` (default: the shared engine). Fail-safe: if evaluation fails
    nothing is pruned and the reason says why. For ``AsyncStreamingResponse`` use
    :func:`aprune_unused`.

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
    keep: KeepPolicy = "minimal",
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
    metadata["ene_pruning"] = {
        "kept": [n.node.node_id for n in outcome.kept],
        "dropped": [n.node.node_id for n in outcome.dropped],
        "tokens_saved": outcome.tokens_saved,
        "reason": outcome.reason if error is None else f"{outcome.reason} ({error})",
    }
    return view.copy(list(outcome.kept), metadata)


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
            "kept": [ids[i] for i in sorted(needed)],
            "dropped": [ids[i] for i in sorted(outcome.dropped)],
            "tokens_saved": outcome.tokens_saved,
            "reason": outcome.reason if error is None else f"{outcome.reason} ({error})",
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


class NecessityQueryEngine(_Pruning, BaseQueryEngine):
    """Wraps any query engine so its responses carry their ENG and (by default) pruned sources.

    ``NecessityQueryEngine(index.as_query_engine(), prune=True)`` is a drop-in query engine:
    ``query`` / ``aquery`` return a copy of the inner engine's response with ``source_nodes``
    reduced to the minimal sufficient set (see :func:`prune_unused`). A streaming inner engine
    is consumed first and answered with a plain ``Response``: pruning needs the whole answer.
    With ``prune=False`` nothing is dropped; the graph is still attached to the copy. This runs
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
        keep: KeepPolicy = "minimal",
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
            response = response.get_response()  # our own call: consuming it changes nothing
        return self._now(response, question)

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        inner = self.query_engine
        question = query_bundle.query_str
        if isinstance(inner, BaseChatEngine):
            return _as_response(await self._anow(await inner.achat(question), question))
        response = await inner.aquery(query_bundle)
        if isinstance(response, AsyncStreamingResponse):
            response = await response.get_response()
        elif isinstance(response, StreamingResponse):
            response = await asyncio.to_thread(response.get_response)
        return await self._anow(response, question)


def _as_response(reply: AgentChatResponse) -> Response:
    """A chat reply as a query engine's ``Response`` (what a query engine must return)."""
    return Response(reply.response, reply.source_nodes, reply.metadata)


class NecessityChatEngine(_Pruning, BaseChatEngine):
    """Wraps a chat engine: replies are copies with their ENG and (by default) pruned sources.

    ``chat`` / ``achat`` return an ``AgentChatResponse`` copy (see :func:`prune_unused`);
    ``stream_chat`` / ``astream_chat`` are answered from the full reply (pruning needs the whole
    answer), wrapped as a finished stream. ``reset`` and ``chat_history`` are the inner engine's.
    """

    def __init__(
        self,
        chat_engine: BaseChatEngine,
        *,
        prune: bool = True,
        engine: Engine | None = None,
        keep: KeepPolicy = "minimal",
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
        return _finished_stream(self.chat(message, chat_history))

    async def astream_chat(
        self, message: str, chat_history: list[Any] | None = None
    ) -> StreamingAgentChatResponse:
        return _finished_stream(await self.achat(message, chat_history))


def _finished_stream(reply: AgentChatResponse) -> StreamingAgentChatResponse:
    stream = StreamingAgentChatResponse(
        response=reply.response,
        sources=reply.sources,
        source_nodes=reply.source_nodes,
        is_writing_to_memory=False,
    )
    message = ChatMessage(content=reply.response)
    stream.chat_stream = (c for c in [ChatResponse(message=message, delta=reply.response)])
    return stream


def _noop(_: BaseException) -> None:
    return None
