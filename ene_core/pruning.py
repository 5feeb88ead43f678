"""Runtime pruning: keep the contexts an answer used, drop the rest.

Fail-safe: without a graph (evaluation failed) or when no claim is supported, nothing is
dropped, and the reason says so; pruning never hides evidence on a guess. A graph of other
chunks (another request's) is refused with a typed error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args

from .contexts import to_context
from .errors import InvalidInputError
from .graph import EvidenceNecessityGraph
from .normalise import clean_text

T = TypeVar("T")
KeepPolicy = Literal["minimal", "necessary", "cited"]
KEEP_POLICIES: tuple[str, ...] = get_args(KeepPolicy)


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
    supported); ``keep="necessary"`` keeps only contexts some claim needs on its own;
    ``keep="cited"`` keeps the answer's source list minus its padding: the chunks a claim cites
    where the citation is precise or the claim needs the chunk (an answer without citations,
    or with none needed, keeps everything).
    """
    if keep not in KEEP_POLICIES:
        raise InvalidInputError(
            f"keep must be one of {', '.join(map(repr, KEEP_POLICIES))}, got {keep!r}"
        )
    everything = list(range(len(items)))
    if eng is None:
        return PruneResult(list(items), [], everything, [], 0, "no graph: nothing pruned")
    if len(items) != len(eng.contexts):
        raise InvalidInputError(
            f"{len(items)} items but the graph has {len(eng.contexts)} contexts: prune the "
            "same list that was evaluated"
        )
    stranger = _first_stranger(items, eng)
    if stranger is not None:
        raise InvalidInputError(
            f"item {stranger} is not the chunk the graph evaluated as context {stranger} (a graph "
            "of another request, or a changed list): prune the list that was evaluated"
        )
    if eng.counts.supported == 0:
        return PruneResult(list(items), [], everything, [], 0, "no supported claim: nothing pruned")
    if keep == "minimal":
        chosen = set(eng.minimal_sufficient_set)
    elif keep == "necessary":
        chosen = {i for c in eng.claims for i in c.necessary}
    else:  # "cited"
        if eng.citation_recall is None or eng.citation_base is None:
            return PruneResult(
                list(items), [], everything, [], 0, "the answer cites nothing: nothing pruned"
            )
        chosen = needed_citations(eng)
        if not chosen:
            return PruneResult(
                list(items), [], everything, [], 0, "no citation is needed: nothing pruned"
            )
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


def _first_stranger(items: Sequence[Any], eng: EvidenceNecessityGraph) -> int | None:
    """The first item whose id and text both differ from its context in ``eng``; items that
    are not chunks (e.g. positions) are not compared."""
    for i, item in enumerate(items):
        try:
            context = to_context(item, i)
        except Exception:  # not a chunk ENE can read: only the count is checked
            continue
        node = eng.contexts[i]
        if clean_text(context.id)[0] != node.id and clean_text(context.text)[0] != node.text:
            return i
    return None


def needed_citations(eng: EvidenceNecessityGraph) -> set[int]:
    """Indices of the chunks some checkable claim cites with a needed citation: a precise one
    (ALCE), or one naming a chunk the claim needs."""
    base = eng.citation_base or 0
    out = set()
    for claim in eng.claims:
        if not claim.checkable:
            continue
        padding = set(claim.citations_unneeded)
        for marker in claim.cited:
            i = marker - base
            if 0 <= i < len(eng.contexts) and (marker not in padding or i in claim.necessary):
                out.add(i)
    return out
