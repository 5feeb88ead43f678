"""Runtime pruning: keep the contexts an answer used, drop the rest.

Fail-safe: without a graph (evaluation failed) or when no claim is supported, nothing is
dropped, and the reason says so; pruning never hides evidence on a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from .errors import InvalidInputError
from .graph import EvidenceNecessityGraph

T = TypeVar("T")
KeepPolicy = Literal["minimal", "necessary"]


@dataclass(frozen=True)
class PruneResult(Generic[T]):
    kept: list[T]
    dropped: list[T]
    kept_indices: list[int]
    dropped_indices: list[int]
    tokens_saved: int
    reason: str


def prune(
    items: Sequence[T], eng: EvidenceNecessityGraph | None, *, keep: KeepPolicy = "minimal"
) -> PruneResult[T]:
    """Split ``items`` (aligned with ``eng.contexts``) into kept and dropped.

    ``keep="minimal"`` keeps the minimal sufficient set (every supported claim stays
    supported); ``keep="necessary"`` keeps only contexts some claim needs on its own.
    """
    everything = list(range(len(items)))
    if eng is None:
        return PruneResult(list(items), [], everything, [], 0, "no graph: nothing pruned")
    if len(items) != len(eng.contexts):
        raise InvalidInputError(
            f"{len(items)} items but the graph has {len(eng.contexts)} contexts: prune the "
            "same list that was evaluated"
        )
    if eng.counts.supported == 0:
        return PruneResult(list(items), [], everything, [], 0, "no supported claim: nothing pruned")
    if keep == "minimal":
        chosen = set(eng.minimal_sufficient_set)
    elif keep == "necessary":
        chosen = {i for c in eng.claims for i in c.necessary}
    else:
        raise InvalidInputError(f"keep must be 'minimal' or 'necessary', got {keep!r}")
    kept = [i for i in everything if i in chosen]
    dropped = [i for i in everything if i not in chosen]
    return PruneResult(
        [items[i] for i in kept],
        [items[i] for i in dropped],
        kept,
        dropped,
        sum(eng.contexts[i].tokens for i in dropped),
        f"kept the {keep} set",
    )
