"""Words the evidence writes another way.

A small NLI model trained on near copies with one word swapped (mostly contradictions) reads
"Repayments begin in the April after you finish your course." as *contradicted* by "Repayments
start in the April after you leave your course." (p_contra 0.84 with v3.2): one word differs.

:func:`align` writes an evidence sentence's word in the claim's words where a lexicon of
paraphrases says they mean the same in nearly every context ("start" and "begin", "annually"
and "once a year", "physician" and "doctor"; ``ene_core/lexicon/*.jsonl``, about 770 words, each
with the words that keep its meaning and those that change it). The rewrite keeps the sentence's
meaning, so it cannot turn a contradiction into support: the claim still has to say what the
sentence says. A word with a capital inside a sentence is a name and is left alone.
Deterministic and offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

__all__ = ["LEXICON", "Entry", "align", "lexicon", "read_entries"]

#: the lexicon's files: one JSON object a line, ``{"word", "same": [...], "other": [...]}``
LEXICON = Path(__file__).resolve().parent / "lexicon"


@dataclass(frozen=True)
class Entry:
    """One lexicon line: ``word`` and what may replace it, keeping or changing the meaning."""

    word: str
    same: tuple[str, ...]
    other: tuple[str, ...]


def read_entries(folder: Path = LEXICON) -> Iterator[Entry]:
    """Every line of every ``*.jsonl`` file of ``folder``, in file and line order.

    Raises ``ValueError`` naming the file and line of a line that is not an entry.
    """
    for path in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                word = row["word"].strip().lower()
                same = tuple(s.strip() for s in row["same"] if s.strip())
                other = tuple(s.strip() for s in row["other"] if s.strip())
            except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as exc:
                raise ValueError(f"{path}:{n}: not a lexicon entry ({exc})") from exc
            if not word or not same or not other:
                raise ValueError(f"{path}:{n}: an entry needs a word, 'same' and 'other'")
            yield Entry(word, same, other)


@dataclass(frozen=True)
class _Lexicon:
    synonyms: Mapping[str, frozenset[str]]  # each term (lower case) -> those meaning the same
    written: Mapping[str, str]  # each term (lower case) -> as the lexicon writes it
    pattern: re.Pattern[str]  # any term, as a whole word, longer terms first


@cache
def lexicon() -> _Lexicon:
    """The shipped lexicon, read once: "same" read both ways."""
    synonyms: dict[str, set[str]] = {}
    written: dict[str, str] = {}
    for e in read_entries():
        written.setdefault(e.word, e.word)
        for s in e.same:
            written.setdefault(s.lower(), s)
            synonyms.setdefault(e.word, set()).add(s.lower())
            synonyms.setdefault(s.lower(), set()).add(e.word)
    terms = sorted(synonyms, key=lambda t: (-len(t), t))
    alternatives = "|".join(re.escape(t) for t in terms)
    return _Lexicon(
        {t: frozenset(s) for t, s in synonyms.items()},
        written,
        re.compile(rf"(?<![\w'-])(?:{alternatives})(?![\w'-])", re.IGNORECASE),
    )


def align(sentence: str, claim: str) -> str:
    """``sentence`` with each lexicon word that the claim writes as a synonym (and does not
    write itself) in the claim's word: "start" as "begin" for a claim that says "begin"."""
    return _align(sentence, claim)


@lru_cache(maxsize=1 << 14)
def _align(sentence: str, claim: str) -> str:
    lex = lexicon()
    said = {m.group(0).lower() for m in lex.pattern.finditer(claim)}
    if not said:
        return sentence
    out: list[str] = []
    at = 0
    for m in lex.pattern.finditer(sentence):
        found = m.group(0)
        term = found.lower()
        if term in said or (m.start() > 0 and not found.islower()):
            continue
        wanted = sorted(s for s in lex.synonyms[term] & said if not _has(sentence, s))
        if not wanted:
            continue
        word = wanted[0]
        out += [
            sentence[at : m.start()],
            word[:1].upper() + word[1:] if found[0].isupper() else word,
        ]
        at = m.end()
    return "".join(out) + sentence[at:] if out else sentence


def _has(text: str, term: str) -> bool:
    return re.search(rf"(?<![\w'-]){re.escape(term)}(?![\w'-])", text, re.IGNORECASE) is not None
