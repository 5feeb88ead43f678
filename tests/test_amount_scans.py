"""The quick paths of the amount readers give what the full patterns give.

:func:`ene_core.rules.quantities._matches_of` tries the quantity pattern only where a match may
begin, and :func:`ene_core.rules.amounts._may_match` leaves out a pattern where the text lacks a
word every match holds: both are checked against the patterns themselves on texts made of the
words those patterns read, in any case, with the letters that match ASCII letters ignoring case
(long s, Kelvin sign, dotted and dotless i) and stray characters between them.
"""

from __future__ import annotations

import importlib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

A = importlib.import_module("ene_core.rules.amounts")
Q = importlib.import_module("ene_core.rules.quantities")

_MORE = """hundred thousand million billion dozen percent per cent times of the and or to past noon
midday midnight o'clock morning afternoon evening degrees celsius fahrenheit am pm a.m. p.m.
year-old -old version Python st nd rd th quarter halves"""
_WORDS = sorted(
    {
        *Q._OPENERS,
        *Q._UNIT_WORDS,
        *Q._FREQUENCY_WORDS,
        *A._MONTHS,
        *A._ORDINAL_WORDS,
        *_MORE.split(),
        "semi-annually",
    }
)
_GLUE = st.sampled_from(["", " ", "  ", "-", ",", ".", ":", "/", "%", "°", "$", "€", "'", "\n"])
_FOLDS = {"s": "\u017f", "k": "\u212a", "i": "\u0130"}


@st.composite
def _token(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind <= 1:
        return str(draw(st.integers(0, 3000)))
    if kind == 2:
        return draw(
            st.text(
                alphabet="0123456789aAsStThHgG.,:\u017f\u212a\u0130\u0131²\u039c\u03bc\u00b5",
                max_size=4,
            )
        )
    word = draw(st.sampled_from(_WORDS))
    case = draw(st.integers(0, 4))
    if case == 1:
        word = word.upper()
    elif case == 2:
        word = word.capitalize()
    elif case == 3:
        word = "".join(_FOLDS.get(c, c) for c in word)
    elif case == 4:
        word = word.replace("i", "\u0131")
    return word


_TEXTS = st.lists(st.tuples(_token(), _GLUE), max_size=12).map(
    lambda parts: "".join(t + g for t, g in parts)
)


def _spans(matches: object) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in matches]  # type: ignore[attr-defined]


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
def test_quantity_scan_finds_what_the_pattern_finds(text: str) -> None:
    assert _spans(Q._matches_of(text)) == _spans(Q._PATTERN.finditer(text))


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
def test_a_pattern_left_out_finds_nothing(text: str) -> None:
    may = A._may_match(text)
    for pattern in (A._CLOCK, A._NOON, A._SPOKEN_CLOCK, A._TEMPERATURE, A._YEAR, A._ORDINAL):
        assert pattern in may or pattern.search(text) is None, pattern.pattern[:40]
    assert A._DATE in may or A._DATE.search(text) is None
    assert "-old" in Q.folded(text) or A._AGE.search(text) is None


def test_the_letters_ascii_letters_match_ignoring_case() -> None:
    # folded() maps these four; no other letter matches an ASCII letter ignoring case
    odd = [chr(c) for c in range(0x80, 0x110000) if re.fullmatch("[a-z]", chr(c), re.IGNORECASE)]
    assert odd == ["\u0130", "\u0131", "\u017f", "\u212a"]
    assert all(Q.folded(c).isascii() for c in odd)


def test_examples() -> None:
    for text in ("Twenty-five km", "fivekm away", "half past \u017feven", "the fourth", "10:30 PM"):
        assert _spans(Q._matches_of(text)) == _spans(Q._PATTERN.finditer(text))
    assert [a.surface for a in A.amounts("Meet at half pa\u017ft seven on the 3rd")] == [
        "half pa\u017ft seven",
        "3rd",
    ]


@settings(max_examples=1500, deadline=None, derandomize=True)  # the same texts on every run
@given(_TEXTS)
def test_reading_amounts_never_raises(text: str) -> None:
    A.amounts.__wrapped__(text)  # letters re takes for ASCII ones included (long s, dotless i)


def test_a_clock_in_words_reads_the_same_with_letters_re_takes_for_ascii() -> None:
    def values(text: str) -> list[object]:
        return [(a.kind, a.value, a.half_day) for a in A.amounts(text)]

    assert values("half pa\u017ft \u017feven") == values("half past seven")
    assert values("quarter to f\u0131ve in the morn\u0131ng") == values(
        "quarter to five in the morning"
    )
    assert values("\u0130T'S TEN O'CLOCK") == values("it's ten o'clock")
    assert values("take 5 \u039cG") == values("take 5 \u03bcg") == values("take 5 \u00b5g")  # mu
