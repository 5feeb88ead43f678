"""Runtime pruning: keep the contexts an answer used, drop the rest, never hide evidence.

The keep policies (``prune(items, eng, keep=...)``; every adapter takes the same ``keep=``):

* ``"safe"`` (the default, :data:`DEFAULT_KEEP`): the minimal sufficient set, plus every chunk
  that contradicts a claim (``claim.contradicted_by``), plus the chunks that fed the premise of
  a claim whose verdict is uncertain: its entailment within :data:`ENTAIL_MARGIN` of τ or its
  contradiction within :data:`CONTRA_MARGIN` of τ_c, or (a claim found unsupported) one of its
  premise chunks alone entails it within :data:`ALONE_MARGIN` of τ, or the engine's rules
  overrode the model's verdict on it (an amount not in the evidence, a contradiction without a
  culprit). A verifier error near a threshold then costs tokens, not evidence. Of a claim found
  contradicted, the premise chunks that alone entail it within :data:`ALONE_MARGIN` of τ are
  kept too: the verdicts disagree, and a true claim called contradicted otherwise loses the
  chunk that supports it.
* ``"minimal"``: the minimal sufficient set only: every supported claim stays supported, the
  fewest tokens are kept; a chunk that only contradicts the answer is dropped.
* ``"necessary"``: only the chunks some claim needs on its own (smaller still).
* ``"cited"``: the answer's ``[n]`` sources minus its padding: the chunks a claim cites where
  the citation is precise or the claim needs the chunk (an answer without citations, or with
  none needed, keeps everything).

Fail-safe for every policy: without a graph, with a failed or skipped result, or when no claim
is supported, nothing is dropped and the reason says so. A graph of other contexts (by id and
text) raises :class:`~ene_core.errors.PruneMismatchError`: pruning never drops on a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args

from ..errors import InvalidInputError, PruneMismatchError
from ..graph import Claim, EvidenceNecessityGraph
from ..text.contexts import to_context
from ..text.normalise import clean_text
from ..verifiers.protocol import Scores
from ..verifiers.verdict import decide
from .results import NecessityResult

T = TypeVar("T")
KeepPolicy = Literal["safe", "minimal", "necessary", "cited"]
KEEP_POLICIES: tuple[str, ...] = get_args(KeepPolicy)
DEFAULT_KEEP: KeepPolicy = "safe"

# The margins of the "safe" policy, in probability. Chosen on the dev set
# (benchmarks/data/necessity_dev.jsonl, never the sealed test set) for the shipped verifier
# (ene-nli-mini v3, tau 0.31, tau_c 0.39) by `python benchmarks/pruning_tradeoff.py --calibrate`:
# of the grid 0, 0.025 .. 0.3 per margin, the point dropping the most truly unused chunks among
# those keeping every needed chunk of >= 95% of the truly supported claims with 95% confidence
# (Wilson lower bound), ties to the smallest margins. Dev: safety 0.984, unused dropped 0.583
# (v2's margins 0.1 / 0 / 0 with v3: 0.978 / 0.576).
# Re-run that command after retraining the verifier and paste the three lines it prints. Issue 54
# kept these margins and fixed a cause of the misses instead (a contradicted claim keeps the
# chunks that alone support it); re-running the calibration with v3.2 picked entail 0.05 with
# every engine rule and 0.1 with the rules v3.2 declares, not shipped (docs/pruning.md).
ENTAIL_MARGIN = 0.0
CONTRA_MARGIN = 0.0
ALONE_MARGIN = 0.125


@dataclass(frozen=True)
class SafeMargins:
    """How close to τ / τ_c a verdict counts as uncertain (the ``"safe"`` policy)."""

    entail: float = ENTAIL_MARGIN
    contra: float = CONTRA_MARGIN
    alone: float = ALONE_MARGIN


ReasonKind = Literal["needed", "contradicts", "uncertain", "cited", "unpruned"]
_WORDS = {"needed": "needed by", "contradicts": "contradicts", "cited": "cited by"}


@dataclass(frozen=True)
class KeepReason:
    """Why a chunk was kept: ``needed`` (the minimal set; with ``claim``: that claim needs it
    alone), ``contradicts`` / ``uncertain`` / ``cited`` claim ``claim``, or ``unpruned``
    (nothing was pruned: see ``PruneResult.reason``)."""

    kind: ReasonKind
    claim: int | None = None

    def __str__(self) -> str:
        if self.claim is None:
            return "nothing pruned" if self.kind == "unpruned" else self.kind
        return f"{_WORDS.get(self.kind, self.kind)} claim {self.claim}"


@dataclass(frozen=True)
class PruneResult(Generic[T]):
    """The split: ``kept`` / ``dropped`` items (and their indices), the tokens saved, the
    ``policy`` that ran, and ``why`` each kept item was kept (aligned with ``kept``)."""

    kept: list[T]
    dropped: list[T]
    kept_indices: list[int]
    dropped_indices: list[int]
    tokens_saved: int
    reason: str
    policy: str = DEFAULT_KEEP
    why: tuple[tuple[KeepReason, ...], ...] = ()

    def explain(self) -> list[str]:
        """One line per kept item: its index and why it was kept."""
        return [
            f"{i}: {', '.join(map(str, reasons))}"
            for i, reasons in zip(self.kept_indices, self.why, strict=True)
        ]


GraphLike = EvidenceNecessityGraph | NecessityResult | Mapping[str, Any] | None


def prune(
    items: Sequence[T],
    eng: GraphLike,
    *,
    keep: KeepPolicy = DEFAULT_KEEP,
    margins: SafeMargins | None = None,
) -> PruneResult[T]:
    """Split ``items`` (the list that was evaluated, aligned with ``eng.contexts``) into kept and
    dropped, by the ``keep`` policy (see the module docstring).

    ``eng``: the graph, a :class:`~ene_core.kit.results.NecessityResult` or an ``ene eval`` output
    line (a failed or skipped one keeps everything), or ``None`` (keeps everything).
    ``margins``: the ``"safe"`` policy's (default: the calibrated constants).
    """
    if keep not in KEEP_POLICIES:
        raise InvalidInputError(
            f"keep must be one of {', '.join(map(repr, KEEP_POLICIES))}, got {keep!r}"
        )
    graph, why_not = _graph(eng)
    if graph is None:
        return _everything(items, keep, why_not)
    check_alignment(items, graph)
    if graph.counts.supported == 0:
        return _everything(items, keep, "no supported claim: nothing pruned")
    if keep == "cited" and (graph.citation_recall is None or graph.citation_base is None):
        return _everything(items, keep, "the answer cites nothing: nothing pruned")
    chosen = keep_reasons(graph, keep, margins)
    if keep == "cited" and not chosen:
        return _everything(items, keep, "no citation is needed: nothing pruned")
    kept = sorted(chosen)
    dropped = [i for i in range(len(items)) if i not in chosen]
    return PruneResult(
        [items[i] for i in kept],
        [items[i] for i in dropped],
        kept,
        dropped,
        sum(graph.contexts[i].tokens for i in dropped),
        f"kept the {keep} set",
        keep,
        tuple(tuple(chosen[i]) for i in kept),
    )


def keep_reasons(
    eng: EvidenceNecessityGraph, keep: KeepPolicy = DEFAULT_KEEP, margins: SafeMargins | None = None
) -> dict[int, list[KeepReason]]:
    """The chunks ``keep`` keeps (context index -> why), before the fail-safe rules."""
    why: dict[int, list[KeepReason]] = {}

    def add(indices: Sequence[int] | set[int], reason: KeepReason) -> None:
        for i in sorted(indices):
            if reason not in why.setdefault(i, []):
                why[i].append(reason)

    checkable = [c for c in eng.claims if c.checkable]
    if keep in ("minimal", "safe"):
        add(eng.minimal_sufficient_set, KeepReason("needed"))
    elif keep == "necessary":
        for claim in checkable:
            add(claim.necessary, KeepReason("needed", claim.index))
    elif keep == "cited":
        for claim in checkable:
            add(needed_citations(eng, claim), KeepReason("cited", claim.index))
    if keep == "safe":
        margins = margins or SafeMargins()
        everything = range(len(eng.contexts))
        for claim in checkable:
            add(claim.contradicted_by, KeepReason("contradicts", claim.index))
            if claim.status == "contradicted":  # a chunk alone supports it: keep that one
                add(supporting_alone(eng, claim, margins), KeepReason("uncertain", claim.index))
            if uncertain(eng, claim, margins):
                fed = claim.premise_contexts
                add(everything if fed is None else fed, KeepReason("uncertain", claim.index))
    return why


def uncertain(eng: EvidenceNecessityGraph, claim: Claim, margins: SafeMargins) -> bool:
    """Whether ``claim``'s verdict is within ``margins`` of flipping (see the module docstring)."""
    tau = eng.verifier.threshold
    tau_c = eng.verifier.contradiction_threshold
    tau_c = tau if tau_c is None else tau_c
    if claim.p_entail is not None and abs(claim.p_entail - tau) <= margins.entail:
        return True
    if claim.p_contra is not None and abs(claim.p_contra - tau_c) <= margins.contra:
        return True
    if claim.p_entail is not None and claim.p_contra is not None:
        model = decide(Scores(claim.p_entail, claim.p_contra), tau, tau_c)
        if model != claim.status:  # the engine's rules overrode the model (amounts, culprit)
            return True
    alone = claim.p_entail_alone or []
    return claim.status == "unsupported" and any(p >= tau - margins.alone for p in alone)


def supporting_alone(eng: EvidenceNecessityGraph, claim: Claim, margins: SafeMargins) -> list[int]:
    """The premise chunks of a claim found unsupported or contradicted that alone (nearly)
    entail it: p_entail_alone within ``margins.alone`` of τ. The verdicts disagree, so such a
    chunk may be the evidence a true claim needs."""
    if claim.status == "supported" or not claim.premise_contexts or not claim.p_entail_alone:
        return []
    floor = eng.verifier.threshold - margins.alone
    pairs = zip(claim.premise_contexts, claim.p_entail_alone, strict=False)
    return [i for i, p in pairs if p >= floor]


def needed_citations(eng: EvidenceNecessityGraph, claim: Claim | None = None) -> set[int]:
    """Indices of the chunks some checkable claim (or just ``claim``) cites with a needed
    citation: a precise one (ALCE), or one naming a chunk the claim needs."""
    base = eng.citation_base or 0
    out = set()
    for c in eng.claims if claim is None else [claim]:
        if not c.checkable:
            continue
        padding = set(c.citations_unneeded)
        for marker in c.cited:
            i = marker - base
            if 0 <= i < len(eng.contexts) and (marker not in padding or i in c.necessary):
                out.add(i)
    return out


def tokens_saved_by_policy(eng: EvidenceNecessityGraph) -> dict[str, int]:
    """The tokens each keep policy would drop from this graph's contexts (0 where it keeps
    everything)."""
    items = list(range(len(eng.contexts)))
    return {
        policy: prune(items, eng, keep=policy).tokens_saved  # type: ignore[arg-type]
        for policy in KEEP_POLICIES
    }


def check_alignment(items: Sequence[Any], eng: EvidenceNecessityGraph) -> None:
    """Raise :class:`PruneMismatchError` unless ``items`` are the contexts ``eng`` was computed
    on: as many, and each matching its context by id or by text. Plain indices (ints) are taken
    as positions and only counted."""
    if len(items) != len(eng.contexts):
        raise PruneMismatchError(
            f"{len(items)} items but the graph has {len(eng.contexts)} contexts: prune the "
            "same list that was evaluated"
        )
    for i, (item, node) in enumerate(zip(items, eng.contexts, strict=True)):
        if isinstance(item, int):
            continue
        try:
            ctx = to_context(item, i)
        except InvalidInputError as exc:
            raise PruneMismatchError(f"item {i} is not a context ({exc})") from None
        ident, text = clean_text(ctx.id)[0], clean_text(ctx.text)[0]  # as the graph has them
        if ident != node.id and text != node.text:
            raise PruneMismatchError(
                f"item {i} (id {ident!r}, text {_short(text)!r}) is not the graph's "
                f"context {i} (id {node.id!r}, text {_short(node.text)!r}): this graph comes "
                "from another request; prune the list that was evaluated, in the same order"
            )


def _graph(eng: GraphLike) -> tuple[EvidenceNecessityGraph | None, str]:
    """The graph to prune by, or ``None`` and why nothing is pruned."""
    if isinstance(eng, NecessityResult):
        if eng.eng is not None:
            return eng.eng, ""
        if eng.skipped is not None:
            return None, f"the request was skipped ({eng.skipped}): nothing pruned"
        return None, f"the evaluation failed ({eng.error}): nothing pruned"
    if isinstance(eng, Mapping):
        for key, what in (("error", "failed"), ("skipped", "was skipped")):
            if eng.get(key):
                return None, f"the evaluation {what} ({eng[key]}): nothing pruned"
        return EvidenceNecessityGraph.from_dict(dict(eng)), ""
    if eng is None:
        return None, "no graph: nothing pruned"
    if not isinstance(eng, EvidenceNecessityGraph):
        raise InvalidInputError(
            "prune needs an EvidenceNecessityGraph, a NecessityResult, an ENG mapping or None, "
            f"got {type(eng).__name__}"
        )
    return eng, ""


def _everything(items: Sequence[T], policy: str, reason: str) -> PruneResult[T]:
    everything = list(range(len(items)))
    unpruned = (KeepReason("unpruned"),)
    return PruneResult(
        list(items), [], everything, [], 0, reason, policy, tuple(unpruned for _ in everything)
    )


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
