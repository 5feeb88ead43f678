"""The verifier protocol: what the engine needs from a verifier, and the scores it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "EMBEDDED_MODEL",
    "EMBEDDED_RULES",
    "RULES",
    "Read",
    "Scores",
    "SupportOracle",
    "Verdict",
    "declared_rules",
]


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


#: The engine's deterministic rules around a verifier, each switched on or off by name
#: (``NecessityEngine(rules=...)``, ``--rules``): ``amounts`` (an amount the evidence states
#: nowhere is never supported; the evidence's own amount put in its place; an amount it computes
#: is never contradicted: :mod:`~ene_core.rules.grounding`), ``arithmetic`` (a comparison the
#: evidence's amounts settle), ``masking`` (an amount the evidence computes masked for the model),
#: ``bindings`` (a unique role, a value or a route the evidence gives to another; a sentence that
#: opens like the claim read alone), ``polarity`` (the claim with its negation or a word turned),
#: ``scope`` (an "every" the evidence narrows, or what it excepts) and ``culprits`` (a
#: contradiction needs a context about what the claim is about; a claim its contexts support alone
#: is supported). They were developed with the embedded model; it declares :data:`EMBEDDED_RULES`.
RULES: tuple[str, ...] = (
    "amounts",
    "arithmetic",
    "masking",
    "bindings",
    "polarity",
    "scope",
    "culprits",
)

#: the name of the embedded verifier (``NLIOracle()``), the one the rules were tuned with
EMBEDDED_MODEL = "ene-nli-mini"

#: The rules the embedded model declares: those that pay on the sealed test
#: (``benchmarks/rule_ablation.py``, v3.2: claim status with every rule 0.641; with one rule off
#: alone amounts 0.649, arithmetic 0.638, masking 0.621, bindings 0.626, polarity 0.641, scope
#: 0.641, culprits 0.619; a rule stays on only where switching it off lowers it). With these
#: four: sealed test 0.649, dev sets 0.687 (every rule: 0.710), SNLI through the engine 0.669.
EMBEDDED_RULES: frozenset[str] = frozenset({"arithmetic", "masking", "bindings", "culprits"})


def declared_rules(oracle: Any) -> frozenset[str]:
    """The rules a verifier declares (its ``rules`` attribute): :data:`EMBEDDED_RULES` for the
    embedded model, none for any other verifier that declares nothing."""
    declared = getattr(oracle, "rules", None)
    if declared is None:
        return EMBEDDED_RULES if getattr(oracle, "name", None) == EMBEDDED_MODEL else frozenset()
    return frozenset(declared)
