"""Typed errors. Each message says what went wrong and what to do about it."""

from __future__ import annotations


class EneError(Exception):
    """Base class of every error ENE raises on purpose."""


class InvalidInputError(EneError, ValueError):
    """An answer or context that ENE cannot evaluate (wrong type, missing text)."""


class PruneMismatchError(InvalidInputError):
    """``prune`` was given a graph of other contexts (another request's, or another order):
    prune the list that was evaluated, with its own graph."""


class ModelNotFoundError(EneError, FileNotFoundError):
    """The verifier model is not available locally. ENE never downloads weights at run time."""


class LabelMappingError(EneError, ValueError):
    """The model's ``config.id2label`` cannot be mapped to entailment / neutral / contradiction."""


class OracleError(EneError, RuntimeError):
    """The support oracle failed or returned something that is not a probability."""


class JudgeError(OracleError):
    """An LLM judge's server failed, refused the key or could not be reached (retries
    included), or answered something that is not a chat completion."""


class ProfileError(EneError, ValueError):
    """A calibration profile that cannot be read, or that belongs to another verifier."""


class RemoteCodeError(EneError, PermissionError):
    """The model ships its own Python code (``auto_map`` in its config) and the caller did not
    pass ``trust_remote_code=True`` (``--trust-remote-code``): ENE never runs it unasked."""


class OracleOutOfMemoryError(OracleError):
    """The device ran out of memory even on a single pair (larger groups are split and retried)."""


class ENGFormatError(EneError, ValueError):
    """Text that is not a valid Evidence Necessity Graph."""


class ENGVersionError(ENGFormatError):
    """An ENG written by a newer, incompatible ENE (its schema major version is higher)."""


class EngineOverloadedError(EneError, RuntimeError):
    """The shared engine's queue is full and its overflow policy is ``"reject"``."""


class EngineClosedError(EneError, RuntimeError):
    """The engine was closed; create a new one (or call ``default_engine()`` again)."""


class IncompleteRequestError(EneError, RuntimeError):
    """The request ended before its model finished answering (e.g. a stream closed early)."""


class StreamClosedError(EneError, RuntimeError):
    """Text was fed to a claim stream that was closed, discarded or freed (idle longer than
    the engine's ``stream_ttl_s``, or pushed out by ``max_streams`` newer streams): open a new
    one with ``engine.stream(...)``."""


class ServiceError(EneError, RuntimeError):
    """The ENE service (``ene serve``) answered with an error, or not at all."""


class ServiceUnavailableError(ServiceError, ConnectionError):
    """The service could not be reached (or said it is unavailable), retries included:
    start it with ``ene serve``, or check the URL given to ``RemoteEngine``."""


class ServiceTimeoutError(ServiceError, TimeoutError):
    """The service did not answer within the client's ``timeout`` (retries included)."""


class ServiceAuthError(ServiceError, PermissionError):
    """The service refused the bearer token: pass ``token=`` (or set ``ENE_SERVE_TOKEN``)."""


class LimitExceededError(InvalidInputError):
    """A request over one of the service's limits; ``limit`` names it (e.g. ``max_contexts``)."""

    def __init__(self, message: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.limit = limit
