"""One evaluation: :class:`Request` (an answer, its contexts and optionally the question), built
and checked from what callers pass."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .contexts import Context, to_contexts
from .errors import InvalidInputError


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
