"""Counterbalanced NLI pairs for verifier v3: every surface cue gets both labels.

The v2 recipe taught the model cues: a negation word in the claim meant *contradiction*, a
number not written verbatim in the evidence meant *neutral*, every claim word present in the
premise meant *entailment*. Each generator here therefore comes with its twin, so that the cue
appears under every label in about the shares of the generated set as a whole
(``scripts/audit_cues.py`` checks it):

* **negation paraphrase**: the evidence says with a privative word (*unpublished*, *missed*,
  *lacks*), an antonym, a bound or a quantifier what the claim says with a negation (*never
  published*, *did not attend*, *does not have*) -> entailment; the reverse (the evidence
  negates, the claim does not) -> entailment; the affirmed twin -> contradiction; the same
  negated claim about an absent fact -> neutral. The privative lexicon is mined from the
  training premises (``un-/in-/im-/il-/ir-/dis-/non-`` words whose base also occurs).
* **polarity agreement**: a real sentence and its negation (``not`` put after, or taken from
  after, its main-clause auxiliary), each *reworded* in the premise (an attribution or discourse
  word around it, or the negation contracted, so never verbatim) against each as the claim: the
  same polarity -> entailment, the other -> contradiction, either reported as a rumour -> neutral.
  v2 called a negated claim contradicted whenever the premise did not repeat it word for word
  ("In 2003, he did not finish the race." -> "He did not finish the race.": contradicted 0.80).
* **quantities written another way**: digits and words, dozens, unit conversions, fractions and
  percentages, frequencies, "up to" / "no more than" / "at most" -> entailment; a different value
  in the same other form -> contradiction; a stronger or unrelated bound -> neutral.
* **value binding**: two parallel facts about different entities in one premise; the right
  binding -> entailment, an entity given the other's value -> contradiction, an entity whose own
  fact is absent -> neutral.
* **near-duplicate evidence**: the evidence stated twice in slightly different words ->
  entailment (and the claim with one value changed -> contradiction).
* **same-topic evidence** (HotpotQA paragraphs of questions 0-53 / 54-59): the rest of the
  claim's own paragraph and sentences of the question's other paragraphs, without the claim's
  own sentence -> neutral; with it (or a light rewrite) -> entailment; with it changed (a
  number, a name, an antonym, a negation) -> contradiction. v3 read a sentence about another attribute of the same
  subject as a contradiction ("The museum café serves lunch until 15:00" against "The museum is
  closed on Mondays").
* **question form** (short answers, issue 22): a question and a short answer read as the
  hypothesis ``"{question} {answer}."`` or as the declarative claim built from them (both
  built by ``ene_core.text.short_answers``, exactly as the engine builds them), from
  HotpotQA questions 0-59 and from question-style rewrites of real sentences; the right answer
  -> entailment, a wrong answer from the same paragraphs -> contradiction, the evidence removed
  -> neutral.

Every generator takes an explicit ``random.Random``: one seed rebuilds the same pairs.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from synth_lexical import advice_pairs, lexical_pairs
from synth_nli import (  # also puts this checkout's ene_core on sys.path
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    Pair,
    content_words,
    entities,
    negate,
    paraphrase,
    shorten,
    swap_antonym,
    swap_entity,
    swap_number,
)

from ene_core.rules.quantities import spell
from ene_core.text.short_answers import qa_hypothesis, question_to_claim

# --------------------------------------------------------------------------- packing


def packed(evidence: Sequence[str], pool: Sequence[str], rng: random.Random, k: int = 3) -> str:
    """Evidence sentences (in order) among 0..k distractors from ``pool``, one per line."""
    n = rng.randint(0, min(k, len(pool)))
    extra = [s for s in rng.sample(list(pool), n) if s not in evidence] if n else []
    pos = rng.randint(0, len(extra))
    return "\n".join([*extra[:pos], *evidence, *extra[pos:]])


HEDGES = (
    "It is rumoured that",
    "Some reports claim that",
    "A draft proposal suggested that",
    "Critics have questioned whether",
    "It is not yet confirmed whether",
    "Local people say that",
    "An early plan said that",
    "One unverified post claimed that",
    "Fans have long guessed that",
    "It remains unclear whether",
    "A tabloid alleged that",
    "Some historians believe that",
)


def hedged(sentence: str, rng: random.Random) -> str:
    """The sentence reported as a rumour, plan or doubt: every word of it is in the premise, yet
    the premise does not assert it (a neutral twin for 'all content words present')."""
    body = sentence.rstrip(" .")
    if not re.match(r"^[A-Z][a-z]+ [A-Z]|^[A-Z]{2}", body):
        body = body[:1].lower() + body[1:]
    return f"{rng.choice(HEDGES)} {body}."


# --------------------------------------------------------------------------- lexicons

#: (subject-free predicate with a privative / antonym word, the same meaning with a negation,
#: the affirmed opposite). Subjects are filled in from names and nouns; {o} is an object slot.
PREDICATES: tuple[tuple[str, str, str], ...] = (
    ("remains unpublished", "has never been published", "has been published"),
    ("was never published", "remains unpublished", "was published"),
    ("missed the {o}", "did not attend the {o}", "attended the {o}"),
    ("was absent from the {o}", "was not present at the {o}", "was present at the {o}"),
    ("skipped the {o}", "did not go to the {o}", "went to the {o}"),
    ("lacks a {o}", "does not have a {o}", "has a {o}"),
    ("has no {o}", "does not have a {o}", "has a {o}"),
    ("failed the {o}", "did not pass the {o}", "passed the {o}"),
    ("lost the {o}", "did not win the {o}", "won the {o}"),
    ("rejected the {o}", "did not accept the {o}", "accepted the {o}"),
    ("declined the {o}", "did not accept the {o}", "accepted the {o}"),
    ("refused to sign the {o}", "did not sign the {o}", "signed the {o}"),
    ("forgot to renew the {o}", "did not renew the {o}", "renewed the {o}"),
    ("ignored the {o}", "paid no attention to the {o}", "paid close attention to the {o}"),
    ("stayed silent about the {o}", "said nothing about the {o}", "spoke about the {o}"),
    ("opposed the {o}", "did not support the {o}", "supported the {o}"),
    ("is unable to attend the {o}", "cannot attend the {o}", "can attend the {o}"),
    ("is prohibited from the {o}", "is not allowed in the {o}", "is allowed in the {o}"),
    ("is excluded from the {o}", "is not included in the {o}", "is included in the {o}"),
    (
        "left the {o} early",
        "did not stay until the end of the {o}",
        "stayed until the end of the {o}",
    ),
    ("is unaware of the {o}", "does not know about the {o}", "knows about the {o}"),
    ("abandoned the {o}", "did not finish the {o}", "finished the {o}"),
    ("postponed the {o}", "did not hold the {o} as planned", "held the {o} as planned"),
    ("cancelled the {o}", "did not go ahead with the {o}", "went ahead with the {o}"),
    ("withdrew from the {o}", "did not take part in the {o}", "took part in the {o}"),
    ("is closed all year", "is never open", "is open in summer"),
    ("is open all year", "is never closed", "is closed in winter"),
    ("always arrives late", "is never on time", "is always on time"),
    ("works alone", "works without a partner", "works with a partner"),
    ("is free of charge", "costs nothing", "costs a fee"),
    ("is free of charge", "does not cost anything", "must be paid for"),
    ("is optional", "is not required", "is required"),
    ("is mandatory", "is not optional", "is optional"),
    ("is rarely used", "is not used often", "is used every day"),
    ("is temporary", "is not permanent", "is permanent"),
    ("is invalid", "is not valid", "is valid"),
    ("is incomplete", "is not finished", "is complete"),
    ("is inaccurate", "is not accurate", "is accurate"),
    ("is unsafe", "is not safe", "is safe"),
    ("is private", "is not open to the public", "is open to the public"),
    ("is empty", "has nothing in it", "is full"),
    ("is single", "is not married", "is married"),
    ("is dead", "is no longer alive", "is still alive"),
    ("is unknown", "is not known", "is well known"),
    ("is unpaid", "is not paid", "is paid"),
    ("is unlisted", "is not listed", "is listed"),
    ("was unharmed", "was not hurt", "was badly hurt"),
    ("remained unmarried", "never married", "married twice"),
    ("was denied entry", "was not let in", "was let in"),
    ("stayed at home", "did not go out", "went out"),
)

#: Sentence-level quantifier and bound rewrites, {x}/{y} name slots, {o} object, {n} number.
QUANTIFIED: tuple[tuple[str, str, str], ...] = (
    # (evidence, entailed claim with a negation, contradicting claim)
    (
        "Both {x} and {y} missed the {o}.",
        "Neither {x} nor {y} attended the {o}.",
        "Both {x} and {y} attended the {o}.",
    ),
    (
        "{x} and {y} both stayed away from the {o}.",
        "Neither {x} nor {y} went to the {o}.",
        "{x} and {y} both went to the {o}.",
    ),
    (
        "All of the guests left before the {o}.",
        "None of the guests stayed for the {o}.",
        "Most of the guests stayed for the {o}.",
    ),
    (
        "Everyone on the team skipped the {o}.",
        "No one on the team went to the {o}.",
        "Several people on the team went to the {o}.",
    ),
    (
        "Every member voted against the {o}.",
        "No member voted for the {o}.",
        "Some members voted for the {o}.",
    ),
    (
        "The {o} holds up to {n} people.",
        "The {o} holds no more than {n} people.",
        "The {o} holds more than {n} people.",
    ),
    (
        "The {o} seats at most {n} people.",
        "The {o} cannot seat more than {n} people.",
        "The {o} seats at least {m} people.",
    ),
    (
        "The {o} needs at least {n} volunteers.",
        "The {o} needs no fewer than {n} volunteers.",
        "The {o} needs fewer than {n} volunteers.",
    ),
    (
        "The {o} takes a maximum of {n} bookings a day.",
        "The {o} takes no more than {n} bookings a day.",
        "The {o} takes at least {m} bookings a day.",
    ),
    (
        "The {o} is open every day of the year.",
        "The {o} is never closed.",
        "The {o} is closed on Sundays.",
    ),
    (
        "The {o} has always been run by volunteers.",
        "The {o} has never had paid staff.",
        "The {o} has always had paid staff.",
    ),
    (
        "The {o} was completed only in {n}.",
        "The {o} was not completed before {n}.",
        "The {o} was completed well before {n}.",
    ),
    (
        "The {o} has been closed since {n}.",
        "The {o} has not been open since {n}.",
        "The {o} has been open since {n}.",
    ),
)

OBJECTS = (
    "ceremony",
    "meeting",
    "festival",
    "trial",
    "audit",
    "rehearsal",
    "final",
    "summit",
    "conference",
    "inspection",
    "exam",
    "contract",
    "proposal",
    "merger",
    "treaty",
    "tournament",
    "reception",
    "hearing",
    "vote",
    "launch",
    "workshop",
    "auction",
    "concert",
    "funeral",
    "wedding",
    "course",
    "survey",
    "licence",
    "permit",
    "report",
    "warning",
    "appeal",
    "match",
    "expedition",
    "project",
    "campaign",
    "exhibition",
    "hall",
    "library",
    "clinic",
    "ferry",
    "bridge",
    "museum",
    "pool",
    "theatre",
    "archive",
    "school",
    "garden",
    "bakery",
    "station",
)
PLACES = (
    "hall",
    "theatre",
    "chapel",
    "gallery",
    "lecture room",
    "ferry",
    "bus",
    "studio",
    "clinic",
    "restaurant",
    "arena",
    "museum",
)

# --------------------------------------------------------------------------- privative lexicon

_PRIVATIVE = re.compile(r"^(un|in|im|il|ir|dis|non)([a-z]{4,})$")
_ADJ_END = re.compile(r"(?:ed|able|ible|ful|al|ent|ant|ive|ar|ic|ous|ure|ite|ear|ly|own|ipped)$")


def mine_privatives(sentences: Iterable[str], min_count: int = 2) -> dict[str, str]:
    """Privative word -> its base, both seen in ``sentences`` (``unpublished`` -> ``published``,
    ``incomplete`` -> ``complete``); only adjective- or participle-like words."""
    counts: Counter[str] = Counter()
    for s in sentences:
        counts.update(w for w in re.findall(r"[a-z]+", s.lower()))
    out: dict[str, str] = {}
    for word, n in counts.items():
        m = _PRIVATIVE.match(word)
        if not m or n < min_count:
            continue
        base = m.group(2)
        if counts[base] >= min_count and _ADJ_END.search(base) and not base.endswith("ly"):
            out[word] = base
    return dict(sorted(out.items()))


_COPULA = r"(is|are|was|were|remains|remained|seemed|seems|became|looked|looks)"


def copula_pairs(
    sentence: str, lexicon: dict[str, str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """Negation paraphrases of a real sentence with ``COPULA ADJ`` where ADJ is in the mined
    lexicon (either side): privative <-> negated base, each with its twins."""
    bases = {b: p for p, b in lexicon.items()}
    for m in re.finditer(rf"\b{_COPULA} (\w+)\b", sentence):
        verb, adj = m.group(1), m.group(2).lower()
        if adj in lexicon:
            priv, base = adj, lexicon[adj]
        elif adj in bases:
            priv, base = bases[adj], adj
        else:
            continue
        head, tail = sentence[: m.start()], sentence[m.end() :]
        neg_verb = {
            "remains": "is",
            "remained": "was",
            "seemed": "was",
            "seems": "is",
            "became": "was",
            "looked": "was",
            "looks": "is",
        }.get(verb, verb)

        def say(v: str, word: str, h: str = head, t: str = tail) -> str:
            return f"{h}{v} {word}{t}"

        s_priv, s_base = say(verb, priv), say(verb, base)
        s_not_base, s_not_priv = say(f"{neg_verb} not", base), say(f"{neg_verb} not", priv)
        out = [
            Pair(packed([s_priv], pool, rng), s_not_base, ENTAILMENT, f"{src}:neg-privative"),
            Pair(packed([s_not_base], pool, rng), s_priv, ENTAILMENT, f"{src}:neg-privative-rev"),
            Pair(packed([s_base], pool, rng), s_not_base, CONTRADICTION, f"{src}:neg-contra"),
            Pair(packed([s_not_base], pool, rng), s_base, CONTRADICTION, f"{src}:neg-removed"),
            Pair(packed([s_base], pool, rng), s_not_priv, ENTAILMENT, f"{src}:neg-double"),
            Pair(packed([s_priv], pool, rng), s_base, CONTRADICTION, f"{src}:antonym"),
            Pair(
                packed([hedged(s_priv, rng)], pool, rng), s_not_base, NEUTRAL, f"{src}:neg-hedged"
            ),
            Pair(
                packed([hedged(s_not_base, rng)], pool, rng), s_priv, NEUTRAL, f"{src}:priv-hedged"
            ),
        ]
        return out
    return []


def predicate_pairs(
    names: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """Negation paraphrases from :data:`PREDICATES` with real names as subjects."""
    priv, neg, pos = rng.choice(PREDICATES)
    obj = rng.choice(OBJECTS)
    x, y = rng.sample(list(names), 2)

    def s(subject: str, pred: str) -> str:
        return f"{subject} {pred.format(o=obj)}."

    return [
        Pair(packed([s(x, priv)], pool, rng), s(x, neg), ENTAILMENT, f"{src}:neg-paraphrase"),
        Pair(packed([s(x, neg)], pool, rng), s(x, priv), ENTAILMENT, f"{src}:neg-paraphrase-rev"),
        Pair(packed([s(x, pos)], pool, rng), s(x, neg), CONTRADICTION, f"{src}:neg-contra"),
        Pair(packed([s(x, neg)], pool, rng), s(x, pos), CONTRADICTION, f"{src}:neg-removed"),
        Pair(packed([s(x, priv)], pool, rng), s(x, pos), CONTRADICTION, f"{src}:antonym"),
        # the same negated claim about someone else, or with the fact absent: neutral
        Pair(
            packed([f"{x} and {y} were both expected at the {obj}.", s(y, priv)], pool, rng),
            s(x, neg),
            NEUTRAL,
            f"{src}:neg-other",
        ),
        Pair(packed([hedged(s(x, priv), rng)], pool, rng), s(x, neg), NEUTRAL, f"{src}:neg-hedged"),
        Pair(
            packed([f"{x} and {y} were both expected at the {obj}.", s(y, neg)], pool, rng),
            s(x, priv),
            NEUTRAL,
            f"{src}:priv-other",
        ),
    ]


def quantified_pairs(
    names: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """Quantifiers and bounds from :data:`QUANTIFIED` (their entailed, contradicting and
    neutral readings)."""
    ev, ent, con = rng.choice(QUANTIFIED)
    x, y = rng.sample(list(names), 2)
    n = rng.choice(
        [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 150, 200, 250, 500]
    )
    n = rng.randint(1990, 2023) if ("{n}." in ev and "in {n}" in ev) or "since {n}" in ev else n
    m = n + rng.choice([5, 10, 20, 50]) if n < 1900 else n
    obj = rng.choice(
        PLACES if "{n} people" in ev or "bookings" in ev or "volunteers" in ev else OBJECTS
    )
    fill = {"x": x, "y": y, "o": obj, "n": n, "m": m}
    e, h1, h2 = ev.format(**fill), ent.format(**fill), con.format(**fill)
    other_obj = rng.choice([o for o in OBJECTS if o != obj])
    absent = ev.format(**{**fill, "o": other_obj})
    return [
        Pair(packed([e], pool, rng), h1, ENTAILMENT, f"{src}:quant-paraphrase"),
        Pair(
            packed([h1], pool, rng), e.replace("  ", " "), ENTAILMENT, f"{src}:quant-paraphrase-rev"
        ),
        Pair(packed([e], pool, rng), h2, CONTRADICTION, f"{src}:quant-contra"),
        Pair(packed([absent], pool, rng), h1, NEUTRAL, f"{src}:quant-other"),
    ]


# --------------------------------------------------------------------------- quantities

number_words = spell  # 1-999 in words, as the engine reads them


#: (unit written in the claim, unit in the evidence, factor: evidence value = claim value * f)
CONVERSIONS: tuple[tuple[str, str, float], ...] = (
    ("kilometres", "metres", 1000),
    ("km", "metres", 1000),
    ("metres", "centimetres", 100),
    ("kilograms", "grams", 1000),
    ("kg", "grams", 1000),
    ("litres", "millilitres", 1000),
    ("hours", "minutes", 60),
    ("minutes", "seconds", 60),
    ("weeks", "days", 7),
    ("years", "months", 12),
    ("days", "hours", 24),
    ("tonnes", "kilograms", 1000),
)
FRACTIONS: tuple[tuple[str, int], ...] = (
    ("half", 50),
    ("a quarter", 25),
    ("three quarters", 75),
    ("a tenth", 10),
    ("a fifth", 20),
    ("two fifths", 40),
    ("three fifths", 60),
    ("four fifths", 80),
    ("one in ten", 10),
    ("one in five", 20),
    ("one in four", 25),
    ("nine in ten", 90),
    ("two in five", 40),
)
FREQUENCIES: tuple[tuple[str, str], ...] = (
    ("once a week", "weekly"),
    ("every day", "daily"),
    ("once a month", "monthly"),
    ("once a year", "annually"),
    ("twice a year", "every six months"),
    ("every two weeks", "fortnightly"),
    ("four times a year", "quarterly"),
    ("every hour", "hourly"),
    ("twice a week", "two times a week"),
)
QUANT_FRAMES = (
    ("The trail is {v} long.", "distance"),
    ("The tank holds {v}.", "volume"),
    ("The parcel weighs {v}.", "mass"),
    ("The flight lasts {v}.", "duration"),
    ("The warranty runs for {v}.", "period"),
    ("The course takes {v} to complete.", "duration"),
    ("The bridge spans {v}.", "distance"),
    ("The ferry crossing takes {v}.", "duration"),
)
_KIND = {
    "distance": ("kilometres", "km", "metres"),
    "volume": ("litres",),
    "mass": ("kilograms", "kg", "tonnes"),
    "duration": ("hours", "minutes", "days"),
    "period": ("years", "weeks", "months"),
}
SHARE_FRAMES = (
    "{v} of the members voted for the plan.",
    "{v} of the budget goes to maintenance.",
    "{v} of the patients reported side effects.",
    "{v} of the forest was lost in the fire.",
    "{v} of the tickets were sold online.",
    "About {v} of the staff work remotely.",
)
FREQ_FRAMES = (
    "The committee meets {v}.",
    "The newsletter is sent {v}.",
    "The filters must be cleaned {v}.",
    "The market is held {v}.",
    "Backups run {v}.",
    "The bus to the airport leaves {v}.",
)
COUNT_FRAMES = (
    "The village has {v} houses.",
    "The team won {v} matches last season.",
    "The museum owns {v} paintings by the artist.",
    "The library lends {v} laptops.",
    "The orchestra has {v} violinists.",
    "The recipe needs {v} eggs.",
)


def _fmt(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def quantity_pairs(
    subjects: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """The same amount written another way (entailment) and a different amount in that same
    form (contradiction); the claim's form is drawn at random on either side."""
    kind = rng.random()
    if kind < 0.35:
        frame, dim = rng.choice(QUANT_FRAMES)
        convs = [c for c in CONVERSIONS if c[0] in _KIND[dim]]
        unit, small, f = rng.choice(convs)
        v = rng.choice([1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 12])
        a, b = f"{_fmt(v)} {unit}", f"{_fmt(v * f)} {small}"
        w = v + rng.choice([1, 2, 0.5, 3]) if v > 1 else v + 1
        wrong_b = f"{_fmt(w * f)} {small}"
        wrong_a = f"{_fmt(w)} {unit}"
    elif kind < 0.55:
        frame = rng.choice(SHARE_FRAMES)
        word, pct = rng.choice(FRACTIONS)
        other = rng.choice([p for _, p in FRACTIONS if p != pct])
        wword = rng.choice([w for w, p in FRACTIONS if p != pct])
        a, b, wrong_b, wrong_a = word, f"{pct}%", f"{other}%", wword
        frame = frame if not frame.startswith("About") else frame.replace("About ", "")
    elif kind < 0.75:
        frame = rng.choice(FREQ_FRAMES)
        a, b = rng.choice(FREQUENCIES)
        wrong_a, wrong_b = rng.choice([f for f in FREQUENCIES if f[0] != a])
    else:
        frame = rng.choice(COUNT_FRAMES)
        n = rng.choice([*range(2, 20), 24, 36, 30, 40, 45, 60, 75, 120, 250])
        a = number_words(n) if n != 24 or rng.random() < 0.5 else "two dozen"
        b = str(n)
        m = n + rng.choice([1, 2, 3, 5, 10])
        wrong_a, wrong_b = number_words(m), str(m)
    if rng.random() < 0.5:  # which form the evidence uses
        a, b, wrong_a, wrong_b = b, a, wrong_b, wrong_a
    cap = lambda s: s[0].upper() + s[1:]  # noqa: E731
    ev, claim = cap(frame.format(v=b)), cap(frame.format(v=a))
    wrong = cap(frame.format(v=wrong_a))
    out = [
        Pair(packed([ev], pool, rng), claim, ENTAILMENT, f"{src}:quantity-paraphrase"),
        Pair(packed([ev], pool, rng), wrong, CONTRADICTION, f"{src}:quantity-contra"),
    ]
    if rng.random() < 0.4:
        out.append(
            Pair(
                packed([cap(frame.format(v=wrong_b))], pool, rng),
                claim,
                CONTRADICTION,
                f"{src}:quantity-contra-rev",
            )
        )
    # neutral: the same amount said about another subject in the premise
    out.append(Pair(packed([hedged(ev, rng)], pool, rng), claim, NEUTRAL, f"{src}:quantity-hedged"))
    out.append(
        Pair(packed([hedged(claim, rng)], pool, rng), claim, NEUTRAL, f"{src}:quantity-hedged")
    )
    return out


def real_quantity_pairs(
    sentence: str, pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """On a real sentence with a small integer: digits <-> words (entailment) and another value
    in the other form (contradiction), plus a neutral twin with the number absent."""
    m = re.search(r"(?<![\w.,$])([2-9]|1[0-9]|[2-9]0)(?![\w.,%:])", sentence)
    if not m:
        return []
    n = int(m.group(1))
    if 1 <= n < 100 and re.search(r"\b(?:19|20)\d\d\b", sentence[m.start() - 1 : m.end() + 3]):
        return []
    word = number_words(n)
    other = number_words(n + rng.choice([1, 2, 3]))
    claim = sentence[: m.start()] + word + sentence[m.end() :]
    wrong = sentence[: m.start()] + other + sentence[m.end() :]
    return [
        Pair(packed([sentence], pool, rng), claim, ENTAILMENT, f"{src}:digits-words"),
        Pair(packed([claim], pool, rng), sentence, ENTAILMENT, f"{src}:words-digits"),
        Pair(packed([sentence], pool, rng), wrong, CONTRADICTION, f"{src}:digits-words-contra"),
        Pair(packed([hedged(sentence, rng)], pool, rng), claim, NEUTRAL, f"{src}:digits-hedged"),
    ]


# --------------------------------------------------------------------------- value binding

BINDING_FRAMES = (
    (
        "{e} coached the {v}.",
        (
            "Falcons",
            "Ravens",
            "Hawks",
            "Owls",
            "Tigers",
            "Wolves",
            "Comets",
            "Pirates",
            "Storm",
            "Rangers",
        ),
    ),
    (
        "{e} was born in {v}.",
        ("Lyon", "Bergen", "Porto", "Graz", "Tartu", "Cork", "Leiden", "Turku", "Bari", "Ghent"),
    ),
    (
        "{e} designed the {v} bridge.",
        ("north", "south", "east", "west", "old", "harbour", "river", "rail"),
    ),
    (
        "{e} won the {v} in {y}.",
        ("Arden Prize", "Corwin Medal", "Halden Award", "Mirren Cup", "Selby Trophy", "Orla Prize"),
    ),
    (
        "{e} plays the {v} in the band.",
        ("cello", "drums", "bass", "trumpet", "violin", "piano", "flute", "guitar"),
    ),
    (
        "The {v} office is run by {e}.",
        ("Oslo", "Lisbon", "Dublin", "Vienna", "Prague", "Madrid", "Warsaw", "Zurich"),
    ),
    ("{e} scored {v} goals this season.", tuple(str(i) for i in range(3, 31))),
    ("{e} joined the company in {v}.", tuple(str(i) for i in range(1985, 2024))),
    (
        "{e} wrote a novel about {v}.",
        (
            "whaling",
            "a lighthouse",
            "a circus",
            "the gold rush",
            "a shipwreck",
            "a chess prodigy",
            "a border town",
        ),
    ),
    (
        "{e} moved to {v} after the war.",
        ("Canada", "Chile", "Kenya", "Norway", "Japan", "Brazil", "Egypt", "Peru"),
    ),
)


def binding_pairs(
    names: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """Two parallel facts about two entities in one premise: right binding -> entailment, the
    other entity's value -> contradiction, a fact whose own statement is absent -> neutral."""
    frame, values = rng.choice(BINDING_FRAMES)
    e1, e2 = rng.sample(list(names), 2)
    v1, v2 = rng.sample(list(values), 2)
    y = rng.randint(1950, 2023)

    def s(e: str, v: str) -> str:
        t = frame.format(e=e, v=v, y=y)
        return t[0].upper() + t[1:]

    f1, f2 = s(e1, v1), s(e2, v2)
    both = [f1, f2] if rng.random() < 0.5 else [f2, f1]
    if rng.random() < 0.5:  # one sentence holding both facts
        joined = f"{f1.rstrip('.')}, while {f2[0].lower() + f2[1:] if not f2[0].isupper() or f2.startswith('The ') else f2}"
        both = [joined.replace("while The", "while the")]
    return [
        Pair(packed(both, pool, rng), f1, ENTAILMENT, f"{src}:binding-right"),
        Pair(packed(both, pool, rng), s(e1, v2), CONTRADICTION, f"{src}:binding-swapped"),
        Pair(packed(both, pool, rng), s(e2, v1), CONTRADICTION, f"{src}:binding-swapped"),
        Pair(packed([f2], pool, rng), s(e1, v2), NEUTRAL, f"{src}:binding-absent"),
        Pair(packed([f2, hedged(f1, rng)], pool, rng), f1, NEUTRAL, f"{src}:binding-hedged"),
    ]


def nonparallel_binding_pairs(
    names: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """The value sits in the premise but in another entity's fact with another shape ("A novel
    about whaling won the Corwin Medal")."""
    prizes = (
        "Arden Prize",
        "Corwin Medal",
        "Halden Award",
        "Mirren Cup",
        "Selby Trophy",
        "Orla Prize",
        "Tessel Award",
    )
    topics = (
        "whaling",
        "a lighthouse",
        "a circus",
        "the gold rush",
        "a shipwreck",
        "a border town",
        "a lost map",
    )
    p1, p2 = rng.sample(prizes, 2)
    t1, t2 = rng.sample(topics, 2)
    ev = [f"The {p1} went to a novel about {t1}.", f"A novel about {t2} won the {p2}."]
    rng.shuffle(ev)
    return [
        Pair(
            packed(ev, pool, rng),
            f"The {p1} went to a novel about {t2}.",
            CONTRADICTION,
            f"{src}:binding-swapped",
        ),
        Pair(
            packed(ev, pool, rng),
            f"A novel about {t1} won the {p1}.",
            ENTAILMENT,
            f"{src}:binding-right",
        ),
        Pair(
            packed(ev, pool, rng),
            f"The {p2} went to a novel about {t2}.",
            ENTAILMENT,
            f"{src}:binding-right",
        ),
        Pair(
            packed([ev[0] if p2 in ev[0] else ev[1]], pool, rng),
            f"The {p1} went to a novel about {t2}.",
            NEUTRAL,
            f"{src}:binding-absent",
        ),
    ]


def real_binding_pairs(
    sentence: str, entity_pool: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """Value binding on a real sentence: a parallel copy about another entity with another value
    (a number or a second entity)."""
    own = entities(sentence)
    if len(own) < 1 or not re.match(r"^[A-Z]", sentence):
        return []
    subject = own[0]
    if not sentence.startswith(subject) and not sentence.startswith("The " + subject):
        return []
    cands = [
        e
        for e in entity_pool
        if e not in sentence and abs(len(e.split()) - len(subject.split())) <= 1
    ]
    if not cands:
        return []
    other_subject = rng.choice(cands)
    changed = swap_number(sentence, rng) or (
        swap_entity(sentence.replace(subject, "\x00", 1), entity_pool, rng) or ""
    ).replace("\x00", subject)
    if not changed or changed == sentence or subject not in changed:
        return []
    twin = changed.replace(subject, other_subject, 1)  # the other entity with the other value
    wrong = changed  # our entity with the other entity's value
    both = [sentence, twin] if rng.random() < 0.5 else [twin, sentence]
    return [
        Pair(packed(both, pool, rng, k=2), sentence, ENTAILMENT, f"{src}:binding-right"),
        Pair(packed(both, pool, rng, k=2), wrong, CONTRADICTION, f"{src}:binding-swapped"),
        Pair(packed([twin], pool, rng, k=2), sentence, NEUTRAL, f"{src}:binding-absent"),
        Pair(
            packed([twin, hedged(sentence, rng)], pool, rng, k=2),
            sentence,
            NEUTRAL,
            f"{src}:binding-hedged",
        ),
    ]


def near_duplicate_pairs(
    sentence: str, pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """The evidence stated twice (a shortened copy beside the full sentence): entailment; the
    claim with a value changed: contradiction."""
    short = shorten(sentence, rng)
    if not short or short == sentence:
        return []
    ev = [sentence, short] if rng.random() < 0.5 else [short, sentence]
    out = [
        Pair(packed(ev, pool, rng, k=2), short, ENTAILMENT, f"{src}:near-duplicate"),
        Pair(packed([hedged(sentence, rng)], pool, rng, k=2), short, NEUTRAL, f"{src}:hedged"),
    ]
    wrong = swap_number(short, rng)
    if wrong and wrong != short:
        out.append(
            Pair(packed(ev, pool, rng, k=2), wrong, CONTRADICTION, f"{src}:near-duplicate-contra")
        )
    return out


# --------------------------------------------------------------------------- polarity

_AUX = r"(is|are|was|were|can|could|will|would|should|must|does|do|did|has|have|had)"
_NEGATED = re.compile(rf"^((?:\S+ ){{1,7}}?){_AUX} (not|never) (?=\w)", re.IGNORECASE)
_AFFIRMED = re.compile(rf"^((?:\S+ ){{1,7}}?){_AUX} (?!not\b|never\b|no\b|n't)(?=[a-z])")
_CLAUSE = re.compile(r",|;|\b(?:who|which|that|whose|when|if|because|although|while)\b", re.I)
_CONTRACT = {
    "is not": "isn't",
    "are not": "aren't",
    "was not": "wasn't",
    "were not": "weren't",
    "does not": "doesn't",
    "do not": "don't",
    "did not": "didn't",
    "has not": "hasn't",
    "have not": "haven't",
    "had not": "hadn't",
    "could not": "couldn't",
    "will not": "won't",
    "would not": "wouldn't",
    "should not": "shouldn't",
    "can not": "cannot",
}
_COMMON_OPENERS = frozenset(  # sentence openers that are lower-cased after a frame
    "The A An It Its They Their He His She Her We Our This That These Those There Some Many"  # noqa: SIM905
    " Most All Each Every In On At".split()
)
#: what a premise may add around a sentence without touching its truth or its negation's scope
_AROUND = (
    "According to the report, {s}",
    "Records show that {s}",
    "As the article notes, {s}",
    "In fact, {s}",
    "Notably, {s}",
    "Officials confirmed that {s}",
    "{S}, according to local sources.",
    "{S}, the records show.",
    "{S}, as several witnesses noted.",
    "In addition, {s}",
    "However, {s}",
    "It is documented that {s}",
    "As of the latest update, {s}",
    "{S}, a fact noted in several accounts.",
    "{S}, which surprised many.",
)
#: what may stand before a sentence told in the past, without narrowing a "never"
_PAST_AROUND = ("In {year}, {s}", "At the time, {s}", "That year, {s}", "After the meeting, {s}")
_PAST = re.compile(r"^(?:\S+ ){1,7}?(?:was|were|did|had|could|would)\b")


def polarity_forms(sentence: str) -> tuple[str, str] | None:
    """``(affirmed, negated)`` forms of a real sentence whose main-clause auxiliary comes early,
    or None. The negation is put after (or taken from after) that auxiliary. Stricter than
    ``synth_nli.negate`` (the v2 recipe's: first auxiliary anywhere, "never" -> "once"), whose
    output need not be the sentence's exact denial."""
    if not sentence.rstrip().endswith("."):
        return None  # questions, fragments
    m = _NEGATED.match(sentence)
    if m and not _CLAUSE.search(m.group(1)):
        head = m.group(1) + m.group(2)
        return f"{head} {sentence[m.end() :]}", sentence
    m = _AFFIRMED.match(sentence)
    if not m or _CLAUSE.search(m.group(1)):
        return None
    aux = m.group(2).lower()
    rest = sentence[m.end() :]
    if aux in ("has", "have", "had") and not re.match(r"\w+(?:ed|en|wn|ne)\b", rest):
        return None  # "has a dog": no participle to negate
    return sentence, f"{m.group(1)}{m.group(2)} not {rest}"


def contracted(sentence: str) -> str:
    """ "is not" -> "isn't", "did not" -> "didn't" ..."""
    for full, short in _CONTRACT.items():
        sentence = re.sub(rf"\b{full}\b", short, sentence)
    return sentence


def reworded(sentence: str, rng: random.Random) -> str:
    """The sentence with an attribution or discourse word around it, or its negation
    contracted: the same statement, not verbatim."""
    short = contracted(sentence)
    if short != sentence and rng.random() < 0.3:
        return short
    body = sentence.rstrip(" .")
    if body.split(" ", 1)[0] in _COMMON_OPENERS:
        frames = _AROUND
        if _PAST.match(body) and not re.search(r"\bnever\b|\d{4}", body) and rng.random() < 0.4:
            frames = _PAST_AROUND
        low = body[:1].lower() + body[1:] + "."
        return rng.choice(frames).format(s=low, S=body, year=rng.randint(1950, 2022))
    return rng.choice([f for f in _AROUND if f.startswith("{S}")]).format(S=body)


def polarity_pairs(sentence: str, pool: Sequence[str], rng: random.Random, src: str) -> list[Pair]:
    """A real sentence and its negation, each reworded in the premise (never verbatim) against
    each as the claim: the same polarity -> entailment, the other -> contradiction, either form
    reported as a rumour -> neutral (every word present, nothing asserted). A negation in the
    claim gets each label as often, with the premise worded otherwise (v2 called every such
    claim contradicted)."""
    forms = polarity_forms(sentence)
    if forms is None:
        return []
    pos, neg = forms
    out = []
    for ev, ev_name in ((pos, "pos"), (neg, "neg")):
        premise = packed([reworded(ev, rng)], pool, rng, k=2)
        for claim, claim_name in ((pos, "pos"), (neg, "neg")):
            if rng.random() < 0.15 and contracted(claim) not in premise:
                claim = contracted(claim)
            label = ENTAILMENT if ev_name == claim_name else CONTRADICTION
            tag = "polarity-same" if label == ENTAILMENT else "polarity-flip"
            out.append(Pair(premise, claim, label, f"{src}:{tag}-{claim_name}"))
    for claim, claim_name in ((pos, "pos"), (neg, "neg")):
        rumour = packed([hedged(rng.choice((pos, neg)), rng)], pool, rng, k=2)
        out.append(Pair(rumour, claim, NEUTRAL, f"{src}:polarity-hedged-{claim_name}"))
    return out


# --------------------------------------------------------------------------- compact binding

#: (fact with {m} and {v}, value maker, modifiers). A premise lists several facts in one
#: sentence: the first in full, the rest as "{v} {m}" pieces ("50 km/h in towns, 90 km/h on
#: rural roads and 120 km/h on motorways"), the way documentation writes them.
LIST_FRAMES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "the speed limit is {v} {m}",
        "{n} km/h",
        ("in built-up areas", "on rural roads", "on motorways", "near schools", "on expressways"),
    ),
    (
        "the API allows {v} {m}",
        "{n} requests per minute",
        ("on the Free plan", "on the Pro plan", "on the Team plan", "on the Enterprise plan"),
    ),
    (
        "meals are reimbursed up to {v} {m}",
        "{n} euros",
        ("for breakfast", "for lunch", "for dinner"),
    ),
    (
        "the notice period is {v} {m}",
        "{k} weeks",
        ("for the employee", "for the employer", "during probation"),
    ),
    (
        "the vacuum runs for {v} {m}",
        "{n} minutes",
        ("on the Eco setting", "on the Standard setting", "on the Max setting"),
    ),
    (
        "the plan includes {v} {m}",
        "{n} GB of storage",
        ("on the Basic tier", "on the Plus tier", "on the Premium tier"),
    ),
    (
        "the ticket costs {v} {m}",
        "{n} dollars",
        ("for adults", "for children", "for seniors", "for students"),
    ),
    (
        "the loan covers up to {v} {m}",
        "{p}% of the price",
        ("for first-time buyers", "for other buyers", "for buy-to-let purchases"),
    ),
    (
        "the museum charges {v} {m}",
        "{n} euros",
        ("on weekdays", "at weekends", "on public holidays"),
    ),
    (
        "the battery lasts {v} {m}",
        "{k} hours",
        ("in standby mode", "with the screen on", "during video calls"),
    ),
    ("the drive takes {v} {m}", "{n} minutes", ("in summer", "in winter", "at rush hour")),
    (
        "the tank holds {v} {m}",
        "{n} litres",
        ("in the standard model", "in the long-range model", "in the compact model"),
    ),
    (
        "the fee is {v} {m}",
        "{n} euros a month",
        ("for members", "for non-members", "for corporate accounts"),
    ),
    (
        "the warranty lasts {v} {m}",
        "{k} years",
        ("on the motor", "on the frame", "on the battery", "on the display"),
    ),
)
_PLACE_OPENERS = ("In Velland", "At the depot", "Under the new policy", "This year", "Currently")


def _list_value(kind: str, rng: random.Random, taken: set[str]) -> str:
    while True:
        v = kind.format(
            n=rng.choice([5, 8, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60, 80, 90, 100, 120, 600]),
            k=rng.choice(["one", "two", "three", "four", "six", "eight", "ten", "12", "24"]),
            p=rng.choice([50, 60, 70, 75, 80, 85, 90, 95]),
        )
        if v not in taken:
            taken.add(v)
            return v


_WORD_NUMBERS = {spell(n): str(n) for n in range(1, 25)}


def _other_form(value: str) -> str:
    """The value's number in the other form: digits <-> words, "%" <-> "per cent"."""
    head, _, rest = value.partition(" ")
    if head.endswith("%"):
        return f"{head[:-1]} per cent {rest}".strip()
    if head.isdigit():
        return f"{spell(int(head))} {rest}".strip()
    return f"{_WORD_NUMBERS.get(head, head)} {rest}".strip()


def _sentence(body: str) -> str:
    return body[:1].upper() + body[1:].rstrip(".") + "."


def _told(premise: str, pool: Sequence[str], rng: random.Random) -> str:
    """The premise as written, or half the time :func:`reworded` (never the claim verbatim),
    among up to two distractors."""
    premise = reworded(premise, rng) if rng.random() < 0.5 else premise
    return packed([premise], pool, rng, k=2)


def list_binding_pairs(pool: Sequence[str], rng: random.Random, src: str) -> list[Pair]:
    """Several values bound to modifiers in one sentence: the right value -> entailment, a value
    listed for another modifier -> contradiction, a modifier the premise does not list ->
    neutral (with a listed value or a new one)."""
    fact, kind, mods = rng.choice(LIST_FRAMES)
    k = min(len(mods) - 1, rng.choice([2, 2, 3, 3, 4]))
    chosen = rng.sample(list(mods), k + 1)
    listed, missing = chosen[:k], chosen[k]
    taken: set[str] = set()
    values = [_list_value(kind, rng, taken) for _ in listed]
    new = _list_value(kind, rng, taken)
    items = [f"{v} {m}" for v, m in zip(values, listed, strict=True)]
    head = fact.split("{v}")[0]
    style = rng.random()
    if style < 0.5:
        body = f"{head}{', '.join(items[:-1])}{',' if k > 2 else ''} and {items[-1]}"
    elif style < 0.8:
        body = f"{head}{items[0]}; " + "; ".join(items[1:])
    else:  # the facts in full, joined by "while"
        full = [fact.format(v=v, m=m) for v, m in zip(values, listed, strict=True)]
        body = (", while " if k == 2 else "; ").join(full)
    if rng.random() < 0.3:
        body = f"{rng.choice(_PLACE_OPENERS)} {body}"
    premise = _sentence(body)

    def claim(m: str, v: str) -> str:
        if rng.random() < 0.3:  # the same value written another way
            v = _other_form(v)
        if rng.random() < 0.4:  # the modifier fronted
            return _sentence(f"{m}, {fact.replace(' {m}', '').format(v=v)}")
        return _sentence(fact.format(v=v, m=m))

    i, j = rng.sample(range(k), 2)
    without = [f"{v} {m}" for v, m in zip(values, listed, strict=True) if m != listed[i]]
    rest = _sentence(f"{head}{' and '.join(without)}")
    out = [
        Pair(
            _told(premise, pool, rng), claim(listed[i], values[i]), ENTAILMENT, f"{src}:list-right"
        ),
        Pair(
            _told(premise, pool, rng), claim(listed[j], values[j]), ENTAILMENT, f"{src}:list-right"
        ),
        Pair(
            _told(premise, pool, rng),
            claim(listed[i], values[j]),
            CONTRADICTION,
            f"{src}:list-swapped",
        ),
        Pair(_told(premise, pool, rng), claim(listed[j], new), CONTRADICTION, f"{src}:list-other"),
        Pair(_told(premise, pool, rng), claim(missing, values[i]), NEUTRAL, f"{src}:list-absent"),
    ]
    if k > 2:  # the modifier dropped from the premise: its value is no longer asserted
        out.append(
            Pair(_told(rest, pool, rng), claim(listed[i], values[i]), NEUTRAL, f"{src}:list-absent")
        )
    else:
        out.append(
            Pair(_told(premise, pool, rng), claim(missing, new), NEUTRAL, f"{src}:list-absent")
        )
    return out


#: (premise with {x} and {y} in two roles, claims true of {x}, claims true of {y}); a claim
#: of one role about the other person is contradicted (each role has one holder).
ROLE_FRAMES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "The {n} expedition was led by {x}, with {y} as deputy.",
        ("The {n} expedition was led by {x}.", "{x} led the {n} expedition."),
        ("{y} was the deputy leader of the {n} expedition.",),
    ),
    (
        "{x} was the club's top scorer with {a} goals, while {y} led the team in assists with {b}.",
        (
            "{x} was the club's top scorer with {a} goals.",
            "{x} scored the most goals for the club.",
        ),
        ("{y} led the team in assists.", "{y} had the most assists, with {b}."),
    ),
    (
        "The {n} final was won by {x}; {y} finished as runner-up.",
        ("{x} won the {n} final.", "The winner of the {n} final was {x}."),
        ("{y} was the runner-up in the {n} final.", "{y} lost the {n} final."),
    ),
    (
        "The committee is chaired by {x}, and {y} serves as its secretary.",
        ("{x} chairs the committee.", "The committee's chair is {x}."),
        ("{y} is the committee's secretary.",),
    ),
    (
        "{x} wrote the music for the {n} opera and {y} wrote the libretto.",
        ("{x} composed the music for the {n} opera.",),
        ("{y} wrote the libretto of the {n} opera.", "The libretto was written by {y}."),
    ),
    (
        "{x} captains the side, while {y} is its head coach.",
        ("{x} is the captain of the side.", "The side is captained by {x}."),
        ("{y} coaches the side.", "The head coach is {y}."),
    ),
    (
        "The {n} study was designed by {x} and carried out by {y}.",
        ("{x} designed the {n} study.",),
        ("{y} carried out the {n} study.", "The {n} study was conducted by {y}."),
    ),
)


def role_binding_pairs(
    names: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """Two people in two roles in one sentence: a role given to its holder -> entailment, to the
    other person -> contradiction; with the first role absent from the premise (both people
    still named) -> neutral for either person."""
    frame, x_claims, y_claims = rng.choice(ROLE_FRAMES)
    x, y, z = rng.sample(list(names), 3)
    fill = {"n": rng.randint(1850, 2023), "a": rng.randint(9, 30), "b": rng.randint(5, 15)}
    premise = frame.format(x=x, y=y, **fill)
    cx, cy = rng.choice(x_claims), rng.choice(y_claims)
    also = rng.choice(("also took part", "was also involved", "was there as well"))
    # the y role alone: x is named, but the x role is absent
    only_y = f"{rng.choice(y_claims).format(x=z, y=y, **fill)} {x} {also}."
    return [
        Pair(
            _told(premise, pool, rng), cx.format(x=x, y=y, **fill), ENTAILMENT, f"{src}:role-right"
        ),
        Pair(
            _told(premise, pool, rng), cy.format(x=x, y=y, **fill), ENTAILMENT, f"{src}:role-right"
        ),
        Pair(
            _told(premise, pool, rng),
            cx.format(x=y, y=x, **fill),
            CONTRADICTION,
            f"{src}:role-swapped",
        ),
        Pair(
            _told(premise, pool, rng),
            cy.format(x=y, y=x, **fill),
            CONTRADICTION,
            f"{src}:role-swapped",
        ),
        Pair(_told(only_y, pool, rng), cx.format(x=x, y=y, **fill), NEUTRAL, f"{src}:role-absent"),
        Pair(_told(only_y, pool, rng), cx.format(x=y, y=x, **fill), NEUTRAL, f"{src}:role-absent"),
    ]


# --------------------------------------------------------------------------- scope

#: (kind of item, items, predicate for one item affirmed / negated, for several affirmed /
#: negated). Items named in the plural take the plural predicate alone.
SCOPE_FRAMES: tuple[tuple[str, tuple[str, ...], tuple[str, str, str, str]], ...] = (
    (
        "databases",
        ("PostgreSQL", "MySQL", "SQLite", "Oracle", "SQL Server", "MariaDB"),
        ("is supported", "is not supported", "are supported", "are not supported"),
    ),
    (
        "plans",
        ("the Basic plan", "the Plus plan", "the Pro plan", "the Team plan", "the Business plan"),
        (
            "includes phone support",
            "does not include phone support",
            "include phone support",
            "do not include phone support",
        ),
    ),
    (
        "plans",
        ("the Starter plan", "the Growth plan", "the Scale plan", "the Enterprise plan"),
        (
            "offers daily backups",
            "doesn't offer daily backups",
            "offer daily backups",
            "don't offer daily backups",
        ),
    ),
    (
        "browsers",
        ("Chrome", "Firefox", "Safari", "Edge", "Opera"),
        ("can run the app", "cannot run the app", "can run the app", "cannot run the app"),
    ),
    (
        "groups",
        ("adults", "children under 12", "teenagers", "seniors", "pregnant women"),
        (
            "are eligible for the vaccine",
            "are not eligible for the vaccine",
            "are eligible for the vaccine",
            "are not eligible for the vaccine",
        ),
    ),
    (
        "file types",
        ("PDF files", "Word documents", "spreadsheets", "images", "videos"),
        ("can be uploaded", "cannot be uploaded", "can be uploaded", "cannot be uploaded"),
    ),
    (
        "rooms",
        ("the standard rooms", "the suites", "the family rooms", "the dormitories"),
        (
            "come with breakfast",
            "do not come with breakfast",
            "come with breakfast",
            "do not come with breakfast",
        ),
    ),
    (
        "cards",
        ("the Silver card", "the Gold card", "the Platinum card", "the Student card"),
        (
            "charges an annual fee",
            "does not charge an annual fee",
            "charge an annual fee",
            "do not charge an annual fee",
        ),
    ),
)


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def scope_pairs(pool: Sequence[str], rng: random.Random, src: str) -> list[Pair]:
    """Which items a statement covers. "A and B are not X" -> "B is not X" entailed, "A is X"
    contradicted; "A and B are X, but C is not" -> each item's own polarity; "only A is X" ->
    "B is not X" entailed, "B is X" and "all are X" contradicted, while its twin without
    "only" leaves B neutral either way; an item the premise does not name -> neutral."""
    kind, items, (one, one_not, many, many_not) = rng.choice(SCOPE_FRAMES)
    a, b, c, d = rng.sample(list(items), 4)

    def says(item: str, neg: bool) -> str:
        return _sentence(f"{item} {one_not if neg else one}")

    def pairs(premise: str, rows: list[tuple[str, str, str]]) -> list[Pair]:
        return [
            Pair(_told(premise, pool, rng), h, lab, f"{src}:scope-{tag}") for h, lab, tag in rows
        ]

    form = rng.random()
    if form < 0.35:  # a coordinated subject, negated or not
        neg = rng.random() < 0.5
        premise = _sentence(f"{_join([a, b])} {many_not if neg else many}")
        return pairs(
            premise,
            [
                (says(b, neg), ENTAILMENT, "coord"),
                (says(a, not neg), CONTRADICTION, "coord"),
                (says(c, neg), NEUTRAL, "outside"),
                (says(c, not neg), NEUTRAL, "outside"),
            ],
        )
    if form < 0.65:  # "A and B are X, but C is not"
        short = one_not.split()
        cut = next(i for i, w in enumerate(short) if w in ("not", "cannot", "doesn't", "don't"))
        tail = one_not if rng.random() < 0.5 else " ".join(short[: cut + 1])  # "... but C is not"
        premise = _sentence(f"{_join([a, b])} {many}, but {c} {tail}")
        return pairs(
            premise,
            [
                (says(c, True), ENTAILMENT, "but"),
                (says(a, False), ENTAILMENT, "but"),
                (says(c, False), CONTRADICTION, "but"),
                (says(b, True), CONTRADICTION, "but"),
                (says(d, False), NEUTRAL, "outside"),
                (says(d, True), NEUTRAL, "outside"),
            ],
        )
    only = rng.choice([f"only {a} {one}", f"of the {kind}, only {a} {one}", f"{a} alone {one}"])
    all_of = _sentence(
        f"all {kind} {many}" if rng.random() < 0.5 else f"every one of the {kind} {one}"
    )
    return [
        *pairs(
            _sentence(only),
            [
                (says(a, False), ENTAILMENT, "only"),
                (says(b, True), ENTAILMENT, "only"),
                (says(b, False), CONTRADICTION, "only"),
                (all_of, CONTRADICTION, "only"),
            ],
        ),
        *pairs(
            hedged(_sentence(only), rng),
            [(says(a, False), NEUTRAL, "only-hedged"), (says(b, True), NEUTRAL, "only-hedged")],
        ),
        *pairs(
            _sentence(f"{a} {one}"),
            [
                (says(a, False), ENTAILMENT, "plain"),
                (says(a, True), CONTRADICTION, "plain"),
                (says(b, True), NEUTRAL, "plain"),
                (says(b, False), NEUTRAL, "plain"),
                (all_of, NEUTRAL, "plain"),
            ],
        ),
    ]


# --------------------------------------------------------------------------- question form

_WH = (
    (re.compile(r"(?<![\w.])((?:1[5-9]|20)\d\d)(?![\w])"), "in what year", "in {a}"),
    (re.compile(r"(?<![\w.,$])(\d{1,3}(?:,\d{3})*|\d+)(?![\w.,%])"), "how many", "{a}"),
)


def question_rewrite_pairs(
    sentence: str, entity_pool: Sequence[str], pool: Sequence[str], rng: random.Random, src: str
) -> list[Pair]:
    """A real sentence turned into an in-situ question with a short answer: the right answer
    -> entailment, a wrong one -> contradiction, the evidence removed -> neutral. Both the
    declarative claim and the question-answer form appear."""
    base = shorten(sentence, rng) or sentence
    base = base.rstrip(" .")
    if "?" in base or len(base.split()) < 6 or not base[:1].isupper():
        return []
    answer: str | None = None
    question = ""
    ents = [
        e
        for e in entities(base)
        if not base.startswith(e) and re.fullmatch(r"[A-Z][\w'-]+(?: [A-Z][\w'-]+){0,3}", e)
    ]
    m = re.search(r"\bin ((?:1[5-9]|20)\d\d)\b", base)
    if m:
        answer = m.group(1)
        question = base[: m.start()] + "in what year" + base[m.end() :]
        wrong = str(int(answer) + rng.choice([-9, -4, -2, -1, 1, 3, 6]))
    elif ents:
        answer = rng.choice(ents)
        if len(answer.split()) > 4:
            return []
        cands = [
            e
            for e in entity_pool
            if e not in base and abs(len(e.split()) - len(answer.split())) <= 1
        ]
        if not cands:
            return []
        wrong = rng.choice(cands)
        question = base.replace(answer, "what", 1)
    else:
        return []
    question = question[0].upper() + question[1:] + "?"
    right = qa_hypothesis(question, answer)
    bad = qa_hypothesis(question, wrong)
    prem = packed([sentence], pool, rng)
    return [
        Pair(prem, right, ENTAILMENT, f"{src}:qa-form"),
        Pair(prem, bad, CONTRADICTION, f"{src}:qa-form-wrong"),
        Pair(packed([hedged(sentence, rng)], pool, rng), right, NEUTRAL, f"{src}:qa-form-hedged"),
    ]


def _title(title: str) -> str:
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def hotpot_question_pairs(
    questions: Sequence[dict], indices: Iterable[int], rng: random.Random, src: str = "gen:hotpot-q"
) -> list[Pair]:
    """HotpotQA questions with their answers: the gold paragraphs (packed) against the right
    short answer (entailment, declarative and question-answer form), a wrong answer drawn from
    the same paragraphs (contradiction), and the right answer with one gold paragraph removed
    (neutral). Yes/no questions: the right and the flipped answer."""
    out: list[Pair] = []
    for qi in indices:
        q = questions[qi]
        paras = {t: [s.strip() for s in sents if s.strip()] for t, sents in q["context"]}
        gold_titles = list(dict.fromkeys(t for t, _ in q["supporting_facts"]))
        gold = [s for t in gold_titles for s in paras.get(t, [])]
        others = [s for t, ss in paras.items() if t not in gold_titles for s in ss]
        if not gold:
            continue
        answer = q["answer"].strip()
        question = q["question"].strip()
        tag = f"{src}:q{qi}"
        for variant in range(3):
            out.extend(
                _hotpot_one(
                    q, question, answer, paras, gold_titles, gold, others, rng, f"{tag}:{variant}"
                )
            )
    return out


def _hotpot_one(
    q: dict,
    question: str,
    answer: str,
    paras: dict[str, list[str]],
    gold_titles: list[str],
    gold: list[str],
    others: list[str],
    rng: random.Random,
    tag: str,
) -> list[Pair]:
    out: list[Pair] = []
    if True:
        extra = rng.sample(others, min(len(others), rng.randint(0, 3)))
        lines = gold[:8] + extra
        rng.shuffle(lines)
        prem = "\n".join(lines)
        if answer.lower() in ("yes", "no"):
            flipped = "no" if answer.lower() == "yes" else "yes"
            out.append(Pair(prem, qa_hypothesis(question, answer), ENTAILMENT, f"{tag}:yesno"))
            out.append(
                Pair(prem, qa_hypothesis(question, flipped), CONTRADICTION, f"{tag}:yesno-flip")
            )
            return out
        pool = sorted(
            {e for ss in paras.values() for s in ss for e in entities(s)}
            | {_title(t) for t in paras}
        )
        same_len = [
            e
            for e in pool
            if e.lower() not in answer.lower()
            and answer.lower() not in e.lower()
            and abs(len(e.split()) - len(answer.split())) <= 1
        ]
        if answer.isdigit() or re.fullmatch(r"\d[\d,.]*", answer):
            wrong = swap_number(answer, rng)
        else:
            wrong = rng.choice(same_len) if same_len else None
        forms = [qa_hypothesis(question, answer)]
        claim = question_to_claim(question, answer)
        if claim:
            forms.append(claim)
        for form in forms:
            out.append(Pair(prem, form, ENTAILMENT, f"{tag}:answer"))
            if wrong:
                bad = (
                    qa_hypothesis(question, wrong)
                    if form == forms[0]
                    else form.replace(answer, wrong, 1)
                )
                if bad != form:
                    out.append(Pair(prem, bad, CONTRADICTION, f"{tag}:wrong-answer"))
            if len(gold_titles) >= 2:
                drop = rng.choice(gold_titles)
                kept = [s for t in gold_titles if t != drop for s in paras.get(t, [])]
                out.append(Pair("\n".join(kept + extra), form, NEUTRAL, f"{tag}:missing"))
    return out


# --------------------------------------------------------------------------- same topic

_PRONOUN_OPENING = re.compile(r"^(?:He|She|It|They|His|Her|Its|Their|This|These|That|Those)\b")


def _changed(sentence: str, names: Sequence[str], rng: random.Random) -> str | None:
    """``sentence`` with one fact changed: a number, a name, an antonym or a negation."""
    edits = [
        lambda: swap_number(sentence, rng),
        lambda: swap_entity(sentence, names, rng),
        lambda: swap_antonym(sentence, rng),
        lambda: negate(sentence),
    ]
    rng.shuffle(edits)
    for edit in edits:
        out = edit()
        if out and out != sentence:
            return out
    return None


def topic_pairs(
    group: Sequence[str],
    pool: Sequence[str],
    rng: random.Random,
    src: str,
    neighbours: Sequence[str] = (),
    names: Iterable[str] = (),
) -> list[Pair]:
    """Same-topic evidence for one seed of ``group``: its siblings (and at times a sentence about
    a neighbouring topic, from ``neighbours``) alone -> neutral, with the seed (or a light
    rewrite) -> entailment, with the seed changed (a name from the group or ``names``) ->
    contradiction. The seed must say at least two content words the siblings do not (so that
    they cannot entail it)."""
    seeds = [s for s in group if 6 <= len(s.split()) <= 40 and not _PRONOUN_OPENING.match(s)]
    if not seeds:
        return []
    seed = rng.choice(seeds)
    siblings = [s for s in group if s != seed]
    if not siblings:
        return []
    chosen = rng.sample(siblings, min(len(siblings), rng.choice((1, 1, 2, 3))))
    if neighbours and rng.random() < 0.4:
        chosen.append(rng.choice(neighbours))
    claim = shorten(seed, rng) if rng.random() < 0.3 else None
    claim = claim if claim and len(claim.split()) >= 5 else seed
    told = content_words(" ".join(chosen))
    if len(content_words(claim) - told) < 2:
        return []
    others = sorted({e for s in group for e in entities(s)}.union(names))
    extra = rng.sample(list(pool), rng.randint(0, 1)) if pool else []

    def premise(lines: Sequence[str]) -> str:
        out = [*lines, *extra]
        rng.shuffle(out)
        return "\n".join(out)

    out = [Pair(premise(chosen), claim, NEUTRAL, f"{src}:topic-sibling")]
    said = paraphrase(seed, rng) if rng.random() < 0.5 else None
    out.append(Pair(premise([*chosen, said or seed]), claim, ENTAILMENT, f"{src}:topic-stated"))
    wrong = _changed(seed, others, rng)
    if wrong:
        out.append(Pair(premise([*chosen, wrong]), claim, CONTRADICTION, f"{src}:topic-changed"))
    return out


def hotpot_topic_pairs(
    questions: Sequence[dict],
    indices: Iterable[int],
    pool: Sequence[str],
    rng: random.Random,
    src: str = "v3:hotpot",
) -> list[Pair]:
    """:func:`topic_pairs` over every paragraph (one topic each) of HotpotQA questions ``indices``,
    four times per paragraph; the question's other paragraphs are the neighbouring topics, and
    the names of the first 200 ``pool`` sentences what a changed seed may name."""
    names = {e for s in pool[:200] for e in entities(s)}
    out: list[Pair] = []
    for qi in indices:
        paras = [[s.strip() for s in ss if s.strip()] for _t, ss in questions[qi]["context"]]
        for i, group in enumerate(paras):
            if len(group) >= 2:
                near = [s for j, p in enumerate(paras) if j != i for s in p]
                for _ in range(4):
                    out.extend(topic_pairs(group, pool, rng, src, near, names))
    return out


# --------------------------------------------------------------------------- all

FIRST = [
    "Maria",
    "Piet",
    "Ana",
    "Tom",
    "Lena",
    "Omar",
    "Yuki",
    "Ines",
    "Karl",
    "Sofia",
    "Ravi",
    "Nadia",
    "Erik",
    "Chen",
    "Amara",
    "Hugo",
    "Leila",
    "Jonas",
    "Priya",
    "Mateo",
    "Freya",
    "Idris",
    "Hana",
    "Luca",
    "Zofia",
    "Kwame",
    "Elif",
    "Tariq",
    "Greta",
    "Dmitri",
    "Ayla",
    "Bram",
    "Noor",
    "Felix",
    "Ingrid",
    "Samir",
    "Marta",
    "Kenji",
    "Olga",
    "Diego",
]
LAST = [
    "Olsen",
    "Dahl",
    "Ruiz",
    "Berg",
    "Novak",
    "Haddad",
    "Tanaka",
    "Costa",
    "Weber",
    "Rossi",
    "Iyer",
    "Petrov",
    "Lund",
    "Wei",
    "Okafor",
    "Brandt",
    "Mansour",
    "Vogel",
    "Sharma",
    "Alvarez",
    "Holm",
    "Bakr",
    "Sato",
    "Moretti",
    "Kowalski",
    "Mensah",
    "Yilmaz",
    "Aziz",
    "Strand",
    "Orlov",
    "Demir",
    "Visser",
    "Khan",
    "Keller",
    "Lindqvist",
    "Farah",
    "Nowak",
    "Mori",
    "Ivanova",
    "Herrera",
]


def person_names(entity_pool: Sequence[str], rng: random.Random) -> list[str]:
    """Two-word person names (invented; premise spans make poor names: "Vice Chairman")."""
    return sorted(f"{f} {last}" for f in FIRST for last in LAST)


def generate(
    sentences: Sequence[str],
    pool: Sequence[str],
    lexicon: dict[str, str],
    rng: random.Random,
    source: str,
    n_templates: int,
) -> list[Pair]:
    """All counterbalanced v3 pairs from real ``sentences`` (distractors from ``pool``) plus
    ``n_templates`` rounds of the template generators."""
    entity_pool = sorted({e for s in pool[:4000] for e in entities(s)})
    names = person_names(entity_pool, rng)
    src = f"v3:{source}"
    out: list[Pair] = []
    for sent in sentences:
        out.extend(copula_pairs(sent, lexicon, pool, rng, src))
        out.extend(polarity_pairs(sent, pool, rng, src))
        r = rng.random()
        if r < 0.25:
            out.extend(real_quantity_pairs(sent, pool, rng, src))
        elif r < 0.5:
            out.extend(real_binding_pairs(sent, entity_pool, pool, rng, src))
        elif r < 0.7:
            out.extend(question_rewrite_pairs(sent, entity_pool, pool, rng, src))
        elif r < 0.8:
            out.extend(near_duplicate_pairs(sent, pool, rng, src))
    for _ in range(n_templates):
        gen = rng.random()
        if gen < 0.3:
            out.extend(predicate_pairs(names, pool, rng, src))
        elif gen < 0.45:
            out.extend(quantified_pairs(names, pool, rng, src))
        elif gen < 0.7:
            out.extend(quantity_pairs(names, pool, rng, src))
        elif gen < 0.9:
            out.extend(binding_pairs(names, pool, rng, src))
        else:
            out.extend(nonparallel_binding_pairs(names, pool, rng, src))
    # the v3.1 families draw from their own stream, so the pairs above stay as they were built
    r31 = random.Random(f"v3.1:{source}:{len(sentences)}:{n_templates}")
    for _ in range(n_templates):
        gen = r31.random()
        if gen < 0.4:
            out.extend(list_binding_pairs(pool, r31, src))
        elif gen < 0.65:
            out.extend(role_binding_pairs(names, pool, r31, src))
        else:
            out.extend(scope_pairs(pool, r31, src))
    # the small-edit families (synth_lexical) likewise draw from their own stream
    r4 = random.Random(f"lexical:{source}:{len(sentences)}")
    for sent in pool:  # the pool too: the synonyms hit few sentences
        out.extend(lexical_pairs(sent, pool, r4, src))
        out.extend(advice_pairs(sent, pool, r4, src))
    return [
        p
        for p in out
        if (p.premise.strip() and p.hypothesis.strip() and p.premise != p.hypothesis)
        or p.label == ENTAILMENT
    ]
