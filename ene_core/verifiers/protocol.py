"""The verifier protocol: what the engine needs from a verifier, and the scores it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["Read", "Scores", "SupportOracle", "Verdict"]


Verdict = Literal["supported", "contradicted", "unsupported"]


Read = Literal["logprobs", "text", "unreadable"]


@dataclass(frozen=True)
class Scores:
    """Probabilities for one pair; ``neutral = 1 - entail - contra``.

    The optional fields say how they were obtained (none of them changes a verdict):
    ``tokens``, what an API verifier (an LLM judge) spent on the pair now (0 for local models
    and cache hits); ``read``, how an LLM judge read its answer (its first token's log
    probabilities, or its text where the server gave none); ``verifier``, which verifier of a
    :class:`~ene_core.verifiers.cascade.Cascade` scored the pair.
    """

    entail: float
    contra: float
    truncated: bool = False
    tokens: int = 0
    read: Read | None = None
    verifier: str | None = None


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
