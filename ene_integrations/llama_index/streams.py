"""Stream taps: a streamed answer passes through unchanged and is evaluated once the stream
is exhausted (or recorded as incomplete when it is not)."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any

logger = logging.getLogger("ene.llama_index")


def _tap(
    tokens: Iterator[str],
    done: Callable[[str], Any],
    failed: Callable[[BaseException], Any],
    each: Callable[[str], Any] | None = None,
) -> Generator[str, None, None]:
    """Yield ``tokens`` unchanged; ``each(token)`` first (never raises: it must not either),
    then ``done(text)`` once exhausted, ``failed`` otherwise."""
    parts: list[str] = []
    try:
        for token in tokens:
            parts.append(token)
            if each is not None:
                each(token)
            yield token
    except BaseException as exc:
        _quietly(failed, exc)
        raise
    _quietly(done, "".join(parts))


async def _atap(
    tokens: AsyncIterator[str],
    done: Callable[[str], Awaitable[Any]],
    failed: Callable[[BaseException], Any],
    each: Callable[[str], Any] | None = None,
) -> AsyncGenerator[str, None]:
    parts: list[str] = []
    try:
        async for token in tokens:
            parts.append(token)
            if each is not None:
                each(token)
            yield token
    except BaseException as exc:
        _quietly(failed, exc)
        raise
    try:
        await done("".join(parts))
    except Exception:
        logger.exception("ENE failed after the stream ended")


def _as_async(run: Callable[[str], Any]) -> Callable[[str], Awaitable[None]]:
    async def call(answer: str) -> None:
        run(answer)

    return call


def _quietly(func: Callable[..., Any], *args: Any) -> None:
    try:
        func(*args)
    except Exception:
        logger.exception("ENE stream hook %r failed", func)
