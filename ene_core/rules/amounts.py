"""Amounts read out of text: values with a kind (a quantity's dimension, a year, a date, a clock
time, a temperature), a bound ("up to", "about"), a rate's period and a trend, and when two
amounts are the same.

:func:`amounts` builds on :mod:`~ene_core.rules.quantities` (numbers and units as written) and
reads what it does not: years, dates, clock times, temperatures, labels ("Python 3.13") and
ranges. :func:`same_amount` compares a claim's amount with the evidence's, honouring loose wording:
"about 300,000 km/s" is stated by "299,792 km/s" (within a tenth), "more than 20" by "25", "1,200"
by "1,187" (rounded to the claim's precision). Deterministic and offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from itertools import pairwise

from .quantities import PERIOD, folded, per, quantities, spell, unit_of

__all__ = ["Amount", "amounts", "outside", "same_amount"]


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
    loose: bool = False  # evidence only, never checked in a claim ("a year" of "25 days a year")
    half_day: bool = False  # a clock time without am/pm that may be 12 hours later
    per: str = ""  # the period of a rate as written after it ("month" of "30 euros per month")
    trend: int = 0  # a change as written before it: +1 "rose 4 percent", -1 "fell 4 percent"

    @property
    def family(self) -> str:
        """The kind without its currency: ``"money"`` for ``"money:euros"``."""
        return self.kind.split(":")[0]


_YEAR = re.compile(r"(?<![\w$€£.,:/])(1[0-9]{3}|20[0-9]{2}|21[0-9]{2})(?![\w%]|'s\b|[.,:]\d)")


_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("January", "Jan"),
            ("February", "Feb"),
            ("March", "Mar"),
            ("April", "Apr"),
            ("May",),
            ("June", "Jun"),
            ("July", "Jul"),
            ("August", "Aug"),
            ("September", "Sept", "Sep"),
            ("October", "Oct"),
            ("November", "Nov"),
            ("December", "Dec"),
        ),
        1,
    )
    for name in names
}


_M = "|".join(sorted(_MONTHS, key=len, reverse=True))


_Y = r"1[0-9]{3}|20[0-9]{2}|21[0-9]{2}"


_DAY = r"[0-3]?\d(?:st|nd|rd|th)?"


_TO = r"\s*(?:-+|\u2013|to|and)\s*"


_DATE = re.compile(  # "31 July 2025", "the 27th of April, 1994", "July 31, 2025", "May 2021"
    rf"(?<![\w.,])(?:(?P<d1>{_DAY})(?:{_TO}(?P<e1>{_DAY}))?\s+(?:of\s+)?(?P<m1>{_M})\.?"
    rf"(?:\s*,?\s+(?P<y1>{_Y}))?"
    rf"|(?P<m2>{_M})\.?\s+(?P<d2>{_DAY})(?!\d)(?:{_TO}(?P<e2>{_DAY})(?!\d))?"
    rf"(?:\s*,?\s+(?P<y2>{_Y}))?"
    rf"|(?P<m3>{_M})\.?\s*,?\s+(?:of\s+)?(?P<y3>{_Y})"
    rf"|(?P<y4>{_Y})-(?P<m4>[01]\d)-(?P<d4>[0-3]\d))(?![\w%])"
)


_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"


_ORDINAL_WORDS = {w: i for i, w in enumerate(_ORDINALS.split(), 1) if i != 2}  # "a second"


_ORDINAL = re.compile(  # "27th", "the third man" (not "a third": a share)
    rf"(?<![\w.,])(\d{{1,4}})(?:st|nd|rd|th)\b|(?<!\ba )(?<!\ban )(?<!\bone )"
    rf"\b({'|'.join(_ORDINAL_WORDS)})\b(?!\s+(?:of|and)\b)",
    re.IGNORECASE,
)


_AGE = re.compile(r"(?<=[a-z])-(?=old\b)", re.IGNORECASE)  # "50-year-old": "50-year old"


_CLOCK = re.compile(
    r"(?<![\w.:,])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?:\s*(?P<ap>[ap])(?:\.m\.|m\b))?"
    r"|(?P<h12>1[0-2]|0?[1-9])(?:\.(?P<m12>[0-5]\d))?\s*(?P<ap12>[ap])(?:\.m\.|m\b))(?![:\d])",
    re.IGNORECASE,
)


_NOON = re.compile(r"\b(?:noon|midday|midnight)\b", re.IGNORECASE)


_HOURS = [spell(n) for n in range(1, 13)]  # "one" ... "twelve"


_HOUR = rf"(?:1[0-2]|0?[1-9]|{'|'.join(_HOURS)})"


_SPOKEN_CLOCK = re.compile(  # "half past seven", "quarter to eight", "7 in the evening"
    rf"\b(?:(?:a\s+)?(?P<part>half|quarter)\s+(?P<rel>past|to)\s+(?P<of>{_HOUR})"
    rf"|(?P<hour>{_HOUR})\s+(?:o'clock|in\s+the\s+(?P<when>morning|afternoon|evening)))\b",
    re.IGNORECASE,
)


_ROUGHLY = re.compile(  # before a clock time in words that is then not checked
    r"\b(?:after|before|around|about|approximately|roughly|nearly|almost|sometime|by)\s+(?:at\s+)?$",
    re.IGNORECASE,
)


_TEMPERATURE = re.compile(
    r"(?<![\w.,])(?P<n>-?\d+(?:\.\d+)?)\s*(?:°\s*|degrees?\s+)"
    r"(?P<scale>c|f|celsius|fahrenheit|centigrade)\b",
    re.IGNORECASE,
)


_FUNCTION = r"(?:A|An|The|In|On|At|By|For|From|With|Of|To|And|But|Or|If|When|Only|About|Over|Under)"


_LABEL = re.compile(  # "Python 3.13", "version 2"; not a sentence's first word ("A 120 Wh bank")
    rf"(?:\b(?!{_FUNCTION}\b)[A-Z][\w-]*"
    r"|\b(?:version|v|release|model|number|no\.|chapter|section|route)|#)\s*$"
)


_OPENING_VERB = re.compile(r"(?:^|[.!?;:]\s+)[A-Z][a-z]+ing\s+$")  # "Bringing two dogs"


_COMPOUND = re.compile(r"\s*(?P<unit>[a-z]+)\s*/", re.IGNORECASE)


_UP = "rose|risen|rises?|rising|increased|increases?|increasing|grew|grows?|grown|growing|"
_UP += "climbed|climbs?|gained|gains?|jumped|jumps?|up"


_DOWN = "fell|falls?|fallen|falling|declined|declines?|declining|decreased|decreases?|"
_DOWN += "decreasing|dropped|drops?|down|lost|shrank|shrinks?|shrunk|slipped|slips?|slid"


_TREND = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\s+(?:by\s+)?$", re.IGNORECASE)


_RANGE = re.compile(r"\s*(?:to|-|\u2013|\u2014|or)\s*", re.IGNORECASE)


_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)  # "between 7 and 9 hours"


_TOLERANCE = Fraction(1, 10)  # "about X" is stated by a value within a tenth of X


_ORDINAL_HINT = re.compile(rf"\d(?:st|nd|rd|th)|{'|'.join(_ORDINAL_WORDS)}")


def _may_match(text: str) -> frozenset[re.Pattern[str]]:
    """The patterns of :func:`amounts` that may match ``text``: each leaves out a pattern only
    where the text lacks a digit or a word that every match of that pattern holds
    (tests/test_amount_scans.py), so that most sentences run few of them."""
    low = folded(text)
    digit = any(map(str.isdigit, text))
    may = [_NOON] if "noon" in low or "mid" in low else []
    if any(w in low for w in ("half", "quarter", "o'clock", "morning", "afternoon", "evening")):
        may.append(_SPOKEN_CLOCK)
    if digit:
        may += [_YEAR, _DATE]
        if ":" in text or "am" in low or "pm" in low or "a.m." in low or "p.m." in low:
            may.append(_CLOCK)
        if "°" in text or "degree" in low:
            may.append(_TEMPERATURE)
    if _ORDINAL_HINT.search(low):
        may.append(_ORDINAL)
    return frozenset(may)


def _spoken_clock(m: re.Match[str]) -> tuple[Fraction, bool]:
    """Minutes after midnight of a clock time in words, and whether it may be 12 hours later."""
    word = folded(m["of"] or m["hour"])
    hour = _HOURS.index(word) + 1 if word in _HOURS else int(word)
    minutes = hour % 12 * 60
    if m["part"]:
        step = 30 if folded(m["part"]) == "half" else 15
        minutes += step if folded(m["rel"]) == "past" else -step
    if m["when"]:
        return Fraction(minutes % 720 + (0 if folded(m["when"]) == "morning" else 720)), False
    return Fraction(minutes % 720), True


def _clock(m: re.Match[str]) -> tuple[Fraction, bool]:
    if m["h"] is not None:
        hour, minute, ap = int(m["h"]), int(m["m"]), m["ap"]
    else:
        hour, minute, ap = int(m["h12"]), int(m["m12"] or 0), m["ap12"]
    if ap:
        hour = hour % 12 + (12 if folded(ap) == "p" else 0)
    return Fraction(hour * 60 + minute), not ap and 1 <= hour <= 12


@lru_cache(maxsize=1 << 14)
def amounts(text: str) -> tuple[Amount, ...]:
    """The amounts, years, clock times and temperatures written in ``text`` that a claim must
    find stated, left to right."""
    if "-old" in folded(text):
        text = _AGE.sub(" ", text)  # same length: offsets hold
    may = _may_match(text)
    found: list[Amount] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    for m in _CLOCK.finditer(text) if _CLOCK in may else ():
        value, half_day = _clock(m)
        found.append(Amount(m.start(), m.end(), m.group(), "clock", value, half_day=half_day))
        taken.append(m.span())
    for m in _NOON.finditer(text) if _NOON in may else ():
        value = Fraction(0 if folded(m.group()) == "midnight" else 720)
        found.append(Amount(m.start(), m.end(), m.group(), "clock", value))
        taken.append(m.span())
    for m in _SPOKEN_CLOCK.finditer(text) if _SPOKEN_CLOCK in may else ():
        if free(*m.span()):
            value, half_day = _spoken_clock(m)
            loose = bool(_ROUGHLY.search(text, 0, m.start()))  # "after 9 o'clock": not checked
            found.append(
                Amount(
                    m.start(), m.end(), m.group(), "clock", value, loose=loose, half_day=half_day
                )
            )
            taken.append(m.span())
    for m in _TEMPERATURE.finditer(text) if _TEMPERATURE in may else ():
        n = Fraction(m["n"])
        celsius = (n - 32) * Fraction(5, 9) if folded(m["scale"]).startswith("f") else n
        found.append(Amount(m.start(), m.end(), m.group(), "temperature", celsius, number=n))
        taken.append(m.span())
    found.extend(_dates(text) if _DATE in may else ())
    taken.extend((d.start, d.end) for d in found if d.kind == "date")
    measures = quantities(text)
    measured = {q.start for q in measures if q.unit}  # "1500 metres" is no year
    for m in _YEAR.finditer(text) if _YEAR in may else ():
        if free(*m.span()) and m.start() not in measured:
            found.append(Amount(m.start(), m.end(), m.group(), "year", Fraction(m.group())))
            taken.append(m.span())
    # "the 27th", "the third": a count that names a thing
    for m in _ORDINAL.finditer(text) if _ORDINAL in may else ():
        if not free(*m.span()):
            continue  # the day of a date
        n = Fraction(m[1]) if m[1] else Fraction(_ORDINAL_WORDS[folded(m[2])])
        loose = not m[1]  # "first opened" is no count to check
        found.append(
            Amount(m.start(), m.end(), m.group(), "count", n, number=n, label=True, loose=loose)
        )
        taken.append(m.span())
    seen = False  # an amount before: "a year" of "25 paid days a year" is a rate's unit
    for q in measures:
        follows, seen = seen, True
        if not free(q.start, q.end):
            continue
        article = folded(q.surface.split()[0]) in ("a", "an")
        one = q.dimension == "count" and q.value == 1 and q.style != "digits"
        loose = (article and follows) or one  # "25 days a year", "one of the versions"
        kind, value, end = q.dimension, q.value, q.end
        size = unit_of(q.unit) if q.unit else None
        number = value / size[1] if size else value * 100 if q.unit == "%" else value
        compound = _COMPOUND.match(text, q.end) if q.dimension == "count" and not q.unit else None
        unit = unit_of(compound["unit"]) if compound else None
        if compound and unit and not unit[0].startswith("money"):  # "299,792 km/s": a length
            kind, value, end = unit[0], value * unit[1], compound.end("unit")
        label = (
            kind == "count"
            and not q.bound
            and bool(_LABEL.search(text, 0, q.start))
            and not _OPENING_VERB.search(text, 0, q.start)
        )
        found.append(
            Amount(q.start, end, text[q.start : end], kind, value, q.bound, number, label, loose)
        )
    for i, a in enumerate(found):  # "30 euros per month" is not "30 euros per year"
        if a.loose:
            continue
        if rate := per(text, a.end):
            a = replace(a, end=rate[1], surface=text[a.start : rate[1]], per=rate[0])
        if a.kind not in ("year", "date", "clock") and (
            trend := _TREND.search(text, max(0, a.start - 24), a.start)
        ):
            # "rose 4 percent" is not "fell 4 percent": the verb goes with the amount
            way = 1 if trend["up"] else -1
            a = replace(a, start=trend.start(), surface=text[trend.start() : a.end], trend=way)
        found[i] = a
    found.sort(key=lambda a: a.start)
    for i, (a, b) in enumerate(pairwise(found)):
        # one end of a range takes the other's unit: "8 to 10 hours" is 8 hours to 10 hours
        plain = a.kind == "count" and not a.label
        joined = _RANGE.fullmatch(text, a.end, b.start) or (
            folded(text[a.end : b.start].strip()) == "and" and _BETWEEN.search(text, 0, a.start)
        )
        if plain and b.kind != "count" and b.number and joined:
            found[i] = replace(a, kind=b.kind, value=a.value * b.value / b.number)
    return tuple(found)


def same_amount(claim: Amount, q: Amount) -> bool:
    """Whether the evidence's ``q`` states the claim's amount ``claim``."""
    if claim.per and q.per and claim.per != q.per:  # a rate: "600 a minute" is "10 a second"
        if claim.kind != q.kind:
            return False
        claim = replace(claim, value=claim.value / PERIOD[claim.per], per="")
        q = replace(q, value=q.value / PERIOD[q.per], per="")
    if claim.trend * q.trend < 0:
        return False
    if "date" in (claim.kind, q.kind):
        return _same_date(claim, q)
    if claim.kind != q.kind:
        # "30 seconds" is stated by "timeout (default 30): seconds to wait", "at the age of 3"
        # by "at the age of 3 years"
        plain = q if q.kind == "count" else claim if claim.kind == "count" else None
        other = claim if plain is q else q
        return plain is not None and not plain.label and plain.value == other.number

    if claim.kind == "clock":
        day = Fraction(720)
        return claim.value == q.value or (
            (claim.half_day or q.half_day) and claim.value % day == q.value % day
        )
    if claim.value == q.value:
        return True
    if claim.bound == q.bound and claim.bound in ("<=", ">="):
        return False  # two limits: "up to 200 ml" is not "100 ml or less"
    if claim.bound == "~" or q.bound == "~":
        return abs(claim.value - q.value) <= _TOLERANCE * abs(claim.value)
    if claim.bound == "<=" and not q.bound:
        return False  # "up to two years" says the most there is, not "16 weeks"
    if claim.bound in ("<", "<="):
        return q.value <= claim.value and q.bound not in (">", ">=")
    if claim.bound in (">", ">="):
        return q.value >= claim.value and q.bound not in ("<", "<=")
    # written with less precision: "1,200 staff" is 1,187 rounded, "15%" is 15.3%
    step = _step(claim)
    return (
        step is not None
        and step > (_step(q) or 0)
        and claim.kind not in ("year", "clock", "date")
        and abs(q.value - claim.value) * 2 < step
    )


def _dates(text: str) -> list[Amount]:
    """The dates of ``text`` as (year, month, day) in one number, 0 where not written; a range
    of days ("23-25 September 2011") gives one date for each end, and a date without a year
    takes the year of the date its range ends on ("from 23 February to 6 March 2011")."""
    out: list[Amount] = []
    for m in _DATE.finditer(text):
        month = next(g for g in (m["m1"], m["m2"], m["m3"], m["m4"]) if g)
        mo = int(month) if month.isdigit() else _MONTHS[month]
        year = int(next((g for g in (m["y1"], m["y2"], m["y3"], m["y4"]) if g), "0"))
        first = next((n for n in ("d1", "d2", "d4") if m[n]), None)
        last = "e1" if m["e1"] else "e2" if m["e2"] else None
        days = [int(re.sub(r"\D", "", m[n])) for n in (first, last) if n]
        if not 1 <= mo <= 12 or any(d > 31 for d in days):
            continue
        if first is None or last is None:
            value = Fraction(year * 10000 + mo * 100 + (days[0] if days else 0))
            out.append(Amount(m.start(), m.end(), m.group(), "date", value))
            continue
        split = m.end(first)  # one date for each end of the range
        for (start, end), d in zip(
            ((m.start(), split), (m.start(last), m.end())), days, strict=True
        ):
            out.append(
                Amount(start, end, text[start:end], "date", Fraction(year * 10000 + mo * 100 + d))
            )
    for i, (a, b) in enumerate(pairwise(out)):
        if a.value < 10000 and b.value >= 10000 and re.fullmatch(_TO, text[a.end : b.start]):
            out[i] = replace(a, value=a.value + b.value // 10000 * 10000)
    return out


def _same_date(claim: Amount, q: Amount) -> bool:
    """A date states each part of the claim's date it writes ("31 July 2025" states "July
    2025", "31 July" and "2025"); nothing else states a date."""
    if q.kind != "date" or claim.kind not in ("date", "year"):
        return False
    if claim.kind == "year":
        return q.value // 10000 == claim.value
    have = (q.value // 10000, q.value // 100 % 100, q.value % 100)
    want = (claim.value // 10000, claim.value // 100 % 100, claim.value % 100)
    return all(w == 0 or w == h for w, h in zip(want, have, strict=True))


_NUMERAL = re.compile(r"(\d[\d,]*)(?:\.(\d+))?")


def _step(a: Amount) -> Fraction | None:
    """The precision ``a`` is written with, in its value's units: 100 for "1,200", 0.1 million
    for "1.2 million", 0.001 for "15.3%"; ``None`` when it is not written in digits."""
    m = _NUMERAL.search(a.surface)
    if m is None or not a.number:
        return None
    digits = m[1].replace(",", "")
    written = Fraction(digits + (f".{m[2]}" if m[2] else ""))
    if not written:
        return None
    places = -len(m[2]) if m[2] else len(digits) - len(digits.rstrip("0"))
    return Fraction(10) ** places * a.value / written


def outside(text: str, found: Sequence[Amount], start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` without the amounts of ``found`` that begin in it (the pieces joined
    by spaces)."""
    end = len(text) if end is None else end
    kept, at = [], start
    for q in sorted((q for q in found if start <= q.start < end), key=lambda q: q.start):
        kept.append(text[at : q.start])
        at = max(at, q.end)
    kept.append(text[at:end])
    return " ".join(kept)
