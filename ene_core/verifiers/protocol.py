"""The verifier protocol: what the engine needs from a verifier, and the scores it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["Scores", "SupportOracle", "Verdict"]


Verdict = Literal["supported", "contradicted", "unsupported"]


@dataclass(frozen=True)
class Scores:
    """Probabilities for one pair; ``neutral = 1 - entail - contra``."""

    entail: float
    contra: float
    truncated: bool = False


@runtime_checkable
class SupportOracle(Protocol):
    """What the engine needs from a verifier. Implementations must be thread-safe."""

    name: str
    revision: str | None
    default_threshold: float | None

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        """Probabilities for each ``(premise, hypothesis)``, in order, independent of batching."""
        ...

    def count_tokens(self, text: str) -> int: ...
