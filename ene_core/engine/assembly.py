"""The ENG of one request, assembled from its rounds' scores: claims (verdict, class, necessary
contexts), contexts (used, necessity score), the minimal sufficient set, citation scores, counts,
stats and warnings, mapped back from the canonical context order to the caller's."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..graph import (
    ChunkFilterRecord,
    Claim,
    ContextNode,
    Counts,
    EvidenceNecessityGraph,
    FilteredContext,
    RunStats,
    Verifier,
)
from ..text.citations import answer_scores, out_of_range
from ..text.claims import Segment
from ..verifiers.profile import VerifierProfile
from ..verifiers.protocol import RULES, Scores, SupportOracle, Verdict
from .premise import PremisePacker
from .request import Request, filter_record
from .scoring import _Tally


@dataclass(frozen=True)
class ClaimRounds:
    """What the rounds found for each claim on its own (keys: segment indices; contexts in
    canonical order): baseline scores and verdicts, the scores with each context left out and
    the contexts each supported claim needs, who contradicts each contradicted claim, the
    support-matrix rows, per claim with markers (its cited chunks entail it, its imprecise
    markers), the contexts that fed each claim's premise, for a claim not supported its
    entailment by each of them alone, the amounts its premise does not state or computes, the
    comparison arithmetic settled for it (worked out), the other holder the evidence gives its
    unique role, the amount the evidence gives what it describes in place of its own, and the
    contexts that support a claim alone where the packed premise did not (``backed``)."""

    baseline: dict[int, Scores]
    verdicts: dict[int, Verdict]
    without: dict[int, list[Scores]]
    necessary: dict[int, list[int]]
    blame: dict[int, list[int]]
    single: dict[int, list[Scores]]
    citing: dict[int, tuple[bool, list[int]]]
    supported: list[int]
    premised: dict[int, list[int]]
    by_one: dict[int, list[float]]
    unstated: dict[int, list[str]]
    computed: dict[int, list[str]]
    arithmetic: dict[int, str]
    holders: dict[int, str]
    values: dict[int, str]
    backed: dict[int, list[int]]

    def held(self) -> set[int]:
        """The context each claim supported alone is best supported by (highest entailment
        alone, then the first): the minimal sufficient set keeps it."""
        held = set()
        for k, backers in self.backed.items():
            alone = dict(zip(self.premised[k], self.by_one[k], strict=True))
            held.add(max(backers, key=lambda i: (alone[i], -i)))
        return held


class GraphAssembly:
    """:meth:`_graph`: a part of :class:`~ene_core.engine.necessity.NecessityEngine`."""

    oracle: SupportOracle
    threshold: float
    contradiction_threshold: float
    packer: PremisePacker
    support_matrix: bool
    rules: frozenset[str]
    profile: VerifierProfile | None

    def _graph(
        self,
        request: Request,
        order: list[int],
        segments: list[Segment],
        found: ClaimRounds,
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

        claims: list[Claim] = []
        drops = [0.0] * n  # canonical order, so the float sum below is order-free too
        for k, seg in enumerate(segments):
            for i, s in enumerate(found.without.get(k, [])):
                drops[i] += max(0.0, found.baseline[k].entail - s.entail)
            claims.append(self._claim(k, seg, order, found, citing, base_number))
        necessary = found.necessary
        total_drop = sum(drops)
        used = set(to_user(kept))
        contexts = [
            ContextNode(
                index=i,
                id=c.id,
                text=c.text,
                metadata=c.metadata,  # plain JSON values (Request.build)
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
        chunk_filter, filtered = filter_record(request.filtered, request.contexts)
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
                **{f"check_{name}": name in self.rules for name in RULES},
                profile=self.profile.record() if self.profile is not None else None,
            ),
            counts=_counts(claims, contexts, filtered, chunk_filter),
            stats=RunStats(
                oracle_checks=tally.checks,
                forward_pairs=tally.forward,
                focus_pairs=tally.focus,
                unchecked_sentences=sum(s.kind == "fragment" for s in segments),
                cache_hits=tally.hits,
                empty_premises=tally.empty,
                truncated_premises=tally.truncated,
                verifier_tokens=tally.tokens,
                duration_ms=round((now - tally.started) * 1000, 3),
                compute_ms=round((tally.compute + now - tally.step_started) * 1000, 3),
            ),
            warnings=warnings,
            filtered_contexts=filtered,
            chunk_filter=chunk_filter,
        )

    def _claim(
        self,
        k: int,
        seg: Segment,
        order: Sequence[int],
        found: ClaimRounds,
        citing: Mapping[int, tuple[bool, list[int]]] | None,
        base_number: int,
    ) -> Claim:
        """Claim ``k`` as the ENG shows it, context indices in the caller's order.

        ``citing``: as for :meth:`_graph` (``None``: citations not checked)."""
        if k not in found.verdicts:  # not checkable
            return Claim(
                index=k,
                text=seg.text,
                span=(seg.start, seg.end),
                kind=seg.kind,
                cited=list(seg.cited),
            )
        rank = {user: r for r, user in enumerate(order)}

        def to_user(positions: Iterable[int]) -> list[int]:
            return sorted(order[r] for r in positions)

        def by_user(row: Sequence[float]) -> list[float]:
            return [row[rank[u]] for u in range(len(order))]

        status = found.verdicts[k]
        scores = found.baseline[k]
        loo = found.without.get(k)
        single = found.single.get(k) if self.support_matrix else None
        row = [s.entail for s in single] if single is not None else None
        need = to_user(found.necessary.get(k, []))
        cite_ok, unneeded = (citing or {}).get(k, (False, []))
        return Claim(
            index=k,
            text=seg.text,
            span=(seg.start, seg.end),
            kind=seg.kind,
            hypothesis=seg.hypothesis,
            hypothesis_form=seg.hypothesis_form,
            cited=list(seg.cited),
            citation_supported=None if citing is None else cite_ok,
            citations_unneeded=unneeded,
            citations_missing=[]
            if citing is None
            else [m for m in (i + base_number for i in need) if m not in seg.cited],
            status=status,
            classification=_classify(status, found.necessary.get(k, [])),
            p_entail=scores.entail,
            p_contra=scores.contra,
            necessary=need,
            contradicted_by=to_user(found.blame.get(k, [])),
            p_entail_without=by_user([s.entail for s in loo]) if loo is not None else None,
            support_row=by_user(row) if row is not None else None,
            uncertainty=(1.0 - sum(row) / len(row)) if row else None,
            premise_truncated=scores.truncated,
            premise_contexts=to_user(found.premised[k]),
            p_entail_alone=_by_context(list(order), found.premised[k], found.by_one.get(k)),
            unstated_amounts=found.unstated.get(k, []),
            computed_amounts=found.computed.get(k, []),
            arithmetic=found.arithmetic.get(k),
            other_holder=found.holders.get(k),
            other_value=found.values.get(k),
            supported_alone_by=to_user(found.backed.get(k, [])),
            decided_by=scores.verifier,
            judge_read=scores.read,
        )


def _by_context(
    order: list[int], positions: list[int], values: list[float] | None
) -> list[float] | None:
    """``values`` (one per canonical position) in the order of the user's context indices."""
    if values is None:
        return None
    return [v for _, v in sorted(zip((order[r] for r in positions), values, strict=True))]


def _classify(status: str, necessary: list[int]) -> Any:
    if status != "supported":
        return status
    return {0: "robust", 1: "fragile"}.get(len(necessary), "joint")


def _counts(
    claims: list[Claim],
    contexts: list[ContextNode],
    filtered: list[FilteredContext],
    chunk_filter: ChunkFilterRecord | None,
) -> Counts:
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
        contexts_filtered=len(filtered),
        tokens_filtered=chunk_filter.tokens_saved if chunk_filter is not None else 0,
    )


def _warnings(request: Request, segments: list[Segment]) -> list[str]:
    warnings = list(request.warnings)  # what the normalisation of the input changed
    if not request.answer.strip():
        warnings.append("answer is empty: there is nothing to verify")
    elif not any(s.checkable for s in segments):
        warnings.append(
            "answer has no checkable claims (only questions, refusals, headings, citation "
            "markers, punctuation, or bare names, numbers and yes/no without a question)"
        )
    warnings.extend(_short_answer_warnings(request, segments))
    if not request.contexts:
        warnings.append("no contexts: every claim is unsupported")
    ids = [c.id for c in request.contexts]
    if len(set(ids)) != len(ids):
        warnings.append("duplicate context ids: refer to contexts by index")
    return warnings


def _short_answer_warnings(request: Request, segments: list[Segment]) -> list[str]:
    """Which short answers were left unchecked, named, and why: they cannot be a claim alone (a
    bare name, a number, "yes") and there is no question, or one with no words."""
    unread = [(k + 1, s.text) for k, s in enumerate(segments) if s.kind == "fragment"]
    if not unread:
        return []
    which = f"claim{'s' if len(unread) > 1 else ''} " + ", ".join(
        f"{k} ({_quote(text)})" for k, text in unread[:20]
    )
    why = "no question was given" if request.question is None else "the question is empty"
    return [
        f"{which} not checked: a bare name, number or yes/no is no claim on its own; it is "
        f"checked as the answer to the request's question, and {why} (pass question=...)"
    ]


def _quote(text: str, limit: int = 40) -> str:
    """``text`` in quotes, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
