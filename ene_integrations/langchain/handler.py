"""LangChain and LangGraph adapter: the ENG of every request's answer, and pruning steps.

* :class:`NecessityCallbackHandler` - attach it (``config={"callbacks": [handler]}``) or
  :func:`instrument` the process; each root run (an LCEL chain, a ``create_agent`` agent, a
  LangGraph graph) is evaluated on what its answering model saw and said, off the request path
  by default. The handler only translates callbacks into :class:`ene_core.RunRecorder` events;
  the rules (which answer, which contexts, which question) live in :mod:`ene_core.runs`.
* :func:`tag_context` - mark the step whose output is the context the model saw (after a
  rerank or filter, or when the prompt shows the documents rewritten).
* :func:`report_documents` - tell the handler about documents it cannot see being retrieved
  (``vector_store.similarity_search`` inside a ``@dynamic_prompt`` middleware).
* :class:`NecessityPruner` - a Runnable (LCEL step or graph node) that drops the documents the
  answer did not use; :func:`pruning_middleware` does the same inside ``create_agent``.
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
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import LLMResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tracers.context import register_configure_hook

from ene_core import (
    Engine,
    EvidenceNecessityGraph,
    IncompleteRequestError,
    NecessityDispatcher,
    NecessityResult,
    default_engine,
    prune,
)
from ene_core.pruning import KEEP_POLICIES, KeepPolicy
from ene_core.results import ExpiringDict, Mode
from ene_core.runs import Message, RunDecision, RunRecorder, dispatch_decision, normalise

__all__ = [
    "CONTEXT_TAG",
    "IncompleteRequestError",
    "NecessityCallbackHandler",
    "NecessityPruner",
    "instrument",
    "pruning_middleware",
    "report_documents",
    "tag_context",
    "uninstrument",
]

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
    try:
        from langchain_core.runnables.config import (
            ensure_config,
            get_callback_manager_for_config,
        )

        manager = get_callback_manager_for_config(ensure_config(config))
        run_id = manager.parent_run_id
        if run_id is None:
            return
        docs = list(documents)
        for handler in manager.handlers:
            if isinstance(handler, NecessityCallbackHandler):
                handler._documents(run_id, docs)
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
    """

    raise_error = False
    ignore_retry = True
    ignore_custom_event = True

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

    def _documents(self, run_id: UUID, documents: list[Any]) -> None:
        """Documents reported inside ``run_id`` (see :func:`report_documents`)."""
        request = self._lookup(run_id)
        if request is not None and documents:
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

    @_guarded
    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, **kwargs: Any
    ) -> None:
        request = self._lookup(run_id)
        if request is None:
            return
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

    @_guarded
    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        request = self._lookup(run_id)
        if request is not None:
            text = _answer_text(response)
            request.recorder.model_end(run_id, text)
            if request.root == run_id:
                self._end(request, output=text)

    @_guarded
    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        request = self._lookup(run_id)
        if request is not None:
            request.recorder.model_end(run_id, None)
        self._failed(run_id, error)


# -- LangChain values -> plain values (ene_core.runs) -------------------------------------------
_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}


def _text(content: Any) -> str:
    """A message content's text: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, Sequence):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "".join(parts)


def _is_document(item: Any) -> bool:
    """A Document, or one a checkpointer stored as a mapping (``page_content``)."""
    return isinstance(item, Document) or (
        isinstance(item, Mapping) and isinstance(item.get("page_content"), str)
    )


def _artifact_documents(artifact: Any) -> tuple[Any, ...]:
    if _is_document(artifact):
        return (artifact,)
    if isinstance(artifact, (list, tuple)):
        return tuple(d for d in artifact if _is_document(d))
    return ()


def _message(m: Any) -> Message:
    """A LangChain message (or a ``{"role", "content"}`` dict, or a ``(role, text)`` pair)."""
    if isinstance(m, BaseMessage):
        if isinstance(m, HumanMessage):
            role = "user"
        elif isinstance(m, AIMessage):
            return Message("assistant", _text(m.content), len(m.tool_calls or ()))
        elif isinstance(m, SystemMessage):
            role = "system"
        elif isinstance(m, ToolMessage):
            return Message("tool", _text(m.content), documents=_artifact_documents(m.artifact))
        elif isinstance(m, ChatMessage):
            role = _ROLES.get(m.role, m.role)
        else:
            role = _ROLES.get(m.type, m.type)
        return Message(role, _text(m.content))
    if isinstance(m, Mapping):
        role = str(m.get("role", m.get("type", "user")))
        calls = m.get("tool_calls") or ()
        return Message(_ROLES.get(role, role), _text(m.get("content", "")), len(calls))
    if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[0], str):
        return Message(_ROLES.get(m[0], m[0]), _text(m[1]))
    return Message("user", _text(m))


def _messages(value: Any) -> list[Message] | None:
    if isinstance(value, str):
        return [Message("user", value)]
    if isinstance(value, BaseMessage):
        return [_message(value)]
    if isinstance(value, (list, tuple)) and all(
        isinstance(m, (BaseMessage, Mapping, tuple, list)) for m in value
    ):
        return [_message(m) for m in value]
    return None


def _plain(value: Any) -> Any:
    """A root input or output as :mod:`ene_core.runs` reads it (messages become Message)."""
    if isinstance(value, BaseMessage):
        return _message(value)
    if isinstance(value, Mapping):
        out = dict(value)
        if "messages" in out:
            converted = _messages(out["messages"])
            out["messages"] = converted if converted is not None else out["messages"]
        for key, item in out.items():
            if isinstance(item, BaseMessage):
                out[key] = _message(item)
        return out
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], BaseMessage):
        return [_message(m) if isinstance(m, BaseMessage) else m for m in value]
    return value


def _documents_in(value: Any, depth: int = 0) -> list[Any]:
    """Documents a run's output carries: documents, tool artifacts, LangGraph updates."""
    if isinstance(value, Document):
        return [value]
    if isinstance(value, ToolMessage):
        return list(_artifact_documents(value.artifact))
    if depth > 2:
        return []
    update = getattr(value, "update", None)  # a LangGraph Command
    if update is not None and not isinstance(value, Mapping) and not callable(update):
        return _documents_in(update, depth + 1)
    items: Iterable[Any] = ()
    if isinstance(value, Mapping):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    found: list[Any] = []
    for item in items:
        if depth < 2 or isinstance(item, (Document, ToolMessage)):
            found.extend(_documents_in(item, depth + 1))
    return found


def _answer_text(response: LLMResult) -> str | None:
    """The first generation's text (the full text, also when the model streamed)."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            if message is not None and not generation.text:
                return _text(message.content)
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
    """Keep the documents the answer used, in their original order: an LCEL step or a node.

    *Sources mode* (the input has ``answer_key``): a mapping with the answer, the documents
    (``context_key``) and, optionally, the question. Output: the same mapping with the documents
    reduced to the ENG's minimal sufficient set (``keep="necessary"``: only those some claim
    needs alone; ``keep="cited"``: the answer's ``[n]`` sources minus padding citations), plus
    ``evidence`` (the ENG) and ``tokens_before``/``tokens_after``::

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
        keep: KeepPolicy = "minimal",
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
    """A document's identity, as :mod:`ene_core.runs` sees it: its id, else its text."""
    if isinstance(doc, Mapping):
        ident, text = doc.get("id"), doc["page_content"]
    else:
        ident, text = doc.id, doc.page_content
    return f"id:{ident}" if ident else f"text:{normalise(text)}"


def pruning_middleware(
    engine: Engine | None = None,
    *,
    keep: KeepPolicy = "minimal",
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
