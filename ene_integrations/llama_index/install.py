"""Process-wide installation: :func:`instrument` registers one :class:`NecessityHandler` on
LlamaIndex's root dispatcher; :func:`uninstrument` removes it."""

from __future__ import annotations

import logging
import threading
from typing import Any

from llama_index.core.instrumentation import get_dispatcher

from .handler import NecessityHandler, _EventTap

logger = logging.getLogger("ene.llama_index")


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
