"""Normalising what users pass as contexts: strings, mappings or document-like objects."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInputError
from .normalise import check_id


@dataclass(frozen=True)
class Context:
    """One retrieved chunk as the engine sees it."""

    text: str
    id: str
    metadata: dict[str, Any] = field(default_factory=dict)


def stable_id(text: str, position: int) -> str:
    """A stable id for a chunk that has none: its position and a hash of its content."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"ctx{position}-{digest}"


def canonical_order(contexts: Sequence[Context]) -> list[int]:
    """Input positions sorted by content (SHA-256 of the text, then the id): the order the
    engine works in, so permuting the input permutes the ENG's indices and nothing else.

    Contexts with the same text and id are interchangeable; only they keep their input order.
    """

    def key(i: int) -> tuple[str, str, int]:
        text = contexts[i].text.encode("utf-8", "surrogatepass")
        return hashlib.sha256(text).hexdigest(), contexts[i].id, i

    return sorted(range(len(contexts)), key=key)


def to_context(item: Any, position: int) -> Context:
    """Accept ``str``, a mapping with ``text`` (or ``page_content``), or an object with either.

    LangChain ``Document`` (``page_content``, ``id``, ``metadata``) and LlamaIndex nodes
    (``get_content()``, ``node_id``, ``metadata``) work without importing either framework.
    """
    if isinstance(item, Context):
        return item
    if isinstance(item, str):
        return Context(item, stable_id(item, position))
    if isinstance(item, Mapping):
        text, ident, metadata = (
            item.get("text", item.get("page_content")),
            item.get("id"),
            item.get("metadata"),
        )
    else:
        text = getattr(item, "text", None) or getattr(item, "page_content", None)
        if text is None and callable(getattr(item, "get_content", None)):
            text = item.get_content()
        ident = getattr(item, "id", None) or getattr(item, "node_id", None)
        metadata = getattr(item, "metadata", None)
    if not isinstance(text, str):
        raise InvalidInputError(
            f"context {position} has no text: pass a str, a mapping with 'text', or an object "
            f"with .text/.page_content (got {type(item).__name__})"
        )
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidInputError(f"context {position}: metadata must be a mapping")
    ident = check_id(ident, f"context {position}: id")
    return Context(text, ident or stable_id(text, position), dict(metadata or {}))


def to_contexts(items: Iterable[Any] | None) -> list[Context]:
    """Normalise a list of contexts; ``None`` means no contexts.

    A bare ``str``, a mapping (it would be read as its keys) and a set (it has no order) are
    refused with a typed error saying what to pass.
    """
    if items is None:
        return []
    if isinstance(items, (str, bytes)):
        raise InvalidInputError("contexts must be a list of chunks, not a single string: wrap it")
    if isinstance(items, Mapping):
        raise InvalidInputError(
            "contexts must be a list of chunks, not a mapping (its keys would be read as the "
            "chunks): pass a list, e.g. list(d.values()), or a JSON array"
        )
    if isinstance(items, (set, frozenset)):
        raise InvalidInputError("contexts must be a list of chunks, not a set (it has no order)")
    if not isinstance(items, Iterable):
        raise InvalidInputError(f"contexts must be a list of chunks, got {type(items).__name__}")
    return [to_context(item, i) for i, item in enumerate(items)]
