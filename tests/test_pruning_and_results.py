from __future__ import annotations

import threading
import time

import pytest

from ene_core import (
    ExpiringDict,
    InvalidInputError,
    NecessityDispatcher,
    NecessityEngine,
    prune,
)
from ene_core.verifiers.keyword import KeywordOracle

CONTEXTS = [
    "Paris is the capital of France.",
    "The tower is 330 metres tall.",
    "Bananas are yellow.",
]
ANSWER = "Paris is the capital of France. The tower is 330 metres tall."


def test_prune_keeps_necessary_and_drops_unused(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate(ANSWER, CONTEXTS)
    result = prune(CONTEXTS, eng, keep="minimal")
    assert result.kept == CONTEXTS[:2] and result.dropped == [CONTEXTS[2]]
    assert result.tokens_saved == eng.contexts[2].tokens == 3
    necessary = {i for c in eng.claims for i in c.necessary}
    assert necessary <= set(result.kept_indices)


def test_prune_is_fail_safe(keyword_engine: NecessityEngine) -> None:
    assert prune(CONTEXTS, None).kept == CONTEXTS
    unsupported = keyword_engine.evaluate("Dogs can fly.", CONTEXTS)
    assert prune(CONTEXTS, unsupported).kept == CONTEXTS
    with pytest.raises(InvalidInputError, match="same list"):
        prune(CONTEXTS[:1], keyword_engine.evaluate(ANSWER, CONTEXTS))


def test_dispatcher_background_and_callbacks(keyword_engine: NecessityEngine) -> None:
    seen: list[str] = []
    recorded = []
    dispatcher = NecessityDispatcher(
        keyword_engine, on_result=lambda rid, eng: seen.append(rid), recorders=[recorded.append]
    )
    assert dispatcher.dispatch("r1", ANSWER, CONTEXTS) is None
    result = dispatcher.result("r1", timeout=10)
    assert result.ok and result.eng.counts.supported == 2
    assert seen == ["r1"] and recorded[0].request_id == "r1"
    assert result.ended_ns >= result.started_ns


def test_dispatcher_records_failures_and_never_raises() -> None:
    class Boom(KeywordOracle):
        def score(self, pairs):  # type: ignore[no-untyped-def]
            raise RuntimeError("model exploded")

    errors: list[tuple[str, str]] = []

    def bad_callback(rid: str, eng: object) -> None:
        raise AssertionError("never called for failures")

    dispatcher = NecessityDispatcher(
        NecessityEngine(Boom()),
        mode="inline",
        on_result=bad_callback,
        on_error=lambda r, e: errors.append((r, e)),
    )
    result = dispatcher.dispatch("r2", ANSWER, CONTEXTS)
    assert result is not None and not result.ok and "model exploded" in result.error
    assert errors == [("r2", result.error)]


def test_inline_timeout_is_recorded_and_late_result_replaces_it() -> None:
    gate = threading.Event()

    class Hang(KeywordOracle):
        def score(self, pairs):  # type: ignore[no-untyped-def]
            gate.wait(10)
            return super().score(pairs)

    dispatcher = NecessityDispatcher(NecessityEngine(Hang()), mode="inline", inline_timeout_s=0.05)
    result = dispatcher.dispatch("r3", ANSWER, CONTEXTS)
    assert result is not None and "TimeoutError" in result.error
    gate.set()
    deadline = time.monotonic() + 10
    while not dispatcher.results.get("r3").ok and time.monotonic() < deadline:
        time.sleep(0.01)
    assert dispatcher.results.get("r3").ok


def test_result_lookup_times_out() -> None:
    dispatcher = NecessityDispatcher(NecessityEngine(KeywordOracle()))
    with pytest.raises(TimeoutError):
        dispatcher.result("never", timeout=0.01)


def test_expiring_dict_bounds() -> None:
    store: ExpiringDict[int, int] = ExpiringDict(ttl_s=0.05, max_size=3)
    for i in range(5):
        store.put(i, i)
    assert len(store) == 3 and 0 not in store and store.evicted == 2
    time.sleep(0.06)
    assert len(store) == 0


def test_background_dispatch_never_waits_on_a_full_queue() -> None:
    gate = threading.Event()

    class Hang(KeywordOracle):
        def score(self, pairs):  # type: ignore[no-untyped-def]
            gate.wait(10)
            return super().score(pairs)

    engine = NecessityEngine(Hang(), max_queue=1, max_batch_requests=1, overflow="block")
    dispatcher = NecessityDispatcher(engine)
    started = time.monotonic()
    for i in range(6):
        dispatcher.dispatch(f"q{i}", ANSWER, CONTEXTS)
    elapsed = time.monotonic() - started
    overloaded = [
        r
        for r in (dispatcher.results.get(f"q{i}") for i in range(6))
        if r and "Overloaded" in r.error
    ]
    gate.set()
    assert overloaded, "a full queue must be recorded, not waited on"
    assert elapsed < 5  # it returned long before the hanging oracle released (10 s)
    engine.close()
