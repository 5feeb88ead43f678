"""Bindings the evidence gives otherwise: which subject a role or a value belongs to.

A small NLI model reads a packed premise as a bag of facts: "Jonas Ek directed the orchestra in
Malmo." comes out supported by "Jonas Ek directed the orchestra in Uppsala." next to "Rita Sol
directed the orchestra in Malmo.", since every word is there. Read alone, the first sentence
contradicts the claim. :func:`same_opening` finds such sentences (the claim's opening, past its
verb and through at least half its words, then another ending); the engine checks the claim
against each alone, and when one contradicts it and none supports it, the claim is
contradicted.

Unique roles: a superlative, "first", "last", "only" or "top" has one holder.

Routes: "from New York to Southampton" is the reverse of the evidence's "from Southampton to New
York" (:func:`reversed_route`).

"Buzz Aldrin was the first person to walk on the Moon." against "Neil Armstrong became the first
person to walk on the Moon." and "Buzz Aldrin joined Armstrong on the lunar surface." comes out
supported from a small NLI model: every word is there. But the role has one holder, and the
evidence gives it to someone else. :func:`other_holder` finds that: the claim's role ("the
first person to walk on the Moon"), written by the evidence with the same words for another
subject, where the evidence also knows the claim's subject as someone else.

Fail-closed: ``None`` unless the claim is "<subject> is/was/became the <first|last|only|-est|most
...> <role>", an evidence sentence gives the same role (the same content words; what follows
them may only be a date or a clause, not "in Economics") to a subject that shares no word with
the claim's, and another evidence sentence names the claim's subject. An alias the evidence
never links ("Octavian" for "Augustus") is therefore not contradicted. Deterministic, offline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

from ..text.words import TOKEN, content_words
from .amounts import Amount, amounts, outside, same_amount
from .grounding import rivals
from .polarity import VALUE_SETS

__all__ = [
    "RoleClash",
    "ValueClash",
    "clauses",
    "other_holder",
    "other_subject",
    "other_value",
    "own_clause",
    "reversed_route",
    "same_opening",
]

_VERB = r"(?:is|was|are|were|became|becomes|remains|remained)"
_UNIQUE = r"(?:first|last|only|top|\w+est|most\s+\w+|least\s+\w+)\b"
_OWNER = r"(?P<owner>[\w-]+'s\s+)?"  # "the club's top scorer"
_CLAIM = re.compile(
    rf"^(?P<subject>[^,;:]+?)\s+{_VERB}\s+the\s+{_OWNER}(?P<role>{_UNIQUE}.*?)[.!]?$",
    re.IGNORECASE,
)
_HOLDER = re.compile(
    rf"(?P<subject>[^;:]+?)\s+{_VERB}\s+the\s+{_OWNER}(?={_UNIQUE})", re.IGNORECASE
)
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)
# after the role's words, a phrase that narrows it: "the first woman to win the prize in
# Economics" is another role (a date, "in 1969", does not narrow it)
_NARROWING = re.compile(r"^\s*(?:in|of|for|among|at|from|on|by|with)\s+(?![\d]|AD\b|BC\b)", re.I)


@dataclass(frozen=True)
class RoleClash:
    """The premise part that gives the claim's role to another holder."""

    part: int
    holder: str
    role: str


def other_holder(claim: str, parts: Sequence[str]) -> RoleClash | None:
    """The evidence sentence that gives ``claim``'s unique role to someone else, or ``None``."""
    return _other_holder(claim.strip(), tuple(parts))


@lru_cache(maxsize=1 << 14)
def _other_holder(claim: str, parts: tuple[str, ...]) -> RoleClash | None:
    m = _CLAIM.match(claim)
    if m is None or _NEGATED.search(claim):
        return None
    subject = set(content_words(m["subject"]))
    role = set(content_words(m["role"]))
    if not subject or not role:
        return None
    owner = (m["owner"] or "").lower().strip()
    holders = [
        (i, h)
        for i, part in enumerate(parts)
        for h in _HOLDER.finditer(part)
        if (h["owner"] or "").lower().strip() == owner and _same_role(part[h.end() :], role)
    ]
    if any(set(content_words(h["subject"])) & subject for _, h in holders):
        return None  # the evidence gives the role to the claim's subject too
    for i, h in holders:
        holder = h["subject"].strip(" \n")
        if not content_words(holder):
            continue
        named = any(
            subject <= set(content_words(other)) for j, other in enumerate(parts) if j != i
        ) or subject <= set(content_words(parts[i][h.end() :]))  # "..., while Ade Okoro led"
        if named:  # shown as the last phrase of the subject: "Neil Armstrong"
            return RoleClash(i, holder.rsplit(", ", 1)[-1], m["role"])
    return None


def _same_role(text: str, role: set[str]) -> bool:
    """Whether ``text`` starts with exactly the role's content words (in any order), followed by
    nothing that narrows it."""
    seen: set[str] = set()
    for t in TOKEN.finditer(text):
        words = set(content_words(t.group()))
        if words - role:
            return False  # a word the claim's role does not have: another role
        seen |= words
        if seen == role:
            return not _NARROWING.match(text[t.end() :])
    return False


_AUX = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "does",
        "do",
        "did",
    }
)


def same_opening(parts: Sequence[str], claim: str) -> list[int]:
    """Indices of the premise ``parts`` that open with the claim's words past its verb (an
    auxiliary, a word in "-ed", or one in "-s" before a preposition: "runs to") and through at
    least half of them, then end otherwise: "Jonas Ek directed the orchestra in Uppsala." for
    "Jonas Ek directed the orchestra in Malmo.", not "Princeton High School was founded in
    1867." for "Princeton High School was enlarged."."""
    words = [_fold(w) for w in claim.split()]
    verb = _verb(words)
    if verb is None:
        return []
    out = []
    for i, part in enumerate(parts):
        theirs = [_fold(w) for w in part.split()]
        n = 0
        while n < min(len(words), len(theirs)) and words[n] == theirs[n]:
            n += 1
        if verb + 1 < n < len(words) and 2 * n >= len(words):
            out.append(i)
    return out


_PAST = (  # past tenses not in "-ed": "The Arden Prize went to ..."
    "went won led made gave took came became held wrote built found left sold paid ran began saw"
    " met brought kept lost told spent grew drew flew chose rose fell bought taught caught"
    " fought thought"
)
_IRREGULAR = frozenset(_PAST.split())
_PREPOSITIONS = frozenset({"to", "in", "into", "from", "on", "at", "through", "via", "for", "with"})
# where a sentence turns to another subject: "The blue line runs to the harbour, while the green
# line runs to the airport."
_TURN = re.compile(r",?\s+(?:while|whereas)\s", re.IGNORECASE)


def own_clause(part: str) -> str:
    """``part`` up to where it turns to another subject ("…, while …"), for reading the clause
    that opens like a claim alone."""
    m = _TURN.search(part)
    return part[: m.start()].rstrip() + "." if m else part


# where a sentence's clauses part, each with its own subject and predicate: "…; …", "…, while …",
# "… although …", "…, and …", "…, but …"
_CLAUSES = re.compile(
    r";\s*|,?\s+(?:although|though|whereas|while)\s+|,\s+(?:and|but|so|yet)\s+", re.IGNORECASE
)


def clauses(sentence: str) -> list[str]:
    """``sentence`` cut where a clause with its own subject and predicate begins."""
    return _CLAUSES.split(sentence)


_SAID = 3  # words of the claim's predicate another subject's clause must say, at least


def other_subject(parts: Sequence[str], claim: str) -> list[tuple[int, str]]:
    """Clauses of one premise sentence that give the claim's predicate to another subject, and
    the other clauses about the claim's subject (with a verb), each as ``(part index, clause)``;
    empty unless the sentence has both: "Raman won the mountain stage to Culver Pike" and "Voss
    took the final time trial" for "Voss won the mountain stage to Culver Pike.".

    The predicate is the claim from its verb (as for :func:`same_opening`); another subject's
    clause says at least three of its words, through at least half of the claim, after a subject
    that shares no content word with the claim's. Read alone, such a clause may contradict the
    claim; the engine then also reads the claim's subject's own clauses alone, and the claim is
    contradicted only when none of them supports it."""
    return _other_subject(tuple(parts), claim.strip())


@lru_cache(maxsize=1 << 14)
def _other_subject(parts: tuple[str, ...], claim: str) -> list[tuple[int, str]]:
    words = [_fold(w) for w in claim.split()]
    verb = _verb(words)
    if not verb:  # no verb, or none after a subject
        return []
    subject = set(content_words(" ".join(words[:verb])))
    predicate = words[verb:]
    if not subject or not content_words(" ".join(predicate)):
        return []
    out: list[tuple[int, str]] = []
    for i, part in enumerate(parts):
        parted = [c.strip(" .") for c in clauses(part.strip()) if c.strip(" .")]
        others = [c for c in parted if _says_for_another(c, subject, predicate, len(words))]
        own = [
            c
            for c in parted
            if c not in others
            and subject <= set(content_words(c))
            and _verb([_fold(w) for w in c.split()])  # a verb after its subject
        ]
        if others and own:
            out += [(i, c + ".") for c in [*others, *own]]
    return out


def _says_for_another(clause: str, subject: set[str], predicate: list[str], size: int) -> bool:
    theirs = [_fold(w) for w in clause.split()]
    for start in range(1, len(theirs)):
        n = 0
        while n < min(len(predicate), len(theirs) - start) and predicate[n] == theirs[start + n]:
            n += 1
        if n:
            said = n >= _SAID and 2 * (size - len(predicate) + n) >= size
            theirs_subject = set(content_words(" ".join(theirs[:start])))
            return said and bool(theirs_subject) and not theirs_subject & subject
    return False


def _verb(words: Sequence[str]) -> int | None:
    """The index of the first word of ``words`` read as a verb: an auxiliary, a past tense, a
    word in "-ed", or one in "-s" before a preposition ("runs to")."""
    return next(
        (
            i
            for i, w in enumerate(words)
            if w in _AUX
            or w in _IRREGULAR
            or w.endswith("ed")
            or (i and w.endswith("s") and words[i + 1 : i + 2] and words[i + 1] in _PREPOSITIONS)
        ),
        None,
    )


def _fold(word: str) -> str:
    return word.lower().strip(",.;:!?")


_ROUTE = re.compile(
    r"\bfrom\s+(?P<a>[^,;:.()\d]+?)\s+to\s+(?P<b>[^,;:.()\d]+?)"
    r"(?=\s*(?:[,;:.()]|$)|\s+(?:in|on|at|by|for|after|before|during|when|while|and|with|via)\b)",
    re.IGNORECASE,
)


_BOTH_WAYS = re.compile(r"\b(?:vice versa|and back|both ways|round trips?|return)\b", re.I)


def reversed_route(claim: str, parts: Sequence[str]) -> int | None:
    """The index of a premise part that gives the claim's "from A to B" the other way round
    ("from B to A") and never this way; ``None`` otherwise: numbers and dates are ranges (the
    amount check's business), and a route both ways ("and vice versa") has no direction."""
    return _reversed_route(claim, tuple(parts))


@lru_cache(maxsize=1 << 14)
def _reversed_route(claim: str, parts: tuple[str, ...]) -> int | None:
    if _BOTH_WAYS.search(claim):
        return None
    routes = [(_ends(m["a"]), _ends(m["b"])) for m in _ROUTE.finditer(claim)]
    routes = [(a, b) for a, b in routes if a and b and a != b]
    if not routes:
        return None
    theirs = [
        [] if _BOTH_WAYS.search(p) else [(_ends(m["a"]), _ends(m["b"])) for m in _ROUTE.finditer(p)]
        for p in parts
    ]
    for a, b in routes:
        if any((a, b) in found for found in theirs):
            continue  # the evidence also says it this way
        for i, found in enumerate(theirs):
            if (b, a) in found:
                return i
    return None


def _ends(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


@dataclass(frozen=True)
class ValueClash:
    """The premise part that binds the claim's ``amount`` to something else, and ``rival``: the
    amount the part gives to what the claim describes."""

    part: int
    amount: Amount
    rival: Amount


# where one clause of a value list ends: "50 km/h in towns, 90 km/h on rural roads and 120 ..."
_CLAUSE = re.compile(r"\s*(?:;|,\s|\s(?:and|while|whereas|but)\s)\s*", re.IGNORECASE)
# a clause that goes on with the first one's subject: "…, but sold for $120,000"
_CONTINUES = re.compile(
    r"^(?:(?:and|but|then|yet|so|later|also|while|whereas)\s+)*(?:\w+ed|\w+ing|sold|made|won|"
    r"grew|fell|rose|went|took|became|gave|got|had|has|have|paid|ran|reached|is|are|was|were|"
    r"can|could|will|would|may|might|must|should)\b",
    re.IGNORECASE,
)


# a clause that opens with a participle and its own subject: "…; paid plans raise this to …"
_OWN_SUBJECT = re.compile(
    r"^(?:(?:and|but|then|yet|so|while|whereas)\s+)*\w+\s+[a-z]+s\s+(?!(?:of|for|in|into|to|on|at|"
    r"from|with|by|and|or|across|over|under|through|per|since|as|after|before|during)\b)[a-z]+",
    re.IGNORECASE,
)


def _continues(clause: str) -> bool:
    """Whether ``clause`` goes on with the sentence's first subject ("…, but sold for …")."""
    return bool(_CONTINUES.match(clause)) and not _OWN_SUBJECT.match(clause)


def _gapped(opening: str, subject: str) -> bool:
    """Whether a later clause's words before its value are a subject like the first clause's
    (``subject``) without a verb: at most two content words, none a verb, one shared ("other
    buyers up to 80%" after "First-time buyers can borrow up to 90%")."""
    words = set(content_words(opening))
    return (
        len(words) <= 2
        and _verb(_folded(opening, 0, len(opening))) is None
        and bool(words & set(content_words(subject)))
    )


def _folded(text: str, start: int, end: int) -> list[str]:
    return [_fold(w) for w in text[start:end].split()]


@dataclass(frozen=True)
class _Clause:
    start: int
    end: int
    values: tuple[Amount, ...]  # of the claim amount's kind, left to right


def other_value(claim: str, parts: Sequence[str]) -> ValueClash | None:
    """The evidence sentence that states the claim's amount for one thing and another amount for
    what the claim describes, or ``None``.

    "Dinner is reimbursed up to 25 euros." against "Meals are reimbursed up to 25 euros for lunch
    and 40 euros for dinner.": the sentence is cut into clauses, one per value ("… 25 euros for
    lunch" | "40 euros for dinner"); a frame every clause shares ("Meals are reimbursed up to")
    is set aside. The claim names none of the words only its value's clause has ("lunch") and
    some that only another clause has ("dinner"): it gives dinner lunch's value. The rival is
    that clause's value in the same place (its second value for the claim's second).

    Fail-closed: ``None`` unless every sentence that states the claim's amount is such a list,
    and the claim's words point away from its value's clause and to another one; a claim that
    names both (or neither) is left to the model."""
    return _other_value(claim.strip(), tuple(parts))


@lru_cache(maxsize=1 << 14)
def _other_value(claim: str, parts: tuple[str, ...]) -> ValueClash | None:
    found = amounts(claim)
    own = _plain(claim)
    for a in own:
        if any(
            q is not a and q.family == a.family and not (q.loose or _per(claim, q)) for q in found
        ):
            continue  # a claim of two values of a kind may span the list: "128 or 256 GB"
        a = _as_stated(a, parts)
        words = _words(claim, 0, len(claim), found, a.family)
        stating, clash = _listed(a, words, parts)
        if clash is not None:
            return clash
        if stating and (clash := _elsewhere(claim, a, words, stating, parts)) is not None:
            return clash
    named = _named_values(claim)
    for a in named:
        if any(q is not a and q.kind == a.kind for q in named):
            continue  # "red or green"
        words = _words(claim, 0, len(claim), (*found, *named), a.kind)
        _, clash = _listed(a, words, parts)
        if clash is not None:
            return clash
    return None


def _listed(
    a: Amount, words: frozenset[str], parts: Sequence[str]
) -> tuple[list[int], ValueClash | None]:
    """The parts that state ``a``, and the clash of the first when every one of them is a list
    that gives ``a`` to something else than the claim's ``words`` describe."""
    stating = [i for i, p in enumerate(parts) if _states(p, a)]
    clashes = [c for i in stating if (c := _clash(a, words, i, parts[i])) is not None]
    return stating, clashes[0] if clashes and len(clashes) == len(stating) else None


_NAMES = {
    word: (f"named{n}", Fraction(k))
    for n, group in enumerate(VALUE_SETS)
    for k, word in enumerate(group.split())
}
_NAME = re.compile(r"[A-Za-z]+")


@lru_cache(maxsize=1 << 14)
def _named_values(text: str) -> tuple[Amount, ...]:
    """The words of ``text`` that name a value of a closed set ("green", "autumn", "low" of
    "low-nitrogen"), as amounts of one kind per set, for lists: "Halogenated solvents go in
    the green container and non-halogenated solvents in the red one"."""
    out = []
    for m in _NAME.finditer(text):
        word = m.group().lower()
        named = _NAMES.get(word) or _NAMES.get(word[:-1] if word.endswith("s") else word)
        if named is not None:
            out.append(Amount(m.start(), m.end(), m.group(), named[0], named[1]))
    return tuple(out)


def _same_name(a: Amount, q: Amount) -> bool:
    return a.kind == q.kind and a.value == q.value


def _plain(text: str) -> tuple[Amount, ...]:
    """The values of ``text``: its amounts but labels, loose ones and what a value is given
    per ("100 g" of "22 g of sugars per 100 g")."""
    return tuple(q for q in amounts(text) if not (q.label or q.loose or _per(text, q)))


_PER = re.compile(r"\b(?:per|for every|for each)\s+$", re.IGNORECASE)


def _per(text: str, q: Amount) -> bool:
    return bool(_PER.search(text, 0, q.start))


def _values(part: str, a: Amount) -> tuple[Amount, ...]:
    """The values of ``part`` a list of ``a``'s kind may hold: its amounts, and for a named
    value its named ones too."""
    return (*_plain(part), *_named_values(part)) if _is_named(a) else _plain(part)


def _is_named(a: Amount) -> bool:
    return a.kind.startswith("named")


def _states(part: str, a: Amount) -> bool:
    """Whether ``part`` states ``a`` with an amount of its kind ("a year" of "2.9% a year" states
    no year, the "60" of "60 events" no 60 days), an exact one exactly ("about 2 months" is
    not "60 days"); a named value by its word."""
    if _is_named(a):
        return any(_same_name(a, q) for q in _named_values(part))
    return any(
        same_amount(a, q) and (a.value == q.value or a.bound == "~" or q.bound != "~")
        for q in amounts(part)
        if q.family == a.family and not q.loose
    )


def _as_stated(a: Amount, parts: Sequence[str]) -> Amount:
    """A plain number of the claim as the evidence's amount that states it: "260 degrees" as
    the temperature of "260 degrees Celsius" (where no plain number of the evidence does)."""
    if a.kind != "count" or any(
        q.kind == "count" and same_amount(a, q) for part in parts for q in amounts(part)
    ):
        return a
    for part in parts:
        for q in amounts(part):
            if q.family != "count" and same_amount(a, q):
                return replace(a, kind=q.kind, value=q.value)
    return a


def _elsewhere(
    claim: str, a: Amount, words: frozenset[str], stating: Sequence[int], parts: Sequence[str]
) -> ValueClash | None:
    """The premise sentence about what the claim describes that gives it another value, where
    the claim's own value is stated only in sentences about something else: "The World Equity
    Index Fund's ongoing charge is 0.15 percent." against "The Global Bond Fund has an ongoing
    charge of 0.15 percent." and "The World Equity Index Fund has an ongoing charge of 0.20
    percent.".

    The rival sentence says every claim word that each stating sentence says, and more (at
    least two, and half the claim's); it states no value the claim's does not decide between:
    "revenue was $5m" is not settled by "$5m in 2020" against "$3m in 2019". Its value has
    the claim's bound, and "before", "after", "during" and the like count as words."""
    words |= _conditions(claim)
    said = {
        i: words & (_words(p, 0, len(p), amounts(p), a.family) | _conditions(p))
        for i, p in enumerate(parts)
    }
    kinds = {q.family for q in amounts(claim)}
    best: int | None = None
    for i, part in enumerate(parts):
        if i in stating or not _like(a, part):
            continue
        mine = said[i]
        if len(mine) < 2 or 2 * len(mine) < len(words) or not all(said[s] < mine for s in stating):
            continue
        if any(_undecided(parts[s], part, kinds | {a.family}) for s in stating):
            continue
        if best is None or len(mine) > len(said[best]):
            best = i
    if best is None:
        return None
    return ValueClash(best, a, _like(a, parts[best], claim)[0])


def _like(a: Amount, part: str, claim: str = "") -> list[Amount]:
    """``part``'s other values of ``a``'s kind with ``a``'s bound ("up to 5 GB" is no rival of
    "100 MB"), those among most of the claim's words first."""
    return [
        q for q in rivals(a, part, limit=8, claim=claim) if q.bound == a.bound and not _per(part, q)
    ]


# words that set a value's condition apart: "during probation" / "after probation"
_CONDITION = re.compile(r"\b(?:before|after|during|until|without|unless|except)\b", re.I)


def _conditions(text: str) -> frozenset[str]:
    return frozenset(m.lower() for m in _CONDITION.findall(text))


def _undecided(one: str, other: str, kinds: set[str]) -> bool:
    """Whether two sentences state different values of a kind the claim names no value of."""

    def values(text: str) -> dict[str, set[tuple[str, object]]]:
        out: dict[str, set[tuple[str, object]]] = {}
        for q in _plain(text):
            if q.family not in kinds:
                out.setdefault(q.family, set()).add((q.kind, q.value))
        return out

    mine, theirs = values(one), values(other)
    return any(mine[k] != theirs[k] for k in mine.keys() & theirs.keys())


def _clash(a: Amount, words: frozenset[str], i: int, part: str) -> ValueClash | None:
    found = _values(part, a)
    kind = a.family
    clauses = _clauses(part, [q for q in found if q.family == kind])
    mine = [c for c in clauses if any(_same(a, q) for q in c.values)]
    if len(mine) != 1:
        return None
    home = mine[0]
    others = [c for c in clauses if c is not home]
    # A frame every clause shares: the later clauses open with their value ("…, 90 km/h on
    # rural roads and 120 km/h on motorways"), so what precedes the first value is everyone's.
    if any(_continues(part[c.start : c.end]) for c in clauses[1:]):
        return None  # one subject with several predicates, not a list of subjects
    first = clauses[0]
    shared = all(not content_words(part[c.start : c.values[0].start]) for c in clauses[1:])
    start = {c: first.values[0].start if shared and c is first else c.start for c in clauses}
    region = {c: _words(part, start[c], c.end, found, kind) for c in clauses}
    if not all(region.values()):
        return None  # a value without words of its own: "8 minutes and 20 seconds", "7 or 9"
    said = _folded(part, start[first], first.values[0].start)
    verb = _verb(said)
    subject = " ".join(said[:verb])
    if verb and all(_gapped(part[c.start : c.values[0].start], subject) for c in clauses[1:]):
        # the later clauses leave out the first one's verb ("First-time buyers can borrow up
        # to 90%; other buyers up to 80%"): it is everyone's
        region[first] -= frozenset(content_words(" ".join(said[verb:])))
    theirs = frozenset().union(*(region[c] for c in others))
    if not others or words & (region[home] - theirs):
        return None  # the claim names its value's own clause (or there is no other)
    best = max(others, key=lambda c: len(words & (region[c] - region[home])))
    # a named value needs two words pointing away: a later clause that leaves out the first
    # one's words ("blacks would move up the list, and whites would move down") points by one
    if len(words & (region[best] - region[home])) < (2 if _is_named(a) else 1):
        return None
    place = next(n for n, q in enumerate(home.values) if _same(a, q))
    return ValueClash(i, a, best.values[min(place, len(best.values) - 1)])


def _same(a: Amount, q: Amount) -> bool:
    return _same_name(a, q) if _is_named(a) else same_amount(a, q)


def _clauses(part: str, values: Sequence[Amount]) -> list[_Clause]:
    """``part`` cut at its clause breaks (none inside an amount), each piece with the
    ``values`` it holds; a piece without one joins the next (the last, the one before)."""
    if len(values) < 2:
        return []
    spans = [(q.start, q.end) for q in amounts(part)]
    cuts = [
        m
        for m in _CLAUSE.finditer(part)
        if not any(s < m.end() and m.start() < e for s, e in spans)
    ]
    bounds = [0, *(x for m in cuts for x in m.span()), len(part)]
    pieces = [(bounds[n], bounds[n + 1]) for n in range(0, len(bounds), 2)]
    strength = [0, *(_strength(m.group()) for m in cuts), 0]  # of the cut before each piece
    out: list[_Clause] = []
    pending = None
    for n, (s, e) in enumerate(pieces):
        held = tuple(q for q in values if s <= q.start < e)
        if pending is not None:
            s, pending = pending, None
        if not held and out and strength[n] < strength[n + 1]:
            # "the blue bin is for paper and cardboard, and the yellow bin ...": a piece cut
            # off by "and" before a comma's cut belongs with the clause before it
            out[-1] = _Clause(out[-1].start, e, out[-1].values)
            continue
        if not held:
            pending = s
            continue
        out.append(_Clause(s, e, held))
    if pending is not None and out:
        out[-1] = _Clause(out[-1].start, len(part), out[-1].values)
    return out if len(out) >= 2 else []


def _strength(cut: str) -> int:
    """How strongly a clause cut separates: a semicolon, a comma, a conjunction alone."""
    return 3 if ";" in cut else 2 if "," in cut else 1


def _words(text: str, start: int, end: int, found: Sequence[Amount], kind: str) -> frozenset[str]:
    """The content words of ``text[start:end]`` outside its amounts, each amount of another
    kind than ``kind`` as a token of its value ("year:2019")."""
    keys = set(content_words(outside(text, found, start, end)))
    keys |= {f"{q.kind}:{q.value}" for q in found if start <= q.start < end and q.family != kind}
    return frozenset(keys)
