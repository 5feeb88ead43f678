"""Choose the premise-packing defaults by measurement on a held-out HotpotQA necessity set.

    python benchmarks/packing_sweep.py [--model PATH] [--questions 60:100] [--k 1,2,3,4,6,8]

The set is built from HotpotQA dev questions the verifier never trained on (60-99 by default).
Per question, the contexts are its 10 paragraphs and the claims, each evaluated as a one-claim
answer, are:
  * every gold supporting sentence: supported, its paragraph necessary (fragile);
  * the two first gold facts from different paragraphs joined into one sentence: supported,
    both paragraphs necessary (joint, the multi-hop case);
  * the first three gold facts joined into one sentence (when they span two paragraphs or more):
    supported, every paragraph involved necessary;
  * a gold sentence of another question: unsupported, nothing necessary.
Reported per packing rule: claim-status accuracy (supported vs not), necessity precision /
recall / F1 over (claim, paragraph) edges, and mean premise length in words.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ene_core import NecessityEngine, NLIOracle, PremisePacker

HOTPOT = (
    Path(__file__).resolve().parents[2] / "shared/data/hotpotqa/hotpot_dev_distractor_first100.json"
)


def build_set(lo: int, hi: int) -> list[dict]:
    data = json.loads(HOTPOT.read_text())
    cases = []
    for q in range(lo, hi):
        item = data[q]
        titles = [t for t, _ in item["context"]]
        contexts = ["".join(sents).strip() for _, sents in item["context"]]
        sentences = dict(item["context"])
        gold = [
            (titles.index(t), sentences[t][i].strip())
            for t, i in item["supporting_facts"]
            if t in sentences and i < len(sentences[t])
        ]
        for paragraph, sentence in gold:
            cases.append(
                {
                    "answer": sentence,
                    "contexts": contexts,
                    "supported": True,
                    "necessary": {paragraph},
                }
            )
        pair = next(((a, b) for a in gold for b in gold if a[0] < b[0]), None)
        if pair:
            (pa, sa), (pb, sb) = pair
            joined = sa.rstrip(" .") + ", and " + sb[0].lower() + sb[1:]
            cases.append(
                {"answer": joined, "contexts": contexts, "supported": True, "necessary": {pa, pb}}
            )
        if len(gold) >= 3 and len({p for p, _ in gold[:3]}) >= 2:
            (p1, s1), (p2, s2), (p3, s3) = gold[:3]
            parts = [s1.rstrip(" ."), s2.rstrip(" ."), s3[0].lower() + s3[1:]]
            three = parts[0] + "; " + parts[1][0].lower() + parts[1][1:] + "; and " + parts[2]
            cases.append(
                {
                    "answer": three,
                    "contexts": contexts,
                    "supported": True,
                    "necessary": {p1, p2, p3},
                }
            )
        other = data[(q + 17) % len(data)]
        o_sent = dict(other["context"])
        t, i = other["supporting_facts"][0]
        if t in o_sent and i < len(o_sent[t]):
            cases.append(
                {
                    "answer": o_sent[t][i].strip(),
                    "contexts": contexts,
                    "supported": False,
                    "necessary": set(),
                }
            )
    return cases


def score(engine: NecessityEngine, cases: list[dict]) -> dict[str, float]:
    engs = engine.evaluate_many([{"answer": c["answer"], "contexts": c["contexts"]} for c in cases])
    correct = tp = fp = fn = 0
    words = []
    for case, eng in zip(cases, engs, strict=True):
        claims = [c for c in eng.claims if c.checkable]
        predicted = bool(claims) and all(c.status == "supported" for c in claims)
        correct += predicted == case["supported"]
        found = {i for c in claims for i in c.necessary}
        tp += len(found & case["necessary"])
        fp += len(found - case["necessary"])
        fn += len(case["necessary"] - found)
        index = engine.packer.index(case["contexts"])
        words.extend(len(index.premise(c.text).text.split()) for c in claims)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "accuracy": correct / len(cases),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "words": sum(words) / max(len(words), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model")
    parser.add_argument("--questions", default="60:100")
    parser.add_argument("--k", default="1,2,3,4,6,8")
    parser.add_argument("--threshold", type=float)
    args = parser.parse_args()
    if not HOTPOT.exists():
        sys.exit(f"needs {HOTPOT}")
    lo, hi = (int(x) for x in args.questions.split(":"))
    cases = build_set(lo, hi)
    oracle = NLIOracle(args.model)
    rules = [("all relevant sentences (truncated)", PremisePacker(top_k=10_000, max_words=100_000))]
    rules += [(f"top {k} sentences", PremisePacker(top_k=int(k))) for k in args.k.split(",")]
    joint = sum(len(c["necessary"]) >= 2 for c in cases)
    print(
        f"model={oracle.name} cases={len(cases)} (joint {joint}, unsupported "
        f"{sum(not c['supported'] for c in cases)}) questions {lo}-{hi - 1}\n"
    )
    print(
        "| packing rule | status accuracy | necessity P | necessity R | necessity F1 | premise words |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, packer in rules:
        engine = NecessityEngine(oracle, args.threshold, packer=packer)
        r = score(engine, cases)
        print(
            f"| {name} | {r['accuracy']:.3f} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['words']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
