"""Needed / not-needed labels for the chunk filter, read from logged ENGs.

A chunk is **needed** when an answer's supported claim used it: it is in the request's minimal
sufficient set, necessary for a supported claim, or in a supported claim's supporting set (a
context that supports the claim on its own: ``supported_alone_by``, a ``support_row`` entry or a
``p_entail_alone`` entry at or above the verifier's threshold), not only when leave-one-out
marks it necessary. A chunk that contradicts a claim on its own is needed too (it holds what the
question asks about), at half weight. Every other chunk (no claim used it) is **not needed**.

Requests are weighted by the share of their checkable claims that are supported (an answer with
unsupported or contradicted claims says less about what its question needed), at least
``min_weight``; a request with no supported claim, no question or a single chunk teaches nothing
and is skipped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import ENGFormatError
from ..graph import EvidenceNecessityGraph
from .training import Pair


def needed_contexts(eng: EvidenceNecessityGraph) -> set[int]:
    """Indices of the contexts a supported claim of ``eng`` used (see the module docstring)."""
    needed = set(eng.minimal_sufficient_set)
    threshold = eng.verifier.threshold
    for claim in eng.claims:
        if claim.status != "supported":
            continue
        needed.update(claim.necessary)
        needed.update(claim.supported_alone_by)
        if claim.support_row:
            needed.update(j for j, p in enumerate(claim.support_row) if p >= threshold)
        if claim.premise_contexts and claim.p_entail_alone:
            needed.update(
                j
                for j, p in zip(claim.premise_contexts, claim.p_entail_alone, strict=False)
                if p >= threshold
            )
    return {j for j in needed if 0 <= j < len(eng.contexts)}


def contradicting_contexts(eng: EvidenceNecessityGraph) -> set[int]:
    """Indices of the contexts that contradict a claim on their own."""
    return {
        j
        for claim in eng.claims
        if claim.status == "contradicted"
        for j in claim.contradicted_by
        if 0 <= j < len(eng.contexts)
    }


def request_weight(eng: EvidenceNecessityGraph, min_weight: float = 0.25) -> float:
    """The share of checkable claims that are supported, at least ``min_weight`` (0 when none
    is supported)."""
    checkable = [c for c in eng.claims if c.checkable and c.status is not None]
    supported = sum(1 for c in checkable if c.status == "supported")
    if not supported:
        return 0.0
    return max(min_weight, supported / len(checkable))


def pairs_from_eng(
    eng: EvidenceNecessityGraph, *, group: str | None = None, min_weight: float = 0.25
) -> list[Pair]:
    """The filter's training pairs of one ENG (empty when it teaches nothing)."""
    question = (eng.question or "").strip()
    weight = request_weight(eng, min_weight)
    if not question or weight <= 0 or len(eng.contexts) < 2:
        return []
    needed = needed_contexts(eng)
    contradicting = contradicting_contexts(eng) - needed
    name = group or eng.id or f"{question}\n{eng.answer}"
    pairs = []
    for context in eng.contexts:
        if context.index in needed or context.index in contradicting:
            label, w = 1, weight * (0.5 if context.index in contradicting else 1.0)
        else:
            label, w = 0, weight
        pairs.append(Pair(question, context.text, label, w, name, "eng"))
    return pairs


def read_engs(path: str | Path) -> Iterator[EvidenceNecessityGraph | None]:
    """ENGs of a JSONL file (``ene eval`` output): one per line, ``None`` for a line that is
    not an ENG (an error record, a torn line)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                yield EvidenceNecessityGraph.from_json(line)
            except (ENGFormatError, ValueError, json.JSONDecodeError):
                yield None


def pairs_from_engs(
    engs: Iterable[EvidenceNecessityGraph | None], *, min_weight: float = 0.25
) -> tuple[list[Pair], Counter[str]]:
    """Pairs of many ENGs and a count of what was used and skipped, and why."""
    pairs: list[Pair] = []
    counts: Counter[str] = Counter()
    for number, eng in enumerate(engs):
        if eng is None:
            counts["unreadable"] += 1
            continue
        made = pairs_from_eng(eng, group=eng.id or f"line-{number}", min_weight=min_weight)
        if not made:
            counts["skipped (no question, no supported claim or one chunk)"] += 1
            continue
        counts["used"] += 1
        pairs.extend(made)
    return pairs, counts
