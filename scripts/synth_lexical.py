"""Small edits with both labels: the cue "the claim is one evidence sentence with a word or two
changed" must not mean *contradiction*.

The v3 mixes taught it: among their pairs whose hypothesis is a premise sentence with at most two
words changed, 58 % (v3 mix) and 63 % (same-topic mix) were contradictions (an antonym, a number,
a name, a negation swapped in), and the recipe's Breaking NLI rows add 6,408 contradictions
against 952 entailments. v3.1 then called plain rewordings contradicted ("Repayments begin in the
April after you finish your course" against "… start in the April after you leave your course",
p_contra 0.67; "up to a fortnight" against "up to two weeks", 0.84).

Each seed sentence that holds a word of :data:`SYNONYMS` gives

* the sentence with one or two words swapped for a synonym -> **entailment** (either side may be
  the reworded one), at times with a hedge word an answer would add ("Generally, …");
* the same reworded claim with a contrasting word swapped in (:data:`OPPOSITES`, or the shared
  antonym list) -> **contradiction**, with the same hedges;

and an instruction ("Store the jar in a cool place.") gives its answer-style rewrites ("You should
store the jar in a cool place.") -> entailment, the reverse instruction ("You shouldn't …",
"Never …") -> contradiction, so that a rewritten mood or an added "you" is no cue either.

The lexicon is written here by hand: words and phrases that keep their meaning in any sentence
of the kinds ENE checks (instructions, policies, facts), each group interchangeable both ways.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from synth_nli import ANTONYMS, CONTRADICTION, ENTAILMENT, Pair

#: groups of interchangeable words or phrases (same inflection within a group)
SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("begin", "start"),
    ("begins", "starts"),
    ("began", "started"),
    ("beginning", "starting"),
    ("finished", "completed"),
    ("finishes", "completes"),
    ("bought", "purchased"),
    ("needs", "requires"),
    ("needed", "required"),
    ("helped", "assisted"),
    ("helps", "assists"),
    ("showed", "indicated"),
    ("allowed", "permitted"),
    ("choose", "select"),
    ("chose", "selected"),
    ("chosen", "selected"),
    ("tried", "attempted"),
    ("fixed", "repaired"),
    ("built", "constructed"),
    ("make sure", "ensure"),
    ("look for", "seek"),
    ("find out", "discover"),
    ("found out", "discovered"),
    ("founded", "established"),
    ("died", "passed away"),
    ("lived", "resided"),
    ("affected", "influenced"),
    ("damage", "harm"),
    ("damaged", "harmed"),
    ("stopped", "halted"),
    ("reached", "got to"),
    ("happen", "occur"),
    ("happened", "occurred"),
    ("happens", "occurs"),
    ("provided", "offered"),
    ("spoke", "talked"),
    ("put off", "postpone"),
    ("cancel", "call off"),
    ("cancelled", "called off"),
    ("checked", "verified"),
    ("hand in", "submit"),
    ("handed in", "submitted"),
    ("approximately", "roughly"),
    ("nearly", "almost"),
    ("mainly", "mostly", "chiefly"),
    ("often", "frequently"),
    ("usually", "normally", "typically"),
    ("quickly", "rapidly"),
    ("immediately", "straight away"),
    ("perhaps", "possibly"),
    ("entirely", "completely", "fully"),
    ("very", "extremely"),
    ("big", "large"),
    ("bigger", "larger"),
    ("biggest", "largest"),
    ("easy", "simple"),
    ("main", "principal"),
    ("famous", "well-known", "renowned"),
    ("extra", "additional"),
    ("modern", "contemporary"),
    ("ancient", "very old"),
    ("sick", "ill"),
    ("free of charge", "at no cost"),
    ("first voyage", "maiden voyage"),
    ("film", "movie"),
    ("films", "movies"),
    ("car", "automobile"),
    ("cars", "automobiles"),
    ("children", "kids"),
    ("child", "kid"),
    ("picture", "photo", "photograph"),
    ("town", "municipality"),
    ("doctor", "physician"),
    ("doctors", "physicians"),
    ("medicine", "medication"),
    ("illness", "disease"),
    ("trip", "journey"),
    ("road", "street"),
    ("author", "writer"),
    ("mistake", "error"),
    ("mistakes", "errors"),
    ("staff", "employees", "personnel"),
    ("worker", "employee"),
    ("workers", "employees"),
    ("customer", "client"),
    ("customers", "clients"),
    ("a fortnight", "two weeks"),
    ("once a year", "annually", "every year"),
    ("once a week", "every week"),
    ("every month", "once a month"),
    ("by hand", "manually"),
    ("on its own", "by itself"),
    ("in the end", "eventually"),
    ("at first", "initially"),
    ("as well as", "along with"),
    ("because of", "due to", "owing to"),
    ("in order to", "so as to"),
    ("a lot of", "lots of", "plenty of"),
    ("at least", "no less than"),
    ("no more than", "at most"),
    ("have to", "need to"),
    ("has to", "needs to"),
)

#: contrasting words for the contradiction twins (both directions), beside the shared antonyms
OPPOSITES: tuple[tuple[str, str], ...] = (
    ("begin", "end"),
    ("begins", "ends"),
    ("began", "ended"),
    ("start", "finish"),
    ("starts", "finishes"),
    ("started", "finished"),
    ("allowed", "forbidden"),
    ("permitted", "banned"),
    ("more than", "less than"),
    ("at least", "at most"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("accept", "refuse"),
    ("accepted", "refused"),
    ("include", "exclude"),
    ("includes", "excludes"),
    ("win", "lose"),
    ("always", "never"),
    ("easy", "hard"),
    ("cheap", "expensive"),
    ("cheaper", "more expensive"),
    ("early", "late"),
    ("earlier", "later"),
    ("larger", "smaller"),
    ("longer", "shorter"),
    ("longest", "shortest"),
    ("highest", "lowest"),
    ("above", "below"),
    ("morning", "evening"),
    ("daily", "weekly"),
    ("weekly", "monthly"),
    ("annually", "monthly"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("survived", "died"),
    ("warm", "cold"),
    ("oldest", "newest"),
)

#: shared antonyms that also make nonsense ("modern-night", "starts down") or need a referent
_LOOSE = {("day", "night"), ("up", "down"), ("he", "she"), ("his", "her"), ("car", "boat")}

#: answer-style frames for an instruction (its verb lower-cased after them)
ADVICE = (
    "You should",
    "You need to",
    "Make sure you",
    "Remember to",
    "You'll need to",
    "Be sure to",
)
#: the same instruction reversed
ADVICE_NOT = ("You shouldn't", "You should not", "Never", "Don't", "You must not", "Do not")
#: hedges an answer puts in front of a claim (both labels get them)
LEADS = ("Generally, ", "In general, ", "Typically, ", "As a rule, ", "Usually, ")

_IMPERATIVE = re.compile(
    r"^(Use|Store|Keep|Wear|Insert|Press|Hold|Add|Mix|Bake|Pour|Place|Put|Check|Wash|Remove|"
    r"Take|Turn|Leave|Cover|Fill|Stir|Cook|Heat|Set|Read|Send|Call|Bring|Apply|Clean|Cut|"
    r"Open|Close|Switch|Plug|Unplug|Replace|Return|Register|Pay|Book|Contact|Follow|Drink|"
    r"Eat|Rest|Sit|Wait|Allow|Let|Make|Serve|Sow|Water|Drain|Rinse|Dry|Save|Fit)\b"
)


def _swap(text: str, a: str, b: str) -> str:
    """``text`` with its first ``a`` replaced by ``b`` (capital kept, "a" / "an" agreed)."""

    def repl(m: re.Match[str]) -> str:
        return b[:1].upper() + b[1:] if m.group(0)[0].isupper() else b

    out = re.sub(rf"\b{re.escape(a)}\b", repl, text, count=1, flags=re.I)
    an = "an" if b[:1].lower() in "aeio" else "a"
    return re.sub(
        rf"\b(an?|An?) (?={re.escape(b)}\b)",
        lambda m: (an.capitalize() if m.group(1)[0] == "A" else an) + " ",
        out,
        count=1,
    )


def _hits(text: str, groups: Sequence[tuple[str, ...]]) -> list[tuple[str, str]]:
    out = []
    for group in groups:
        for a in group:
            if re.search(rf"\b{re.escape(a)}\b", text, flags=re.I):
                out.extend((a, b) for b in group if b != a)
    return out


def reworded(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with one or two words swapped for synonyms (None when none applies)."""
    hits = _hits(sentence, SYNONYMS)
    if not hits:
        return None
    out = sentence
    used: set[str] = set()
    for a, b in rng.sample(hits, min(len(hits), rng.choice((1, 1, 2)))):
        if a.lower() in used or not re.search(rf"\b{re.escape(a)}\b", out, flags=re.I):
            continue
        out = _swap(out, a, b)
        used.update((a.lower(), b.lower()))
    return out if out != sentence else None


def opposed(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with one word swapped for a contrasting one."""
    pairs = [*OPPOSITES, *(p for p in ANTONYMS if p not in _LOOSE)]
    hits = [
        (x, y)
        for a, b in pairs
        for x, y in ((a, b), (b, a))
        if re.search(rf"\b{re.escape(x)}\b", sentence, flags=re.I)
    ]
    if not hits:
        return None
    x, y = rng.choice(hits)
    out = _swap(sentence, x, y)
    return out if out != sentence else None


def _lead(sentence: str, lead: str) -> str:
    """``lead`` before ``sentence``, whose first word is lower-cased unless it is a name."""
    first = sentence.split(" ", 1)[0]
    name = (len(first) > 1 and first.isupper()) or any(c.isupper() for c in first[1:])
    name = name or (first not in _OPENERS and bool(re.match(r"^[A-Z][a-z]+ [A-Z]", sentence)))
    return lead + (sentence if name else sentence[:1].lower() + sentence[1:])


_OPENERS = frozenset(
    [
        "The",
        "A",
        "An",
        "This",
        "That",
        "These",
        "Those",
        "It",
        "Its",
        "In",
        "On",
        "At",
        "For",
        "Our",
        "Your",
        "Their",
    ]
)


def _packed(lines: Sequence[str], pool: Sequence[str], rng: random.Random) -> str:
    extra = rng.sample(list(pool), rng.randint(0, min(3, len(pool)))) if pool else []
    out = [*lines, *(s for s in extra if s not in lines)]
    rng.shuffle(out)
    return "\n".join(out)


def lexical_pairs(sentence: str, pool: Sequence[str], rng: random.Random, src: str) -> list[Pair]:
    """The reworded and opposed pairs for one real sentence (see the module docstring). No
    neutral twin: an unrelated premise would add to the low-overlap cue, not to this one."""
    if not 5 <= len(sentence.split()) <= 45:
        return []
    said = reworded(sentence, rng)
    if not said:
        return []
    lead = rng.choice(LEADS) if rng.random() < 0.25 else ""
    claim = _lead(said, lead) if lead else said
    out = []
    if rng.random() < 0.3:  # the evidence reworded, the claim as written
        out.append(Pair(_packed([said], pool, rng), sentence, ENTAILMENT, f"{src}:lex-synonym-rev"))
    else:
        out.append(Pair(_packed([sentence], pool, rng), claim, ENTAILMENT, f"{src}:lex-synonym"))
    wrong = opposed(said, rng)
    if wrong:
        wrong = _lead(wrong, lead) if lead else wrong
        out.append(Pair(_packed([sentence], pool, rng), wrong, CONTRADICTION, f"{src}:lex-opposed"))
    return out


def advice_pairs(sentence: str, pool: Sequence[str], rng: random.Random, src: str) -> list[Pair]:
    """An instruction, as written or turned into its prohibition ("Do not …", "Never …"), against
    answer-style rewrites of either polarity: the same polarity -> entailment, the other ->
    contradiction (so neither "you" nor a negation the premise words otherwise is a cue)."""
    m = _IMPERATIVE.match(sentence)
    if (
        not m or not 4 <= len(sentence.split()) <= 40
    ):  # not "Avoid ...": "Never avoid ..." reads wrong
        return []
    body = sentence[:1].lower() + sentence[1:]
    told = sentence
    do, dont = ADVICE, ADVICE_NOT
    if rng.random() < 0.5:  # the evidence forbids it
        told = f"{rng.choice(('Do not', 'Never', 'Please do not'))} {body}"
        do, dont = ADVICE_NOT, ADVICE
    premise = _packed([told], pool, rng)
    return [
        Pair(premise, f"{rng.choice(do)} {body}", ENTAILMENT, f"{src}:lex-advice"),
        Pair(premise, f"{rng.choice(dont)} {body}", CONTRADICTION, f"{src}:lex-advice-flip"),
    ]
