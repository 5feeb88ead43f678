"""The ``ene`` command line: ``ene eval``, ``evaluate``, ``report``, ``view``, ``schema``,
``serve``, ``calibrate``.

Each subcommand is an ``_add_<name>`` function that declares its arguments and a ``_cmd_<name>``
function that runs it; the heavy modules (torch and transformers through the oracle, ray, rich)
are imported inside the commands, so ``ene --help`` and argument errors return at once.
Exit status: 0 done, 1 usage or input error, 2 ``ene eval`` skipped or failed some lines,
130 interrupted. A user error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import EneError
from ..service.options import build_engine, engine_options
from ..verifiers.protocol import RULES

if TYPE_CHECKING:
    from ..engine.necessity import Engine
    from ..graph import EvidenceNecessityGraph
    from .batch import RunSummary
    from .outputs import ResumeState

EXIT_OK, EXIT_USAGE, EXIT_PARTIAL, EXIT_INTERRUPTED = 0, 1, 2, 130

EXAMPLE_LINES = (
    '{"id": "q1", "question": "Where is Paris?", "answer": "Paris is in France [1].", '
    '"contexts": ["Paris is the capital of France.", "Bananas are yellow."]}',
    '{"id": "q2", "answer": "The tower is 330 metres tall.", "contexts": [{"id": "doc-7", '
    '"text": "The tower is 330 metres tall.", "metadata": {"source": "wiki"}}]}',
    '{"id": "q3", "answer": "Owls hunt at night.", "contexts": []}',
)

EVAL_EPILOG = f"""\
input: JSON Lines, UTF-8, one request per line (blank lines are ignored):
  id         optional  string or number naming the request (--resume matches on it)
  question   optional  the user's question
  answer     required  the answer to check; [n] markers cite contexts (1-based)
  contexts   required  the retrieved chunks, in retrieval order (may be []): each a
                       string or {{"id": ..., "text": ..., "metadata": {{...}}}}
                       (id and metadata optional; metadata feeds the report)
  Other fields are ignored. INPUT may be a directory of .jsonl shards.

example (3 requests):
  {EXAMPLE_LINES[0]}
  {EXAMPLE_LINES[1]}
  {EXAMPLE_LINES[2]}

output: one ENG JSON object per request, in input order (`ene schema` has the
  format). A line that is not a request (not UTF-8, not JSON, missing fields) is
  reported on stderr with its number and reason and skipped; --on-error record
  writes {{"line": N, "error": "..."}} in its place, --on-error fail stops there.
  OUTPUT is written to a temporary file beside it and renamed at the end: an
  existing OUTPUT is replaced only by a finished run. OUTPUT may not be INPUT.

--resume: append to OUTPUT, skipping the requests already in it (by id; without an
  id by content), flushing every line; run the same command again after Ctrl-C or
  a killed job and it continues where it stopped, never writing a request twice.

progress: a bar on stderr (total, rate, ETA) when stderr is a terminal; none in CI
  ($CI set), in pipes or with --quiet. A one-line summary ends every run.

exit status:
  0    every line was evaluated
  1    usage or input error (OUTPUT untouched)
  2    some lines were skipped or failed; every other line was evaluated and written
  130  interrupted (Ctrl-C, SIGTERM): with --resume, run again to continue
"""


class _Parser(argparse.ArgumentParser):
    """argparse with ENE's exit status for usage errors (1, not argparse's 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# -- shared ---------------------------------------------------------------------------------------
def _add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", help="local NLI model directory (with config.json), default: ene-nli-mini"
    )
    parser.add_argument("--threshold", type=float, help="decision threshold tau")
    parser.add_argument(
        "--contradiction-threshold",
        type=float,
        help="contradiction threshold tau_c (default: the model's calibrated one, or --threshold)",
    )
    parser.add_argument("--batch-size", type=int, help="model rows per forward pass")
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda if available)")
    parser.add_argument(
        "--oracle",
        choices=["nli", "keyword", "judge", "seq2seq", "custom"],
        default="nli",
        help="the verifier: 'nli' (--model), 'judge' (an LLM judge: --judge-model), 'seq2seq' "
        "(a yes/no model such as Flan-T5: --model), 'custom' (a model with its own code, "
        "HHEM-style: --model, --trust-remote-code), 'keyword' (the transparent test oracle: no "
        "model; plumbing only)",
    )
    parser.add_argument(
        "--rules",
        metavar="SPEC",
        help="the engine's rules over the verifier's own (all for ene-nli-mini, none for any "
        "other): comma-separated all, none, NAME or no-NAME; names: " + ", ".join(RULES),
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        default=None,
        help="run a model's own Python code (HHEM-style models need it; never without this flag)",
    )
    nli = parser.add_argument_group("NLI verifier input (default: the model's ene_verifier.json)")
    nli.add_argument(
        "--nli-input",
        choices=["pair", "single"],
        help="'single': document, separator, claim as one string (grounding models)",
    )
    nli.add_argument(
        "--nli-window",
        type=int,
        metavar="TOKENS",
        help="read a long premise in windows of this many tokens; the most entailing counts",
    )
    nli.add_argument("--nli-stride", type=int, metavar="TOKENS", help="tokens between windows")
    seq2seq = parser.add_argument_group("seq2seq verifier (--oracle seq2seq)")
    seq2seq.add_argument(
        "--seq2seq-prompt", help="the prompt, with {premise} and {hypothesis} (default: Flan's)"
    )
    seq2seq.add_argument(
        "--seq2seq-answers",
        metavar="YES,NO[,UNCLEAR]",
        help="the answer words (default yes,no; a third makes 'no' a contradiction)",
    )
    parser.add_argument(
        "--verifier-profile",
        metavar="PROFILE",
        help="thresholds from `ene calibrate` (a profile of this verifier; not with --threshold)",
    )
    judge = parser.add_argument_group("LLM judge (--oracle judge, --cascade judge)")
    judge.add_argument("--judge-model", help="the model name the chat-completions server knows")
    judge.add_argument(
        "--judge-url",
        help="the server's OpenAI-compatible base URL (default http://127.0.0.1:8000/v1)",
    )
    judge.add_argument(
        "--judge-key-env",
        metavar="NAME",
        help="environment variable holding the API key (default ENE_JUDGE_API_KEY)",
    )
    judge.add_argument("--judge-concurrency", type=int, help="requests in flight (default 8)")
    judge.add_argument("--judge-timeout", type=float, help="seconds per request (default 60)")
    judge.add_argument("--judge-cache", metavar="DIR", help="keep the judge's answers on disk")
    judge.add_argument(
        "--judge-three-way",
        action="store_true",
        default=None,
        help="ask for contradictions too (Yes / No / Unclear)",
    )
    cascade = parser.add_argument_group("cascade")
    cascade.add_argument(
        "--cascade",
        choices=["nli", "keyword", "judge", "seq2seq", "custom"],
        help="a second verifier for the pairs the first scores near a threshold (--cascade-band)",
    )
    cascade.add_argument("--cascade-band", type=float, help="default 0.1")
    cascade.add_argument("--cascade-model", help="--cascade nli: its model directory")
    parser.add_argument(
        "--citation-base",
        type=int,
        choices=[0, 1],
        default=1,
        help="number of the first chunk in the answer's [n] markers (default 1)",
    )


def _write_html(path: str, html: str, *, sources: Sequence[str]) -> None:
    """Write ``html`` to ``path`` atomically; never over one of ``sources``."""
    from .outputs import AtomicOutput, check_output

    check_output(path, sources)
    out = AtomicOutput(path)
    try:
        out.write(html)
    except BaseException:
        out.discard()
        raise
    out.commit()


def _write_report(
    results: str,
    html_path: str | None,
    *,
    title: str,
    seed: int = 0,
    sources: Sequence[str] = (),
) -> Any:
    from ..reports.report import read_results, summarize
    from ..reports.viewer import render_html

    engs, failed = read_results(results)
    report = summarize(engs, failed, seed=seed)
    if html_path:
        page = render_html(engs, report=report, title=title)
        _write_html(html_path, page, sources=[results, *sources])
        print(f"ene: wrote {html_path}", file=sys.stderr)
    return report


# -- ene eval -------------------------------------------------------------------------------------
def _add_eval(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate a JSONL file of requests into ENG JSONL",
        description="Evaluate a JSONL file of requests into ENG JSONL (one ENG per line).",
        epilog=EVAL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", help="JSONL requests (a file, or a directory of shards)")
    p.add_argument("-o", "--output", required=True, help="ENG JSONL to write")
    p.add_argument(
        "--on-error",
        choices=["skip", "fail", "record"],
        default="skip",
        help="a bad or failed line: skip it (default), stop there, or record it in the output",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run: append to OUTPUT, skipping the requests in it",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
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


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a killed job) ends the run like Ctrl-C: cleanly, with what was done written."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _cmd_eval(args: argparse.Namespace) -> int:
    from . import inputs, outputs
    from .progress import Progress, progress_wanted

    if args.resume and args.backend == "ray":
        raise EneError("--resume works with the local backend only (drop --backend ray)")
    if args.remote and args.backend == "ray":
        raise EneError("--remote evaluates on an ene serve service: drop --backend ray")
    files = inputs.input_files(args.input)
    shards = args.input if os.path.isdir(args.input) else None
    outputs.check_output(args.output, files, shard_dir=shards)
    if args.report:  # checked now, not after the run
        outputs.check_output(args.report, [*files, args.output], shard_dir=shards)
    state = outputs.ResumeState.read(args.output) if args.resume else None
    show = progress_wanted(sys.stderr, quiet=args.quiet)
    if args.backend == "ray":
        from .ray_backend import eval_with_ray

        with _sigterm_as_interrupt(), Progress(None, enabled=show) as progress:
            summary = eval_with_ray(
                files,
                args.output,
                engine_options=engine_options(args),
                on_error=args.on_error,
                workers=args.workers,
                num_gpus_per_worker=args.num_gpus_per_worker,
                address=args.ray_address,
                progress=progress,
            )
        kept = True
    else:
        engine = build_engine(args)  # a bad --model fails here, before OUTPUT is touched
        if state is not None:
            state.check_engine(engine)
        summary, kept = _run_local(args, engine, files, state, show)
    _print_summary(summary, args.output, kept=kept, quiet=args.quiet, resume=args.resume)
    if args.report and not summary.interrupted:
        _write_report(args.output, args.report, title=f"ENE report: {args.input}", sources=files)
    return summary.exit_code


def _run_local(
    args: argparse.Namespace,
    engine: Engine,
    files: list[str],
    state: ResumeState | None,
    show: bool,
) -> tuple[RunSummary, bool]:
    from . import batch, inputs, outputs
    from .progress import Progress

    total = inputs.count_lines(files) if show else None
    output: outputs.AtomicOutput | outputs.AppendOutput = (
        outputs.AppendOutput(args.output, state)
        if state is not None
        else outputs.AtomicOutput(args.output)
    )
    try:
        with _sigterm_as_interrupt(), Progress(total, enabled=show) as progress:
            summary = batch.eval_lines(
                engine,
                inputs.read_lines(files),
                output,
                on_error=args.on_error,
                progress=progress,
                resume=state,
            )
    except BaseException:
        output.discard()
        raise
    if summary.interrupted:
        return summary, output.interrupted()
    output.commit()
    return summary, True


def _print_summary(
    summary: RunSummary, output: str, *, kept: bool, quiet: bool, resume: bool
) -> None:
    err = sys.stderr
    problems = summary.skipped + summary.failed
    if problems and not summary.stopped:
        print(f"ene eval: {summary.skipped} skipped, {summary.failed} failed:", file=err)
        for problem in summary.problems:
            print(f"  {problem}", file=err)
        if problems > len(summary.problems):
            print(f"  ... and {problems - len(summary.problems)} more (above)", file=err)
    if summary.stopped:
        print(
            f"ene eval: stopped at {summary.stopped.split(':')[0]} (--on-error fail); "
            f"what was evaluated before it is in {output}",
            file=err,
        )
    if summary.interrupted:
        if kept:
            again = "run the same command again" if resume else "add --resume"
            where = f"{output} holds what was evaluated"
            print(f"ene eval: interrupted; {where}: {again} to continue", file=err)
        else:
            print(
                f"ene eval: interrupted; {output} is left as it was (a run with --resume "
                "can be continued after an interruption)",
                file=err,
            )
    if not quiet:
        print(f"ene eval: {summary.line()} -> {output}", file=err)


# -- ene report / view / evaluate / schema --------------------------------------------------------
def _add_report(sub: Any) -> None:
    p = sub.add_parser("report", help="aggregate statistics over an ene eval output")
    p.add_argument("results", help="ENG JSONL written by ene eval")
    p.add_argument("--html", metavar="HTML", help="also write the HTML report")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    report = _write_report(
        args.results, args.html, title=f"ENE report: {args.results}", seed=args.seed
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.to_table())
    return EXIT_OK


def _add_view(sub: Any) -> None:
    p = sub.add_parser("view", help="write a self-contained HTML view of ENGs")
    p.add_argument("eng", help="an ENG JSON file or ENG JSONL")
    p.add_argument("-o", "--output", help="HTML file (default: next to the input)")
    p.add_argument("--limit", type=int, default=200, help="most requests shown (default 200)")
    p.set_defaults(func=_cmd_view)


def _cmd_view(args: argparse.Namespace) -> int:
    from ..reports.report import read_results
    from ..reports.viewer import render_html

    engs, _ = read_results(args.eng)
    if not engs:
        raise EneError(f"{args.eng} holds no ENG")
    output = args.output or os.path.splitext(args.eng)[0] + ".html"
    title = f"ENG {engs[0].id or os.path.basename(args.eng)}" if len(engs) == 1 else args.eng
    _write_html(output, render_html(engs, title=title, max_requests=args.limit), sources=[args.eng])
    print(output)
    return EXIT_OK


def _add_evaluate(sub: Any) -> None:
    p = sub.add_parser("evaluate", help="evaluate one answer and print its ENG")
    p.add_argument("--answer", required=True)
    p.add_argument("--context", action="append", help="a retrieved chunk (repeat)")
    p.add_argument("--question")
    p.add_argument("--json", action="store_true", help="print the ENG as JSON")
    _add_engine_options(p)
    p.set_defaults(func=_cmd_evaluate)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    engine = build_engine(args)
    eng = engine.evaluate(args.answer, args.context or [], args.question)
    print(eng.to_json(indent=2) if args.json else render(eng))
    return EXIT_OK


def _add_schema(sub: Any) -> None:
    p = sub.add_parser("schema", help="print the ENG JSON Schema")
    p.set_defaults(func=_cmd_schema)


def _cmd_schema(args: argparse.Namespace) -> int:
    from ..graph import EvidenceNecessityGraph

    print(json.dumps(EvidenceNecessityGraph.json_schema(), indent=2))
    return EXIT_OK


def render(eng: EvidenceNecessityGraph) -> str:
    """A readable plain-text view of one graph; claims ``[n]`` and chunks ``#n`` count from 1,
    like the answer's ``[n]`` citation markers (the JSON's indices count from 0)."""
    v = eng.verifier
    tau_c = (
        ""
        if v.contradiction_threshold in (None, v.threshold)
        else (f"  tau_contra={v.contradiction_threshold}")
    )
    lines = [f"ENG {eng.schema_version}  model={v.model}  tau={v.threshold}{tau_c}"]
    for claim in eng.claims:
        number = f"[{claim.index + 1}]"
        if not claim.checkable:
            lines.append(f"  {number} ({claim.kind}, not checked) {claim.text}")
            continue
        if claim.status == "contradicted":  # show the contradiction and who contradicts it
            prob, edge, chunks = "p(contra)", "by", claim.contradicted_by
            value = claim.p_contra
        else:
            prob, edge, chunks = "p(entail)", "needs", claim.necessary
            value = claim.p_entail
        where = ", ".join(f"#{i + 1}" for i in chunks) or "-"
        lines.append(
            f"  {number} {claim.classification:<12} {prob}={value:.2f}  "
            f"{edge:<5} {where:<10} {claim.text}"
        )
        if claim.hypothesis is not None:  # a short answer, checked as the question's answer
            lines.append(f"  {' ' * len(number)} read as: {claim.hypothesis}")
        if claim.unstated_amounts:
            lines.append(
                f"  {' ' * len(number)} not in the evidence: {', '.join(claim.unstated_amounts)}"
            )
        if claim.computed_amounts:
            lines.append(
                f"  {' ' * len(number)} computed from the evidence: "
                + ", ".join(claim.computed_amounts)
            )
        if claim.arithmetic is not None:
            lines.append(f"  {' ' * len(number)} worked out: {claim.arithmetic}")
        if claim.other_holder is not None:
            lines.append(f"  {' ' * len(number)} the evidence gives it to: {claim.other_holder}")
        if claim.other_value is not None:
            lines.append(f"  {' ' * len(number)} the evidence gives instead: {claim.other_value}")
        if claim.supported_alone_by:
            alone = ", ".join(f"#{i + 1}" for i in claim.supported_alone_by)
            lines.append(f"  {' ' * len(number)} supported read alone by: {alone}")
    for ctx in eng.contexts:
        mark = "used" if ctx.used else "UNUSED"
        preview = ctx.text[:70].replace("\n", " ")
        lines.append(f"  #{ctx.index + 1} {mark:<6} nec={ctx.necessity_score:.2f}  {preview}")
    lines.extend(_citation_lines(eng))
    c, s = eng.counts, eng.stats
    cites = (
        ""
        if eng.citation_recall is None or eng.citation_precision is None
        else f"citation recall {eng.citation_recall:.2f}, precision {eng.citation_precision:.2f}, "
    )
    lines.append(
        f"  {c.supported}/{c.checkable_claims} supported, {c.contexts_unused}/{c.contexts} "
        f"contexts unused ({c.tokens_saved} tokens), {cites}{s.oracle_checks} checks, "
        f"{s.forward_pairs} forward pairs, {s.duration_ms:.0f} ms"
    )
    lines.extend(f"  warning: {w}" for w in eng.warnings)
    return "\n".join(lines)


def _citation_lines(eng: EvidenceNecessityGraph) -> list[str]:
    """Per claim with a citation verdict: what it cites, and which markers are padding or
    missing (markers as written in the answer)."""
    lines = []
    for claim in eng.claims:
        if claim.citation_supported is None:
            continue
        cites = "".join(f"[{m}]" for m in claim.cited)
        verdict = "supported" if claim.citation_supported else "NOT supported"
        line = f"  [{claim.index + 1}] " + (f"cites {cites}: {verdict}" if cites else "uncited")
        if claim.citations_unneeded:
            line += "; unneeded " + "".join(f"[{m}]" for m in claim.citations_unneeded)
        if claim.citations_missing:
            line += "; missing " + "".join(f"[{m}]" for m in claim.citations_missing)
        lines.append(line)
    return lines


# -- serve ----------------------------------------------------------------------------------------
def _cmd_serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from ..service.serve import LIMITS, TOKEN_ENV, Limits, ServeConfig, start, stop

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


def _add_serve(sub: Any) -> None:
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
    for flag, text in (  # defaults: ene_core.service.serve.Limits
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


# -- calibrate ------------------------------------------------------------------------------------
def _add_calibrate(sub: Any) -> None:
    p = sub.add_parser(
        "calibrate",
        help="choose a verifier's thresholds on labelled cases and write a profile",
        description="Choose tau and tau_c on the dev part of labelled cases (ene eval lines "
        "plus each claim's gold status in 'claims'), print dev and test scores, write a "
        "profile for --verifier-profile.",
    )
    p.add_argument("input", metavar="CASES", help="labelled cases (JSONL)")
    p.add_argument("-o", "--output", required=True, help="the profile to write (JSON)")
    p.add_argument(
        "--max-false-contradictions",
        type=float,
        default=0.05,
        help="cap on supported claims called contradicted, a share of them (default 0.05)",
    )
    p.add_argument("--test-share", type=float, default=0.3, help="cases held out (default 0.3)")
    p.add_argument("--seed", type=int, default=0, help="the split's seed (default 0)")
    p.add_argument("--grid", type=float, default=0.1, help="threshold step (default 0.1)")
    _add_engine_options(p)
    p.set_defaults(func=_cmd_calibrate)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from ..engine.necessity import NecessityEngine
    from .calibrate import calibrate, grid, read_cases, source_of, summary

    given = [
        f for f in ("threshold", "contradiction_threshold", "verifier_profile") if getattr(args, f)
    ]
    if given:
        flags = ", ".join("--" + f.replace("_", "-") for f in given)
        raise EneError(f"ene calibrate chooses the thresholds: drop {flags}")
    taus = grid(args.grid)
    cases, problems = read_cases(args.input)
    for problem in problems:
        print(f"ene calibrate: {args.input}: {problem}", file=sys.stderr)
    engine = build_engine(args)
    oracle = engine.oracle
    base = getattr(engine, "citation_base", 1)

    def make(tau: float | None, tau_c: float | None) -> NecessityEngine:
        return NecessityEngine(oracle, tau, contradiction_threshold=tau_c, citation_base=base)

    def say(line: str) -> None:
        print(f"ene calibrate: {line}", file=sys.stderr)

    profile = calibrate(
        oracle,
        cases,
        make_engine=make,
        taus=taus,
        test_share=args.test_share,
        seed=args.seed,
        max_false_contradictions=args.max_false_contradictions,
        source=source_of(args.input),
        say=say,
    )
    engine.close()
    for line in summary(profile):
        print(line)
    profile.write(args.output)
    print(
        f"ene calibrate: wrote {args.output} (use --verifier-profile {args.output})",
        file=sys.stderr,
    )
    return EXIT_OK


# -- train-filter ---------------------------------------------------------------------------------
def _add_train_filter(sub: Any) -> None:
    from ..filtering import cli as train_filter

    p = sub.add_parser(
        "train-filter",
        help=train_filter.HELP,
        description="Train a chunk filter (ene_core.ChunkFilter) from logged ENGs: a chunk is "
        "needed when a supported claim's minimal sufficient or supporting set holds it; a "
        "held-out split, checkpoints and the calibrated threshold are written with the model.",
    )
    train_filter.add_arguments(p)
    p.set_defaults(func=train_filter.run)


# -- the parser and main --------------------------------------------------------------------------
SUBCOMMANDS = (
    _add_eval,
    _add_report,
    _add_view,
    _add_evaluate,
    _add_schema,
    _add_serve,
    _add_calibrate,
    _add_train_filter,
)


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ene",
        description="ENE: which retrieved chunks did each claim of a RAG answer need?",
        epilog="exit status: 0 done, 1 usage or input error, 2 some lines skipped or failed "
        "(ene eval), 130 interrupted. `ene eval --help` documents the input format.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def _error(command: str, exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, EneError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"ene {command}: error: {where}{exc.strerror}"
    kind = "error" if type(exc) is EneError else type(exc).__name__
    return f"ene {command}: {kind}: {exc}"


def main(argv: Sequence[str] | None = None) -> int:
    args: Any = make_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (EneError, OSError) as exc:
        print(_error(args.command, exc), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"ene {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
