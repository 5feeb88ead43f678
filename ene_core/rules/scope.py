"""Scope the evidence narrows: a claim about every item of a kind, evidence about some of them.

A small NLI model reads "Phone support is available on every plan." as supported by "Phone
support is only available on the Enterprise plan." (0.39 entailment with v3, over τ): every word
is there but "only". The same holds for "all rates except the Saver rate" against "every room
rate", and "the Business plan only" against "all plans".

:func:`narrowed` finds such a sentence: the claim quantifies a noun with "all", "every", "any" or
"each" ("every plan"), and a clause of an evidence sentence that shares at least half of the
claim's content words restricts that same noun with "only", "except", "excluding", "other
than", "apart from", "with the exception of", "limited to", "restricted to" or "exclusively"
("only available on the Enterprise plan", "the Business plan only", "except the Saver rate").
The engine then calls the claim contradicted by that sentence's context.

Fail-closed: ``None`` for a claim that restricts itself ("every plan except Free") or denies a
universal ("not every plan"), for "any" after a negation ("without any effect"), for a
frequency ("every 30 minutes"), for a restriction of anything else ("Only admins can delete any
project" restricts who, not which project), and for one in another clause ("..., although only
photosynthetic organisms use it directly").
Deterministic and offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..text.words import content_words
from .bindings import clauses

__all__ = ["excepted", "narrowed"]

#: the share of the claim's content words the restricting clause must have
SHARE = 0.5

_TOKEN = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*|[,;:.()!?]")
_BREAK = frozenset(",;:.()!?")
_UNIVERSAL = frozenset({"all", "every", "any", "each"})
_OF_THE = frozenset({"of", "the"})  # "all of the plans"
# "without any", "not any": no universal
_NEGATIVE = frozenset({"without", "not", "never", "hardly", "barely", "no"})
# words between a quantifier and its noun ("every room rate", "all of the plans")
_NOUN_SPAN = 3
# a claim that restricts or denies its own universal is left to the model
_OWN_LIMIT = re.compile(
    r"\b(?:only|except|excluding|other than|apart from|exception|limited to|restricted to|"
    r"exclusively|but not)\b|\bnot\s+(?:all|every|each|any)\b|\bno\b",
    re.IGNORECASE,
)
# "every 30 minutes", "each year": a frequency, not a scope
_FREQUENCY = frozenset(
    {"second", "minute", "hour", "day", "week", "month", "year", "decade", "time", "night"}
)
# words a restriction may pass before its noun: "only available on the Enterprise plan"
_PASSED = frozenset(
    {
        *("available", "offered", "provided", "possible", "valid", "allowed", "permitted"),
        *("open", "included", "applies", "apply", "applicable", "supported"),
        *("on", "for", "to", "in", "at", "with", "the", "a", "an", "by", "during", "from", "of"),
    }
)
# (the restricting words, in order) -> the restriction reads its noun after them
_BEFORE = (
    ("only",),
    ("except",),  # "except for" passes "for"
    ("excluding",),
    ("exclusively",),
    ("other", "than"),
    ("apart", "from"),
    ("exception", "of"),
    ("limited", "to"),
    ("restricted", "to"),
)


def narrowed(claim: str, parts: Sequence[str]) -> int | None:
    """The index of the first premise part that restricts the noun ``claim`` says "all",
    "every", "any" or "each" of, in a clause that shares at least half of the claim's content
    words; ``None`` otherwise."""
    return _narrowed(claim.strip(), tuple(parts))


@lru_cache(maxsize=1 << 14)
def _narrowed(claim: str, parts: tuple[str, ...]) -> int | None:
    nouns = _quantified(claim)
    if not nouns:
        return None
    words = set(content_words(claim))
    for i, part in enumerate(parts):
        for clause in clauses(part):
            if len(words.intersection(content_words(clause))) < SHARE * len(words):
                continue
            if _restricts(clause, nouns):
                return i
    return None


def _quantified(claim: str) -> frozenset[str]:
    """The content words within :data:`_NOUN_SPAN` words after each "all" / "every" / "any" /
    "each" of ``claim`` (stemmed as :func:`~ene_core.text.words.content_words` does); none for a
    claim that limits itself or states a frequency."""
    if _OWN_LIMIT.search(claim):
        return frozenset()
    tokens = [t.lower() for t in _TOKEN.findall(claim)]
    found: set[str] = set()
    for n, token in enumerate(tokens):
        before = tokens[n - 1] if n else ""
        if token not in _UNIVERSAL or before in _NEGATIVE or before.endswith("n't"):
            continue
        span = _span(tokens, n + 1, _OF_THE)
        if not span or span[0][0].isdigit() or _FREQUENCY & set(content_words(" ".join(span))):
            continue
        found.update(content_words(" ".join(span)))
    return frozenset(found)


def _span(tokens: Sequence[str], start: int, passed: frozenset[str]) -> list[str]:
    """Up to :data:`_NOUN_SPAN` tokens from ``start``, after any ``passed`` ones, to a break."""
    while start < len(tokens) and tokens[start] in passed:
        start += 1
    span: list[str] = []
    for token in tokens[start:]:
        if token in _BREAK or len(span) == _NOUN_SPAN:
            break
        span.append(token)
    return span


def _restricts(part: str, nouns: frozenset[str]) -> bool:
    """Whether ``part`` restricts one of ``nouns``: "only available on the Enterprise plan",
    "except the Saver rate", or "the Business plan only" (``only`` closing its phrase)."""
    tokens = [t.lower() for t in _TOKEN.findall(part)]
    for n, token in enumerate(tokens):
        closing = n + 1 == len(tokens) or tokens[n + 1] in _BREAK
        if token == "only" and n and closing and _names(tokens[n - 1 : n], nouns):
            return True
        for words in _BEFORE:
            if tuple(tokens[n : n + len(words)]) != words:
                continue
            if _names(_span(tokens, n + len(words), _PASSED), nouns):
                return True
    return False


def _names(tokens: Sequence[str], nouns: frozenset[str]) -> bool:
    """Whether ``tokens`` hold one of ``nouns`` (stemmed alike: "rates" and "rate")."""
    return not nouns.isdisjoint(content_words(" ".join(tokens)))


# "…covers manufacturing defects but not battery wear", "open daily except Mondays"
_EXCEPTION = re.compile(
    r"\b(?:but not|and not|except(?:\s+for)?|excluding|other than|apart from|with the exception"
    r"\s+of|not including)\s+(?P<item>[^,;:.()]+)",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|no|never|none|nor|without|cannot)\b|n't\b", re.IGNORECASE)


def excepted(claim: str, parts: Sequence[str]) -> int | None:
    """The index of the first premise part that excepts what ``claim`` affirms: "The warranty
    covers battery wear." against "a warranty that covers manufacturing defects but not battery
    wear", "The museum is open on Mondays." against "The museum is open daily except Mondays.";
    ``None`` otherwise.

    The claim holds every content word of the excepted item, and the words of the sentence
    before the exception hold the claim's other content words (its subject and predicate).
    Fail-closed: ``None`` for a claim with a negation or an exception of its own, and for an
    exception from a negated statement ("Pets are not allowed, except guide dogs" allows guide
    dogs)."""
    return _excepted(claim.strip(), tuple(parts))


@lru_cache(maxsize=1 << 14)
def _excepted(claim: str, parts: tuple[str, ...]) -> int | None:
    if _NEGATED.search(claim) or _OWN_LIMIT.search(claim):
        return None
    words = set(content_words(claim))
    for i, part in enumerate(parts):
        for clause in clauses(part):
            for m in _EXCEPTION.finditer(clause):
                item = set(content_words(m["item"]))
                lead = clause[: m.start()]
                if not item or not item <= words or _NEGATED.search(lead):
                    continue
                rest = words - item
                if rest and rest <= set(content_words(lead)):
                    return i
    return None
