"""The handler contract shared by every framework adapter.

A :class:`NecessityDispatcher` takes (request id, answer, contexts) from an adapter and never
raises: in ``"background"`` mode it hands the request to the engine's worker and returns at
once; in ``"inline"`` mode it waits (at most ``inline_timeout_s``) before returning. Either way
the outcome becomes a :class:`NecessityResult` (a graph, or the error that replaced it), stored
in a bounded :class:`ExpiringDict`, looked up with ``result(request_id, timeout=...)``, and passed
to ``on_result(request_id, eng)`` / ``on_error(request_id, error)`` and to any ``recorders``
(e.g. the OpenTelemetry span recorder).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ..engine.necessity import Engine, default_engine
from ..graph import EvidenceNecessityGraph

logger = logging.getLogger("ene")
K = TypeVar("K")
V = TypeVar("V")
Mode = Literal["background", "inline"]


@dataclass(frozen=True)
class NecessityResult:
    """The outcome for one request: ``eng``, or ``error``, or ``skipped`` (exactly one).

    ``skipped`` says why a request that ended had nothing to evaluate (e.g. no retrieval)."""

    request_id: str
    eng: EvidenceNecessityGraph | None
    error: str | None
    started_ns: int
    ended_ns: int
    trace: Any = None  # opaque tracing context captured by the adapter (e.g. an OTel SpanContext)
    metadata: Any = None  # adapter extras (e.g. the retriever span of each context)
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return self.eng is not None


class ExpiringDict(Generic[K, V]):
    """Thread-safe map bounded by ``max_size`` (oldest out) and ``ttl_s`` (expired out)."""

    def __init__(self, *, ttl_s: float, max_size: int) -> None:
        self.ttl_s = ttl_s
        self.max_size = max_size
        self._data: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self.evicted = 0

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data.pop(key, None)
            self._data[key] = (time.monotonic(), value)
            self._evict()

    def get(self, key: K, default: Any = None) -> Any:
        with self._lock:
            self._evict()
            item = self._data.get(key)
            return default if item is None else item[1]

    def pop(self, key: K, default: Any = None) -> Any:
        with self._lock:
            item = self._data.pop(key, None)
            return default if item is None else item[1]

    def setdefault(self, key: K, factory: Callable[[], V]) -> V:
        with self._lock:
            self._evict()
            if key not in self._data:
                self._data[key] = (time.monotonic(), factory())
                self._evict()
            return self._data[key][1]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            self._evict()
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            self._evict()
            return len(self._data)

    def _evict(self) -> None:
        cutoff = time.monotonic() - self.ttl_s
        while self._data:
            key, (born, _) = next(iter(self._data.items()))
            if born >= cutoff and len(self._data) <= self.max_size:
                break
            del self._data[key]
            self.evicted += 1


class NecessityDispatcher:
    """Evaluate requests for an adapter without ever failing or slowing the host by default."""

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        mode: Mode = "background",
        on_result: Callable[[str, EvidenceNecessityGraph], Any] | None = None,
        on_error: Callable[[str, str], Any] | None = None,
        recorders: Iterable[Callable[[NecessityResult], Any]] = (),
        inline_timeout_s: float = 30.0,
        ttl_s: float = 600.0,
        max_results: int = 10_000,
    ) -> None:
        if mode not in ("background", "inline"):
            raise ValueError(f"mode must be 'background' or 'inline', got {mode!r}")
        self._engine = engine
        self.mode = mode
        self.on_result = on_result
        self.on_error = on_error
        self.recorders = list(recorders)
        self.inline_timeout_s = inline_timeout_s
        self.results: ExpiringDict[str, NecessityResult] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        self._waiters: ExpiringDict[str, threading.Event] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_results
        )
        self._logged: set[str] = set()

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = default_engine()
        return self._engine

    def dispatch(
        self,
        request_id: str,
        answer: str,
        contexts: list[Any],
        question: str | None = None,
        *,
        trace: Any = None,
        metadata: Any = None,
        filtered: list[Any] | None = None,
    ) -> NecessityResult | None:
        """Evaluate one request. Returns the result in inline mode, ``None`` in background mode.

        ``filtered``: the chunk filter calls before generation (the ENG lists their dropped
        chunks); passed to the engine only when there are some."""
        started = time.time_ns()
        self._waiters.setdefault(request_id, threading.Event)
        try:
            # Background mode must never wait on a full queue: the caller may be an event loop.
            block = None if self.mode == "inline" else False
            extra = {"filtered": filtered} if filtered else {}
            future = self.engine.submit(
                answer, contexts, question, id=request_id, block=block, **extra
            )
        except Exception as exc:
            return self._finish(request_id, None, exc, started, trace, metadata)
        if self.mode == "background":
            future.add_done_callback(
                lambda f: self._from_future(request_id, f, started, trace, metadata)
            )
            return None
        # wait() rather than result(): an evaluation that failed with a TimeoutError (e.g. a
        # RemoteEngine's ServiceTimeoutError) is that failure, not this wait running out
        if not wait([future], timeout=self.inline_timeout_s).done:
            future.add_done_callback(
                lambda f: self._from_future(request_id, f, started, trace, metadata)
            )
            timeout = TimeoutError(f"evaluation took longer than {self.inline_timeout_s}s")
            return self._finish(request_id, None, timeout, started, trace, metadata)
        return self._from_future(request_id, future, started, trace, metadata)

    def record_error(
        self, request_id: str, error: BaseException, *, trace: Any = None, metadata: Any = None
    ) -> NecessityResult:
        """Record a failure that happened in the adapter itself (e.g. no answer was seen)."""
        self._waiters.setdefault(request_id, threading.Event)
        return self._finish(request_id, None, error, time.time_ns(), trace, metadata)

    def record_skipped(
        self, request_id: str, reason: str, *, trace: Any = None, metadata: Any = None
    ) -> NecessityResult:
        """Record that a finished request had nothing to evaluate, so waiters return at once.

        Recorders and ``on_result``/``on_error`` are not called: there is no outcome to report.
        """
        now = time.time_ns()
        result = NecessityResult(request_id, None, None, now, now, trace, metadata, reason)
        self.results.put(request_id, result)
        event = self._waiters.pop(request_id)
        if event is not None:
            event.set()
        return result

    def result(self, request_id: str, timeout: float | None = None) -> NecessityResult:
        """Block until the request's result exists; ``TimeoutError`` if it does not in time."""
        done = self.results.get(request_id)
        if done is not None:
            return done
        event = self._waiters.setdefault(request_id, threading.Event)
        if self.results.get(request_id) is None and not event.wait(timeout):
            raise TimeoutError(f"no ENE result for {request_id!r} within {timeout}s")
        done = self.results.get(request_id)
        if done is None:
            raise KeyError(f"the result for {request_id!r} expired (ttl {self.results.ttl_s}s)")
        return done

    async def aresult(self, request_id: str, timeout: float | None = None) -> NecessityResult:
        return await asyncio.to_thread(self.result, request_id, timeout)

    def _from_future(
        self,
        request_id: str,
        future: Future[EvidenceNecessityGraph],
        started: int,
        trace: Any,
        metadata: Any,
    ) -> NecessityResult:
        error = future.exception()
        eng = None if error is not None else future.result()
        return self._finish(request_id, eng, error, started, trace, metadata)

    def _finish(
        self,
        request_id: str,
        eng: EvidenceNecessityGraph | None,
        error: BaseException | None,
        started: int,
        trace: Any,
        metadata: Any,
    ) -> NecessityResult:
        message = None if error is None else f"{type(error).__name__}: {error}"
        result = NecessityResult(request_id, eng, message, started, time.time_ns(), trace, metadata)
        self.results.put(request_id, result)
        if error is not None and type(error).__name__ not in self._logged:
            self._logged.add(type(error).__name__)  # log each kind of failure once
            logger.warning("ENE evaluation failed for %s: %s", request_id, message)
        sinks: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
            (r, (result,)) for r in self.recorders
        ]
        if eng is not None and self.on_result is not None:
            sinks.append((self.on_result, (request_id, eng)))
        if message is not None and self.on_error is not None:
            sinks.append((self.on_error, (request_id, message)))
        for sink, args in sinks:
            try:
                sink(*args)
            except Exception:
                logger.exception("ENE result callback %r failed", sink)
        event = self._waiters.pop(request_id)
        if event is not None:
            event.set()
        return result
