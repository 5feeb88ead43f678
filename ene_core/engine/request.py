"""One evaluation: :class:`Request` (an answer, its contexts and optionally the question), built
and checked from what callers pass, its texts normalised once (:mod:`ene_core.text.normalise`); and
its JSON form (:func:`load_json`, :func:`request_from_item`), shared by ``ene eval`` input lines
and ``ene serve`` request bodies."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import EneError, InvalidInputError
from ..text.claims import Segment
from ..text.contexts import Context, to_contexts
from ..text.normalise import Normaliser, check_id, decode_json

REQUIRED_FIELDS = ("answer", "contexts")


@dataclass(frozen=True)
class Request:
    """One evaluation: an answer, its contexts and (optionally) the question."""

    answer: str
    contexts: tuple[Context, ...]
    question: str | None = None
    id: str | None = None
    warnings: tuple[str, ...] = ()  # what the normalisation changed; the ENG carries them

    @classmethod
    def build(
        cls, answer: Any, contexts: Iterable[Any] | None, question: Any = None, id: Any = None
    ) -> Request:
        """Check the types strictly and normalise every text (:mod:`ene_core.text.normalise`)."""
        if not isinstance(answer, str):
            raise InvalidInputError(f"answer must be a str, got {type(answer).__name__}")
        if question is not None and not isinstance(question, str):
            raise InvalidInputError(
                f"question must be a str or None, got {type(question).__name__}"
            )
        ident = check_id(id, "id")
        given = to_contexts(contexts)
        norm = Normaliser()
        answer = norm.text(answer, "answer")
        question = None if question is None else norm.text(question, "question")
        ident = None if ident is None else norm.text(ident, "id")
        chunks = tuple(
            Context(
                norm.text(c.text, f"context {i}"),
                norm.text(c.id, f"context {i} id"),
                norm.metadata(c.metadata, f"context {i} metadata"),
            )
            for i, c in enumerate(given)
        )
        return cls(answer, chunks, question, ident, tuple(norm.warnings()))

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any] | Request) -> Request:
        if isinstance(item, Request):
            return item
        if not isinstance(item, Mapping) or "answer" not in item:
            raise InvalidInputError("each request needs an 'answer' (and usually 'contexts')")
        return cls.build(item["answer"], item.get("contexts"), item.get("question"), item.get("id"))


@dataclass(frozen=True)
class ClaimsRequest(Request):
    """Sentences of a streamed answer to check now (``segments``: segment index -> segment of
    the whole answer): only their claim-level rounds run, and the plan returns
    ``{segment index: Claim}`` instead of an ENG. ``shared`` is the stream's, kept between its
    requests (the premise index of its contexts, built once)."""

    segments: dict[int, Segment] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def build_all(items: Iterable[Any], *, keep_errors: bool) -> list[Request | EneError]:
    """Each item as a :class:`Request`; a bad one raises, or with ``keep_errors`` stands as its
    :class:`InvalidInputError` (``evaluate_many(..., return_exceptions=True)``)."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InvalidInputError(
            f"requests must be a list of requests, got {type(items).__name__}: wrap one in a list"
        )
    built: list[Request | EneError] = []
    for item in items:
        try:
            built.append(Request.from_mapping(item))
        except EneError as exc:
            if not keep_errors:
                raise
            built.append(exc)
    return built


def run_built(
    built: Sequence[Request | EneError], run: Callable[[list[Request]], Sequence[Any]]
) -> list[Any]:
    """``run`` on the requests among ``built``; the outcomes in order, errors in their places."""
    results = iter(run([b for b in built if isinstance(b, Request)]))
    return [b if isinstance(b, EneError) else next(results) for b in built]


# -- the JSON form -------------------------------------------------------------------------------
def load_json(text: str | bytes, *, what: str = "") -> Any:
    """JSON text (an ``ene eval`` line, an ``ene serve`` body: ``what``) as a value, strictly
    (:func:`~ene_core.text.normalise.decode_json`: nested at most
    :data:`~ene_core.text.normalise.MAX_DEPTH` levels, no ``NaN``); :class:`InvalidInputError`
    saying why not."""
    subject = f"{what} is " if what else ""
    try:
        return decode_json(text)
    except UnicodeDecodeError as exc:
        raw = exc.object
        raise InvalidInputError(
            f"{subject}not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})"
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{subject}not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except ValueError as exc:  # too deep, NaN, an integer of over 4300 digits
        raise InvalidInputError(f"{subject}{exc}") from None


def parse_request(line: str) -> Request:
    """One JSONL line as a request; raises :class:`InvalidInputError` saying what is wrong."""
    return request_from_item(load_json(line))


def request_from_item(item: Any) -> Request:
    """One decoded JSON value as a request (``ene eval`` lines, ``ene serve`` bodies)."""
    if not isinstance(item, dict):
        raise InvalidInputError(
            f"not a request: a line must be a JSON object, got {_json_type(item)}"
        )
    missing = [name for name in REQUIRED_FIELDS if name not in item]
    if missing:
        names = " and ".join(repr(name) for name in missing)
        raise InvalidInputError(f"missing {names} (each line needs 'answer' and 'contexts')")
    return Request.from_mapping(item)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", dict: "an object"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")
