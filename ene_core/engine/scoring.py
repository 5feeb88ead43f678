"""The driver: many requests' plans run in lock-step, and every check of every plan goes
through the oracle in one batch per step, after de-duplication and the score cache.

A plan (:mod:`ene_core.engine.rounds`) is a generator that yields the (premise, claim) checks it
needs next and receives their scores; its request's :class:`_Tally` keeps the counters and the
clock.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import OracleError
from ..graph import EvidenceNecessityGraph
from ..verifiers.protocol import Scores, SupportOracle
from ..verifiers.verdict import blend
from .premise import Premise
from .request import Request

Check = tuple[Premise, str]
Plan = Generator[list[Check], list[Scores], Any]  # an ENG (a ClaimsRequest: its claims)


class Checks(list[Check]):
    """A round's checks, with what each run of them is for: ``sections``, ``(purpose, count)``
    in order. The driver reads it as a plain list; ``benchmarks/row_cost.py`` charges each
    model row to its purpose."""

    sections: tuple[tuple[str, int], ...] = ()


def tagged(*sections: tuple[str, Sequence[Check]]) -> Checks:
    """The checks of ``sections`` (``(purpose, checks)``) as one round, in order."""
    out = Checks(c for _, checks in sections for c in checks)
    out.sections = tuple((purpose, len(checks)) for purpose, checks in sections)
    return out


@dataclass
class _Tally:
    """One request's counters and clocks while its plan runs.

    ``compute`` is the request's own share of the work, in seconds: the time its plan steps
    ran, plus its share of every batched scoring round (see ``NecessityEngine._score_round``);
    ``step_started`` is when its current plan step began.
    """

    checks: int = 0
    forward: int = 0
    focus: int = 0  # of those, premises also read as their focus
    hits: int = 0
    empty: int = 0
    truncated: int = 0
    tokens: int = 0  # what an API verifier spent on the pairs this request sent
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
    :class:`~ene_core.engine.necessity.NecessityEngine`."""

    oracle: SupportOracle
    cache: ScoreCache
    threshold: float

    if TYPE_CHECKING:  # one request's plan: ene_core.engine.rounds.PlanRounds

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
            next_asks: dict[int, list[Check]] = {}
            try:
                # Each plan takes its next step as soon as its own scores are in, while the
                # model scores the rest of the round (see ``_score_round``).
                for i, scores in self._score_round(asks, tallies):
                    try:
                        next_asks[i] = tallies[i].step(plans[i], scores)
                    except StopIteration as done:
                        outcomes[i] = done.value
                    except Exception as exc:
                        outcomes[i] = exc
            except Exception as exc:
                error = (
                    exc if isinstance(exc, OracleError) else OracleError(f"oracle failed: {exc!r}")
                )
                for i in asks:
                    outcomes[i] = error
                break
            asks = dict(sorted(next_asks.items()))  # request order, as the plans started
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
    ) -> Iterator[tuple[int, list[Scores]]]:
        """Score every check of this round: empty premises and cache first, the rest in at most
        two oracle calls; yields each request's scores as soon as they are all in.

        The model reads *readings*: a premise (its text with the claim), and for a premise with
        a focus (:attr:`~ene_core.engine.premise.Premise.focus`) its leading sentences too, the
        two blended (:func:`~ene_core.verifiers.verdict.blend`). The leading sentences are read
        first; the whole premise only where they do not settle the verdict (:meth:`_settles`),
        in a second call. Readings are de-duplicated and cached on their own, so a premise that
        is another's focus, or a focus two premises share (leave-one-out often keeps the leading
        sentence and drops a weak one), is read once.

        With an oracle whose ``overlap`` is on (:class:`~ene_core.verifiers.nli.NLIOracle` on CUDA:
        its ``score_parts`` reports each forward pass through ``on_scored``) and more than one
        request in the round, each call runs on a worker thread and the caller steps the plans
        whose scores are in while the model runs the rest (torch and the tokenizers release the
        GIL). The calls and their scores are the same either way; no plan reads another's scores.

        Each request's ``compute`` gets its share of the round: of the model's time, pass by
        pass, in proportion to the text (premise and claim characters, a proxy for model tokens)
        of its readings in the pass; of the bookkeeping, in proportion to the text it sent to
        the model in the round, or to its checks when no request sent any.
        """
        model = self.oracle.name
        fresh: dict[Reading, Scores] = {}
        first: dict[int, list[tuple[Reading, tuple[str, ...], int]]] = {}
        for i, checks in asks.items():
            tallies[i].checks += len(checks)
            tallies[i].empty += sum(not premise.text for premise, _ in checks)
            first[i] = [(*_readings(model, p, c)[-1], 0) for p, c in checks if p.text]
        later: dict[int, list[tuple[Reading, tuple[str, ...], int]]] = {}
        for ready in self._read(first, tallies, fresh):
            for i in ready:
                later[i] = [
                    (*_readings(model, p, c)[0], 1)
                    for p, c in asks[i]
                    if p.focus
                    and not self._settles(
                        self._fetch(_readings(model, p, c)[1], 0, tallies[i], fresh)
                    )
                ]
                if not later[i]:
                    del later[i]
                    yield i, self._timed_row(asks[i], tallies[i], fresh)
        for ready in self._read(dict(sorted(later.items())), tallies, fresh):
            for i in ready:
                yield i, self._timed_row(asks[i], tallies[i], fresh)

    def _settles(self, focus: Scores) -> bool:
        """Whether a premise's leading sentences settle its verdict alone: they entail the claim
        with at least twice τ and more than twice what they contradict it, so the blend is
        supported whatever the whole premise reads (its p_entail, the mean, is at least τ;
        its p_contra, the smaller, under it). Reading the whole premise then changes no
        verdict, and it is not read; the check's scores are the leading sentences'."""
        return focus.entail >= 2 * self.threshold and focus.entail > 2 * focus.contra

    def _read(
        self,
        wanted: Mapping[int, list[tuple[Reading, tuple[str, ...], int]]],
        tallies: list[_Tally],
        fresh: dict[Reading, Scores],
    ) -> Iterator[list[int]]:
        """Score the readings each request wants that are neither cached nor in ``fresh`` (each
        ``(reading, its premise pieces, 1 for a check's second reading)``), in one oracle
        call; yields the requests that have them all, as they do."""
        if not wanted:
            return
        started = time.perf_counter()
        todo: dict[Reading, tuple[tuple[str, ...], int]] = {}  # fresh reading -> parts, sender
        place: dict[Reading, int] = {}  # a fresh reading's index in ``todo``
        needs: dict[int, set[int]] = {i: set() for i in wanted}  # the fresh readings each awaits
        weights = dict.fromkeys(wanted, 0)
        for i, readings in wanted.items():
            tally = tallies[i]
            for key, parts, second in readings:
                if key in todo:
                    needs[i].add(place[key])
                elif key not in fresh and self.cache.get(key) is None:
                    needs[i].add(place.setdefault(key, len(todo)))
                    todo[key] = (parts, i)
                    tally.forward += 1  # every row the model reads
                    tally.focus += second  # of those, a premise's second reading
                    weights[i] += len(key[1]) + len(key[2])
                    continue
                tally.hits += not second  # its first reading was read before
        if not any(weights.values()):
            weights = {i: len(readings) for i, readings in wanted.items()}
        pending = list(todo.items())

        def store(done: Sequence[int], scores: Sequence[Scores], seconds: float) -> list[int]:
            """Keep a forward pass's scores, charge its time to the requests that sent its
            readings; the requests that now have all their scores."""
            senders: dict[int, int] = {}
            ready = []
            for n, computed in zip(done, scores, strict=True):
                _validate(computed)
                key, (_, sender) = pending[n]
                fresh[key] = computed
                tallies[sender].tokens += computed.tokens
                senders[sender] = senders.get(sender, 0) + len(key[1]) + len(key[2])
                for i in waiting.pop(n, ()):
                    needs[i].discard(n)
                    if not needs[i]:
                        ready.append(i)
            _share([tallies[j] for j in senders], seconds, [*senders.values()])
            return sorted(ready)

        waiting: dict[int, list[int]] = {}
        for i in wanted:
            for n in needs[i]:
                waiting.setdefault(n, []).append(i)
        first = [i for i in wanted if not needs[i]]
        _share([tallies[i] for i in weights], time.perf_counter() - started, [*weights.values()])
        try:
            if len(first) == len(wanted):
                yield first
            elif len(wanted) > 1 and getattr(self.oracle, "overlap", False):
                yield from self._streamed(pending, store, first)
            else:
                call = time.perf_counter()
                scores = self._call(pending)
                yield first
                yield store(range(len(pending)), scores, _since(call))
        finally:
            for key, _ in pending:  # in the order sent, whatever order the passes came in
                if key in fresh:
                    self.cache.put(key, fresh[key])

    def _timed_row(
        self, checks: list[Check], tally: _Tally, fresh: Mapping[Reading, Scores]
    ) -> list[Scores]:
        row_started = time.perf_counter()
        row = self._row(checks, tally, fresh)
        tally.compute += time.perf_counter() - row_started
        return row

    def _streamed(
        self,
        pending: list[tuple[Reading, tuple[tuple[str, ...], int]]],
        store: Callable[[Sequence[int], Sequence[Scores], float], list[int]],
        first: list[int],
    ) -> Iterator[list[int]]:
        """The oracle call on a worker thread, which stores each forward pass's scores as it
        comes: yields the requests that are ready, as they become so."""
        reports: queue.SimpleQueue[Any] = queue.SimpleQueue()
        clock = [time.perf_counter()]
        reported: set[int] = set()

        def on_scored(done: list[int], scores: list[Scores]) -> None:
            now = time.perf_counter()
            reported.update(done)
            ready = store(done, scores, now - clock[0])
            clock[0] = now
            if ready:  # wake the caller only when a plan can move
                reports.put(ready)

        def call() -> None:
            try:
                scores = self._call(pending, on_scored)
                missing = [n for n in range(len(pending)) if n not in reported]
                reports.put(store(missing, [scores[n] for n in missing], _since(clock[0])))
                reports.put(None)
            except BaseException as exc:
                reports.put(exc)

        worker = threading.Thread(target=call, name="ene-model", daemon=True)
        worker.start()
        try:
            yield first
            while (report := reports.get()) is not None:
                if isinstance(report, BaseException):
                    raise report
                yield report
        finally:
            worker.join()

    def _call(
        self,
        batch: Sequence[tuple[Reading, tuple[tuple[str, ...], int]]],
        on_scored: Callable[[list[int], list[Scores]], None] | None = None,
    ) -> list[Scores]:
        """The oracle's scores of fresh readings; premises as their parts where it takes them."""
        pairs = [(parts, key[2]) for key, (parts, _) in batch]
        score_parts = getattr(self.oracle, "score_parts", None)
        if score_parts is None:
            scores = self.oracle.score([("".join(parts), claim) for parts, claim in pairs])
        elif on_scored is None:
            scores = score_parts(pairs)
        else:
            scores = score_parts(pairs, on_scored)
        if len(scores) != len(pairs):
            raise OracleError(f"oracle returned {len(scores)} scores for {len(pairs)} pairs")
        return list(scores)

    def _row(
        self, checks: list[Check], tally: _Tally, fresh: Mapping[Reading, Scores]
    ) -> list[Scores]:
        """The scores of one request's checks: from this round's readings or the cache (a
        premise with a focus: its leading sentences' where they settle the verdict, else its
        two readings blended), or free for an empty premise."""
        model = self.oracle.name
        empty = Scores(0.0, 0.0)
        row = []
        for premise, claim in checks:
            if not premise.text:
                row.append(empty)
                continue
            readings = _readings(model, premise, claim)
            focus = self._fetch(readings[-1], 0, tally, fresh)  # the first reading
            if len(readings) == 1 or self._settles(focus):
                value = focus
            else:
                value = blend(self._fetch(readings[0], 1, tally, fresh), focus)
            row.append(value)
            tally.truncated += value.truncated
        return row

    def _fetch(
        self,
        reading: tuple[Reading, tuple[str, ...]],
        second: int,
        tally: _Tally,
        fresh: Mapping[Reading, Scores],
    ) -> Scores:
        key, parts = reading
        value = fresh.get(key) or self.cache.get(key)
        if value is None:  # evicted between lookup and use: tiny cache under load
            value = self._call([(key, (parts, 0))])[0]
            _validate(value)
            tally.forward += 1
            tally.focus += second
        return value


#: what the model reads once: (model, premise text, claim)
Reading = tuple[str, str, str]


def _readings(model: str, premise: Premise, claim: str) -> list[tuple[Reading, tuple[str, ...]]]:
    """The readings a check needs, each with the premise pieces the oracle tokenises: the
    premise, and its focus where it has one (read first: :meth:`PlanDriver._score_round`)."""
    whole = ((model, premise.text, claim), premise.parts or (premise.text,))
    if not premise.focus:
        return [whole]
    return [whole, ((model, "".join(premise.focus), claim), premise.focus)]


def _share(tallies: Sequence[_Tally], seconds: float, weights: Sequence[int]) -> None:
    """Charge ``seconds`` of shared work to ``tallies`` in proportion to ``weights``."""
    total = sum(weights)
    for tally, weight in zip(tallies, weights, strict=True):
        tally.compute += seconds * (weight / total if total else 1 / len(tallies))


def _since(start: float) -> float:
    return time.perf_counter() - start


def _text_size(request: Request) -> int:
    return sum(len(c.text) for c in request.contexts)


def _validate(scores: Scores) -> None:
    for value in (scores.entail, scores.contra):
        if not isinstance(value, float) or not 0.0 <= value <= 1.0:
            raise OracleError(f"oracle returned a non-probability: {scores!r}")
    if scores.entail + scores.contra > 1.0 + 1e-6:
        raise OracleError(f"entailment + contradiction exceed 1: {scores!r}")
