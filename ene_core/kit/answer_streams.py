"""Verdicts while an app's model streams, for the framework adapters: :class:`AnswerStreams`.

An adapter hands it each text token of each model call (``token``), says which calls cannot be
the answer (``exclude``), and when the request ends what the run model decided (``decided``);
it is also a dispatcher recorder (``settle``), called with the request's result.

**Which model call's tokens are the answer.** Every model call that streams text is a
candidate from its first text token, with its own claim stream (``engine.stream``) on the
contexts and question the run model would evaluate its answer on
(:meth:`~ene_core.kit.runs.RunRecorder.candidate`). A call stops being one when the adapter sees
that it cannot write the answer: it streams a tool call, or it is a structured-output call (a
grader, a router). When the request ends, the candidate whose text is the answer the run model
chose (the latest one, after normalising case, punctuation and whitespace) stays; every other
candidate is dropped.

**Emitted, then confirmed or retracted.** Verdicts go to ``on_claim(request_id, claim)`` as
soon as they are known, before anyone knows which call is the answer. Those of a dropped
candidate are retracted: ``on_retract(request_id, claims)``, once per candidate. When the
request's ENG arrives, a kept verdict it does not confirm (:func:`~ene_core.engine.streaming.
same_verdict`) is retracted too, and the ENG's verdicts not emitted yet (the last sentences)
are emitted. So the verdicts emitted and not retracted are exactly the checkable claims of
the request's ENG, in answer order. The ENG itself is the dispatcher's, the same as without
streaming; the streams' checks only fill the engine's score cache earlier.

When each confirmed verdict was emitted goes into the result's metadata (``"claim_times_ns"``:
claim index -> ns since the epoch) for the span recorder; the others were known with the ENG.

Never raises into the host; state is bounded (``ttl_s``, ``max_requests``; the engine bounds
its streams too). ``on_claim`` runs on the thread that delivers the token (the ENG's last
verdicts: the engine's worker thread).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.streaming import ClaimStream, StreamedClaim, same_verdict
from ..graph import EvidenceNecessityGraph
from .results import ExpiringDict, NecessityResult
from .runs import normalise

logger = logging.getLogger("ene")

OnClaim = Callable[[str, StreamedClaim], Any]
OnRetract = Callable[[str, list[StreamedClaim]], Any]


@dataclass
class _Candidate:
    """One model call's claim stream and what it emitted (claim index -> (claim, time))."""

    stream: ClaimStream | None
    emitted: dict[int, tuple[StreamedClaim, int]] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)  # only when there is no stream
    excluded: bool = False

    def answer_text(self) -> str:
        return self.stream.text if self.stream is not None else "".join(self.text)


class AnswerStreams:
    """Claim streams of the model calls that may write each request's answer (see the module
    docstring). ``engine`` returns the engine to stream with (an engine without ``stream``,
    e.g. a ``RemoteEngine``, gets no early verdicts: the ENG's come when it arrives)."""

    def __init__(
        self,
        engine: Callable[[], Any],
        on_claim: OnClaim,
        on_retract: OnRetract | None = None,
        *,
        ttl_s: float = 600.0,
        max_requests: int = 10_000,
    ) -> None:
        self._engine = engine
        self.on_claim = on_claim
        self.on_retract = on_retract
        self._requests: ExpiringDict[str, dict[Hashable, _Candidate]] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_requests
        )
        self._answers: ExpiringDict[str, _Candidate] = ExpiringDict(
            ttl_s=ttl_s, max_size=max_requests
        )
        self._lock = threading.Lock()
        self._logged: set[str] = set()

    # -- events from the adapter -------------------------------------------------------------------
    def token(
        self,
        request_id: str,
        call_id: Hashable,
        delta: str,
        candidate: Callable[[], tuple[Sequence[Any], str | None]],
    ) -> None:
        """A text token of model call ``call_id``; ``candidate()`` gives the contexts and the
        question its answer would be evaluated on (asked once, at its first token)."""
        if not delta:
            return
        try:
            with self._lock:
                calls = self._requests.setdefault(request_id, dict)
                found = calls.get(call_id)
                if found is None:
                    found = calls[call_id] = _Candidate(self._open(request_id, candidate))
            if found.excluded:
                return
            if found.stream is None:
                found.text.append(delta)
            elif not found.stream.closed:  # freed by the engine's bounds: nothing more to say
                self._emit(request_id, found, found.stream.feed(delta))
        except Exception as exc:
            self._failed("token", exc)

    def exclude(self, request_id: str, call_id: Hashable) -> None:
        """Model call ``call_id`` cannot write the answer (a tool call, structured output)."""
        try:
            with self._lock:
                calls = self._requests.setdefault(request_id, dict)
                found = calls.setdefault(call_id, _Candidate(None, excluded=True))
            if not found.excluded:
                found.excluded = True
                self._drop(request_id, found)
        except Exception as exc:
            self._failed("exclude", exc)

    def decided(self, request_id: str, answer: str | None) -> None:
        """The request ended with ``answer`` (``None``: nothing to evaluate): keep the
        candidate that wrote it for :meth:`settle`, drop the others."""
        try:
            calls = self._requests.pop(request_id) or {}
            target = normalise(answer) if answer else None
            keep = None
            for found in calls.values():
                if target and not found.excluded and normalise(found.answer_text()) == target:
                    keep = found  # the latest such call
            for found in calls.values():
                if found is not keep:
                    self._drop(request_id, found)
            if keep is not None:
                self._answers.put(request_id, keep)
        except Exception as exc:
            self._failed("decided", exc)

    def settle(self, result: NecessityResult) -> None:
        """Dispatcher recorder: confirm the kept verdicts against the request's ENG, retract
        the others, emit the rest, and note when each verdict was known."""
        try:
            found = self._answers.pop(result.request_id)
            if found is None:
                return
            eng = result.eng
            if eng is None:  # the evaluation failed: what was emitted stands as it was
                self._close(found)
                return
            self._confirm(result, found, eng)
        except Exception as exc:
            self._failed("settle", exc)

    # -- internals -------------------------------------------------------------------------------
    def _open(
        self, request_id: str, candidate: Callable[[], tuple[Sequence[Any], str | None]]
    ) -> ClaimStream | None:
        try:
            engine = self._engine()
            if not hasattr(engine, "stream"):
                return None
            contexts, question = candidate()
            if not contexts:
                return None  # nothing to check it against: the ENG (if any) says so at the end
            stream: ClaimStream = engine.stream(list(contexts), question, request_id)
        except Exception as exc:  # e.g. contexts the engine cannot read: the ENG will say
            self._failed("open", exc)
            return None
        return stream

    def _emit(self, request_id: str, found: _Candidate, claims: list[StreamedClaim]) -> None:
        now = time.time_ns()
        for claim in claims:
            found.emitted[claim.index] = (claim, now)
            self._call(self.on_claim, request_id, claim)

    def _drop(self, request_id: str, found: _Candidate) -> None:
        self._close(found)
        if found.emitted and self.on_retract is not None:
            self._call(self.on_retract, request_id, [c for c, _ in found.emitted.values()])

    def _confirm(
        self, result: NecessityResult, found: _Candidate, eng: EvidenceNecessityGraph
    ) -> None:
        request_id = result.request_id
        final = {c.index: c for c in eng.claims if c.checkable}
        ids = [c.id for c in eng.contexts]
        wrong = [
            claim
            for k, (claim, _) in found.emitted.items()
            if k not in final or not same_verdict(claim, final[k])
        ]
        if wrong and self.on_retract is not None:
            self._call(self.on_retract, request_id, wrong)
        retracted = {c.index for c in wrong}
        times = {k: t for k, (_, t) in found.emitted.items() if k not in retracted}
        self._close(found)
        for k, claim in sorted(final.items()):
            if k not in times:  # known with the ENG (the last sentences)
                self._call(self.on_claim, request_id, StreamedClaim.of(claim, ids))
        if isinstance(result.metadata, dict):
            result.metadata["claim_times_ns"] = times

    @staticmethod
    def _close(found: _Candidate) -> None:
        if found.stream is not None and not found.stream.closed:
            found.stream.discard()

    def _call(self, sink: Callable[..., Any], *args: Any) -> None:
        try:
            sink(*args)
        except Exception:
            logger.exception("ENE claim callback %r failed", sink)

    def _failed(self, where: str, exc: Exception) -> None:
        if where not in self._logged:  # log each kind of failure once
            self._logged.add(where)
            logger.warning("ENE answer streams: %s failed (ignored): %r", where, exc)
