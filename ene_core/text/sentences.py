"""Sentence spans that tile a text; line breaks are hard boundaries.

The segmenter is syntok (rule-based, pure Python, no model, character offsets for every token):
it keeps abbreviations (Dr., U.S., St.), decimals (3.5), initials (J. R. R. Tolkien) and ``e.g.``
inside their sentence, and it is about five times faster than pysbd (blingfire is faster still
but splits initials and "St. Louis"). On top of it: the sentence starts it misses (after a
citation run, a decimal, a version, a time, an initialism before a word that starts sentences)
and the ones it must not make (after "e.g.", "vs.").

Every retrieved chunk is split too, so splitting is the engine's main cost outside the model on
new text. :func:`split_sentences` gives syntok's answer without running it where the answer is
certain: a line is first cut at *sure* boundaries (a full stop, "!" or "?" after a plain word, a
year or a quoted word, then a space and a capitalised word, outside brackets, the word not one of
syntok's abbreviations), and a piece with no other sentence mark and only brackets syntok steps
over is one sentence; inside a piece, a sentence mark whose tokens are sure (a word of one token
before it, a lower-case or a capitalised word of one token after it) is decided by syntok's own
rule and the fixups ("J. R. R. Tolkien" and "U.S. Army" go on, "NBA. He" and "(2015). It" end a
sentence); only the other pieces go through syntok. The result is the same spans as syntok on
the whole line (checked against it on 182,000 texts of the shared data sets, 20.9 million
characters, and by a property test); on Wikipedia paragraphs about an eighth of the text still
goes through syntok.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import pairwise
from typing import Any

__all__ = ["split_sentences"]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` that tile ``text``; lines are hard boundaries."""
    spans: list[tuple[int, int]] = []
    for line_start, line_end in _lines(text):
        line = text[line_start:line_end]
        bounds = [0, *sorted(_line_starts(line) - {0}), len(line)]
        spans.extend((line_start + a, line_start + b) for a, b in pairwise(bounds) if b > a)
    return _absorb_blank(text, spans)


def _line_starts(line: str) -> set[int]:
    """Sentence starts (token offsets) of one line: syntok's, with the fixups below; pieces
    between sure boundaries that hold one sentence are not given to syntok."""
    starts: set[int] = set()
    for a, b in pairwise(_sure_cuts(line)):
        piece = line[a:b]
        if not piece.strip():
            continue
        if _one_sentence(piece):
            starts.add(a + len(piece) - len(piece.lstrip()))
        elif (within := _sentences_within(piece)) is not None:
            starts.update(a + start for start in within)
        else:
            starts |= {a + start for start in _syntok_starts(piece)}
    return starts


def _sentences_within(piece: str) -> list[int] | None:
    """The sentence starts of ``piece`` when each of its sentence marks surely goes on or surely
    ends a sentence (see :func:`_mark_kind`) and each sentence between them is one to syntok
    (:func:`_one_sentence`, its last mark after its first word); None when unsure."""
    inner = _inner_marks(piece)
    cuts = []
    for i in inner:
        kind = _mark_kind(piece, i)
        if kind is None:
            return None
        if kind == "cut":
            cuts.append(i)
    if not cuts:
        return None
    bounds = [0, *(_AFTER_MARK.match(piece, i + 1).start("word") for i in cuts), len(piece)]  # type: ignore[union-attr]
    for (a, b), mark in zip(pairwise(bounds), cuts, strict=False):
        sentence = piece[a:b]
        first = _FIRST_WORD.match(sentence)
        if first is None or mark - a < first.end() or not _one_sentence(sentence):
            return None
    if not _one_sentence(piece[bounds[-2] :]):
        return None
    lead = len(piece) - len(piece.lstrip())
    return [lead, *bounds[1:-1]]


def _one_sentence(piece: str) -> bool:
    """Whether syntok surely reads ``piece`` (between sure boundaries) as one sentence: no
    sentence mark before its end, and every bracket one that syntok steps over.

    syntok only decides at a sentence mark (its terminals, ";" among them) or an opening
    bracket. A bracket is stepped over, with no decision, when it is closed within 50 tokens and
    holds no sentence mark (so no inner sentence), unless it opens the sentence (in its first
    two tokens) or another bracket follows it; quotation marks and colons only count after a
    sentence mark.
    """
    if _UNSURE.search(piece):
        return False
    inner = _inner_marks(piece)
    opening = _brackets()[1]
    marks = _bracket_marks(piece)
    if inner and marks:
        # a sentence mark inside brackets: syntok steps over them all the same when they are
        # short, unless the fixups start a sentence inside
        bracketed = _bracketed(piece)
        inside = [i for i in inner if any(a <= i < b for a, b in bracketed)]
        if any(b - a >= _SHORT for a, b in bracketed if any(a <= i < b for i in inside)):
            return False
        if not all(_no_fixup(piece, i) for i in inside):
            return False
        inner = [i for i in inner if i not in inside]
    if inner and not _goes_on(piece, inner):
        return False
    if not marks:
        return True
    opened = next((m.start() for m in marks if m[0] in opening), None)
    if opened is not None and len(piece[:opened].split()) < 2:
        return False  # a bracket in the first two tokens may end the sentence
    depth, start = 0, 0
    for m in marks:
        if m[0] in opening:
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:  # a closing bracket outside any is nothing to syntok
            depth -= 1
            if depth == 0 and not _stepped_over(piece, start, m.end(), opening):
                return False
    return depth == 0


def _no_fixup(piece: str, i: int) -> bool:
    """Whether the fixups surely start no sentence after the mark ``piece[i]``."""
    spaces = _SPACES.match(piece, i + 1)
    if piece[i] != "." or spaces is None or not piece[spaces.end() :][:1].isupper():
        return True
    word = _word_before(piece, i)
    bare = word.lstrip(_OPENERS).rstrip(_CLOSERS)
    if _TIME.fullmatch(bare) or _INITIALISM.fullmatch(bare):
        return False  # these depend on the word after
    return not _ends_sentence(word, "")


_SHORT = 70  # syntok steps over a bracket shorter than this, sentence or not (its default)
_SPACES = re.compile(r"\s+")


def _inner_marks(piece: str) -> list[int]:
    """Offsets of the sentence marks of ``piece`` before its final ones (";" among them)."""
    # (a piece ends at a sure boundary, a mark and spaces, or at the end of its line, where
    # closing quotation marks go with the sentence before)
    body = piece.rstrip().rstrip(".!?\u2026\"\u201d'\u2019")
    return [m.start() for m in _INNER_MARK.finditer(body) if not _in_word(body, m.start())]


def _in_word(text: str, i: int) -> bool:
    """Whether the mark ``text[i]`` is inside a word token ("U.S", "A.J"): between letters or
    digits, not after a lower-case letter (there the tokenizer splits it off); ";" never."""
    return (
        0 < i < len(text) - 1
        and text[i] != ";"
        and text[i - 1] in _NOT_LOWER
        and text[i + 1].isalnum()
    )


_NOT_LOWER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _goes_on(piece: str, inner: list[int]) -> bool:
    """Whether syntok surely goes on after each sentence mark at ``inner`` (offsets in
    ``piece``, a piece that starts a sentence): each is after the first word of the sentence
    (so syntok is inside it, not at its first token) and :func:`_mark_kind` says it goes on."""
    first = _FIRST_WORD.match(piece)
    return first is not None and all(
        i >= first.end() and _mark_kind(piece, i) == "on" for i in inner
    )


def _mark_kind(piece: str, i: int) -> str | None:
    """What syntok and the fixups surely do at the sentence mark ``piece[i]`` inside a sentence
    (past its first token): "on" (no sentence starts after it), "cut" (one does) or None
    (unsure).

    Sure only where the mark is a token of its own (after a letter or digit of the same
    whitespace-delimited chunk, and only closing brackets or quotation marks between them), then
    spaces, then a lower-case word (syntok goes on) or, after ".", "!" or "?", a capitalised word
    or a number that is one token; then what decides is the token before the mark and that
    word, and the fixups on the word before the mark ("e.g.", "U.S. It", "5 p.m. Then").
    """
    if piece[i] == "\u2026":
        return "on"  # not one of syntok's terminals
    after = _AFTER_MARK.match(piece, i + 1)
    if after is None:
        return None
    chunk = _word_before(piece, i)  # the whitespace-delimited chunk up to the mark
    tail = chunk.rstrip(_TAIL)
    if not tail or not tail[-1].isalnum():
        return None  # no letter or digit: the chunk is one token, the mark not one of its own
    if after["lower"] or after["inner"]:
        return "on"
    following = after["upper"] or after["quote"]
    # a closing quotation mark right after the mark belongs to the sentence before; then the
    # fixups see no full stop before a spaced word
    fixups = piece[i] == "." and not after["close"]
    word = _word_before(piece, i)
    if following in _starters():  # syntok splits whatever the token before
        before = ""
    elif len(tail) < len(chunk):
        before = chunk[-1]  # a closing bracket or quotation mark
    elif (plain := _BEFORE_MARK.search(chunk)) is not None and plain.start() == 0:
        before = chunk
    else:
        return None
    if _syntok_splits(before, following):
        never_final = word.lstrip(_OPENERS).lower() in _NEVER_FINAL
        return "on" if fixups and never_final else "cut"
    missed = fixups and following[0].isupper() and _ends_sentence(word, following)
    return "cut" if missed else "on"


def _syntok_splits(before: str, following: str) -> bool:
    """syntok's decision at a sentence mark inside a sentence, between the token ``before`` and
    ``following``, a capitalised word or a number (one token, after a space)."""
    from syntok._segmentation_states import State

    if following in State.starters:
        return True
    if before in State.abbreviations:
        return False
    if before in ("no", "No", "NO") and following.isalnum() and not following.isalpha():
        return False
    if following.isnumeric() and len(following) > 2:
        return False
    if before.isnumeric() and following in State.months:
        return False
    if before in State.months and following.isnumeric():
        return False
    if "." in before:
        return False
    if before.isupper() and (len(before) == 1 or before in State.roman_numerals):
        return False
    return not (len(before) == 1 and before.isalpha() and before not in State.vowels)


def _stepped_over(piece: str, start: int, end: int, opening: frozenset[str]) -> bool:
    """Whether syntok steps over the bracket ``piece[start:end]``: at most 50 tokens and no
    opening bracket right after it."""
    bracketed = piece[start:end]
    # tokens: each starts at a mark, at the start of a run of letters and digits, or at an
    # upper-case letter after a lower-case one inside a run (so at most one per upper-case one)
    tokens = len(_RUN.findall(bracketed)) + len(_MARK.findall(bracketed))
    if tokens + sum(1 for c in bracketed if c.isupper()) > 50:
        return False
    after = piece[end:].lstrip()
    return not (after and after[0] in opening)


def _syntok_starts(line: str) -> set[int]:
    """Sentence starts of one line by syntok, with the fixups: none after "e.g.", and the
    starts it misses."""
    from syntok import segmenter

    sentences = [s for paragraph in segmenter.analyze(line) for s in paragraph if s]
    starts = {sentence[0].offset for sentence in sentences}
    starts -= {s[0].offset for p, s in pairwise(sentences) if _never_final(line, p)}
    starts.update(start for sentence in sentences for start in _missed_starts(line, sentence))
    return starts


# a sure boundary: a plain word ("tower", "Paris"), a year or a quoted word ("Mulan"), a sentence
# mark, spaces, then a capitalised word (after a closing quotation mark syntok weighs the mark, not
# the word)
_SURE = re.compile(
    r"(?:(?<=\s)(?P<year>[0-9]{4})|(?:(?<=\s)|^)(?P<word>(?=\w)[A-Z0-9]*[a-z0-9]*)"
    r"|(?:(?<=\s)|^)[\"\u201c\u2018']?(?P<quoted>[A-Za-z]+)[\"\u201d\u2019'])"
    r"(?P<mark>[.!?])\s+(?=[A-Z][a-z])"
)
_GAP = re.compile(r"[.!?]\s+(?=[A-Z][a-z])")  # where a sure boundary's mark may be
# a sentence mark that may end a sentence (not inside "1.5", "bbc.co.uk", "a.m"); syntok's
# rarer terminals too
_TERMINATOR = re.compile(
    r"[.!?\u2026\u3002\uff01\uff1f\u203c\u203d\u2047-\u2049\ufe52\ufe57\uff0e\uff61](?![a-z0-9])"
)
# a sentence mark inside a piece: a terminator, or ";" (syntok's terminal too)
_INNER_MARK = re.compile(f"{_TERMINATOR.pattern}|;")
# what the fast path leaves to syntok: ";" (a terminal to syntok), and what its tokenizer and
# Python split differently (the zero-width space, information separators)
_UNSURE = re.compile(r"[\u200b\u180e\x1c-\x1f]")
# the first word of a piece, one or more tokens none of them a sentence mark
_FIRST_WORD = re.compile(r"\s*(?:[\"\u201c][^\W_]+|[^\W_]+(?=\s))")
# after a sentence mark: spaces, then a lower-case word, or a capitalised word that is one token
# (only marks that the tokenizer splits off, then spaces or the end, after it)
_AFTER_MARK = re.compile(
    r"(?P<inner>[,:](?=\s))|(?P<close>[\"\u201d]?)\s+(?P<word>(?P<lower>[a-z])"
    r"|(?P<quote>[\"\u201c])(?=[^\W_])"
    r"|(?P<upper>[A-Z]+[a-z]*|[0-9]+[a-z]*)(?=[,;:.!?)\]\"'\u201d]*(?:\s|$)))"
)
# a whitespace-delimited chunk that is one token: letters and digits with no lower-case letter
# before an upper-case one, or an initialism of capitals ("U.S")
_BEFORE_MARK = re.compile(r"(?:[A-Z0-9]*[a-z0-9]*|[A-Z](?:\.[A-Z])+)\Z")
_TAIL = ")]\"'\u201d\u2019"  # closing marks that are tokens of their own after a word
_RUN = re.compile(r"[^\W_]+")  # letters and digits (str.isalnum)
_MARK = re.compile(r"[^\w\s]|_")  # neither (nor a space)


def _sure_cuts(line: str) -> list[int]:
    """0, the ends of the sure boundaries of ``line``, and its length."""
    not_after, months, roman = _not_after(), _months(), _roman()
    cuts = [0]
    spans: list[tuple[int, int]] | None = None
    for gap in _GAP.finditer(line):
        # a sure boundary's match starts where the chunk before the mark starts
        i = gap.start()
        m = _SURE.match(line, i - len(_word_before(line, i)))
        if m is None or m.start("mark") != i:
            continue
        word = m["word"]
        if m["quoted"]:
            sure = True
        elif word:
            # syntok goes on after an abbreviation, and after "no" before a number ("No. A1");
            # the fixups below after "viz."
            # (a word of one token: no lower-case letter before an upper-case one); and after
            # a roman numeral ("II") it decides by the state, after a number before a month
            sure = (
                len(word) >= 2
                and word.lower() not in not_after
                and word not in roman
                and not (word.isnumeric() and months.match(line, m.end()))
            )
        else:  # a year, unless a month follows ("1996. May"): syntok reads a date
            sure = not months.match(line, m.end())
        if not sure:
            continue
        if spans is None:
            spans = _bracketed(line)
        if not any(a <= m.start("mark") < b for a, b in spans):
            cuts.append(m.end())
    return [*cuts, len(line)]


def _bracketed(line: str) -> list[tuple[int, int]]:
    """The spans of ``line`` that syntok may step over as bracketed text: from each opening
    bracket to the closing bracket that ends it (any closing bracket closes the last one opened;
    one outside all closes nothing; brackets in a run of marks alone are none), or to the end of
    the line; all of it in a line where its tokenizer and Python split differently."""
    if _UNSURE.search(line):
        return [(0, len(line))]
    opening = _brackets()[1]
    spans = []
    depth, start = 0, 0
    for m in _bracket_marks(line):
        if m[0] in opening:
            if depth == 0:
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((start, m.end()))
    if depth:
        spans.append((start, len(line)))
    return spans


def _bracket_marks(text: str) -> list[re.Match[str]]:
    """The brackets of ``text`` that are tokens to syntok: not those in a run of two or more
    marks between spaces (no letter or digit, "()", "),"), which its tokenizer keeps as one
    token that is no bracket."""
    pattern = _brackets()[0]
    marks = list(pattern.finditer(text))
    if not marks:
        return marks
    end = len(text) - 1
    if all(
        (m.start() == 0 or _space_or_alnum(text[m.start() - 1]))
        and (m.start() == end or _space_or_alnum(text[m.start() + 1]))
        for m in marks
    ):
        return marks  # every bracket between spaces, letters and digits: none in a run
    alone = [m.span() for m in _MARKS_ALONE.finditer(text) if m.end() - m.start() > 1]
    return [m for m in marks if not any(a <= m.start() < b for a, b in alone)]


def _space_or_alnum(c: str) -> bool:
    return c.isspace() or c.isalnum()


_MARKS_ALONE = re.compile(r"(?<!\S)(?:[^\w\s]|_)+(?!\S)")  # a chunk with no str.isalnum


@lru_cache(maxsize=1)
def _brackets() -> tuple[re.Pattern[str], frozenset[str]]:
    """A pattern of syntok's brackets (opening and closing), and its opening ones."""
    from syntok._segmentation_states import State

    marks = "".join(sorted(State.opening_brackets | State.closing_brackets))
    return re.compile(f"[{re.escape(marks)}]"), frozenset(State.opening_brackets)


@lru_cache(maxsize=1)
def _starters() -> frozenset[str]:
    """syntok's sentence starters: after a sentence mark, one starts a sentence."""
    from syntok._segmentation_states import State

    return frozenset(State.starters)


@lru_cache(maxsize=1)
def _roman() -> frozenset[str]:
    """syntok's roman numerals: after one, syntok splits or not by its state."""
    from syntok._segmentation_states import State

    return frozenset(State.roman_numerals)


@lru_cache(maxsize=1)
def _months() -> re.Pattern[str]:
    """syntok's month abbreviations, at the start of what follows: after a year, one does not
    start a sentence."""
    from syntok._segmentation_states import State

    return re.compile("|".join(re.escape(m) for m in sorted(State.months)))


@lru_cache(maxsize=1)
def _not_after() -> frozenset[str]:
    """Words after which no boundary is sure: syntok's abbreviations, "no" and the words of
    the fixups (lower-cased)."""
    return _abbreviations() | _NOT_AFTER


@lru_cache(maxsize=1)
def _abbreviations() -> frozenset[str]:
    """syntok's abbreviations, lower-cased: a full stop after one may not end a sentence."""
    from syntok._segmentation_states import State

    return frozenset(a.lower() for a in State.abbreviations)


# Rules on top of syntok, applied to the whitespace-delimited word before a full stop.
_DECIMAL = re.compile(r"\d+(?:\.\d+)+")
_DEGREE = re.compile(r"(?:[-+]?\d+(?:[.,]\d+)?)?°[CFK]")
_CITATIONS_END = re.compile(r"(?:\[[\d,;\s\u2013-]+\])+")  # grams [3][2]. / [3] [2].
_INITIALISM = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}")  # U.S, Ph.D, a.m, e.g
_TIME = re.compile(r"[ap]\.m", re.IGNORECASE)
_NEVER_FINAL = frozenset({"e.g", "i.e", "cf", "viz", "vs"})  # "e.g. The Hobbit" goes on
_NOT_AFTER = frozenset({"no", *_NEVER_FINAL})  # no sure boundary after these
_OPENERS = "([{\"'\u2018\u201c\u00ab"
_CLOSERS = ")]}\"'\u2019\u201d\u00bb"
# After "U.S." a new sentence starts only with a word that cannot continue a name ("U.S. Army").
_STARTERS = frozenset(
    re.findall(
        r"\w+",
        "A An The This That These Those There It Its He His She Her They Their We Our I My You "
        "Your In On At By For From With After Before During Since When While If But And So Yet "
        "However Then Today Yesterday Tomorrow",
    )
)
_TIME_ZONES = frozenset({"Eastern", "Pacific", "Central", "Mountain", "Standard", "Daylight"})


def _word_before(line: str, offset: int) -> str:
    """The whitespace-delimited word that ends at ``offset`` (a full stop)."""
    start = offset
    while start > 0 and not line[start - 1].isspace():
        start -= 1
    return line[start:offset]


def _never_final(line: str, sentence: Sequence[Any]) -> bool:
    """The sentence ends in an abbreviation that never ends one ("e.g.", "i.e.", "vs.")."""
    last = sentence[-1]
    word = _word_before(line, last.offset).lstrip(_OPENERS).lower()
    return last.value == "." and word in _NEVER_FINAL


def _missed_starts(line: str, sentence: Sequence[Any]) -> Iterator[int]:
    """Sentence starts syntok misses: after a full stop followed by a space and a capital, when
    the word before the stop is a citation run, a decimal, a temperature, a version, a URL, a
    path, an e-mail address or a domain, a time ("5 p.m."), or an initialism ("the U.S.")
    followed by a word that starts sentences ("It", "The")."""
    for i in range(1, len(sentence) - 1):
        nxt = sentence[i + 1]
        if sentence[i].value != "." or not nxt.spacing or not nxt.value[:1].isupper():
            continue
        if _ends_sentence(_word_before(line, sentence[i].offset), nxt.value):
            yield nxt.offset


def _ends_sentence(word: str, following: str) -> bool:
    if word.endswith("]") and _CITATIONS_END.search(word):
        return True
    word = word.lstrip(_OPENERS).rstrip(_CLOSERS)
    if not word or word.lower() in _NEVER_FINAL:
        return False
    if _DECIMAL.fullmatch(word) or _DEGREE.fullmatch(word):
        return True
    if _TIME.fullmatch(word):
        return not (following.isupper() and len(following) <= 4) and following not in _TIME_ZONES
    if _INITIALISM.fullmatch(word):
        return following in _STARTERS
    return _dotted(word)


def _dotted(word: str) -> bool:
    """A version, URL, path, e-mail address, domain or file name: ``v2.1.3``, ``a@b.org``."""
    if "@" in word or "://" in word or "/" in word:
        return True
    parts = word.split(".")
    return len(parts) > 1 and all(parts) and any(len(p) > 2 or p.isdigit() for p in parts)


def _lines(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in re.finditer(r"\r\n|[\n\r\u2028\u2029]", text):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _absorb_blank(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Glue whitespace-only spans onto their neighbour so every span has visible text."""
    merged: list[tuple[int, int]] = []
    pending_start: int | None = None
    for start, end in spans:
        if not text[start:end].strip():
            if merged:
                merged[-1] = (merged[-1][0], end)
            elif pending_start is None:
                pending_start = start
            continue
        if pending_start is not None:
            start, pending_start = pending_start, None
        merged.append((start, end))
    return merged
