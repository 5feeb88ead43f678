"""The verdict rule: a verifier's probabilities to supported / contradicted / unsupported."""

from __future__ import annotations

from .protocol import Read, Scores, Verdict

__all__ = ["blend", "decide"]


def decide(
    scores: Scores, threshold: float, contradiction_threshold: float | None = None
) -> Verdict:
    """Fail-closed decision rule: unsure means unsupported.

    Supported iff ``p_entail >= threshold`` and ``p_entail > p_contra``; contradicted iff
    ``p_contra >= contradiction_threshold`` (default: ``threshold``) and ``p_contra > p_entail``.
    """
    contra_tau = threshold if contradiction_threshold is None else contradiction_threshold
    if scores.entail >= threshold and scores.entail > scores.contra:
        return "supported"
    if scores.contra >= contra_tau and scores.contra > scores.entail:
        return "contradicted"
    return "unsupported"


def blend(packed: Scores, focused: Scores) -> Scores:
    """The scores of a premise read twice, whole and as its leading sentences alone
    (:attr:`~ene_core.engine.premise.Premise.focus`): the mean entailment, and the smaller
    contradiction (a contradiction must hold in both readings)."""
    return Scores(
        (packed.entail + focused.entail) / 2,
        min(packed.contra, focused.contra),
        packed.truncated or focused.truncated,
        packed.tokens + focused.tokens,
        max(packed.read, focused.read, key=_READS.index),
        " + ".join(sorted({v for v in (packed.verifier, focused.verifier) if v})) or None,
    )


_READS: list[Read | None] = [None, "logprobs", "text", "unreadable"]  # the weaker reading wins
