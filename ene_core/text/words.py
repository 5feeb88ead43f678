"""Words as every module reads them: tokens, stop words, a light stemmer, content words.

Deterministic and offline; the premise packer, the rules and the keyword test verifier share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["TOKEN", "content_words", "word_share"]


#: a word or a number as written ("1,500", "3.45", "don't"): every module's tokens
TOKEN = re.compile(r"[^\W_]+(?:[.,'][^\W_]+)*")


_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
        "weren",
        "won",
        "according",
    ]
)


def content_words(text: str) -> list[str]:
    """Lower-cased content tokens with a light, deterministic suffix stemmer."""
    return [_stem(t) for t in TOKEN.findall(text.lower()) if t not in _STOPWORDS]


def word_share(claim: str, sentences: Iterable[str]) -> float:
    """The largest share of ``claim``'s content words that one of ``sentences`` also has
    (0 for a claim without content words)."""
    words = set(content_words(claim))
    if not words:
        return 0.0
    shared = (len(words.intersection(content_words(s))) for s in sentences)
    return max(shared, default=0) / len(words)


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    """One form for a word's inflections: "rate" / "rates", "change" / "changes" / "changed" /
    "changing", "class" / "classes", "study" / "studies" (a final "e" goes from words of five
    letters or more, so that "note" stays apart from "not")."""
    if token[0].isdigit() or len(token) <= 3:
        return token
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        stem = token[: -len(suffix)]
        if not token.endswith(suffix) or len(stem) < 3:
            continue
        if suffix == "es" and not stem.endswith(_SIBILANTS):
            continue  # "rates" is "rate" + "s", "boxes" is "box" + "es"
        if suffix == "s" and stem.endswith(("s", "u", "i")):
            continue  # "class", "status", "analysis"
        token = stem + ("y" if suffix in ("ies", "ied") else "")
        break
    return token[:-1] if len(token) >= 5 and token.endswith("e") else token


_SIBILANTS = ("s", "x", "z", "ch", "sh")
