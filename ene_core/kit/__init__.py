"""The adapter kit: what every framework adapter shares.

:mod:`.runs` decides, from a framework's events, the answer, the contexts the answering model saw
and the question; :mod:`.results` evaluates off the request path and hands results on;
:mod:`.pruning` keeps what the answer used; :mod:`.answer_streams` and :mod:`.guard` act on
verdicts while an answer streams. Framework-free: the adapters in ``ene_integrations`` translate.
"""

from .guard import ClaimGuard
from .pruning import DEFAULT_KEEP, KeepReason, PruneResult, SafeMargins, prune
from .results import ExpiringDict, NecessityDispatcher, NecessityResult
from .runs import Message, RunDecision, RunRecorder, dispatch_decision

__all__ = [
    "DEFAULT_KEEP",
    "ClaimGuard",
    "ExpiringDict",
    "KeepReason",
    "Message",
    "NecessityDispatcher",
    "NecessityResult",
    "PruneResult",
    "RunDecision",
    "RunRecorder",
    "SafeMargins",
    "dispatch_decision",
    "prune",
]
