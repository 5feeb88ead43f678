"""Verdicts while the answer streams: :class:`ClaimStream`, opened with ``engine.stream(...)``.

``feed(delta)`` appends text and never waits for the model: each sentence is checked as soon as
it is complete, through the engine's shared worker (so the checks of many streams and requests
are micro-batched together), and ``feed`` returns the claims whose verdicts became known since
the last call, in answer order. ``close()`` returns the ENG of the whole answer, the same as
``engine.evaluate(text, contexts, question)``: the answer-level parts (minimal sufficient set,
unused chunks, citation scores) need the whole answer and are computed there, from the scores the
stream's checks left in the engine's cache.

When is a sentence complete? A prefix of an answer can split differently at its end than the
whole answer (``the U.S. He`` may become ``the U.S. Hebrew ...``; ``(see`` may close a bracket
later), so :class:`SentenceTracker` treats a sentence as complete only when its line has ended,
or when the split of the text so far has a later sentence whose first word is complete and that
does not open with a bracket or quote, and no bracket or straight quote is open on the line.
The final ENG is computed on the whole text in any case; if the splitter still revises an
emitted sentence there, the stream records it in :attr:`ClaimStream.revised` (property-tested:
it does not happen on RAG-like text, whatever the chunking into deltas).

Bounded: the engine keeps at most ``max_streams`` open streams (the least recently fed goes
first) and frees a stream that was not fed for ``stream_ttl_s`` seconds; a freed stream drops
its text, contexts and verdicts, and feeding it raises :class:`StreamClosedError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any

from pydantic import Field

from ..errors import EngineOverloadedError, InvalidInputError, StreamClosedError
from ..graph import Claim, EvidenceNecessityGraph
from ..text.claims import Segment, read_with_question, split_claims
from ..text.normalise import clean_text
from .request import ClaimsRequest, Request

logger = logging.getLogger("ene")

_BREAK = re.compile(r"[\n\r\u2028\u2029]")
# syntok's sentence terminals (and the ellipsis): no sentence ends without one, or a line break
_TERMINAL = re.compile(
    "[.!?;\u2026\u203c\u203d\u2047-\u2049\u3002\ufe52\ufe57\uff01\uff0e\uff1f\uff61]"
)
_OPENERS = "([{\"'\u201c\u2018\u00ab"
# the start of a later sentence that settles the one before it: a complete first word
_SETTLED = re.compile(f"[^\\s{re.escape(_OPENERS)}]\\S*\\s")
_SPACE = re.compile(r"\s*")
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("\u201c", "\u201d"))
_BRACKETS = frozenset("".join(a + b for a, b in _PAIRS) + '"')


def _balanced(text: str, start: int, end: int) -> bool:
    """No bracket (or curly double quote) open or closing nothing, and an even number of
    straight double quotes, in ``text[start:end]``."""
    part = text[start:end]
    if not any(c in _BRACKETS for c in part):
        return True
    if part.count('"') % 2:
        return False
    for opener, closer in _PAIRS:
        depth = 0
        for c in part:
            if c == opener:
                depth += 1
            elif c == closer:
                depth -= 1
                if depth < 0:
                    return False
        if depth:
            return False
    return True


class SentenceTracker:
    """The sentences of a growing answer whose split can no longer change (see the module
    docstring): ``add(delta)`` returns the ones that became complete, as segments of the whole
    answer (same offsets, index ``len(done)`` onwards)."""

    def __init__(self) -> None:
        self.text = ""
        self.done: list[Segment] = []

    def add(self, delta: str) -> list[Segment]:
        """Append ``delta``; the segments it completed, in order."""
        self.text += delta
        cut = self.done[-1].end if self.done else 0
        if not (_BREAK.search(delta) or (_changes(delta) and _TERMINAL.search(self.text, cut))):
            return []  # no new line, or no sentence end in the pending text: nothing can complete
        start = _SPACE.match(self.text, cut).end() if self.done else 0  # type: ignore[union-attr]
        if start >= len(self.text):
            return []
        pending = split_claims(self.text, start=start)
        new: list[Segment] = []
        for k, segment in enumerate(pending):
            if not self._complete(pending, k):
                break
            new.append(segment)
        self.done.extend(new)
        return new

    def rest(self) -> list[Segment]:
        """The segments after ``done`` once the text is complete (the end ends every sentence)."""
        if not self.done:
            return split_claims(self.text)
        start = _SPACE.match(self.text, self.done[-1].end).end()  # type: ignore[union-attr]
        return split_claims(self.text, start=start) if start < len(self.text) else []

    def _complete(self, segments: list[Segment], k: int) -> bool:
        text, segment = self.text, segments[k]
        visible_end = segment.start + len(text[segment.start : segment.end].rstrip())
        if _BREAK.search(text, visible_end):
            return True  # its line has ended: lines are split on their own
        if k + 1 == len(segments) or not _SETTLED.match(text, segments[k + 1].start):
            return False
        line = max(text.rfind(c, 0, segment.start) for c in "\n\r\u2028\u2029") + 1
        return _balanced(text, line, segment.end) and _balanced(text, line, len(text))


def _changes(delta: str) -> bool:
    """Whether ``delta`` can complete a sentence: it ends a word, or closes a bracket or quote."""
    return any(c.isspace() or c in _BRACKETS for c in delta)


def same_verdict(streamed: Claim, final: Claim) -> bool:
    """Whether a streamed verdict is the one the whole answer's ENG has for that claim: the same
    sentence (index, start, text, kind, markers) and verdict (status, class, probabilities, the
    contexts it needs and that contradict it, the leave-one-out row). The span end may differ
    by trailing whitespace that arrived later; a claim without markers gets its citation fields
    from the whole answer (whether any claim has markers)."""
    fields: tuple[str, ...] = (
        "index",
        "text",
        "kind",
        "cited",
        "status",
        "classification",
        "p_entail",
        "p_contra",
        "necessary",
        "contradicted_by",
        "p_entail_without",
        "support_row",
        "premise_truncated",
        "hypothesis",
        "premise_contexts",
        "p_entail_alone",
        "unstated_amounts",
        "computed_amounts",
        "arithmetic",
        "other_holder",
        "other_value",
        "supported_alone_by",
    )
    if streamed.cited:
        fields += ("citation_supported", "citations_unneeded", "citations_missing")
    return streamed.span[0] == final.span[0] and all(
        getattr(streamed, f) == getattr(final, f) for f in fields
    )


class StreamedClaim(Claim):
    """A verdict from a claim stream: the claim as the whole answer's ENG shows it (see
    :func:`same_verdict`), plus the ids of the contexts it needs and of those that contradict
    it (``necessary`` and ``contradicted_by`` index the stream's contexts)."""

    necessary_ids: list[str] = Field(default_factory=list)
    contradicted_by_ids: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, claim: Claim, ids: Sequence[str]) -> StreamedClaim:
        return cls(
            **dict(claim),
            necessary_ids=[ids[i] for i in claim.necessary],
            contradicted_by_ids=[ids[i] for i in claim.contradicted_by],
        )


Check = Callable[..., "Future[Any]"]


class ClaimStream:
    """One answer being streamed: feed it text, get verdicts, close it for the ENG.

    Thread-safe. Open it with ``engine.stream(contexts, question=None, id=None)``.
    ``feed`` / ``afeed`` never wait for the model and return the verdicts that became known
    since the last ``feed`` / ``take``; ``close`` / ``aclose`` wait for the ENG; each
    ``async for claim in stream`` yields every verdict (from the first) as it becomes known,
    in answer order, until the stream is closed, discarded or freed. Verdicts are
    :class:`StreamedClaim` objects: claims as the ENG of the whole answer will show them (see
    :func:`same_verdict` for the two fields that may still change), with their chunks' ids.
    """

    def __init__(
        self,
        check: Check,
        evaluate: Check,
        contexts: Iterable[Any] | None,
        question: str | None,
        id: str | None,
        registry: StreamRegistry,
    ) -> None:
        request = Request.build("", contexts, question, id)  # typed errors for bad contexts now
        self.id = request.id
        self.question = question
        self._request = request
        self._check = check
        self._evaluate = evaluate
        self._registry = registry
        self._lock = threading.RLock()  # futures may call back at once, on this thread
        self._tracker = SentenceTracker()
        self._raw: list[str] = []  # the text as fed (the tracker's is normalised)
        self._shared: dict[str, Any] = {}  # the worker's premise index of these contexts
        self._order: list[int] = []  # checkable segment indices sent for checking, in order
        self._known: dict[int, StreamedClaim] = {}
        self._ids = [c.id for c in request.contexts]
        self._unsent: dict[int, Segment] = {}  # complete, not yet accepted by the worker
        self._ready = 0  # _order[:_ready] are known
        self._pulled = 0  # _order[:_pulled] were returned by feed / take
        self._shown = 0  # _order[:_shown] went to somebody (feed, take or an iterator)
        self._finishing: Future[EvidenceNecessityGraph] | None = None
        self._final: EvidenceNecessityGraph | None = None
        self._ended: str | None = None  # why no more verdicts come (discarded, freed, failed)
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self.revised: list[tuple[StreamedClaim, Claim | None]] = []
        """Emitted verdicts the whole answer's ENG does not confirm: (streamed, final or None)."""
        self.errors: list[BaseException] = []
        """Failed sentence checks (their verdicts then come from the ENG at close)."""

    # -- the app's side --------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The text fed so far, as the engine reads it (:mod:`ene_core.text.normalise`)."""
        return self._tracker.text

    @property
    def complete(self) -> int:
        """How many sentences (segments, from the first) are complete so far: checked or being
        checked; the rest are complete only at the end."""
        return len(self._tracker.done)

    @property
    def closed(self) -> bool:
        """No more text is taken: closing, closed, discarded or freed."""
        return self._finishing is not None or self._ended is not None

    def feed(self, delta: str) -> list[StreamedClaim]:
        """Append ``delta``; the verdicts that became known since the last ``feed`` / ``take``,
        in answer order. Never waits for the model."""
        if not isinstance(delta, str):
            raise InvalidInputError(
                f"feed() takes the next piece of the answer's text, got {type(delta).__name__}"
            )
        with self._lock:
            if self.closed:
                raise StreamClosedError(f"stream {self.id!r} takes no more text: {self._why()}")
            self._raw.append(delta)
            first = len(self._tracker.done)
            # the engine reads the answer normalised (Request.build); the normalisation is
            # character by character, so normalising each delta gives the same text
            done = self._tracker.add(clean_text(delta)[0])
            for k, segment in enumerate(read_with_question(done, self._request.question), first):
                if segment.checkable:  # a short answer too, read as the answer to the question
                    self._unsent[k] = segment
            self._send()
            verdicts = self._pull()
        self._registry.touch(self)
        return verdicts

    async def afeed(self, delta: str) -> list[StreamedClaim]:
        """:meth:`feed` for asyncio code (it never blocks the loop either)."""
        return self.feed(delta)

    def take(self) -> list[StreamedClaim]:
        """The verdicts that became known since the last ``feed`` / ``take``, without new text."""
        with self._lock:
            self._send()
            return self._pull()

    def finish(self) -> Future[EvidenceNecessityGraph]:
        """End the text and evaluate the whole answer: the future of its ENG (idempotent). The
        last sentences' verdicts come from that ENG (``take()``, the async iterator). Waits
        for room in the engine's queue when it is full, whatever its overflow policy."""
        with self._lock:
            if self._finishing is not None:
                return self._finishing
            if self._ended is not None:
                raise StreamClosedError(f"stream {self.id!r} cannot be closed: {self._why()}")
            finishing: Future[EvidenceNecessityGraph] = Future()
            self._finishing = finishing
            text, request = "".join(self._raw), self._request
        self._registry.forget(self)
        try:  # outside the lock: this may wait for room in the queue
            inner = self._evaluate(text, request.contexts, request.question, id=self.id, block=True)
        except BaseException as exc:
            inner = Future()
            inner.set_exception(exc)
        inner.add_done_callback(self._settle)
        return finishing

    def close(self, timeout: float | None = None) -> EvidenceNecessityGraph:
        """The ENG of the whole answer, equal to ``engine.evaluate(text, contexts, question)``
        (run statistics aside)."""
        return self.finish().result(timeout)

    async def aclose(self) -> EvidenceNecessityGraph:
        """:meth:`close` without blocking the event loop."""
        future = await asyncio.to_thread(self.finish)  # the engine's queue may be full
        return await asyncio.wrap_future(future)

    def discard(self) -> None:
        """Stop without an ENG (e.g. the model call turned out not to be the answer) and free
        the stream's state; checks already sent finish in the worker and are dropped."""
        self._end("it was discarded")

    def __aiter__(self) -> AsyncIterator[StreamedClaim]:
        return self._verdicts()

    async def _verdicts(self) -> AsyncIterator[StreamedClaim]:
        loop = asyncio.get_running_loop()
        cursor = 0
        while True:
            event = asyncio.Event()
            with self._lock:
                self._waiters.append((loop, event))
                self._send()
                batch = [self._known[k] for k in self._order[cursor : self._ready]]
                cursor += len(batch)
                self._shown = max(self._shown, cursor)
                over = self._drained(cursor)
            for claim in batch:
                yield claim
            if over:
                return
            if not batch:
                await event.wait()

    # -- the worker's side -----------------------------------------------------------------------
    def _send(self) -> None:
        """Hand the complete sentences not sent yet to the worker, never waiting (lock held)."""
        if not self._unsent or self.closed:
            return
        segments = dict(self._unsent)
        base = self._request  # contexts and question normalised as the ENG's will be
        request = ClaimsRequest(
            "", base.contexts, base.question, self.id, segments=segments, shared=self._shared
        )
        future = self._check(request, block=False)
        if future.done() and isinstance(future.exception(), EngineOverloadedError):
            return  # the engine's queue is full: sent again with the next feed, or left to close
        self._order.extend(segments)
        self._unsent.clear()
        future.add_done_callback(lambda done: self._checked(done))

    def _checked(self, future: Future[Any]) -> None:
        error = future.exception()
        with self._lock:
            if error is not None:
                self.errors.append(error)
                if len(self.errors) == 1:
                    logger.warning("ENE stream %s: a sentence check failed: %r", self.id, error)
            elif self._final is None and self._ended is None:
                found = future.result()
                self._known.update({k: StreamedClaim.of(c, self._ids) for k, c in found.items()})
                self._advance()
            self._wake()

    def _settle(self, future: Future[EvidenceNecessityGraph]) -> None:
        """The whole answer's ENG is in: it confirms the verdicts already shown (or records the
        revision) and gives the ones not shown yet."""
        assert self._finishing is not None
        error = future.exception()
        with self._lock:
            if error is None:
                eng = self._final = future.result()
                final = {c.index: c for c in eng.claims if c.checkable}
                shown = self._order[: self._shown]
                for k in shown:
                    if k not in final or not same_verdict(self._known[k], final[k]):
                        self.revised.append((self._known[k], final.get(k)))
                if self.revised:
                    logger.warning(
                        "ENE stream %s: %d streamed verdicts differ from the ENG of the whole "
                        "answer (stream.revised)",
                        self.id,
                        len(self.revised),
                    )
                last = max(shown, default=-1)
                self._order = shown + [k for k in sorted(final) if k > last]
                rest = self._order[len(shown) :]
                self._known.update({k: StreamedClaim.of(final[k], self._ids) for k in rest})
                self._advance()
            else:
                self._ended = f"the evaluation of the whole answer failed: {error!r}"
            self._free()
            self._wake()
        if error is None:
            self._finishing.set_result(future.result())
        else:
            self._finishing.set_exception(error)

    # -- state (lock held) ------------------------------------------------------------------------
    def _advance(self) -> None:
        while self._ready < len(self._order) and self._order[self._ready] in self._known:
            self._ready += 1

    def _pull(self) -> list[StreamedClaim]:
        out = [self._known[k] for k in self._order[self._pulled : self._ready]]
        self._pulled = self._ready
        self._shown = max(self._shown, self._pulled)
        return out

    def _drained(self, cursor: int) -> bool:
        """Nothing is left to come after ``cursor``."""
        if self._ended is not None:
            return True
        return self._final is not None and cursor >= len(self._order)

    def _end(self, why: str) -> None:
        with self._lock:
            if self._ended is not None or self._final is not None:
                return
            self._ended = why
            self._free()
            self._wake()
        self._registry.forget(self)

    def _free(self) -> None:
        """Drop what only checking needed; all of it when the stream ended without an ENG."""
        self._shared.clear()
        self._unsent.clear()
        if self._ended is not None:
            self._tracker = SentenceTracker()
            self._raw.clear()
            self._known.clear()
            self._order.clear()
            self._ready = self._pulled = self._shown = 0

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits there now
                loop.call_soon_threadsafe(event.set)

    def _why(self) -> str:
        return self._ended or "it was closed"


class StreamRegistry:
    """The engine's open claim streams: at most ``max_open`` (the least recently fed is freed
    first), each freed when not fed for ``ttl_s`` seconds (checked whenever a stream is opened
    or fed); a stream the app dropped without closing is freed the same way. ``clock`` is for
    tests."""

    def __init__(
        self,
        check: Check,
        evaluate: Check,
        *,
        max_open: int,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_open < 1 or ttl_s <= 0:
            raise InvalidInputError(
                f"max_streams must be >= 1 and stream_ttl_s > 0, got {max_open} and {ttl_s}"
            )
        self._check = check
        self._evaluate = evaluate
        self.max_open = max_open
        self.ttl_s = ttl_s
        self.clock = clock
        self.freed = 0
        self._open: OrderedDict[ClaimStream, float] = OrderedDict()
        self._lock = threading.Lock()

    def open(
        self, contexts: Iterable[Any] | None, question: str | None, request_id: str | None
    ) -> ClaimStream:
        stream = ClaimStream(self._check, self._evaluate, contexts, question, request_id, self)
        with self._lock:
            self._open[stream] = self.clock()
        self._sweep()
        return stream

    def touch(self, stream: ClaimStream) -> None:
        with self._lock:
            if stream in self._open:
                self._open[stream] = self.clock()
                self._open.move_to_end(stream)
        self._sweep()

    def forget(self, stream: ClaimStream) -> None:
        with self._lock:
            self._open.pop(stream, None)

    def __len__(self) -> int:
        """Streams open (fed, not closed, not freed)."""
        with self._lock:
            return len(self._open)

    def _sweep(self) -> None:
        """Free the streams idle longer than ``ttl_s`` and the oldest beyond ``max_open``."""
        cutoff = self.clock() - self.ttl_s
        doomed: list[tuple[ClaimStream, str]] = []
        with self._lock:
            while self._open:
                stream, seen = next(iter(self._open.items()))
                if seen >= cutoff and len(self._open) <= self.max_open:
                    break
                del self._open[stream]
                why = (
                    f"it was not fed for {self.ttl_s:g} s (stream_ttl_s)"
                    if seen < cutoff
                    else f"more than {self.max_open} streams were open (max_streams)"
                )
                doomed.append((stream, why))
        for stream, why in doomed:
            self.freed += 1
            logger.info("ENE stream %s freed: %s", stream.id, why)
            stream._end(f"it was freed: {why}")
