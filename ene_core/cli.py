"""The ``ene`` command line: ``ene eval``, ``evaluate``, ``report``, ``view``, ``schema``,
``serve``."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal

from .engine import Engine, NecessityEngine, Request
from .errors import EneError
from .graph import EvidenceNecessityGraph


def build_engine(args: argparse.Namespace) -> Engine:
    """The engine the command line asked for (``--oracle keyword`` needs no model; ``--remote
    URL`` is an ``ene serve`` service, whose own verifier is used)."""
    if getattr(args, "remote", None):
        from .remote import RemoteEngine

        return RemoteEngine(args.remote, timeout=args.remote_timeout)
    if args.oracle == "keyword":
        from .testing import KeywordOracle

        return NecessityEngine(KeywordOracle(), args.threshold)
    from .oracle import NLIOracle

    oracle = NLIOracle(args.model, device=args.device, batch_size=args.batch_size)
    return NecessityEngine(oracle, args.threshold)


ENGINE_OPTIONS = ("oracle", "model", "threshold", "batch_size", "device")


def engine_options(args: argparse.Namespace) -> dict[str, Any]:
    """The engine flags as a plain dict: ``build_engine(argparse.Namespace(**options))``."""
    return {name: getattr(args, name) for name in ENGINE_OPTIONS}


@dataclass(frozen=True)
class Outcome:
    """What became of one input line; plain strings, so it crosses process boundaries (Ray).

    ``kind`` is ``ok`` (``text`` is the ENG JSON), ``bad`` (not a request), ``failed`` (the
    evaluation raised) or ``blank`` (an empty line: nothing written).
    """

    kind: Literal["ok", "bad", "failed", "blank"]
    text: str = ""
    id: str | None = None


def parse_request(line: str) -> Request:
    """One JSONL line as a request; raises ``json.JSONDecodeError`` or :class:`EneError`."""
    item = json.loads(line)
    if not isinstance(item, dict):
        raise EneError("each line must be a JSON object")
    return Request.from_mapping(item)


def evaluate_lines(engine: Engine, lines: Sequence[str]) -> list[Outcome]:
    """Evaluate input lines (one request each) in one engine batch; one outcome per line."""
    parsed: list[Request | Outcome] = []
    for line in lines:
        if not line.strip():
            parsed.append(Outcome("blank"))
            continue
        try:
            parsed.append(parse_request(line))
        except (json.JSONDecodeError, EneError) as exc:
            parsed.append(Outcome("bad", str(exc)))
    requests = [r for r in parsed if isinstance(r, Request)]
    results = iter(engine.evaluate_many(requests, return_exceptions=True))
    outcomes = []
    for item in parsed:
        if isinstance(item, Outcome):
            outcomes.append(item)
            continue
        result = next(results)
        if isinstance(result, BaseException):
            outcomes.append(Outcome("failed", f"{type(result).__name__}: {result}", item.id))
        else:
            outcomes.append(Outcome("ok", result.to_json(), item.id))
    return outcomes


class OutcomeWriter:
    """Writes outcomes as ``ene eval`` output, in the order given, and counts them."""

    def __init__(self, out: IO[str], *, on_error: str = "skip", errors: IO[str] | None = None):
        self.out = out
        self.on_error = on_error
        self.errors = errors or sys.stderr
        self.counts = {"ok": 0, "failed": 0, "bad_lines": 0}
        self.started = time.monotonic()

    def write(self, number: int, outcome: Outcome) -> None:
        """Write the outcome of input line ``number`` (1-based); raise SystemExit on ``fail``."""
        if outcome.kind == "ok":
            self.counts["ok"] += 1
            self.out.write(outcome.text + "\n")
            return
        if outcome.kind == "blank":
            return
        bad = outcome.kind == "bad"
        self.counts["bad_lines" if bad else "failed"] += 1
        message = f"line {number}: {outcome.text}"
        if self.on_error == "fail":
            raise SystemExit(f"ene eval: {message}")
        print(f"ene eval: {'skipped' if bad else 'failed'} {message}", file=self.errors)
        if self.on_error == "record":
            record = (
                {"line": number, "error": message}
                if bad
                else {"line": number, "id": outcome.id, "error": message}
            )
            self.out.write(json.dumps(record) + "\n")

    def progress(self) -> None:
        if self.errors.isatty():
            done = sum(self.counts.values())
            rate = done / max(time.monotonic() - self.started, 1e-9)
            print(
                f"\rene eval: {done} requests, {rate:.1f}/s", end="", file=self.errors, flush=True
            )

    def finish(self) -> dict[str, int]:
        lead = "\r" if self.errors.isatty() else ""
        c = self.counts
        summary = f"{c['ok']} evaluated, {c['failed']} failed, {c['bad_lines']} bad lines"
        print(f"{lead}ene eval: {summary}", file=self.errors)
        return c


def eval_lines(
    engine: Engine,
    stream: Iterable[str],
    out: IO[str],
    *,
    on_error: str = "skip",
    chunk: int = 32,
    errors: IO[str] | None = None,
) -> dict[str, int]:
    """Evaluate a JSONL stream into ENG JSONL, ``chunk`` lines per engine batch, in order."""
    writer = OutcomeWriter(out, on_error=on_error, errors=errors)
    lines = iter(stream)
    number = 1
    while batch := list(itertools.islice(lines, chunk)):
        for offset, outcome in enumerate(evaluate_lines(engine, batch)):
            writer.write(number + offset, outcome)
        number += len(batch)
        writer.progress()
    return writer.finish()


def input_files(path: str) -> list[str]:
    """A JSONL file, or a directory's shards in name order (hidden and ``_`` files skipped)."""
    if "://" in path or not os.path.isdir(path):
        return [path]
    names = sorted(n for n in os.listdir(path) if not n.startswith((".", "_")))
    files = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
    if not files:
        raise EneError(f"{path} is a directory with no input files")
    return files


def read_lines(paths: Sequence[str]) -> Iterator[str]:
    """The lines of ``paths`` one after another (line numbers run on across shards)."""
    for path in paths:
        with open(path, encoding="utf-8") as stream:
            yield from stream


def _cmd_eval(args: argparse.Namespace) -> int:
    files = input_files(args.input)
    if args.remote and args.backend == "ray":
        raise EneError("--remote evaluates on an ene serve service: drop --backend ray")
    if args.backend == "ray":
        from ene_integrations.ray import eval_with_ray

        counts = eval_with_ray(
            files,
            args.output,
            engine_options=engine_options(args),
            on_error=args.on_error,
            workers=args.workers,
            num_gpus_per_worker=args.num_gpus_per_worker,
            address=args.ray_address,
        )
    else:
        engine = build_engine(args)
        with open(args.output, "w", encoding="utf-8") as out:
            counts = eval_lines(engine, read_lines(files), out, on_error=args.on_error)
    if args.report:
        _write_report(args.output, args.report, title=f"ENE report: {args.input}")
    return 0 if counts["failed"] == 0 or args.on_error != "fail" else 1


def _write_report(results: str, html_path: str | None, *, title: str, seed: int = 0) -> Any:
    from .report import read_results, summarize
    from .viewer import render_html

    engs, failed = read_results(results)
    report = summarize(engs, failed, seed=seed)
    if html_path:
        with open(html_path, "w", encoding="utf-8") as out:
            out.write(render_html(engs, report=report, title=title))
        print(f"ene: wrote {html_path}", file=sys.stderr)
    return report


def _cmd_report(args: argparse.Namespace) -> int:
    report = _write_report(
        args.results, args.html, title=f"ENE report: {args.results}", seed=args.seed
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.to_table())
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    from .report import read_results
    from .viewer import render_html

    engs, _ = read_results(args.eng)
    if not engs:
        raise EneError(f"{args.eng} holds no ENG")
    output = args.output or os.path.splitext(args.eng)[0] + ".html"
    title = f"ENG {engs[0].id or os.path.basename(args.eng)}" if len(engs) == 1 else args.eng
    with open(output, "w", encoding="utf-8") as out:
        out.write(render_html(engs, title=title, max_requests=args.limit))
    print(output)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    engine = build_engine(args)
    eng = engine.evaluate(args.answer, args.context or [], args.question)
    print(eng.to_json(indent=2) if args.json else render(eng))
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(EvidenceNecessityGraph.json_schema(), indent=2))
    return 0


def render(eng: EvidenceNecessityGraph) -> str:
    """A readable plain-text view of one graph."""
    v = eng.verifier
    tau_c = (
        ""
        if v.contradiction_threshold in (None, v.threshold)
        else (f"  tau_contra={v.contradiction_threshold}")
    )
    lines = [f"ENG {eng.schema_version}  model={v.model}  tau={v.threshold}{tau_c}"]
    for claim in eng.claims:
        if not claim.checkable:
            lines.append(f"  [{claim.index}] ({claim.kind}, not checked) {claim.text}")
            continue
        if claim.status == "contradicted":  # show the contradiction and who contradicts it
            prob, edge, chunks = "p(contra)", "by", claim.contradicted_by
            value = claim.p_contra
        else:
            prob, edge, chunks = "p(entail)", "needs", claim.necessary
            value = claim.p_entail
        where = ", ".join(f"#{i}" for i in chunks) or "-"
        lines.append(
            f"  [{claim.index}] {claim.classification:<12} {prob}={value:.2f}  "
            f"{edge:<5} {where:<10} {claim.text}"
        )
    for ctx in eng.contexts:
        mark = "used" if ctx.used else "UNUSED"
        preview = ctx.text[:70].replace("\n", " ")
        lines.append(f"  #{ctx.index} {mark:<6} nec={ctx.necessity_score:.2f}  {preview}")
    c, s = eng.counts, eng.stats
    lines.append(
        f"  {c.supported}/{c.checkable_claims} supported, {c.contexts_unused}/{c.contexts} "
        f"contexts unused ({c.tokens_saved} tokens), {s.oracle_checks} checks, "
        f"{s.forward_pairs} forward pairs, {s.duration_ms:.0f} ms"
    )
    lines.extend(f"  warning: {w}" for w in eng.warnings)
    return "\n".join(lines)


def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", help="local NLI model dir or cached id (default: ene-nli-mini)")
    parser.add_argument("--threshold", type=float, help="decision threshold tau")
    parser.add_argument("--batch-size", type=int, help="model rows per forward pass")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda if available)")
    parser.add_argument(
        "--oracle",
        choices=["nli", "keyword"],
        default="nli",
        help="'keyword' is the transparent test oracle (no model; plumbing only)",
    )


def _cmd_serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from .serve import LIMITS, TOKEN_ENV, Limits, ServeConfig, start, stop

    token = args.token or os.environ.get(TOKEN_ENV) or None
    if not token and args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"ene serve: warning: {args.host} without a token (--token)", file=sys.stderr)
    address = args.address or os.environ.get("RAY_ADDRESS")
    if args.detach and not address:
        raise EneError("--detach leaves the service on a cluster: pass --address (or RAY_ADDRESS)")
    config = ServeConfig(
        replicas=args.replicas,
        min_replicas=args.min_replicas,
        max_replicas=args.max_replicas,
        num_cpus=args.num_cpus,
        num_gpus=args.num_gpus,
        max_batch_size=args.max_batch_size,
        batch_wait_ms=args.batch_wait_ms,
        limits=Limits(**{f: getattr(args, f) for f in LIMITS if getattr(args, f) is not None}),
    )
    url = start(
        engine_options(args), config, host=args.host, port=args.port, address=address, token=token
    )
    stopping = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # after Ray's start, which sets its own
        signal.signal(sig, lambda *_: stopping.set())
    print(f"ene serve: {url} (POST /v1/evaluate, GET /v1/info, GET /healthz)", flush=True)
    if args.detach:
        return 0
    try:
        while not stopping.wait(0.5):
            pass
    finally:
        print("ene serve: stopping", file=sys.stderr, flush=True)
        stop(everything=not address)
    return 0


def _add_serve_parser(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve the engine over HTTP on Ray Serve (needs ene[ray])")
    p.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    p.add_argument("--address", help="Ray cluster (default: RAY_ADDRESS, else a local Ray)")
    p.add_argument("--token", help="bearer token clients must send (default: $ENE_SERVE_TOKEN)")
    p.add_argument("--replicas", type=int, default=1, help="replicas (default 1)")
    p.add_argument("--min-replicas", type=int, help="autoscaling: fewest replicas")
    p.add_argument("--max-replicas", type=int, help="autoscaling: most replicas")
    p.add_argument("--num-cpus", type=float, default=1.0, help="CPUs per replica (default 1)")
    p.add_argument("--num-gpus", type=float, default=0.0, help="GPUs per replica (default 0)")
    p.add_argument(
        "--max-batch-size", type=int, default=64, help="requests per engine batch (default 64)"
    )
    p.add_argument(
        "--batch-wait-ms", type=float, default=5.0, help="wait to fill a batch (default 5 ms)"
    )
    for flag, text in (  # defaults: ene_core.serve.Limits
        ("--max-body-bytes", "bytes in one HTTP body (default 16 MiB)"),
        ("--max-requests", "requests in one POST (default 256)"),
        ("--max-contexts", "contexts in one request (default 256)"),
        ("--max-context-chars", "characters in one context (default 100000)"),
    ):
        p.add_argument(flag, type=int, help=f"limit: {text}")
    p.add_argument(
        "--detach", action="store_true", help="with --address: deploy, leave it running, exit"
    )
    _add_engine_options(p)
    p.set_defaults(func=_cmd_serve)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ene", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval", help="evaluate a JSONL file of requests into ENG JSONL")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--on-error", choices=["skip", "fail", "record"], default="skip")
    p.add_argument("--report", metavar="HTML", help="also write the HTML report of the results")
    p.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help="'ray' evaluates on a Ray cluster (or a local one) with Ray Data; needs ene[ray]",
    )
    p.add_argument("--workers", type=int, help="ray: evaluation actors (default: autoscale)")
    p.add_argument(
        "--num-gpus-per-worker", type=float, default=0.0, help="ray: GPUs per actor (default 0)"
    )
    p.add_argument("--ray-address", help="ray: cluster address (default: RAY_ADDRESS or local)")
    p.add_argument(
        "--remote",
        metavar="URL",
        help="evaluate on an `ene serve` service (its verifier; token from $ENE_SERVE_TOKEN)",
    )
    p.add_argument(
        "--remote-timeout", type=float, default=60.0, help="remote: seconds per call (default 60)"
    )
    _add_engine_options(p)
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser("report", help="aggregate statistics over an ene eval output")
    p.add_argument("results", help="ENG JSONL written by ene eval")
    p.add_argument("--html", metavar="HTML", help="also write the HTML report")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser("view", help="write a self-contained HTML view of ENGs")
    p.add_argument("eng", help="an ENG JSON file or ENG JSONL")
    p.add_argument("-o", "--output", help="HTML file (default: next to the input)")
    p.add_argument("--limit", type=int, default=200, help="most requests shown (default 200)")
    p.set_defaults(func=_cmd_view)

    p = sub.add_parser("evaluate", help="evaluate one answer and print its ENG")
    p.add_argument("--answer", required=True)
    p.add_argument("--context", action="append", help="a retrieved chunk (repeat)")
    p.add_argument("--question")
    p.add_argument("--json", action="store_true", help="print the ENG as JSON")
    _add_engine_options(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("schema", help="print the ENG JSON Schema")
    p.set_defaults(func=_cmd_schema)

    _add_serve_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args: Any = make_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except EneError as exc:
        print(f"ene: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
