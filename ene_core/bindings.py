"""Bindings the evidence gives otherwise: which subject a role or a value belongs to.

A small NLI model reads a packed premise as a bag of facts: "Jonas Ek directed the orchestra in
Malmo." comes out supported by "Jonas Ek directed the orchestra in Uppsala." next to "Rita Sol
directed the orchestra in Malmo.", since every word is there. Read alone, the first sentence
contradicts the claim. :func:`same_opening` finds such sentences (the claim's opening, past its
verb and through at least half its words, then another ending); the engine checks the claim
against each alone, and when one contradicts it and none supports it, the claim is
contradicted.

Unique roles: a superlative, "first", "last", "only" or "top" has one holder.

Routes: "from New York to Southampton" is the reverse of the evidence's "from Southampton to New
York" (:func:`reversed_route`).

"Buzz Aldrin was the first person to walk on the Moon." against "Neil Armstrong became the first
person to walk on the Moon." and "Buzz Aldrin joined Armstrong on the lunar surface." comes out
supported from a small NLI model: every word is there. But the role has one holder, and the
evidence gives it to someone else. :func:`other_holder` finds that: the claim's role ("the
first person to walk on the Moon"), written by the evidence with the same words for another
subject, where the evidence also knows the claim's subject as someone else.

Fail-closed: ``None`` unless the claim is "<subject> is/was/became the <first|last|only|-est|most
...> <role>", an evidence sentence gives the same role (the same content words; what follows
them may only be a date or a clause, not "in Economics") to a subject that shares no word with
the claim's, and another evidence sentence names the claim's subject. An alias the evidence
never links ("Octavian" for "Augustus") is therefore not contradicted. Deterministic, offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .premise import content_words

__all__ = ["RoleClash", "other_holder", "reversed_route", "same_opening"]

_VERB = r"(?:is|was|are|were|became|becomes|remains|remained)"
_UNIQUE = r"(?:first|last|only|top|\w+est|most\s+\w+|least\s+\w+)\b"
_OWNER = r"(?P<owner>[\w-]+'s\s+)?"  # "the club's top scorer"
_CLAIM = re.compile(
    rf"^(?P<subject>[^,;:]+?)\s+{_VERB}\s+the\s+{_OWNER}(?P<role>{_UNIQUE}.*?)[.!]?$",
    re.IGNORECASE,
)
_HOLDER = re.compile(
    rf"(?P<subject>[^;:]+?)\s+{_VERB}\s+the\s+{_OWNER}(?={_UNIQUE})", re.IGNORECASE
)
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)
_TOKEN = re.compile(r"[^\W_]+(?:[.,'][^\W_]+)*")
# after the role's words, a phrase that narrows it: "the first woman to win the prize in
# Economics" is another role (a date, "in 1969", does not narrow it)
_NARROWING = re.compile(r"^\s*(?:in|of|for|among|at|from|on|by|with)\s+(?![\d]|AD\b|BC\b)", re.I)


@dataclass(frozen=True)
class RoleClash:
    """The premise part that gives the claim's role to another holder."""

    part: int
    holder: str
    role: str


def other_holder(claim: str, parts: Sequence[str]) -> RoleClash | None:
    """The evidence sentence that gives ``claim``'s unique role to someone else, or ``None``."""
    return _other_holder(claim.strip(), tuple(parts))


@lru_cache(maxsize=1 << 14)
def _other_holder(claim: str, parts: tuple[str, ...]) -> RoleClash | None:
    m = _CLAIM.match(claim)
    if m is None or _NEGATED.search(claim):
        return None
    subject = set(content_words(m["subject"]))
    role = set(content_words(m["role"]))
    if not subject or not role:
        return None
    owner = (m["owner"] or "").lower().strip()
    holders = [
        (i, h)
        for i, part in enumerate(parts)
        for h in _HOLDER.finditer(part)
        if (h["owner"] or "").lower().strip() == owner and _same_role(part[h.end() :], role)
    ]
    if any(set(content_words(h["subject"])) & subject for _, h in holders):
        return None  # the evidence gives the role to the claim's subject too
    for i, h in holders:
        holder = h["subject"].strip(" \n")
        if not content_words(holder):
            continue
        named = any(
            subject <= set(content_words(other)) for j, other in enumerate(parts) if j != i
        ) or subject <= set(content_words(parts[i][h.end() :]))  # "..., while Ade Okoro led"
        if named:  # shown as the last phrase of the subject: "Neil Armstrong"
            return RoleClash(i, holder.rsplit(", ", 1)[-1], m["role"])
    return None


def _same_role(text: str, role: set[str]) -> bool:
    """Whether ``text`` starts with exactly the role's content words (in any order), followed by
    nothing that narrows it."""
    seen: set[str] = set()
    for t in _TOKEN.finditer(text):
        words = set(content_words(t.group()))
        if words - role:
            return False  # a word the claim's role does not have: another role
        seen |= words
        if seen == role:
            return not _NARROWING.match(text[t.end() :])
    return False


_AUX = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "does",
        "do",
        "did",
    }
)


def same_opening(parts: Sequence[str], claim: str) -> list[int]:
    """Indices of the premise ``parts`` that open with the claim's words past its verb (an
    auxiliary or a word in "-ed") and through at least half of them, then end otherwise: "Jonas
    Ek directed the orchestra in Uppsala." for "Jonas Ek directed the orchestra in Malmo.", not
    "Princeton High School was founded in 1867." for "Princeton High School was enlarged."."""
    words = [_fold(w) for w in claim.split()]
    verb = next((i for i, w in enumerate(words) if w in _AUX or w.endswith("ed")), None)
    if verb is None:
        return []
    out = []
    for i, part in enumerate(parts):
        theirs = [_fold(w) for w in part.split()]
        n = 0
        while n < min(len(words), len(theirs)) and words[n] == theirs[n]:
            n += 1
        if verb + 1 < n < len(words) and 2 * n >= len(words):
            out.append(i)
    return out


def _fold(word: str) -> str:
    return word.lower().strip(",.;:!?")


_ROUTE = re.compile(
    r"\bfrom\s+(?P<a>[^,;:.()\d]+?)\s+to\s+(?P<b>[^,;:.()\d]+?)"
    r"(?=\s*(?:[,;:.()]|$)|\s+(?:in|on|at|by|for|after|before|during|when|while|and|with|via)\b)",
    re.IGNORECASE,
)


_BOTH_WAYS = re.compile(r"\b(?:vice versa|and back|both ways|round trips?|return)\b", re.I)


def reversed_route(claim: str, parts: Sequence[str]) -> int | None:
    """The index of a premise part that gives the claim's "from A to B" the other way round
    ("from B to A") and never this way; ``None`` otherwise: numbers and dates are ranges (the
    amount check's business), and a route both ways ("and vice versa") has no direction."""
    return _reversed_route(claim, tuple(parts))


@lru_cache(maxsize=1 << 14)
def _reversed_route(claim: str, parts: tuple[str, ...]) -> int | None:
    if _BOTH_WAYS.search(claim):
        return None
    routes = [(_ends(m["a"]), _ends(m["b"])) for m in _ROUTE.finditer(claim)]
    routes = [(a, b) for a, b in routes if a and b and a != b]
    if not routes:
        return None
    theirs = [
        [] if _BOTH_WAYS.search(p) else [(_ends(m["a"]), _ends(m["b"])) for m in _ROUTE.finditer(p)]
        for p in parts
    ]
    for a, b in routes:
        if any((a, b) in found for found in theirs):
            continue  # the evidence also says it this way
        for i, found in enumerate(theirs):
            if (b, a) in found:
                return i
    return None


def _ends(text: str) -> frozenset[str]:
    return frozenset(content_words(text))
