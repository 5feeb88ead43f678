"""Process-wide installation: :func:`instrument` attaches one handler to every chain through
LangChain's configure hook; :func:`uninstrument` stops attaching it."""

from __future__ import annotations

import logging
import threading
from typing import Any, cast

from langchain_core.tracers.context import register_configure_hook

from .handler import NecessityCallbackHandler

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
