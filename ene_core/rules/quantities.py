"""Quantities written another way: re-express the evidence's amounts in the claim's words.

A small NLI model reads "12,000 metres" and "12 kilometres", "two dozen" and "twenty-four",
"quarterly" and "every three months", "up to 40" and "no more than 40" as different facts.
:func:`align` rewrites each amount of an evidence sentence that has the same value (and the
same bound) as an amount of the claim into the claim's own words, and re-expresses a length,
mass, duration or share in the claim's unit when the values differ, so the model compares like
with like. An exact amount just inside a claim's strict bound is written as that bound ("3
hours 45 minutes" for "just under four hours"; within :data:`_NEAR`). Every rewrite keeps
what the sentence entails: values are exact fractions and a rewrite happens only where the two
sides are provably equal, the conversion is exact, or the amount provably meets the bound.
Deterministic and offline; no model is involved.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = ["Quantity", "align", "folded", "quantities", "spell", "unit_of"]

_SMALL_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS_WORDS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SMALL = {w: i for i, w in enumerate(_SMALL_WORDS)}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(_TENS_WORDS)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_ORDINAL_SHARES = {
    "half": 2,
    "halves": 2,
    "third": 3,
    "thirds": 3,
    "quarter": 4,
    "quarters": 4,
    "fifth": 5,
    "fifths": 5,
    "tenth": 10,
    "tenths": 10,
}
_DAY = Fraction(1)
_MONTH = Fraction(36525, 1200)  # days: a twelfth of a Julian year
YEAR_DAYS = Fraction(36525, 100)  # a Julian year, as every module counts it
# unit word -> (dimension, size in the dimension's base unit)
_UNITS: dict[str, tuple[str, Fraction]] = {}


def _unit(dimension: str, size: Fraction | int, *names: str) -> None:
    for name in names:
        _UNITS[name] = (dimension, Fraction(size))


_unit("length", Fraction(1, 1000), "mm", "millimetre", "millimetres", "millimeter", "millimeters")
_unit("length", Fraction(1, 100), "cm", "centimetre", "centimetres", "centimeter", "centimeters")
_unit("length", 1, "m", "metre", "metres", "meter", "meters")
_unit("length", 1000, "km", "kilometre", "kilometres", "kilometer", "kilometers")
_unit("length", Fraction(1609344, 1000), "mile", "miles")
_unit("mass", Fraction(1, 10**9), "mcg", "µg", "microgram", "micrograms")
_unit("mass", Fraction(1, 10**6), "mg", "milligram", "milligrams")
_unit("mass", Fraction(1, 1000), "g", "gram", "grams")
_unit("mass", 1, "kg", "kilogram", "kilograms", "kilo", "kilos")
_unit("mass", 1000, "tonne", "tonnes", "metric ton", "metric tons")
_unit("time", Fraction(1, 86400), "second", "seconds", "sec", "secs")
_unit("time", Fraction(1, 1440), "minute", "minutes", "min", "mins")
_unit("time", Fraction(1, 24), "hour", "hours", "hr", "hrs")
_unit("time", _DAY, "day", "days")
_unit("time", 7, "week", "weeks")
_unit("time", 14, "fortnight", "fortnights")
_unit("time", _MONTH, "month", "months")
_unit("time", YEAR_DAYS, "year", "years")
_unit("time", 10 * YEAR_DAYS, "decade", "decades")
_unit("time", 100 * YEAR_DAYS, "century", "centuries")
_unit("area", 1, "square metre", "square metres", "square meter", "square meters", "sq m")
_unit("area", Fraction(9290304, 10**8), "square foot", "square feet", "sq ft")
_unit("area", 10**4, "hectare", "hectares")
_unit("area", Fraction(40468564224, 10**7), "acre", "acres")
_unit(
    "area", 10**6, "square kilometre", "square kilometres", "square kilometer", "square kilometers"
)
_unit("volume", Fraction(1, 1000), "ml", "millilitre", "millilitres", "milliliter", "milliliters")
_unit("volume", Fraction(1, 100), "cl", "centilitre", "centilitres", "centiliter", "centiliters")
_unit("volume", 1, "litre", "litres", "liter", "liters")
_unit("energy", 1000, "kj", "kilojoule", "kilojoules")
_unit("energy", 4184, "kcal", "kilocalorie", "kilocalories")
_unit("energy", 3600, "wh", "watt-hour", "watt-hours")
_unit("energy", 3600000, "kwh", "kilowatt-hour", "kilowatt-hours")
_unit("speed", Fraction(1609344, 3600000), "mph")
_unit("data", 1, "byte", "bytes")
_unit("data", 10**3, "kb", "kilobyte", "kilobytes")
_unit("data", 10**6, "mb", "megabyte", "megabytes")
_unit("data", 10**9, "gb", "gigabyte", "gigabytes")
_unit("data", 10**12, "tb", "terabyte", "terabytes")
_unit("data", 2**10, "kib", "kibibyte", "kibibytes")
_unit("data", 2**20, "mib", "mebibyte", "mebibytes")
_unit("data", 2**30, "gib", "gibibyte", "gibibytes")
_unit("data", 2**40, "tib", "tebibyte", "tebibytes")
_unit("money", 1, "dollar", "dollars", "usd", "euro", "euros", "eur", "pound", "pounds", "gbp")
# temperature: base unit degrees Celsius; a scale *and an offset* (value = (n + offset) * size)
_unit("temperature", 1, "°c", "ºc", "degrees celsius", "degrees centigrade", "degrees c")
_FAHRENHEIT = ("°f", "ºf", "degrees fahrenheit", "degrees f")
_unit("temperature", Fraction(5, 9), *_FAHRENHEIT)
_OFFSET = dict.fromkeys(_FAHRENHEIT, Fraction(-32))
_CURRENCY = {"$": "dollars", "€": "euros", "£": "sterling"}
_CURRENCY_OF = {"eur": "euros", "pou": "sterling", "gbp": "sterling"}  # by a unit's first letters
_UNIT_WORDS = sorted(_UNITS, key=len, reverse=True)


def unit_of(word: str) -> tuple[str, Fraction] | None:
    """``(dimension, size in the dimension's base unit)`` of a unit word, or ``None``."""
    return _UNITS.get(folded(word))


_FREQUENCY_WORDS = {
    "hourly": Fraction(1, 24),
    "daily": _DAY,
    "nightly": _DAY,
    "weekly": Fraction(7),
    "fortnightly": Fraction(14),
    "monthly": _MONTH,
    "quarterly": 3 * _MONTH,
    "semiannually": 6 * _MONTH,
    "semi-annually": 6 * _MONTH,
    "annually": YEAR_DAYS,
    "yearly": YEAR_DAYS,
}
_TIMES = {"once": 1, "twice": 2, "thrice": 3}


def _period(unit: str) -> Fraction:
    """Days in one ``unit`` of a frequency ("every quarter", "once a quarter": three months; a
    quarter is no time unit elsewhere, where "a quarter" is a share)."""
    return 3 * _MONTH if unit.startswith("quarter") else _UNITS[unit][1]


_BOUNDS = {
    "up to": "<=",
    "no more than": "<=",
    "not more than": "<=",
    "at most": "<=",
    "a maximum of": "<=",
    "as long as": "<=",
    "as much as": "<=",
    "as many as": "<=",
    "as high as": "<=",
    "at least": ">=",
    "as little as": ">=",
    "as few as": ">=",
    "as low as": ">=",
    "no fewer than": ">=",
    "no less than": ">=",
    "not less than": ">=",
    "a minimum of": ">=",
    "more than": ">",
    "longer than": ">",
    "larger than": ">",
    "greater than": ">",
    "bigger than": ">",
    "higher than": ">",
    "heavier than": ">",
    "over": ">",
    "above": ">",
    "fewer than": "<",
    "less than": "<",
    "shorter than": "<",
    "smaller than": "<",
    "lower than": "<",
    "lighter than": "<",
    "under": "<",
    "below": "<",
    "about": "~",
    "around": "~",
    "approximately": "~",
    "roughly": "~",
    "nearly": "~",
    "almost": "~",
    "some": "~",
}

_AND_PART = {
    "a half": Fraction(1, 2),
    "a quarter": Fraction(1, 4),
    "three quarters": Fraction(3, 4),
}


def _and_part(text: str) -> Fraction:
    """The part "and a half", "a quarter" or "three quarters" adds."""
    return _AND_PART[" ".join(folded(text).split()[-2:])]


#: "and a half", "and a quarter", "and three quarters" after a number or a unit
_AND_PARTS = "|".join(k.replace(" ", r"\s+") for k in _AND_PART)
_W = "|".join([*_SMALL, *_TENS])
_WORD_NUMBER = rf"(?:{_W})(?:-(?:{_W}))?"
_WORDS = rf"{_WORD_NUMBER}(?:\s+(?:and\s+)?(?:{_WORD_NUMBER}|hundred|thousand|million|billion))*"
_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_NUMBER = (
    rf"(?:(?P<digits>{_DIGITS})(?:\s+(?P<scale>hundred|thousand|million|billion))?"
    rf"|(?P<words>{_WORDS})|(?P<article>an?)(?=\s+(?:dozen|{'|'.join(_UNIT_WORDS)})\b)"
    r"(?!\s+second\s+[a-z]))"  # "a second dose" is an ordinal
    rf"(?P<half>\s+and\s+(?:{_AND_PARTS}))?"
    r"(?:\s+(?P<dozen>dozen))?"
)
_UNIT = (  # not a compound unit: "m/s", "km²" are other dimensions
    rf"(?:\s*-?\s*(?P<unit>{'|'.join(re.escape(u) for u in _UNIT_WORDS)})\b(?!\s*/|[²³]))"
)
_SHARE = (
    rf"(?:(?P<share_n>a|an|one|{_WORD_NUMBER})\s+(?P<share_d>{'|'.join(_ORDINAL_SHARES)})\b"
    r"|(?P<bare_half>half)\b(?!\s+an?\s)"
    r"|(?P<percent_n>\d+(?:\.\d+)?|" + _WORD_NUMBER + r")\s*(?:%|\s+percent\b|\s+per\s+cent\b))"
)
#: unit words a part of one can be written of ("half a litre", "a quarter of a kilo"): not money
_PART_UNITS = "|".join(
    u for u in _UNIT_WORDS if u.isalpha() and not _UNITS[u][0].startswith("money")
)
_HALF_UNIT = rf"(?P<half_of>half\s+an?\s+(?P<half_unit>{_PART_UNITS}))\b"
_PART_OF_UNIT = (  # "a quarter of an hour", "three quarters of a mile", "a third of the year"
    rf"(?:(?P<part_n>a|an|one|{_WORD_NUMBER})\s+(?P<part_d>{'|'.join(_ORDINAL_SHARES)})\s+of\s+"
    rf"(?:an?|one|the)\s+(?P<part_unit>{_PART_UNITS}))\b"
)
_UNIT_AND_HALF = (  # "an hour and a half", "a litre and a half", "a mile and a quarter"
    rf"(?:an?\s+(?P<uh_unit>{_PART_UNITS})\s+and\s+"
    rf"(?P<uh_part>{_AND_PARTS}))\b"
)
_FREQUENCY_WORD = "|".join(re.escape(w) for w in _FREQUENCY_WORDS)
_FREQUENCY = (
    rf"(?:(?P<freq_word>{_FREQUENCY_WORD})\b"
    rf"|(?:every|each)\s+(?:(?P<every_n>\d+|{_WORD_NUMBER}|other|half)\s+)?"
    r"(?P<every_unit>second|minute|hour|day|week|fortnight|month|quarter|year|decade|century"
    r"|seconds|minutes|hours|days|weeks|months|quarters|years|decades|centuries)\b"
    rf"|(?P<times>once|twice|thrice|(?:\d+|{_WORD_NUMBER})\s+times)\s+(?:(?:a|an|per|each|every)\s+"
    r"(?P<times_unit>second|minute|hour|day|week|fortnight|month|quarter|year|decade|century)"
    rf"|(?P<times_word>{_FREQUENCY_WORD}))\b)"
)
_BOUND = (
    r"(?:(?P<bound>"
    + "|".join(re.escape(b) for b in sorted(_BOUNDS, key=len, reverse=True))
    + r")\s+)?"
)
_CURRENCY_SIGN = r"(?:(?P<currency>[$€£])\s?)"
_OR_BOUNDS = {  # after the amount: "100 ml or less", "18 or older"
    **dict.fromkeys(("less", "fewer", "lower", "below", "under", "younger", "shorter"), "<="),
    **dict.fromkeys(("more", "greater", "higher", "above", "over", "older", "longer"), ">="),
}
_OR_BOUND = rf"(?:\s+(?:or|and)\s+(?P<or_bound>{'|'.join(_OR_BOUNDS)})\b)?"
_PATTERN = re.compile(
    rf"(?<![\w$€£.,-])(?:{_FREQUENCY}|{_BOUND}(?:{_HALF_UNIT}|{_PART_OF_UNIT}|{_UNIT_AND_HALF}|{_SHARE}"
    rf"|{_CURRENCY_SIGN}?{_NUMBER}{_UNIT}?{_OR_BOUND}))(?![\w-]|[.,]\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """One amount in a text: ``text[start:end]`` means ``bound value`` in ``dimension``.

    ``unit`` is the unit word as written (or ``""``), ``style`` how the number is written
    (``digits``, ``words`` or ``phrase``).
    """

    start: int
    end: int
    surface: str
    dimension: str
    value: Fraction
    bound: str
    unit: str
    style: str


def _words_value(text: str) -> int | None:
    total = current = 0
    previous = ""
    for token in re.split(r"[\s-]+", folded(text)):
        if token == "and":
            continue
        if token in _SMALL or token in _TENS:
            value = _SMALL.get(token, _TENS.get(token, 0))
            # "twenty four" is one number, "four four" or "twelve seven" are not
            if previous in _SMALL or (previous in _TENS and token in _TENS):
                return None
            if previous in _TENS and value >= 10:
                return None
            current += value
        elif token == "hundred":
            if current == 0 or current >= 100:
                return None
            current *= 100
        elif token in _SCALES:
            total += max(current, 1) * _SCALES[token]
            current = 0
        else:
            return None
        previous = token
    return total + current


def _number(text: str) -> Fraction | None:
    text = folded(text.strip())
    if re.fullmatch(_DIGITS, text):
        return Fraction(text.replace(",", ""))
    if text in ("a", "an", "one"):
        return Fraction(1)
    value = _words_value(text)
    return None if value is None else Fraction(value)


def _measure(m: re.Match[str]) -> tuple[str, Fraction, str, str] | None:
    """``(dimension, value in base units, unit as written, style)`` of one match."""
    g = m.groupdict()
    if g["freq_word"]:
        return "frequency", _FREQUENCY_WORDS[folded(g["freq_word"])], "", "phrase"
    if g["every_unit"]:
        unit = folded(g["every_unit"])
        n = g["every_n"]
        steps = {"other": Fraction(2), "half": Fraction(1, 2)}
        count = steps.get(folded(n), _number(n)) if n else Fraction(1)
        if count is None or (n is None and unit.endswith("s")):
            return None
        return "frequency", count * _period(unit), "", "phrase"
    if g["times"]:
        times = folded(g["times"])
        count = Fraction(_TIMES[times]) if times in _TIMES else _number(times[: -len(" times")])
        if not count:
            return None
        unit = g["times_unit"]  # "three times a day"; else "three times daily"
        period = _period(folded(unit)) if unit else _FREQUENCY_WORDS[folded(g["times_word"])]
        return "frequency", period / count, "", "phrase"
    if g["half_of"]:
        dimension, size = _UNITS[folded(g["half_unit"])]
        return dimension, size / 2, g["half_unit"], "phrase"
    if g["part_unit"]:
        n = _number(g["part_n"])
        if n is None:
            return None
        share = n / _ORDINAL_SHARES[folded(g["part_d"])]
        dimension, size = _UNITS[folded(g["part_unit"])]
        return dimension, size * share, g["part_unit"], "phrase"
    if g["uh_unit"]:
        dimension, size = _UNITS[folded(g["uh_unit"])]
        return dimension, size * (1 + _and_part(g["uh_part"])), g["uh_unit"], "phrase"
    if g["share_d"]:
        n = _number(g["share_n"])
        if n is None:
            return None
        return "share", n / _ORDINAL_SHARES[folded(g["share_d"])], "", "phrase"
    if g["bare_half"]:
        return "share", Fraction(1, 2), "", "phrase"
    if g["percent_n"]:
        n = _number(g["percent_n"])
        return None if n is None else ("share", n / 100, "%", "digits")
    if g["digits"]:
        value = Fraction(g["digits"].replace(",", ""))
        if g["scale"]:
            value *= _SCALES[folded(g["scale"])]
        style = "digits"
    elif g["words"]:
        number = _number(g["words"])
        if number is None:
            return None
        value, style = number, "words"
    elif g["article"]:
        value, style = Fraction(1), "words"
    else:
        return None
    if g["half"]:  # "two and a half", "one and a quarter"
        value += _and_part(g["half"])
    if g["dozen"]:
        value *= 12
        style = "phrase"
    if g["currency"]:
        return "money:" + _CURRENCY[g["currency"]], value, "", style
    if g["unit"]:
        dimension, size = _UNITS[folded(g["unit"])]
        if dimension == "money":
            dimension = "money:" + _CURRENCY_OF.get(folded(g["unit"])[:3], "dollars")
        return dimension, (value + _OFFSET.get(folded(g["unit"]), 0)) * size, g["unit"], style
    # "a dozen eggs" is 12; "a" alone is no count, and "half a dozen" is not read
    if g["article"] and (not g["dozen"] or folded(m.string[: m.start()]).endswith("half ")):
        return None
    digits = g["digits"] or ""
    if re.fullmatch(r"1\d{3}|20\d{2}|21\d{2}", digits) and not g["bound"]:
        return None  # a year, not an amount
    return "count", value, "", style


_HINT = re.compile(
    rf"\b(?:{_W}|hundred|thousand|million|dozen|half|third|quarter|fifth|tenth|percent|once|"
    rf"twice|thrice|every|each|hour|minute|day|week|month|year|decade|centur|metre|meter|mile|"
    rf"gram|kilo|tonne|litre|liter|dollar|euro|{'|'.join(_FREQUENCY_WORDS)}|"
    rf"{'|'.join(u for u in _UNIT_WORDS if u.isalpha())})",  # "a fortnight", "a megabyte"
    re.IGNORECASE,
)


#: where a match of :data:`_PATTERN` may begin (its look-behind holds): a run of letters, a digit
#: or a currency sign
_START = re.compile(r"(?<![\w$€£.,-])(?:([^\W\d_]+)|[\d$€£])")
#: the letters that match an ASCII letter in a pattern ignoring case without being one, and the
#: Greek mu, which a pattern ignoring case takes for the micro sign of "µg"
_FOLD = str.maketrans(
    {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k", "\u039c": "µ", "\u03bc": "µ"}
)
#: a match that begins with letters begins with one of these words (or a number word with a unit
#: written on: "fivekm")
_OPENERS = frozenset(
    [b.split()[0] for b in _BOUNDS]
    + [w.split("-")[0] for w in _FREQUENCY_WORDS]
    + [*_TIMES, "every", "each", "a", "an", "one", "half", *_SMALL, *_TENS]
)
_NUMBER_WORDS = (*_SMALL, *_TENS)


def folded(text: str) -> str:
    """``text`` lower-cased with the four letters that match an ASCII letter in a pattern ignoring
    case written as that letter (and a Greek mu as the micro sign): a pattern ignoring case
    matches ASCII letters of ``text`` only where this holds the same letters lower-cased (for quick
    checks before a pattern is run), and a matched word looked up folded finds its entry."""
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


def _matches_of(text: str) -> Iterator[re.Match[str]]:
    """``_PATTERN.finditer(text)``, trying the pattern only where a match may begin: the same
    matches (tests/test_amount_scans.py), without running its many branches at every word."""
    end = 0
    for c in _START.finditer(text):
        at = c.start()
        if at < end:
            continue
        if c[1] is not None:
            word = folded(c[1])
            if word not in _OPENERS and not word.startswith(_NUMBER_WORDS):
                continue
        m = _PATTERN.match(text, at)
        if m is not None:
            yield m
            end = m.end()


@lru_cache(maxsize=1 << 14)
def quantities(text: str) -> tuple[Quantity, ...]:
    """The amounts written in ``text``, left to right."""
    if not any(map(str.isdigit, text)) and not _HINT.search(text):
        return ()
    found = []
    for m in _matches_of(text):
        measured = _measure(m)
        if measured is None:
            continue
        dimension, value, unit, style = measured
        bound = _BOUNDS[re.sub(r"\s+", " ", folded(m["bound"]))] if m["bound"] else ""
        bound = bound or _OR_BOUNDS.get(folded(m["or_bound"] or ""), "")
        found.append(Quantity(m.start(), m.end(), m.group(), dimension, value, bound, unit, style))
    return tuple(_compounds(text, found))


_JOIN = re.compile(r",?\s+(?:and\s+)?|\s*,\s*")


def _compounds(text: str, found: list[Quantity]) -> list[Quantity]:
    """``found`` with each duration written in two units joined: "8 minutes and 20 seconds" is
    one amount of 500 seconds (the second unit smaller, its amount less than one of the first)."""
    out: list[Quantity] = []
    for q in found:
        p = out[-1] if out else None
        if (
            p is not None
            and p.dimension == q.dimension == "time"
            and p.unit
            and q.unit
            and not q.bound
            and _JOIN.fullmatch(text, p.end, q.start)
        ):
            big, small = _UNITS[folded(p.unit)][1], _UNITS[folded(q.unit)][1]
            if small < big and q.value < big:
                out[-1] = Quantity(
                    p.start, q.end, text[p.start : q.end], "time", p.value + q.value, p.bound,
                    q.unit, p.style,
                )  # fmt: skip
                continue
        out.append(q)
    return out


_ABBREVIATIONS = {  # unit words with no plural form
    "km",
    "m",
    "cm",
    "mm",
    "kg",
    "g",
    "hr",
    "hrs",
    "min",
    "mins",
    "sec",
    "secs",
}


def _format(value: Fraction, like: Quantity) -> str | None:
    """``value`` (in base units) written with ``like``'s unit and number style, if exact."""
    if like.dimension == "share" and like.style == "phrase":
        return _fraction(value)
    if like.dimension == "share":
        size = Fraction(1, 100)
    else:
        size = _UNITS[folded(like.unit)][1] if folded(like.unit) in _UNITS else Fraction(1)
    n = value / size - _OFFSET.get(folded(like.unit), 0)
    if n.denominator not in (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000):
        return None  # not a short decimal: the conversion would round
    number = f"{float(n):.3f}".rstrip("0").rstrip(".") if n.denominator != 1 else str(n)
    if n >= 10_000 and n.denominator == 1:
        number = f"{n.numerator:,}"
    if like.style == "words" and n.denominator == 1 and n < 100:
        number = spell(int(n))
    if like.dimension == "share":
        return f"{number}%" if "%" in like.surface else f"{number} percent"
    unit = like.unit
    if unit and folded(unit) not in _ABBREVIATIONS:
        singular = _singular(unit)
        unit = singular if n == 1 else _plural(singular)
    at = folded(like.surface).rfind(folded(like.unit))
    before = like.surface[at - 1] if at > 0 else " "
    gap = "" if before.isdigit() else "-" if before == "-" else " "
    return f"{number}{gap}{unit}" if unit else number


_DENOMINATORS = {2: "half", 3: "third", 4: "quarter", 5: "fifth", 10: "tenth"}


def _fraction(value: Fraction) -> str | None:
    """``1/4`` as "a quarter", ``2/3`` as "two thirds"; ``None`` for other values."""
    name = _DENOMINATORS.get(value.denominator)
    if name is None or not 0 < value < 1:
        return None
    if value.numerator == 1:
        return "half" if name == "half" else f"a {name}"
    return f"{spell(value.numerator)} {name}s"


def _singular(word: str) -> str:
    if folded(word).endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if folded(word).endswith("s") else word


def _plural(word: str) -> str:
    return (
        word[:-1] + "ies"
        if folded(word).endswith("y") and word[-2:-1] not in "aeiou"
        else word + "s"
    )


def spell(n: int) -> str:
    """0-999 in words ("forty-two", "three hundred and five")."""
    if n < 20:
        return _SMALL_WORDS[n]
    if n < 100:
        tens = _TENS_WORDS[n // 10 - 2]
        return tens if n % 10 == 0 else f"{tens}-{_SMALL_WORDS[n % 10]}"
    rest = n % 100
    return f"{_SMALL_WORDS[n // 100]} hundred" + (f" and {spell(rest)}" if rest else "")


def _matches(claim: tuple[Quantity, ...], q: Quantity) -> tuple[str, bool] | None:
    """The claim's words for the evidence amount ``q`` and whether they open the claim, or
    ``None`` to leave ``q`` as written."""
    same = [c for c in claim if c.dimension == q.dimension]
    for c in same:
        if c.value == q.value and c.bound == q.bound:
            return None if folded(c.surface) == folded(q.surface) else (c.surface, c.start == 0)
    if not same or q.bound:
        return None
    c = same[0]
    if c.bound in ("<", ">"):  # "3 hours 45 minutes" is "just under four hours"
        near = c.value * _NEAR if c.bound == "<" else c.value / _NEAR
        inside = near <= q.value < c.value if c.bound == "<" else c.value < q.value <= near
        return (c.surface, c.start == 0) if inside else None
    if c.bound:
        return None
    # a different value: the same amount in the claim's unit or style (its first amount of
    # this kind, so that aligning twice changes nothing), where that is exact
    units = c.unit and q.unit and folded(c.unit) != folded(q.unit)
    convert = (
        (q.dimension in ("length", "mass", "time") and units and c.style != "phrase")
        or (q.dimension == "share" and (c.style == "phrase") != (q.style == "phrase"))
        or (q.dimension == "count" and q.style == "phrase" and c.style != "phrase")
    )
    written = _format(q.value, c) if convert else None
    return None if written is None else (written, False)


_PER = re.compile(  # "30 euros per month", "100 requests per minute" (one word between)
    r"(?:\s+(?!per\b|a\b|an\b|each\b|every\b|of\b|in\b|for\b|and\b|or\b)[a-z]+)?"
    r"\s*(?:per|a|an|each|every)\s+(day|week|month|year|hour|minute|second|night|annum)\b",
    re.IGNORECASE,
)
#: a rate's period in days
PERIOD = {
    "second": Fraction(1, 86400),
    "minute": Fraction(1, 1440),
    "hour": Fraction(1, 24),
    "day": Fraction(1),
    "night": Fraction(1),
    "week": Fraction(7),
    "month": _MONTH,
    "year": YEAR_DAYS,
}


def per(text: str, end: int) -> tuple[str, int] | None:
    """The period of a rate written after the amount that ends at ``end`` ("month" of "30 euros
    per month", "annum" as "year") and where the rate ends; ``None`` for no rate."""
    m = _PER.match(text, end)
    return (folded(m[1]).replace("annum", "year"), m.end()) if m else None


def _rate(
    sentence: str, q: Quantity, claim: str, wanted: tuple[Quantity, ...]
) -> tuple[str, int] | None:
    """The claim's words for the rate that ``q`` opens in ``sentence``, and where that rate ends,
    where the claim writes the same rate over another period ("600 requests per minute" for
    "roughly 10 requests per second")."""
    mine = per(sentence, q.end)
    if mine is None or q.bound:
        return None
    for c in wanted:
        theirs = per(claim, c.end)
        if (
            theirs
            and c.dimension == q.dimension
            and theirs[0] != mine[0]
            and c.bound in ("", "~")
            and q.value / PERIOD[mine[0]] == c.value / PERIOD[theirs[0]]
        ):
            return claim[c.start : theirs[1]], mine[1]
    return None


#: how near a strict bound an exact amount must be to be written as it: "3 hours 45 minutes" is
#: "under four hours", "30 minutes" is left to the model (a limit, "up to" or "at least", never is)
_NEAR = Fraction(3, 4)

_RANGE_BEFORE = re.compile(rf"(?:\d|\b(?:{_W}))\s*(?:to|-|\u2013|\u2014|and|or)\s*$", re.IGNORECASE)
_RANGE_AFTER = re.compile(rf"\s*(?:to|-|\u2013|\u2014|and|or)\s*(?:\d|(?:{_W})\b)", re.IGNORECASE)


def _fit_case(replacement: str, at_start: bool, from_start: bool) -> str:
    if at_start:
        return replacement[:1].upper() + replacement[1:]
    first = replacement.split()[0] if replacement.split() else ""
    if from_start and first[:1].isupper() and not (len(first) > 1 and first.isupper()):
        return replacement[:1].lower() + replacement[1:]
    return replacement


@lru_cache(maxsize=1 << 14)
def align(sentence: str, claim: str) -> str:
    """``sentence`` with its amounts written as ``claim`` writes the same amounts."""
    wanted = quantities(claim)
    if not wanted:
        return sentence
    found = quantities(sentence)
    if not found:
        return sentence
    out, last = [], 0
    for q in found:
        if _RANGE_BEFORE.search(sentence, 0, q.start) or _RANGE_AFTER.match(sentence, q.end):
            continue  # one end of a range: "12 to 14 hours" is read as a whole or not at all
        rate = _rate(sentence, q, claim, wanted)
        matched = (rate[0], False) if rate else _matches(wanted, q)
        end = rate[1] if rate else q.end
        if matched is None:
            continue
        words, from_start = matched
        before = sentence[: q.start].rstrip()
        at_start = not before or before[-1] in ".!?\n"
        out += [sentence[last : q.start], _fit_case(words, at_start, from_start)]
        last = end
    if not out:
        return sentence
    return "".join(out) + sentence[last:]
