"""Amounts the evidence states: a claim is supported only if its premise states each of its
amounts, years and clock times, in some unit or wording.

A small NLI model reads "The drop is 8 cm" against "The drop is 8 mm", or "up to 23 pounds"
against "up to 23 kg", as the same fact: every word but one matches. :func:`unstated` finds
the claim's amounts that the premise states nowhere (values compared exactly, across units and
wordings, by :mod:`~ene_core.quantities`); the engine then never calls the claim supported.
:func:`rivals` gives the premise's amounts of the same kind with another value: the engine
checks the claim with each in its place, and when one is supported the evidence gives the claim
another amount, so the claim is contradicted (see docs/engine.md, "Amounts the evidence does
not state").

Loose wording is honoured: "about 300,000 km/s" is stated by "299,792 km/s" (within a tenth),
"more than 20" by "25", "under 40" by "38". Rates are compared by their amount ("4.90 euros"
of "4.90 euros a month"); frequencies ("weekly"), a bare "one" and an amount written with an
article after another amount ("three days a week") are not checked. Deterministic and offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .quantities import quantities, unit_of

__all__ = ["Amount", "amounts", "rivals", "unstated"]


@dataclass(frozen=True)
class Amount:
    """``text[start:end]``: ``bound value`` of one ``kind`` (a quantity's dimension, ``"year"``,
    ``"clock"`` in minutes after midnight, or ``"temperature"`` in degrees Celsius)."""

    start: int
    end: int
    surface: str
    kind: str
    value: Fraction
    bound: str = ""
    number: Fraction | None = None  # as written, in its own unit ("30" of "30 seconds")
    label: bool = False  # names a thing ("Python 3.13", "version 2"): no other value is a rival
    half_day: bool = False  # a clock time without am/pm that may be 12 hours later


_YEAR = re.compile(r"(?<![\w$€£.,:/-])(1[0-9]{3}|20[0-9]{2}|21[0-9]{2})(?![\w%-]|[.,:]\d)")
_CLOCK = re.compile(
    r"(?<![\w.:,])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?:\s*(?P<ap>[ap])(?:\.m\.|m\b))?"
    r"|(?P<h12>1[0-2]|0?[1-9])(?:\.(?P<m12>[0-5]\d))?\s*(?P<ap12>[ap])(?:\.m\.|m\b))(?![:\d])",
    re.IGNORECASE,
)
_TEMPERATURE = re.compile(
    r"(?<![\w.,])(?P<n>-?\d+(?:\.\d+)?)\s*(?:°\s*|degrees?\s+)"
    r"(?P<scale>c|f|celsius|fahrenheit|centigrade)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(
    r"(?:\b[A-Z][\w-]*|\b(?:version|v|release|model|number|no\.|chapter|section|route)|#)\s*$"
)
_COMPOUND = re.compile(r"\s*(?P<unit>[a-z]+)\s*/", re.IGNORECASE)
_TOLERANCE = Fraction(1, 10)  # "about X" is stated by a value within a tenth of X


def _clock(m: re.Match[str]) -> tuple[Fraction, bool]:
    if m["h"] is not None:
        hour, minute, ap = int(m["h"]), int(m["m"]), m["ap"]
    else:
        hour, minute, ap = int(m["h12"]), int(m["m12"] or 0), m["ap12"]
    if ap:
        hour = hour % 12 + (12 if ap.lower() == "p" else 0)
    return Fraction(hour * 60 + minute), not ap and 1 <= hour <= 12


@lru_cache(maxsize=1 << 14)
def amounts(text: str) -> tuple[Amount, ...]:
    """The amounts, years, clock times and temperatures written in ``text`` that a claim must
    find stated, left to right."""
    found: list[Amount] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    for m in _CLOCK.finditer(text):
        value, half_day = _clock(m)
        found.append(Amount(m.start(), m.end(), m.group(), "clock", value, half_day=half_day))
        taken.append(m.span())
    for m in _TEMPERATURE.finditer(text):
        n = Fraction(m["n"])
        celsius = (n - 32) * Fraction(5, 9) if m["scale"].lower().startswith("f") else n
        found.append(Amount(m.start(), m.end(), m.group(), "temperature", celsius, number=n))
        taken.append(m.span())
    for m in _YEAR.finditer(text):
        if free(*m.span()):
            found.append(Amount(m.start(), m.end(), m.group(), "year", Fraction(m.group())))
    previous_end = -10
    for q in quantities(text):
        follows = q.start - previous_end <= 2
        previous_end = q.end
        if not free(q.start, q.end) or q.dimension == "frequency":
            continue
        article = q.surface.split()[0].lower() in ("a", "an")
        one = q.dimension == "count" and q.value == 1 and q.style != "digits"
        if (article and follows) or one:
            continue  # "three days a week", "one of the versions"
        kind, value, end = q.dimension, q.value, q.end
        size = unit_of(q.unit) if q.unit else None
        number = value / size[1] if size else value * 100 if q.unit == "%" else value
        compound = _COMPOUND.match(text, q.end) if q.dimension == "count" and not q.unit else None
        unit = unit_of(compound["unit"]) if compound else None
        if compound and unit and not unit[0].startswith("money"):  # "299,792 km/s": a length
            kind, value, end = unit[0], value * unit[1], compound.end("unit")
        label = kind == "count" and not q.bound and bool(_LABEL.search(text, 0, q.start))
        found.append(Amount(q.start, end, text[q.start : end], kind, value, q.bound, number, label))
    return tuple(sorted(found, key=lambda a: a.start))


def _same(claim: Amount, q: Amount) -> bool:
    if claim.kind != q.kind:
        # "30 seconds" is stated by "timeout (default 30): seconds to wait"
        return q.kind == "count" and not q.label and claim.number == q.value

    if claim.kind == "clock":
        day = Fraction(720)
        return claim.value == q.value or (
            (claim.half_day or q.half_day) and claim.value % day == q.value % day
        )
    if claim.value == q.value:
        return True
    if claim.bound == "~" or q.bound == "~":
        return abs(claim.value - q.value) <= _TOLERANCE * abs(claim.value)
    if claim.bound in ("<", "<="):
        return q.value <= claim.value and q.bound not in (">", ">=")
    if claim.bound in (">", ">="):
        return q.value >= claim.value and q.bound not in ("<", "<=")
    return False


def _missing(claim: str, premise: str) -> tuple[Amount, ...]:
    stated = amounts(premise)
    return tuple(c for c in amounts(claim) if not any(_same(c, q) for q in stated))


@lru_cache(maxsize=1 << 16)
def unstated(claim: str, premise: str) -> tuple[Amount, ...]:
    """The amounts of ``claim`` that ``premise`` states nowhere, left to right."""
    if not any(ch.isdigit() for ch in claim) and not quantities(claim):
        return ()
    return _missing(claim, premise)


def rivals(amount: Amount, premise: str, limit: int = 3) -> tuple[Amount, ...]:
    """The premise's amounts of ``amount``'s kind (any currency for money) with another
    value: the first ``limit``, each once, left to right; none for a label."""
    if amount.label:
        return ()
    kind = amount.kind.split(":")[0]
    out: list[Amount] = []
    for q in amounts(premise):
        if q.kind.split(":")[0] != kind or q.label or _same(amount, q):
            continue
        if (q.kind, q.value) not in {(o.kind, o.value) for o in out}:
            out.append(q)
    return tuple(out[:limit])


def substitute(claim: str, amount: Amount, rival: Amount) -> str:
    """``claim`` with ``amount`` written as ``rival`` is written."""
    return claim[: amount.start] + rival.surface + claim[amount.end :]


def holding(parts: Sequence[str], rival: Amount) -> list[int]:
    """Indices of the ``parts`` that state ``rival``'s value."""
    return [i for i, part in enumerate(parts) if any(_same(rival, q) for q in amounts(part))]
