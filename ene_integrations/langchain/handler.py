"""LangChain callbacks -> the run model: :class:`NecessityCallbackHandler`.

Per root run it records the events (retrievers, tool artifacts, documents in node outputs, model
calls, the root's input and output) in a :class:`ene_core.RunRecorder` and hands the decision to
a :class:`~ene_core.NecessityDispatcher`. :func:`tag_context` and :func:`report_documents` tell
it what the model saw where callbacks alone cannot.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import Runnable, RunnableConfig

from ene_core import Engine, EvidenceNecessityGraph, NecessityDispatcher, NecessityResult
from ene_core.kit.answer_streams import AnswerStreams, OnClaim, OnRetract
from ene_core.kit.results import ExpiringDict, Mode
from ene_core.kit.runs import RunDecision, RunRecorder, dispatch_decision

from .filter import FILTER_EVENT
from .translate import (
    _answer_text,
    _as_documents,
    _calls_tools,
    _documents_in,
    _message,
    _plain,
    _structured,
)

logger = logging.getLogger("ene.langchain")

CONTEXT_TAG = "ene:context"
"""Tag of the step whose output is the context the model saw (see :func:`tag_context`)."""

F = TypeVar("F", bound=Callable[..., None])
R = TypeVar("R", bound=Runnable[Any, Any])
_MISSING: Any = object()


def tag_context(runnable: R) -> R:
    """Mark ``runnable``'s output as the context the model saw (adds the ``ene:context`` tag).

    >>> docs = tag_context(retriever | rerank)
    """
    return cast(R, runnable.with_config(tags=[CONTEXT_TAG]))


def report_documents(documents: Iterable[Any], config: RunnableConfig | None = None) -> None:
    """Tell the ENE handler of the current run about ``documents`` it retrieved without a
    retriever (e.g. ``vector_store.similarity_search`` in a ``@dynamic_prompt`` middleware).

    Call it inside the run (a tool, a node, a middleware); ``config`` defaults to the current
    one. A no-op when no :class:`NecessityCallbackHandler` is attached; never raises, and emits
    nothing into the app's streams.
    """
    _report(documents, config)


def _report(
    documents: Iterable[Any], config: RunnableConfig | None, searched: bool = False
) -> None:
    """:func:`report_documents`; ``searched``: from an instrumented vector store search, which a
    retriever running at that point reports itself."""
    try:
        from langchain_core.runnables.config import ensure_config, get_callback_manager_for_config

        manager = get_callback_manager_for_config(ensure_config(config))
        run_id = manager.parent_run_id
        if run_id is None:
            return
        docs = list(documents)
        for handler in manager.handlers:
            if isinstance(handler, NecessityCallbackHandler):
                handler._documents(run_id, docs, searched=searched)
    except Exception:
        logger.debug("ENE: report_documents failed (ignored)", exc_info=True)


def _otel_seam() -> tuple[Callable[[], Any], Callable[[], list[Any]]]:
    """``(current_span_context, default_recorders)`` from the OTel module, or no-ops."""
    try:
        from ene_integrations.otel import current_span_context, default_recorders
    except ImportError:
        return (lambda: None), list
    return current_span_context, default_recorders


def _run_span_context(run_id: UUID) -> Any:
    """OpenInference's span for a run while it is open (its instrumentor active), else None."""
    try:
        from ene_integrations.otel import langchain_run_span_context
    except ImportError:
        return None
    return langchain_run_span_context(run_id)


def _guarded(method: F) -> F:
    """Never let a callback body raise into the host chain, whatever ``raise_error`` says."""

    @functools.wraps(method)
    def wrapper(self: NecessityCallbackHandler, *args: Any, **kwargs: Any) -> None:
        try:
            method(self, *args, **kwargs)
        except Exception:
            if method.__name__ not in self._failed_callbacks:  # log each callback's failure once
                self._failed_callbacks.add(method.__name__)
                logger.exception("ENE LangChain handler: %s failed (ignored)", method.__name__)

    return cast(F, wrapper)


@dataclass
class _Request:
    """One root run: its recorder and the run tree (for tags and cleanup).

    Owner: the handler. Dropped when the root ends, or by the handler's TTL and size cap.
    """

    root: UUID
    recorder: RunRecorder
    trace: Any = None
    parents: dict[UUID, UUID | None] = field(default_factory=dict)
    tagged: set[UUID] = field(default_factory=set)  # outermost runs tagged ene:context
    retrieving: set[UUID] = field(default_factory=set)  # retriever runs not yet ended
    spans: dict[UUID, Any] = field(default_factory=dict)  # retriever run -> OpenInference span

    def within_tagged(self, run_id: UUID) -> bool:
        """Whether an ancestor of ``run_id`` is a tagged run (tags are inherited)."""
        parent = self.parents.get(run_id)
        while parent is not None:
            if parent in self.tagged:
                return True
            parent = self.parents.get(parent)
        return False


class NecessityCallbackHandler(BaseCallbackHandler):
    """Evaluates every root run on what its answering model saw and said.

    Per root run it records the documents that became available (retrievers, tool artifacts,
    documents in node outputs, :func:`report_documents`), every model call's input and output,
    and the root's input and output; when the root ends, :class:`ene_core.RunRecorder` decides
    the answer (what the root returned), the contexts (the documents in the input of the model
    call that wrote it, each once) and the question (the user's), and a
    :class:`NecessityDispatcher` evaluates them. Results are keyed by ``str(root run id)``: fix
    it with ``config={"run_id": uuid}`` and read it with :meth:`result`/:meth:`aresult`, or pass
    ``on_result(run_id, eng)``.

    A run with nothing to evaluate gets a result at once with ``eng=None`` and ``skipped`` set;
    a run whose model never finished (a stream closed early) is recorded as an
    :class:`IncompleteRequestError`. Never raises into the chain.

    ``on_claim(run_id, claim)``: each claim's verdict as soon as it is known while a model
    streams (``stream``, ``astream``, ``astream_events``, LangGraph ``stream_mode="messages"``),
    for the model calls that may write the answer; ``on_retract(run_id, claims)``: verdicts
    emitted for a call that turned out not to be the answer (see
    :mod:`ene_core.kit.answer_streams` for the rule). The ENG is the same as without it.
    """

    raise_error = False
    ignore_retry = True
    ignore_custom_event = False  # the chunk filter's "ene_chunk_filter" event

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        mode: Mode = "background",
        on_result: Callable[[str, EvidenceNecessityGraph], Any] | None = None,
        on_error: Callable[[str, str], Any] | None = None,
        recorders: Iterable[Callable[[NecessityResult], Any]] = (),
        inline_timeout_s: float = 30.0,
        result_ttl_s: float = 600.0,
        max_results: int = 10_000,
        state_ttl_s: float = 600.0,
        max_pending: int = 10_000,
        on_claim: OnClaim | None = None,
        on_retract: OnRetract | None = None,
    ) -> None:
        """``engine``: defaults to the shared ``default_engine()``, created on first use.
        ``mode="inline"`` evaluates before the root run returns (at most ``inline_timeout_s``).
        ``state_ttl_s``/``max_pending`` bound the per-request state of roots that never end.
        """
        super().__init__()
        self._span_context, default_recorders = _otel_seam()
        self._answers = (
            None
            if on_claim is None
            else AnswerStreams(
                lambda: self.dispatcher.engine,
                on_claim,
                on_retract,
                ttl_s=state_ttl_s,
                max_requests=max_pending,
            )
        )
        settle = [] if self._answers is None else [self._answers.settle]
        self.dispatcher = NecessityDispatcher(
            engine,
            mode=mode,
            on_result=on_result,
            on_error=on_error,
            recorders=[*settle, *default_recorders(), *recorders],
            inline_timeout_s=inline_timeout_s,
            ttl_s=result_ttl_s,
            max_results=max_results,
        )
        # Bounded state: root id -> its _Request (the live requests), and every run id seen ->
        # its _Request (for lookups). Both go when the root ends, or by TTL and size cap.
        self._requests: ExpiringDict[UUID, _Request] = ExpiringDict(
            ttl_s=state_ttl_s, max_size=max_pending
        )
        self._runs: ExpiringDict[UUID, _Request] = ExpiringDict(
            ttl_s=state_ttl_s, max_size=max_pending * 64
        )
        self._lock = threading.Lock()  # guards compound updates of the maps and run trees
        self._failed_callbacks: set[str] = set()

    @property
    def run_inline(self) -> bool:  # type: ignore[override]
        """Callbacks run on the event loop in background mode (they only record and enqueue);
        in inline mode async runs call them in an executor so evaluation never blocks the loop."""
        return self.dispatcher.mode == "background"

    @property
    def mode(self) -> Mode:
        return self.dispatcher.mode

    @property
    def pending(self) -> int:
        """Root runs started and not yet ended (or evicted)."""
        return len(self._requests)

    def result(self, run_id: UUID | str, timeout: float | None = None) -> NecessityResult:
        """The request's result: an ENG, an error, or a ``skipped`` reason once the root run
        has ended; blocks while it is running or evaluating (``TimeoutError`` after
        ``timeout``)."""
        return self.dispatcher.result(str(run_id), timeout)

    async def aresult(self, run_id: UUID | str, timeout: float | None = None) -> NecessityResult:
        return await self.dispatcher.aresult(str(run_id), timeout)

    # -- run tree -----------------------------------------------------------------------------
    def _start(
        self, run_id: UUID, parent_run_id: UUID | None, tags: list[str] | None = None
    ) -> tuple[_Request, bool]:
        """Record ``run_id`` under its root; ``(request, is_root)``. A run whose parent this
        handler never saw (attached below the top, e.g. ``sub.with_config(callbacks=[h])``) is
        a root."""
        with self._lock:
            found = None if parent_run_id is None else self._runs.get(parent_run_id)
            is_root = found is None
            if found is None:
                request = _Request(root=run_id, recorder=RunRecorder())
                parent_run_id = None
                self._requests.put(run_id, request)
            else:
                request = found
            self._runs.put(run_id, request)
            request.parents[run_id] = parent_run_id
            if tags and CONTEXT_TAG in tags and not request.within_tagged(run_id):
                request.tagged.add(run_id)
        if is_root:
            request.trace = self._span_context()  # on the request's thread and context
        return request, is_root

    def _lookup(self, run_id: UUID) -> _Request | None:
        return cast("_Request | None", self._runs.get(run_id))

    def _documents(self, run_id: UUID, documents: list[Any], searched: bool = False) -> None:
        """Documents reported inside ``run_id`` (see :func:`report_documents`). A vector store
        search (``searched``) made by a retriever started under ``run_id`` is left to it."""
        request = self._lookup(run_id)
        if request is None or not documents:
            return
        if searched and any(request.parents.get(r) == run_id for r in set(request.retrieving)):
            return
        request.recorder.documents(documents, origin=run_id)

    def _output(self, run_id: UUID, output: Any, request: _Request | None) -> None:
        """A run ended with ``output``: finish the request if it is the root, else harvest the
        documents it carries (tagged output, tool artifacts, documents in node outputs)."""
        if request is None:
            return
        if request.root == run_id:
            self._end(request, output=output)
        elif run_id in request.tagged:
            docs = _as_documents(output)
            if docs is None:
                logger.debug("ENE: the %s step returned no documents", CONTEXT_TAG)
            else:
                request.recorder.documents(docs, origin=run_id, tagged=True)
        else:
            docs = _documents_in(output)
            if docs:
                request.recorder.documents(docs, origin=run_id)

    def _failed(self, run_id: UUID, error: BaseException) -> None:
        request = self._lookup(run_id)
        if request is not None and request.root == run_id:
            self._end(request, error=error)

    def _end(self, request: _Request, output: Any = _MISSING, error: Any = None) -> None:
        """Finish ``request`` (its root ended), drop its state and hand the decision over."""
        run_id = request.root
        with self._lock:
            if self._requests.pop(run_id) is None:
                return  # already finished, or evicted
            for run in request.parents:
                self._runs.pop(run)
        trace = _run_span_context(run_id) or request.trace  # OpenInference's root span
        if isinstance(error, (GeneratorExit, asyncio.CancelledError)):
            decision = request.recorder.decide(stopped=True)  # the consumer stopped early
        elif error is not None:
            decision = request.recorder.decide(error=error)
        else:
            decision = request.recorder.decide(_plain(output))
        if self._answers is not None:
            self._answers.decided(str(run_id), decision.answer if decision.ok else None)
        dispatch_decision(
            self.dispatcher,
            str(run_id),
            decision,
            trace=trace,
            metadata=_metadata(decision, request),
        )

    # -- callbacks ----------------------------------------------------------------------------
    @_guarded
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        request, is_root = self._start(run_id, parent_run_id, tags)
        if is_root:
            request.recorder.root_input(_plain(inputs))

    @_guarded
    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        request = self._lookup(run_id)
        if request is not None and request.root == run_id and "inputs" in kwargs:
            request.recorder.root_input(_plain(kwargs["inputs"]))  # a streamed input, complete
        self._output(run_id, outputs, request)

    @_guarded
    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._failed(run_id, error)

    @_guarded
    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        request, is_root = self._start(run_id, parent_run_id, tags)
        if is_root:
            request.recorder.root_input(query)
        else:
            request.retrieving.add(run_id)

    @_guarded
    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, **kwargs: Any
    ) -> None:
        request = self._lookup(run_id)
        if request is None:
            return
        request.retrieving.discard(run_id)
        if request.root == run_id:
            self._end(request, output=list(documents))
        else:
            span = _run_span_context(run_id)
            if span is not None:
                request.spans[run_id] = span
            tagged = run_id in request.tagged
            request.recorder.documents(documents, origin=run_id, tagged=tagged)

    @_guarded
    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        request = self._lookup(run_id)
        if request is not None:
            request.retrieving.discard(run_id)
        self._failed(run_id, error)

    @_guarded
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        request, is_root = self._start(run_id, parent_run_id, tags)
        if is_root:
            request.recorder.root_input(input_str)

    @_guarded
    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._output(run_id, output, self._lookup(run_id))

    @_guarded
    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._failed(run_id, error)

    @_guarded
    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        request, is_root = self._start(run_id, parent_run_id, tags)
        if is_root:
            request.recorder.root_input(prompts[-1] if prompts else None)
        request.recorder.model_start(run_id, "\n".join(prompts))

    @_guarded
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        request, is_root = self._start(run_id, parent_run_id, tags)
        converted = [_message(m) for batch in messages for m in batch]
        if is_root:
            request.recorder.root_input(converted)
        request.recorder.model_start(run_id, converted)
        if self._answers is not None and _structured(kwargs):  # a grader or a router
            self._answers.exclude(str(request.root), run_id)

    @_guarded
    def on_llm_new_token(
        self, token: object, *, chunk: Any = None, run_id: UUID, **kwargs: Any
    ) -> None:  # token: a string, or content blocks on newer langchain-core (not an answer's text)
        if self._answers is None:
            return
        request = self._lookup(run_id)
        if request is None:
            return
        if _calls_tools(chunk):
            self._answers.exclude(str(request.root), run_id)
        elif isinstance(token, str) and token:
            recorder = request.recorder
            self._answers.token(
                str(request.root), run_id, token, lambda: recorder.candidate(run_id)
            )

    @_guarded
    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        request = self._lookup(run_id)
        if request is not None:
            text = _answer_text(response)
            request.recorder.model_end(run_id, text)
            if self._answers is not None and _calls_tools(response):
                self._answers.exclude(str(request.root), run_id)
            if request.root == run_id:
                self._end(request, output=text)

    @_guarded
    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        request = self._lookup(run_id)
        if request is not None:
            request.recorder.model_end(run_id, None)
        self._failed(run_id, error)

    @_guarded
    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """The chunk filter's decision (:data:`~ene_integrations.langchain.filter.FILTER_EVENT`,
        dispatched under the retriever or step that filtered): recorded for the request that
        run belongs to, whose answer follows it. Other custom events are ignored."""
        if name != FILTER_EVENT:
            return
        request = self._lookup(run_id)
        if request is not None:
            request.recorder.chunk_filter(data)


def _metadata(decision: RunDecision, request: _Request) -> dict[str, Any]:
    """Result metadata: where each context came from (retriever span for Phoenix)."""
    documents = [
        {
            "run_id": str(origin),
            "position": position,
            "span_context": request.spans.get(origin) if isinstance(origin, UUID) else None,
        }
        for origin, position in decision.origins
    ]
    return {
        "framework": "langchain",
        "context_source": decision.context_source,
        "documents": documents,
    }
