"""Phoenix document annotations: mark each retrieved document necessary / used / unused.

A :class:`PhoenixDocumentAnnotator` is a dispatcher recorder. For every evaluated context whose
retriever span is known (``NecessityResult.metadata["documents"]``, see
:mod:`ene_integrations.otel`) it queues one annotation named ``ene.necessity`` keyed by
(retriever span id, document position), and a background thread sends them in batches through
``arize-phoenix-client`` (``pip install arize-phoenix-client``). Failures are logged and counted,
never raised.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ._attributes import span_id_hex, truncate

logger = logging.getLogger("ene.phoenix")

ANNOTATION_NAME = "ene.necessity"
ENDPOINT_ENV = ("PHOENIX_COLLECTOR_ENDPOINT", "PHOENIX_ENDPOINT", "PHOENIX_BASE_URL")


def phoenix_configured() -> bool:
    """``arize-phoenix-client`` is importable and the environment names a Phoenix endpoint."""
    if not any(os.environ.get(key) for key in ENDPOINT_ENV):
        return False
    try:
        import phoenix.client  # noqa: F401
    except Exception:
        return False
    return True


def document_annotations(
    result: Any,
    *,
    name: str = ANNOTATION_NAME,
    capture_content: bool = False,
    max_value_length: int = 1024,
) -> list[dict[str, Any]]:
    """Phoenix ``SpanDocumentAnnotationData`` for every context of ``result`` with a known
    retriever span: label ``necessary`` (some claim is unsupported without it), ``used`` (in the
    minimal sufficient set only) or ``unused``; score = the normalised necessity score."""
    eng = result.eng
    meta = result.metadata if isinstance(result.metadata, Mapping) else {}
    refs = meta.get("documents")
    if eng is None or not isinstance(refs, Sequence) or isinstance(refs, str):
        return []
    out: list[dict[str, Any]] = []
    for ctx, ref in zip(eng.contexts, refs, strict=False):
        found = document_ref(ref)
        if found is None:
            continue
        span_id, position = found
        if ctx.necessary_for:
            label = "necessary"
            claims = ", ".join(_claim(eng, k, capture_content) for k in ctx.necessary_for)
            they = "they are" if len(ctx.necessary_for) > 1 else "it is"
            why = f"Needed by {claims}: without this document {they} unsupported."
        elif ctx.used:
            label = "used"
            why = "In the minimal sufficient set; no claim depends on it alone."
        else:
            label = "unused"
            why = "Not needed: removing it leaves every claim's support unchanged."
        out.append(
            {
                "name": name,
                "annotator_kind": "CODE",
                "span_id": span_id,
                "document_position": position,
                "result": {
                    "label": label,
                    "score": round(float(ctx.necessity_score), 6),
                    "explanation": truncate(why, max_value_length),
                },
                "metadata": {
                    "request_id": str(result.request_id),
                    "context_id": ctx.id,
                    "claims": list(ctx.necessary_for),
                },
            }
        )
    return out


def document_ref(ref: Any) -> tuple[str, int] | None:
    """``(retriever span id as 16 hex digits, document position)`` from a ``documents`` entry.

    Accepts ``{"span_id": int | hex, "position": int}`` or an OTel ``SpanContext`` under
    ``"span_context"`` / ``"retriever_trace"`` with ``"retriever_position"`` (else
    ``"position"``), the position of the document in that retriever span's output.
    """
    if not isinstance(ref, Mapping):
        return None
    span_id = span_id_hex(ref.get("span_id"))
    if span_id is None:
        ctx = ref.get("span_context") or ref.get("retriever_trace")
        if ctx is not None and getattr(ctx, "is_valid", False):
            span_id = span_id_hex(ctx.span_id)
    position = ref.get("retriever_position")
    if position is None:
        position = ref.get("position")
    if span_id is None or isinstance(position, bool) or not isinstance(position, int):
        return None
    return (span_id, position) if position >= 0 else None


def _claim(eng: Any, index: int, capture_content: bool) -> str:
    """A claim as people count them: from 1 (``metadata["claims"]`` keeps the ENG's indices)."""
    if not capture_content:
        return f"claim {index + 1}"
    return f'claim {index + 1} ("{truncate(eng.claims[index].text, 80)}")'


class PhoenixDocumentAnnotator:
    """Recorder sending ``ene.necessity`` document annotations to Phoenix in batches.

    Annotations queue in memory (at most ``max_queue``; the oldest are dropped and counted) and
    a daemon thread sends up to ``batch_size`` at a time, once a batch is full or its oldest
    annotation has waited ``flush_interval_s``.
    Before each batch it flushes the global SDK tracer provider (``flush_spans_first``) so that
    the retriever spans reach Phoenix before the annotations that refer to them. Pending
    annotations are flushed at interpreter exit (at most ``exit_timeout_s``).
    """

    _shared: ClassVar[PhoenixDocumentAnnotator | None] = None
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        client: Any = None,
        *,
        base_url: str | None = None,
        name: str = ANNOTATION_NAME,
        capture_content: bool = False,
        max_value_length: int = 1024,
        batch_size: int = 100,
        flush_interval_s: float = 1.0,
        max_queue: int = 10_000,
        flush_spans_first: bool = True,
        exit_timeout_s: float = 5.0,
    ) -> None:
        self._client = client
        self.base_url = base_url
        self.name = name
        self.capture_content = capture_content
        self.max_value_length = max_value_length
        self.batch_size = max(int(batch_size), 1)
        self.flush_interval_s = flush_interval_s
        self.flush_spans_first = flush_spans_first
        self.exit_timeout_s = exit_timeout_s
        self._queue: deque[dict[str, Any]] = deque()
        self._max_queue = max(int(max_queue), 1)
        self._cond = threading.Condition()
        self._in_flight = 0
        self._flushing = 0
        self._since = time.monotonic()  # when the oldest waiting annotation was queued
        self._thread: threading.Thread | None = None
        self._closed = False
        self._exit_hook = False
        self._stats = {"queued": 0, "sent": 0, "failed": 0, "dropped": 0, "batches": 0}
        self._logged: set[str] = set()

    @classmethod
    def shared(cls) -> PhoenixDocumentAnnotator:
        """One process-wide annotator, configured from the environment (default recorders)."""
        with cls._shared_lock:
            if cls._shared is None or cls._shared._closed:
                cls._shared = cls()
            return cls._shared

    @classmethod
    def flush_shared(cls, timeout: float | None = 10.0) -> bool:
        """Flush the process-wide annotator if one was created; ``True`` when nothing is left."""
        shared = cls._shared
        return True if shared is None else shared.flush(timeout)

    @property
    def stats(self) -> dict[str, int]:
        """Annotations queued, sent, failed (send errors) and dropped (queue full), and batches."""
        with self._cond:
            return dict(self._stats)

    def __call__(self, result: Any) -> None:
        """Queue the annotations for ``result``; never raises."""
        try:
            batch = document_annotations(
                result,
                name=self.name,
                capture_content=self.capture_content,
                max_value_length=self.max_value_length,
            )
            if not batch or self._closed:
                return
            with self._cond:
                if not self._queue:
                    self._since = time.monotonic()
                for item in batch:
                    if len(self._queue) >= self._max_queue:
                        self._queue.popleft()
                        self._stats["dropped"] += 1
                    self._queue.append(item)
                self._stats["queued"] += len(batch)
                self._start()
                self._cond.notify_all()
        except Exception as exc:
            self._log_once(exc, "could not queue Phoenix document annotations")

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Send everything queued now; ``True`` when the queue drained within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._flushing += 1
            try:
                self._cond.notify_all()
                while self._queue or self._in_flight:
                    if self._thread is None or not self._thread.is_alive():
                        return False
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(0.1 if left is None else min(left, 0.1))
                return True
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = 10.0) -> None:
        """Flush, then stop the sending thread."""
        self.flush(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- the sending thread ----------------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._loop, name="ene-phoenix-annotations", daemon=True
            )
            self._thread.start()
            if not self._exit_hook:
                self._exit_hook = True
                atexit.register(self.close, self.exit_timeout_s)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._due():
                    if self._closed and not self._queue:
                        return
                    wait = self.flush_interval_s
                    if self._queue:
                        wait = max(self._since + self.flush_interval_s - time.monotonic(), 0.0)
                    self._cond.wait(wait)
                n = min(self.batch_size, len(self._queue))
                batch = [self._queue.popleft() for _ in range(n)]
                self._since = time.monotonic()  # what is left waits its turn again
                self._in_flight = n
            try:
                self._send(batch)
                ok, failed = n, 0
            except Exception as exc:
                ok, failed = 0, n
                self._log_once(exc, f"could not send {n} Phoenix document annotations")
            with self._cond:
                self._in_flight = 0
                self._stats["sent"] += ok
                self._stats["failed"] += failed
                self._stats["batches"] += 1
                self._cond.notify_all()

    def _due(self) -> bool:
        """A batch goes when full, when flushing or closing, or ``flush_interval_s`` after the
        oldest waiting annotation was queued (which gives the backend time to ingest the
        retriever spans that the annotations refer to)."""
        if not self._queue:
            return False
        if len(self._queue) >= self.batch_size or self._flushing or self._closed:
            return True
        return time.monotonic() - self._since >= self.flush_interval_s

    def _send(self, batch: list[dict[str, Any]]) -> None:
        if self.flush_spans_first:
            _flush_global_spans()
        if self._client is None:
            from phoenix.client import Client

            self._client = Client(base_url=self.base_url) if self.base_url else Client()
        self._client.spans.log_document_annotations(document_annotations=batch, sync=False)

    def _log_once(self, exc: BaseException, what: str) -> None:
        kind = type(exc).__name__
        if kind not in self._logged:
            self._logged.add(kind)
            logger.warning("ENE: %s: %s: %s", what, kind, exc)


def _flush_global_spans(timeout_ms: int = 5000) -> None:
    try:
        from opentelemetry import trace

        flush = getattr(trace.get_tracer_provider(), "force_flush", None)
        if flush is not None:
            flush(timeout_ms)
    except Exception:
        logger.debug("ENE: flushing spans before annotations failed", exc_info=True)
