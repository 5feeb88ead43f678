"""Moved: ``RemoteEngine`` lives in :mod:`ene_core.service.remote` (and is
``ene_core.RemoteEngine``); this module keeps the old import path working.
"""

from .service.remote import RETRY_STATUS, TOKEN_ENV, RemoteEngine, RemoteVerifier

__all__ = [
    "RETRY_STATUS",
    "TOKEN_ENV",
    "RemoteEngine",
    "RemoteVerifier",
]
