"""Comparisons and differences the evidence implies, checked by arithmetic.

A small NLI model cannot subtract: "Everest is 238 metres taller than K2." against "Everest is
8,849 m high." and "K2 is 8,611 m high." comes out contradicted (238 is written nowhere), and
"K2 is taller than Everest." comes out supported (every word is there). :func:`derive` does the
arithmetic: it finds the two amounts the claim compares, one for each side of its comparative
("Everest" / "K2"), and checks the order (and the difference, where the claim gives one).

Shapes read:

- a difference: "238 metres taller than K2", "six years after his defeat at Waterloo", "lasted
  116 years", "took eight years to dig" (two years of one sentence);
- an order: "cheaper than the express train", "higher in the third quarter than in the second",
  "after the annual general meeting".

Fail-closed: ``None`` (the model's verdict stands) unless each side of the comparison is bound to
exactly one of the evidence's amounts (the clause holding the amount shares more of that side's
own words than the other amount's clause does), both amounts are of one kind, and every content
word of the claim is in the sentences they come from. Deterministic and offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from fractions import Fraction
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from ..text.words import TOKEN, content_words
from .amounts import Amount, amounts, same_amount
from .quantities import PERIOD, YEAR_DAYS, unit_of

__all__ = ["Derivation", "derive"]


def _words(text: str) -> frozenset[str]:
    """The content words of ``text``, a final "e" dropped from four-letter stems too ("bake"
    and "baked": "bak"; the stemmer keeps it there, so that "note" is not "not")."""
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("e") else w for w in content_words(text))


_MORE = "more|longer|taller|higher|later|after|bigger|larger|greater|heavier"
_LESS = "less|fewer|shorter|lower|earlier|before|smaller|cheaper|lighter"
_COMPARATIVE = re.compile(rf"\b(?:more expensive|less expensive|{_MORE}|{_LESS})\b", re.IGNORECASE)
_GREATER = frozenset(_MORE.split("|")) | {"more expensive"}
_PRONOUNS = _words("one ones")  # "than the variable one"
_COMPARES = {  # the kinds some comparatives compare; the rest: any but years and times of day
    "cheaper": ("money",),
    "more expensive": ("money",),
    "less expensive": ("money",),
    "heavier": ("mass",),
    "lighter": ("mass",),
    "taller": ("length",),
    "longer": ("length", "time"),
    "shorter": ("length", "time"),
    "fewer": ("count",),
}
_EVENT = frozenset({"after", "before", "later", "earlier"})  # order in time: years, clock
_TOTAL = re.compile(
    r"\b(?:in total|a total of|total|together|combined|altogether|in all)\b", re.IGNORECASE
)
_BOUND_SIDE = {"<": "<", "<=": "<", ">": ">", ">=": ">"}  # "~" and "" are exact enough
_LASTED = re.compile(r"\b(?:lasted|lasts|lasting|took|takes)\b", re.IGNORECASE)
_DURATION_VERBS = _words("last took take")  # the claim's own verb for the gap
_CLAUSE = re.compile(r",\s+|;\s+|\s+(?:while|whereas|but|and)\s+", re.IGNORECASE)
# words a claim may add that no evidence needs to state
_MANNER = _words("actually exactly roughly approximately nearly almost around just only some")


@dataclass(frozen=True)
class Derivation:
    """What arithmetic says of a claim: its verdict, the indices of the premise parts holding
    the two amounts, and the sum as written (``"8,849 m - 8,611 m = 238 metres taller"``)."""

    verdict: Literal["supported", "contradicted"]
    parts: tuple[int, ...]
    working: str


@dataclass(frozen=True)
class _Held:
    """One of the evidence's amounts, with the part it is in and the words of its clause."""

    amount: Amount
    part: int
    sentence: frozenset[str]
    clause: frozenset[str]

    def share(self, words: frozenset[str]) -> float:
        """How much of ``words`` its sentence and its clause hold (0 to 1)."""
        return (len(self.sentence & words) + len(self.clause & words)) / (2 * len(words))


def derive(claim: str, parts: Sequence[str]) -> Derivation | None:
    """The verdict arithmetic gives ``claim`` against a premise of sentences ``parts``, or
    ``None`` where the claim compares nothing or the evidence does not bind its amounts."""
    return _derive(claim, tuple(parts))


@lru_cache(maxsize=1 << 14)
def _derive(claim: str, parts: tuple[str, ...]) -> Derivation | None:
    m = _COMPARATIVE.search(claim)
    lasted = _LASTED.search(claim) if m is None else None
    cue = _TOTAL.search(claim) if m is None and lasted is None else None
    if m is None and lasted is None and cue is None:
        return None  # compares nothing (most claims: the evidence is not read)
    held = [h for i, part in enumerate(parts) for h in _held(part, i)]
    if len(held) < 2:
        return None
    own = [a for a in amounts(claim) if not a.loose]
    if m is not None:
        return _comparison(claim, m, own, held, parts)
    if lasted is not None:
        return _duration(claim, own, held, parts)
    assert cue is not None
    return _total(claim, cue.group(), own, held, parts)


def _comparison(
    claim: str, m: re.Match[str], own: list[Amount], held: list[_Held], parts: tuple[str, ...]
) -> Derivation | None:
    """ "238 metres taller than K2", "cheaper than the express train": the evidence's amount
    of each side, their order, and their difference where the claim gives one."""
    word = m.group().lower()
    middle, than, after = claim[m.end() :].partition(" than ")
    if not than:
        if word not in ("after", "before"):
            return None  # "higher at altitude": against what, the evidence must say
        middle, after = "", middle
    if any(
        a.start <= m.start() < a.end
        or (m.end() <= a.start and not middle and a.start == len(claim) - len(after))
        for a in own
    ):
        return None  # a bound: "more than 20 people"
    before = [a for a in own if a.end <= m.start()]
    given = before[-1] if before and not claim[before[-1].end : m.start()].strip() else None
    if given and word in _EVENT and any(same_amount(given, h.amount) for h in held):
        return None  # stated as it is: a duration ("rest 10 minutes before serving")
    if any(a is not given for a in own):
        return None  # a claim that writes its amounts out: the model compares them
    if given is None and word in _EVENT:
        return None  # "after the war": which year is whose, only a difference pins down
    start = given.start if given else m.start()
    left = _words(claim[:start] + " " + middle)
    right = _words(after)
    left, right = left - right - _PRONOUNS, right - left - _PRONOUNS
    if not left or not right:
        return None
    pair = _bind(held, left, right, word)
    if pair is None:
        return None
    a, b = pair
    if not _covered(claim, [m.group(), *(x.surface for x in own)], parts, (a.part, b.part)):
        return None
    if a.amount.value == b.amount.value:
        return None
    ordered = (a.amount.value > b.amount.value) == (word in _GREATER)
    working = f"{a.amount.surface} vs {b.amount.surface}: {word}"
    if given is not None:
        gap = _difference(a.amount, b.amount, given.kind)
        if gap is None or not same_amount(given, gap):
            return None  # another difference: the amount check's rivals decide
        working = f"{a.amount.surface} - {b.amount.surface} = {given.surface} {word}"
    verdict: Literal["supported", "contradicted"] = "supported" if ordered else "contradicted"
    return Derivation(verdict, tuple(sorted({a.part, b.part})), working)


def _duration(
    claim: str, own: list[Amount], held: list[_Held], parts: tuple[str, ...]
) -> Derivation | None:
    """ "The war lasted 116 years", "The canal took eight years to dig": the claim's one
    unstated duration is the gap between two years of one evidence sentence that shares the
    claim's words."""
    unstated = [a for a in own if not any(same_amount(a, h.amount) for h in held)]
    if len(unstated) != 1 or unstated[0].kind != "time":
        return None
    span = unstated[0]
    words = _words(claim[: span.start])
    found = []
    for i, part in enumerate(parts):
        years = [h for h in held if h.part == i and h.amount.kind == "year"]
        if len(years) == 2 and words - _MANNER <= _words(part) | _DURATION_VERBS:
            found.append((i, years))
    if not found:
        return None
    i, (a, b) = found[0]
    gap = _difference(a.amount, b.amount, "time")
    if gap is None or not same_amount(span, gap):
        return None
    working = f"{b.amount.surface} - {a.amount.surface} = {span.surface}"
    return Derivation("supported", (i,), working)


def _total(
    claim: str, cue: str, own: list[Amount], held: list[_Held], parts: tuple[str, ...]
) -> Derivation | None:
    """ "45 minutes in total": the claim's one unstated amount is the sum of two of the
    evidence's amounts of its kind, in sentences that share the claim's words, and of no other
    two. A bound carries over: six months and "up to three months" are "at most nine"."""
    missing = [a for a in own if not any(same_amount(a, h.amount) for h in held)]
    if len(missing) != 1:
        return None
    total = missing[0]
    words = _words(claim) - _words(total.surface + " " + cue) - _MANNER
    near = [h for h in held if h.amount.kind == total.kind and h.sentence & words]
    found = [
        (a, b)
        for i, a in enumerate(near)
        for b in near[i + 1 :]
        if (both := _sum(a.amount, b.amount)) is not None
        and same_amount(total, both)
        and _BOUND_SIDE.get(both.bound, "") == _BOUND_SIDE.get(total.bound, "")
    ]
    if len(found) != 1:
        return None
    a, b = found[0]
    if not _covered(claim, [cue, total.surface], parts, (a.part, b.part)):
        return None
    working = f"{a.amount.surface} + {b.amount.surface} = {total.surface}"
    return Derivation("supported", tuple(sorted({a.part, b.part})), working)


def _sum(a: Amount, b: Amount) -> Amount | None:
    """``a + b``, bounded where either is ("up to"); ``None`` for bounds that pull apart."""
    sides = {_BOUND_SIDE.get(x.bound, "") for x in (a, b)} - {""}
    if len(sides) > 1:
        return None
    bound = {"<": "<=", ">": ">="}.get(sides.pop(), "") if sides else ""
    if not bound and "~" in (a.bound, b.bound):
        bound = "~"
    if a.label or b.label:
        return None
    return replace(a, value=a.value + b.value, bound=bound)


def _held(part: str, index: int) -> list[_Held]:
    """The amounts of one premise part, each with the words of its sentence and its clause."""
    out = []
    cuts = [0, *(m.end() for m in _CLAUSE.finditer(part)), len(part) + 1]
    sentence = _words(part)
    for a in amounts(part):
        if a.label or a.loose:
            continue
        start, end = next((s, e) for s, e in pairwise(cuts) if s <= a.start < e)
        out.append(_Held(a, index, sentence, _words(part[start:end])))
    return out


def _bind(
    held: list[_Held], left: frozenset[str], right: frozenset[str], word: str
) -> tuple[_Held, _Held] | None:
    """The evidence amount of each side of the comparison: of the amounts of one kind, the one
    whose sentence and clause share most of that side's own words (as a share of them), and
    more than of the other side's. ``None`` unless exactly one kind has one for each side."""
    found = []
    exact = [h for h in held if h.amount.bound in ("", "~")]
    for kind in sorted({h.amount.kind for h in exact if _comparable(h.amount.kind, word)}):
        of = [h for h in exact if h.amount.kind == kind]
        score = {id(h): (h.share(left), h.share(right)) for h in of}
        a = _best([h for h in of if score[id(h)][0] > score[id(h)][1]], left)
        b = _best([h for h in of if score[id(h)][1] > score[id(h)][0]], right)
        if a is None and b is not None:  # the other side's one amount sharing its words
            a = _only([h for h in of if h is not b and score[id(h)][0] > 0])
        elif b is None and a is not None:
            b = _only([h for h in of if h is not a and score[id(h)][1] > 0])
        if a is not None and b is not None:
            found.append((a, b))
    return found[0] if len(found) == 1 else None


def _best(candidates: list[_Held], words: frozenset[str]) -> _Held | None:
    """The candidate sharing most of ``words``; ``None`` on a tie."""
    ranked = sorted(candidates, key=lambda h: -h.share(words))
    if not ranked or (len(ranked) > 1 and ranked[0].share(words) == ranked[1].share(words)):
        return None
    return ranked[0]


def _only(candidates: list[_Held]) -> _Held | None:
    return candidates[0] if len(candidates) == 1 else None


def _comparable(kind: str, word: str) -> bool:
    """Whether amounts of ``kind`` are what ``word`` compares ("after": years and times)."""
    if word in _EVENT:
        return kind in ("year", "clock")
    wanted = _COMPARES.get(word)
    if wanted is not None:
        return kind.split(":")[0] in wanted
    return kind not in ("year", "clock")


def _difference(a: Amount, b: Amount, kind: str) -> Amount | None:
    """``|a - b|`` as an amount of ``kind`` (two years give a duration in days)."""
    gap = abs(a.value - b.value)
    if a.kind == b.kind == "year" and kind == "time":
        gap = gap * YEAR_DAYS
    elif a.kind != kind:
        return None
    return replace(a, kind=kind, value=gap, bound="")


def _covered(claim: str, skip: list[str], parts: tuple[str, ...], used: tuple[int, int]) -> bool:
    """Every content word of the claim (but the comparison and amounts) is in the used parts."""
    text = claim
    for s in skip:
        text = text.replace(s, " ")
    have = frozenset().union(*(_words(parts[i]) for i in set(used)))
    return _words(text) - _MANNER - _PRONOUNS <= have


# -- amounts computed from stated ones: totals, differences, products, rates ---------------


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
    years = sorted({year for q in stated if (year := _year(q)) is not None})
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


_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n")


def derivable(
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
