"""Amounts the evidence states: a claim is supported only if its premise states each of its
amounts, years, clock times and temperatures, in some unit or wording.

A small NLI model reads "The drop is 8 cm" against "The drop is 8 mm", or "up to 23 pounds"
against "up to 23 kg", as the same fact: every word but one matches. :func:`unstated` finds
the claim's amounts that the premise states nowhere (values compared exactly, across units and
wordings, by :mod:`~ene_core.rules.quantities`); the engine then never calls the claim supported.
:func:`rivals` gives the premise's amounts of the same kind with another value: the engine
checks the claim with each in its place, and when one is supported the evidence gives the claim
another amount, so the claim is contradicted (see docs/engine.md, "Amounts the evidence does
not state").

Loose wording is honoured: "about 300,000 km/s" is stated by "299,792 km/s" (within a tenth),
"more than 20" by "25", "under 40" by "38", "1,200" by "1,187" (rounded to the claim's
precision); an amount computed from two stated ones ("lasted 116 years") is :func:`computed`,
not unstated, and so is a duration between two years of one evidence sentence or a share in
words that two amounts give ("roughly half that"). Rates are compared by their amount ("4.90
euros" of "4.90 euros a month"), and by their rate when both write a period ("600 requests
per minute" states "10 per second"); a frequency ("every year") is checked only where the
evidence gives a frequency, and a bare "one", ordinal words and an amount written with an
article after another amount ("three days a week") not at all. Deterministic and offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

from ..text.words import TOKEN, content_words
from .amounts import _BETWEEN, Amount, amounts, outside, same_amount
from .arithmetic import derivable

__all__ = [
    "Amount",
    "amounts",
    "computed",
    "holding",
    "outside",
    "rivals",
    "same_amount",
    "substitute",
    "unstated",
]


_INSTANCE = re.compile(r"\b(?:an?|worth)\s+$", re.IGNORECASE)
_IF = re.compile(r"(?:^|[,;:]\s*)(?:if|when|once)\b[^,;:]*$", re.IGNORECASE)


#: an opening that sets a case: "For four people", "Paying 2,000 pounds in cash", "Keeping ..."
_OPENING_CASE = re.compile(r"\s*(?:for|with|on|\w+ing)\b[^,;:]*$", re.IGNORECASE)


def _instance(claim: str, c: Amount) -> bool:
    """Whether the claim's ``c`` is a case a rule applies to rather than a value it states: "a
    60 MB file", "a contract worth 80,000 euros", "if you hold 30,000 euros"."""
    return not c.bound and bool(
        _INSTANCE.search(claim, 0, c.start) or _IF.search(claim, 0, c.start)
    )


def _within(c: Amount, claim: str, premise: str, stated: Sequence[Amount]) -> bool:
    """Whether the evidence's condition takes in the claim's exact ``c``: a strict bound
    ("files larger than 50 MB" of a 60 MB file) or a range ("between 100 and 160 Wh" of 120
    Wh), of its kind, among two of the words about ``c`` ("file", "rejected")."""
    if c.kind in ("year", "date", "clock") or c.label:
        return False
    about = _near(claim, c)
    ranges = [
        (a, b)
        for a, b in pairwise(stated)
        if _BETWEEN.search(premise, 0, a.start)
        and premise[a.end : b.start].strip().lower() == "and"
    ]
    return any(
        a.kind == b.kind == c.kind and a.value < c.value < b.value
        for a, b in ranges
        if len(about & _near(premise, a)) >= 2
    ) or any(
        q.kind == c.kind
        and ((q.bound == ">" and c.value > q.value) or (q.bound == "<" and c.value < q.value))
        and len(about & _near(premise, q)) >= 2
        for q in stated
    )


@lru_cache(maxsize=1 << 16)
def _split(claim: str, premise: str) -> tuple[tuple[Amount, ...], tuple[Amount, ...]]:
    """The claim's amounts that ``premise`` does not state: ``(unstated, computed)``, where
    computed ones are derived from amounts it states
    (:func:`~ene_core.rules.arithmetic.derivable`)."""
    wanted = [a for a in amounts(claim) if not a.loose]
    if not wanted:
        return (), ()
    stated = amounts(premise)
    counts = any(q.kind == "count" and not q.label for q in stated)
    missing = [
        c
        for c in wanted
        if not any(same_amount(c, q) for q in stated)
        and not (_instance(claim, c) and _within(c, claim, premise, stated))
        # a plain count ("two people") may count what the premise lists ("a man and a
        # woman"), and a frequency ("every year") may be an adjective ("the annual fair"):
        # unstated only where the premise gives another count or frequency
        and (counts or c.kind != "count" or c.label or c.bound)
        and (c.kind != "frequency" or any(q.kind == "frequency" for q in stated))
    ]
    derived = [c for c in missing if derivable(c, claim, premise, stated, wanted)]
    # the same amount written again ("1,000 euros after the first month, and another 1,000
    # euros once ...") is computed too
    computed = tuple(c for c in missing if any(same_amount(c, d) for d in derived))
    # the case a computed amount is worked out for, written as one ("Paying 2,000 pounds in
    # cash would cost you 14 pounds" at 0.70 pounds per 100 pounds), is the claim's own
    own = [
        c
        for c in missing
        if c not in computed
        and (_instance(claim, c) or _OPENING_CASE.match(claim[: c.start]))
        and any(
            not derivable(d, claim, premise, stated, [w for w in wanted if w is not c])
            for d in derived
        )
    ]
    return tuple(c for c in missing if c not in computed and c not in own), computed


_BOUNDARY = re.compile(r"(?<!\d)[.;!?](?!\d)|\n")
_NEAR = 6  # words either side of an amount that say what it is the amount of


@lru_cache(maxsize=1 << 16)
def _near(text: str, q: Amount) -> frozenset[str]:
    """The content words within ``_NEAR`` words of ``q`` in ``text``, within its sentence."""
    before = _BOUNDARY.split(text[: q.start])[-1]
    after = _BOUNDARY.split(text[q.end :])[0]
    near = TOKEN.findall(before)[-_NEAR:] + TOKEN.findall(after)[:_NEAR]
    return frozenset(content_words(" ".join(near)))


@lru_cache(maxsize=1 << 14)
def _claim_words(claim: str) -> frozenset[str]:
    """The claim's content words outside its amounts."""
    return frozenset(content_words(outside(claim, amounts(claim))))


def _rival(amount: Amount, q: Amount) -> bool:
    """Whether the evidence's ``q`` is an amount of ``amount``'s kind with another value."""
    return q.family == amount.family and not (q.label or q.loose) and not same_amount(amount, q)


def unstated(claim: str, premise: str) -> tuple[Amount, ...]:
    """The amounts of ``claim`` that ``premise`` states nowhere and that are not computed from
    two it states (see :func:`computed`), left to right."""
    return _split(claim, premise)[0]


def computed(claim: str, premise: str) -> tuple[Amount, ...]:
    """The amounts of ``claim`` computed from two that ``premise`` states: a sum, difference
    or product in a claim that words a computation, a duration between two years of one
    sentence, a share in words. The model cannot check arithmetic, so such a claim is not
    called contradicted for them."""
    return _split(claim, premise)[1]


def rivals(amount: Amount, premise: str, limit: int = 3, claim: str = "") -> tuple[Amount, ...]:
    """The premise's amounts of ``amount``'s kind (any currency for money) with another
    value, each once: the first ``limit``, those among most of ``claim``'s words first, then
    left to right; none for a label."""
    if amount.label:
        return ()
    out: list[Amount] = []
    for q in amounts(premise):
        if _rival(amount, q) and (q.kind, q.value, q.per) not in {
            (o.kind, o.value, o.per) for o in out
        }:
            out.append(q)
    words = _claim_words(claim)
    out.sort(key=lambda q: -len(_near(premise, q) & words))  # stable: left to right on ties
    return tuple(out[:limit])


def substitute(claim: str, amount: Amount, rival: Amount) -> str:
    """``claim`` with ``amount`` written as ``rival`` is written."""
    return claim[: amount.start] + rival.surface + claim[amount.end :]


def holding(parts: Sequence[str], rival: Amount) -> list[int]:
    """Indices of the ``parts`` that state ``rival``'s value."""
    return [i for i, part in enumerate(parts) if any(same_amount(rival, q) for q in amounts(part))]
