"""Chunk text: strings, ``{"text"}`` dicts, LangChain Documents and LlamaIndex nodes.

A tiny local helper so that :mod:`ene_core.filtering` imports nothing from the engine's modules
(they are being moved); it reads the same shapes ``NecessityEngine.evaluate`` accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def chunk_text(chunk: Any) -> str:
    """The text of one chunk.

    Accepts a string, a mapping with ``text`` or ``page_content``, a LangChain ``Document``
    (``page_content``), a LlamaIndex ``NodeWithScore`` (its ``node``) or node (``get_content()``
    or ``text``). Raises ``TypeError`` for anything else.
    """
    if isinstance(chunk, str):
        return chunk
    if isinstance(chunk, Mapping):
        for key in ("text", "page_content", "content"):
            value = chunk.get(key)
            if isinstance(value, str):
                return value
        raise TypeError("a chunk mapping needs a 'text' string")
    node = getattr(chunk, "node", None)
    if node is not None and not isinstance(node, str):
        return chunk_text(node)
    page_content = getattr(chunk, "page_content", None)
    if isinstance(page_content, str):
        return page_content
    get_content = getattr(chunk, "get_content", None)
    if callable(get_content):
        value = get_content()
        if isinstance(value, str):
            return value
    text = getattr(chunk, "text", None)
    if isinstance(text, str):
        return text
    raise TypeError(f"cannot read the text of a {type(chunk).__name__} chunk")
