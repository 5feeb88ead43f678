"""Deterministic sentence-level claim splitting, with character spans that tile the answer.

Sentences come from :func:`~ene_core.text.sentences.split_sentences` (syntok and its fixups).
On top of them this module adds what a segmenter does not know about RAG answers: line breaks and
list items are hard boundaries, inline citation markers (``[1]``, ``[2, 3]``) are stripped from
the claim text and kept as ``cited`` indices, and sentences that state nothing checkable
(questions, refusals, headings, "Sources:" lines) are kept as non-claims. A short answer that is
not a statement on its own ("Delhi", "in 1931", "yes") is a *fragment*
(:func:`~ene_core.text.short_answers.is_fragment`): with the request's question it is checked as the
answer to it (:func:`read_with_question`); without one it is checked as its own text, unless it
cannot be a claim at all (a bare name, a number, "yes": kept as a non-claim, and the ENG's
warning names it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from .sentences import split_sentences
from .short_answers import (
    DEFAULT_FORM,
    HypothesisForm,
    cannot_be_claim,
    is_fragment,
    read_answer,
    usable_question,
)

SegmentKind = Literal["claim", "question", "refusal", "heading", "citation", "filler", "fragment"]

_CITATION = re.compile(r"\s*\[(\d+(?:\s*[,;\u2013-]\s*\d+)*)\]")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6+]|\d{1,3}[.)])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|\*\*[^*]+\*\*:?\s*$|[^.!?]{1,60}:\s*$)")
_REFUSAL = re.compile(
    r"\b(?:(?:the\s+)?(?:provided\s+)?(?:documents?|context|sources?|passages?|information|"
    r"texts?)\s+(?:provided\s+)?(?:do(?:es)?\s+not|don't|doesn't)\s+"
    r"(?:say|mention|contain|specify|state|include|provide|cover|address)"
    r"|i\s+(?:do\s+not|don't|cannot|can't)\s+(?:know|find|answer|tell|determine)"
    r"|(?:not|no)\s+enough\s+(?:information|context)"
    r"|(?:cannot|can't|unable\s+to)\s+(?:be\s+)?(?:answer|determine|determined|find|found))",
    re.IGNORECASE,
)
_SOURCES = re.compile(r"^(?:sources?|references?|citations?)\s*:", re.IGNORECASE)
_WORD = re.compile(r"\w", re.UNICODE)
_BREAKS = ("\n", "\r", "\u2028", "\u2029")  # line breaks: hard sentence boundaries


@dataclass(frozen=True)
class Segment:
    """One sentence: ``answer[start:end]`` is its raw text (trailing space included).

    ``hypothesis``: what the verifier reads instead of ``text``, for a fragment read as the
    answer to the question (:func:`read_with_question`); ``None`` for everything else.
    ``hypothesis_form``: how it was made ("declarative" or "question_answer"), or ``None``.
    """

    text: str
    start: int
    end: int
    kind: SegmentKind
    cited: tuple[int, ...] = field(default=())
    hypothesis: str | None = None
    hypothesis_form: HypothesisForm | None = None

    @property
    def checkable(self) -> bool:
        return self.kind == "claim"

    @property
    def verifier_text(self) -> str:
        """The hypothesis the verifier reads: ``hypothesis`` when set, else ``text``."""
        return self.text if self.hypothesis is None else self.hypothesis


def split_claims(answer: str, *, start: int = 0) -> list[Segment]:
    """Split ``answer`` into segments whose spans tile it exactly, in order.

    Whitespace-only stretches are absorbed into the preceding segment, so
    ``"".join(answer[s.start:s.end] for s in segments) == answer`` always holds
    (an answer with no visible text has no segments). With ``start`` (where a segment of
    ``answer`` begins) only ``answer[start:]`` is split, into the segments from there on, with
    offsets into ``answer``: how a growing answer is split a sentence at a time.
    """
    segments: list[Segment] = []
    spans = [(start + a, start + b) for a, b in split_sentences(answer[start:])]
    for begin, end in _merge_citation_tails(answer, spans):
        raw = answer[begin:end]
        line_start = begin == 0 or answer[begin - 1] in _BREAKS
        text, cited = _strip_citations(_BULLET.sub("", raw, count=1) if line_start else raw)
        segments.append(Segment(text, begin, end, _kind(raw, text), cited))
    return segments


def read_with_question(
    segments: Sequence[Segment], question: str | None, form: HypothesisForm | None = None
) -> list[Segment]:
    """Fragments become claims: with a usable ``question``, checked as the answer to it (their
    ``hypothesis`` built from both by :func:`~ene_core.text.short_answers.read_answer`, in
    ``form``, by default :data:`~ene_core.text.short_answers.DEFAULT_FORM`); without one,
    checked as their own text unless they cannot be a claim at all
    (:func:`~ene_core.text.short_answers.cannot_be_claim`: a bare name, a number, "yes"),
    which stay fragments, unchecked. Everything else stays as it is."""
    asked = usable_question(question)
    return [_read(s, asked, form or DEFAULT_FORM) if s.kind == "fragment" else s for s in segments]


def _read(segment: Segment, question: str | None, form: HypothesisForm) -> Segment:
    """One fragment read with the question, or alone when there is none."""
    if question is None:
        return segment if cannot_be_claim(segment.text) else replace(segment, kind="claim")
    hypothesis, made = read_answer(question, segment.text, form)
    return replace(segment, kind="claim", hypothesis=hypothesis, hypothesis_form=made)


def _merge_citation_tails(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A span that is only citation markers (``It rose. [2]``) belongs to the sentence before it."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        is_tail = not _CITATION.sub("", text[start:end]).strip()
        same_line = merged and text[merged[-1][0] : start].rstrip(" \t")[-1:] not in _BREAKS
        if merged and is_tail and same_line:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _strip_citations(text: str) -> tuple[str, tuple[int, ...]]:
    cited: list[int] = []
    for match in _CITATION.finditer(text):
        for part in re.split(r"\s*[,;]\s*", match.group(1)):
            bounds = re.split(r"\s*[\u2013-]\s*", part)
            lo, hi = int(bounds[0]), int(bounds[-1])
            cited.extend(range(lo, min(hi, lo + 50) + 1) if hi >= lo else [lo])
    stripped = _CITATION.sub("", text).strip()
    stripped = re.sub(r"\s+([.,;:!?])", r"\1", stripped)
    return stripped, tuple(dict.fromkeys(cited))


def _kind(raw: str, text: str) -> SegmentKind:
    if not text:
        return "citation"
    if not _WORD.search(text):
        return "filler"
    if _HEADING.match(raw.strip("\r\n")) or _SOURCES.match(text):
        return "heading"
    if text.rstrip().endswith("?"):
        return "question"
    if _REFUSAL.search(text):
        return "refusal"
    if is_fragment(text):
        return "fragment"
    if len(text.split()) < 2:
        return "filler"
    return "claim"
