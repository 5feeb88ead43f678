"""Amounts the evidence states: a claim is supported only if its premise states each of its
amounts, years, clock times and temperatures, in some unit or wording.

A small NLI model reads "The drop is 8 cm" against "The drop is 8 mm", or "up to 23 pounds"
against "up to 23 kg", as the same fact: every word but one matches. :func:`unstated` finds
the claim's amounts that the premise states nowhere (values compared exactly, across units and
wordings, by :mod:`~ene_core.quantities`); the engine then never calls the claim supported.
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
from dataclasses import dataclass, replace
from datetime import date
from fractions import Fraction
from functools import lru_cache
from itertools import pairwise

from .premise import TOKEN, content_words
from .quantities import PERIOD, YEAR_DAYS, per, quantities, spell, unit_of

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
_COMPUTATION = re.compile(
    r"\b(?:in total|totals?|together|combined|altogether|in all|lasted|lasts|difference|sum"
    r"|comes? to|came to|works? out|adds? up|saves?|saving|uses? up|on top of"
    r"|would (?:pay|cost|get|receive|use|earn|need))\b",
    re.IGNORECASE,
)
_COMPARISON = re.compile(  # after the amount: "six years after", "238 metres taller"
    r"\s+(?:more|less|fewer|longer|shorter|taller|higher|lower|older|younger|later|earlier"
    r"|after|before|apart|bigger|smaller|larger|greater|cheaper|heavier|lighter|faster|slower)\b",
    re.IGNORECASE,
)
_UP = "rose|risen|rises?|rising|increased|increases?|increasing|grew|grows?|grown|growing|"
_UP += "climbed|climbs?|gained|gains?|jumped|jumps?|up"
_DOWN = "fell|falls?|fallen|falling|declined|declines?|declining|decreased|decreases?|"
_DOWN += "decreasing|dropped|drops?|down|lost|shrank|shrinks?|shrunk|slipped|slips?|slid"
_TREND = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\s+(?:by\s+)?$", re.IGNORECASE)
_RANGE = re.compile(r"\s*(?:to|-|\u2013|\u2014|or)\s*", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)  # "between 7 and 9 hours"
_TOLERANCE = Fraction(1, 10)  # "about X" is stated by a value within a tenth of X


def _spoken_clock(m: re.Match[str]) -> tuple[Fraction, bool]:
    """Minutes after midnight of a clock time in words, and whether it may be 12 hours later."""
    word = (m["of"] or m["hour"]).lower()
    hour = _HOURS.index(word) + 1 if word in _HOURS else int(word)
    minutes = hour % 12 * 60
    if m["part"]:
        step = 30 if m["part"].lower() == "half" else 15
        minutes += step if m["rel"].lower() == "past" else -step
    if m["when"]:
        return Fraction(minutes % 720 + (0 if m["when"].lower() == "morning" else 720)), False
    return Fraction(minutes % 720), True


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
    text = _AGE.sub(" ", text)  # same length: offsets hold
    found: list[Amount] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    for m in _CLOCK.finditer(text):
        value, half_day = _clock(m)
        found.append(Amount(m.start(), m.end(), m.group(), "clock", value, half_day=half_day))
        taken.append(m.span())
    for m in _NOON.finditer(text):
        value = Fraction(0 if m.group().lower() == "midnight" else 720)
        found.append(Amount(m.start(), m.end(), m.group(), "clock", value))
        taken.append(m.span())
    for m in _SPOKEN_CLOCK.finditer(text):
        if free(*m.span()):
            value, half_day = _spoken_clock(m)
            loose = bool(_ROUGHLY.search(text, 0, m.start()))  # "after 9 o'clock": not checked
            found.append(
                Amount(
                    m.start(), m.end(), m.group(), "clock", value, loose=loose, half_day=half_day
                )
            )
            taken.append(m.span())
    for m in _TEMPERATURE.finditer(text):
        n = Fraction(m["n"])
        celsius = (n - 32) * Fraction(5, 9) if m["scale"].lower().startswith("f") else n
        found.append(Amount(m.start(), m.end(), m.group(), "temperature", celsius, number=n))
        taken.append(m.span())
    found.extend(_dates(text))
    taken.extend((d.start, d.end) for d in found if d.kind == "date")
    measures = quantities(text)
    measured = {q.start for q in measures if q.unit}  # "1500 metres" is no year
    for m in _YEAR.finditer(text):
        if free(*m.span()) and m.start() not in measured:
            found.append(Amount(m.start(), m.end(), m.group(), "year", Fraction(m.group())))
            taken.append(m.span())
    for m in _ORDINAL.finditer(text):  # "the 27th", "the third": a count that names a thing
        if not free(*m.span()):
            continue  # the day of a date
        n = Fraction(m[1]) if m[1] else Fraction(_ORDINAL_WORDS[m[2].lower()])
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
        article = q.surface.split()[0].lower() in ("a", "an")
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
            text[a.end : b.start].strip().lower() == "and" and _BETWEEN.search(text, 0, a.start)
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


def _sums(kind: str, stated: Sequence[Amount]) -> set[Fraction]:
    """Sums and differences of two of the ``stated`` amounts, as amounts of ``kind`` (two
    years, or the years of two dates, give a duration; two frequencies the gap between their
    periods: "every 12 weeks" and "every 16 weeks", four weeks)."""
    out: set[Fraction] = set()
    for i, p in enumerate(stated):
        for q in stated[i + 1 :]:
            if p.kind == q.kind == kind and not (p.label or q.label):
                out |= {p.value + q.value, abs(p.value - q.value)}
            elif kind == "time" and p.kind == q.kind == "frequency":
                out.add(abs(p.value - q.value))
    return out | (_gaps(stated) if kind == "time" else set())


def _gaps(stated: Sequence[Amount]) -> set[Fraction]:
    """The durations between two of the years (or dates' years) of ``stated``, in days."""
    years = sorted({_year(q) for q in stated} - {None})  # type: ignore[type-var]
    return {(b - a) * YEAR_DAYS for i, a in enumerate(years) for b in years[i + 1 :]}


def _hours_between(stated: Sequence[Amount]) -> set[Fraction]:
    """The durations between two of the clock times of ``stated`` (later minus earlier, in
    days): "at 4 pm and the second at 8 pm" gives four hours."""
    times = sorted({q.value for q in stated if q.kind == "clock"})
    return {(b - a) / 1440 for i, a in enumerate(times) for b in times[i + 1 :]}


def _year(q: Amount) -> Fraction | None:
    if q.kind == "date" and q.value >= 10000:
        return Fraction(q.value // 10000)
    return q.value if q.kind == "year" else None


def _ratios(stated: Sequence[Amount]) -> set[Fraction]:
    """The shares two amounts of one kind give: one of the other ("roughly half that": 4 and
    8 hours) and the change from one to the other ("grown by more than half": 140 to 212)."""
    plain = [q for q in stated if q.value and not (q.label or q.loose or q.bound)]
    out: set[Fraction] = set()
    for p in plain:
        for q in plain:
            if p is not q and p.kind == q.kind and p.kind not in ("year", "date", "clock"):
                out |= {p.value / q.value, abs(p.value / q.value - 1)}
    return out


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


_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n")


def _derived(
    c: Amount, claim: str, premise: str, stated: Sequence[Amount], claimed: Sequence[Amount]
) -> bool:
    """Whether the claim's ``c`` is computed from amounts the premise states: a duration
    between two years of one premise sentence ("used as a school for well over a century"), a
    share in words that two amounts give ("roughly half that"), the total of an evidence
    sentence's list of three or more ("450 g of dry ingredients"), a rate per thing times as many
    of them as the claim names (:func:`_rated`), or, where the claim words a
    computation, a sum, difference or product (exact, or within a tenth where the claim says
    "about": "roughly 165 years after")."""
    worded: set[Fraction] = set()  # compared as the claim words them: bounds, "about"
    sentences = _SENTENCE.split(premise)
    by_sentence = [amounts(sentence) for sentence in sentences]
    if c.kind == "time":
        for found in by_sentence:
            worded |= _gaps(found) | _hours_between(found)
    if c.kind == "share" and not re.search(r"\d|percent", c.surface, re.IGNORECASE):
        worded |= _ratios(stated)
    values = _rated(c, claim, premise, stated, claimed)  # needs no cue: the rate says it
    values |= _repeated(c, stated)
    if c.kind == "time" and c.per in ("", "week"):  # "open five days a week": Tuesday to Saturday
        days = _weekdays(premise) if c.per else _days_of_ranges(sentences)
        values |= {Fraction(n) for n in days}
    for found in by_sentence:
        values |= _listed(c.kind, found)
    if _COMPUTATION.search(claim) or _COMPARISON.match(claim, c.end):
        values |= _sums(c.kind, stated) | _products(c, stated, claimed)
        if c.bound == "~":
            worded |= values
    exact = replace(c, bound="", number=None, surface="", trend=0)
    return c.value in values or any(
        same_amount(c, replace(exact, value=v)) and abs(v - c.value) * 2 <= c.value
        for v in worded  # a bound as near its value: "over a century" is not 300 years
    )


_WEEKDAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?\.?"
_WEEKDAYS = re.compile(
    rf"\b(?P<a>{_WEEKDAY})\s*(?:-+|\u2013|to|through|thru|until|till)\s*(?P<b>{_WEEKDAY})(?!\w)",
    re.IGNORECASE,
)
_DAY_RANGE = re.compile(
    rf"\s*(?:-+|\u2013|to|until|till|through)\s+(?:{_WEEKDAY}\s+)?", re.IGNORECASE
)


def _weekdays(premise: str) -> set[int]:
    """How many days each range of weekdays spans, both ends in: "Tuesday to Saturday" 5."""
    spans = set()
    for m in _WEEKDAYS.finditer(premise):
        a, b = (_WEEKDAY_NAMES.index(m[n][:3].lower()) for n in ("a", "b"))
        spans.add((b - a) % 7 + 1)
    return spans


def _days_of_ranges(sentences: Sequence[str]) -> set[int]:
    """How many days each range of two dates of one of the ``sentences`` spans, both ends in
    ("from Monday 9 June to Friday 13 June": 5)."""
    spans = set()
    for sentence in sentences:
        dates = [q for q in amounts(sentence) if q.kind == "date" and q.value % 100]
        for a, b in pairwise(dates):
            if not _DAY_RANGE.fullmatch(sentence[a.end : b.start]):
                continue
            (ya, ra), (yb, rb) = divmod(int(a.value), 10000), divmod(int(b.value), 10000)
            year = ya or yb or 2001  # a year without 29 February where none is written
            try:
                first = date(year, ra // 100, ra % 100)
                last = date(yb or year, rb // 100, rb % 100)
            except ValueError:
                continue
            if first <= last:
                spans.add((last - first).days + 1)
    return spans


def _listed(kind: str, stated: Sequence[Amount]) -> set[Fraction]:
    """The total of three or more plain amounts of ``kind`` one sentence lists ("300 g of oats,
    100 g of almonds and 50 g of seeds": 450 g), if it lists so many."""
    listed = [q.value for q in stated if q.kind == kind and not (q.label or q.loose or q.bound)]
    return {sum(listed, Fraction(0))} if len(listed) >= 3 and kind != "year" else set()


_PER_THING = re.compile(  # "40 pounds per dog", "50 ml of colostrum per kg", "per 100 g"
    r"(?:\s+of(?:\s+[a-z]+){1,2})?\s+(?:per|for each|for every)\s+(?P<size>\d[\d,]*\s*)?"
    r"(?P<thing>(?:(?:square|cubic)\s+)?[a-z]+)\b",
    re.IGNORECASE,
)
#: plurals the stemmer does not join with their singular ("per person" for "four people")
_IRREGULAR = {"peopl": "person", "children": "child", "men": "man", "women": "woman"}


def _rated(
    c: Amount, claim: str, premise: str, stated: Sequence[Amount], claimed: Sequence[Amount]
) -> set[Fraction]:
    """Amounts of ``c``'s kind that a stated rate per thing gives for as many of those things as
    the claim names: "40 pounds per dog" for "two dogs" is 80 pounds, "50 ml per kg" for "a 4 kg
    lamb" 200 ml, "35 grams per square metre" for "20 square metres" 700 grams. The thing must
    follow the claim's count, or be a unit of the claim's amount ("per gram" of "2 kg")."""
    out: set[Fraction] = set()
    for p in stated:
        m = _PER_THING.match(premise, p.end)
        if p.kind != c.kind or p.label or p.loose or (p.per and p.per != c.per) or not m:
            continue
        thing, unit = _things(m["thing"]), unit_of(m["thing"])
        size = Fraction(m["size"].replace(",", "")) if m["size"] else Fraction(1)
        each = _PER_PERIOD.match(premise, m.end())  # "3 pounds per dog per night"
        for q in claimed:
            if q is c or q.label or q.loose or q.per:
                continue
            if unit and q.family == unit[0]:  # "per kg": the claim's mass in kg
                total = p.value * q.value / (unit[1] * size)
            elif q.kind == "count" and thing & _things(" ".join(TOKEN.findall(claim, q.end)[:2])):
                total = p.value * q.value / size
            else:
                continue
            out |= _over(total, each["period"].lower(), c, claim, claimed) if each else {total}
    return out


_PER_PERIOD = re.compile(
    r"\s+(?:per|a|an|each)\s+(?P<period>second|minute|hour|day|night|week|month|year)\b",
    re.IGNORECASE,
)


def _over(
    total: Fraction, period: str, c: Amount, claim: str, claimed: Sequence[Amount]
) -> set[Fraction]:
    """A rate per ``period`` of ``total`` over the claim's period ("840 dollars a year" at 70 a
    month) or over as many periods as it names ("for three nights")."""
    if c.per:
        return {total * PERIOD[c.per] / PERIOD[period]}
    return {
        total * q.value
        for q in claimed
        if q.kind == "count" and re.match(rf"\s+{period}s?\b", claim[q.end :], re.IGNORECASE)
    }


def _things(text: str) -> set[str]:
    """The content words of ``text``, irregular plurals as their singular."""
    return {_IRREGULAR.get(w, w) for w in content_words(text)}


def _repeated(c: Amount, stated: Sequence[Amount]) -> set[Fraction]:
    """What an amount given with a frequency comes to over the claim's period: "500 mg three
    times a day" is 1,500 mg a day, "2 g every 12 hours" 28 g a week (the frequency right after
    the amount)."""
    if not c.per:
        return set()
    return {
        p.value / q.value * PERIOD[c.per]
        for p, q in pairwise(stated)
        if p.kind == c.kind
        and not (p.per or p.label or p.loose)
        and q.kind == "frequency"
        and 0 <= q.start - p.end <= 2
    }


def _products(c: Amount, stated: Sequence[Amount], claimed: Sequence[Amount]) -> set[Fraction]:
    """Amounts of ``c``'s kind that a product of two gives: a count times a stated amount
    ("two halves of 40 minutes": 80 minutes; "ten monthly passes" of 118 euros), a stated
    rate times a duration ("17 euros per day" for four days), or a share of a stated amount or
    what a share leaves of it ("a 25% reduction" of 96 pounds: 72), the count, duration or share
    stated or another of the claim's own."""
    operands = [q for q in (*stated, *claimed) if q is not c and not (q.label or q.loose)]
    out: set[Fraction] = set()
    for p in stated:
        if p.kind != c.kind or p.label or p.loose:
            continue
        for q in operands:
            if q is p or q.bound:
                continue
            if q.kind == "count" and not q.per:
                out.add(p.value * q.value)
            elif q.kind == "time" and p.per and not q.per:
                out.add(p.value * q.value / PERIOD[p.per])
            elif q.kind == "share" and p.kind != "share" and q.value < 1:
                out |= {p.value * q.value, p.value * (1 - q.value)}  # a share, or what is left
    return out


@lru_cache(maxsize=1 << 16)
def _split(claim: str, premise: str) -> tuple[tuple[Amount, ...], tuple[Amount, ...]]:
    """The claim's amounts that ``premise`` does not state: ``(unstated, computed)``, where
    computed ones are derived from amounts it states (:func:`_derived`)."""
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
    derived = [c for c in missing if _derived(c, claim, premise, stated, wanted)]
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
            not _derived(d, claim, premise, stated, [w for w in wanted if w is not c])
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
