"""Values ENE writes into telemetry: span ids, truncated text, content hashes.

Shared by :mod:`ene_integrations.otel` and :mod:`ene_integrations.phoenix`, so that the
dependency between those two runs one way only: ``otel`` may import ``phoenix``, never the
reverse.
"""

from __future__ import annotations

import hashlib
from typing import Any


def short_hash(text: str) -> str:
    """First 16 hex digits of the SHA-256 of ``text``: identifies content without exporting it."""
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def truncate(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: max(limit - 1, 0)] + "…"


def span_id_hex(value: Any) -> str | None:
    """A span id as 16 lower-case hex digits, from an int or a hex string."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 64:
        return f"{value:016x}"
    if isinstance(value, str) and len(value) == 16:
        try:
            return value.lower() if int(value, 16) else None
        except ValueError:
            return None
    return None
