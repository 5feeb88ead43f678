"""Moved: ``ene serve`` lives in :mod:`ene_core.service.serve`; this module keeps the old
import path (``ene_core.serve.start`` / ``stop`` / ``build_app``) working.
"""

from .service.serve import (
    LIMITS,
    TOKEN_ENV,
    Failure,
    Limits,
    Reply,
    ServeConfig,
    Service,
    build_app,
    start,
    stop,
    token_digest,
)

__all__ = [
    "LIMITS",
    "TOKEN_ENV",
    "Failure",
    "Limits",
    "Reply",
    "ServeConfig",
    "Service",
    "build_app",
    "start",
    "stop",
    "token_digest",
]
