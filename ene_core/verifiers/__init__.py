"""Verifiers: what scores a (premise, claim) pair, and the rule that turns scores into a verdict.

A verifier is any object with the :class:`SupportOracle` protocol; :class:`NLIOracle` runs a
Hugging Face NLI or grounding cross-encoder (the embedded ``ene-nli-mini`` by default),
:class:`KeywordOracle` is a transparent one for tests. :func:`decide` is the verdict rule.
"""

from .keyword import KeywordOracle
from .nli import DEFAULT_MODEL_DIR, NLIOracle, label_indices
from .protocol import Scores, SupportOracle, Verdict
from .verdict import blend, decide

__all__ = [
    "DEFAULT_MODEL_DIR",
    "KeywordOracle",
    "NLIOracle",
    "Scores",
    "SupportOracle",
    "Verdict",
    "blend",
    "decide",
    "label_indices",
]
