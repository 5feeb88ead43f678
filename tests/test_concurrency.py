"""The shared engine under concurrent callers: every result equals its sequential result."""

from __future__ import annotations

import asyncio
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from ene_core import EngineClosedError, EngineOverloadedError, NecessityEngine
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores

FACTS = [
    "Paris is the capital of France.",
    "The tower is 330 metres tall.",
    "Bananas are yellow fruit.",
    "Rome has many fountains.",
    "The river floods every spring.",
    "Owls hunt at night.",
]


def request(i: int) -> tuple[str, list[str]]:
    rng = random.Random(i)
    contexts = rng.sample(FACTS, rng.randint(0, 5))
    answer = " ".join(rng.sample(FACTS, rng.randint(1, 3)))
    return answer, contexts


async def test_200_concurrent_aevaluate_match_sequential() -> None:
    shared = NecessityEngine(KeywordOracle(), max_wait_ms=2)
    requests = [request(i) for i in range(200)]
    results = await asyncio.gather(
        *(shared.aevaluate(a, c, id=str(i)) for i, (a, c) in enumerate(requests))
    )
    sequential = NecessityEngine(KeywordOracle())
    for i, ((answer, contexts), eng) in enumerate(zip(requests, results, strict=True)):
        expected = sequential.evaluate(answer, contexts, id=str(i))
        assert eng.verdicts() == expected.verdicts()
    stats = shared.worker_stats
    assert stats["completed"] == 200 and stats["failed"] == 0
    assert stats["batches"] < 200  # callers were micro-batched together
    shared.close()


def test_threads_share_one_engine() -> None:
    shared = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    requests = [request(i) for i in range(100)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda r: shared.submit(*r).result(timeout=30), requests))
    sequential = NecessityEngine(KeywordOracle())
    assert [r.verdicts() for r in results] == [sequential.evaluate(*r).verdicts() for r in requests]
    shared.close()


class SlowOracle(KeywordOracle):
    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def score(self, pairs):  # type: ignore[no-untyped-def]
        self.gate.wait(10)
        return super().score(pairs)


def test_reject_overflow_is_counted() -> None:
    oracle = SlowOracle()
    engine = NecessityEngine(oracle, max_queue=2, max_batch_requests=1, overflow="reject")
    futures = [engine.submit("Paris is the capital of France.", FACTS) for _ in range(10)]
    rejected = [f for f in futures if f.done() and isinstance(f.exception(), EngineOverloadedError)]
    assert rejected, "a full queue must reject"
    oracle.gate.set()
    for f in futures:
        if f not in rejected:
            assert f.result(timeout=30).claims[0].status == "supported"
    assert engine.worker_stats["rejected"] == len(rejected)
    engine.close()


async def test_aevaluate_does_not_block_the_loop() -> None:
    oracle = SlowOracle()
    engine = NecessityEngine(oracle)
    task = asyncio.create_task(engine.aevaluate("Paris is the capital of France.", FACTS))
    ticks = 0
    for _ in range(5):
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks == 5 and not task.done()
    oracle.gate.set()
    assert (await task).claims[0].status == "supported"
    engine.close()


def test_closed_engine_fails_fast() -> None:
    engine = NecessityEngine(KeywordOracle())
    engine.submit("a b.", ["a b."]).result(timeout=10)
    engine.close()
    with pytest.raises(EngineClosedError):
        engine.submit("a b.", ["a b."]).result(timeout=10)


class Exploding(KeywordOracle):
    def score(self, pairs):  # type: ignore[no-untyped-def]
        if any("Bananas" in p for p, _ in pairs):
            raise RuntimeError("boom")
        return [Scores(0.9, 0.0) for _ in pairs]


def test_worker_survives_oracle_failures() -> None:
    engine = NecessityEngine(Exploding(), max_wait_ms=0)
    bad = engine.submit("Bananas are yellow fruit.", FACTS)
    with pytest.raises(Exception, match="boom"):
        bad.result(timeout=10)
    good = engine.submit("Owls hunt at night.", ["Owls hunt at night."])
    assert good.result(timeout=10).claims[0].status == "supported"
    engine.close()


@pytest.mark.determinism
def test_real_oracle_under_64_concurrent_callers(tiny_model_dir: str, device: str) -> None:
    """The real NLIOracle (on ``--device``) gives every caller its sequential ENG, bit for bit."""
    from ene_core import NLIOracle

    oracle = NLIOracle(tiny_model_dir, device=device)
    shared = NecessityEngine(oracle, threshold=0.3, max_wait_ms=20)
    requests = [request(i) for i in range(64)]
    start = threading.Barrier(len(requests))

    def call(r: tuple[str, list[str]]):  # type: ignore[no-untyped-def]
        start.wait(timeout=60)
        return shared.submit(*r).result(timeout=300)

    with ThreadPoolExecutor(len(requests)) as pool:
        results = list(pool.map(call, requests))
    sequential = NecessityEngine(oracle, threshold=0.3)
    assert [r.verdicts() for r in results] == [sequential.evaluate(*r).verdicts() for r in requests]
    assert shared.worker_stats["batches"] < len(requests)  # callers shared forward passes
    assert any(c.necessary for r in results for c in r.claims)  # leave-one-out really ran
    shared.close()


def test_a_lone_request_does_not_wait_out_the_window() -> None:
    # A ten-minute window: the request would time out below if the worker waited for company.
    engine = NecessityEngine(KeywordOracle(), max_wait_ms=600_000)
    eng = engine.submit("Paris is the capital of France.", FACTS).result(timeout=60)
    assert eng.claims[0].status == "supported"
    assert engine.worker_stats["batches"] == 1
    engine.close()


class EnteringOracle(SlowOracle):
    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()

    def score(self, pairs):  # type: ignore[no-untyped-def]
        self.entered.set()
        return super().score(pairs)


def test_requests_queued_behind_a_busy_worker_form_one_batch() -> None:
    oracle = EnteringOracle()
    engine = NecessityEngine(oracle, max_wait_ms=50)
    first = engine.submit("Paris is the capital of France.", FACTS)
    assert oracle.entered.wait(30)  # the worker is busy with the first request alone
    rest = [engine.submit(answer, FACTS) for answer in FACTS]
    oracle.gate.set()
    assert all(f.result(timeout=30).claims for f in [first, *rest])
    assert engine.worker_stats["batches"] == 2  # the lone first, then the six queued together
    engine.close()
