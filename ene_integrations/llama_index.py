"""LlamaIndex adapter: every synthesized answer carries its Evidence Necessity Graph.

>>> from ene_integrations.llama_index import instrument
>>> handler = instrument()                      # once, at start-up; idempotent
>>> response = query_engine.query("...")
>>> handler.result(response, timeout=5).eng     # or response.metadata["ene"] once it is ready

How it works. ``instrument()`` registers an event handler and a span handler on LlamaIndex's
root instrumentation dispatcher. The hook is ``SynthesizeEndEvent``: it carries the query, the
response and the source nodes left after node postprocessing, once per synthesis (LLM events
are ignored: some LLMs emit nested duplicates under ``aquery``). The request id is the
synthesize span's id. Non-streaming answers are handed to a
:class:`~ene_core.results.NecessityDispatcher` at once; for streaming answers the token
generator is wrapped and the answer is evaluated when the stream is exhausted. The graph lands
in ``response.metadata["ene"]`` (``metadata["ene_request_id"]`` is set at once) and in the
dispatcher's bounded result store; the span tree tells which query or chat engine call the
synthesis belonged to, so a chat engine's ``AgentChatResponse`` gets the same keys.

Covered (tested): ``RetrieverQueryEngine`` (``query``, ``aquery``, sync and async streaming) and
the retrieving chat engines ``CondensePlusContextChatEngine``, ``ContextChatEngine`` and
``CondenseQuestionChatEngine`` (``chat``, ``achat``, ``stream_chat``, ``astream_chat``). By
construction anything else that answers through a response synthesizer is covered too (one graph
per synthesis: sub-question and router engines, query engine tools called by agents). Not
covered: calls that retrieve nothing through a synthesizer (``SimpleChatEngine``, a bare
``llm.complete``).

Never breaks the host: LlamaIndex silently swallows handler exceptions, so every handler body
logs and records its own failure as an ENG-less result; the answer the caller gets is the one
it would get without ENE, plus the ``ene*`` metadata keys. State that outlives a call is bounded:
open spans by a size cap, pending responses (held through weak references), retrieval positions
and results by a TTL and a size cap.

Pruning: :func:`prune_unused` / :func:`aprune_unused` return a response whose ``source_nodes``
are the minimal sufficient set; :class:`NecessityQueryEngine` wraps any query engine to do so.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
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

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.chat_engine.types import BaseChatEngine
from llama_index.core.instrumentation import Dispatcher, get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.events.synthesis import SynthesizeEndEvent
from llama_index.core.instrumentation.span_handlers import BaseSpanHandler
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ene_core import (
    EvidenceNecessityGraph,
    ExpiringDict,
    NecessityDispatcher,
    NecessityEngine,
    NecessityResult,
    default_engine,
    prune,
)
from ene_core.pruning import KeepPolicy
from ene_core.results import Mode

__all__ = [
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
_MAX_DEPTH = 256  # span-tree walks stop here (cycles cannot happen; this bounds bad data)


class _Span(NamedTuple):
    parent: str | None
    engine: bool  # the span is a query or chat engine call, whose result gets the ENG too


class _OpenSpans:
    """The open spans of the process: id -> (parent, engine flag), written on every span.

    Owner: the handler. Bound: ``max_size``; beyond it the oldest entries are forgotten (a span
    that never exits is dropped, never kept). Evicted: on span exit or drop. A plain dict (its
    single operations are atomic) keeps the per-span cost to a few hundred nanoseconds.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._open: dict[str, _Span] = {}
        self._lock = threading.Lock()

    def enter(self, span_id: str, span: _Span) -> None:
        self._open[span_id] = span
        if len(self._open) > self.max_size:
            with self._lock:
                while len(self._open) > self.max_size:
                    try:
                        del self._open[next(iter(self._open))]
                    except (KeyError, RuntimeError, StopIteration):  # raced with another thread
                        break

    def exit(self, span_id: str) -> _Span | None:
        return self._open.pop(span_id, None)

    def get(self, span_id: str) -> _Span | None:
        return self._open.get(span_id)

    def __len__(self) -> int:
        return len(self._open)


class NecessityHandler:
    """Evaluates every synthesized answer; results by request id, response or callback.

    Use :func:`instrument` rather than constructing one; the options are the ones of
    :class:`~ene_core.results.NecessityDispatcher` (``mode="inline"`` evaluates before the
    answer is returned, blocking the calling thread - for ``aquery`` the event loop - for at most
    ``inline_timeout_s``; streams are evaluated when exhausted).
    """

    def __init__(
        self,
        engine: NecessityEngine | None = None,
        *,
        mode: Mode = "background",
        on_result: Callable[[str, EvidenceNecessityGraph], Any] | None = None,
        on_error: Callable[[str, str], Any] | None = None,
        recorders: Iterable[Callable[[NecessityResult], Any]] = (),
        inline_timeout_s: float = 30.0,
        ttl_s: float = 600.0,
        max_results: int = 10_000,
        max_open_spans: int = 20_000,
    ) -> None:
        self.dispatcher = NecessityDispatcher(
            engine,
            mode=mode,
            on_result=on_result,
            on_error=on_error,
            recorders=[self._deliver, *_default_recorders(), *recorders],
            inline_timeout_s=inline_timeout_s,
            ttl_s=ttl_s,
            max_results=max_results,
        )
        self._spans = _OpenSpans(max_open_spans)
        # Engine span id -> request id, so the engine call's own result gets the keys on exit.
        self._outer: ExpiringDict[str, str] = ExpiringDict(ttl_s=ttl_s, max_size=max_results)
        # Request id -> weak refs to responses waiting for the ENG. Evicted: result or ttl.
        self._targets: ExpiringDict[str, list[weakref.ref[Any]]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        # Root span id -> node id -> (retriever span id, position, OTel span context).
        self._retrievals: ExpiringDict[str, dict[str, tuple[str, int, Any]]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        # id(response) -> (weak ref, request id) for responses without a metadata dict.
        self._by_object: ExpiringDict[int, tuple[weakref.ref[Any], str]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        self._lock = threading.Lock()
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
        """The request id of a response this handler saw (a ``str`` is returned as is)."""
        if isinstance(key, str):
            return key
        metadata = getattr(key, "metadata", None)
        if isinstance(metadata, dict) and isinstance(metadata.get("ene_request_id"), str):
            return metadata["ene_request_id"]
        ref, request_id = self._by_object.get(id(key)) or (None, None)
        if ref is not None and ref() is key:
            return request_id  # type: ignore[return-value]
        raise KeyError(f"no ENE request id for this {type(key).__name__}: was it instrumented?")

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
    def _span_enter(self, id_: str, parent: str | None, instance: Any) -> None:
        self._spans.enter(id_, _Span(parent, isinstance(instance, _ENGINES)))

    def _span_end(self, id_: str, result: Any) -> None:
        span = self._spans.exit(id_)
        if span is None:
            return
        if span.parent is None:
            self._retrievals.pop(id_)
        if span.engine:
            request_id = self._outer.pop(id_)
            if request_id is not None and result is not None:
                self._track(request_id, result)

    def _ancestors(self, span_id: str | None) -> Iterator[tuple[str, _Span]]:
        for _ in range(_MAX_DEPTH):
            span = self._spans.get(span_id) if span_id else None
            if span is None:
                return
            yield span_id, span  # type: ignore[misc]
            span_id = span.parent

    # -- events -----------------------------------------------------------------------------------
    def _on_event(self, event: BaseEvent) -> None:
        if isinstance(event, SynthesizeEndEvent):
            self._synthesized(event)
        elif isinstance(event, RetrievalEndEvent):
            self._retrieved(event)

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
            question = event.query if isinstance(event.query, str) else event.query.query_str
            nodes = list(response.source_nodes or [])
            contexts = [_context(n) for n in nodes]
            chain = list(self._ancestors(event.span_id))
            for span_id, span in chain:
                if span.engine:
                    self._outer.put(span_id, request_id)
            found = self._retrievals.get(chain[-1][0], {}) if chain else {}
            trace = _llama_span_context(event.span_id) or _current_span_context()
            metadata = {
                "framework": "llama_index",
                "synthesize_span_id": event.span_id,
                "root_span_id": chain[-1][0] if chain else None,
                "documents": [_document(n, i, found) for i, n in enumerate(nodes)],
            }
            job = _Job(self.dispatcher, request_id, contexts, question, trace, metadata)
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

    # -- delivering the ENG onto responses --------------------------------------------------------
    def _track(self, request_id: str, response: Any) -> None:
        """Tag ``response`` with the request id; give it the ENG now or when it arrives."""
        metadata = _metadata_of(response)
        if metadata is None:  # e.g. StreamingAgentChatResponse: look it up by identity instead
            with contextlib.suppress(TypeError):
                self._by_object.put(id(response), (weakref.ref(response), request_id))
            return
        metadata["ene_request_id"] = request_id
        with self._lock:
            done = self.dispatcher.results.get(request_id)
            if done is None:
                refs = self._targets.setdefault(request_id, list)
                refs.append(weakref.ref(response))
                return
        if done.eng is not None:
            metadata["ene"] = done.eng

    def _deliver(self, result: NecessityResult) -> None:
        with self._lock:
            refs = self._targets.pop(result.request_id) or []
        if result.eng is None:
            return
        for ref in refs:
            metadata = _metadata_of(ref())
            if metadata is not None:
                metadata["ene"] = result.eng


@dataclasses.dataclass(frozen=True)
class _Job:
    """One request waiting for its answer text: dispatches once, or records why it did not."""

    dispatcher: NecessityDispatcher
    request_id: str
    contexts: list[dict[str, Any]]
    question: str | None
    trace: Any
    metadata: dict[str, Any]

    def run(self, answer: str) -> None:
        self.dispatcher.dispatch(
            self.request_id,
            answer,
            self.contexts,
            self.question,
            trace=self.trace,
            metadata=self.metadata,
        )

    async def arun(self, answer: str) -> None:
        await asyncio.to_thread(self.run, answer)

    def abandon(self, error: BaseException) -> None:
        reason = (
            RuntimeError("the stream was closed before it finished; nothing was evaluated")
            if isinstance(error, (GeneratorExit, asyncio.CancelledError))
            else error
        )
        self.dispatcher.record_error(
            self.request_id, reason, trace=self.trace, metadata=self.metadata
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


def _document(
    node: NodeWithScore, position: int, found: dict[str, tuple[str, int, Any]]
) -> dict[str, Any]:
    retriever = found.get(node.node.node_id)
    return {
        "node_id": node.node.node_id,
        "position": position,
        "score": node.score,
        "retriever_span_id": retriever[0] if retriever else None,
        "retriever_position": retriever[1] if retriever else None,
        "retriever_trace": retriever[2] if retriever else None,
    }


def _metadata_of(response: Any) -> dict[str, Any] | None:
    """The response's ``metadata`` dict, created when it is ``None``; ``None`` if it has none."""
    if response is None or not hasattr(response, "metadata"):
        return None
    if response.metadata is None:
        response.metadata = {}
    return response.metadata if isinstance(response.metadata, dict) else None


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
        from .otel import current_span_context
    except ImportError:
        return None
    return current_span_context()


def _default_recorders() -> list[Callable[[NecessityResult], Any]]:
    try:
        from .otel import default_recorders
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
            self.owner._span_enter(id_, parent_id, instance)
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
            self.owner._span_end(id_, None)
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
def prune_unused(
    response: RESPONSE_TYPE,
    *,
    engine: NecessityEngine | None = None,
    keep: KeepPolicy = "minimal",
    question: str | None = None,
    timeout: float = 30.0,
) -> Response:
    """A copy of ``response`` whose ``source_nodes`` are the ones the answer used.

    Keeps the ENG's minimal sufficient set (``keep="necessary"``: only nodes some claim needs on
    its own), in order. ``metadata["ene"]`` holds the graph and ``metadata["ene_pruning"]`` the
    kept/dropped node ids, ``tokens_saved`` and the reason. The graph is reused from the response
    or the installed handler when it covers the same nodes, else evaluated with ``engine``
    (default: the shared engine). Fail-safe: if evaluation fails nothing is pruned and the
    reason says why. A sync ``StreamingResponse`` is consumed first; for
    ``AsyncStreamingResponse`` use :func:`aprune_unused`.
    """
    if isinstance(response, AsyncStreamingResponse):
        raise TypeError("an AsyncStreamingResponse needs `await aprune_unused(response)`")
    if isinstance(response, StreamingResponse):
        response = response.get_response()
    answer = str(response) if response.response is not None else ""
    nodes = list(response.source_nodes)
    eng, error = _graph(response, answer, nodes, question, engine, timeout)
    return _pruned(response, nodes, eng, error, keep)


async def aprune_unused(
    response: RESPONSE_TYPE,
    *,
    engine: NecessityEngine | None = None,
    keep: KeepPolicy = "minimal",
    question: str | None = None,
    timeout: float = 30.0,
) -> Response:
    """:func:`prune_unused` for async code; consumes an ``AsyncStreamingResponse`` first."""
    if isinstance(response, AsyncStreamingResponse):
        response = await response.get_response()
    elif isinstance(response, StreamingResponse):
        response = await asyncio.to_thread(response.get_response)
    answer = str(response) if response.response is not None else ""
    nodes = list(response.source_nodes)
    eng, error = await _agraph(response, answer, nodes, question, engine, timeout)
    return _pruned(response, nodes, eng, error, keep)


def _pruned(
    response: Any,
    nodes: list[NodeWithScore],
    eng: EvidenceNecessityGraph | None,
    error: str | None,
    keep: KeepPolicy,
) -> Any:
    outcome = prune(nodes, eng, keep=keep)
    metadata = dict(response.metadata or {})
    metadata.pop("ene", None)  # a graph by another verifier or on other nodes does not apply
    if eng is not None:
        metadata["ene"] = eng
    metadata["ene_pruning"] = {
        "kept": [n.node.node_id for n in outcome.kept],
        "dropped": [n.node.node_id for n in outcome.dropped],
        "tokens_saved": outcome.tokens_saved,
        "reason": outcome.reason if error is None else f"{outcome.reason} ({error})",
    }
    return dataclasses.replace(response, source_nodes=outcome.kept, metadata=metadata)


def _fits(eng: Any, nodes: list[NodeWithScore], engine: NecessityEngine | None) -> bool:
    """Whether ``eng`` was computed on exactly these nodes (and by ``engine``'s verifier)."""
    return (
        isinstance(eng, EvidenceNecessityGraph)
        and [c.id for c in eng.contexts] == [n.node.node_id for n in nodes]
        and (engine is None or eng.verifier.model == engine.oracle.name)
    )


def _pending(response: Any) -> tuple[NecessityHandler, str] | None:
    """The installed handler and the request id it gave this response, if any."""
    handler = installed_handler()
    request_id = (getattr(response, "metadata", None) or {}).get("ene_request_id")
    return (handler, request_id) if handler and isinstance(request_id, str) else None


def _graph(
    response: Any,
    answer: str,
    nodes: list[NodeWithScore],
    question: str | None,
    engine: NecessityEngine | None,
    timeout: float,
) -> tuple[EvidenceNecessityGraph | None, str | None]:
    """The graph on the response, else the handler's, else a fresh one; or why there is none."""
    try:
        eng = (response.metadata or {}).get("ene")
        pending = _pending(response)
        if not _fits(eng, nodes, engine) and pending:
            with contextlib.suppress(Exception):  # waiting on the handler is an optimisation
                eng = pending[0].result(pending[1], timeout).eng
        if _fits(eng, nodes, engine):
            return eng, None
        contexts = [_context(n) for n in nodes]
        return (engine or default_engine()).evaluate(answer, contexts, question), None
    except Exception as exc:
        logger.warning("ENE pruning kept every node: %s", exc)
        return None, f"{type(exc).__name__}: {exc}"


async def _agraph(
    response: Any,
    answer: str,
    nodes: list[NodeWithScore],
    question: str | None,
    engine: NecessityEngine | None,
    timeout: float,
) -> tuple[EvidenceNecessityGraph | None, str | None]:
    try:
        eng = (response.metadata or {}).get("ene")
        pending = _pending(response)
        if not _fits(eng, nodes, engine) and pending:
            with contextlib.suppress(Exception):
                eng = (await pending[0].aresult(pending[1], timeout)).eng
        if _fits(eng, nodes, engine):
            return eng, None
        contexts = [_context(n) for n in nodes]
        return await (engine or default_engine()).aevaluate(answer, contexts, question), None
    except Exception as exc:
        logger.warning("ENE pruning kept every node: %s", exc)
        return None, f"{type(exc).__name__}: {exc}"


class NecessityQueryEngine(BaseQueryEngine):
    """Wraps any query engine so its responses carry their ENG and (by default) pruned sources.

    ``NecessityQueryEngine(index.as_query_engine(), prune=True)`` is a drop-in query engine:
    ``query`` / ``aquery`` return the inner engine's response with ``source_nodes`` reduced to
    the minimal sufficient set (see :func:`prune_unused`); streaming responses are returned at
    once and their ``source_nodes`` / ``metadata`` are updated when the stream is exhausted.
    With ``prune=False`` nothing is dropped; the graph is still attached. This runs on the request
    path by design (pruning needs the graph); failures keep every node.
    """

    def __init__(
        self,
        query_engine: BaseQueryEngine,
        *,
        prune: bool = True,
        engine: NecessityEngine | None = None,
        keep: KeepPolicy = "minimal",
        timeout: float = 30.0,
    ) -> None:
        super().__init__(callback_manager=query_engine.callback_manager)
        self.query_engine = query_engine
        self.prune = prune
        self.engine = engine
        self.keep = keep
        self.timeout = timeout

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {"query_engine": self.query_engine}

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        response = self.query_engine.query(query_bundle)
        question = query_bundle.query_str
        if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
            return self._watch(response, question)
        return self._finish(response, prune_unused(response, **self._options(question)))

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        response = await self.query_engine.aquery(query_bundle)
        question = query_bundle.query_str
        if isinstance(response, (StreamingResponse, AsyncStreamingResponse)):
            return self._watch(response, question)
        return self._finish(response, await aprune_unused(response, **self._options(question)))

    def _watch(self, response: Any, question: str) -> Any:
        """Prune a streamed response in place once its stream is exhausted."""
        if isinstance(response, StreamingResponse):
            settle = functools.partial(self._settle, response, question=question)
            response.response_gen = _tap(response.response_gen, settle, _noop)
        else:
            asettle = functools.partial(self._asettle, response, question=question)
            response.response_gen = _atap(response.response_gen, asettle, _noop)
        return response

    def _options(self, question: str) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "keep": self.keep,
            "question": question,
            "timeout": self.timeout,
        }

    def _finish(self, original: Any, pruned: Any) -> Any:
        if self.prune:
            return pruned
        metadata = dict(original.metadata or {})
        if "ene" in pruned.metadata:
            metadata["ene"] = pruned.metadata["ene"]
        return dataclasses.replace(original, metadata=metadata)

    def _settle(self, response: Any, text: str, question: str) -> None:
        done = prune_unused(
            Response(text, response.source_nodes, response.metadata), **self._options(question)
        )
        self._apply(response, done)

    async def _asettle(self, response: Any, text: str, question: str) -> None:
        done = await aprune_unused(
            Response(text, response.source_nodes, response.metadata), **self._options(question)
        )
        self._apply(response, done)

    def _apply(self, response: Any, done: Response) -> None:
        """Update a streamed response in place once its text exists."""
        metadata = _metadata_of(response)
        if metadata is not None:
            for key in ("ene", "ene_pruning") if self.prune else ("ene",):
                if key in done.metadata:  # type: ignore[operator]
                    metadata[key] = done.metadata[key]  # type: ignore[index]
        if self.prune:
            response.source_nodes = done.source_nodes


def _noop(_: BaseException) -> None:
    return None
