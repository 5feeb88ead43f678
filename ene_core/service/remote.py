"""``RemoteEngine``: the engine's public surface, answered by an ``ene serve`` service.

Every handler, pruner and ``ene eval --remote URL`` takes it where a :class:`NecessityEngine`
goes, so many app processes share one verifier (and one GPU). It validates requests locally
with the engine's own rules, sends them over one pooled HTTP client (httpx), and returns real
:class:`EvidenceNecessityGraph` objects.

Failure is fast and typed, never a hang: each call has ``timeout`` seconds in all, retries
included. Evaluation has no side effects, so a call is retried (with jittered exponential
backoff) when it failed before an answer came: connection refused or dropped, or the service
said 502/503/504/429; never after a 4xx, a 500 or a timeout. ``submit`` queues at most
``max_queue`` calls (owner: this engine; ``overflow`` says what a full queue does), served by
``max_connections`` worker threads.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..batcher import Overflow
from ..engine import Request
from ..errors import (
    EneError,
    EngineClosedError,
    EngineOverloadedError,
    InvalidInputError,
    LimitExceededError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
    ServiceUnavailableError,
)
from ..graph import EvidenceNecessityGraph
from ..request import build_all, run_built
from ..verifiers.retry import pause

TOKEN_ENV = "ENE_SERVE_TOKEN"
RETRY_STATUS = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class RemoteVerifier:
    """The service's verifier as ``/v1/info`` describes it (``engine.oracle`` of a remote)."""

    name: str
    revision: str | None
    default_threshold: float | None


class RemoteEngine:
    """The necessity engine behind an ``ene serve`` URL.

    >>> engine = RemoteEngine("http://127.0.0.1:8000", timeout=10, token=None)
    >>> eng = engine.evaluate(answer, contexts, question=None)

    ``token`` defaults to ``$ENE_SERVE_TOKEN``. ``batch_size``: requests per call in
    ``evaluate_many``.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        token: str | None = None,
        retries: int = 3,
        backoff_s: float = 0.1,
        max_connections: int = 16,
        max_queue: int = 1024,
        overflow: Overflow = "block",
        batch_size: int = 32,
        transport: Any = None,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise EneError("RemoteEngine needs httpx: pip install 'ene[ray]' or httpx") from None
        if overflow not in ("block", "reject"):
            raise ValueError(f"overflow must be 'block' or 'reject', got {overflow!r}")
        if timeout <= 0:
            raise InvalidInputError(f"timeout must be positive, got {timeout}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.overflow = overflow
        self.batch_size = max(1, batch_size)
        token = token if token is not None else os.environ.get(TOKEN_ENV) or None
        self._httpx = httpx
        self._client = httpx.Client(
            base_url=self.url,
            timeout=self.timeout,
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            headers={"Authorization": f"Bearer {token}"} if token else {},
            transport=transport,
        )
        self._pool = ThreadPoolExecutor(max_connections, thread_name_prefix="ene-remote")
        self._slots = threading.BoundedSemaphore(max_queue)
        self.max_queue = max_queue
        self._lock = threading.Lock()
        self._closed = False
        self._info: dict[str, Any] | None = None
        self._stats = dict.fromkeys(("submitted", "completed", "failed", "rejected"), 0)
        self._pending = 0

    def __repr__(self) -> str:
        return f"RemoteEngine({self.url!r}, timeout={self.timeout})"

    def __enter__(self) -> RemoteEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the service is -----------------------------------------------------------------
    def info(self, *, refresh: bool = False) -> dict[str, Any]:
        """``GET /v1/info`` (kept after the first call unless ``refresh``): model, revision,
        thresholds, schema version, limits, and the answering replica's batch counters."""
        if self._info is None or refresh:
            data = self._call("GET", "/v1/info")
            if not isinstance(data, dict):
                raise ServiceError(f"{self.url}/v1/info did not answer an object")
            self._info = data
        return self._info

    @property
    def oracle(self) -> RemoteVerifier:
        info = self.info()
        return RemoteVerifier(info["model"], info.get("revision"), info.get("threshold"))

    @property
    def threshold(self) -> float:
        return float(self.info()["threshold"])

    @property
    def contradiction_threshold(self) -> float:
        info = self.info()
        tau_c = info.get("contradiction_threshold")
        return float(info["threshold"] if tau_c is None else tau_c)

    def healthy(self) -> bool:
        """Whether ``GET /healthz`` answers now (one try, no retries)."""
        try:
            return self._client.get("/healthz", timeout=min(self.timeout, 5.0)).status_code == 200
        except self._httpx.HTTPError:
            return False

    # -- the engine's surface ----------------------------------------------------------------
    def evaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        filtered: Iterable[Any] | None = None,
    ) -> EvidenceNecessityGraph:
        """Evaluate one answer on the service, in the calling thread."""
        self._check_open()
        return self._evaluate_one(Request.build(answer, contexts, question, id, filtered))

    def evaluate_many(
        self,
        requests: Iterable[Mapping[str, Any] | Request],
        *,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """Evaluate many requests, ``batch_size`` per call, calls in parallel; order is kept.

        With ``return_exceptions=True`` a failed request (or call) yields its exception in
        place of a graph instead of raising.
        """
        self._check_open()
        built = build_all(requests, keep_errors=return_exceptions)
        outcomes = run_built(built, self._evaluate_chunks)
        if not return_exceptions:
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
        return outcomes

    def submit(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        block: bool | None = None,
        filtered: Iterable[Any] | None = None,
    ) -> Future[EvidenceNecessityGraph]:
        """Queue a request for the worker threads; the future fails with a typed error.

        When ``max_queue`` calls are already waiting, ``block=False`` fails the future with
        ``EngineOverloadedError`` at once instead of following ``overflow``.
        """
        future: Future[EvidenceNecessityGraph] = Future()
        try:
            request = Request.build(answer, contexts, question, id, filtered)
        except InvalidInputError as exc:
            future.set_exception(exc)
            return future
        with self._lock:
            if self._closed:
                future.set_exception(EngineClosedError("the remote engine is closed"))
                return future
            self._stats["submitted"] += 1
        wait = self.overflow == "block" if block is None else block
        if not self._slots.acquire(blocking=wait):
            with self._lock:
                self._stats["rejected"] += 1
            future.set_exception(
                EngineOverloadedError(
                    f"{self.max_queue} requests are already waiting for {self.url}: raise "
                    "max_queue, or use overflow='block'"
                )
            )
            return future
        with self._lock:
            self._pending += 1
        try:
            self._pool.submit(self._serve_future, request, future)
        except RuntimeError:  # the pool shut down between the check and here
            self._release()
            future.set_exception(EngineClosedError("the remote engine is closed"))
        return future

    async def aevaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        filtered: Iterable[Any] | None = None,
    ) -> EvidenceNecessityGraph:
        """Like ``evaluate`` without blocking the event loop (goes through the worker threads)."""
        if self.overflow == "block":
            future = await asyncio.to_thread(
                self.submit, answer, contexts, question, id=id, filtered=filtered
            )
        else:
            future = self.submit(answer, contexts, question, id=id, filtered=filtered)
        return await asyncio.wrap_future(future)

    @property
    def worker_stats(self) -> dict[str, int]:
        """Counters of ``submit``: submitted, completed, failed, rejected; and pending."""
        with self._lock:
            return dict(self._stats, pending=self._pending)

    def close(self) -> None:
        """Stop taking requests; queued ones fail with ``EngineClosedError``, calls in flight
        finish (within ``timeout``); then the connections close."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pool.shutdown(wait=True)
        self._client.close()

    # -- the wire ------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise EngineClosedError("the remote engine is closed")

    def _serve_future(self, request: Request, future: Future[EvidenceNecessityGraph]) -> None:
        try:
            if not future.set_running_or_notify_cancel():
                return
            try:
                self._check_open()
                eng = self._evaluate_one(request)
            except BaseException as exc:
                with self._lock:
                    self._stats["failed"] += 1
                future.set_exception(exc)
            else:
                with self._lock:
                    self._stats["completed"] += 1
                future.set_result(eng)
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            self._pending -= 1
        self._slots.release()

    def _evaluate_chunks(self, items: Sequence[Request]) -> list[Any]:
        """``batch_size`` requests per call, calls in parallel; a failed call fails its chunk."""
        chunks = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        try:
            futures = [self._pool.submit(self._evaluate_list, chunk) for chunk in chunks]
        except RuntimeError:  # closed meanwhile
            raise EngineClosedError("the remote engine is closed") from None
        outcomes: list[Any] = []
        for chunk, future in zip(chunks, futures, strict=True):
            try:
                outcomes.extend(future.result())
            except Exception as exc:
                outcomes.extend([exc] * len(chunk))
        return outcomes

    def _evaluate_one(self, request: Request) -> EvidenceNecessityGraph:
        data = self._call("POST", "/v1/evaluate", _payload(request))
        return _with_warnings(EvidenceNecessityGraph.from_dict(data), request)

    def _evaluate_list(self, requests: Sequence[Request]) -> list[Any]:
        self._check_open()
        data = self._call("POST", "/v1/evaluate", [_payload(r) for r in requests])
        if not isinstance(data, list) or len(data) != len(requests):
            raise ServiceError(f"{self.url} answered {len(requests)} requests with no list of them")
        outcomes: list[Any] = []
        for request, item in zip(requests, data, strict=True):
            if isinstance(item, dict) and isinstance(item.get("error"), dict):
                outcomes.append(_error_from(item["error"], 200))
            else:
                try:
                    eng = EvidenceNecessityGraph.from_dict(item)
                except EneError as exc:
                    outcomes.append(exc)
                else:
                    outcomes.append(_with_warnings(eng, request))
        return outcomes

    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        """One call with retries within ``timeout``; the decoded JSON, or a typed error."""
        httpx = self._httpx
        deadline = time.monotonic() + self.timeout
        content = None if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"} if content is not None else {}
        last: EneError = ServiceTimeoutError(f"{self.url}{path}: no answer within {self.timeout}s")
        for attempt in range(self.retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                response = self._client.request(
                    method, path, content=content, headers=headers, timeout=left
                )
            except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                last = ServiceUnavailableError(f"cannot reach the ENE service at {self.url}: {exc}")
            except httpx.TimeoutException:
                raise ServiceTimeoutError(
                    f"{self.url}{path}: no answer within {self.timeout}s"
                ) from None
            except httpx.HTTPError as exc:
                raise ServiceError(f"{self.url}{path}: {type(exc).__name__}: {exc}") from None
            else:
                if response.status_code not in RETRY_STATUS:
                    return _decode(response, self.url + path)
                last = ServiceUnavailableError(
                    f"the ENE service at {self.url} is unavailable (HTTP {response.status_code})"
                )
            if attempt < self.retries:
                pause(attempt, self.backoff_s, deadline)
        raise last


def _payload(request: Request) -> dict[str, Any]:
    """A request as ``ene eval`` line JSON; explicit context ids, so the ENG is the local one."""
    payload = {
        "answer": request.answer,
        "contexts": [
            {"text": c.text, "id": c.id, "metadata": c.metadata} for c in request.contexts
        ],
        "question": request.question,
        "id": request.id,
    }
    if request.filtered:
        payload["filtered"] = [call.as_json() for call in request.filtered]
    return payload


def _with_warnings(eng: EvidenceNecessityGraph, request: Request) -> EvidenceNecessityGraph:
    """The service's ENG with what this side's normalisation changed, as a local one has it."""
    if not request.warnings:
        return eng
    return eng.model_copy(update={"warnings": [*request.warnings, *eng.warnings]})


def _decode(response: Any, where: str) -> Any:
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code == 200 and data is not None:
        return data
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        raise _error_from(data["error"], response.status_code)
    if response.status_code == 404:
        raise ServiceError(f"no ENE service at {where} (HTTP 404): check the URL")
    raise ServiceError(f"{where}: HTTP {response.status_code}: {response.text[:200]}")


def _error_from(error: Mapping[str, Any], status: int) -> EneError:
    """The typed error a service error object names (``ServiceError`` when it names none)."""
    kind, message = str(error.get("type", "")), str(error.get("message", ""))
    if status == 401 or kind == "ServiceAuthError":
        return ServiceAuthError(f"{message}: pass token= (or set {TOKEN_ENV})")
    if error.get("limit") is not None:
        return LimitExceededError(message, str(error["limit"]))
    cls = getattr(errors, kind, None)
    if isinstance(cls, type) and issubclass(cls, EneError) and cls is not LimitExceededError:
        return cls(message)
    return ServiceError(f"{kind or f'HTTP {status}'}: {message}")
