"""ENE: which retrieved chunks did each claim of a RAG answer actually need?

``import ene_core`` needs only pydantic; the NLI oracle imports torch and transformers lazily,
``RemoteEngine`` httpx, and ``ene serve`` (:mod:`ene_core.service.serve`) Ray Serve.
"""

from typing import TYPE_CHECKING, Any

from .claims import Segment, split_claims
from .contexts import Context
from .engine import Engine, NecessityEngine, Request, default_engine, set_default_engine
from .errors import (
    EneError,
    ENGFormatError,
    EngineClosedError,
    EngineOverloadedError,
    ENGVersionError,
    IncompleteRequestError,
    InvalidInputError,
    LabelMappingError,
    LimitExceededError,
    ModelNotFoundError,
    OracleError,
    OracleOutOfMemoryError,
    PruneMismatchError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
    ServiceUnavailableError,
    StreamClosedError,
)
from .graph import SCHEMA_VERSION, Claim, ContextNode, EvidenceNecessityGraph
from .guard import ClaimGuard
from .oracle import NLIOracle, Scores, SupportOracle, decide
from .premise import PremisePacker
from .pruning import DEFAULT_KEEP, KeepReason, PruneResult, SafeMargins, prune
from .results import ExpiringDict, NecessityDispatcher, NecessityResult
from .runs import Message, RunDecision, RunRecorder, dispatch_decision
from .streaming import ClaimStream, StreamedClaim

if TYPE_CHECKING:
    from .service.remote import RemoteEngine

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "RemoteEngine":  # lazily: only its users need httpx
        from .service.remote import RemoteEngine

        return RemoteEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_KEEP",
    "SCHEMA_VERSION",
    "Claim",
    "ClaimGuard",
    "ClaimStream",
    "Context",
    "ContextNode",
    "ENGFormatError",
    "ENGVersionError",
    "EneError",
    "Engine",
    "EngineClosedError",
    "EngineOverloadedError",
    "EvidenceNecessityGraph",
    "ExpiringDict",
    "IncompleteRequestError",
    "InvalidInputError",
    "KeepReason",
    "LabelMappingError",
    "LimitExceededError",
    "Message",
    "ModelNotFoundError",
    "NLIOracle",
    "NecessityDispatcher",
    "NecessityEngine",
    "NecessityResult",
    "OracleError",
    "OracleOutOfMemoryError",
    "PremisePacker",
    "PruneMismatchError",
    "PruneResult",
    "RemoteEngine",
    "Request",
    "RunDecision",
    "RunRecorder",
    "SafeMargins",
    "Scores",
    "Segment",
    "ServiceAuthError",
    "ServiceError",
    "ServiceTimeoutError",
    "ServiceUnavailableError",
    "StreamClosedError",
    "StreamedClaim",
    "SupportOracle",
    "decide",
    "default_engine",
    "dispatch_decision",
    "prune",
    "set_default_engine",
    "split_claims",
]
