"""Aggregate statistics over many ENGs (an ``ene eval`` output).

Claim rates are over checkable claims, chunk rates over retrieved chunks; every rate carries a
95% bootstrap confidence interval that resamples *requests* (claims and chunks of one request
are not independent). The resampling is seeded and uses only :mod:`random`, so the same input
and seed give the same intervals on every machine.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ENGFormatError
from ..graph import EvidenceNecessityGraph
from ..pruning import DEFAULT_KEEP, KEEP_POLICIES, tokens_saved_by_policy

CLAIM_CLASSES = ("unsupported", "contradicted", "fragile", "joint", "robust")
MAX_GROUPS = 20  # a metadata field with more distinct values is an id, not a breakdown
MAX_RANK = 20  # chunks past this retrieval rank share one bucket
TOP = 5  # requests listed as slowest / most fragile
CITATION_SCALE = 10**9  # per-answer citation scores as integers in units of 1e-9 (exact sums)


@dataclass(frozen=True)
class Rate:
    """``numerator / denominator`` with its bootstrap interval ``[low, high]``."""

    name: str
    numerator: int
    denominator: int
    low: float | None
    high: float | None

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None


@dataclass(frozen=True)
class Mean:
    """The mean of a per-request score over the ``requests`` that have one, with its
    bootstrap interval (ALCE citation recall and precision average answers, not claims)."""

    name: str
    value: float | None
    requests: int
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Group:
    """The chunks whose metadata ``field`` has one ``value``."""

    value: str
    chunks: int
    requests: int
    necessary: int
    tokens: int
    used: Rate

    @property
    def never_used(self) -> bool:
        return self.used.numerator == 0


@dataclass(frozen=True)
class RequestRow:
    """One request in the slowest / most fragile lists (``position`` is 1-based).

    ``compute_ms`` is the request's own evaluation time (``stats.compute_ms``; for graphs
    older than schema 1.2, which lack it, the batch's wall time ``stats.duration_ms``).
    """

    position: int
    id: str | None
    compute_ms: float
    claims: int
    fragile: int
    unsupported: int
    contradicted: int
    contexts: int
    unused: int

    @property
    def label(self) -> str:
        return self.id if self.id is not None else f"#{self.position}"


@dataclass(frozen=True)
class Report:
    requests: int
    failed: int
    claims: int
    contexts: int
    tokens: int
    rates: list[Rate]
    necessary_per_claim: dict[str, int]
    by_rank: list[Rate]
    breakdowns: dict[str, list[Group]]
    slowest: list[RequestRow]
    most_fragile: list[RequestRow]
    seed: int
    resamples: int
    warnings: list[str] = field(default_factory=list)
    citations: list[Mean] = field(default_factory=list)  # empty when no answer has markers
    pruning: list[Rate] = field(default_factory=list)  # tokens each keep policy would save

    def rate(self, name: str) -> Rate:
        return next(r for r in self.rates if r.name == name)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_table(self) -> str:
        return render_table(self)


# -- reading ------------------------------------------------------------------------------------
def read_results(path: str | Path) -> tuple[list[EvidenceNecessityGraph], int]:
    """The ENGs of an ``ene eval`` output and how many lines record a failure.

    Accepts ENG JSONL (error records ``{"error": ...}`` are counted, not parsed) or one ENG
    JSON document (as written by ``ene evaluate --json``). Lines end at ``\n`` only: text may
    hold U+2028 and the other characters ``str.splitlines`` would also cut at.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ENGFormatError(f"{path} is not UTF-8 text (at byte {exc.start + 1})") from None
    stripped = text.strip()
    if stripped.startswith("{") and "\n" in stripped:
        try:
            return [EvidenceNecessityGraph.from_json(stripped)], 0
        except ENGFormatError:
            pass  # JSONL: one object per line
    engs: list[EvidenceNecessityGraph] = []
    failed = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            engs.append(EvidenceNecessityGraph.from_json(line))
        except ENGFormatError as exc:
            if not _error_record(line):
                raise ENGFormatError(f"{path}: line {number}: {exc}") from None
            failed += 1
    return engs, failed


def _error_record(line: str) -> bool:
    """An ``ene eval --on-error record`` line: ``{"line", "error"}``, no ENG."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "error" in data and "schema_version" not in data


# -- statistics ---------------------------------------------------------------------------------
class _Metric:
    """Per-request numerators and denominators of one rate (sparse: requests that count)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: dict[int, list[int]] = {}

    def add(self, request: int, numerator: int, denominator: int) -> None:
        row = self.rows.setdefault(request, [0, 0])
        row[0] += numerator
        row[1] += denominator

    def rate(self, interval: tuple[float, float] | None) -> Rate:
        num = sum(r[0] for r in self.rows.values())
        den = sum(r[1] for r in self.rows.values())
        low, high = interval if interval else (None, None)
        return Rate(self.name, num, den, low, high)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) with linear interpolation between order statistics."""
    if not sorted_values:
        raise ValueError("percentile of nothing")
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * fraction


def bootstrap(
    metrics: Sequence[_Metric],
    n: int,
    *,
    resamples: int = 1000,
    seed: int = 0,
    use_numpy: bool | None = None,
) -> dict[str, tuple[float, float] | None]:
    """Percentile 95% intervals for every metric, resampling the ``n`` requests together.

    The resamples come from ``random.Random(seed)``; numpy, when installed, only adds up the
    (integer) counts faster, so the intervals are the same with or without it.
    """
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {m.name: [] for m in metrics}
    if n == 0 or resamples <= 0 or not metrics:
        return dict.fromkeys(samples)
    draws = (rng.choices(range(n), k=n) for _ in range(resamples))
    sums = _sums_numpy if use_numpy is not False and _numpy() is not None else _sums_python
    for totals in sums(metrics, n, draws):
        for metric, (num, den) in zip(metrics, totals, strict=True):
            if den:
                samples[metric.name].append(num / den)
    intervals: dict[str, tuple[float, float] | None] = {}
    for name, values in samples.items():
        values.sort()
        intervals[name] = (percentile(values, 0.025), percentile(values, 0.975)) if values else None
    return intervals


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _dense(metrics: Sequence[_Metric], n: int, column: int) -> list[list[int]]:
    rows = []
    for metric in metrics:
        row = [0] * n
        for request, values in metric.rows.items():
            row[request] = values[column]
        rows.append(row)
    return rows


def _sums_python(
    metrics: Sequence[_Metric], n: int, draws: Iterable[list[int]]
) -> Iterator[list[tuple[int, int]]]:
    nums, dens = _dense(metrics, n, 0), _dense(metrics, n, 1)
    for idx in draws:
        yield [
            (sum(map(num.__getitem__, idx)), sum(map(den.__getitem__, idx)))
            for num, den in zip(nums, dens, strict=True)
        ]


def _sums_numpy(
    metrics: Sequence[_Metric], n: int, draws: Iterable[list[int]]
) -> Iterator[list[tuple[int, int]]]:
    np = _numpy()
    nums = np.array(_dense(metrics, n, 0), dtype=np.int64)
    dens = np.array(_dense(metrics, n, 1), dtype=np.int64)
    for idx in draws:
        weight = np.bincount(np.asarray(idx, dtype=np.int64), minlength=n)
        yield list(zip((nums @ weight).tolist(), (dens @ weight).tolist(), strict=True))


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _rank_bucket(index: int) -> str:
    return f"rank {index + 1}" if index < MAX_RANK else f"rank {MAX_RANK + 1}+"


def summarize(
    engs: Sequence[EvidenceNecessityGraph],
    failed: int = 0,
    *,
    seed: int = 0,
    resamples: int = 1000,
    top: int = TOP,
) -> Report:
    """Aggregate statistics over ``engs`` (``failed``: requests that produced no graph).

    "tokens pruning saves" follows :func:`ene_core.kit.pruning.prune` with its default policy
    (``"safe"``); ``pruning`` has one rate per keep policy. A request with no supported claim
    keeps everything, so it saves nothing.
    """
    claim_metrics = {c: _Metric(c) for c in CLAIM_CLASSES}
    citation_metrics = {n: _Metric(n) for n in ("citation recall", "citation precision")}
    chunk_metrics = {
        name: _Metric(name)
        for name in ("chunks unused", "chunks necessary", "tokens pruning saves")
    }
    policy_metrics = {p: _Metric(p) for p in KEEP_POLICIES}
    by_rank: dict[str, _Metric] = {}
    fields: dict[str, dict[str, _Metric]] = {}
    group_info: dict[tuple[str, str], list[Any]] = {}  # [chunks, requests set, necessary, tokens]
    necessary_per_claim: Counter[str] = Counter()

    for r, eng in enumerate(engs):
        checkable = [c for c in eng.claims if c.checkable]
        for name, metric in claim_metrics.items():
            hits = sum(c.classification == name for c in checkable)
            metric.add(r, hits, len(checkable))
        citation_scores = (eng.citation_recall, eng.citation_precision)
        for metric, score in zip(citation_metrics.values(), citation_scores, strict=True):
            if score is not None:
                metric.add(r, round(score * CITATION_SCALE), CITATION_SCALE)
        for claim in checkable:
            if claim.status == "supported":
                need = len(claim.necessary)
                necessary_per_claim["4+" if need >= 4 else str(need)] += 1
        tokens = sum(c.tokens for c in eng.contexts)
        saved = tokens_saved_by_policy(eng)
        for policy, metric in policy_metrics.items():
            metric.add(r, saved[policy], tokens)
        chunk_metrics["chunks unused"].add(r, eng.counts.contexts_unused, len(eng.contexts))
        necessary = sum(bool(c.necessary_for) for c in eng.contexts)
        chunk_metrics["chunks necessary"].add(r, necessary, len(eng.contexts))
        chunk_metrics["tokens pruning saves"].add(r, saved[DEFAULT_KEEP], tokens)
        for ctx in eng.contexts:
            bucket = _rank_bucket(ctx.index)
            by_rank.setdefault(bucket, _Metric(bucket)).add(r, int(not ctx.used), 1)
            for key, raw in ctx.metadata.items():
                value = _scalar(raw)
                if value is None:
                    continue
                name = f"{key}={value}"
                fields.setdefault(key, {}).setdefault(name, _Metric(name)).add(r, int(ctx.used), 1)
                info = group_info.setdefault((key, value), [0, set(), 0, 0])
                info[0] += 1
                info[1].add(r)
                info[2] += bool(ctx.necessary_for)
                info[3] += ctx.tokens

    kept_fields = {
        key: groups
        for key, groups in fields.items()
        if len(groups) <= MAX_GROUPS and any(g.rate(None).denominator > 1 for g in groups.values())
    }
    warnings = [
        f"metadata field {key!r} has {len(groups)} distinct values: not broken down"
        for key, groups in fields.items()
        if len(groups) > MAX_GROUPS
    ]
    rank_order = sorted(by_rank, key=lambda b: int(b.split()[1].rstrip("+")))
    cited = [m for m in citation_metrics.values() if m.rows]
    every = [
        *cited,
        *claim_metrics.values(),
        *chunk_metrics.values(),
        *policy_metrics.values(),
        *(by_rank[b] for b in rank_order),
        *(m for groups in kept_fields.values() for m in groups.values()),
    ]
    intervals = bootstrap(every, len(engs), resamples=resamples, seed=seed)

    breakdowns = {
        key: _groups(key, kept_fields[key], group_info, intervals) for key in sorted(kept_fields)
    }
    rows = [_request_row(i, eng) for i, eng in enumerate(engs)]
    slowest = sorted(rows, key=lambda row: (-row.compute_ms, row.position))[:top]
    fragile = sorted(
        (row for row in rows if row.fragile),
        key=lambda row: (-row.fragile, -row.fragile / max(row.claims, 1), row.position),
    )[:top]
    return Report(
        requests=len(engs),
        failed=failed,
        claims=sum(eng.counts.checkable_claims for eng in engs),
        contexts=sum(eng.counts.contexts for eng in engs),
        tokens=sum(c.tokens for eng in engs for c in eng.contexts),
        rates=[
            m.rate(intervals[m.name]) for m in (*claim_metrics.values(), *chunk_metrics.values())
        ],
        necessary_per_claim={k: necessary_per_claim[k] for k in ("0", "1", "2", "3", "4+")},
        by_rank=[by_rank[b].rate(intervals[b]) for b in rank_order],
        breakdowns=breakdowns,
        slowest=slowest,
        most_fragile=fragile,
        seed=seed,
        resamples=resamples,
        warnings=warnings,
        citations=[_mean(m, intervals[m.name]) for m in cited],
        pruning=[m.rate(intervals[m.name]) for m in policy_metrics.values()],
    )


def _mean(metric: _Metric, interval: tuple[float, float] | None) -> Mean:
    rate = metric.rate(interval)
    return Mean(rate.name, rate.value, len(metric.rows), rate.low, rate.high)


def _groups(
    key: str,
    metrics: dict[str, _Metric],
    info: dict[tuple[str, str], list[Any]],
    intervals: dict[str, tuple[float, float] | None],
) -> list[Group]:
    """The rows of one metadata field's breakdown, largest group first."""
    groups = []
    for name, metric in metrics.items():
        value = name[len(key) + 1 :]
        chunks, requests, necessary, tokens = info[(key, value)]
        used = metric.rate(intervals[name])
        groups.append(Group(value, chunks, len(requests), necessary, tokens, used))
    return sorted(groups, key=lambda g: (-g.chunks, g.value))


def _request_row(i: int, eng: EvidenceNecessityGraph) -> RequestRow:
    c = eng.counts
    return RequestRow(
        position=i + 1,
        id=eng.id,
        compute_ms=eng.stats.request_ms,
        claims=c.checkable_claims,
        fragile=c.fragile,
        unsupported=c.unsupported,
        contradicted=c.contradicted,
        contexts=c.contexts,
        unused=c.contexts_unused,
    )


# -- terminal table -----------------------------------------------------------------------------
def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def interval(rate: Rate | Mean) -> str:
    if rate.low is None or rate.high is None:
        return ""
    return f"[{100 * rate.low:.1f}, {100 * rate.high:.1f}]"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A blank line, then ``rows`` under ``header`` (first column left-aligned, the rest right)."""
    cells = [list(header)] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        first = row[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return ["", line(cells[0]), line(["-" * w for w in widths]), *(line(r) for r in cells[1:])]


def _rate_row(rate: Rate, name: str | None = None) -> tuple[str, ...]:
    return (
        rate.name if name is None else name,
        f"{rate.numerator}/{rate.denominator}",
        percent(rate.value),
        interval(rate),
    )


def policy_label(policy: str) -> str:
    """``keep="safe"`` (default) and the like: a keep policy as the reports name it."""
    return f'keep="{policy}"' + (" (default)" if policy == DEFAULT_KEEP else "")


def _mean_row(mean: Mean) -> tuple[str, ...]:
    return (mean.name, str(mean.requests), percent(mean.value), interval(mean))


def _group_row(group: Group) -> tuple[Any, ...]:
    flag = "NEVER USED" if group.never_used else ""
    used = group.used
    return (
        group.value,
        group.chunks,
        group.requests,
        group.necessary,
        percent(used.value),
        interval(used),
        flag,
    )


REQUEST_COLUMNS = (
    "compute ms",
    "claims",
    "fragile",
    "unsupported",
    "contradicted",
    "chunks",
    "unused",
)


def _request_cells(row: RequestRow) -> tuple[Any, ...]:
    ms = f"{row.compute_ms:.0f}"
    return (
        row.label,
        ms,
        row.claims,
        row.fragile,
        row.unsupported,
        row.contradicted,
        row.contexts,
        row.unused,
    )


def render_table(report: Report) -> str:
    """The report as plain text for a terminal."""
    dist = "  ".join(f"{k}: {v}" for k, v in report.necessary_per_claim.items())
    out = [
        f"ENE report: {report.requests} requests ({report.failed} failed), {report.claims} "
        f"checkable claims, {report.contexts} chunks, {report.tokens} tokens",
        f"95% intervals: bootstrap over requests, {report.resamples} resamples, seed {report.seed}",
        *_table(("rate", "count", "value", "95% CI"), map(_rate_row, report.rates)),
        "",
        f"necessary chunks per supported claim: {dist}",
    ]
    if report.citations:
        cites = ("citations (ALCE, mean per answer)", "answers", "value", "95% CI")
        out += _table(cites, map(_mean_row, report.citations))
    if report.pruning:
        saving = ("tokens pruning would save", "tokens", "value", "95% CI")
        out += _table(saving, (_rate_row(r, policy_label(r.name)) for r in report.pruning))
    if report.by_rank:
        out += _table(
            ("unused by rank", "count", "value", "95% CI"), map(_rate_row, report.by_rank)
        )
    for key, groups in report.breakdowns.items():
        header = (f"metadata {key}", "chunks", "requests", "necessary", "used", "95% CI", "")
        out += _table(header, map(_group_row, groups))
    for title, rows in (("slowest", report.slowest), ("most fragile", report.most_fragile)):
        if rows:  # ms: each request's own evaluation time (stats.compute_ms)
            out += _table((f"{title} requests", *REQUEST_COLUMNS), map(_request_cells, rows))
    out += [f"note: {w}" for w in report.warnings]
    return "\n".join(out)
