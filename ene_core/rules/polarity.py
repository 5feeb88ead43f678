"""Negation the evidence writes another way, or not at all.

A small NLI model reads "The painting is unsigned." as unrelated to "The painting was not signed
by the artist." (0.24 entailment with v3), and "Installing the firmware update is optional." as
entailing "The firmware update is not optional." (0.63): every word is there.

:func:`align` writes a privative word of an evidence sentence in the claim's words: "unsigned"
reads "not signed" where the claim says "not signed" (not "never signed"), "not available" reads
"unavailable" where the claim says "unavailable". The prefix must join exactly the claim's word
(un-, in-, im-, il-, ir-, dis-, non-), so the rewrite keeps the sentence's meaning.

:func:`flipped` finds an evidence sentence that says the claim with its negation taken away or
added: the claim's words in order, every one of them, with "not" (or "never", "no", "n't") on
one side only. The engine then calls the claim contradicted by that sentence's context.
Fail-closed: a sentence with a hedge ("may", "reportedly", "if") or "only", or a negation outside
the claim's words, is left to the model. Deterministic and offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["VALUE_SETS", "align", "flipped", "opposite", "turned"]

_TOKEN = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*|n't", re.IGNORECASE)
_NEGATION = frozenset({"not", "never", "no", "n't", "cannot"})
_DO = frozenset({"do", "does", "did"})
_BE = frozenset({"is", "are", "was", "were", "be", "been", "being", "am", "'s"})
_HAVE = frozenset({"has", "have", "had"})
_HEDGE = frozenset(
    {
        "may",
        "might",
        "could",
        "if",
        "whether",
        "unless",
        "reportedly",
        "allegedly",
        "rumoured",
        "rumored",
        "supposedly",
        "claimed",
        "claims",
        "said",
        "believed",
        "only",
        "neither",
        "nor",
    }
)
_PREFIXES = ("non-", "non", "un", "in", "im", "il", "ir", "dis")
# in-, im-, il-, ir- and dis- negate adjectives ("inaccurate", "illegal", "dishonest"); on other
# words they are no negation ("inform", "install", "discover")
_ADJECTIVE = re.compile(r"(?:able|ible|ed|ent|ant|al|ar|ate|ive|ous|ct|est|ete|ful)$")
_NEGATED_WORD = re.compile(  # "never" is no "not" to a small model: left as it is
    r"(?:\bnot|n't)\s+(?:(?:be|been|being|get|got|gotten|become|remain)\s+)?"
    r"(?P<word>[a-z]{4,})\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?")
_REPLY = re.compile(r"^\W*(?:no|yes)\b\W", re.IGNORECASE)  # "No, but violet is ..."
_SLACK = 2  # words the sentence may have between the claim's (also counting its "do")


def align(sentence: str, claim: str) -> str:
    """``sentence`` with each privative word written as the claim writes it: "unsigned" as "not
    signed" for a claim that says "not signed" (or "wasn't signed"), "not signed" as "unsigned"
    for one that says "unsigned"."""
    return _align(sentence, claim)


@lru_cache(maxsize=1 << 14)
def _align(sentence: str, claim: str) -> str:
    negated, privative, both = _claim_words(claim)
    if not negated and not privative:
        return sentence

    def as_not(m: re.Match[str]) -> str:
        word = m.group()
        base = next((b for b in negated if _joins(word.lower(), b)), None)
        return word if base is None else f"not {word[len(word) - len(base) :]}"

    if negated:
        sentence = _WORD.sub(as_not, sentence)
    for base, word in privative.items():
        if base not in both:
            sentence = re.sub(rf"\bnot\s+{re.escape(base)}\b", word, sentence, flags=re.I)
    return sentence


@lru_cache(maxsize=1 << 12)
def _claim_words(claim: str) -> tuple[set[str], dict[str, str], set[str]]:
    """What :func:`align` reads of a claim, once per claim: the words it negates ("not
    signed"), its privative words by the word they negate ("signed" -> "unsigned"), and the
    words it does both to (left alone)."""
    negated = {m["word"].lower() for m in _NEGATED_WORD.finditer(claim)}
    privative = {
        base: w for w in _WORD.findall(claim) if (base := _base(w.lower())) is not None
    }  # "signed" -> "unsigned" where the claim says "unsigned"
    both = negated & privative.keys()  # a claim with "not signed" and "unsigned": left alone
    negated -= both
    return negated, privative, both  # read, never changed


def _joins(word: str, base: str) -> bool:
    """Whether ``word`` is ``base`` with a privative prefix: "unsigned" of "signed"."""
    return any(word == p + base and _negates(p, base) for p in _PREFIXES)


def _negates(prefix: str, base: str) -> bool:
    if prefix in ("un", "non", "non-"):
        return len(base) >= 4
    return len(base) >= 5 and bool(_ADJECTIVE.search(base))


def _base(word: str) -> str | None:
    """The word ``word`` negates by its prefix ("signed" of "unsigned"), or ``None``."""
    for p in _PREFIXES:
        if word.startswith(p) and _negates(p, base := word[len(p) :]):
            return base
    return None


def flipped(claim: str, parts: Sequence[str]) -> int | None:
    """The index of the first premise part that says ``claim`` with its negation taken away or
    added (see the module docstring), or ``None``."""
    return _flipped(claim, tuple(parts))


@lru_cache(maxsize=1 << 14)
def _flipped(claim: str, parts: tuple[str, ...]) -> int | None:
    mine = _tokens(claim)
    if not mine or _hedged(mine) or _REPLY.match(claim):
        return None
    for i, part in enumerate(parts):
        theirs = _tokens(part)
        if _hedged(theirs):
            continue
        if _negations(mine) + _negations(theirs) != 1:
            continue  # one side negates, once
        if _says(_plain(mine), _plain(theirs), theirs):
            return i
    return None


def _tokens(text: str) -> list[tuple[str, str]]:
    """``(token, key)`` pairs: the lower-cased token and what it is compared as."""
    out = []
    for t in _TOKEN.findall(text.replace("\u2019", "'")):
        t = t.lower()
        if t.endswith("n't") and t != "n't":
            stem = {"won't": "will", "can't": "can", "shan't": "shall"}.get(t, t[:-3])
            out += [(stem, _key(stem)), ("n't", "not")]
        elif t == "cannot":
            out += [("can", "can"), ("not", "not")]
        else:
            out.append((t, _key(t)))
    return out


def _key(token: str) -> str:
    if token in _BE:
        return "be"
    if token in _HAVE:
        return "have"
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: -len(suffix)]
            break
    return token.rstrip("e")


def _hedged(tokens: list[tuple[str, str]]) -> bool:
    """Whether ``tokens`` hedge or restrict ("may", "reportedly", "only"): left to the model."""
    return any(t in _HEDGE for t, _ in tokens)


def _negations(tokens: list[tuple[str, str]]) -> int:
    """The negations of ``tokens``; 2 (no flip) for one in a contrast: "but not", "little or
    no", "not X but Y"."""
    found = [n for n, (t, _) in enumerate(tokens) if t in _NEGATION]
    for n in found:
        if n and tokens[n - 1][0] in ("but", "or", "and"):
            return 2
        if any(t == "but" for t, _ in tokens[n + 1 :]):
            return 2
    return len(found)


def _plain(tokens: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """The keys without the negation and its "do" (``(position, key)``)."""
    out = []
    for n, (t, key) in enumerate(tokens):
        if t in _NEGATION:
            continue
        if t in _DO and n + 1 < len(tokens) and tokens[n + 1][0] in _NEGATION:
            continue
        out.append((n, key))
    return out


def _says(
    mine: list[tuple[int, str]], theirs: list[tuple[int, str]], raw: list[tuple[str, str]]
) -> bool:
    """Whether the claim's keys occur in order in the sentence's, the sentence's negation (if
    it has one) falling between the first and the last of them."""
    if len(mine) < 2:
        return False
    at, matched = 0, []
    for _, key in mine:
        while at < len(theirs) and theirs[at][1] != key:
            at += 1
        if at == len(theirs):
            return False
        matched.append(theirs[at][0])
        at += 1
    negation = [n for n, (t, _) in enumerate(raw) if t in _NEGATION]
    if matched[-1] - matched[0] + 1 > len(mine) + len(negation) + _SLACK:
        return False  # the claim's words spread over the sentence: another statement
    return all(matched[0] < n < matched[-1] for n in negation)


# Words of a closed set, or opposites: a claim with one of them, said by an evidence sentence with
# another in its place (and nowhere itself), says something else. "May" and "fall" are verbs too.
#: sets whose words name a value a list may give each of its items ("in spring with a
#: high-nitrogen feed and in autumn with a low-nitrogen one"; ene_core.rules.bindings)
VALUE_SETS = (
    "gold silver bronze",
    "red orange yellow green blue purple violet pink brown black white grey gray",
    "monday tuesday wednesday thursday friday saturday sunday",
    "january february march april june july august september october november december",
    "spring summer autumn winter",
    "north south east west",
    "northern southern eastern western",
    "morning afternoon evening",
    "high low",
    "domestic international",
    "male female",
    "men women",
)
_SETS = (
    *VALUE_SETS,
    "left right",
    "raise lower",
    "raises lowers",
    "raised lowered",
    "increase decrease reduce",
    "increases decreases reduces",
    "increased decreased reduced",
    "improves worsens",
    "indoor outdoor",
    "indoors outdoors",
    "true false",
    "present absent",
    "stronger weaker",
    "wider narrower",
    "longer shorter",
    "rises falls",
    "rose fell",
    "higher lower",
    "maximum minimum",
    "before after",
    "above below",
    "earlier later",
    "larger smaller",
    "bigger smaller",
    "faster slower",
    "older younger",
    "oldest youngest",
    "highest lowest",
    "largest smallest",
    "inside outside",
    "imports exports",
    "buys sells",
    "bought sold",
    "won lost",
    "wins loses",
    "open closed",
    "opens closes",
    "opened closed",
    "allowed prohibited forbidden banned",
    "mandatory optional",
    "compulsory optional",
    "public private",
    "internal external",
    "positive negative",
    "input output",
    "upstream downstream",
    "hot cold",
    "wet dry",
    "heavier lighter",
    "first last",
    "accepted rejected",
    "included excluded",
    "arrival departure",
    "boys girls",
    "husband wife",
    "father mother",
    "son daughter",
    "brother sister",
    "king queen",
)


def _by_key(groups: Sequence[str]) -> dict[str, frozenset[str]]:
    """Each word's key to the keys of the other words of its groups ("mondays" as "monday")."""
    out: dict[str, set[str]] = {}
    for group in groups:
        keys = [_key(w) for w in group.split()]
        for k in keys:
            out.setdefault(k, set()).update(o for o in keys if o != k)
    return {k: frozenset(v) for k, v in out.items()}


_OTHERS = _by_key(_SETS)


def opposite(claim: str, parts: Sequence[str]) -> int | None:
    """The index of the first premise part that says ``claim`` with one word in its place
    taken by another of its closed set or by its opposite ("won a gold medal" / "won a silver
    medal", "raises the boiling point" / "lowers the boiling point"), the claim's own word
    nowhere in it; ``None`` otherwise. Hedges and "only" leave the pair to the model, as for
    :func:`flipped`."""
    return _opposite(claim, tuple(parts))


@lru_cache(maxsize=1 << 14)
def _opposite(claim: str, parts: tuple[str, ...]) -> int | None:
    mine = _tokens(claim)
    swaps = [(j, key) for j, (_, key) in enumerate(mine) if key in _OTHERS]
    if not swaps or _hedged(mine) or _REPLY.match(claim):
        return None
    for i, part in enumerate(parts):
        theirs = _tokens(part)
        said = {key for _, key in theirs}
        if _hedged(theirs) or _negations(mine) != _negations(theirs):
            continue
        for j, key in swaps:
            if key in said:
                continue
            for other in sorted(_OTHERS[key] & said):
                swapped = [*mine[:j], (other, other), *mine[j + 1 :]]
                if _says(_plain(swapped), _plain(theirs), theirs):
                    return i
    return None


def turned(claim: str, parts: Sequence[str]) -> int | None:
    """The index of the first premise part that says ``claim`` with its negation taken away or
    added (:func:`flipped`) or one word turned to another of its set (:func:`opposite`)."""
    found = flipped(claim, parts)
    return found if found is not None else opposite(claim, parts)
