"""Citation checking: do the answer's ``[n]`` markers point at chunks that support the claim?

The definitions are ALCE's (Gao et al., 2023). A claim's citation recall is 1 iff its cited
chunks together entail it. A citation is precise unless it alone does not entail the claim
*and* the claim's other citations still entail it without it; every citation of a claim whose
cited set does not entail it is imprecise. The engine runs the checks (cited set, each cited
chunk alone, the cited set without each) in its batched rounds; this module maps markers to
chunks and turns verdicts into the per-claim and per-answer numbers.

A marker that names no chunk (``[7]`` with three chunks) cites nothing: it never helps the
claim, so it is always imprecise, and the claim is judged on its other markers. (ALCE instead
zeroes the whole sentence and leaves its citations out of the precision count.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import InvalidInputError
from .claims import Segment


def check_base(base: int) -> int:
    """``citation_base``: 1 when ``[1]`` is the first chunk (the default), 0 when ``[0]`` is."""
    if isinstance(base, bool) or base not in (0, 1):
        raise InvalidInputError(f"citation_base must be 0 or 1, got {base!r}")
    return int(base)


@dataclass(frozen=True)
class Citations:
    """One claim's markers, as written, and the chunk each names (``None``: no such chunk)."""

    markers: tuple[int, ...]
    chunks: tuple[int | None, ...]

    @property
    def cited(self) -> list[int]:
        """The distinct chunks the claim cites, sorted."""
        return sorted({c for c in self.chunks if c is not None})

    def unneeded(
        self, supported: bool, alone: Mapping[int, bool], rest: Mapping[int, bool]
    ) -> list[int]:
        """The imprecise markers, given whether the cited set entails the claim and, for a
        set of two or more chunks, whether each chunk ``alone`` and the set without it
        (``rest``) entail it."""
        if not supported:
            return list(self.markers)
        several = len(self.cited) > 1
        out = []
        for marker, chunk in zip(self.markers, self.chunks, strict=True):
            if chunk is None or (several and not alone[chunk] and rest[chunk]):
                out.append(marker)
        return out


def resolve(markers: Sequence[int], base: int, position: Mapping[int, int]) -> Citations:
    """Map markers to chunks: marker ``m`` names the user's chunk ``m - base``, found at
    ``position[m - base]`` (the engine passes its canonical positions)."""
    return Citations(tuple(markers), tuple(position.get(m - base) for m in markers))


def out_of_range(segments: Sequence[Segment], base: int, n: int) -> list[str]:
    """One warning per distinct marker that names no chunk."""
    bad = sorted({m for seg in segments for m in seg.cited if not 0 <= m - base < n})
    return [
        f"citation [{m}] names no chunk: there are {n} chunks and [{base}] is the first; "
        "it counts as not supporting"
        for m in bad
    ]


def answer_scores(
    checkable: Sequence[tuple[bool, int, int]], has_markers: bool
) -> tuple[float | None, float | None]:
    """ALCE recall and precision of one answer from ``(citation supported, citations,
    imprecise citations)`` per checkable claim; ``None`` for an answer without markers.

    As in ALCE, an answer with markers but no checkable claim (or no citation on one) scores 0.
    """
    if not has_markers:
        return None, None
    supported = sum(s for s, _, _ in checkable)
    total = sum(t for _, t, _ in checkable)
    precise = total - sum(u for _, _, u in checkable)
    recall = supported / len(checkable) if checkable else 0.0
    return recall, (precise / total if total else 0.0)
