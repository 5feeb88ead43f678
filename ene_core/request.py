"""One evaluation: :class:`Request` (an answer, its contexts and optionally the question), built
and checked from what callers pass; and its JSON form (:func:`request_from_item`), shared by
``ene eval`` input lines and ``ene serve`` request bodies."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .claims import Segment
from .contexts import Context, to_contexts
from .errors import InvalidInputError

REQUIRED_FIELDS = ("answer", "contexts")


@dataclass(frozen=True)
class Request:
    """One evaluation: an answer, its contexts and (optionally) the question."""

    answer: str
    contexts: tuple[Context, ...]
    question: str | None = None
    id: str | None = None

    @classmethod
    def build(
        cls, answer: Any, contexts: Iterable[Any] | None, question: Any = None, id: Any = None
    ) -> Request:
        if not isinstance(answer, str):
            raise InvalidInputError(f"answer must be a str, got {type(answer).__name__}")
        if question is not None and not isinstance(question, str):
            raise InvalidInputError(
                f"question must be a str or None, got {type(question).__name__}"
            )
        return cls(answer, tuple(to_contexts(contexts)), question, None if id is None else str(id))

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


def parse_request(line: str) -> Request:
    """One JSONL line as a request; raises :class:`InvalidInputError` saying what is wrong."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise InvalidInputError("not valid JSON: nested too deeply") from None
    return request_from_item(item)


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
    if item.get("id") is not None and not isinstance(item["id"], (str, int)):
        raise InvalidInputError(f"id must be a string or a number, got {_json_type(item['id'])}")
    return Request.from_mapping(item)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", dict: "an object"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")
