"""The minimal sufficient set: the union of the contexts some claim needs, grown greedily until
every supported claim holds on it, then pruned of the contexts it added."""

from __future__ import annotations

from collections.abc import Collection, Generator
from typing import TYPE_CHECKING

from ..text.claims import Segment
from ..verifiers.protocol import Scores, Verdict
from .premise import EvidenceIndex
from .scoring import Check, tagged


class MinimalSet:
    """:meth:`_minimal_set`, the last round of the plan: a part of
    :class:`~ene_core.engine.necessity.NecessityEngine`."""

    if TYPE_CHECKING:  # the verdict rule: ene_core.engine.necessity.NecessityEngine

        def _judge(self, check: Check, scores: Scores) -> Verdict: ...

    def _minimal_set(
        self,
        index: EvidenceIndex,
        segments: list[Segment],
        supported: list[int],
        necessary: dict[int, list[int]],
        single: dict[int, list[Scores]],
        n: int,
        held: Collection[int] = (),
    ) -> Generator[list[Check], list[Scores], list[int]]:
        """Union of necessary contexts (and ``held``: those claims supported alone are read
        from), grown greedily until every supported claim holds, then pruned of the contexts
        it added, last added first.

        A claim that fails on the kept set gets the candidate with the highest single-context
        entailment added; candidates are the contexts feeding its full premise (the others
        ranked lower for it), all unkept contexts if none is left."""
        kept = sorted({i for k in supported for i in necessary[k]}.union(held))
        added: list[int] = []

        def failing(keep: list[int]) -> Generator[list[Check], list[Scores], list[int]]:
            claims = [segments[k].verifier_text for k in supported]
            checks = tagged(
                ("minimal set", [(index.premise(claim, set(keep)), claim) for claim in claims])
            )
            scores = yield checks
            return [
                k
                for k, c, s in zip(supported, checks, scores, strict=True)
                if self._judge(c, s) != "supported"
            ]

        while supported and len(kept) < n:
            broken = yield from failing(kept)
            if not broken:
                break
            k = broken[0]
            text = segments[k].verifier_text
            # Candidates: chunks that feed this claim's full premise (others ranked lower).
            pool = sorted(index.premise(text).contexts - set(kept)) or [
                i for i in range(n) if i not in kept
            ]
            if k in single:
                alone = {i: single[k][i] for i in pool}
            else:
                scores = yield tagged(
                    ("minimal set: chunk alone", [(index.premise(text, {i}), text) for i in pool])
                )
                alone = dict(zip(pool, scores, strict=True))
            best = max(pool, key=lambda i: (alone[i].entail, -i))
            kept.append(best)
            added.append(best)
        for i in reversed(added):
            trial = [j for j in kept if j != i]
            if not (yield from failing(trial)):
                kept = trial
        return sorted(kept)
