"""Sentence splitting (ene_core.text.sentences): the sure-boundary fast path gives exactly the
starts syntok and its fixups give, on generated lines and on real texts."""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core.text import sentences
from ene_core.text.sentences import split_sentences

# pieces chosen to sit on every rule: abbreviations, initials, decimals, years, brackets,
# quotation marks, colons, "e.g.", lower-case starts, URLs, times
WORDS = [
    "The",
    "tower",
    "is",
    "in",
    "Paris",
    "It",
    "opened",
    "1889",
    "Dr.",
    "Smith",
    "U.S.",
    "army",
    "St.",
    "Louis",
    "e.g.",
    "J.",
    "R.",
    "R.",
    "Tolkien",
    "3.5",
    "km",
    "approx.",
    "Inc.",
    "etc.",
    "(see",
    "below)",
    '"Yes',
    'no"',
    "'quoted'",
    "it's",
    "a.m.",
    "5",
    "p.m.",
    "Eastern",
    "v2.1",
    "www.example.org",
    "Fig.",
    "2",
    "vs.",
    "Rome",
    ";",
    ":",
    "No.",
    "I",
    "II.",
    "XI.",
    "he",
    "said",
    "[1]",
    "[2].",
    "Mr.",
    "Jones",
    "went",
    "home",
    "!",
    "?",
    "...",
    "\u201cHe",
    "left\u201d",
    "(born",
    "1954)",
    "(",
    ")",
    "),",
    "[a]",
    "{x}",
    "(The",
    "McDonald(s)",
    ":",
    "\u2014(",
    '"Mulan".',
    "\u201cQuoted\u201d.",
    "Jones'.",
    "1996.",
    "May",
    "viz.",
    "no.",
    "Ab12",
    # the marks decided inside a piece (issue 56): initialisms, capitals, numbers, quotes, ";"
    "NBA.",
    "1990s.",
    "US",
    "TMCC",
    "82nd",
    "Jr.",
    "Jr.,",
    "(18",
    "volts).",
    "W.",
    "Ippu-Do.",
    "c.",
    "January",
    '"Silene"',
    'yes."',
    "said,\u201d",
    "jeweller;",
    "Woolf",
    "A.M.",
    "Inc.,",
    "2,500",
    "\u2026",
    "His",
    "Army",
]
MARKS = [".", "!", "?", "", ". ", ".  "]


@st.composite
def lines(draw: st.DrawFn) -> str:
    out = []
    for _ in range(draw(st.integers(1, 6))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=9))
        out.append(" ".join(words) + draw(st.sampled_from(MARKS)))
    return " ".join(out)


@settings(max_examples=400, deadline=None)
@given(lines())
def test_the_fast_path_gives_syntoks_starts(line: str) -> None:
    assert sentences._line_starts(line) == sentences._syntok_starts(line)


def test_the_fast_path_skips_syntok_where_the_answer_is_sure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "The tower is in Paris. It opened in 1889. Visitors climb it every day."
    calls: list[str] = []
    real = sentences._syntok_starts
    monkeypatch.setattr(sentences, "_syntok_starts", lambda line: calls.append(line) or real(line))
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "The tower is in Paris. ",
        "It opened in 1889. ",
        "Visitors climb it every day.",
    ]
    assert calls == []  # every boundary was sure
    split_sentences("Dr. Smith lives in the U.S. capital. He works there.")
    assert calls == ["Dr. Smith lives in the U.S. capital. "]  # only the unsure piece


def _real_texts(root: Path) -> list[str]:
    texts = []
    for q in json.loads((root / "hotpotqa/hotpot_dev_distractor_first100.json").read_text()):
        texts += ["".join(s) for _, s in q["context"]]
    for name in sorted(glob.glob(str(root / "consistency/*.json"))):
        texts += [v["document"] for v in json.loads(Path(name).read_text()).values()][:60]
    return texts


def test_the_fast_path_gives_syntoks_spans_on_real_texts(shared_data: Path) -> None:
    """HotpotQA's 1,000 paragraphs and 240 news articles: the same spans either way."""
    texts = _real_texts(shared_data)
    assert len(texts) > 1000
    for text in texts:
        for line_start, line_end in sentences._lines(text):
            line = text[line_start:line_end]
            assert sentences._line_starts(line) == sentences._syntok_starts(line), line


@pytest.mark.parametrize(
    "line",
    [
        "It opened in 1996. May is a month here.",  # a year before a month: syntok reads a date
        "It has parts, viz. The head is one.",  # no start after "viz." (the fixups)
        "He said no. Ab12 is a code.",  # "No. A1": syntok goes on
        "It was in the ( list. Then more ) here. Next one.",  # a full stop inside a bracket
        "Cato\u2019s Letters. The essays were good. Then \u201cQuoted. Text\u201d here. Done.",
        'He starred in "Mulan". Reviews were good (see "Mulan". Later) too. Yes.',
        "Gunn (born August 5) is a director (and writer). He (Gunn) (twice) won.",
    ],
)
def test_sure_boundaries_and_one_sentence_pieces_agree_with_syntok(line: str) -> None:
    assert sentences._line_starts(line) == sentences._syntok_starts(line)


@pytest.mark.parametrize(
    "line",
    [
        # marks the fast path decides inside a piece: syntok goes on ...
        "He met John F. Kennedy in Dallas. It was late.",  # initials
        "He lived on St. Mary Street. It was old.",  # an abbreviation, no starter after
        "It is in the U.S. capital today. He joined the U.S. Army in 1990. Later he left.",
        "It topped at No. 1 in May. Then it fell to No. 12 again.",  # "no" before a number
        "Donald Trump Jr., Jared Kushner and Inc. staff met. They talked.",  # ".,"
        'He called it a "stream of things," then left. She said "yes." he wrote.',
        "The singer (born c. 1964) is big. It is so.",  # a mark inside a short bracket
        "It rose at 5 P.M. Eastern time. It fell at 6 P.M. Then rose.",  # the fixups decide
        "I saw Smith vs. Jones today. It was fine e.g. The Hobbit is one.",
        "It is an odd one\u2026 It goes on. Yes.",  # not a terminal to syntok
        # ... or ends a sentence
        "The team won the NBA. He was glad. It grew in the 1990s. Many came.",
        "It was (18 volts). TMCC is a system. It ran at 3.5. US 127 passes by.",
        "She won in 2010. 2 more came. He saw Ippu-Do. His work was good.",
        'It is the song "Lost". "Later" was next. He said "yes." She left.',
        "It was a jeweller; Woolf said so. It was a jeweller; he said so.",
        "It is the U.S. It is big. It was H.W. Bush who won.",
    ],
)
def test_marks_inside_a_piece_agree_with_syntok(line: str) -> None:
    assert sentences._line_starts(line) == sentences._syntok_starts(line)


def test_marks_inside_a_piece_skip_syntok(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = sentences._syntok_starts
    monkeypatch.setattr(sentences, "_syntok_starts", lambda line: calls.append(line) or real(line))
    text = (
        "He joined the U.S. Army in 1990 (born c. 1964). TMCC won the NBA. He met John F. "
        'Kennedy; he said "yes." It was fine.'
    )
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "He joined the U.S. Army in 1990 (born c. 1964). ",
        "TMCC won the NBA. ",
        'He met John F. Kennedy; he said "yes." ',
        "It was fine.",
    ]
    assert calls == []
