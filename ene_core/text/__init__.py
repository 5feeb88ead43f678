"""The text ENE reads: answers split into claims, short answers read with their question, the
answer's citation markers, contexts and their ids, odd text made safe, and words as every module
counts them. No model and no engine here."""

from .citations import Citations, answer_scores
from .claims import Segment, split_claims
from .contexts import Context, to_contexts
from .normalise import Normaliser, clean_text
from .sentences import split_sentences
from .short_answers import answer_hypothesis, question_to_claim
from .words import TOKEN, content_words, word_share

__all__ = [
    "TOKEN",
    "Citations",
    "Context",
    "Normaliser",
    "Segment",
    "answer_hypothesis",
    "answer_scores",
    "clean_text",
    "content_words",
    "question_to_claim",
    "split_claims",
    "split_sentences",
    "to_contexts",
    "word_share",
]
