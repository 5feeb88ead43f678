"""``Cascade``: a cheap verifier first, a stronger one only where the first is unsure.

``first`` scores every pair; a pair whose entailment lies within ``band`` of the threshold, or
whose contradiction lies within ``band`` of the contradiction threshold, goes to ``then``, whose
scores replace the first's. A pair ``first`` is sure of keeps ``first``'s scores, so its verdict
never changes. Each pair's scores name the verifier that gave them (``Scores.verifier``); the
ENG records it per claim (``Claim.decided_by``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

from ..errors import InvalidInputError, OracleError
from .protocol import Scores, SupportOracle, declared_rules

__all__ = ["Cascade"]


class Cascade:
    """``first`` for every pair, ``then`` for the pairs within ``band`` of a threshold.

    >>> cascade = Cascade(NLIOracle(), LLMJudge("qwen2.5-7b-instruct"), band=0.15)
    >>> engine = NecessityEngine(oracle=cascade)

    ``threshold`` / ``contradiction_threshold`` (default: ``first``'s) are the thresholds the
    band is around; the engine uses them too unless it is given others. ``escalated`` and
    ``scored`` count pairs (the share escalated is their ratio).
    """

    def __init__(
        self,
        first: SupportOracle,
        then: SupportOracle,
        *,
        band: float = 0.1,
        threshold: float | None = None,
        contradiction_threshold: float | None = None,
    ) -> None:
        if not 0.0 <= band <= 1.0:
            raise InvalidInputError(f"band must be in [0, 1], got {band}")
        self.first = first
        self.then = then
        self.band = float(band)
        tau = threshold if threshold is not None else first.default_threshold
        self.default_threshold: float | None = 0.5 if tau is None else float(tau)
        tau_c = contradiction_threshold
        if tau_c is None and threshold is None:
            tau_c = getattr(first, "default_contradiction_threshold", None)
        self.default_contradiction_threshold = self.default_threshold if tau_c is None else tau_c
        self.name = f"cascade({first.name} -> {then.name}, band={self.band:g})"
        self.revision: str | None = f"{first.revision or '-'} -> {then.revision or '-'}"
        # the rules of the verifier that scores every pair (those it was tuned with)
        self.rules = declared_rules(first)
        self.scored = 0
        self.escalated = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Cascade({self.first!r}, {self.then!r}, band={self.band:g})"

    def count_tokens(self, text: str) -> int:
        return self.first.count_tokens(text)

    def unsure(self, scores: Scores) -> bool:
        """Whether ``first``'s scores lie within the band of a threshold (go to ``then``)."""
        near = abs(scores.entail - (self.default_threshold or 0.5)) <= self.band
        tau_c = float(self.default_contradiction_threshold or 0.5)
        return near or abs(scores.contra - tau_c) <= self.band

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        many = getattr(self.first, "count_tokens_many", None)
        return list(many(texts)) if many is not None else [self.count_tokens(t) for t in texts]

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        return self.score_parts([((premise,), claim) for premise, claim in pairs])

    def score_parts(self, pairs: Sequence[tuple[Sequence[str], str]]) -> list[Scores]:
        """Like :meth:`score`, each premise as its pieces (passed on to a verifier that takes
        them, joined for one that does not)."""
        firsts = _scored(self.first, pairs)
        out = [replace(s, verifier=self.first.name) for s in firsts]
        unsure = [n for n, s in enumerate(firsts) if self.unsure(s)]
        if unsure:
            thens = _scored(self.then, [pairs[n] for n in unsure])
            for n, s in zip(unsure, thens, strict=True):
                out[n] = replace(
                    s,
                    truncated=s.truncated or firsts[n].truncated,
                    tokens=s.tokens + firsts[n].tokens,
                    verifier=self.then.name,
                )
        with self._lock:
            self.scored += len(pairs)
            self.escalated += len(unsure)
        return out


def _scored(oracle: SupportOracle, pairs: Sequence[tuple[Sequence[str], str]]) -> list[Scores]:
    parts = getattr(oracle, "score_parts", None)
    if parts is not None:
        scores = list(parts(pairs))
    else:
        scores = list(oracle.score([("".join(premise), claim) for premise, claim in pairs]))
    if len(scores) != len(pairs):
        raise OracleError(f"{oracle.name} returned {len(scores)} scores for {len(pairs)} pairs")
    return scores
