"""The driver: many requests' plans run in lock-step, and every check of every plan goes
through the oracle in one batch per step, after de-duplication and the score cache.

A plan (:mod:`ene_core.rounds`) is a generator that yields the (premise, claim) checks it needs
next and receives their scores; its request's :class:`_Tally` keeps the counters and the clock.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import OracleError
from .graph import EvidenceNecessityGraph
from .oracle import Scores, SupportOracle
from .premise import Premise
from .request import Request

Check = tuple[Premise, str]
Plan = Generator[list[Check], list[Scores], Any]  # an ENG (a ClaimsRequest: its claims)


@dataclass
class _Tally:
    """One request's counters and clocks while its plan runs.

    ``compute`` is the request's own share of the work, in seconds: the time its plan steps
    ran, plus its share of every batched scoring round (see ``NecessityEngine._score_round``);
    ``step_started`` is when its current plan step began.
    """

    checks: int = 0
    forward: int = 0
    hits: int = 0
    empty: int = 0
    truncated: int = 0
    started: float = field(default_factory=time.perf_counter)
    compute: float = 0.0
    step_started: float = 0.0

    def step(self, plan: Plan, scores: list[Scores] | None) -> list[Check]:
        """Run the plan's next step, timing it as this request's own work."""
        self.step_started = time.perf_counter()
        try:
            return next(plan) if scores is None else plan.send(scores)
        finally:
            self.compute += time.perf_counter() - self.step_started


class ScoreCache:
    """LRU of oracle scores keyed by (model, premise, hypothesis). Bounded; oldest evicted first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[tuple[str, str, str], Scores] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str]) -> Scores | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: tuple[str, str, str], value: Scores) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class PlanDriver:
    """Runs the plans of many requests in lock-step and scores their checks in batches: a part of
    :class:`~ene_core.engine.NecessityEngine`."""

    oracle: SupportOracle
    cache: ScoreCache

    if TYPE_CHECKING:  # one request's plan: ene_core.rounds.PlanRounds

        def _plan(self, request: Request, tally: _Tally, tokens: Mapping[str, int]) -> Plan: ...

    def _run(self, requests: Sequence[Request]) -> list[EvidenceNecessityGraph | BaseException]:
        outcomes: list[EvidenceNecessityGraph | BaseException | None] = [None] * len(requests)
        tallies = [_Tally() for _ in requests]
        plans: dict[int, Plan] = {}
        asks: dict[int, list[Check]] = {}
        counting = time.perf_counter()
        # a streamed answer's sentences (ClaimsRequest) need no token counts: they get no ENG
        tokens = self._count_tokens(
            {c.text for r in requests if type(r) is Request for c in r.contexts}
        )
        _share(tallies, time.perf_counter() - counting, [_text_size(r) for r in requests])
        for i, request in enumerate(requests):
            try:
                plans[i] = self._plan(request, tallies[i], tokens)
                asks[i] = tallies[i].step(plans[i], None)
            except StopIteration as done:
                outcomes[i] = done.value
            except Exception as exc:
                outcomes[i] = exc
        while asks:
            try:
                answers = self._score_round(asks, tallies)
            except Exception as exc:
                error = (
                    exc if isinstance(exc, OracleError) else OracleError(f"oracle failed: {exc!r}")
                )
                for i in asks:
                    outcomes[i] = error
                break
            next_asks: dict[int, list[Check]] = {}
            for i, scores in answers.items():
                try:
                    next_asks[i] = tallies[i].step(plans[i], scores)
                except StopIteration as done:
                    outcomes[i] = done.value
                except Exception as exc:
                    outcomes[i] = exc
            asks = next_asks
        return [o if o is not None else OracleError("evaluation did not finish") for o in outcomes]

    def _count_tokens(self, texts: set[str]) -> dict[str, int]:
        """Tokens per context text: one batched call where the oracle offers it."""
        unique = sorted(texts)
        many = getattr(self.oracle, "count_tokens_many", None)
        one = getattr(self.oracle, "count_tokens", None)
        if many is not None:
            counts = list(many(unique))
        elif one is not None:
            counts = [one(t) for t in unique]
        else:
            counts = [len(t.split()) for t in unique]
        return dict(zip(unique, counts, strict=True))

    def _score_round(
        self, asks: Mapping[int, list[Check]], tallies: list[_Tally]
    ) -> dict[int, list[Scores]]:
        """Score every check of this round: empty premises and cache first, the rest batched.

        The round's time is shared among its requests in proportion to the text (premise and
        claim characters, a proxy for model tokens) of the pairs each sent to the model, or to
        their checks when none did: each request's ``compute`` gets its own share.
        """
        started = time.perf_counter()
        model = self.oracle.name
        todo: dict[tuple[str, str, str], None] = {}
        weights = dict.fromkeys(asks, 0)
        for i, checks in asks.items():
            tally = tallies[i]
            tally.checks += len(checks)
            for premise, claim in checks:
                key = (model, premise.text, claim)
                if not premise.text:
                    tally.empty += 1
                elif key in todo or self.cache.get(key) is not None:
                    tally.hits += 1
                else:
                    todo[key] = None
                    tally.forward += 1
                    weights[i] += len(premise.text) + len(claim)
        if not any(weights.values()):
            weights = {i: len(checks) for i, checks in asks.items()}
        try:
            return self._scores(asks, tallies, todo)
        finally:
            elapsed = time.perf_counter() - started
            _share([tallies[i] for i in weights], elapsed, list(weights.values()))

    def _scores(
        self,
        asks: Mapping[int, list[Check]],
        tallies: list[_Tally],
        todo: dict[tuple[str, str, str], None],
    ) -> dict[int, list[Scores]]:
        """The scores of every check: fresh pairs through the oracle in one call, the rest
        from the cache (or free, for an empty premise)."""
        model = self.oracle.name
        pending = list(todo)
        fresh: dict[tuple[str, str, str], Scores] = {}
        if pending:
            scores = self.oracle.score([(p, h) for _, p, h in pending])
            if len(scores) != len(pending):
                raise OracleError(f"oracle returned {len(scores)} scores for {len(pending)} pairs")
            for key, computed in zip(pending, scores, strict=True):
                _validate(computed)
                fresh[key] = computed
                self.cache.put(key, computed)
        empty = Scores(0.0, 0.0)
        results: dict[int, list[Scores]] = {}
        for i, checks in asks.items():
            row = []
            for premise, claim in checks:
                key = (model, premise.text, claim)
                value: Scores | None = (
                    empty if not premise.text else fresh.get(key) or self.cache.get(key)
                )
                if value is None:  # evicted between lookup and use: tiny cache under load
                    value = self.oracle.score([(premise.text, claim)])[0]
                row.append(value)
                tallies[i].truncated += value.truncated
            results[i] = row
        return results


def _share(tallies: Sequence[_Tally], seconds: float, weights: Sequence[int]) -> None:
    """Charge ``seconds`` of shared work to ``tallies`` in proportion to ``weights``."""
    total = sum(weights)
    for tally, weight in zip(tallies, weights, strict=True):
        tally.compute += seconds * (weight / total if total else 1 / len(tallies))


def _text_size(request: Request) -> int:
    return sum(len(c.text) for c in request.contexts)


def _validate(scores: Scores) -> None:
    for value in (scores.entail, scores.contra):
        if not isinstance(value, float) or not 0.0 <= value <= 1.0:
            raise OracleError(f"oracle returned a non-probability: {scores!r}")
    if scores.entail + scores.contra > 1.0 + 1e-6:
        raise OracleError(f"entailment + contradiction exceed 1: {scores!r}")
