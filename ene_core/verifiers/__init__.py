"""Verifiers: what scores a (premise, claim) pair, and the rule that turns scores into a verdict.

A verifier is any object with the :class:`SupportOracle` protocol; :class:`NLIOracle` runs a
Hugging Face NLI or grounding cross-encoder (the embedded ``ene-nli-mini`` by default),
:class:`KeywordOracle` is a transparent one for tests; :class:`Seq2SeqOracle` asks a
sequence-to-sequence model yes or no (Flan-T5 style), :class:`CustomCodeOracle` runs a model's
own ``predict`` (HHEM-style, with ``trust_remote_code=True`` only); :class:`LLMJudge` asks any
OpenAI-compatible chat-completions server, :class:`Cascade` asks a second verifier only where
the first is unsure; :class:`VerifierProfile` holds thresholds calibrated by ``ene calibrate``.
:func:`decide` is the verdict rule.
"""

from .cascade import Cascade
from .custom import CustomCodeOracle
from .keyword import KeywordOracle
from .llm_judge import KEY_ENV, PROMPT_VERSION, PROMPT_VERSION_3WAY, LLMJudge, judge_messages
from .nli import DEFAULT_MODEL_DIR, NLIOracle, label_indices
from .profile import PROFILE_VERSION, VerifierProfile, choose_thresholds, confusion, split_ids
from .protocol import RULES, Read, Scores, SupportOracle, Verdict, declared_rules
from .remote_code import check_remote_code
from .seq2seq import Seq2SeqOracle
from .verdict import blend, decide

__all__ = [
    "DEFAULT_MODEL_DIR",
    "KEY_ENV",
    "PROFILE_VERSION",
    "PROMPT_VERSION",
    "PROMPT_VERSION_3WAY",
    "RULES",
    "Cascade",
    "CustomCodeOracle",
    "KeywordOracle",
    "LLMJudge",
    "NLIOracle",
    "Read",
    "Scores",
    "Seq2SeqOracle",
    "SupportOracle",
    "Verdict",
    "VerifierProfile",
    "blend",
    "check_remote_code",
    "choose_thresholds",
    "confusion",
    "decide",
    "declared_rules",
    "judge_messages",
    "label_indices",
    "split_ids",
]
