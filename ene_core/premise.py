"""Premise packing: what the verifier sees for one claim and one subset of contexts.

The rule (deterministic): split every context into sentences (long ones into windows of
``max_sentence_words``), score each sentence against the claim with BM25 over content words
(IDF from all sentences of the request, so removing a context never re-scores the others), keep
the ``top_k`` best with a positive score (ties: earlier first) while they fit ``max_words``, and
write them in their original order: sentences of one context joined by a space, contexts
separated by a newline. No overlap at all gives an empty premise, which is unsupported without a
model call (fail-closed).

The engine builds the index over its contexts in a canonical order (by content, see
:func:`ene_core.contexts.canonical_order`), so "earlier" and "original order" never depend on
the order the user passed the contexts in.

Leaving context ``i`` out re-ranks without ``i``'s sentences. When none of them were in the
premise, the premise is unchanged and the engine reuses the verdict instead of calling the model.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .claims import split_sentences

_TOKEN = re.compile(r"[^\W_]+(?:[.,'][^\W_]+)*", re.UNICODE)
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
    return [_stem(t) for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    if token[0].isdigit() or len(token) <= 4:
        return token
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return token


@dataclass(frozen=True)
class Premise:
    """The packed premise and the sentences ``(context, sentence)`` it was built from."""

    text: str
    sources: tuple[tuple[int, int], ...]

    @property
    def contexts(self) -> frozenset[int]:
        return frozenset(c for c, _ in self.sources)


@dataclass(frozen=True)
class _Sentence:
    context: int
    position: int
    text: str
    terms: Counter[str]


class EvidenceIndex:
    """The sentences of one request's contexts, ready to be ranked against any claim."""

    def __init__(self, contexts: Sequence[str], packer: PremisePacker) -> None:
        self.packer = packer
        self.sentences: list[_Sentence] = []
        for c, text in enumerate(contexts):
            for piece in _pieces(text, packer.max_sentence_words):
                self.sentences.append(
                    _Sentence(c, len(self.sentences), piece, Counter(content_words(piece)))
                )
        n = len(self.sentences)
        df: Counter[str] = Counter()
        for s in self.sentences:
            df.update(s.terms.keys())
        self._idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        lengths = [sum(s.terms.values()) for s in self.sentences]
        self._avg_len = (sum(lengths) / n) if n else 1.0
        self._ranked: dict[str, list[_Sentence]] = {}

    def premise(self, claim: str, keep: Collection[int] | None = None) -> Premise:
        """The premise for ``claim`` built only from contexts in ``keep`` (all when ``None``)."""
        ranked = self._ranking(claim)
        chosen: list[_Sentence] = []
        seen: set[str] = set()  # a repeated sentence (near-duplicate chunks) adds nothing
        words = 0
        for s in ranked:
            if keep is not None and s.context not in keep:
                continue
            same = " ".join(s.text.casefold().split())
            if same in seen:
                continue
            size = len(s.text.split())
            if chosen and words + size > self.packer.max_words:
                continue
            chosen.append(s)
            seen.add(same)
            words += size
            if len(chosen) == self.packer.top_k:
                break
        chosen.sort(key=lambda s: s.position)
        lines: list[str] = []
        previous = -1
        for s in chosen:
            if s.context == previous:
                lines[-1] += " " + s.text
            else:
                lines.append(s.text)
            previous = s.context
        return Premise("\n".join(lines), tuple((s.context, s.position) for s in chosen))

    def _ranking(self, claim: str) -> list[_Sentence]:
        """Sentences with a positive BM25 score for ``claim``, best first (ties: earlier first)."""
        if claim not in self._ranked:
            query = set(content_words(claim))
            k1, b = 1.2, 0.75
            scored = []
            for s in self.sentences:
                length = sum(s.terms.values())
                score = 0.0
                for term in sorted(query & s.terms.keys()):  # a fixed float sum order
                    tf = s.terms[term]
                    norm = tf + k1 * (1 - b + b * length / self._avg_len)
                    score += self._idf[term] * tf * (k1 + 1) / norm
                if score > 0:
                    scored.append((-score, s.position, s))
            scored.sort(key=lambda item: (item[0], item[1]))
            self._ranked[claim] = [s for _, _, s in scored]
        return self._ranked[claim]


@dataclass(frozen=True)
class PremisePacker:
    """Settings of the packing rule; ``index(contexts)`` prepares one request."""

    top_k: int = 3
    max_words: int = 220
    max_sentence_words: int = 80

    def index(self, contexts: Sequence[str]) -> EvidenceIndex:
        return EvidenceIndex(contexts, self)

    def describe(self) -> dict[str, int | str]:
        return {
            "rule": "bm25-top-k",
            "top_k": self.top_k,
            "max_words": self.max_words,
            "max_sentence_words": self.max_sentence_words,
        }


@lru_cache(maxsize=8192)
def _pieces(text: str, max_words: int) -> tuple[str, ...]:
    """Sentences of ``text``; a sentence longer than ``max_words`` becomes word windows.

    Cached (8,192 texts, least recently used out): chunks recur across requests, and sentence
    splitting is the engine's main CPU cost outside the model.
    """
    pieces: list[str] = []
    for start, end in split_sentences(text):
        words = text[start:end].split()
        for i in range(0, len(words), max_words):
            pieces.append(" ".join(words[i : i + max_words]))
    return tuple(p for p in pieces if p)
