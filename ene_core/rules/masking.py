"""What the verifier reads of a claim whose amounts the evidence computes.

The model cannot check arithmetic: "Registering two LPAs would cost 184 dollars." against "92
dollars per LPA" comes out unsupported at best. Where the premise states each of a claim's
amounts and computes some of them (:func:`~ene_core.rules.grounding.computed`), the model reads the
claim with those written "some ..." ("would cost some dollars"): the arithmetic is done, the
model checks the rest, and the amount checks and binding rules still read the claim as written
(:func:`as_written`). Deterministic and offline.
"""

from __future__ import annotations

import re

from ..text.words import TOKEN
from .amounts import Amount
from .grounding import computed, unstated
from .quantities import spell

__all__ = ["Masked", "as_written", "difference", "masked"]


class Masked(str):
    """A claim with the amounts its premise computes written "some ..." (:func:`masked`);
    ``written`` is the claim as written."""

    written: str


def difference(claim: str, a: Amount) -> bool:
    """Whether the claim's ``a`` is a difference it says is more or less than something ("7
    pounds less than paying at the door")."""
    return bool(_MAGNITUDE.match(claim, a.end))


def as_written(claim: str) -> str:
    """The claim as written, for one the model reads :class:`Masked`."""
    return claim.written if isinstance(claim, Masked) else claim


def masked(claim: str, premise: str) -> str:
    """``claim`` as the model should read it against ``premise``: where the premise states each
    of its amounts and computes some of them, those are written "some ..." ("would cost 184
    dollars" -> "would cost some dollars"): the arithmetic is done, the model checks the rest.
    A difference the claim says is more or less than something stays as written."""
    if unstated(claim, premise) or not (worked := computed(claim, premise)):
        return claim
    read = claim
    for a in sorted(worked, key=lambda a: -a.start):
        if difference(claim, a):
            continue  # "7 pounds less than ...": which side is less, only the amount tells
        words = TOKEN.findall(a.surface)  # what comes after its number: "nearly 200 years"
        numbers = [i for i, w in enumerate(words) if _numeral(w, words[i + 1 : i + 2])]
        unit = words[numbers[-1] + 1 :] if numbers else words
        say = " ".join(unit) or _SOME.get(a.family, "")  # "an hour and a half": "some time"
        read = read[: a.start] + f"some {say}".rstrip() + read[a.end :]
    if read == claim:
        return claim
    out = Masked(read)
    out.written = claim
    return out


_MAGNITUDE = re.compile(
    r"\s*(?:more|less|fewer|cheaper|dearer|higher|lower|bigger|smaller|larger|greater|heavier"
    r"|lighter|taller)\b",
    re.IGNORECASE,
)


def _numeral(word: str, following: list[str]) -> bool:
    """Whether ``word`` writes (a part of) a number: "a" and "and" only before one ("two and a
    half minutes"; not "five days a week")."""
    low = word.lower()
    if low in ("a", "an", "and"):
        return bool(following) and _numeral(following[0], [])
    return word[0].isdigit() or low in _NUMBER_WORDS


_SOME = {"time": "time", "money": "money"}  # an amount written with no unit word
#: words that write a number or a part of one ("a", "an" and "and" only before one of them)
_NUMBER_WORDS = frozenset(spell(n) for n in range(100)) | frozenset(
    (
        "half",
        "quarter",
        "quarters",
        "third",
        "thirds",
        "hundred",
        "thousand",
        "million",
        "billion",
        "dozen",
    )
)
