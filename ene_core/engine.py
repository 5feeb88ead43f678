"""The necessity engine: claims -> baseline support -> leave-one-out -> ENG.

Each request is evaluated by a *plan*: a generator that yields the (premise, claim) checks it
needs next and receives their scores. A driver runs many plans in lock-step and sends every
check of every plan through the oracle in one batch per step, after de-duplication and the
score cache. ``evaluate`` drives one plan, ``evaluate_many`` many, and the shared worker
(``submit`` / ``aevaluate``) whatever concurrent callers handed it within a few milliseconds.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .batcher import MicroBatcher, Overflow
from .citations import Citations, answer_scores, check_base, out_of_range, resolve
from .claims import Segment, split_claims
from .contexts import Context, canonical_order, to_contexts
from .errors import InvalidInputError, OracleError
from .graph import (
    Claim,
    ContextNode,
    Counts,
    EvidenceNecessityGraph,
    RunStats,
    Verifier,
)
from .oracle import Scores, SupportOracle, Verdict, decide
from .premise import EvidenceIndex, Premise, PremisePacker

Check = tuple[Premise, str]
Plan = Generator[list[Check], list[Scores], EvidenceNecessityGraph]


@dataclass(frozen=True)
class Request:
    """One evaluation: an answer, its contexts and (optionally) the question."""

    answer: str
    contexts: tuple[Context, ...]
    question: str | None = None
    id: str | None = None

    @classmethod
    def build(
        cls, answer: Any, contexts: Iterable[Any] | None, question: Any = None, id: Any = None
    ) -> Request:
        if not isinstance(answer, str):
            raise InvalidInputError(f"answer must be a str, got {type(answer).__name__}")
        if question is not None and not isinstance(question, str):
            raise InvalidInputError(
                f"question must be a str or None, got {type(question).__name__}"
            )
        return cls(answer, tuple(to_contexts(contexts)), question, None if id is None else str(id))

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any] | Request) -> Request:
        if isinstance(item, Request):
            return item
        if not isinstance(item, Mapping) or "answer" not in item:
            raise InvalidInputError("each request needs an 'answer' (and usually 'contexts')")
        return cls.build(item["answer"], item.get("contexts"), item.get("question"), item.get("id"))


@runtime_checkable
class Engine(Protocol):
    """What handlers, pruners and ``ene eval`` need of an engine: :class:`NecessityEngine`
    (in this process) and :class:`~ene_core.service.remote.RemoteEngine` (``ene serve``) are
    both one.

    ``oracle.name`` says which verifier it runs (pruning compares it with an ENG's);
    ``threshold`` its entailment threshold (``ene eval --resume`` refuses to mix verifiers).
    """

    @property
    def oracle(self) -> Any: ...

    @property
    def threshold(self) -> float: ...

    def evaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
    ) -> EvidenceNecessityGraph: ...

    def evaluate_many(
        self, requests: Iterable[Mapping[str, Any] | Request], *, return_exceptions: bool = False
    ) -> list[Any]: ...

    def submit(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        block: bool | None = None,
    ) -> Future[EvidenceNecessityGraph]: ...

    async def aevaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
    ) -> EvidenceNecessityGraph: ...

    def close(self) -> None: ...


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


class NecessityEngine:
    """Counterfactual necessity of every context for every claim of an answer.

    >>> engine = NecessityEngine(oracle=NLIOracle("path/or/id"), threshold=0.5)
    >>> eng = engine.evaluate(answer, contexts, question=None)

    Answers with ``[n]`` markers also get their citations checked (``check_citations``);
    ``[n]`` names ``contexts[n - 1]``, or ``contexts[n]`` with ``citation_base=0``.
    """

    def __init__(
        self,
        oracle: SupportOracle | None = None,
        threshold: float | None = None,
        *,
        contradiction_threshold: float | None = None,
        packer: PremisePacker | None = None,
        support_matrix: bool = False,
        check_citations: bool = True,
        citation_base: int = 1,
        cache_size: int = 65_536,
        max_wait_ms: float = 5.0,
        max_queue: int = 1024,
        max_batch_requests: int = 64,
        overflow: Overflow = "block",
    ) -> None:
        if oracle is None:
            from .oracle import NLIOracle

            oracle = NLIOracle()
        self.oracle = oracle
        resolved = threshold if threshold is not None else oracle.default_threshold
        self.threshold = 0.5 if resolved is None else float(resolved)
        if not 0.0 < self.threshold <= 1.0:
            raise InvalidInputError(f"threshold must be in (0, 1], got {self.threshold}")
        # the model's calibrated value applies only with the model's own τ
        contra = contradiction_threshold
        if contra is None and threshold is None:
            contra = getattr(oracle, "default_contradiction_threshold", None)
        self.contradiction_threshold = self.threshold if contra is None else float(contra)
        if not 0.0 < self.contradiction_threshold <= 1.0:
            raise InvalidInputError(
                f"contradiction_threshold must be in (0, 1], got {self.contradiction_threshold}"
            )
        self.packer = packer or PremisePacker()
        self.support_matrix = support_matrix
        self.check_citations = check_citations
        self.citation_base = check_base(citation_base)
        self.cache = ScoreCache(cache_size)
        self._batcher = MicroBatcher(
            self._run,
            max_wait_s=max_wait_ms / 1000,
            max_queue=max_queue,
            max_batch=max_batch_requests,
            overflow=overflow,
        )

    def _decide(self, scores: Scores) -> Verdict:
        return decide(scores, self.threshold, self.contradiction_threshold)

    # -- public API ------------------------------------------------------------------------
    def evaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
    ) -> EvidenceNecessityGraph:
        """Evaluate one answer in the calling thread."""
        outcome = self._run([Request.build(answer, contexts, question, id)])[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def evaluate_many(
        self,
        requests: Iterable[Mapping[str, Any] | Request],
        *,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """Evaluate many requests with all their checks batched together; order is kept.

        With ``return_exceptions=True`` a failed request yields its exception in place of a
        graph instead of raising (like ``asyncio.gather``).
        """
        outcomes = self._run([Request.from_mapping(r) for r in requests])
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
    ) -> Future[EvidenceNecessityGraph]:
        """Hand a request to the shared worker; it is micro-batched with concurrent callers.

        When the queue is full, ``block=False`` fails the future with
        ``EngineOverloadedError`` at once instead of following the engine's overflow policy.
        """
        try:
            request = Request.build(answer, contexts, question, id)
        except InvalidInputError as exc:
            failed: Future[EvidenceNecessityGraph] = Future()
            failed.set_exception(exc)
            return failed
        return self._batcher.submit(request, block=block)

    async def aevaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
    ) -> EvidenceNecessityGraph:
        """Like ``evaluate`` without blocking the event loop (goes through the shared worker)."""
        if self._batcher.overflow == "block":
            future = await asyncio.to_thread(self.submit, answer, contexts, question, id=id)
        else:
            future = self.submit(answer, contexts, question, id=id)
        return await asyncio.wrap_future(future)

    @property
    def worker_stats(self) -> dict[str, int]:
        """Counters of the shared worker: submitted, completed, failed, rejected, batches."""
        return self._batcher.stats()

    def close(self) -> None:
        """Stop the shared worker; pending requests fail with ``EngineClosedError``."""
        self._batcher.close()

    # -- the driver --------------------------------------------------------------------------
    def _run(self, requests: Sequence[Request]) -> list[EvidenceNecessityGraph | BaseException]:
        outcomes: list[EvidenceNecessityGraph | BaseException | None] = [None] * len(requests)
        tallies = [_Tally() for _ in requests]
        plans: dict[int, Plan] = {}
        asks: dict[int, list[Check]] = {}
        counting = time.perf_counter()
        tokens = self._count_tokens({c.text for r in requests for c in r.contexts})
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

    # -- the plan (the semantics) -------------------------------------------------------------
    def _plan(self, request: Request, tally: _Tally, tokens: Mapping[str, int]) -> Plan:
        # Everything below works on the contexts in canonical order (by content), so the
        # premises, tie-breaks and float sums never depend on the order they were passed in;
        # ``_graph`` maps indices back to the user's order.
        order = canonical_order(request.contexts)
        segments = split_claims(request.answer)
        n = len(order)
        index = self.packer.index([request.contexts[i].text for i in order])
        claims = [k for k, s in enumerate(segments) if s.checkable]
        everything = range(n)
        # Citations are checked when the answer has markers (anywhere, even on a non-claim).
        checking = self.check_citations and any(s.cited for s in segments)
        base_number = check_base(self.citation_base)
        position = {user: r for r, user in enumerate(order)}
        cites = {
            k: resolve(segments[k].cited, base_number, position)
            for k in (claims if checking else [])
            if segments[k].cited
        }
        cited = [k for k in cites if cites[k].cited]  # citing at least one existing chunk

        def check(k: int, keep: Iterable[int] | None) -> Check:
            return index.premise(segments[k].text, None if keep is None else set(keep)), segments[
                k
            ].text

        # Citations ride along: the cited set with the baseline, each cited chunk alone and
        # the set without it with leave-one-out (only for a set of two or more that entails).
        first = yield [check(k, None) for k in claims] + [check(k, cites[k].cited) for k in cited]
        base, cited_set = first[: len(claims)], first[len(claims) :]
        baseline = dict(zip(claims, base, strict=True))
        entailed = {
            k: self._decide(s) == "supported" for k, s in zip(cited, cited_set, strict=True)
        }
        several = [k for k in cited if entailed[k] and len(cites[k].cited) > 1]
        verdicts = {k: self._decide(baseline[k]) for k in claims}
        supported = [k for k in claims if verdicts[k] == "supported"]
        contradicted = [k for k in claims if verdicts[k] == "contradicted"]
        # Suspects of a contradiction: the contexts that fed the premise that contradicted it.
        suspects = {k: sorted(index.premise(segments[k].text).contexts) for k in contradicted}

        loo_checks = [
            check(k, (j for j in everything if j != i)) for k in supported for i in everything
        ]
        alone_checks = [check(k, (i,)) for k in contradicted for i in suspects[k]]
        cite_checks = [
            check(k, keep)
            for k in several
            for i in cites[k].cited
            for keep in ((i,), tuple(j for j in cites[k].cited if j != i))
        ]
        both = yield loo_checks + alone_checks + cite_checks
        split = len(loo_checks) + len(alone_checks)
        loo, alone = both[: len(loo_checks)], both[len(loo_checks) : split]
        citing = self._citing(cites, entailed, several, both[split:])
        without = {k: loo[s * n : (s + 1) * n] for s, k in enumerate(supported)}
        necessary = {
            k: [i for i in everything if self._decide(without[k][i]) != "supported"]
            for k in supported
        }
        blame = yield from self._contradictors(check, n, contradicted, suspects, alone)

        single: dict[int, list[Scores]] = {}
        wanted = claims if self.support_matrix else []
        if wanted and n:
            flat = yield [check(k, (i,)) for k in wanted for i in everything]
            single = {k: flat[s * n : (s + 1) * n] for s, k in enumerate(wanted)}

        kept = yield from self._minimal_set(index, segments, supported, necessary, single, n)
        return self._graph(
            request,
            order,
            segments,
            baseline,
            verdicts,
            without,
            necessary,
            blame,
            single,
            kept,
            citing if checking else None,
            base_number,
            tally,
            tokens,
        )

    def _citing(
        self,
        cites: Mapping[int, Citations],
        entailed: Mapping[int, bool],
        several: Sequence[int],
        scores: Sequence[Scores],
    ) -> dict[int, tuple[bool, list[int]]]:
        """Per claim with markers: whether its cited chunks entail it, and its imprecise
        markers. ``scores``: for each claim of ``several``, each cited chunk alone, then the
        cited set without it."""
        verdicts = iter(self._decide(s) == "supported" for s in scores)
        out = {}
        for k, found in cites.items():
            alone: dict[int, bool] = {}
            rest: dict[int, bool] = {}
            if k in several:
                for i in found.cited:
                    alone[i], rest[i] = next(verdicts), next(verdicts)
            ok = entailed.get(k, False)
            out[k] = (ok, found.unneeded(ok, alone, rest))
        return out

    def _contradictors(
        self,
        check: Callable[[int, Iterable[int] | None], Check],
        n: int,
        contradicted: list[int],
        suspects: dict[int, list[int]],
        alone: list[Scores],
    ) -> Generator[list[Check], list[Scores], dict[int, list[int]]]:
        """``contradicted_by`` of each contradicted claim, among the contexts of its premise:
        those that contradict it on their own; if none does, those whose removal lifts the
        contradiction; if none does either, all of them (only together do they contradict)."""
        scores = iter(alone)
        blame = {
            k: [i for i in suspects[k] if self._decide(next(scores)) == "contradicted"]
            for k in contradicted
        }
        joint = [k for k in contradicted if not blame[k]]
        if joint:
            checks = [check(k, (j for j in range(n) if j != i)) for k in joint for i in suspects[k]]
            lifted = iter((yield checks))
            for k in joint:
                outcome = [self._decide(next(lifted)) for _ in suspects[k]]
                blame[k] = [
                    i for i, v in zip(suspects[k], outcome, strict=True) if v != "contradicted"
                ] or list(suspects[k])
        return blame

    def _minimal_set(
        self,
        index: EvidenceIndex,
        segments: list[Segment],
        supported: list[int],
        necessary: dict[int, list[int]],
        single: dict[int, list[Scores]],
        n: int,
    ) -> Generator[list[Check], list[Scores], list[int]]:
        """Union of necessary contexts, grown greedily until every supported claim holds,
        then pruned of the contexts it added, last added first.

        A claim that fails on the kept set gets the candidate with the highest single-context
        entailment added; candidates are the contexts feeding its full premise (the others
        ranked lower for it), all unkept contexts if none is left."""
        kept = sorted({i for k in supported for i in necessary[k]})
        added: list[int] = []

        def failing(keep: list[int]) -> Generator[list[Check], list[Scores], list[int]]:
            checks = [
                (index.premise(segments[k].text, set(keep)), segments[k].text) for k in supported
            ]
            scores = yield checks
            return [
                k for k, s in zip(supported, scores, strict=True) if self._decide(s) != "supported"
            ]

        while supported and len(kept) < n:
            broken = yield from failing(kept)
            if not broken:
                break
            k = broken[0]
            text = segments[k].text
            # Candidates: chunks that feed this claim's full premise (others ranked lower).
            pool = sorted(index.premise(text).contexts - set(kept)) or [
                i for i in range(n) if i not in kept
            ]
            if k in single:
                alone = {i: single[k][i] for i in pool}
            else:
                scores = yield [(index.premise(text, {i}), text) for i in pool]
                alone = dict(zip(pool, scores, strict=True))
            best = max(pool, key=lambda i: (alone[i].entail, -i))
            kept.append(best)
            added.append(best)
        for i in reversed(added):
            trial = [j for j in kept if j != i]
            if not (yield from failing(trial)):
                kept = trial
        return sorted(kept)

    def _graph(
        self,
        request: Request,
        order: list[int],
        segments: list[Segment],
        baseline: dict[int, Scores],
        verdicts: Mapping[int, Verdict],
        without: dict[int, list[Scores]],
        necessary: dict[int, list[int]],
        blame: dict[int, list[int]],
        single: dict[int, list[Scores]],
        kept: list[int],
        citing: dict[int, tuple[bool, list[int]]] | None,
        base_number: int,
        tally: _Tally,
        tokens: Mapping[str, int],
    ) -> EvidenceNecessityGraph:
        """Assemble the graph, mapping canonical context positions back to the user's.

        ``citing``: claim -> (its cited chunks entail it, its imprecise markers), for the
        claims that carry markers; ``None`` when citations are not checked (no markers).
        """
        n = len(order)
        now = time.perf_counter()
        rank = {user: r for r, user in enumerate(order)}

        def to_user(positions: Iterable[int]) -> list[int]:
            return sorted(order[r] for r in positions)

        def by_user(row: Sequence[float]) -> list[float]:
            return [row[rank[u]] for u in range(n)]

        claims: list[Claim] = []
        drops = [0.0] * n  # canonical order, so the float sum below is order-free too
        for k, seg in enumerate(segments):
            if k not in verdicts:
                claims.append(
                    Claim(
                        index=k,
                        text=seg.text,
                        span=(seg.start, seg.end),
                        kind=seg.kind,
                        cited=list(seg.cited),
                    )
                )
                continue
            status = verdicts[k]
            loo = without.get(k)
            if loo is not None:
                for i, s in enumerate(loo):
                    drops[i] += max(0.0, baseline[k].entail - s.entail)
            row = [s.entail for s in single[k]] if self.support_matrix and k in single else None
            need = to_user(necessary.get(k, []))
            cite_ok, unneeded = (citing or {}).get(k, (False, []))
            claims.append(
                Claim(
                    index=k,
                    text=seg.text,
                    span=(seg.start, seg.end),
                    kind=seg.kind,
                    cited=list(seg.cited),
                    citation_supported=None if citing is None else cite_ok,
                    citations_unneeded=unneeded,
                    citations_missing=[]
                    if citing is None
                    else [m for m in (i + base_number for i in need) if m not in seg.cited],
                    status=status,
                    classification=_classify(status, necessary.get(k, [])),
                    p_entail=baseline[k].entail,
                    p_contra=baseline[k].contra,
                    necessary=need,
                    contradicted_by=to_user(blame.get(k, [])),
                    p_entail_without=by_user([s.entail for s in loo]) if loo is not None else None,
                    support_row=by_user(row) if row is not None else None,
                    uncertainty=(1.0 - sum(row) / len(row)) if row else None,
                    premise_truncated=baseline[k].truncated,
                )
            )
        total_drop = sum(drops)
        used = set(to_user(kept))
        contexts = [
            ContextNode(
                index=i,
                id=c.id,
                text=c.text,
                metadata=_jsonable(c.metadata),
                tokens=tokens[c.text],
                used=i in used,
                necessary_for=[k for k, need in necessary.items() if rank[i] in need],
                necessity_score=drops[rank[i]] / total_drop if total_drop > 0 else 0.0,
            )
            for i, c in enumerate(request.contexts)
        ]
        recall, precision = answer_scores(
            [
                (bool(c.citation_supported), len(c.cited), len(c.citations_unneeded))
                for c in claims
                if c.checkable
            ],
            citing is not None,
        )
        warnings = _warnings(request, segments)
        if citing is not None:
            warnings += out_of_range(segments, base_number, n)
        return EvidenceNecessityGraph(
            id=request.id,
            question=request.question,
            answer=request.answer,
            claims=claims,
            contexts=contexts,
            minimal_sufficient_set=to_user(kept),
            citation_recall=recall,
            citation_precision=precision,
            citation_base=None if citing is None else base_number,
            verifier=Verifier(
                model=self.oracle.name,
                revision=self.oracle.revision,
                threshold=self.threshold,
                contradiction_threshold=self.contradiction_threshold,
                packing=self.packer.describe(),
            ),
            counts=_counts(claims, contexts),
            stats=RunStats(
                oracle_checks=tally.checks,
                forward_pairs=tally.forward,
                cache_hits=tally.hits,
                empty_premises=tally.empty,
                truncated_premises=tally.truncated,
                duration_ms=round((now - tally.started) * 1000, 3),
                compute_ms=round((tally.compute + now - tally.step_started) * 1000, 3),
            ),
            warnings=warnings,
        )


def _share(tallies: Sequence[_Tally], seconds: float, weights: Sequence[int]) -> None:
    """Charge ``seconds`` of shared work to ``tallies`` in proportion to ``weights``."""
    total = sum(weights)
    for tally, weight in zip(tallies, weights, strict=True):
        tally.compute += seconds * (weight / total if total else 1 / len(tallies))


def _text_size(request: Request) -> int:
    return sum(len(c.text) for c in request.contexts)


def _classify(status: str, necessary: list[int]) -> Any:
    if status != "supported":
        return status
    return {0: "robust", 1: "fragile"}.get(len(necessary), "joint")


def _counts(claims: list[Claim], contexts: list[ContextNode]) -> Counts:
    checkable = [c for c in claims if c.checkable]

    def count(attr: str, value: str) -> int:
        return sum(getattr(c, attr) == value for c in checkable)

    used = [c for c in contexts if c.used]
    return Counts(
        claims=len(claims),
        checkable_claims=len(checkable),
        supported=count("status", "supported"),
        contradicted=count("status", "contradicted"),
        unsupported=count("status", "unsupported"),
        fragile=count("classification", "fragile"),
        joint=count("classification", "joint"),
        robust=count("classification", "robust"),
        contexts=len(contexts),
        contexts_used=len(used),
        contexts_unused=len(contexts) - len(used),
        tokens_kept=sum(c.tokens for c in used),
        tokens_saved=sum(c.tokens for c in contexts if not c.used),
    )


def _warnings(request: Request, segments: list[Segment]) -> list[str]:
    warnings = []
    if not request.answer.strip():
        warnings.append("answer is empty: there is nothing to verify")
    elif not any(s.checkable for s in segments):
        warnings.append("answer has no checkable claims (only questions, refusals or headings)")
    if not request.contexts:
        warnings.append("no contexts: every claim is unsupported")
    ids = [c.id for c in request.contexts]
    if len(set(ids)) != len(ids):
        warnings.append("duplicate context ids: refer to contexts by index")
    return warnings


def _validate(scores: Scores) -> None:
    for value in (scores.entail, scores.contra):
        if not isinstance(value, float) or not 0.0 <= value <= 1.0:
            raise OracleError(f"oracle returned a non-probability: {scores!r}")
    if scores.entail + scores.contra > 1.0 + 1e-6:
        raise OracleError(f"entailment + contradiction exceed 1: {scores!r}")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


_default: Engine | None = None
_default_lock = threading.Lock()


def default_engine(**kwargs: Any) -> Engine:
    """The one shared engine of this process, created on first use with the default verifier.

    Keyword arguments configure it on first use only; later calls return the same engine (or
    the one given to :func:`set_default_engine`, e.g. a ``RemoteEngine``).
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = NecessityEngine(**kwargs)
        return _default


def set_default_engine(engine: Engine | None) -> Engine | None:
    """Replace the shared engine (e.g. with one on another model, or a ``RemoteEngine``);
    returns the previous one."""
    global _default
    with _default_lock:
        previous, _default = _default, engine
        return previous
