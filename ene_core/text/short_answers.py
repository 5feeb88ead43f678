"""Short answers, read as the answer to their question.

An answer segment that is not a statement on its own (a name, a number, a date, a noun phrase,
"in 1931", a list of names, "yes" / "no", "Yes, it was built in 1931.") says something only
together with the question it answers. :func:`is_fragment` decides which segments those are, by
a deterministic rule (no model); the verifier then reads a hypothesis built from the question
and the answer (:func:`answer_hypothesis`):

1. a declarative claim, where a rule can write one (:func:`question_to_claim`):
   "Which magazine was started first, A or B?" + "A" -> "A was started first.";
   "Was the bridge built in 1931?" + "no" -> "The bridge was not built in 1931.";
2. otherwise the question-answer form (:func:`qa_hypothesis`):
   "In what city is the head office? Delhi."

The verifier is trained on exactly these two forms (``scripts/synth_v3.py`` builds its
question-form pairs with these functions): change them together with its training data.
This module needs only the standard library, so the data scripts can import it.
"""

from __future__ import annotations

import re
from typing import Literal

from .rewrites import (
    _IRREGULAR,
    auxiliary_choice,
    copula_subject,
    do_support,
    how_question,
    inflect,
    with_preposition,
)

# -- tidying ------------------------------------------------------------------------------------


def tidy_sentence(text: str) -> str:
    """Whitespace collapsed, stray separators trimmed, a capital first and a full stop last."""
    text = re.sub(r"\s+", " ", text).strip(" ,;:")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?\"'":
        text += "."
    return text


def qa_hypothesis(question: str, answer: str) -> str:
    """The question-answer form: the question (ending in "?"), a space, the answer and a full
    stop; whitespace collapsed. ``("In what city is it", "Delhi.")`` -> ``"In what city is it?
    Delhi."``."""
    q = re.sub(r"\s+", " ", question).strip()
    if not q.endswith("?"):
        q = q.rstrip(" .") + "?"
    a = re.sub(r"\s+", " ", answer).strip().rstrip(" .")
    return f"{q} {a}."


#: How a short answer's hypothesis was made: a declarative claim built from question and answer,
#: or the question-answer form ("Q? A.").
HypothesisForm = Literal["declarative", "question_answer"]
#: What the engine reads a short answer as: the declarative claim wherever a rule writes one
#: ("declarative"), or always the question-answer form ("question_answer"). Chosen by
#: ``benchmarks/short_answers.py`` on HotpotQA and the written QA set (docs/engine.md).
DEFAULT_FORM: HypothesisForm = "declarative"


def answer_hypothesis(question: str, answer: str) -> str:
    """What the verifier reads for a short ``answer`` to ``question``: the declarative claim
    when a rule can write one, else the question-answer form."""
    return read_answer(question, answer)[0]


def read_answer(
    question: str, answer: str, form: HypothesisForm = DEFAULT_FORM
) -> tuple[str, HypothesisForm]:
    """The hypothesis for a short ``answer`` to ``question`` and how it was made: with ``form``
    "declarative", the declarative claim where a rule can write one, else (a rule that is
    unsure returns nothing) the question-answer form; with "question_answer", always that."""
    if form == "declarative":
        claim = question_to_claim(question, answer)
        if claim is not None:
            return claim, "declarative"
    return qa_hypothesis(question, answer), "question_answer"


def usable_question(question: str | None) -> str | None:
    """The question with whitespace collapsed, or ``None`` when there is none to read a short
    answer against (absent, empty, or no word in it)."""
    if question is None:
        return None
    q = re.sub(r"\s+", " ", question).strip()
    return q if _WORD.search(q) else None


# -- which segments read the question -----------------------------------------------------------

_WORD = re.compile(r"\w", re.UNICODE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_YES = re.compile(r"^\W*yes\b", re.IGNORECASE)
_NO = re.compile(r"^\W*no\b(?=\s*(?:[^\w\s]|$))", re.IGNORECASE)  # "No." / "No, it was not."
#: Longest fragment, in words: a longer segment is taken for a statement.
MAX_FRAGMENT_WORDS = 12

_AUXILIARIES = _words(
    "is are was were be been being am isn't aren't wasn't weren't has have had hasn't haven't "
    "hadn't do does did don't doesn't didn't can could will would shall should may might must "
    "can't couldn't won't wouldn't shouldn't mustn't cannot"
)
# Personal pronouns and "there": a segment that starts with one is a statement ("It rains.").
_PRONOUNS = _words("i you he she it we they there it's there's he's she's they're we're i'm you're")
# Common verbs of encyclopedic and RAG text, base form: with their -s and past forms they mark
# a finite verb after the first word ("Bananas contain potassium", "The Seine flows").
_VERBS = _words("""
    accept add admit agree aim air allow appear apply argue arrive ask attack attend attract
    award back bear beat become begin believe belong border break bring build buy call carry
    cause celebrate change charge claim close come compete compose connect consider consist
    contain continue control cost cover create cross cut deal debut decide declare define
    deliver depend describe design destroy develop die differ direct discover draw drink drive
    earn eat employ end enjoy enter establish exist expect explain face fall feature feel fight
    fill find finish flow fly follow form found gain give go govern grow happen hate have hear
    help hold host house hunt include increase involve join keep kill know last lead learn leave
    let lie like link list live look lose love make manage mark marry mean measure meet move
    need note occur offer open operate own pass pay perform place plan play point prefer
    premiere produce protect prove provide publish put rank reach read receive recognise
    recognize record reduce refer reflect release remain remember replace report represent
    require rest return reveal rise rule run say score see seem sell send serve set share show
    sing sit sleep span speak spend stand star start stay stop stretch study succeed suggest
    support surround survive take talk teach tell tend think top tour trade train travel try
    turn use vary visit wait walk want watch wear win work write
    bake block boil burn chop cook crash depart display equal exceed fail fit fry get grill
    heat hit hurt lack land load melt mix owe pour print process quit ride roast sail save
    shut simmer sink smell sound spread stir store taste total upload weigh
    behave borrow breathe bury catch choose climb collect complain complete contribute convince
    dance deny deserve disappear divide encourage escape examine expand explore extend feed fix
    float forget forgive gather generate hide identify ignore imagine improve inform insist
    intend introduce invent invite jump kick kiss knock lift listen mention miss notice obtain
    occupy organise organize peak pick pray prepare pretend prevent pull push raise recommend
    refuse regret relax rely remove rent repair repeat reply rescue resign resist respond retire
    rush scream seek shout solve steal suffer supply surprise suspect swim teach thank throw
    treat understand warn wash worry wrap
    absorb accelerate accommodate accompany accomplish accumulate accuse achieve acquire act
    adapt adjust adjoin administer adopt advance advertise advise affect afford allocate alter
    amend analyse analyze announce answer anticipate apologise appoint appreciate approach
    approve arrange assemble assess assign assist assume assure attach attempt authorise
    authorize avoid bathe bend benefit bike bite bleed blend bless blink bloom blow boast bounce
    bow brew brush build bump calculate camp cancel capture care cease chase chat cheer chew
    circle cite clap classify clean clear climb cling collaborate collapse combine comfort
    command comment commit communicate compare compensate compile comply compress concentrate
    concern conclude conduct confirm conflict confront confuse conserve constitute construct
    consult consume contact convert cooperate coordinate cope copy correct correspond cough
    count crawl crouch cry cure cycle damage decline decorate decrease dedicate defeat defend
    delay delete demand demonstrate depict deploy derive descend detect determine devote dig
    disagree discuss dislike dismiss dispatch distribute dive donate double doubt drag drain
    dream dress drift drill drip drown dry dump dust elect eliminate embrace emerge emit emphasise
    emphasize enable enact enforce engage enhance enlarge enrol enroll ensure entertain equip
    erode erupt evacuate evaluate evolve exchange excite exclude execute exercise exhibit exit
    expire export expose express fade fasten favour favor fear fetch file finance fire fish flee
    flip flood flourish fold forbid force forecast freeze frown gaze glance glow grab graduate
    grant greet grin grip guarantee guard guess guide halt handle hang harvest head heal hike
    hire hop hug hum hurry illustrate implement import impose impress incorporate indicate
    influence inherit inject injure inspect inspire install instruct insure integrate interact
    interpret interrupt interview invest investigate irrigate issue jog judge juggle justify
    kneel knit label laugh launch lean leap lend license lick limit linger locate lock lower
    maintain manufacture march match matter mature merge migrate mind minimise minimize monitor
    mount multiply murmur negotiate nod nominate obey object observe occupy operate oppose
    orbit order originate outline outnumber overlook oversee pack paddle paint park participate
    patrol pause perceive permit persuade photograph pinch plant plead please plunge polish pose
    possess post pour practise practice praise predict present preserve press prevail price
    proceed proclaim produce progress prohibit promise promote propose prosecute protest
    provoke publish punch punish purchase pursue qualify question race rain rally reappear
    rebuild recall receive reckon recover recruit recycle redesign reflect regain register
    regulate rehearse reign reject rejoice relate release relocate remark remind renew renovate
    reopen reorganise repay rescue research resemble reserve reside resolve restore restrict
    resume retain retreat reunite revise revive reward ring rinse roam roar rob rock roll rot
    rotate row rub ruin sample satisfy scan scatter schedule scratch scrub search secure select
    separate settle sew shake shape shave shelter shift shine shiver shoot shop shrink sigh
    sign signal sip skate sketch ski skip slam slice slide slip smash smile smoke snap sneeze
    snow soak sob sort sow spark specialise specialize specify spill spin splash split sponsor
    spray sprint squeeze stack stage stare starve state steer step stick sting stitch stream
    strengthen stress stretch strike stroll struggle submit subscribe substitute suck sue
    summarise summarize supervise surf surrender survey suspend sustain swallow sway sweat
    sweep swing switch tackle tap target tear tease telephone terminate test testify thrive
    tick tie tighten tip tolerate toss touch tow trace track transfer transform translate
    transmit transport trap tremble trim trip trust tumble twist type undergo undertake unite
    unload unlock update uphold upgrade urge utilise utilize vanish venture verify veto view
    vote wade wake wander warm wave weave wed weep welcome whip whisper whistle widen wink wipe
    wish withdraw withstand wonder worship wound wrestle yawn yell yield zoom
    """)
_IRREGULAR_PAST = _words("""
    became began bought brought built came caught chose drew drove ate fell felt fought found
    flew forgot gave went grew hung heard held hid kept knew laid led left lent lay lost made
    meant met paid ran rode rang rose said saw sold sent set shook shot sang sat slept spoke
    spent stood stole struck swam took taught tore told thought threw understood woke wore won
    wrote arose awoke bit bled bore bred broke clung crept dealt dug dove fed fled flung forgave
    froze got ground knelt leapt lit overcame overtook sank sought shone shrank sped spat split
    sprang stank stuck stung strode swept swore swung undertook upheld wept withdrew withstood
    wound
    """)
# Past participles that say nothing finite without an auxiliary ("born in 1865").
_PARTICIPLES_ONLY = _words("born known located based named called situated titled")
# Words that answer like "sure" but answer nothing: never read as an answer.
_INTERJECTIONS = _words(
    "sure ok okay thanks thank hello hi hey certainly absolutely great alright welcome"
)


def yes_no(answer: str) -> bool | None:
    """``True`` for an answer that starts with "yes", ``False`` for one that is "no" (alone or
    before punctuation: "No, it was not."; not "No one came."), ``None`` otherwise."""
    if _YES.match(answer):
        return True
    if _NO.match(answer):
        return False
    return None


def is_fragment(text: str) -> bool:
    """Whether a segment is not a statement on its own, so that it is read as the answer to the
    question (the rule; deterministic, no model):

    * it starts with "yes" or is "no" (:func:`yes_no`), or
    * it has at most :data:`MAX_FRAGMENT_WORDS` words, does not start with a pronoun or an
      instruction verb ("Open config.json."), does not pair a plural first word with a plain
      word ("Cats purr."), and no lower-case word after the first is verb-like: an auxiliary
      or modal (*is*, *was*, *can*, *didn't*), a past form (*-ed*, *won*, *built*; not *born*,
      *known*, *located*, *based*, *named*, *called*), one of about 800 verbs with or without *-s*
      (*contains*, *hosts*, *play*), or a verb by its position (:func:`_finite_by_position`).

    So "Delhi", "Arthur's Magazine", "in 1931", "2 March 1972", "Max Martin, Savan Kotecha and
    Ilya Salmanzadeh" and "born in 1865" are fragments; "The tower stands in Paris." and "It
    rains." are statements. A lone "sure", "ok" or "thanks" is neither (filler).
    """
    if yes_no(text) is not None:
        return True
    raw = [t for t in text.split() if t.strip(_QUOTES)]
    words = [t.strip(_QUOTES) for t in raw]
    if not words or len(words) > MAX_FRAGMENT_WORDS:
        return False
    first = words[0].lower()
    if (first in _PRONOUNS and not words[0].isupper()) or first in _AUXILIARIES:  # not "IT"
        return False
    if len(words) == 1:
        return first not in _INTERJECTIONS
    if first in _IMPERATIVES and not words[1][:1].isupper():  # "Open config.json."
        return False
    if _plural(first) and _plain(words[1]) and not _plural(words[1]):  # "Cats purr."
        return False
    for i in range(1, len(words)):
        word = words[i]
        if not word[:1].islower() or words[i - 1].lower() == "to":  # a name; "to play"
            continue
        nxt = "" if i + 1 == len(words) or raw[i][-1] in ",;:" else words[i + 1].lower()
        if _verb_like(word) or _finite_by_position(word.lower(), nxt):
            return False
    return True


_QUOTES = "\"'()[]{}.,;:!?\u201c\u201d\u2018\u2019"
_ARTICLES = _words("the a an his her its their")
# Nouns that end in -s: never read as a verb by their position.
_PLURAL_ONLY = _words("series species news means physics politics economics olympics")
_FUNCTION_WORDS = _words(
    "of in on at to for by with from into onto over under near about across along around "
    "after before since until during between among against without within through via per "
    "and or but nor than as like both all either neither each every half whom what which "
    "whose"
)
# Instructions start with a verb: "See the docs.", "Open config.json."
_IMPERATIVES = _words(
    "see check open close run use install upgrade update click visit contact call read write "
    "set add remove delete restart enable disable select choose try make take go press type "
    "enter download configure ask refer consider avoid keep ensure follow create start stop "
    "tell show give explain list describe find compare"
)


def _finite_by_position(word: str, nxt: str) -> bool:
    """A verb by its neighbour: an -s word followed by a word other than "and", "or" or "of"
    ("weighs 895 grams", "simmers for an hour"; not "types of plant", "products and services"),
    or any word but a function word or an -ing form right before an article ("adjoin the
    park")."""
    if not nxt:
        return False
    if nxt in _ARTICLES and _plain(word):
        return True
    return _plural(word) and nxt not in ("and", "or", "of")


def _plural(word: str) -> bool:
    """Ends like a plural noun or a verb's -s form ("cats", "weighs"; not "glass", "series")."""
    w = word.lower()
    return (
        len(w) > 3
        and w.endswith("s")
        and not w.endswith(("ss", "us", "is", "'s"))
        and w not in _PLURAL_ONLY
    )


def _plain(word: str) -> bool:
    """A lower-case word that is not a function word or an -ing form."""
    return word[:1].islower() and word not in _FUNCTION_WORDS and not word.endswith("ing")


def _verb_like(word: str) -> bool:
    w = word.lower().rsplit("-", 1)[-1]  # "co-wrote"
    if w in _AUXILIARIES or w in _IRREGULAR_PAST or w.endswith("n't"):
        return True
    if w in _PARTICIPLES_ONLY:
        return False
    if len(w) > 3 and w.endswith("ed"):
        return True
    stems = {w}
    if w.endswith("ies"):
        stems.add(w[:-3] + "y")
    if w.endswith("es"):
        stems.add(w[:-2])
    if w.endswith("s"):
        stems.add(w[:-1])
    return bool(stems & _VERBS)


# -- what cannot be a claim --------------------------------------------------------------------

# Lower-case words a bare value may hold: "330 metres", "about two years", "$5 million".
_VALUE_WORDS = _words("""
    about around approximately roughly nearly almost over under just some more less than at
    least most up to only exactly circa per cent percent a an
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred hundreds thousand thousands million millions billion billions trillion dozen
    dozens half quarter third thirds first second
    mm cm m km kg g mg lb lbs oz ml l ft in mi mph kph kmh hz khz mhz ghz kb mb gb tb kw mw gw
    kwh w v am pm bc ad bce ce st nd rd th
    millimetre millimetres millimeter millimeters centimetre centimetres centimeter centimeters
    metre metres meter meters kilometre kilometres kilometer kilometers mile miles foot feet
    inch inches yard yards gram grams kilogram kilograms kilo kilos tonne tonnes ton tons pound
    pounds ounce ounces litre litres liter liters gallon gallons acre acres hectare hectares
    degree degrees second seconds minute minutes hour hours day days week weeks month months
    year years decade decades century centuries dollar dollars euro euros cent cents pence
    yen percentage points point people inhabitants residents times copies
    """)
_NUMBER_WORDS = _words("""
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion trillion dozen half
    """)
# Leading words a bare value may start with ("in 1931", "on 2 March 1972", "by Delhi").
_VALUE_OPENERS = _words("in on at from to for by of with since until during as")


def cannot_be_claim(text: str) -> bool:
    """Whether a segment cannot be a claim on its own, whatever its question: what is left
    unchecked when the request has no question to read it against.

    Only these: a lone word ("Delhi", "1889", "delicious"); "yes" or "no" with at most one
    more word ("Yes.", "No, never."); a bare name or value: every word capitalised, a number,
    a linking word inside a name ("of", "the", "and", "de") or an amount's word (a unit, a
    number word, "about", "more than"), after at most one leading preposition ("in 1931", "on 2
    March 1972", "Max Martin, Savan Kotecha and Ilya Salmanzadeh", "about 330 metres"). Any
    other segment, a sentence with a subject and a verb whatever the verb, or a noun phrase
    with a common noun ("A man in red."), can be a claim and is checked (fail-closed).
    """
    raw = [t for t in text.split() if t.strip(_QUOTES)]
    words = [t.strip(_QUOTES) for t in raw]
    if len(words) <= 1:
        return True
    if yes_no(text) is not None:
        return len(words) <= 2
    if len(words) > MAX_FRAGMENT_WORDS:
        return False
    if words[0].lower() in _VALUE_OPENERS and len(words) > 1:
        words = words[1:]
    named = False
    for word in words:
        if _name_or_number(word) or word.lower() in _NUMBER_WORDS:
            named = True
        elif word.lower() not in _NAME_LINKS | _VALUE_WORDS and word not in ("&", "-", "\u2013"):
            return False
    return named


def _name_or_number(word: str) -> bool:
    """A capitalised word, a number or an amount as written ("1,500", "$5.2m", "3rd", "40%")."""
    return word[:1].isupper() or any(ch.isdigit() for ch in word)


# -- the declarative claim ----------------------------------------------------------------------

_TAIL_CHOICE = re.compile(r",?\s[^,?]+\sor\s[^,?]+\s*\??\s*$")
_NAME_CHOICE = re.compile(r"\s(?:[A-Z][\w.'-]*\s)+or(?:\s[A-Z][\w.'-]*)+\s*\??\s*$")
_RELATIVES = frozenset(["that", "which", "who", "whose"])
_AUX_WORDS = frozenset(
    ["is", "was", "are", "were", "has", "had", "have", "can", "could", "will", "would"]
)
_PREPOSITIONS = frozenset(
    ["in", "on", "at", "from", "to", "for", "by", "of", "with", "during", "since", "until", "as"]
)


def question_to_claim(question: str, answer: str) -> str | None:
    """Rewrite a question and its short answer as one declarative claim, or ``None``.

    Handles: a wh-phrase at the start followed by an auxiliary ("Who was ..." / "What X is ..."),
    "What is/was X?" / "Who is X?", "When/Where was X VERB?", "In what N was X VERB?", a wh-word
    later in the sentence ("... is based in what city?"), and yes/no questions answered "yes" /
    "no" whose subject a rule can find (:func:`yes_no_claim`). Choice questions ("Who is older,
    A or B?") lose their "A or B" tail. Do-support wh-questions ("What year did X perform ...")
    return ``None``.
    """
    q = re.sub(r"\s+", " ", question).strip()
    a = re.sub(r"\s+", " ", answer).strip().rstrip(" .")
    if not a or not q:
        return None
    polarity = yes_no(a)
    if polarity is not None:
        return yes_no_claim(q, polarity)
    lead, q = _last_sentence(q.rstrip(" ?.").strip())
    choice = auxiliary_choice(q.split(), a)
    if choice is not None:
        return _with_lead(lead, choice)
    if " or " in q:
        chosen = _TAIL_CHOICE.sub("", q + "?").rstrip(" ?,:")
        if len(chosen.split()) < 2:  # "who is younger A or B": no comma before the choice
            chosen = _NAME_CHOICE.sub("", q + "?").rstrip(" ?,:")
        q = chosen
    claim = _declarative(q, a)
    if claim is None or claim.rstrip(".") == a:  # nothing but the answer is left
        return None
    return _with_lead(lead, claim)


def _last_sentence(q: str) -> tuple[str, str]:
    """A question of several sentences as its statements and its last sentence, the one that
    asks: ("The album was Seger's 11th.", "What was his stage name")."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z])", q)
    if len(parts) < 2 or len(parts[-1].split()) < 2:
        return "", q
    return " ".join(parts[:-1]), parts[-1]


def _with_lead(lead: str, claim: str) -> str:
    return f"{tidy_sentence(lead)} {claim}" if lead else claim


_KNOWN_VERBS = _VERBS | frozenset(_IRREGULAR)


def _declarative(q: str, a: str) -> str | None:
    words = q.split()
    if len(words) < 2:
        return None
    first = words[0].lower()
    # When/Where was X VERB  |  In what/which N was X VERB
    m = re.match(r"^(?:When|Where|In (?:what|which) \w+) (was|were|is|are) (.+) (\w+)$", q, re.I)
    if m:
        aux, subj, verb = m.groups()
        if not _participle(verb):  # "Where is the Benholm Ice Arena" -> "... is in A"
            subj, verb = f"{subj} {verb}", ""
        return tidy_sentence(f"{subj} {aux.lower()} {verb} {with_preposition(a, 'in')}")
    for rule in (how_question, do_support):
        claim = rule(words, a, _KNOWN_VERBS)
        if claim is not None or (rule is how_question and first == "how"):
            return claim
    claim = copula_subject(words, a)
    if claim is not None:
        return claim
    if first == "who":  # "Who wrote X and who died in 2007" -> "A wrote X and died in 2007"
        rest = re.sub(r"\band who\b ", "and ", " ".join(words[1:]))
        return tidy_sentence(f"{a} {rest}")
    # What is X  -> X is A
    m = re.match(r"^(?:What|Which) (is|was|are|were) (.+)$", q, re.I)
    if m:
        aux, rest = m.groups()
        return tidy_sentence(f"{rest} {aux.lower()} {a}")
    if first in ("what", "which"):
        # the wh-phrase runs until the first auxiliary or finite verb (at most 9 words later)
        for i in range(1, min(len(words), 10)):
            w = words[i].lower().strip(",")
            if w in ("did", "does", "do"):
                return None
            if w in _AUX_WORDS or re.match(r"^\w+ed$", w) or _finite(words[i], w):
                return tidy_sentence(f"{a} {' '.join(words[i:])}")
        return None
    return _wh_later(words, a)


def _participle(word: str) -> bool:
    """A word that ends a passive or a state ("born", "located", "built", "held")."""
    w = word.lower()
    return w in _PARTICIPLES_ONLY or w in _IRREGULAR_PAST or w.endswith(("ed", "en", "wn"))


def _finite(word: str, lower: str) -> bool:
    """A finite verb after a wh-phrase: an irregular past ("won") or an -s form of a common
    verb ("costs"); not a participle that says nothing finite ("born")."""
    if not word[:1].islower() or lower in _PARTICIPLES_ONLY:
        return False
    lower = lower.rsplit("-", 1)[-1]  # "co-wrote"
    if lower in _IRREGULAR_PAST:
        return True
    return lower.endswith("s") and (lower[:-1] in _VERBS or lower[:-2] in _VERBS)


def _wh_later(words: list[str], a: str) -> str | None:
    """A wh-word later in the sentence: "... is based in what city" -> "... is based in A". The
    last wh-word that a rule can replace: an earlier "who" / "which" is often a relative
    ("the manager who recruited X managed Y during what timeframe")."""
    for i in range(len(words) - 1, 0, -1):
        if _relative(words, i):
            continue
        claim = _wh_at(words, i, a)
        if claim is not None:
            return claim
    return None


def _relative(words: list[str], i: int) -> bool:
    """``words[i]`` is a relative "which" / "who" / "whom" opening a clause with its own verb
    ("the city in which Kirton End is located", "an industrialist who became known as ..."),
    not the word the question asks with."""
    if words[i].lower() not in ("which", "who", "whom") or i + 1 >= len(words):
        return False
    nxt = words[i + 1].strip(",;:")
    lower = nxt.lower()
    if nxt[:1].isupper() or lower in _DETERMINERS:  # "in which Kirton End is", "which the"
        return True
    return lower in _AUX_WORDS or _finite(nxt, lower) or (len(lower) > 3 and lower.endswith("ed"))


def _wh_at(words: list[str], i: int, a: str) -> str | None:
    """The claim with the wh-word at ``words[i]`` replaced by the answer, or ``None``."""
    lw = words[i].lower()
    if lw in ("what", "which", "who", "whom", "when", "where"):
        rest = words[i + 1 :]
        before = words[:i]
        if (
            before
            and before[-1].lower() in _PREPOSITIONS
            and a.split()[0].lower() in (_PREPOSITIONS)
        ):
            before = before[:-1]  # "during what timeframe" + "from 1986 to 2013"
        if not rest:
            if lw in ("when", "where"):  # "a war that ended when" -> "ended in 1922"
                a = with_preposition(a, "in")
            return tidy_sentence(f"{' '.join(before)} {a}")
        if lw in ("when", "where"):
            return None
        if rest[0].lower() in _PREPOSITIONS:
            return tidy_sentence(f"{' '.join(before)} {a} {' '.join(rest)}")
        if len(rest) <= 4:
            return tidy_sentence(f"{' '.join(before)} {a}")
        # "... the practice of what way of filling vacancies was constitutional": the
        # wh-phrase runs to the next auxiliary or relative word
        stops = _AUX_WORDS | _RELATIVES | _PREPOSITIONS
        end = next(
            (
                j
                for j, w in enumerate(rest)
                if w.lower() in _AUX_WORDS or (j > 0 and w.lower() in stops)
            ),
            None,
        )
        if end is None or end > 8:
            return None
        return tidy_sentence(f"{' '.join(words[:i])} {a} {' '.join(rest[end:])}")
    if lw == "how" and i + 1 < len(words) and words[i + 1].lower() in ("many", "much"):
        rest = words[i + 2 :]
        end = next((j for j, w in enumerate(rest) if w.lower() in _PREPOSITIONS), len(rest))
        noun = [w.strip(" ?") for w in rest[:end] if w.strip(" ?")]
        if len(noun) > 3 or (end < len(rest) and end == 0 and rest):
            noun = []
        said = (
            a if not noun or noun[-1].lower().rstrip("s") in a.lower() else f"{a} {' '.join(noun)}"
        )
        claim = f"{' '.join(words[:i])} {said}"
        if end < len(rest):
            claim += f" {' '.join(rest[end:])}"
        return tidy_sentence(claim)
    return None


# -- yes / no questions -------------------------------------------------------------------------

_YES_NO_AUX = _words("is are was were do does did has have had can could will would should")
_DO = frozenset({"do", "does", "did"})
_MODALS = frozenset({"can", "could", "will", "would", "should"})
_SUBJECT_PRONOUNS = _words("it he she they there we you i")
_DETERMINERS = _words("the a an this that these those his her its their our my your")
_QUANTIFIERS = frozenset({"both", "either", "neither", "all", "each"})
# Inside a name: "Bank of America", "In the Realm of the Hackers", "Ed Wood and Orson Welles".
_NAME_LINKS = frozenset({"and", "&", "of", "the", "de", "for", "in", "on", "upon", "y", "von"})
# Words that start a predicate after a determiner and one noun ("the bridge built in 1931").
_PREDICATE_STARTS = (
    _PREPOSITIONS
    | _DETERMINERS
    | _QUANTIFIERS
    | _PARTICIPLES_ONLY
    | _IRREGULAR_PAST
    | _words("also still ever really not never more less about located near into")
)


def yes_no_claim(question: str, polarity: bool) -> str | None:
    """The statement a yes/no question asks about ("Was the bridge built in 1931?" + yes ->
    "The bridge was built in 1931."), or its negation (+ no -> "The bridge was not built in
    1931."; "Did the band tour Japan?" -> "The band did (not) tour Japan."), or ``None`` when
    the question does not start with an auxiliary or no rule finds where its subject ends.

    Subjects the rule finds: a pronoun; a run of capitalised words joined by *and*, *of*, ...
    ("Scott Derrickson and Ed Wood"), optionally after *both* / *either* and a determiner ("the
    Laleli Mosque and Esma Sultan Mansion"); a determiner and one noun ("the bridge", "the
    drinks Gibson and Zurracapote") when the next word clearly starts the predicate.
    """
    words = question.rstrip(" ?.").split()
    if len(words) < 3 or words[0].lower() not in _YES_NO_AUX:
        return None
    aux, rest = words[0].lower(), words[1:]
    end = _subject_end(rest, aux)
    if end is None or end >= len(rest):
        return None
    if not polarity and rest[0].lower() in ("both", "all"):  # "A and B are not both P"
        rest = [*rest[1:end], rest[0].lower(), *rest[end:]]
        end -= 1
    if polarity and aux in _DO and rest[end][:1].islower():  # "did win" -> "won"
        return tidy_sentence(" ".join([*rest[:end], inflect(rest[end], aux), *rest[end + 1 :]]))
    subject, predicate = " ".join(rest[:end]), " ".join(rest[end:])
    verb = aux if polarity else ("cannot" if aux == "can" else f"{aux} not")
    return tidy_sentence(f"{subject} {verb} {predicate}")


def _bare(word: str) -> str:
    return word.strip("\"'(),;:\u201c\u201d\u2018\u2019")


def _capitalised(word: str) -> bool:
    w = _bare(word)
    return bool(w) and (w[0].isupper() or w[0].isdigit())


def _subject_end(rest: list[str], aux: str) -> int | None:
    """How many words of ``rest`` (the question after its auxiliary) are the subject."""
    i = 0
    if rest[0].lower() in _SUBJECT_PRONOUNS:
        return 1
    if rest[0].lower() in _QUANTIFIERS:
        i = 1
    if i < len(rest) and rest[i].lower() in _DETERMINERS:
        i += 1
        if i < len(rest) and not _capitalised(rest[i]):  # determiner + one noun
            i += 1
            end = _name_run(rest, i) if i < len(rest) and _capitalised(rest[i]) else i
            return end if end < len(rest) and _predicate_follows(rest, end, aux) else None
    if i >= len(rest) or not _capitalised(rest[i]):
        return None
    end = _name_run(rest, i)
    if end + 2 < len(rest) and rest[end][:1].islower() and rest[end + 2].lower() == "than":
        return end + 1  # "the Tallis X2 drone | heavier than"
    return end


def _name_run(rest: list[str], i: int) -> int:
    """The end of the run of capitalised words starting at ``i``; a linking word ("and", "of",
    "the") belongs to it when a capitalised word follows (after at most one more link)."""
    while i < len(rest):
        if _capitalised(rest[i]):
            i += 1
            continue
        j = i
        while j - i < 2 and j < len(rest) and _bare(rest[j]) in _NAME_LINKS:
            j += 1
        if j == i or j >= len(rest) or not _capitalised(rest[j]):
            break
        i = j
    return i


def _predicate_follows(rest: list[str], end: int, aux: str) -> bool:
    """After a determiner-and-noun subject: does ``rest[end]`` clearly start the predicate?"""
    word = _bare(rest[end]).lower()
    after = rest[end + 1] if end + 1 < len(rest) else None
    if aux in _DO or aux in _MODALS:  # a verb, then the end, a name, a determiner, a preposition
        if word in _QUANTIFIERS:
            return True
        return not _capitalised(rest[end]) and (
            after is None
            or _capitalised(after)
            or _bare(after).lower() in _DETERMINERS | _PREPOSITIONS
        )
    return (
        word in _PREDICATE_STARTS
        or (len(word) > 3 and word.endswith(("ed", "ing")))
        or (after is not None and after.lower() == "than")
    )
