"""The engine flags shared by ``ene eval``, ``ene evaluate``, ``ene serve`` and the Ray backend.

:func:`engine_options` reads them from the parsed command line into a plain dict (it crosses
process boundaries: Ray actors, Serve replicas), and :func:`build_engine` builds the engine they
ask for: a :class:`~ene_core.NecessityEngine` in this process, or with ``--remote URL`` a
:class:`~ene_core.service.remote.RemoteEngine` on an ``ene serve`` service.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import EneError

if TYPE_CHECKING:
    from ..engine.necessity import Engine


def build_engine(args: argparse.Namespace) -> Engine:
    """The engine the command line asked for (``--oracle keyword`` needs no model; ``--remote
    URL`` is an ``ene serve`` service, whose own verifier is used)."""
    if getattr(args, "remote", None):
        from .remote import RemoteEngine

        chosen = [
            "--" + name.replace("_", "-")
            for name in VERIFIER_OPTIONS
            if getattr(args, name, None) is not None
        ]
        if chosen:
            raise EneError(
                f"with --remote the service's verifier decides: pass {', '.join(chosen)} to "
                "`ene serve` instead, or drop --remote"
            )
        return RemoteEngine(args.remote, timeout=args.remote_timeout)
    from ..engine.necessity import NecessityEngine

    citation_base = getattr(args, "citation_base", None)
    base = 1 if citation_base is None else citation_base
    contra = getattr(args, "contradiction_threshold", None)
    if args.oracle == "keyword":
        from ..verifiers.keyword import KeywordOracle

        return NecessityEngine(
            KeywordOracle(), args.threshold, contradiction_threshold=contra, citation_base=base
        )
    from ..verifiers.nli import NLIOracle

    oracle = NLIOracle(args.model, device=args.device, batch_size=args.batch_size)
    return NecessityEngine(
        oracle, args.threshold, contradiction_threshold=contra, citation_base=base
    )


ENGINE_OPTIONS = (
    "oracle",
    "model",
    "threshold",
    "contradiction_threshold",
    "batch_size",
    "device",
    "citation_base",
)
# the flags that choose the verdicts: an ``ene serve`` service's own, so refused with --remote
VERIFIER_OPTIONS = ("model", "threshold", "contradiction_threshold")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine flags as a plain dict: ``build_engine(argparse.Namespace(**options))``."""
    return {name: getattr(args, name) for name in ENGINE_OPTIONS}
