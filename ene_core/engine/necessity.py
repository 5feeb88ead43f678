"""The necessity engine: claims -> baseline support -> leave-one-out -> ENG.

Each request is evaluated by a *plan*: a generator that yields the (premise, claim) checks it
needs next and receives their scores. A driver runs many plans in lock-step and sends every
check of every plan through the oracle in one batch per step, after de-duplication and the
score cache. ``evaluate`` drives one plan, ``evaluate_many`` many, and the shared worker
(``submit`` / ``aevaluate``) whatever concurrent callers handed it within a few milliseconds.

The engine's parts, each a base class of :class:`NecessityEngine` or a helper of one:
:mod:`~ene_core.engine.request` (:class:`Request`), :mod:`~ene_core.engine.scoring` (the driver
and the score cache), :mod:`~ene_core.engine.rounds` (the plan), :mod:`~ene_core.engine.minimal_set`
and :mod:`~ene_core.engine.assembly` (the ENG). This module is the public API: :class:`Engine`,
:class:`NecessityEngine` and the process's default engine.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidInputError, ProfileError
from ..graph import EvidenceNecessityGraph
from ..rules.grounding import computed, unstated
from ..rules.masking import as_written
from ..text.citations import check_base
from ..verifiers.profile import VerifierProfile
from ..verifiers.protocol import RULES, Scores, SupportOracle, Verdict, declared_rules
from ..verifiers.verdict import decide
from .batcher import MicroBatcher, Overflow
from .premise import PremisePacker
from .request import Request, build_all, run_built
from .rounds import PlanRounds
from .scoring import Check, Plan, PlanDriver, ScoreCache  # noqa: F401  (Check, Plan: public here)
from .streaming import ClaimStream, StreamRegistry


@runtime_checkable
class Engine(Protocol):
    """What handlers, pruners and ``ene eval`` need of an engine: :class:`NecessityEngine`
    (in this process) and :class:`~ene_core.service.remote.RemoteEngine` (``ene serve``) are
    both one.

    ``oracle.name`` says which verifier it runs (pruning compares it with an ENG's);
    ``threshold`` and ``contradiction_threshold`` its decision thresholds (``ene eval
    --resume`` refuses to mix verifiers).
    """

    @property
    def oracle(self) -> Any: ...

    @property
    def threshold(self) -> float: ...

    @property
    def contradiction_threshold(self) -> float: ...

    def evaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        filtered: Iterable[Any] | None = None,
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
        filtered: Iterable[Any] | None = None,
    ) -> Future[EvidenceNecessityGraph]: ...

    async def aevaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        filtered: Iterable[Any] | None = None,
    ) -> EvidenceNecessityGraph: ...

    def close(self) -> None: ...


class NecessityEngine(PlanRounds, PlanDriver):
    """Counterfactual necessity of every context for every claim of an answer.

    >>> engine = NecessityEngine(oracle=NLIOracle("path/or/id"), threshold=0.5)
    >>> eng = engine.evaluate(answer, contexts, question=None)

    Answers with ``[n]`` markers also get their citations checked (``check_citations``);
    ``[n]`` names ``contexts[n - 1]``, or ``contexts[n]`` with ``citation_base=0``.
    ``check_amounts``: a claim whose premise states one of its amounts nowhere is never
    supported, and is contradicted when the evidence supports it with another amount
    (:mod:`~ene_core.rules.grounding`); a comparison the evidence's amounts settle gets the
    arithmetic's verdict (:mod:`~ene_core.rules.arithmetic`). ``check_bindings``: a claim that
    gives a unique role ("the first ...", "the largest ...") to someone the evidence names, while
    the evidence gives it to another, that a sentence opening like it contradicts on its own, or
    whose route the evidence gives the other way round, is contradicted
    (:mod:`~ene_core.rules.bindings`).

    ``rules``: which of the engine's deterministic rules apply
    (:data:`~ene_core.verifiers.protocol.RULES`). By default the verifier's own (its ``rules``:
    every rule for the embedded model, which they were tuned with, none for any other
    verifier); a mapping switches rules on or off over those (``{"bindings": False}``), a set of
    names or ``"all"`` / ``"none"`` replaces them, and so does a string like ``"no-bindings"``
    or ``"none,amounts"`` (``--rules``). ``check_amounts`` and ``check_bindings``, when given,
    switch the amount rules (amounts, arithmetic, masking) or the binding rules (bindings,
    polarity, scope, culprits) on or off after that.
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
        check_amounts: bool | None = None,
        check_bindings: bool | None = None,
        rules: RuleChoice = None,
        citation_base: int = 1,
        cache_size: int = 65_536,
        max_wait_ms: float = 5.0,
        max_queue: int = 1024,
        max_batch_requests: int = 64,
        overflow: Overflow = "block",
        max_streams: int = 1024,
        stream_ttl_s: float = 600.0,
        profile: VerifierProfile | str | os.PathLike[str] | None = None,
    ) -> None:
        if oracle is None:
            from ..verifiers.nli import NLIOracle

            oracle = NLIOracle()
        self.oracle = oracle
        self.profile = _profile(profile, oracle, threshold, contradiction_threshold)
        if self.profile is not None:
            threshold = self.profile.threshold
            contradiction_threshold = self.profile.contradiction_threshold
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
        self.rules = resolve_rules(oracle, rules, check_amounts, check_bindings)
        self.citation_base = check_base(citation_base)
        self.cache = ScoreCache(cache_size)
        self._batcher = MicroBatcher(
            self._run,
            max_wait_s=max_wait_ms / 1000,
            max_queue=max_queue,
            max_batch=max_batch_requests,
            overflow=overflow,
        )
        self._streams = StreamRegistry(
            self._batcher.submit, self.submit, max_open=max_streams, ttl_s=stream_ttl_s
        )

    def _judge(self, check: Check, scores: Scores) -> Verdict:
        """The verdict on one check: the model's (:func:`~ene_core.verifiers.verdict.decide`), but
        contradicted when the premise gives the claim's unique role to another, its amount to
        something else than the claim describes, its route the other way round, or says it with
        its negation taken away or added or a word turned ("gold" / "silver") or restricts the
        noun it says "every" of ("only on the Enterprise plan"); the arithmetic's for a
        comparison the premise's amounts settle, never supported when the premise states one of
        the claim's amounts nowhere, and never contradicted when the claim computes an amount
        from two the premise states."""
        verdict = decide(scores, self.threshold, self.contradiction_threshold)
        premise, read = check
        claim = as_written(read)  # the rules read the claim as written, the model ``read``
        written = (premise, claim)
        rules = (self._clash, self._misbound, self._reversal, self._flip)  # each: its own rule
        if any(rule(written) is not None for rule in rules):
            return "contradicted"  # role or value held by another, route reversed, negation...
        derived = self._derived(written)
        if derived is not None:
            return derived.verdict  # a comparison the evidence's amounts settle
        if verdict == "unsupported" or "amounts" not in self.rules:
            return verdict
        if verdict == "supported" and unstated(claim, premise.text):
            return "unsupported"
        if verdict == "contradicted" and computed(claim, premise.text):
            return "unsupported"  # an amount it computes: the model cannot check arithmetic
        return verdict

    @property
    def check_amounts(self) -> bool:
        """Whether the amount rule applies (``"amounts" in rules``)."""
        return "amounts" in self.rules

    @property
    def check_bindings(self) -> bool:
        """Whether the binding rule applies (``"bindings" in rules``)."""
        return "bindings" in self.rules

    # -- public API ------------------------------------------------------------------------
    def evaluate(
        self,
        answer: str,
        contexts: Iterable[Any] | None,
        question: str | None = None,
        *,
        id: str | None = None,
        filtered: Iterable[Any] | None = None,
    ) -> EvidenceNecessityGraph:
        """Evaluate one answer in the calling thread; ``filtered``: the chunk filter calls before
        generation (:func:`~ene_core.engine.request.filter_call`), listed in the ENG."""
        outcome = self._run([Request.build(answer, contexts, question, id, filtered)])[0]
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

        With ``return_exceptions=True`` a failed request, or one that is not a request (an
        ``InvalidInputError``), yields its exception in place of a graph instead of raising
        (like ``asyncio.gather``).
        """
        outcomes = run_built(build_all(requests, keep_errors=return_exceptions), self._run)
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
        """Hand a request to the shared worker; it is micro-batched with concurrent callers.

        When the queue is full, ``block=False`` fails the future with
        ``EngineOverloadedError`` at once instead of following the engine's overflow policy.
        """
        try:
            request = Request.build(answer, contexts, question, id, filtered)
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
        filtered: Iterable[Any] | None = None,
    ) -> EvidenceNecessityGraph:
        """Like ``evaluate`` without blocking the event loop (goes through the shared worker)."""
        if self._batcher.overflow == "block":
            future = await asyncio.to_thread(
                self.submit, answer, contexts, question, id=id, filtered=filtered
            )
        else:
            future = self.submit(answer, contexts, question, id=id, filtered=filtered)
        return await asyncio.wrap_future(future)

    def stream(
        self, contexts: Iterable[Any] | None, question: str | None = None, id: str | None = None
    ) -> ClaimStream:
        """A claim stream for an answer that is still being written: ``feed(delta)`` returns
        the verdicts known so far without waiting, ``close()`` the ENG of the whole answer
        (see :mod:`ene_core.engine.streaming`). At most ``max_streams`` are open; one not fed for
        ``stream_ttl_s`` seconds is freed."""
        return self._streams.open(contexts, question, id)

    @property
    def open_streams(self) -> int:
        """Claim streams open now (fed, not closed, not freed)."""
        return len(self._streams)

    @property
    def worker_stats(self) -> dict[str, int]:
        """Counters of the shared worker: submitted, completed, failed, rejected, batches."""
        return self._batcher.stats()

    def close(self) -> None:
        """Stop the shared worker; pending requests fail with ``EngineClosedError``."""
        self._batcher.close()


RuleChoice = Mapping[str, bool] | Iterable[str] | str | bool | None
#: the rules ``check_amounts`` / ``check_bindings`` switch together
AMOUNT_RULES = frozenset({"amounts", "arithmetic", "masking"})
BINDING_RULES = frozenset({"bindings", "polarity", "scope", "culprits"})


def parse_rules(spec: str) -> dict[str, bool]:
    """``--rules`` as switches, in order: ``"all"``, ``"none"``, ``"NAME"`` (on) or
    ``"no-NAME"`` (off), comma-separated (``"none,amounts"``: the amount rule alone)."""
    switches: dict[str, bool] = {}
    for item in (part.strip() for part in spec.split(",")):
        if item in ("all", "none"):
            switches = dict.fromkeys(RULES, item == "all")
        elif item:
            name = item.removeprefix("no-")
            _known(name)
            switches.pop(name, None)
            switches[name] = name == item
    return switches


def resolve_rules(
    oracle: SupportOracle,
    rules: RuleChoice = None,
    check_amounts: bool | None = None,
    check_bindings: bool | None = None,
) -> frozenset[str]:
    """The rules an engine applies: the verifier's (:func:`declared_rules`), switched by
    ``rules`` (see :class:`NecessityEngine`), then by ``check_amounts`` / ``check_bindings``."""
    on = set(declared_rules(oracle))
    for name in on:
        _known(name)
    if isinstance(rules, str):
        rules = parse_rules(rules)
    if isinstance(rules, bool):
        on = set(RULES) if rules else set()
    elif isinstance(rules, Mapping):
        for name, value in rules.items():
            _known(name)
            if value:
                on.add(name)
            else:
                on.discard(name)
    elif rules is not None:
        on = set(rules)
        for name in on:
            _known(name)
    for group, value in ((AMOUNT_RULES, check_amounts), (BINDING_RULES, check_bindings)):
        if value is not None:
            on = on | group if value else on - group
    return frozenset(on)


def _known(name: str) -> None:
    if name not in RULES:
        raise InvalidInputError(f"unknown rule {name!r}: the rules are {', '.join(RULES)}")


def _profile(
    profile: VerifierProfile | str | os.PathLike[str] | None,
    oracle: SupportOracle,
    threshold: float | None,
    contradiction_threshold: float | None,
) -> VerifierProfile | None:
    """The profile an engine was given, checked against its verifier and thresholds."""
    if profile is None:
        return None
    if threshold is not None or contradiction_threshold is not None:
        raise InvalidInputError(
            "a verifier profile sets the thresholds: pass the profile or thresholds, not both"
        )
    found = profile if isinstance(profile, VerifierProfile) else VerifierProfile.read(profile)
    if found.verifier != oracle.name:
        raise ProfileError(
            f"the profile was calibrated for {found.verifier!r}, the engine runs "
            f"{oracle.name!r}: run `ene calibrate` with this verifier"
        )
    if None not in (found.revision, oracle.revision) and found.revision != oracle.revision:
        raise ProfileError(
            f"the profile was calibrated for revision {found.revision!r} of {oracle.name!r}, "
            f"the engine runs {oracle.revision!r}: calibrate again"
        )
    return found


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
