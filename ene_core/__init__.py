"""ENE: which retrieved chunks did each claim of a RAG answer actually need?

``import ene_core`` needs only pydantic; the NLI oracle imports torch and transformers lazily.
"""

from .claims import Segment, split_claims
from .contexts import Context
from .engine import NecessityEngine, Request, default_engine, set_default_engine
from .errors import (
    EneError,
    ENGFormatError,
    EngineClosedError,
    EngineOverloadedError,
    ENGVersionError,
    IncompleteRequestError,
    InvalidInputError,
    LabelMappingError,
    ModelNotFoundError,
    OracleError,
    OracleOutOfMemoryError,
)
from .graph import SCHEMA_VERSION, Claim, ContextNode, EvidenceNecessityGraph
from .oracle import NLIOracle, Scores, SupportOracle, decide
from .premise import PremisePacker
from .pruning import PruneResult, prune
from .results import ExpiringDict, NecessityDispatcher, NecessityResult
from .runs import Message, RunDecision, RunRecorder, dispatch_decision

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "Claim",
    "Context",
    "ContextNode",
    "ENGFormatError",
    "ENGVersionError",
    "EneError",
    "EngineClosedError",
    "EngineOverloadedError",
    "EvidenceNecessityGraph",
    "ExpiringDict",
    "IncompleteRequestError",
    "InvalidInputError",
    "LabelMappingError",
    "Message",
    "ModelNotFoundError",
    "NLIOracle",
    "NecessityDispatcher",
    "NecessityEngine",
    "NecessityResult",
    "OracleError",
    "OracleOutOfMemoryError",
    "PremisePacker",
    "PruneResult",
    "Request",
    "RunDecision",
    "RunRecorder",
    "Scores",
    "Segment",
    "SupportOracle",
    "decide",
    "default_engine",
    "dispatch_decision",
    "prune",
    "set_default_engine",
    "split_claims",
]
