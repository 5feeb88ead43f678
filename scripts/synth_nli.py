"""Deterministic, rule-based NLI pairs that mirror RAG grounding errors.

Used by ``scripts/train_default_verifier.py`` to build the training set of the shipped
``ene-nli-mini`` verifier, and by ``benchmarks/eval_verifier.py`` for the shared text helpers
(sentence packing, question-to-claim rewriting).

Every generator takes an explicit ``random.Random`` so that one seed rebuilds the same pairs.

Rules (see the model card for the prose version):

* entailment: the premise sentence itself, a shortened copy (parenthesis, appositive, trailing
  clause, leading adverbial or modifier removed) or a light lexical paraphrase of it;
* contradiction: a number, date, named entity or antonym swapped, or a negation inserted/removed;
* neutral: a detail added that the premise does not state, or the evidence sentence removed from a
  packed premise that still holds its neighbours (leave-one-out), or, for multi-hop claims, one of
  the two needed sentences removed;
* premises are *packed* like the engine packs them: a few sentences, one per line, with the
  evidence anywhere (often in the middle) among distractor sentences.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ene_core from this checkout
from ene_core.text.short_answers import question_to_claim  # noqa: F401  (re-exported)
from ene_core.text.short_answers import tidy_sentence as _tidy

ENTAILMENT, NEUTRAL, CONTRADICTION, NOT_ENTAILMENT = 0, 1, 2, 3
LABEL_NAMES = ("entailment", "neutral", "contradiction")
LABEL_IDS = {
    "entailment": ENTAILMENT,
    "neutral": NEUTRAL,
    "contradiction": CONTRADICTION,
    "not_entailment": NOT_ENTAILMENT,
}


@dataclass(frozen=True)
class Pair:
    """One training or evaluation pair; ``label`` 3 means 'not entailment' (2-way data)."""

    premise: str
    hypothesis: str
    label: int
    source: str


# --------------------------------------------------------------------------- sentences

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "he",
        "she",
        "they",
        "his",
        "her",
        "their",
        "them",
        "as",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "how",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "not",
        "no",
        "s",
    ]
)


@lru_cache(maxsize=1)
def _segmenter():  # type: ignore[no-untyped-def]
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (pysbd), dropping empty pieces."""
    out: list[str] = []
    for block in text.split("\n"):
        if block.strip():
            out.extend(s.strip() for s in _segmenter().segment(block) if s.strip())
    return out


def content_words(text: str) -> set[str]:
    """Lower-cased content words of ``text``, used for lexical relevance."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def pack_premise(sentences: Sequence[str], claim: str, k: int = 5) -> str:
    """Pack the ``k`` sentences most lexically relevant to ``claim``, in original order."""
    if len(sentences) <= k:
        return "\n".join(sentences)
    cw = content_words(claim)
    scored = sorted(
        range(len(sentences)),
        key=lambda i: (-len(cw & content_words(sentences[i])), i),
    )
    keep = sorted(scored[:k])
    return "\n".join(sentences[i] for i in keep)


# --------------------------------------------------------------------------- rewrites

_SUBORDINATE_START = re.compile(
    r"^(although|while|if|when|after|before|because|since|though|unless|as|whereas|despite)\b",
    re.I,
)
_CUT_POINTS = re.compile(r"(,\s(?:which|who|where|while|whereas|but|and|although|after|as)\b|;\s)")
_APPOSITIVE = re.compile(
    r",\s(?:a|an|the|who|which|born|now|then|also|formerly|known|located|based)\b[^,;]{2,80},\s"
)
_LEAD_ADVERBIAL = re.compile(
    r"^(?:In|On|At|During|By|After|Before|Since|From|Following|Under|Over|For)\s[^,]{2,45},\s"
)
_PARENS = re.compile(r"\s*\([^()]*\)")
_SNLI_MODIFIER = re.compile(
    r"\s(?:in|wearing|with|holding|dressed in)\s(?:a|an|the|his|her|their|two|some|black|white|"
    r"red|blue|green|yellow|orange|pink|purple|brown|gray|grey)\b[^.,]*?(?=\s(?:is|are)\s)"
)
_TRAILING_PP = re.compile(
    r"\s(?:in|on|at|near|while|with|down|through|along|across|outside|inside|into|onto|under|"
    r"behind|next to|in front of)\s[^.]*$"
)
ADJECTIVES = frozenset(
    [
        "young",
        "old",
        "little",
        "small",
        "large",
        "big",
        "tall",
        "short",
        "black",
        "white",
        "red",
        "blue",
        "green",
        "yellow",
        "orange",
        "pink",
        "purple",
        "brown",
        "gray",
        "grey",
        "smiling",
        "happy",
        "older",
        "younger",
        "elderly",
        "blond",
        "blonde",
        "dark",
        "bright",
        "busy",
        "crowded",
        "colorful",
        "wooden",
        "shirtless",
        "bearded",
        "asian",
        "african",
        "american",
        "new",
        "famous",
        "several",
        "many",
        "sandy",
        "snowy",
        "grassy",
        "dirty",
    ]
)


def _n_words(text: str) -> int:
    return len(text.split())


def shorten(sentence: str, rng: random.Random) -> str | None:
    """An entailed, shorter version of ``sentence`` (drop parentheses/clauses/modifiers)."""
    s = sentence.strip().rstrip(".")
    cands: list[str] = []
    if _PARENS.search(s):
        cands.append(_PARENS.sub("", s))
    m = _CUT_POINTS.search(s)
    if m and not _SUBORDINATE_START.match(s) and _n_words(s[: m.start()]) >= 4:
        cands.append(s[: m.start()])
    if _APPOSITIVE.search(s):
        cands.append(_APPOSITIVE.sub(" ", s, count=1))
    if _LEAD_ADVERBIAL.match(s) and _n_words(s) > 8:
        cands.append(_LEAD_ADVERBIAL.sub("", s, count=1))
    if _SNLI_MODIFIER.search(s):
        cands.append(_SNLI_MODIFIER.sub("", s, count=1))
    m = _TRAILING_PP.search(s)
    if m and _n_words(s[: m.start()]) >= 4 and not _SUBORDINATE_START.match(s):
        cands.append(s[: m.start()])
    words = s.split()
    adj = [i for i, w in enumerate(words) if w in ADJECTIVES and 0 < i < len(words) - 1]
    if adj:
        drop = set(rng.sample(adj, k=min(len(adj), rng.randint(1, 2))))
        cands.append(" ".join(w for i, w in enumerate(words) if i not in drop))
    cands = [_tidy(c) for c in cands if _n_words(c) >= 3]
    cands = [c for c in cands if c.rstrip(".") != s]
    if not cands:
        return None
    out = rng.choice(cands)
    # sometimes apply a second rule on top of the first
    if rng.random() < 0.3:
        again = shorten_once(out, rng)
        if again:
            out = again
    return out


def shorten_once(sentence: str, rng: random.Random) -> str | None:
    """One more shortening step without recursion into further steps."""
    s = sentence.strip().rstrip(".")
    for pattern in (_PARENS, _APPOSITIVE):
        if pattern.search(s):
            return _tidy(pattern.sub(" ", s, count=1))
    return None


PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("film", "movie"),
    ("largest", "biggest"),
    ("began", "started"),
    ("purchased", "bought"),
    ("approximately", "about"),
    ("situated", "located"),
    ("received", "got"),
    ("commenced", "began"),
    ("assist", "help"),
    ("children", "kids"),
    ("photograph", "picture"),
    ("automobile", "car"),
    ("residents", "inhabitants"),
    ("is located in", "is in"),
    ("was born in", "was born in the place"),
    ("is known as", "is called"),
    ("people", "persons"),
    ("a number of", "several"),
    ("completed", "finished"),
    ("attempt", "try"),
    ("sidewalk", "pavement"),
    ("shop", "store"),
    ("quickly", "fast"),
    ("is playing", "plays"),
    ("are playing", "play"),
    ("is sitting", "sits"),
    ("is standing", "stands"),
    ("are sitting", "sit"),
    ("is wearing", "wears"),
    ("roughly", "approximately"),
    ("well-known", "famous"),
    ("died", "passed away"),
    ("established", "founded"),
    ("founded", "established"),
    ("album", "record"),
    ("company", "firm"),
    ("city", "town"),
    ("guitarist", "guitar player"),
)


def paraphrase(sentence: str, rng: random.Random) -> str | None:
    """A light lexical rewrite that keeps the meaning."""
    hits = [(a, b) for a, b in PARAPHRASES if re.search(rf"\b{re.escape(a)}\b", sentence)]
    hits += [
        (b, a)
        for a, b in PARAPHRASES
        if a != "was born in" and re.search(rf"\b{re.escape(b)}\b", sentence)
    ]
    if not hits:
        return None
    a, b = rng.choice(hits)
    return re.sub(rf"\b{re.escape(a)}\b", b, sentence, count=1)


# --------------------------------------------------------------------------- contradictions

_AUX = re.compile(
    r"\b(is|are|was|were|has|have|had|can|will|could|would|should|does|did|do)\s"
    r"(?!not\b|n't\b|never\b)"
)
_NEG = re.compile(
    r"\b(is|are|was|were|has|have|had|can|will|could|would|does|did|do)\s"
    r"(?:not|never)\s"
)
_NT = re.compile(r"\b(is|are|was|were|has|have|had|could|would|does|did|do)n't\b")


def negate(sentence: str) -> str | None:
    """Insert or remove a negation on the first auxiliary verb."""
    if _NEG.search(sentence):
        return _NEG.sub(lambda m: m.group(1) + " ", sentence, count=1)
    if _NT.search(sentence):
        return _NT.sub(lambda m: m.group(1), sentence, count=1)
    if re.search(r"\bnever\b", sentence):
        return re.sub(r"\bnever\b", "once", sentence, count=1)
    m = _AUX.search(sentence)
    if not m:
        return None
    return sentence[: m.end()] + "not " + sentence[m.end() :]


_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
NUMBER_WORDS = (
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
    "twelve",
    "twenty",
    "hundred",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def swap_number(sentence: str, rng: random.Random) -> str | None:
    """Change one number, year, number word or month."""
    nums = list(_NUMBER.finditer(sentence))
    if nums:
        m = rng.choice(nums)
        raw = m.group(1)
        value = float(raw.replace(",", ""))
        if 1000 <= value <= 2100 and "." not in raw and "," not in raw:
            new = str(int(value) + rng.choice([-11, -7, -5, -3, -2, -1, 1, 2, 3, 4, 6, 10]))
        elif value.is_integer():
            iv = int(value)
            new_iv = (
                rng.choice(
                    [iv + rng.randint(1, 9), iv * 2 + 1, max(0, iv - rng.randint(1, 5)), iv * 10]
                )
                if iv > 0
                else rng.randint(1, 9)
            )
            if new_iv == iv:
                new_iv = iv + 1
            new = f"{new_iv:,}" if "," in raw else str(new_iv)
        else:
            new = f"{value * rng.choice([0.5, 1.5, 2.0, 3.0]):.{len(raw.split('.')[1])}f}"
            if new == raw:
                return None
        return sentence[: m.start(1)] + new + sentence[m.end(1) :]
    words = [
        (i, w) for i, w in enumerate(NUMBER_WORDS) if re.search(rf"\b{w}\b", sentence, flags=re.I)
    ]
    if words:
        i, w = rng.choice(words)
        other = rng.choice([x for j, x in enumerate(NUMBER_WORDS) if j != i])
        return re.sub(rf"\b{w}\b", other, sentence, count=1, flags=re.I)
    months = [m for m in MONTHS if re.search(rf"\b{m}\b", sentence)]
    if months:
        m = rng.choice(months)
        return re.sub(rf"\b{m}\b", rng.choice([x for x in MONTHS if x != m]), sentence, count=1)
    return None


ANTONYMS: tuple[tuple[str, str], ...] = (
    ("man", "woman"),
    ("men", "women"),
    ("boy", "girl"),
    ("boys", "girls"),
    ("dog", "cat"),
    ("dogs", "cats"),
    ("sitting", "standing"),
    ("sits", "stands"),
    ("day", "night"),
    ("indoors", "outdoors"),
    ("inside", "outside"),
    ("asleep", "awake"),
    ("sleeping", "running"),
    ("empty", "full"),
    ("young", "old"),
    ("open", "closed"),
    ("won", "lost"),
    ("wins", "loses"),
    ("increased", "decreased"),
    ("rose", "fell"),
    ("higher", "lower"),
    ("more", "fewer"),
    ("largest", "smallest"),
    ("north", "south"),
    ("east", "west"),
    ("male", "female"),
    ("first", "last"),
    ("before", "after"),
    ("black", "white"),
    ("red", "blue"),
    ("smiling", "crying"),
    ("wet", "dry"),
    ("hot", "cold"),
    ("up", "down"),
    ("summer", "winter"),
    ("husband", "wife"),
    ("father", "mother"),
    ("son", "daughter"),
    ("brother", "sister"),
    ("he", "she"),
    ("his", "her"),
    ("accepted", "rejected"),
    ("supported", "opposed"),
    ("earliest", "latest"),
    ("oldest", "youngest"),
    ("private", "public"),
    ("alive", "dead"),
    ("beach", "mountain"),
    ("swimming", "skiing"),
    ("eating", "fasting"),
    ("laughing", "crying"),
    ("child", "adult"),
    ("guitar", "piano"),
    ("bicycle", "horse"),
    ("car", "boat"),
    ("American", "British"),
    ("English", "French"),
    ("born", "died"),
)


def swap_antonym(sentence: str, rng: random.Random) -> str | None:
    """Swap one word for an incompatible one (man/woman, sitting/standing, rose/fell...)."""
    hits: list[tuple[str, str]] = []
    for a, b in ANTONYMS:
        for x, y in ((a, b), (b, a)):
            if re.search(rf"\b{x}\b", sentence, flags=re.I):
                hits.append((x, y))
    if not hits:
        return None
    x, y = rng.choice(hits)

    def repl(m: re.Match[str]) -> str:
        return y.capitalize() if m.group(0)[0].isupper() else y

    return re.sub(rf"\b{x}\b", repl, sentence, count=1, flags=re.I)


_ENTITY = re.compile(
    r"\b([A-Z][a-zA-Z\u00C0-\u024F'\-]+(?:\s(?:of|the|de|da|von|van|and|del|la|le)?\s?"
    r"[A-Z][a-zA-Z\u00C0-\u024F'\-]+)*)"
)
_NOT_ENTITY = frozenset(
    [
        "The",
        "A",
        "An",
        "In",
        "On",
        "At",
        "He",
        "She",
        "It",
        "They",
        "His",
        "Her",
        "Its",
        "Their",
        "This",
        "That",
        "These",
        "Those",
        "There",
        "After",
        "Before",
        "During",
        "When",
        "While",
        "But",
        "And",
        "Or",
        "If",
        "As",
        "For",
        "From",
        "By",
        "With",
        "However",
        "Although",
        "Since",
        "Also",
        "Then",
        "Both",
        "I",
        "We",
        "You",
        "Our",
    ]
) | frozenset(MONTHS)


def entities(text: str) -> list[str]:
    """Capitalised spans that look like names (a regex stand-in for NER; deterministic)."""
    out: list[str] = []
    for m in _ENTITY.finditer(text):
        span = m.group(1)
        words = span.split()
        while words and words[0] in _NOT_ENTITY:
            words = words[1:]
        span = " ".join(words)
        if span and span not in _NOT_ENTITY and len(span) > 2:
            out.append(span)
    return out


def _is_demonym(span: str) -> bool:
    return " " not in span and bool(re.search(r"(?:an|ish|ese|ic|ch)$", span))


def swap_entity(sentence: str, pool: Sequence[str], rng: random.Random) -> str | None:
    """Replace one named entity of ``sentence`` by another entity from ``pool``."""
    own = entities(sentence)
    if not own:
        return None
    target = rng.choice(own)
    n_words = len(target.split())
    demonym = _is_demonym(target)
    cands = [
        e
        for e in pool
        if e not in sentence
        and e.lower() != target.lower()
        and e not in target
        and target not in e
        and _is_demonym(e) == demonym
    ]
    near = [e for e in cands if abs(len(e.split()) - n_words) <= 1]
    choice_from = near or cands
    if not choice_from:
        return None
    return sentence.replace(target, rng.choice(choice_from), 1)


# --------------------------------------------------------------------------- neutral details

DETAIL_PHRASES = (
    "for the second time",
    "after a long delay",
    "with the help of his family",
    "despite heavy criticism",
    "to celebrate an anniversary",
    "on a Sunday morning",
    "in front of a large crowd",
    "because of a dispute over money",
    "as part of a charity event",
    "for the first time in a decade",
    "with several friends",
    "while on vacation",
    "after winning an award",
    "under pressure from investors",
    "at the request of the mayor",
    "to raise money for a hospital",
    "during a heavy storm",
    "for a school project",
    "before moving abroad",
    "on behalf of the government",
)
ADJ_INSERT = (
    "famous",
    "tall",
    "wealthy",
    "young",
    "retired",
    "popular",
    "married",
    "award-winning",
    "professional",
    "local",
    "happy",
    "tired",
    "German",
    "Canadian",
    "controversial",
)
SPECIFIC_NOUNS = (
    ("person", ("doctor", "teacher", "tourist", "firefighter")),
    ("people", ("tourists", "students", "friends", "soldiers")),
    ("man", ("father", "tourist", "teacher", "policeman")),
    ("woman", ("mother", "nurse", "teacher", "bride")),
    ("child", ("boy", "girl", "toddler")),
    ("kid", ("boy", "girl", "student")),
    ("group", ("family", "team", "band")),
    ("company", ("bank", "airline", "carmaker")),
    ("city", ("capital", "port city", "border town")),
    ("film", ("comedy", "horror film", "musical")),
    ("band", ("punk band", "boy band", "jazz band")),
)


def add_detail(
    sentence: str, premise: str, rng: random.Random, places: Sequence[str] = ()
) -> str | None:
    """A neutral hypothesis: ``sentence`` plus a detail that ``premise`` does not state."""
    s = sentence.strip().rstrip(".")
    low = premise.lower()
    options: list[str] = []
    phrase = rng.choice(DETAIL_PHRASES)
    options.append(f"{s} {phrase}")
    year = rng.randint(1890, 2020)
    if str(year) not in premise:
        options.append(f"{s} in {year}")
    fresh_places = [p for p in places if p.lower() not in low]
    if fresh_places:
        options.append(f"{s} in {rng.choice(fresh_places)}")
    m = re.search(r"\b(a|an|the)\s(?=[a-z])", s)
    if m:
        adj = rng.choice([a for a in ADJ_INSERT if a.lower() not in low] or ["famous"])
        art = m.group(1)
        if art in ("a", "an"):
            art = "an" if adj[0].lower() in "aeiou" else "a"
        options.append(s[: m.start()] + f"{art} {adj} " + s[m.end() :])
    for general, specifics in SPECIFIC_NOUNS:
        if re.search(rf"\b{general}\b", s):
            spec = rng.choice(specifics)
            if spec not in low:
                options.append(re.sub(rf"\b{general}\b", spec, s, count=1))
    out = rng.choice(options)
    return _tidy(out) if out != s else None


# --------------------------------------------------------------------------- hard cases (v2)

_UNITS = (
    ("km", "miles"),
    ("kilometres", "miles"),
    ("kilometers", "miles"),
    ("kg", "pounds"),
    ("kilograms", "pounds"),
    ("metres", "feet"),
    ("meters", "feet"),
    ("hours", "minutes"),
    ("days", "weeks"),
    ("weeks", "months"),
    ("months", "years"),
    ("percent", "times"),
    ("dollars", "euros"),
    ("°C", "°F"),
    ("GB", "MB"),
    ("mg", "g"),
)


def swap_unit(sentence: str, rng: random.Random) -> str | None:
    """Contradiction: the same number with another unit ("5 km" -> "5 miles")."""
    hits = [
        (a, b)
        for x, y in _UNITS
        for a, b in ((x, y), (y, x))
        if re.search(rf"\d\s?{re.escape(a)}\b", sentence)
    ]
    if not hits:
        return None
    a, b = rng.choice(hits)
    return re.sub(rf"(\d\s?){re.escape(a)}\b", rf"\g<1>{b}", sentence, count=1)


_QUANTIFIERS = (
    ("some", "all"),
    ("several", "all"),
    ("many", "all"),
    ("most", "all"),
    ("a few", "many"),
    ("often", "always"),
    ("sometimes", "always"),
    ("usually", "always"),
    ("may", "will"),
    ("can", "must"),
    ("about", "exactly"),
    ("around", "exactly"),
    ("up to", "at least"),
)


def change_quantifier(sentence: str, rng: random.Random) -> str | None:
    """Neutral: a stronger quantifier or modal than the premise states ("some" -> "all")."""
    hits = [(a, b) for a, b in _QUANTIFIERS if re.search(rf"\b{a}\b", sentence)]
    if not hits:
        return None
    a, b = rng.choice(hits)
    return re.sub(rf"\b{a}\b", b, sentence, count=1)


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SMALL = {str(i): w for i, w in enumerate(NUMBER_WORDS[:10], start=1)}
_SURFACE = (
    ("percent", "%"),
    ("per cent", "percent"),
    ("United States", "US"),
    ("United Kingdom", "UK"),
    ("approximately", "about"),
    ("roughly", "about"),
)


def inflect(sentence: str, rng: random.Random) -> str | None:
    """Entailment: a surface variant that keeps the meaning: singular/plural weekdays
    ("on Sundays" / "on Sunday"), digits as words ("3" / "three"), "%" / "percent", "US" /
    "United States", "March 3, 2019" / "3 March 2019"."""
    options: list[str] = []
    for day in _DAYS:
        if re.search(rf"\b{day}s\b", sentence):
            options.append(re.sub(rf"\b{day}s\b", day, sentence, count=1))
        elif re.search(rf"\bon {day}\b", sentence):
            options.append(re.sub(rf"\bon {day}\b", f"on {day}s", sentence, count=1))
    m = re.search(r"(?<![\w.,$])([1-9])(?![\w.,%])(?!\s?(?:st|nd|rd|th)\b)", sentence)
    if m:
        options.append(sentence[: m.start()] + _SMALL[m.group(1)] + sentence[m.end() :])
    for a, b in _SURFACE:
        for x, y in ((a, b), (b, a)):
            if re.search(rf"(?<!\w){re.escape(x)}(?!\w)", sentence):
                options.append(re.sub(rf"(?<!\w){re.escape(x)}(?!\w)", y, sentence, count=1))
    months = "|".join(MONTHS)
    d = re.search(rf"\b({months}) (\d{{1,2}}), (\d{{4}})\b", sentence)
    if d:
        options.append(sentence.replace(d.group(0), f"{d.group(2)} {d.group(1)} {d.group(3)}"))
    d = re.search(rf"\b(\d{{1,2}}) ({months}) (\d{{4}})\b", sentence)
    if d:
        options.append(sentence.replace(d.group(0), f"{d.group(2)} {d.group(1)}, {d.group(3)}"))
    return rng.choice(options) if options else None


def join_claims(a: str, b: str) -> str:
    """One claim stating two facts ("A, and b.")."""
    b = b.strip()
    if b[:1].isupper() and not re.match(r"^[A-Z][a-z]*[A-Z]|^[A-Z]{2}|^I\b", b):
        first = b.split()[0]
        if first.lower() in STOPWORDS or first.lower() in ("there", "during", "after", "before"):
            b = b[0].lower() + b[1:]
    return _tidy(f"{a.strip().rstrip('.')}, and {b}")
