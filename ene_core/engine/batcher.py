"""One worker thread that micro-batches requests from concurrent callers.

Owner: a :class:`~ene_core.engine.necessity.NecessityEngine`. Bound: ``max_queue`` pending requests.
Overflow: ``"block"`` waits for room (callers on an event loop wait in a worker thread),
``"reject"`` fails the future at once with :class:`EngineOverloadedError`; both are counted.
A lone request (nothing else queued) runs at once; when others are queued with it, the worker
waits at most ``max_wait_s`` after the first to gather up to ``max_batch``.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Literal

from ..errors import EngineClosedError, EngineOverloadedError

Overflow = Literal["block", "reject"]
logger = logging.getLogger("ene")

_STOP = object()
_live: weakref.WeakSet[MicroBatcher] = weakref.WeakSet()


class MicroBatcher:
    def __init__(
        self,
        run: Callable[[Sequence[Any]], list[Any]],
        *,
        max_wait_s: float,
        max_queue: int,
        max_batch: int,
        overflow: Overflow,
    ) -> None:
        if overflow not in ("block", "reject"):
            raise ValueError(f"overflow must be 'block' or 'reject', got {overflow!r}")
        self._run = run
        self.max_wait_s = max_wait_s
        self.max_batch = max_batch
        self.overflow = overflow
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_queue)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._stats = dict.fromkeys(("submitted", "completed", "failed", "rejected", "batches"), 0)

    def submit(self, item: Any, *, block: bool | None = None) -> Future[Any]:
        """Queue ``item``; ``block`` overrides the overflow policy for this call."""
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                future.set_exception(EngineClosedError("the engine is closed"))
                return future
            self._start()
            self._stats["submitted"] += 1
        try:
            self._queue.put(
                (item, future), block=self.overflow == "block" if block is None else block
            )
        except queue.Full:
            with self._lock:
                self._stats["rejected"] += 1
            future.set_exception(
                EngineOverloadedError(
                    f"{self._queue.maxsize} requests are already waiting: raise max_queue, "
                    "or use overflow='block'"
                )
            )
        return future

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self._stats, pending=self._queue.qsize())

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put((_STOP, None))
            thread.join(timeout=30)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="ene-engine", daemon=True)
            self._thread.start()
            _live.add(self)

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            deadline = time.monotonic() + self.max_wait_s
            while len(batch) < self.max_batch:  # what is queued already
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            # A lone request goes at once; a burst waits up to max_wait_s for more of it.
            while 1 < len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            live = [(item, fut) for item, fut in batch if item is not _STOP]
            stopping = len(live) < len(batch)
            if stopping:  # drain: nothing submitted before close() is left hanging
                while True:
                    try:
                        live.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                live = [(item, fut) for item, fut in live if item is not _STOP]
            live = [(item, fut) for item, fut in live if fut.set_running_or_notify_cancel()]
            if live:
                self._process(live)

    def _process(self, batch: list[tuple[Any, Future[Any]]]) -> None:
        try:
            outcomes = self._run([item for item, _ in batch])
        except BaseException as exc:
            logger.exception("ene engine worker failed on a batch of %d", len(batch))
            outcomes = [exc] * len(batch)
        failed = 0
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
                failed += 1
            else:
                future.set_result(outcome)
        with self._lock:
            self._stats["batches"] += 1
            self._stats["completed"] += len(batch) - failed
            self._stats["failed"] += failed


@atexit.register
def _close_all() -> None:
    for batcher in list(_live):
        batcher.close()
