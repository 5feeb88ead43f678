"""The engine: an answer and its contexts in, an Evidence Necessity Graph out.

:mod:`.necessity` is the public surface (:class:`NecessityEngine`, the :class:`Engine` protocol,
the process's default engine); :mod:`.request` builds one evaluation, :mod:`.rounds` plans its
checks, :mod:`.premise` packs what the verifier reads, :mod:`.scoring` drives many plans through
one verifier batch per step, :mod:`.minimal_set` and :mod:`.assembly` build the ENG,
:mod:`.batcher` micro-batches concurrent callers and :mod:`.streaming` checks an answer while it
streams.
"""

from .necessity import (
    Check,
    Engine,
    NecessityEngine,
    Plan,
    Request,
    default_engine,
    set_default_engine,
)
from .premise import Premise, PremisePacker
from .streaming import ClaimStream, StreamedClaim

__all__ = [
    "Check",
    "ClaimStream",
    "Engine",
    "NecessityEngine",
    "Plan",
    "Premise",
    "PremisePacker",
    "Request",
    "StreamedClaim",
    "default_engine",
    "set_default_engine",
]
