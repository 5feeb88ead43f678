"""Premise packing: what the verifier sees for one claim and one subset of contexts.

The rule (deterministic): split every context into sentences (long ones into windows of
``max_sentence_words``), score each sentence against the claim with BM25 over content words
(IDF from all sentences of the request, so removing a context never re-scores the others), keep
the ``top_k`` best with a positive score (ties: earlier first) while they fit ``max_words``, and
write them in their original order: sentences of one context joined by a space, contexts
separated by a newline. No overlap at all gives an empty premise, which is unsupported without a
model call (fail-closed).

The engine builds the index over its contexts in a canonical order (by content, see
:func:`ene_core.text.contexts.canonical_order`), so "earlier" and "original order" never depend on
the order the user passed the contexts in.

Amounts in the packed sentences are written as the claim writes them where the values are
equal, or in the claim's unit (:func:`ene_core.rules.quantities.align`): "12,000 metres" reads
"12 kilometres" for a claim in kilometres. Ranking reads the texts as written.

Leaving context ``i`` out re-ranks without ``i``'s sentences. When none of them were in the
premise, the premise is unchanged and the engine reuses the verdict instead of calling the model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..rules import polarity
from ..rules.quantities import align
from ..text.sentences import split_sentences
from ..text.words import content_words


@dataclass(frozen=True)
class Premise:
    """The packed premise and the sentences ``(context, sentence)`` it was built from.

    ``parts``: the premise's sentences, each with the separator before it (``" "`` inside a
    context, ``"\\n"`` between contexts), so that ``"".join(parts) == text``; an oracle that
    caches token ids by text (:class:`~ene_core.verifiers.nli.NLIOracle`) tokenises each sentence
    once.
    """

    text: str
    sources: tuple[tuple[int, int], ...]
    parts: tuple[str, ...] = ()
    focus: tuple[str, ...] = ()  # the parts of its leading sentences, when weaker ones joined them

    @property
    def contexts(self) -> frozenset[int]:
        return frozenset(c for c, _ in self.sources)

    @property
    def key(self) -> str:
        """What the verifier reads: the text, and the focus after it when there is one."""
        return self.text if not self.focus else f"{self.text}\x00{''.join(self.focus)}"


@dataclass(frozen=True)
class _Piece:
    """One sentence of a chunk, prepared once per chunk text (see :func:`_prepared`)."""

    text: str
    terms: dict[str, int]  # content word -> its count
    length: int  # content words (the BM25 document length)
    size: int  # words (what ``max_words`` counts)
    same: str  # case- and space-folded text: a repeated sentence adds nothing


@dataclass(frozen=True)
class _Sentence:
    context: int
    position: int
    piece: _Piece

    @property
    def text(self) -> str:
        return self.piece.text


_K1, _B = 1.2, 0.75
_PREMISES_PER_INDEX = 4096  # premises remembered per index, then forgotten at once


class EvidenceIndex:
    """The sentences of one request's contexts, ready to be ranked against any claim.

    Built once per distinct list of contexts (see :meth:`PremisePacker.index`) and shared by
    every request with the same contexts; it remembers each claim's ranking and each
    (claim, subset) premise.
    """

    def __init__(self, contexts: Sequence[str], packer: PremisePacker) -> None:
        self.packer = packer
        self.sentences: list[_Sentence] = []
        postings: dict[str, list[tuple[int, int]]] = {}
        for c, text in enumerate(contexts):
            for piece in _prepared(text, packer.max_sentence_words):
                position = len(self.sentences)
                self.sentences.append(_Sentence(c, position, piece))
                for term, count in piece.terms.items():
                    postings.setdefault(term, []).append((position, count))
        n = len(self.sentences)
        # the BM25 statistics: df is the number of sentences a term occurs in
        self._idf = {
            t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()
        }
        total = sum(s.piece.length for s in self.sentences)
        avg_len = total / n if total else 1.0  # no content words: no sentence is ever scored
        self._slack = [_K1 * (1 - _B + _B * s.piece.length / avg_len) for s in self.sentences]
        self._postings = postings
        self._ranked: dict[str, list[tuple[_Sentence, float]]] = {}
        self._premises: dict[tuple[str, frozenset[int] | None], Premise] = {}

    def premise(self, claim: str, keep: Collection[int] | None = None) -> Premise:
        """The premise for ``claim`` built only from contexts in ``keep`` (all when ``None``)."""
        allowed = None if keep is None else frozenset(keep)
        key = (claim, allowed)
        found = self._premises.get(key)
        if found is None:
            if len(self._premises) >= _PREMISES_PER_INDEX:
                self._premises.clear()
            found = self._premises[key] = self._pack(claim, self._ranking(claim), allowed)
        return found

    def _pack(
        self, claim: str, ranked: list[tuple[_Sentence, float]], allowed: frozenset[int] | None
    ) -> Premise:
        chosen: list[_Sentence] = []
        leading: list[_Sentence] = []  # those scoring at least packer.focus of the best
        seen: set[str] = set()  # a repeated sentence (near-duplicate chunks) adds nothing
        words = 0
        best = 0.0
        for s, score in ranked:
            if allowed is not None and s.context not in allowed:
                continue
            piece = s.piece
            if piece.same in seen:
                continue
            if chosen and words + piece.size > self.packer.max_words:
                continue
            best = best or score
            chosen.append(s)
            if score >= self.packer.focus * best:
                leading.append(s)
            seen.add(piece.same)
            words += piece.size
            if len(chosen) == self.packer.top_k:
                break
        parts = self._write(claim, chosen)
        focus = self._write(claim, leading) if len(leading) < len(chosen) else ()
        sources = tuple((s.context, s.position) for s in sorted(chosen, key=lambda s: s.position))
        return Premise("".join(parts), sources, parts, focus)

    def _write(self, claim: str, sentences: list[_Sentence]) -> tuple[str, ...]:
        """``sentences`` in document order, in the claim's words, each with its separator."""
        parts: list[str] = []
        previous = -1
        for s in sorted(sentences, key=lambda s: s.position):
            separator = "" if not parts else " " if s.context == previous else "\n"
            text = align(s.text, claim) if self.packer.align_quantities else s.text
            text = polarity.align(text, claim) if self.packer.align_negation else text
            parts.append(separator + text)
            previous = s.context
        return tuple(parts)

    def _ranking(self, claim: str) -> list[tuple[_Sentence, float]]:
        """Sentences with a positive BM25 score for ``claim`` and their scores, best first (ties:
        earlier first).

        Each sentence's score adds its query terms in sorted order (a fixed float sum order),
        touching only the sentences that contain a term.
        """
        ranked = self._ranked.get(claim)
        if ranked is None:
            scores: dict[int, float] = {}
            for term in sorted(set(content_words(claim)) & self._postings.keys()):
                idf = self._idf[term]
                for position, tf in self._postings[term]:
                    gain = idf * tf * (_K1 + 1) / (tf + self._slack[position])
                    scores[position] = scores.get(position, 0.0) + gain
            best = sorted((-score, p) for p, score in scores.items() if score > 0)
            ranked = self._ranked[claim] = [(self.sentences[p], -score) for score, p in best]
        return ranked


@dataclass(frozen=True)
class PremisePacker:
    """Settings of the packing rule; ``index(contexts)`` prepares one request."""

    top_k: int = 3
    max_words: int = 220
    max_sentence_words: int = 80
    align_quantities: bool = True  # amounts in the claim's words (ene_core.rules.quantities)
    align_negation: bool = True  # "unsigned" as "not signed" for its claim (rules.polarity)
    #: a premise whose packed sentences score under this share of its best one's BM25 score is
    #: also read without them (``Premise.focus``; :func:`~ene_core.verifiers.verdict.blend`);
    #: 0: never
    focus: float = 0.3

    def index(self, contexts: Sequence[str]) -> EvidenceIndex:
        """The index of ``contexts``: the same object for the same texts and settings while it
        is among the 256 most recently used (an index is read-only apart from what it
        remembers, so requests and threads share it)."""
        return _index(self, tuple(contexts))

    def describe(self) -> dict[str, int | str]:
        described: dict[str, int | str] = {
            "rule": "bm25-top-k",
            "top_k": self.top_k,
            "max_words": self.max_words,
            "max_sentence_words": self.max_sentence_words,
        }
        if self.align_quantities:
            described["quantities"] = "aligned"
        if self.align_negation:
            described["negation"] = "aligned"
        if self.focus:
            described["focus"] = f"{self.focus:g}"
        return described


@lru_cache(maxsize=256)
def _index(packer: PremisePacker, contexts: tuple[str, ...]) -> EvidenceIndex:
    return EvidenceIndex(contexts, packer)


@lru_cache(maxsize=8192)
def _prepared(text: str, max_words: int) -> tuple[_Piece, ...]:
    """The sentences of one chunk with their content-word counts, by text.

    Cached (8,192 texts, least recently used out): chunks recur across requests, and sentence
    splitting is the engine's main CPU cost outside the model.
    """
    prepared = []
    for piece in _pieces(text, max_words):
        terms = Counter(content_words(piece))
        same = " ".join(piece.casefold().split())
        size = len(piece.split())
        prepared.append(_Piece(piece, terms, sum(terms.values()), size, same))
    return tuple(prepared)


def _pieces(text: str, max_words: int) -> tuple[str, ...]:
    """Sentences of ``text``; a sentence longer than ``max_words`` becomes word windows."""
    pieces: list[str] = []
    for start, end in split_sentences(text):
        words = text[start:end].split()
        for i in range(0, len(words), max_words):
            pieces.append(" ".join(words[i : i + max_words]))
    return tuple(p for p in pieces if p)
