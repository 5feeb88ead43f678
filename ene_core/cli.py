"""The ``ene`` command line: ``ene eval``, ``ene evaluate``, ``ene schema``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from typing import IO, Any

from .engine import NecessityEngine, Request
from .errors import EneError
from .graph import EvidenceNecessityGraph


def build_engine(args: argparse.Namespace) -> NecessityEngine:
    """The engine the command line asked for (``--oracle keyword`` needs no model)."""
    if args.oracle == "keyword":
        from .testing import KeywordOracle

        return NecessityEngine(KeywordOracle(), args.threshold)
    from .oracle import NLIOracle

    oracle = NLIOracle(args.model, device=args.device, batch_size=args.batch_size)
    return NecessityEngine(oracle, args.threshold)


def read_requests(
    stream: IO[str], on_error: str, errors: IO[str]
) -> Iterator[tuple[int, Request | str]]:
    """``(line number, request)`` per input line, or ``(line number, error message)``."""
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise EneError("each line must be a JSON object")
            yield number, Request.from_mapping(item)
        except (json.JSONDecodeError, EneError) as exc:
            message = f"line {number}: {exc}"
            if on_error == "fail":
                raise SystemExit(f"ene eval: {message}") from None
            print(f"ene eval: skipped {message}", file=errors)
            yield number, message


def eval_lines(
    engine: NecessityEngine,
    stream: IO[str],
    out: IO[str],
    *,
    on_error: str = "skip",
    chunk: int = 32,
    errors: IO[str] | None = None,
) -> dict[str, int]:
    """Evaluate a JSONL stream into ENG JSONL, ``chunk`` requests per engine batch, in order."""
    errors = errors or sys.stderr
    counts = {"ok": 0, "failed": 0, "bad_lines": 0}
    started = time.monotonic()
    pending: list[tuple[int, Request | str]] = []

    def flush() -> None:
        requests = [r for _, r in pending if isinstance(r, Request)]
        outcomes = iter(engine.evaluate_many(requests, return_exceptions=True))
        for number, item in pending:
            if isinstance(item, str):
                counts["bad_lines"] += 1
                if on_error == "record":
                    out.write(json.dumps({"line": number, "error": item}) + "\n")
                continue
            outcome = next(outcomes)
            if isinstance(outcome, BaseException):
                counts["failed"] += 1
                message = f"line {number}: {type(outcome).__name__}: {outcome}"
                if on_error == "fail":
                    raise SystemExit(f"ene eval: {message}")
                print(f"ene eval: failed {message}", file=errors)
                if on_error == "record":
                    out.write(json.dumps({"line": number, "id": item.id, "error": message}) + "\n")
                continue
            counts["ok"] += 1
            out.write(outcome.to_json() + "\n")
        pending.clear()
        if errors.isatty():
            done = sum(counts.values())
            rate = done / max(time.monotonic() - started, 1e-9)
            print(f"\rene eval: {done} requests, {rate:.1f}/s", end="", file=errors, flush=True)

    for entry in read_requests(stream, on_error, errors):
        pending.append(entry)
        if len(pending) >= chunk:
            flush()
    if pending:
        flush()
    lead = "\r" if errors.isatty() else ""
    print(
        f"{lead}ene eval: {counts['ok']} evaluated, {counts['failed']} failed, "
        f"{counts['bad_lines']} bad lines",
        file=errors,
    )
    return counts


def _cmd_eval(args: argparse.Namespace) -> int:
    engine = build_engine(args)
    with open(args.input, encoding="utf-8") as src, open(args.output, "w", encoding="utf-8") as out:
        counts = eval_lines(engine, src, out, on_error=args.on_error)
    return 0 if counts["failed"] == 0 or args.on_error != "fail" else 1


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
    lines = [f"ENG {eng.schema_version}  model={eng.verifier.model}  tau={eng.verifier.threshold}"]
    for claim in eng.claims:
        if not claim.checkable:
            lines.append(f"  [{claim.index}] ({claim.kind}, not checked) {claim.text}")
            continue
        need = ", ".join(f"#{i}" for i in claim.necessary) or "-"
        lines.append(
            f"  [{claim.index}] {claim.classification:<12} p={claim.p_entail:.2f}  "
            f"needs {need:<10} {claim.text}"
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


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ene", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval", help="evaluate a JSONL file of requests into ENG JSONL")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--on-error", choices=["skip", "fail", "record"], default="skip")
    _add_engine_options(p)
    p.set_defaults(func=_cmd_eval)

    p = sub.add_parser("evaluate", help="evaluate one answer and print its ENG")
    p.add_argument("--answer", required=True)
    p.add_argument("--context", action="append", help="a retrieved chunk (repeat)")
    p.add_argument("--question")
    p.add_argument("--json", action="store_true", help="print the ENG as JSON")
    _add_engine_options(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("schema", help="print the ENG JSON Schema")
    p.set_defaults(func=_cmd_schema)
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
