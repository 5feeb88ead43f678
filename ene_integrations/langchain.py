"""LangChain adapter: the ENG of every request's answer, and a pruning step for LCEL.

* :class:`NecessityCallbackHandler` - attach it (``config={"callbacks": [handler]}``) or
  :func:`instrument` the process; each root run's answer is evaluated against the documents it
  retrieved, off the request path by default, through :class:`ene_core.NecessityDispatcher`.
* :func:`tag_context` - mark the step whose output is the context the model saw (after a
  rerank or filter); the handler then uses that output instead of the retriever's.
* :class:`NecessityPruner` - a Runnable that drops the documents the answer did not use.

All logic lives in :mod:`ene_core`; this module only translates LangChain callbacks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.outputs import LLMResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tracers.context import register_configure_hook

from ene_core import (
    EvidenceNecessityGraph,
    NecessityDispatcher,
    NecessityEngine,
    NecessityResult,
    default_engine,
    prune,
)
from ene_core.pruning import KeepPolicy
from ene_core.results import ExpiringDict, Mode

__all__ = [
    "CONTEXT_TAG",
    "IncompleteRequestError",
    "NecessityCallbackHandler",
    "NecessityPruner",
    "instrument",
    "tag_context",
    "uninstrument",
]

logger = logging.getLogger("ene.langchain")

CONTEXT_TAG = "ene:context"
"""Tag of the step whose output is the context the model saw (see :func:`tag_context`)."""

F = TypeVar("F", bound=Callable[..., None])
R = TypeVar("R", bound=Runnable[Any, Any])


class IncompleteRequestError(RuntimeError):
    """The root run ended before a model answered (e.g. a stream closed early)."""


def tag_context(runnable: R) -> R:
    """Mark ``runnable``'s output as the context the model saw (adds the ``ene:context`` tag).

    >>> docs = tag_context(retriever | rerank)
    """
    return cast(R, runnable.with_config(tags=[CONTEXT_TAG]))


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
    """What one root run has seen so far.

    Owner: the handler. Dropped when the root ends, or by the handler's TTL and size cap.
    """

    root: UUID
    trace: Any = None
    parents: dict[UUID, UUID | None] = field(default_factory=dict)
    retrievers: dict[UUID, list[Any] | None] = field(default_factory=dict)  # outermost only
    tagged: dict[UUID, list[Any] | None] = field(default_factory=dict)  # outermost only
    spans: dict[UUID, Any] = field(default_factory=dict)  # retriever run -> OpenInference span
    models: int = 0
    question: str | None = None
    answer: str | None = None

    def within(self, run_id: UUID, *groups: Mapping[UUID, Any]) -> bool:
        """Whether an ancestor of ``run_id`` is in one of ``groups``."""
        parent = self.parents.get(run_id)
        while parent is not None:
            if any(parent in group for group in groups):
                return True
            parent = self.parents.get(parent)
        return False

    def contexts(self) -> tuple[str, list[Any], list[dict[str, Any]]]:
        """``(source, documents, where each came from)``: tagged output wins over retrievers."""
        source, runs = "retriever", self.retrievers
        if any(docs is not None for docs in self.tagged.values()):
            source, runs = "tagged", self.tagged
        documents: list[Any] = []
        where: list[dict[str, Any]] = []
        for run_id, docs in runs.items():
            for position, doc in enumerate(docs or ()):
                documents.append(doc)
                where.append(
                    {
                        "run_id": str(run_id),
                        "position": position,
                        "span_context": self.spans.get(run_id),  # Phoenix document annotations
                    }
                )
        return source, documents, where


class NecessityCallbackHandler(BaseCallbackHandler):
    """Evaluates every root run's answer against the documents it retrieved.

    Per root run it keeps the documents of the outermost retriever(s) (or of the outermost step
    tagged ``ene:context``), the text of the last model to finish, and the retriever's query as
    the question; when the root ends it hands them to a :class:`NecessityDispatcher`. Results
    are keyed by ``str(root run id)``: fix it with ``config={"run_id": uuid}`` and read it with
    :meth:`result`/:meth:`aresult`, or pass ``on_result(run_id, eng)``.

    Runs that saw no retrieval are skipped; a run whose model never finished (a stream closed
    early) is recorded as an :class:`IncompleteRequestError`. Never raises into the chain.
    """

    raise_error = False
    ignore_retry = True
    ignore_custom_event = True

    def __init__(
        self,
        engine: NecessityEngine | None = None,
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
    ) -> None:
        """``engine``: defaults to the shared ``default_engine()``, created on first use.
        ``mode="inline"`` evaluates before the root run returns (at most ``inline_timeout_s``).
        ``state_ttl_s``/``max_pending`` bound the per-request state of roots that never end.
        """
        super().__init__()
        self._span_context, default_recorders = _otel_seam()
        self.dispatcher = NecessityDispatcher(
            engine,
            mode=mode,
            on_result=on_result,
            on_error=on_error,
            recorders=[*default_recorders(), *recorders],
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
        self._lock = threading.Lock()  # guards compound updates of the maps and _Request fields
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
        """Block until the request's result exists; ``TimeoutError`` if not within ``timeout``."""
        return self.dispatcher.result(str(run_id), timeout)

    async def aresult(self, run_id: UUID | str, timeout: float | None = None) -> NecessityResult:
        return await self.dispatcher.aresult(str(run_id), timeout)

    # -- run tree -----------------------------------------------------------------------------
    def _start(self, run_id: UUID, parent_run_id: UUID | None) -> _Request:
        """Record ``run_id`` under its root. A run whose parent this handler never saw (it was
        attached below the top, e.g. ``sub_chain.with_config(callbacks=[handler])``) is a root."""
        with self._lock:
            found = None if parent_run_id is None else self._runs.get(parent_run_id)
            is_root = found is None
            if found is None:
                request, parent_run_id = _Request(root=run_id), None
                self._requests.put(run_id, request)
            else:
                request = found
            self._runs.put(run_id, request)
            request.parents[run_id] = parent_run_id
        if is_root:
            request.trace = self._span_context()  # on the request's thread and context
        return request

    def _lookup(self, run_id: UUID) -> _Request | None:
        return cast("_Request | None", self._runs.get(run_id))

    def _end(
        self, run_id: UUID, error: BaseException | None, request: _Request | None = None
    ) -> None:
        """Finish the request if ``run_id`` is its root, and drop its state."""
        request = request or self._lookup(run_id)
        if request is None or request.root != run_id:
            return
        with self._lock:
            if self._requests.pop(run_id) is None:
                return  # already finished, or evicted
            request.trace = _run_span_context(run_id) or request.trace  # OpenInference's root
            for run in request.parents:
                self._runs.pop(run)
            if not request.retrievers and not request.tagged:
                return  # not a retrieval-augmented request: nothing to evaluate
            source, documents, where = request.contexts()
        if isinstance(error, (GeneratorExit, asyncio.CancelledError)):
            error = None  # the consumer stopped early: evaluate if the model had finished
        key = str(run_id)
        metadata = {"framework": "langchain", "context_source": source, "documents": where}
        if error is None and request.answer is None and request.models:
            error = IncompleteRequestError(
                "the chain ended before its model finished (stream closed early?)"
            )
        try:
            if error is not None:
                self.dispatcher.record_error(key, error, trace=request.trace, metadata=metadata)
            elif request.answer is not None:
                self.dispatcher.dispatch(
                    key,
                    request.answer,
                    documents,
                    request.question,
                    trace=request.trace,
                    metadata=metadata,
                )
        except Exception as exc:  # the dispatcher never raises; this keeps waiters from hanging
            self.dispatcher.record_error(key, exc, trace=request.trace, metadata=metadata)

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
        request = self._start(run_id, parent_run_id)
        if tags and CONTEXT_TAG in tags:
            with self._lock:
                if not request.within(run_id, request.tagged):
                    request.tagged[run_id] = None

    @_guarded
    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        request = self._lookup(run_id)
        if request is not None and run_id in request.tagged:
            documents = _as_documents(outputs)
            if documents is None:
                logger.debug("ENE: the %s step returned no documents", CONTEXT_TAG)
            with self._lock:
                request.tagged[run_id] = documents
        self._end(run_id, None, request)

    @_guarded
    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._end(run_id, error)

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
        request = self._start(run_id, parent_run_id)
        with self._lock:
            if not request.within(run_id, request.retrievers):
                request.retrievers[run_id] = None
                if request.question is None and isinstance(query, str):
                    request.question = query
            if tags and CONTEXT_TAG in tags and not request.within(run_id, request.tagged):
                request.tagged[run_id] = None

    @_guarded
    def on_retriever_end(
        self,
        documents: Sequence[Document],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        request = self._lookup(run_id)
        if request is not None:
            span = _run_span_context(run_id) if run_id in request.retrievers else None
            with self._lock:
                if run_id in request.retrievers:
                    request.retrievers[run_id] = list(documents)
                    request.spans[run_id] = span
                if run_id in request.tagged:
                    request.tagged[run_id] = list(documents)
        self._end(run_id, None, request)

    @_guarded
    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._end(run_id, error)

    @_guarded
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._start(run_id, parent_run_id)  # a retriever inside a tool belongs to the request

    @_guarded
    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, None)

    @_guarded
    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    @_guarded
    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_started(run_id, parent_run_id)

    @_guarded
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_started(run_id, parent_run_id)

    def _model_started(self, run_id: UUID, parent_run_id: UUID | None) -> None:
        request = self._start(run_id, parent_run_id)
        with self._lock:  # models inside retrievers (query rewriting) are not the answer
            if not request.within(run_id, request.retrievers, request.tagged):
                request.models += 1

    @_guarded
    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        request = self._lookup(run_id)
        if request is not None:
            text = _answer_text(response)
            with self._lock:
                if text is not None and not request.within(
                    run_id, request.retrievers, request.tagged
                ):
                    request.answer = text  # the last model to finish gives the answer
        self._end(run_id, None, request)

    @_guarded
    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._end(run_id, error)


def _answer_text(response: LLMResult) -> str | None:
    """The first generation's text (the full text, also when the model streamed)."""
    for generations in response.generations:
        for generation in generations:
            return generation.text
    return None


def _as_documents(output: Any) -> list[Any] | None:
    """Read a tagged step's output as a list of documents (or strings), else ``None``."""
    if isinstance(output, (Document, str)):
        return [output]
    if isinstance(output, Mapping):
        for key in ("context", "documents", "output"):
            if key in output:
                return _as_documents(output[key])
        return None
    if isinstance(output, (list, tuple)) and all(
        isinstance(item, (Document, str, Mapping)) for item in output
    ):
        return list(output)
    return None


# -- process-wide installation ------------------------------------------------------------------
class _InstalledHandler:
    """The handler slot LangChain's configure hook reads for every callback manager.

    ``CallbackManager.configure`` only calls ``.get()`` on a registered hook variable. A real
    ``ContextVar`` set by :func:`instrument` would be invisible to threads that start with a
    fresh context (server and pool workers), so this stand-in holds one value per process.
    """

    def __init__(self) -> None:
        self.handler: NecessityCallbackHandler | None = None

    def get(self, default: Any = None) -> NecessityCallbackHandler | None:
        return self.handler


_slot = _InstalledHandler()
_install_lock = threading.Lock()
_hook_registered = False


def instrument(
    handler: NecessityCallbackHandler | None = None, **kwargs: Any
) -> NecessityCallbackHandler:
    """Attach ``handler`` (or a new one built from ``kwargs``) to every chain in the process.

    Idempotent: a second call returns the installed handler (pass a handler to replace it).
    A chain given a ``NecessityCallbackHandler`` explicitly keeps that one and only that one.
    """
    global _hook_registered
    with _install_lock:
        if not _hook_registered:  # LangChain's hook list is append-only: register once
            register_configure_hook(
                cast(Any, _slot), inheritable=True, handle_class=NecessityCallbackHandler
            )
            _hook_registered = True
        if handler is None:
            if _slot.handler is not None:
                if kwargs:
                    logger.warning("ENE is already instrumented; call uninstrument() first")
                return _slot.handler
            handler = NecessityCallbackHandler(**kwargs)
        _slot.handler = handler
        return handler


def uninstrument() -> None:
    """Stop attaching the installed handler to new runs (runs in flight finish normally)."""
    with _install_lock:
        _slot.handler = None


# -- runtime pruning -----------------------------------------------------------------------------
class NecessityPruner(Runnable[Mapping[str, Any], dict[str, Any]]):
    """LCEL step: keep the documents the answer used, in their original order.

    Input: a mapping with the answer (``answer_key``), the documents (``context_key``) and,
    optionally, the question. Output: the same mapping with the documents reduced to the
    ENG's minimal sufficient set (``keep="necessary"``: only those some claim needs alone),
    plus ``evidence`` (the ENG) and ``tokens_before``/``tokens_after`` of the documents.

    Evaluates on the request path by design (micro-batched with concurrent requests). If the
    evaluation fails or takes longer than ``timeout_s``, nothing is pruned, ``evidence`` is
    ``None`` and the failure is logged::

        RunnableParallel({"context": retriever, "question": RunnablePassthrough()})
            .assign(answer=rag_chain).pipe(NecessityPruner())
    """

    def __init__(
        self,
        engine: NecessityEngine | None = None,
        *,
        answer_key: str = "answer",
        context_key: str = "context",
        question_key: str = "question",
        evidence_key: str = "evidence",
        keep: KeepPolicy = "minimal",
        timeout_s: float = 30.0,
    ) -> None:
        self._engine = engine
        self.answer_key = answer_key
        self.context_key = context_key
        self.question_key = question_key
        self.evidence_key = evidence_key
        if keep not in ("minimal", "necessary"):
            raise ValueError(f"keep must be 'minimal' or 'necessary', got {keep!r}")
        self.keep = keep
        self.timeout_s = timeout_s
        self._logged: set[str] = set()

    @property
    def engine(self) -> NecessityEngine:
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
        answer, documents, question = self._read(input)
        eng: EvidenceNecessityGraph | None = None
        try:
            eng = self.engine.submit(answer, documents, question).result(timeout=self.timeout_s)
        except Exception as exc:
            self._failed(exc)
        return self._write(input, documents, eng)

    async def _aprune(self, input: Mapping[str, Any]) -> dict[str, Any]:
        answer, documents, question = self._read(input)
        eng: EvidenceNecessityGraph | None = None
        try:
            eng = await asyncio.wait_for(
                self.engine.aevaluate(answer, documents, question), self.timeout_s
            )
        except Exception as exc:
            self._failed(exc)
        return self._write(input, documents, eng)

    def _read(self, input: Mapping[str, Any]) -> tuple[str, list[Any], str | None]:
        """Wiring errors (wrong keys or types) raise: they are the caller's bug, not ENE's."""
        if not isinstance(input, Mapping):
            raise TypeError(f"NecessityPruner needs a mapping, got {type(input).__name__}")
        for key in (self.answer_key, self.context_key):
            if key not in input:
                raise KeyError(
                    f"NecessityPruner input has no {key!r} (keys: {sorted(input)}); "
                    "set answer_key=/context_key="
                )
        answer = input[self.answer_key]
        if not isinstance(answer, str):
            raise TypeError(f"{self.answer_key!r} must be a str, got {type(answer).__name__}")
        question = input.get(self.question_key)
        documents = list(input[self.context_key])
        return answer, documents, question if isinstance(question, str) else None

    def _failed(self, error: BaseException) -> None:
        kind = type(error).__name__
        if kind not in self._logged:  # log each kind of failure once
            self._logged.add(kind)
            logger.warning("ENE pruning skipped (nothing pruned): %s: %s", kind, error)

    def _write(
        self,
        input: Mapping[str, Any],
        documents: list[Any],
        eng: EvidenceNecessityGraph | None,
    ) -> dict[str, Any]:
        result = prune(documents, eng, keep=self.keep)
        before = None if eng is None else sum(c.tokens for c in eng.contexts)
        return {
            **input,
            self.context_key: result.kept,
            self.evidence_key: eng,
            "tokens_before": before,
            "tokens_after": None if before is None else before - result.tokens_saved,
        }
