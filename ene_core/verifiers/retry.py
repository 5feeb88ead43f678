"""Retries of HTTP calls: the jittered exponential backoff that the LLM judge and
:class:`~ene_core.service.remote.RemoteEngine` share."""

from __future__ import annotations

import random
import time

__all__ = ["pause", "retry_after"]


def pause(
    attempt: int, base_s: float, deadline: float | None = None, *, at_least: float = 0.0
) -> None:
    """Sleep before retry ``attempt + 1``: ``base_s * 2**attempt``, jittered to 50-100 %, at
    least ``at_least`` (a server's ``Retry-After``), never past ``deadline`` (monotonic)."""
    wait = max(base_s * 2**attempt * random.uniform(0.5, 1.0), at_least)
    if deadline is not None:
        wait = min(wait, deadline - time.monotonic())
    if wait > 0:
        time.sleep(wait)


def retry_after(value: str | None, cap_s: float) -> float:
    """A ``Retry-After`` header in seconds (0 when absent or a date), at most ``cap_s``."""
    try:
        seconds = float(value) if value else 0.0
    except ValueError:
        return 0.0
    return min(max(seconds, 0.0), cap_s) if seconds == seconds else 0.0
