"""ENE: which retrieved chunks did each claim of a RAG answer actually need?

``import ene_core`` needs only pydantic; the NLI oracle imports torch and transformers lazily,
``RemoteEngine`` httpx, and ``ene serve`` (:mod:`ene_core.service.serve`) Ray Serve.
"""

from typing import TYPE_CHECKING, Any

from . import _moved
from .engine.necessity import Engine, NecessityEngine, Request, default_engine, set_default_engine
from .engine.premise import PremisePacker
from .engine.streaming import ClaimStream, StreamedClaim
from .errors import (
    EneError,
    ENGFormatError,
    EngineClosedError,
    EngineOverloadedError,
    ENGVersionError,
    IncompleteRequestError,
    InvalidInputError,
    JudgeError,
    LabelMappingError,
    LimitExceededError,
    ModelNotFoundError,
    OracleError,
    OracleOutOfMemoryError,
    ProfileError,
    PruneMismatchError,
    RemoteCodeError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
    ServiceUnavailableError,
    StreamClosedError,
)
from .filtering.model import ChunkFilter
from .graph import SCHEMA_VERSION, Claim, ContextNode, EvidenceNecessityGraph
from .kit.guard import ClaimGuard
from .kit.pruning import DEFAULT_KEEP, KeepReason, PruneResult, SafeMargins, prune
from .kit.results import ExpiringDict, NecessityDispatcher, NecessityResult
from .kit.runs import Message, RunDecision, RunRecorder, dispatch_decision
from .text.claims import Segment, split_claims
from .text.contexts import Context
from .verifiers.cascade import Cascade
from .verifiers.custom import CustomCodeOracle
from .verifiers.llm_judge import LLMJudge
from .verifiers.nli import NLIOracle
from .verifiers.profile import VerifierProfile
from .verifiers.protocol import Scores, SupportOracle
from .verifiers.seq2seq import Seq2SeqOracle
from .verifiers.verdict import decide

if TYPE_CHECKING:
    from .service.remote import RemoteEngine

__version__ = "0.1.0"


_moved.install()


def __getattr__(name: str) -> Any:
    if name == "RemoteEngine":  # lazily: only its users need httpx
        from .service.remote import RemoteEngine

        return RemoteEngine
    if (module := _moved.old_module(name)) is not None:  # ene_core.oracle and the other old paths
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_KEEP",
    "SCHEMA_VERSION",
    "Cascade",
    "ChunkFilter",
    "Claim",
    "ClaimGuard",
    "ClaimStream",
    "Context",
    "ContextNode",
    "CustomCodeOracle",
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
    "JudgeError",
    "KeepReason",
    "LLMJudge",
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
    "ProfileError",
    "PruneMismatchError",
    "PruneResult",
    "RemoteCodeError",
    "RemoteEngine",
    "Request",
    "RunDecision",
    "RunRecorder",
    "SafeMargins",
    "Scores",
    "Segment",
    "Seq2SeqOracle",
    "ServiceAuthError",
    "ServiceError",
    "ServiceTimeoutError",
    "ServiceUnavailableError",
    "StreamClosedError",
    "StreamedClaim",
    "SupportOracle",
    "VerifierProfile",
    "decide",
    "default_engine",
    "dispatch_decision",
    "prune",
    "set_default_engine",
    "split_claims",
]
