"""The chunk filter before generation: needed chunks kept against tokens dropped (issue 55).

    python benchmarks/chunk_filter.py [--filter DIR] [--json OUT] [--threads N]
    python benchmarks/chunk_filter.py --latency-only [--threads N]   # latency alone, quickly

Sets (a chunk is *needed* when the answer's true claims need it):

* ``hotpot-10``: HotpotQA dev questions 60-99 (the benchmark; never trained or tuned on), each
  question against its ten paragraphs, the gold supporting ones needed;
* ``hotpot-iso``: the same questions, each supporting paragraph alone among the four paragraphs
  of *other* benchmark questions that share most of its question's words;
* the hand-written necessity sets in ``benchmarks/data`` (the chunks a supported claim needs or
  may use: ``necessary`` and ``sufficient``), in three groups: ``train`` (necessity_dev, fresh,
  fresh2, fresh3: the default filter trained on them, in-sample), ``dev`` (fresh4: its
  threshold was calibrated there, with HotpotQA 48-59) and ``held-out`` (fresh5, fresh6 and
  necessity_test: never trained or tuned on).

Methods, run side by side on the same chunks: the filter at its shipped threshold (and its
curve over thresholds); BM25 top-k (k = 1, 2, 3; the request's chunks as the corpus); cosine
similarity of mean-pooled embeddings from the same encoder (the verifier the filter starts
from; LangChain's EmbeddingsFilter approach), its threshold calibrated on the same dev sets to
the same share of needed chunks kept as the filter's; and keeping everything. Tokens are the
filter's word pieces. Latency: ``ChunkFilter.decide`` per HotpotQA question with its ten
paragraphs, after a warm-up, on this CPU with ``--threads`` torch threads.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ene_core.filtering.model import ChunkFilter, select  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
# the same words as the training data's builder: distractors are chosen the same way
from build_filter_data import WORD, content_words  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
HOTPOT = ROOT.parent / "shared" / "data" / "hotpotqa" / "hotpot_dev_distractor_first100.json"
NECESSITY_GROUPS = {
    "train": ("necessity_dev", "necessity_fresh", "necessity_fresh2", "necessity_fresh3"),
    "dev": ("necessity_fresh4",),
    "held-out": ("necessity_fresh5", "necessity_fresh6", "necessity_test"),
}
Request = dict  # {"question": str, "chunks": [str], "needed": set[int]}


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def hotpot_requests(indices: range) -> tuple[list[Request], list[Request]]:
    """Ten-paragraph requests and supporting-paragraph isolation requests."""
    data = json.loads(HOTPOT.read_text(encoding="utf-8"))
    pool = [
        (i, " ".join(s.strip() for s in sents)) for i in indices for _, sents in data[i]["context"]
    ]
    ten, iso = [], []
    for i in indices:
        q = data[i]
        gold = {title for title, _ in q["supporting_facts"]}
        paragraphs = [(t, " ".join(s.strip() for s in sents)) for t, sents in q["context"]]
        ten.append(
            {
                "question": q["question"],
                "chunks": [p for _, p in paragraphs],
                "needed": {k for k, (t, _) in enumerate(paragraphs) if t in gold},
            }
        )
        qwords = content_words(q["question"])
        others = sorted(
            (p for p in pool if p[0] != i), key=lambda p: (-len(qwords & content_words(p[1])), p)
        )
        for title, text in paragraphs:
            if title in gold:
                iso.append(
                    {
                        "question": q["question"],
                        "chunks": [text] + [o for _, o in others[:4]],
                        "needed": {0},
                    }
                )
    return ten, iso


def necessity_requests(names: Sequence[str]) -> list[Request]:
    requests = []
    for name in names:
        for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            needed: set[str] = set()
            for claim in case["claims"]:
                if claim["status"] == "supported":
                    needed.update(claim.get("necessary", []))
                    for alt in claim.get("sufficient", []) or []:
                        needed.update(alt if isinstance(alt, list) else [alt])
            ids = [c["id"] for c in case["chunks"]]
            requests.append(
                {
                    "question": case.get("question") or "",
                    "chunks": [c["text"] for c in case["chunks"]],
                    "needed": {k for k, cid in enumerate(ids) if cid in needed},
                }
            )
    return requests


def bm25_scores(
    question: str, chunks: Sequence[str], k1: float = 1.5, b: float = 0.75
) -> list[float]:
    """BM25 of the question against the request's chunks (the chunks are the corpus)."""
    docs = [words(c) for c in chunks]
    n = len(docs)
    avg = sum(len(d) for d in docs) / n or 1.0
    df = Counter(w for d in docs for w in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        score = 0.0
        for w in set(words(question)):
            if w in tf:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                score += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(d) / avg))
        out.append(score)
    return out


class CosineBaseline:
    """Mean-pooled embeddings of the filter's base encoder; cosine of question and chunk."""

    def __init__(self, base_dir: Path) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(base_dir)
        self.model = AutoModel.from_pretrained(base_dir, dtype=torch.float32).eval()

    def embed(self, texts: Sequence[str]):
        torch = self.torch
        enc = self.tokenizer(
            list(texts), truncation=True, max_length=256, padding=True, return_tensors="pt"
        )
        with torch.inference_mode():
            hidden = self.model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def scores(self, question: str, chunks: Sequence[str]) -> list[float]:
        vectors = self.embed([question, *chunks])
        return (vectors[1:] @ vectors[0]).tolist()


def evaluate(
    requests: Sequence[Request],
    choose: Callable[[Request, int], list[int]],
    lengths: list[list[int]],
) -> dict[str, float]:
    """Share of needed chunks kept and of tokens dropped, over all requests' chunks."""
    needed = kept_needed = tokens = dropped = 0
    for r, (request, sizes) in enumerate(zip(requests, lengths, strict=False)):
        kept = set(choose(request, r))
        needed += len(request["needed"])
        kept_needed += len(request["needed"] & kept)
        tokens += sum(sizes)
        dropped += sum(s for k, s in enumerate(sizes) if k not in kept)
    return {
        "needed_kept": kept_needed / needed if needed else 1.0,
        "tokens_dropped": dropped / tokens if tokens else 0.0,
        "requests": len(requests),
        "needed": needed,
    }


def top_k(scores: Sequence[float], k: int) -> list[int]:
    return sorted(sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k])


def calibrate_threshold(
    requests: Sequence[Request], all_scores: list[list[float]], target: float
) -> float:
    """The highest threshold keeping ``target`` of the needed chunks of ``requests`` (min 1)."""
    lo = min(min(s) for s in all_scores)
    hi = max(max(s) for s in all_scores)
    best = lo
    for step in range(401):
        t = lo + (hi - lo) * step / 400
        need = kept = 0
        for request, scores in zip(requests, all_scores, strict=False):
            chosen = set(select(scores, t, 1))
            need += len(request["needed"])
            kept += len(request["needed"] & chosen)
        if need and kept / need >= target:
            best = t
    return best


def measure_latency(chunk_filter: ChunkFilter, requests: Sequence[Request]) -> dict[str, Any]:
    """``ChunkFilter.decide`` per question with its ten paragraphs, after five warm-up calls."""
    import torch

    for r in requests[:5]:
        chunk_filter.decide(r["question"], r["chunks"])
    timings = []
    for r in requests:
        started = time.perf_counter()
        chunk_filter.decide(r["question"], r["chunks"])
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return {
        "p50_ms": statistics.median(timings),
        "p95_ms": timings[int(0.95 * (len(timings) - 1))],
        "mean_ms": statistics.fmean(timings),
        "threads": torch.get_num_threads(),
        "chunks": 10,
        "load_average_1min": os.getloadavg()[0],
    }


def print_latency(latency: dict[str, Any]) -> None:
    print(
        f"\nlatency per question, 10 chunks, {latency['threads']} threads: p50 "
        f"{latency['p50_ms']:.1f} ms, p95 {latency['p95_ms']:.1f} ms "
        f"(load average {latency['load_average_1min']:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--filter", default=None, help="a filter directory (default: shipped)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-cosine", action="store_true")
    parser.add_argument(
        "--latency-only", action="store_true", help="only the latency on HotpotQA 60-99"
    )
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    chunk_filter = ChunkFilter(args.filter)
    tokenizer = chunk_filter.tokenizer
    sets: dict[str, list[Request]] = {}
    dev_sets: dict[str, list[Request]] = {}
    if args.latency_only:
        if not HOTPOT.exists():
            sys.exit(f"{HOTPOT} is absent: no latency set")
        print_latency(measure_latency(chunk_filter, hotpot_requests(range(60, 100))[0]))
        return
    if HOTPOT.exists():
        sets["hotpot-10"], sets["hotpot-iso"] = hotpot_requests(range(60, 100))
        dev_sets["hotpot-10 48-59"], dev_sets["hotpot-iso 48-59"] = hotpot_requests(range(48, 60))
    else:
        print(f"({HOTPOT} is absent: HotpotQA sets skipped)")
    for group, names in NECESSITY_GROUPS.items():
        sets[f"necessity {group}"] = necessity_requests(names)
    dev_sets["necessity dev"] = sets["necessity dev"]

    def lengths_of(requests: Sequence[Request]) -> list[list[int]]:
        return [
            [len(ids) for ids in tokenizer(r["chunks"], add_special_tokens=False)["input_ids"]]
            for r in requests
        ]

    filter_scores = {
        name: [chunk_filter.scores(r["question"], r["chunks"]) for r in reqs]
        for name, reqs in {**sets, **dev_sets}.items()
    }
    bm25 = {
        name: [bm25_scores(r["question"], r["chunks"]) for r in reqs]
        for name, reqs in {**sets, **dev_sets}.items()
    }
    cosine_scores: dict[str, list[list[float]]] = {}
    cosine_threshold = None
    if not args.no_cosine:
        cosine = CosineBaseline(chunk_filter.settings.base_dir())
        cosine_scores = {
            name: [cosine.scores(r["question"], r["chunks"]) for r in reqs]
            for name, reqs in {**sets, **dev_sets}.items()
        }
        dev_names = list(dev_sets)
        target = evaluate(
            [r for n in dev_names for r in dev_sets[n]],
            lambda _r, i, flat=[s for n in dev_names for s in filter_scores[n]]: select(
                flat[i], chunk_filter.threshold, chunk_filter.min_keep, chunk_filter.max_keep
            ),
            [s for n in dev_names for s in lengths_of(dev_sets[n])],
        )["needed_kept"]
        cosine_threshold = calibrate_threshold(
            [r for n in dev_names for r in dev_sets[n]],
            [s for n in dev_names for s in cosine_scores[n]],
            target,
        )

    rows = []
    curves = {}
    for name, reqs in {**sets, **dev_sets}.items():
        lengths = lengths_of(reqs)
        fs, bs = filter_scores[name], bm25[name]
        methods: dict[str, Callable[[Request, int], list[int]]] = {
            f"ChunkFilter (t={chunk_filter.threshold:.3f})": lambda r, i, fs=fs: select(
                fs[i], chunk_filter.threshold, chunk_filter.min_keep, chunk_filter.max_keep
            ),
            "BM25 top-1": lambda r, i, bs=bs: top_k(bs[i], 1),
            "BM25 top-2": lambda r, i, bs=bs: top_k(bs[i], 2),
            "BM25 top-3": lambda r, i, bs=bs: top_k(bs[i], 3),
            "keep all": lambda r, i: list(range(len(r["chunks"]))),
        }
        if cosine_threshold is not None:
            cs = cosine_scores[name]
            methods[f"cosine, same encoder (t={cosine_threshold:.3f})"] = lambda r, i, cs=cs: (
                select(cs[i], cosine_threshold, 1)
            )
        for method, choose in methods.items():
            rows.append({"set": name, "method": method, **evaluate(reqs, choose, lengths)})
        curves[name] = [
            {
                "threshold": t,
                **evaluate(
                    reqs, lambda r, i, t=t, fs=fs: select(fs[i], t, chunk_filter.min_keep), lengths
                ),
            }
            for t in [0.05, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7]
        ]

    latency = measure_latency(chunk_filter, sets["hotpot-10"]) if "hotpot-10" in sets else None

    print(
        f"filter {chunk_filter.path} revision {chunk_filter.revision} "
        f"threshold {chunk_filter.threshold:.3f} min_keep {chunk_filter.min_keep} "
        f"max_keep {chunk_filter.max_keep}"
    )
    print("| set | method | needed kept | tokens dropped | requests |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['set']} | {row['method']} | {row['needed_kept']:.3f} | "
            f"{row['tokens_dropped']:.3f} | {row['requests']} |"
        )
    print("\ncurve (filter threshold -> needed kept / tokens dropped):")
    for name, curve in curves.items():
        print(
            f"  {name}: "
            + "  ".join(
                f"{p['threshold']:.2f}:{p['needed_kept']:.3f}/{p['tokens_dropped']:.3f}"
                for p in curve
            )
        )
    if latency:
        print_latency(latency)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": rows,
                    "curves": curves,
                    "latency": latency,
                    "threshold": chunk_filter.threshold,
                    "revision": chunk_filter.revision,
                    "cosine_threshold": cosine_threshold,
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
