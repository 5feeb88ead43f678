"""Verifiers: what scores a (premise, claim) pair, and the rule that turns scores into a verdict.

A verifier is any object with the :class:`SupportOracle` protocol; :class:`NLIOracle` runs a
Hugging Face NLI or grounding cross-encoder (the embedded ``ene-nli-mini`` by default),
:class:`KeywordOracle` is a transparent one for tests; :class:`LLMJudge` asks any
OpenAI-compatible chat-completions server, :class:`Cascade` asks a second verifier only where
the first is unsure; :class:`VerifierProfile` holds thresholds calibrated by ``ene calibrate``.
:func:`decide` is the verdict rule.
"""

from .cascade import Cascade
from .keyword import KeywordOracle
from .llm_judge import KEY_ENV, PROMPT_VERSION, PROMPT_VERSION_3WAY, LLMJudge, judge_messages
from .nli import DEFAULT_MODEL_DIR, NLIOracle, label_indices
from .profile import PROFILE_VERSION, VerifierProfile, choose_thresholds, confusion, split_ids
from .protocol import Read, Scores, SupportOracle, Verdict
from .verdict import blend, decide

__all__ = [
    "DEFAULT_MODEL_DIR",
    "KEY_ENV",
    "PROFILE_VERSION",
    "PROMPT_VERSION",
    "PROMPT_VERSION_3WAY",
    "Cascade",
    "KeywordOracle",
    "LLMJudge",
    "NLIOracle",
    "Read",
    "Scores",
    "SupportOracle",
    "Verdict",
    "VerifierProfile",
    "blend",
    "choose_thresholds",
    "confusion",
    "decide",
    "judge_messages",
    "label_indices",
    "split_ids",
]
