"""A guard over a streamed answer: :class:`ClaimGuard` yields the model's tokens unchanged and,
for each contradicted or unsupported claim, lets the app annotate it, replace the rest of the
answer, or stop the stream.

The verdicts come from a claim stream the guard feeds itself (``wrap(tokens, stream=
engine.stream(contexts, question))``) or from a framework handler, by passing
``guard.on_claim`` as the handler's ``on_claim`` (it is called while the model's tokens flow,
before each token reaches the app). The guard acts between tokens, as soon as it has a verdict:

* ``annotate(text)``: ``text`` goes out before the next token (the flagged sentence ended just
  before it), the stream goes on;
* ``replace(text)``: ``text`` goes out instead of the rest, and the model's stream is closed;
* ``stop()``: nothing more goes out, and the model's stream is closed;
* ``None``: nothing happens.

Closing the model's stream early is what a consumer that stops reading does: the handlers record
the request as incomplete (:class:`~ene_core.errors.IncompleteRequestError`).
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..engine.streaming import ClaimStream, StreamedClaim

logger = logging.getLogger("ene")

FLAGGED = ("contradicted", "unsupported")


@dataclass(frozen=True)
class Action:
    """What the guard does about one flagged claim (see the module docstring)."""

    kind: Literal["annotate", "replace", "stop"]
    text: str = ""


def annotate(text: str) -> Action:
    """Send ``text`` before the next token and go on."""
    return Action("annotate", text)


def replace(text: str) -> Action:
    """Send ``text`` instead of the rest of the answer, and close the model's stream."""
    return Action("replace", text)


def stop() -> Action:
    """Send nothing more, and close the model's stream."""
    return Action("stop")


Policy = Callable[[StreamedClaim], "Action | None"]


def _text_of(item: Any) -> str:
    """The text of a streamed item: a string, a message chunk's ``content``, a ``delta``."""
    if isinstance(item, str):
        return item
    if isinstance(item, tuple) and item:  # LangGraph stream_mode="messages": (chunk, metadata)
        return _text_of(item[0])
    for name in ("content", "delta", "text"):
        value = getattr(item, name, None)
        if isinstance(value, str):
            return value
    return ""


class ClaimGuard:
    """Wraps one streamed answer (see the module docstring).

    ``policy(claim)`` is asked once per contradicted or unsupported claim. ``request_id``:
    take only that request's verdicts from :meth:`on_claim` (a handler serves every request).
    ``as_item`` turns the guard's own text into an item of the stream (default: the text).
    ``acted`` lists ``(claim, action)`` for every action taken.
    """

    def __init__(
        self,
        policy: Policy,
        *,
        request_id: str | None = None,
        as_item: Callable[[str], Any] = lambda text: text,
    ) -> None:
        self.policy = policy
        self.request_id = request_id
        self.as_item = as_item
        self.acted: list[tuple[StreamedClaim, Action]] = []
        self._inbox: deque[StreamedClaim] = deque()
        self._lock = threading.Lock()
        self._done = False

    def on_claim(self, request_id: str, claim: StreamedClaim) -> None:
        """A verdict from a handler (its ``on_claim``); thread-safe, never raises."""
        if self.request_id is None or str(request_id) == self.request_id:
            with self._lock:
                self._inbox.append(claim)

    def wrap(
        self,
        tokens: Iterable[Any],
        *,
        stream: ClaimStream | None = None,
        finish: Callable[[], Any] | None = None,
    ) -> Iterator[Any]:
        """Yield ``tokens`` unchanged, acting on flagged claims between them. With ``stream``
        the guard feeds it each token's text and closes it at the end (its last verdicts count
        too); ``finish()`` runs once the tokens are exhausted, e.g. ``lambda:
        handler.result(run_id, timeout=30)`` so the ENG's last verdicts reach the guard."""
        source = iter(tokens)
        try:
            for item in source:
                if stream is not None:
                    self._take(stream.feed(_text_of(item)))
                out, over = self._act()
                yield from out
                if over:
                    return
                yield item
            if stream is not None:
                stream.close()
                self._take(stream.take())
            if finish is not None:
                _quietly(finish)
            out, _ = self._act()
            yield from out
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()
            if stream is not None and not stream.closed:
                stream.discard()

    async def awrap(
        self,
        tokens: AsyncIterable[Any],
        *,
        stream: ClaimStream | None = None,
        finish: Callable[[], Any] | None = None,
    ) -> AsyncIterator[Any]:
        """:meth:`wrap` for async token streams; ``finish`` may be a coroutine function."""
        source = tokens.__aiter__()
        try:
            async for item in source:
                if stream is not None:
                    self._take(await stream.afeed(_text_of(item)))
                out, over = self._act()
                for extra in out:
                    yield extra
                if over:
                    return
                yield item
            if stream is not None:
                await stream.aclose()
                self._take(stream.take())
            if finish is not None:
                waited = _quietly(finish)
                if inspect.isawaitable(waited):
                    try:
                        await waited
                    except Exception:
                        logger.exception("ENE guard: finish() failed (ignored)")
            out, _ = self._act()
            for extra in out:
                yield extra
        finally:
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()
            if stream is not None and not stream.closed:
                stream.discard()

    def _take(self, claims: list[StreamedClaim]) -> None:
        with self._lock:
            self._inbox.extend(claims)

    def _act(self) -> tuple[list[Any], bool]:
        """The items to send now, and whether the answer ends here."""
        with self._lock:
            claims, self._inbox = list(self._inbox), deque()
        out: list[Any] = []
        for claim in claims:
            if self._done or claim.status not in FLAGGED:
                continue
            try:
                action = self.policy(claim)
            except Exception:
                logger.exception("ENE guard: the policy failed on claim %d (ignored)", claim.index)
                continue
            if action is None:
                continue
            self.acted.append((claim, action))
            if action.text:
                out.append(self.as_item(action.text))
            if action.kind in ("replace", "stop"):
                self._done = True
        return out, self._done


def _quietly(func: Callable[[], Any]) -> Any:
    try:
        return func()
    except Exception:
        logger.exception("ENE guard: finish() failed (ignored)")
        return None
