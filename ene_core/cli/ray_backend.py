"""``ene eval --backend ray``: evaluate JSONL requests on a Ray cluster with Ray Data.

Ray Data reads the input files (local paths, a directory of shards, or any URI pyarrow can open,
e.g. ``s3://bucket/requests/``), splits them into lines exactly as Python reads text files, and
sends batches of lines to a pool of :class:`EvaluationActor` actors, each of which loads the
oracle once. With ``preserve_order`` the driver receives the outcomes in input order and writes
them with the same :class:`~ene_core.cli.batch.OutcomeWriter` as the single-process path, so the
output lines are the same (up to ``stats``, which records timing and cache hits).

The same code runs on a laptop (``ray.init()`` starts a local instance) and on a cluster (set
``RAY_ADDRESS`` or pass ``address``; see docs/scale-out.md).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from typing import IO, Any

from ..errors import EneError
from .batch import Outcome, OutcomeWriter, RunSummary, evaluate_lines
from .inputs import NotText, RawLine, decode_line, split_byte_lines
from .outputs import AtomicOutput
from .progress import Progress


class EvaluationActor:
    """A Ray Data callable class: builds the engine (loads the oracle) once per actor."""

    def __init__(self, options: dict[str, Any]) -> None:
        from ..service.options import build_engine

        self.engine = build_engine(argparse.Namespace(**options))

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        lines: list[RawLine] = [
            NotText(str(problem)) if problem else str(line)
            for line, problem in zip(batch["line"], batch["problem"], strict=True)
        ]
        outcomes = evaluate_lines(self.engine, lines)
        return {
            "kind": [o.kind for o in outcomes],
            "text": [o.text for o in outcomes],
            "id": [json.dumps(o.id) for o in outcomes],
            "tally": [json.dumps(o.tally) for o in outcomes],
            "citations": [json.dumps(o.citations) for o in outcomes],
        }


def split_lines(row: dict[str, Any]) -> list[dict[str, str]]:
    """One file's bytes as lines, split and decoded the way the local path reads them
    (:func:`ene_core.cli.inputs.read_lines`); a line that is not UTF-8 carries its ``problem``."""
    rows = []
    for n, raw in enumerate(split_byte_lines(row["bytes"])):
        line = decode_line(raw, first=n == 0)
        if isinstance(line, NotText):
            rows.append({"line": "", "problem": line.reason})
        else:
            rows.append({"line": line, "problem": ""})
    return rows


def _pool_size(ray: Any, workers: int | None, num_gpus: float) -> int | tuple[int, int]:
    """A fixed pool of ``workers`` actors, or an autoscaling one as large as the cluster."""
    if workers is not None:
        return max(1, workers)
    resources = ray.cluster_resources()
    if num_gpus > 0:
        return (1, max(1, int(resources.get("GPU", 0) // num_gpus)))
    return (1, max(1, int(resources.get("CPU", 1))))


def eval_with_ray(
    paths: Sequence[str],
    output: str,
    *,
    engine_options: dict[str, Any],
    on_error: str = "skip",
    workers: int | None = None,
    num_gpus_per_worker: float = 0.0,
    batch_size: int = 32,
    address: str | None = None,
    errors: IO[str] | None = None,
    progress: Progress | None = None,
) -> RunSummary:
    """Evaluate the JSONL ``paths`` (in order) into ``output``; returns the run's summary.

    ``engine_options`` are the ``ene eval`` engine flags
    (:func:`ene_core.service.options.engine_options`). Connects to ``address`` (or
    ``RAY_ADDRESS``), else starts a local Ray, unless Ray is already initialised in this process.
    ``output`` is replaced only when the run ends (:class:`~ene_core.cli.outputs.AtomicOutput`).
    """
    try:
        import ray
    except ImportError:
        raise EneError("--backend ray needs Ray: pip install 'ene[ray]'") from None
    if not ray.is_initialized():
        if address or os.environ.get("RAY_ADDRESS"):
            ray.init(address=address)
        else:  # a local instance (or the one `ray start` left running on this machine)
            ray.init(include_dashboard=False)
    context = ray.data.DataContext.get_current()
    previous = context.execution_options.preserve_order
    context.execution_options.preserve_order = True
    try:
        dataset = (
            # reading and splitting are light: zero CPUs, so a pool of actors that holds
            # every CPU cannot starve them (a deadlock with --workers = number of CPUs)
            ray.data.read_binary_files(list(paths), num_cpus=0)
            .flat_map(split_lines, num_cpus=0)
            .map_batches(
                EvaluationActor,
                fn_constructor_kwargs={"options": engine_options},
                batch_size=batch_size,
                concurrency=_pool_size(ray, workers, num_gpus_per_worker),
                num_gpus=num_gpus_per_worker or None,
            )
        )
        return _write(dataset, output, on_error, errors, progress, batch_size)
    finally:
        context.execution_options.preserve_order = previous


def _write(
    dataset: Any,
    output: str,
    on_error: str,
    errors: IO[str] | None,
    progress: Progress | None,
    batch_size: int,
) -> RunSummary:
    """Drain the ordered outcomes into ``output`` (the same writer as the local path)."""
    from .batch import StopRun

    out = AtomicOutput(output)
    writer = OutcomeWriter(out, on_error=on_error, errors=errors, progress=progress)
    try:
        for number, row in enumerate(dataset.iter_rows(), start=1):
            claims, unsupported, contradicted, unchecked = json.loads(row["tally"])
            tally = (claims, unsupported, contradicted, unchecked)
            recall_precision = json.loads(row["citations"])
            cites = None if recall_precision is None else tuple(recall_precision)
            outcome = Outcome(row["kind"], row["text"], json.loads(row["id"]), tally, cites)
            writer.write(number, outcome)
            if number % batch_size == 0:
                writer.progress.advance(batch_size)
    except KeyboardInterrupt:
        writer.summary.interrupted = True
    except StopRun:
        pass
    except BaseException:
        out.discard()
        raise
    summary = writer.finish()
    if summary.interrupted:
        out.interrupted()
    else:
        out.commit()
    return summary
