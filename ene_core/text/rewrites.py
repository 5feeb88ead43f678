"""Question forms that need a verb moved or inflected to become one declarative claim.

:func:`~ene_core.text.short_answers.question_to_claim` handles questions whose wh-phrase is the
subject or sits after a copula; this module adds the forms where the answer takes the place of
an object or an adjunct and the question's verb has to change:

* do-support: "What award did the film win in 2003?" + "the Palme d'Or" -> "The film won the
  Palme d'Or in 2003."; "When did the observatory open?" + "1911" -> "The observatory opened in
  1911."; "Where does the band rehearse?" + "Cork" -> "The band rehearses in Cork.";
* how many / how much / how long / how tall ...: "How many rooms does the hotel have?" + "214"
  -> "The hotel has 214 rooms."; "How long is the tunnel?" + "8 km" -> "The tunnel is 8 km
  long.";
* a copula before a noun-phrase subject: "What nationality were Gell and Leach?" + "British" ->
  "Gell and Leach were British.";
* a choice after an auxiliary: "Is Avell or Castrey the capital?" + "Avell" -> "Avell is the
  capital.".

Every function returns ``None`` when it is unsure, and the caller falls back to the
question-answer form: a rewrite never guesses. Standard library only (the data scripts import
it too).
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- inflection ---------------------------------------------------------------------------------


def _pairs(text: str) -> dict[str, str]:
    """``"a:b c:d"`` as ``{"a": "b", "c": "d"}``."""
    return dict(pair.split(":", 1) for pair in text.split())


_IRREGULAR = _pairs(
    """
    arise:arose awake:awoke be:was bear:bore beat:beat become:became begin:began bend:bent
    bet:bet bind:bound bite:bit bleed:bled blow:blew break:broke breed:bred bring:brought
    build:built burn:burned buy:bought catch:caught choose:chose cling:clung come:came cost:cost
    creep:crept cut:cut deal:dealt dig:dug do:did draw:drew drink:drank drive:drove eat:ate
    fall:fell feed:fed feel:felt fight:fought find:found flee:fled fling:flung fly:flew
    forbid:forbade forget:forgot forgive:forgave freeze:froze get:got give:gave go:went
    grind:ground grow:grew hang:hung have:had hear:heard hide:hid hit:hit hold:held hurt:hurt
    keep:kept kneel:knelt know:knew lay:laid lead:led leap:leapt leave:left lend:lent let:let
    lie:lay light:lit lose:lost make:made mean:meant meet:met mislead:misled overcome:overcame
    oversee:oversaw pay:paid put:put quit:quit read:read rebuild:rebuilt rewrite:rewrote
    ride:rode ring:rang rise:rose run:ran say:said see:saw seek:sought sell:sold send:sent
    set:set shake:shook shine:shone shoot:shot shrink:shrank shut:shut sing:sang sink:sank
    sit:sat sleep:slept slide:slid speak:spoke spend:spent spin:spun split:split spread:spread
    spring:sprang stand:stood steal:stole stick:stuck sting:stung strike:struck swear:swore
    sweep:swept swim:swam swing:swung take:took teach:taught tear:tore tell:told think:thought
    throw:threw understand:understood undertake:undertook uphold:upheld wake:woke wear:wore
    weave:wove weep:wept win:won wind:wound withdraw:withdrew write:wrote
    """
)
# Two-syllable verbs stressed on the last syllable double their last consonant.
_DOUBLING = _words(
    "admit commit compel control occur omit permit prefer refer regret submit transfer "
    "equip expel patrol propel rebel repel"
)
_VOWELS = "aeiou"


def past(verb: str) -> str:
    """The simple past of a base-form verb: "win" -> "won", "open" -> "opened",
    "stop" -> "stopped", "marry" -> "married", "found" -> "founded"."""
    v = verb.lower()
    if v in _IRREGULAR:
        return _same_case(verb, _IRREGULAR[v])
    if v.endswith("e"):
        return verb + "d"
    if len(v) > 1 and v.endswith("y") and v[-2] not in _VOWELS:
        return verb[:-1] + "ied"
    if v in _DOUBLING or _short_cvc(v):
        return verb + verb[-1] + "ed"
    return verb + "ed"


def third_person(verb: str) -> str:
    """The present third person singular: "have" -> "has", "watch" -> "watches",
    "fly" -> "flies", "cost" -> "costs"."""
    v = verb.lower()
    special = {"have": "has", "be": "is", "do": "does", "go": "goes"}
    if v in special:
        return _same_case(verb, special[v])
    if v.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(v) > 1 and v.endswith("y") and v[-2] not in _VOWELS:
        return verb[:-1] + "ies"
    return verb + "s"


def inflect(verb: str, aux: str) -> str:
    """``verb`` as its do-support auxiliary ``aux`` marks it: "did" past, "does" third person,
    "do" unchanged."""
    aux = aux.lower()
    if aux == "did":
        return past(verb)
    if aux == "does":
        return third_person(verb)
    return verb


def _short_cvc(v: str) -> bool:
    """One syllable ending consonant-vowel-consonant ("stop", "plan"; not "open", "show")."""
    return (
        3 <= len(v) <= 4
        and v[-1] not in _VOWELS + "wxy"
        and v[-2] in _VOWELS
        and v[-3] not in _VOWELS
        and sum(ch in _VOWELS for ch in v) == 1
    )


def _same_case(template: str, word: str) -> str:
    return word[:1].upper() + word[1:] if template[:1].isupper() else word


# -- word classes -------------------------------------------------------------------------------

_DO = _words("did does do")
_COPULAS = _words("is was are were")
_AUXES = _COPULAS | _words("has have had can could will would should may might must")
_PREPOSITIONS = _words(
    "in on at from to for by of with during since until as into onto over under about after "
    "before between among through against without within near"
)
_DETERMINERS = _words("the a an this that these those his her its their our my your")
_FUNCTION = _PREPOSITIONS | _DETERMINERS | _words("and or but not both either each all any")
# Nouns that make a wh-phrase a time or a place: the answer goes in a phrase of its own.
_TIME_HEADS = _words("year years month day date time century decade season era period")
_PLACE_HEADS = _words(
    "city town country state county place region province village island continent location"
)
# Words that start a predicate after a subject: participles, adverbs of rank and manner.
_PREDICATE_MARKERS = _words(
    "best most also first last still often originally mainly mostly widely primarily known "
    "born based located named called situated titled famous famously"
)
_WH_WORDS = _words("what which who whom whose when where in")
_HOW_ADJECTIVES = _words("long tall high old far deep wide big large heavy")
_CHOICE_OPENERS = _words("is was are were does did do has have can could will would")


def _bare(word: str) -> str:
    return word.strip("\"'(),;:\u201c\u201d\u2018\u2019")


def _capitalised(word: str) -> bool:
    w = _bare(word)
    return bool(w) and (w[0].isupper() or w[0].isdigit())


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,;:")
    text = re.sub(r"\s+([,;:])", r"\1", text)
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?\"'":
        text += "."
    return text


def with_preposition(answer: str, default: str) -> str:
    """``answer`` after ``default`` ("in"), unless it brings its own ("in 1931", "on 3 May")."""
    first = answer.split()[0].lower()
    if first in _PREPOSITIONS:
        return answer
    if default == "in" and re.match(r"^(?:\d{1,2}\s+[A-Z]|[A-Z][a-z]+\s+\d{1,2}\b)", answer):
        return f"on {answer}"  # a day: "on 3 May 1948", "on April 1, 1949"
    return f"{default} {answer}"


# -- the subject and its verb -------------------------------------------------------------------


def verb_after_subject(words: list[str], known: frozenset[str] = frozenset()) -> int | None:
    """Where the base-form verb starts in ``words`` (a subject followed by its verb, as after
    "did" / "does" / "do"), or ``None``: the first lower-case word after at least one word of
    subject that is a known verb, else the first lower-case content word that follows a word
    ending a noun phrase (a name, or a noun after its determiner)."""
    for i in range(1, len(words)):
        w = _bare(words[i]).lower()
        before = _bare(words[i - 1]).lower()
        lower = words[i][:1].islower()
        if w in known and lower and before not in _DETERMINERS and _follows_verb(words, i):
            return i
    for i in range(1, len(words)):
        word = _bare(words[i])
        if not word or not word[:1].islower() or word.lower() in _FUNCTION:
            continue
        if _bare(words[i - 1]).lower() in _FUNCTION:
            continue  # "the band": a noun after its determiner
        if _follows_verb(words, i):
            return i  # "the band tour Japan", "Chris Menges share", "a statesman initiate"
    return None


def _follows_verb(words: list[str], i: int) -> bool:
    """What comes after ``words[i]`` lets it be a verb: the end, a determiner, a preposition, a
    name or a number (not another lower-case content word: "statesman initiate")."""
    if i + 1 >= len(words):
        return True
    nxt = _bare(words[i + 1])
    return not nxt or not nxt[:1].islower() or nxt.lower() in _FUNCTION


def predicate_start(words: list[str]) -> int | None:
    """Where the predicate starts after a copula's subject ("Rose Mcgowan | best known for"):
    the first lower-case word after the subject that marks a predicate (a participle, "best",
    "also", a preposition, an -ed word), or ``None``."""
    for i in range(1, len(words)):
        w = _bare(words[i])
        if not w or not w[:1].islower():
            continue
        lw = w.lower()
        if lw in _PREDICATE_MARKERS or (len(lw) > 4 and lw.endswith("ed")):
            return i
        if lw in _PREPOSITIONS and i + 1 < len(words) and lw not in ("of", "and"):
            return None  # "the capital of X" stays a noun phrase; "in" is unsure
    return None


# -- the rewrites -------------------------------------------------------------------------------


def do_support(words: list[str], answer: str, known: frozenset[str]) -> str | None:
    """A wh-question with "did" / "does" / "do": "What award did the film win in 2003?" ->
    "The film won A in 2003."; "When did X open?" -> "X opened in A"; "Where does X live?" ->
    "X lives in A"; "Who did X marry?" -> "X married A"."""
    at = next((i for i, w in enumerate(words[:8]) if w.lower() in _DO), None)
    if at is None or at == 0 or at + 2 >= len(words):
        return None
    wh, aux, rest = [w.lower() for w in words[:at]], words[at], words[at + 1 :]
    if wh[0] not in _WH_WORDS:  # "Hayden sings, but where does X ...": unsure
        return None
    v = verb_after_subject(rest, known)
    if v is None:
        return None
    subject, verb, tail = rest[:v], inflect(_bare(rest[v]), aux), rest[v + 1 :]
    head = " ".join([*subject, verb])
    tail_text = " ".join(tail)
    if wh[0] == "when" or (len(wh) > 1 and wh[-1] in _TIME_HEADS):
        return _tidy(f"{head} {tail_text} {with_preposition(answer, 'in')}")
    if wh[0] == "where" or (len(wh) > 1 and wh[-1] in _PLACE_HEADS and not _ends_open(tail)):
        return _tidy(f"{head} {tail_text} {with_preposition(answer, 'in')}")
    if wh[0] in ("why", "how"):
        return None
    if _ends_open(tail):  # "What city did X move to?" -> "X moved to A"
        return _tidy(f"{head} {tail_text} {answer}")
    return _tidy(f"{head} {answer} {tail_text}")


def how_question(words: list[str], answer: str, known: frozenset[str]) -> str | None:
    """ "How many N ..." / "How much ..." / "How long / tall / old ... is X?"."""
    if len(words) < 3 or words[0].lower() != "how":
        return None
    kind = words[1].lower()
    if kind in ("many", "much"):
        return _how_many(words[2:], kind, answer, known)
    if kind in _HOW_ADJECTIVES:
        return _how_adjective(words[2:], kind, answer, known)
    return None


def _how_many(rest: list[str], kind: str, answer: str, known: frozenset[str]) -> str | None:
    """ "How many rooms does the hotel have?" -> "The hotel has 214 rooms."; "How many copies
    sold?" -> "250 million copies sold."; "How much does it cost?" -> "It costs 54 euros."."""
    at = next((i for i, w in enumerate(rest[:6]) if w.lower() in _DO | _AUXES), None)
    noun = rest[:at] if at is not None else []
    amount = " ".join([answer, *noun]) if noun and not _has_noun(answer, noun) else answer
    if at is None:  # the amount is the subject: "How many copies of X sold"
        noun_end = next((i for i, w in enumerate(rest) if _verb_form(_bare(w), known)), None)
        if noun_end is None or noun_end == 0:
            return None
        lead = " ".join([answer, "of" if kind == "much" else "", *rest[:noun_end]])
        return _tidy(f"{lead} {' '.join(rest[noun_end:])}")
    aux, after = rest[at], rest[at + 1 :]
    if not after:
        return None
    if aux.lower() in _DO:
        v = verb_after_subject(after, known)
        if v is None:
            return None
        subject, verb, tail = after[:v], inflect(_bare(after[v]), aux), after[v + 1 :]
        if _ends_open(tail):
            return _tidy(f"{' '.join([*subject, verb, *tail])} {amount}")
        return _tidy(f"{' '.join([*subject, verb])} {amount} {' '.join(tail)}")
    if not noun:  # "How much is the ticket?" -> "The ticket is A."
        return _tidy(f"{' '.join(after)} {aux.lower()} {answer}")
    # "How many players are on a team" -> "Seven players are on a team"
    return _tidy(f"{amount} {aux.lower()} {' '.join(after)}")


def _how_adjective(
    rest: list[str], adjective: str, answer: str, known: frozenset[str]
) -> str | None:
    """ "How long is the tunnel?" -> "The tunnel is 8 km long."; "How long did the siege last?"
    -> "The siege lasted eleven months."; "How long did X serve as Y?" -> "X served as Y for A"."""
    if not rest:
        return None
    aux = rest[0].lower()
    if aux in _COPULAS and len(rest) > 1:
        value = answer if answer.lower().endswith(adjective) else f"{answer} {adjective}"
        return _tidy(f"{' '.join(rest[1:])} {aux} {value}")
    if aux in _DO and adjective == "long" and len(rest) > 2:
        v = verb_after_subject(rest[1:], known)
        if v is None:
            return None
        after = rest[1:]
        base = _bare(after[v]).lower()
        subject, verb, tail = after[:v], inflect(_bare(after[v]), aux), after[v + 1 :]
        if base in ("last", "take", "run"):
            return _tidy(f"{' '.join([*subject, verb])} {answer} {' '.join(tail)}")
        return _tidy(f"{' '.join([*subject, verb, *tail])} for {answer}")
    return None


def copula_subject(words: list[str], answer: str) -> str | None:
    """A wh-phrase, a copula, then the subject: "What nationality were Gell and Leach?" ->
    "Gell and Leach were A."; with a predicate after the subject ("What series was McGowan best
    known for being in?") -> "McGowan was best known for being in A."."""
    at = next((i for i, w in enumerate(words[:6]) if w.lower() in _COPULAS), None)
    if at is None or at < 2 or at + 1 >= len(words):  # "What is X", "Who is older": elsewhere
        return None
    if words[0].lower() not in ("what", "which"):
        return None
    aux, rest = words[at].lower(), words[at + 1 :]
    first = _bare(rest[0]).lower()
    lower = rest[0][:1].islower()
    if first in _PREPOSITIONS or first in _PREDICATE_MARKERS or (lower and _participle_form(first)):
        return None  # the wh-phrase is the subject: "What magazine was started first"
    p = predicate_start(rest)
    if p is None:
        if _ends_open(rest) or any(_bare(w).lower() in _AUXES for w in rest):
            return None
        return _tidy(f"{' '.join(rest)} {aux} {answer}")
    subject, predicate = rest[:p], rest[p:]
    if _ends_open(predicate):
        return _tidy(f"{' '.join(subject)} {aux} {' '.join(predicate)} {answer}")
    return None


def auxiliary_choice(words: list[str], answer: str) -> str | None:
    """ "Is A or B the capital of X?" answered "A" -> "A is the capital of X."."""
    if len(words) < 5 or words[0].lower() not in _CHOICE_OPENERS:
        return None
    lowered = [w.lower() for w in words]
    if "or" not in lowered[2:]:
        return None
    j = lowered.index("or", 2) + 1
    end = _option_end(words, j)
    if end is None or end >= len(words):
        return None
    aux = words[0].lower()
    options = (" ".join(words[1 : j - 1]), " ".join(words[j:end]))
    if not any(_same_option(answer, option) for option in options):
        return None
    if aux in _DO:
        return None  # "Does A or B have ...": the verb needs inflecting by its subject
    return _tidy(f"{answer} {aux} {' '.join(words[end:])}")


def _option_end(words: list[str], j: int) -> int | None:
    """The end of the option starting at ``words[j]``: a determiner and one noun, or a run
    of capitalised words."""
    if j >= len(words):
        return None
    if words[j].lower() in _DETERMINERS:
        j += 1
        while j < len(words) and _capitalised(words[j]):
            j += 1
        return j if j < len(words) and _capitalised(words[j - 1]) else j + 1
    if not _capitalised(words[j]):
        return None
    while j < len(words) and _capitalised(words[j]):
        j += 1
    return j


def _same_option(answer: str, option: str) -> bool:
    a, o = answer.lower().strip(" ."), option.lower().strip(" .,")
    return bool(a) and (a in o or o in a)


def _verb_form(word: str, known: frozenset[str]) -> bool:
    """A lower-case verb form: a known base form, its -s form, a past or participle."""
    w = word.lower()
    if not word[:1].islower():
        return False
    return w in known or w[:-1] in known or w in _PARTICIPLES or w.endswith("ed")


def _participle_form(word: str) -> bool:
    """A past participle or an -ing form ("held", "started", "written", "known", "being")."""
    return word in _PARTICIPLES or word.endswith(("ed", "en", "wn", "ing"))


_PARTICIPLES = frozenset(_IRREGULAR.values()) | _words(
    "been begun broken chosen done drawn driven eaten fallen flown forgotten given gone grown "
    "hidden known ridden risen seen shaken shown spoken stolen sworn taken thrown worn written"
)


def _ends_open(words: list[str]) -> bool:
    """The words end in a preposition: the answer completes them ("moved to")."""
    return bool(words) and _bare(words[-1]).lower() in _PREPOSITIONS


def _has_noun(answer: str, noun: list[str]) -> bool:
    """The answer already names the counted noun ("214 rooms" for "rooms")."""
    last = _bare(noun[-1]).lower() if noun else ""
    return bool(last) and last.rstrip("s") in answer.lower()
