"""The engine flags shared by ``ene eval``, ``ene evaluate``, ``ene serve`` and the Ray backend.

:func:`engine_options` reads them from the parsed command line into a plain dict (it crosses
process boundaries: Ray actors, Serve replicas), and :func:`build_engine` builds the engine they
ask for: a :class:`~ene_core.NecessityEngine` in this process, or with ``--remote URL`` a
:class:`~ene_core.service.remote.RemoteEngine` on an ``ene serve`` service.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine import Engine


def build_engine(args: argparse.Namespace) -> Engine:
    """The engine the command line asked for (``--oracle keyword`` needs no model; ``--remote
    URL`` is an ``ene serve`` service, whose own verifier is used)."""
    if getattr(args, "remote", None):
        from .remote import RemoteEngine

        return RemoteEngine(args.remote, timeout=args.remote_timeout)
    from ..engine import NecessityEngine

    citation_base = getattr(args, "citation_base", None)
    base = 1 if citation_base is None else citation_base
    if args.oracle == "keyword":
        from ..testing import KeywordOracle

        return NecessityEngine(KeywordOracle(), args.threshold, citation_base=base)
    from ..oracle import NLIOracle

    oracle = NLIOracle(args.model, device=args.device, batch_size=args.batch_size)
    return NecessityEngine(oracle, args.threshold, citation_base=base)


ENGINE_OPTIONS = ("oracle", "model", "threshold", "batch_size", "device", "citation_base")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine flags as a plain dict: ``build_engine(argparse.Namespace(**options))``."""
    return {name: getattr(args, name) for name in ENGINE_OPTIONS}
