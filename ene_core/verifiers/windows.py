"""Premise windows and single-string input: how grounding models read a long document.

Some grounding cross-encoders read one string (document, a separator, the claim) instead of the
tokenizer's pair encoding, and read a document longer than their window as several windows of a
declared size, each scored with the claim, the most entailing one counting. :func:`premise_windows`
gives the premise texts one pair is read as; :func:`aggregate` the pair's scores from its
windows'. A premise is never cut silently: without windows, one that does not fit is cut at a
token and the pair marked truncated (the ENG counts it in ``stats.truncated_premises``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInputError
from .protocol import Scores

__all__ = ["aggregate", "premise_windows", "single_text", "token_offsets"]


def single_text(premise: str, hypothesis: str, separator: str) -> str:
    """The one string a single-input model reads: document, separator, claim."""
    return f"{premise}{separator}{hypothesis}"


def premise_windows(
    tokenizer: Any,
    premise: str,
    hypothesis: str,
    *,
    max_length: int,
    separator: str | None = None,
    window: int | None = None,
    stride: int | None = None,
) -> tuple[list[str], bool]:
    """``(the premise texts the model reads with the claim, whether the premise was cut)``.

    ``separator`` given: the single-string input (its tokens count against ``max_length``).
    A premise that fits with the claim (and within ``window`` tokens) is read whole. Otherwise,
    with ``window``: windows of ``window`` premise tokens (at most what fits with the claim),
    starting every ``stride`` tokens (default: ``window``), the last one ending with the premise;
    without: the premise cut at the last token that fits, and ``True``.
    """
    claim = len(tokenizer(hypothesis, add_special_tokens=False)["input_ids"])
    if separator is not None:
        claim += len(tokenizer(separator, add_special_tokens=False)["input_ids"])
    specials = tokenizer.num_special_tokens_to_add(pair=separator is None)
    room = max(1, max_length - specials - claim - 1)  # a token to spare for merges at a cut
    offsets = token_offsets(tokenizer, premise)
    n = len(offsets)
    size = room if window is None else max(1, min(window, room))
    if n <= size:
        return [premise], False
    if window is None:
        return [premise[: offsets[size - 1][1]]], True
    step = max(1, stride or size)
    starts = [*range(0, n - size, step), n - size]
    texts = [premise[offsets[s][0] : offsets[s + size - 1][1]] for s in dict.fromkeys(starts)]
    return texts, False


def token_offsets(tokenizer: Any, text: str) -> list[tuple[int, int]]:
    """Where each of ``text``'s tokens lies in it (a fast tokenizer's offsets)."""
    try:
        pieces = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    except NotImplementedError:  # a slow (Python) tokenizer has no offsets
        raise InvalidInputError(
            "cutting a premise at a token, or reading it in windows, needs the model's fast "
            "tokenizer (tokenizer.json): convert the tokenizer, or shorten the premises"
        ) from None
    return [tuple(o) for o in pieces["offset_mapping"]]


def aggregate(windows: Sequence[Scores]) -> Scores:
    """A pair's scores from its windows': the most entailing window's entailment, and the
    largest contradiction (a window that contradicts the claim still counts); truncated if any
    window was."""
    if len(windows) == 1:
        return windows[0]
    return Scores(
        max(s.entail for s in windows),
        max(s.contra for s in windows),
        any(s.truncated for s in windows),
    )
