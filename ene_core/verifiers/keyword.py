"""A transparent, deterministic verifier for tests, examples and CI without a model.

:class:`KeywordOracle` says a premise entails a claim iff it contains every content word of the
claim, and contradicts it iff only the claim's numbers are missing while the premise states
other numbers. It is not a verifier: use it to test plumbing, never to judge answers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..text.words import content_words
from .protocol import RULES, Scores

__all__ = ["KeywordOracle"]


class KeywordOracle:
    name = "keyword-oracle"
    revision: str | None = "1"
    default_threshold: float | None = 0.5
    #: every engine rule applies: the rules' tests run on it
    rules: frozenset[str] = frozenset(RULES)

    def __init__(self) -> None:
        self.pairs_scored = 0
        self.calls = 0
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        with self._lock:
            self.calls += 1
            self.pairs_scored += len(pairs)
        return [self._one(premise, claim) for premise, claim in pairs]

    @staticmethod
    def _one(premise: str, claim: str) -> Scores:
        have = set(content_words(premise))
        need = set(content_words(claim))
        if not need:
            return Scores(0.0, 0.0)
        missing = need - have
        if not missing:
            return Scores(0.95, 0.02)
        numbers_missing = all(w[0].isdigit() for w in missing)
        if numbers_missing and any(w[0].isdigit() for w in have):
            return Scores(0.03, 0.9)
        return Scores(round(0.4 * (1 - len(missing) / len(need)), 6), 0.02)
