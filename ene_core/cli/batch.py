"""``ene eval``: JSONL requests in, ENG JSONL out, and nothing lost on the way.

Reading the input is :mod:`ene_core.cli.inputs`. A bad line (not UTF-8, not JSON, not a request)
is reported with its number and reason; every good line is still evaluated, and
:class:`RunSummary` keeps the account. Writing the output safely (atomic replace, ``--resume``) is
:mod:`ene_core.cli.outputs`.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Literal

from ..engine.necessity import Engine
from .inputs import Item, RawLine, parse_line
from .progress import Progress

if TYPE_CHECKING:
    from .outputs import ResumeState

MAX_LISTED = 10  # problems repeated in the end-of-run summary


# -- evaluating ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What became of one input line; plain values, so it crosses process boundaries (Ray).

    ``kind`` is ``ok`` (``text`` is the ENG JSON), ``bad`` (not a request; ``text`` says why),
    ``failed`` (the evaluation raised) or ``blank`` (an empty line: nothing written).
    ``tally`` is (checkable claims, unsupported, contradicted, unchecked sentences) of an ``ok``
    outcome;
    ``citations`` its (citation recall, precision) when the answer has markers.
    """

    kind: Literal["ok", "bad", "failed", "blank"]
    text: str = ""
    id: str | None = None
    tally: tuple[int, int, int, int] = (0, 0, 0, 0)
    citations: tuple[float, float] | None = None


def evaluate_items(engine: Engine, items: Sequence[Item]) -> list[Outcome]:
    """Evaluate the requests among ``items`` in one engine batch; one outcome per item."""
    requests = [item.request for item in items if item.request is not None]
    results = iter(engine.evaluate_many(requests, return_exceptions=True))
    outcomes = []
    for item in items:
        if item.request is None:
            outcomes.append(Outcome("blank") if item.blank else Outcome("bad", item.problem or ""))
            continue
        result = next(results)
        try:
            if isinstance(result, BaseException):
                raise result
            text = result.to_json()
        except Exception as exc:  # one line fails alone; the run and its other lines go on
            message = f"{type(exc).__name__}: {exc}"
            outcomes.append(Outcome("failed", message, item.request.id))
            continue
        c = result.counts
        tally = (
            c.checkable_claims,
            c.unsupported,
            c.contradicted,
            result.stats.unchecked_sentences,
        )
        recall, precision = result.citation_recall, result.citation_precision
        cites = None if recall is None or precision is None else (recall, precision)
        outcomes.append(Outcome("ok", text, item.request.id, tally, cites))
    return outcomes


def evaluate_lines(engine: Engine, lines: Sequence[RawLine]) -> list[Outcome]:
    """Evaluate input lines (one request each) in one engine batch; one outcome per line."""
    return evaluate_items(engine, [parse_line(n, line) for n, line in enumerate(lines, 1)])


# -- the run's account -----------------------------------------------------------------------------
class StopRun(Exception):
    """``--on-error fail`` met a bad or failed line: the run ends there."""


@dataclass
class RunSummary:
    """What a run did; ``exit_code`` is the ``ene eval`` exit status it deserves."""

    evaluated: int = 0
    skipped: int = 0  # bad lines: not UTF-8, not JSON, not a request
    failed: int = 0  # the evaluation raised
    already: int = 0  # --resume: already in the output
    already_errors: int = 0  # --resume: of those, error records (bad or failed lines)
    claims: int = 0
    unsupported: int = 0
    contradicted: int = 0
    unchecked: int = 0  # sentences that cannot be a claim without a question (stats)
    cited: int = 0  # answers with citation markers, and the sums of their ALCE scores
    citation_recall: float = 0.0
    citation_precision: float = 0.0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # the first MAX_LISTED, as reported
    interrupted: bool = False
    stopped: str | None = None  # --on-error fail: the problem that ended the run

    @property
    def counts(self) -> dict[str, int]:
        return {"ok": self.evaluated, "failed": self.failed, "bad_lines": self.skipped}

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 2 if self.skipped or self.failed or self.already_errors else 0

    def line(self) -> str:
        """The one-line summary printed at the end of a run."""
        rate = self.evaluated / self.seconds if self.seconds > 0 else 0.0
        parts = [
            f"{_n(self.evaluated, 'request')} evaluated, {_n(self.skipped, 'line')} skipped, "
            f"{self.failed} failed"
            + (f", {self.already} already in the output" if self.already else "")
            + (f" ({self.already_errors} as error records)" if self.already_errors else ""),
            f"{_n(self.claims, 'claim')}: {self.unsupported} unsupported, "
            f"{self.contradicted} contradicted, {self.unchecked} unchecked",
            f"{_duration(self.seconds)} ({rate:.1f} requests/s)",
        ]
        if self.cited:  # means over the answers with markers, as ALCE averages
            parts.insert(
                2,
                f"citations ({_n(self.cited, 'answer')}): recall "
                f"{self.citation_recall / self.cited:.3f}, precision "
                f"{self.citation_precision / self.cited:.3f}",
            )
        return " · ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


class OutcomeWriter:
    """Writes outcomes as ``ene eval`` output, in the order given, and keeps the account.

    A bad or failed line is reported at once (``progress.message``); ``on_error`` then decides:
    ``skip`` goes on, ``record`` also writes ``{"line", "error"}`` (and ``id``) in its place,
    ``fail`` raises :class:`StopRun`.
    """

    def __init__(
        self,
        out: IO[str] | Any,
        *,
        on_error: str = "skip",
        errors: IO[str] | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.out = out
        self.on_error = on_error
        self.progress = progress or Progress(None, enabled=False, stream=errors)
        self.summary = RunSummary()
        self.started = time.monotonic()

    @property
    def counts(self) -> dict[str, int]:
        return self.summary.counts

    def write(self, number: int, outcome: Outcome) -> None:
        """Write the outcome of input line ``number`` (1-based)."""
        s = self.summary
        if outcome.kind == "ok":
            s.evaluated += 1
            claims, unsupported, contradicted, unchecked = outcome.tally
            s.claims += claims
            s.unsupported += unsupported
            s.contradicted += contradicted
            s.unchecked += unchecked
            if outcome.citations is not None:
                s.cited += 1
                s.citation_recall += outcome.citations[0]
                s.citation_precision += outcome.citations[1]
            self.out.write(outcome.text + "\n")
            return
        if outcome.kind == "blank":
            return
        bad = outcome.kind == "bad"
        if bad:
            s.skipped += 1
        else:
            s.failed += 1
        problem = f"line {number}: {'skipped' if bad else 'failed'}: {outcome.text}"
        if len(s.problems) < MAX_LISTED:
            s.problems.append(problem)
        self.progress.message(f"ene eval: {problem}")
        if self.on_error == "fail":
            s.stopped = problem
            raise StopRun(problem)
        if self.on_error == "record":
            record: dict[str, Any] = {"line": number, "error": outcome.text}
            if not bad:
                record["id"] = outcome.id
            self.out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def skip_done(self, kinds: Sequence[str]) -> None:
        """Lines already in the output (``--resume``): ``"ok"`` or ``"error"`` records."""
        self.summary.already += len(kinds)
        self.summary.already_errors += sum(kind == "error" for kind in kinds)

    def finish(self) -> RunSummary:
        self.summary.seconds = time.monotonic() - self.started
        return self.summary


def eval_lines(
    engine: Engine,
    stream: Iterable[RawLine],
    out: IO[str] | Any,
    *,
    on_error: str = "skip",
    chunk: int = 32,
    errors: IO[str] | None = None,
    progress: Progress | None = None,
    resume: ResumeState | None = None,
) -> RunSummary:
    """Evaluate a JSONL stream into ENG JSONL, ``chunk`` lines per engine batch, in order.

    Lines already in ``resume`` are skipped. Ctrl-C (or SIGTERM turned into
    ``KeyboardInterrupt``) and ``--on-error fail`` end the run cleanly: what was evaluated is
    written, and the summary says why it ended.
    """
    writer = OutcomeWriter(out, on_error=on_error, errors=errors, progress=progress)
    lines = enumerate(stream, start=1)
    try:
        while batch := list(itertools.islice(lines, chunk)):
            items = [parse_line(number, line) for number, line in batch]
            done = [resume.take(item) if resume is not None else None for item in items]
            writer.skip_done([kind for kind in done if kind is not None])
            todo = [item for item, kind in zip(items, done, strict=True) if kind is None]
            for item, outcome in zip(todo, evaluate_items(engine, todo), strict=True):
                writer.write(item.number, outcome)
            writer.progress.advance(len(batch))
    except KeyboardInterrupt:
        writer.summary.interrupted = True
    except StopRun:
        pass
    return writer.finish()
