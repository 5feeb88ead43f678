"""Process-wide installation: :func:`instrument` attaches one handler to every chain through
LangChain's configure hook, and reports the documents of vector store searches made outside a
retriever (no callback fires for those); :func:`uninstrument` undoes both."""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any, cast

from langchain_core.documents import Document
from langchain_core.tracers.context import register_configure_hook
from langchain_core.vectorstores import VectorStore

from .handler import NecessityCallbackHandler, _report

logger = logging.getLogger("ene.langchain")


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
        _patch_vector_stores()
        if handler is None:
            if _slot.handler is not None:
                if kwargs:
                    logger.warning("ENE is already instrumented; call uninstrument() first")
                return _slot.handler
            handler = NecessityCallbackHandler(**kwargs)
        _slot.handler = handler
        return handler


def uninstrument() -> None:
    """Stop attaching the installed handler to new runs (runs in flight finish normally) and
    restore the vector stores' search methods."""
    with _install_lock:
        _slot.handler = None
        _unpatch_vector_stores()


# -- vector store searches ------------------------------------------------------------------------
_SEARCHES = tuple(
    prefix + name
    for name in (
        "similarity_search",
        "similarity_search_with_score",
        "similarity_search_with_relevance_scores",
        "similarity_search_by_vector",
        "max_marginal_relevance_search",
        "max_marginal_relevance_search_by_vector",
    )
    for prefix in ("", "a")
)
"""The ``VectorStore`` methods :func:`instrument` wraps, on every subclass that defines them."""

_searching = contextvars.ContextVar("ene_vector_search", default=False)  # inside a wrapped search
_originals: dict[tuple[type, str], Any] = {}  # (class, method name) -> the original function
_patching = False  # new VectorStore subclasses are wrapped too while instrumented
_hooked = False


def _documents_of(result: Any) -> list[Document]:
    """The documents a search returned (``Document``s, or ``(Document, score)`` pairs)."""
    items = result if isinstance(result, (list, tuple)) else ()
    return [
        d
        for d in (i[0] if isinstance(i, tuple) and i else i for i in items)
        if isinstance(d, Document)
    ]


def _wrap(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method``, reporting what the outermost search returns to the run it is made in."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def asearch(*args: Any, **kwargs: Any) -> Any:
            if _searching.get():
                return await method(*args, **kwargs)
            token = _searching.set(True)
            try:
                result = await method(*args, **kwargs)
            finally:
                _searching.reset(token)
            _report(_documents_of(result), None, searched=True)
            return result

        return asearch

    @functools.wraps(method)
    def search(*args: Any, **kwargs: Any) -> Any:
        if _searching.get():
            return method(*args, **kwargs)
        token = _searching.set(True)
        try:
            result = method(*args, **kwargs)
        finally:
            _searching.reset(token)
        _report(_documents_of(result), None, searched=True)
        return result

    return search


def _patch(cls: type) -> None:
    for name in _SEARCHES:
        method = cls.__dict__.get(name)
        if (
            inspect.isfunction(method)
            and (cls, name) not in _originals
            and not getattr(method, "__isabstractmethod__", False)
        ):
            _originals[(cls, name)] = method
            setattr(cls, name, _wrap(method))


def _on_subclass(cls: type, **kwargs: Any) -> None:
    super(VectorStore, cls).__init_subclass__(**kwargs)  # type: ignore[misc]
    if _patching:
        try:
            _patch(cls)
        except Exception:  # never break the definition of a class
            logger.debug("ENE: could not wrap %s's searches", cls.__name__, exc_info=True)


def _patch_vector_stores() -> None:
    """Wrap the search methods of every ``VectorStore`` class, now and defined later (lock held)."""
    global _patching, _hooked
    _patching = True
    if not _hooked and "__init_subclass__" not in VectorStore.__dict__:
        VectorStore.__init_subclass__ = classmethod(_on_subclass)  # type: ignore[assignment]
        _hooked = True
    stack: list[type] = [VectorStore]
    while stack:
        cls = stack.pop()
        _patch(cls)
        stack.extend(cls.__subclasses__())


def _unpatch_vector_stores() -> None:
    global _patching
    _patching = False
    for (cls, name), method in _originals.items():
        setattr(cls, name, method)
    _originals.clear()
