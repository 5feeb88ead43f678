"""Evaluate an NLI verifier (default: the shipped ``ene-nli-mini``) on the shared data sets.

    python benchmarks/eval_verifier.py [--model PATH] [--data ../shared/data] [--json out.json]

Prints one markdown table:

* SNLI test (the full 9,824-pair test split from ``nli_more``) and the SNLI test subset: 3-way
  accuracy, AUROC of p_entail for entailment vs not;
* MNLI dev held out by the data recipe (``--pairs DIR/dev.jsonl.gz``, source ``mnli``): 3-way;
  the same for the recipe's FEVER, Factcheck-GPT and ConjNLI dev pairs (``recipe``);
* ConTRoL (long passages, evaluation only): 3-way accuracy, premise truncated at max length;
* QAGS (summary sentences vs articles, evaluation only): AUROC and balanced accuracy of
  'supported' with the same premise windowing as SummaC;
* the hand-written RAG-shaped pairs' dev split (``--written``, built by
  ``scripts/build_written_mix.py``): 3-way accuracy of the engine's verdicts at τ / τ_c, AUROC;
* the one-span swap probe (``benchmarks/data/swap_probe.jsonl``, hand-written, never trained
  on): a premise and a copy of it with one word or phrase replaced, keeping the meaning
  (entailment) or changing it (contradiction); accuracy of the engine's verdicts at τ / τ_c, and
  how many paraphrases are called contradicted;
* RTE dev: 2-way accuracy with the engine's rule (supported iff p_entail >= τ and
  p_entail > p_contra), AUROC;
* SICK (evaluation only, non-commercial licence): 3-way accuracy, AUROC;
* SummaC factcc / summeval / xsumfaith / polytope: AUROC of p_entail for consistent vs
  inconsistent, with premise windowing (the document is split into sentences; each summary
  sentence is scored against the top-5 and top-3 most relevant sentences packed in document order
  and against the two most relevant single sentences; a sentence's score is its maximum
  p_entail, a summary's score the minimum over its sentences);
* HotpotQA questions 60-99 (never trained on): the claim built from question + answer must be
  supported by the gold paragraphs plus distractors, and unsupported once a gold paragraph is
  removed. Yes/no comparison questions are skipped (no claim can be built from "yes"/"no"), as are
  questions that the deterministic rewrite cannot turn into a claim;
* CPU throughput (pairs/s at batch 32) for short and packed pairs.

Any data set whose file is missing is skipped with a note.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from transformers import AutoModelForSequenceClassification, AutoTokenizer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from synth_nli import pack_premise, question_to_claim, split_sentences  # noqa: E402

from ene_core.verifiers.protocol import Scores  # noqa: E402
from ene_core.verifiers.verdict import decide  # noqa: E402

DEFAULT_MODEL = ROOT / "ene_core" / "models" / "ene-nli-mini"
LABELS = {"entailment": 0, "neutral": 1, "contradiction": 2}
HOTPOT_EVAL_QUESTIONS = range(60, 100)


@dataclass
class Row:
    name: str
    n: int
    acc: float | None = None
    auroc: float | None = None
    note: str = ""


class Verifier:
    """A thin batch scorer around a sequence-classification NLI model."""

    def __init__(self, path: Path, threads: int = 2, device: str = "cpu") -> None:
        torch.set_num_threads(threads)
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path).float().eval()
        self.model = model.to(device)
        cfg = self.model.config
        self.tau = float(getattr(cfg, "ene_threshold", 0.5))
        self.tau_c = float(getattr(cfg, "ene_contradiction_threshold", 0.5))
        self.max_length = int(getattr(cfg, "ene_max_length", 256))
        names = {i: str(n).lower() for i, n in cfg.id2label.items()}
        self.order = [
            next(i for i, n in names.items() if n.startswith(k))
            for k in ("entail", "neutral", "contra")
        ]

    @torch.inference_mode()
    def probs(
        self, premises: Sequence[str], hypotheses: Sequence[str], batch_size: int = 32
    ) -> np.ndarray:
        """(n, 3) probabilities in the order entailment, neutral, contradiction."""
        order = sorted(range(len(premises)), key=lambda i: len(premises[i]) + len(hypotheses[i]))
        out = np.zeros((len(order), 3), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = self.tokenizer(
                [premises[i] for i in idx],
                [hypotheses[i] for i in idx],
                truncation="only_first",
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            ).to(self.device)
            p = torch.softmax(self.model(**enc).logits.float(), dim=-1).cpu().numpy()
            out[idx] = p[:, self.order]
        return out

    def supported(self, probs: np.ndarray) -> np.ndarray:
        return (probs[:, 0] >= self.tau) & (probs[:, 0] > probs[:, 2])

    def verdicts(self, probs: np.ndarray) -> np.ndarray:
        """0 supported, 1 unsupported, 2 contradicted: the engine's rule (:func:`decide`)."""
        code = {"supported": 0, "unsupported": 1, "contradicted": 2}
        return np.array(
            [code[decide(Scores(float(p[0]), float(p[2])), self.tau, self.tau_c)] for p in probs]
        )


def _auroc(gold: np.ndarray, score: np.ndarray) -> float | None:
    return float(roc_auc_score(gold, score)) if 0 < gold.sum() < len(gold) else None


def _read_jsonl(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _read_jsonl_any(path: Path) -> list[dict]:
    """JSON lines, gzipped or not."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    return _read_jsonl(path)


LETTERS = {"e": "entailment", "n": "neutral", "c": "contradiction"}


def eval_three_way(
    v: Verifier,
    path: Path,
    name: str,
    limit: int | None = None,
    keep=lambda row: True,  # type: ignore[no-untyped-def]
) -> Row:
    rows = []
    for r in _read_jsonl_any(path):
        label = r["label"]
        label = {0: "entailment", 1: "neutral", 2: "contradiction"}.get(label, label)
        label = LETTERS.get(label, label)
        if label in LABELS and keep(r):
            rows.append({**r, "label": label})
    rows = rows[:limit]
    probs = v.probs([r["premise"] for r in rows], [r["hypothesis"] for r in rows])
    gold = np.array([LABELS[r["label"]] for r in rows])
    return Row(
        name, len(rows), float((probs.argmax(-1) == gold).mean()), _auroc(gold == 0, probs[:, 0])
    )


def eval_written(v: Verifier, path: Path, limit: int | None = None) -> Row:
    """The hand-written pairs' dev split (``scripts/build_written_mix.py`` writes
    ``written_dev.jsonl.gz``): 3-way accuracy of the engine's verdicts at τ / τ_c."""
    rows = _read_jsonl_any(path)[:limit]
    probs = v.probs([r["premise"] for r in rows], [r["hypothesis"] for r in rows])
    gold = np.array([int(r["label"]) for r in rows])
    acc = float((v.verdicts(probs) == gold).mean())
    return Row(
        "Hand-written RAG-shaped pairs, dev split (3-way)",
        len(rows),
        acc,
        _auroc(gold == 0, probs[:, 0]),
        f"verdicts at τ={v.tau:.2f} / τ_c={v.tau_c:.2f}",
    )


def eval_swaps(v: Verifier, path: Path, limit: int | None = None) -> Row:
    """The one-span swap probe: the engine's verdicts at τ / τ_c against the label (entailment
    should be supported, contradiction contradicted)."""
    rows = _read_jsonl(path)[:limit]
    probs = v.probs([r["premise"] for r in rows], [r["hypothesis"] for r in rows])
    gold = np.array([LABELS[r["label"]] for r in rows])
    said = v.verdicts(probs)
    paraphrases = gold == 0
    return Row(
        "One-span swaps: paraphrase vs changed meaning (hand-written probe)",
        len(rows),
        float((said == gold).mean()),
        _auroc(paraphrases, probs[:, 0]),
        f"paraphrases called contradicted: {int((said[paraphrases] == 2).sum())} of "
        f"{int(paraphrases.sum())}; changes called supported: "
        f"{int((said[~paraphrases] == 0).sum())} of {int((~paraphrases).sum())}",
    )


def eval_rte(v: Verifier, path: Path, limit: int | None = None) -> Row:
    rows = _read_jsonl(path)[:limit]
    probs = v.probs([r["premise"] for r in rows], [r["hypothesis"] for r in rows])
    gold = np.array([r["label"] == "entailment" for r in rows])
    acc = float((v.supported(probs) == gold).mean())
    return Row(
        "RTE dev (2-way)",
        len(rows),
        acc,
        _auroc(gold, probs[:, 0]),
        f"acc = supported rule at τ={v.tau:.2f}",
    )


def summac_windows(sents: Sequence[str], claim: str) -> list[str]:
    """Top-5 and top-3 relevant sentences packed in order, and the two best single sentences."""
    wins = [pack_premise(sents, claim, k=5), pack_premise(sents, claim, k=3)]
    wins += pack_premise(sents, claim, k=2).split("\n")
    return list(dict.fromkeys(w for w in wins if w.strip()))


def eval_qags(v: Verifier, path: Path, limit: int | None = None) -> Row:
    """QAGS rows in the SummaC layout, scored by :func:`eval_summac`."""
    data = {
        str(i): {
            "document": r["premise"],
            "claim": r["hypothesis"],
            "label": "1" if r["label"] == "consistent" else "0",
        }
        for i, r in enumerate(_read_jsonl(path))
    }
    return eval_summac(v, data, "QAGS (eval only)", limit)


def eval_summac(v: Verifier, path: Path | dict, name: str, limit: int | None = None) -> Row:
    """AUROC of the summary score: min over summary sentences of max p_entail over windows.

    Multi-sentence summaries (SummEval, Polytope) are split into sentences, as the engine splits
    an answer into claims; a summary is as consistent as its least supported sentence.
    """
    data = path if isinstance(path, dict) else json.loads(path.read_text(encoding="utf-8"))
    premises: list[str] = []
    hyps: list[str] = []
    owner: list[tuple[int, int]] = []
    gold: list[bool] = []
    n_claims = 0
    for i, ex in enumerate(list(data.values())[:limit]):
        gold.append(str(ex["label"]) == "1")
        doc_sents = split_sentences(ex["document"]) or [ex["document"]]
        claims = split_sentences(ex["claim"]) or [ex["claim"]]
        for j, claim in enumerate(claims):
            n_claims += 1
            for w in summac_windows(doc_sents, claim):
                premises.append(w)
                hyps.append(claim)
                owner.append((i, j))
    probs = v.probs(premises, hyps)
    best: dict[tuple[int, int], float] = {}
    for key, p in zip(owner, probs[:, 0], strict=True):
        best[key] = max(best.get(key, 0.0), float(p))
    score = np.ones(len(gold), dtype=np.float32)
    for (i, _), p in best.items():
        score[i] = min(score[i], p)
    g = np.array(gold)
    pred = score >= v.tau
    acc = float(((pred & g).sum() / max(g.sum(), 1) + (~pred & ~g).sum() / max((~g).sum(), 1)) / 2)
    return Row(
        name,
        len(gold),
        acc,
        _auroc(g, score),
        f"{n_claims / len(gold):.1f} sentences/summary, {len(premises) / n_claims:.1f} "
        "windows/sentence; balanced acc at τ",
    )


def hotpot_cases(path: Path) -> list[dict[str, object]]:
    """Claims for HotpotQA questions 60-99 with their paragraphs and gold paragraph indices."""
    data = json.loads(path.read_text(encoding="utf-8"))
    cases: list[dict[str, object]] = []
    for qi in HOTPOT_EVAL_QUESTIONS:
        q = data[qi]
        if q["answer"].lower() in ("yes", "no"):  # skipped: the note counts them
            continue
        claim = question_to_claim(q["question"], q["answer"])
        if claim is None:
            continue
        titles = [t for t, _ in q["context"]]
        paragraphs = [[s.strip() for s in sents if s.strip()] for _, sents in q["context"]]
        gold = sorted({titles.index(t) for t, _ in q["supporting_facts"] if t in titles})
        cases.append(
            {"qi": qi, "claim": claim, "paragraphs": paragraphs, "gold": gold, "type": q["type"]}
        )
    return cases


def eval_hotpot(v: Verifier, path: Path) -> list[Row]:
    data = json.loads(path.read_text(encoding="utf-8"))
    n_questions = len([qi for qi in HOTPOT_EVAL_QUESTIONS if qi < len(data)])
    n_yesno = sum(data[qi]["answer"].lower() in ("yes", "no") for qi in HOTPOT_EVAL_QUESTIONS)
    cases = hotpot_cases(path)
    full_p: list[str] = []
    drop_p: list[str] = []
    drop_owner: list[int] = []
    for ci, c in enumerate(cases):
        paras: list[list[str]] = c["paragraphs"]  # type: ignore[assignment]
        claim = str(c["claim"])
        full_p.append(pack_premise([s for p in paras for s in p], claim, k=5))
        for g in c["gold"]:  # type: ignore[attr-defined]
            kept = [s for j, p in enumerate(paras) if j != g for s in p]
            drop_p.append(pack_premise(kept, claim, k=5))
            drop_owner.append(ci)
    claims = [str(c["claim"]) for c in cases]
    full = v.probs(full_p, claims)
    drop = v.probs(drop_p, [claims[i] for i in drop_owner])
    sup_full = v.supported(full)
    sup_drop = v.supported(drop)
    unsup_after = np.ones(len(cases), dtype=bool)
    for k, ci in enumerate(drop_owner):
        unsup_after[ci] &= not sup_drop[k]
    both = sup_full & unsup_after
    gold = np.concatenate([np.ones(len(cases), dtype=bool), np.zeros(len(drop_p), dtype=bool)])
    score = np.concatenate([full[:, 0], drop[:, 0]])
    note = (
        f"{len(cases)} of {n_questions} questions "
        f"({n_yesno} yes/no skipped, {n_questions - n_yesno - len(cases)} not rewritable)"
    )
    return [
        Row("HotpotQA 60-99: supported with gold", len(cases), float(sup_full.mean()), None, note),
        Row(
            "HotpotQA 60-99: unsupported w/o a gold para",
            len(drop_p),
            float((~sup_drop).mean()),
            _auroc(gold, score),
            "AUROC: full vs gold-removed",
        ),
        Row("HotpotQA 60-99: both (necessity correct)", len(cases), float(both.mean())),
    ]


def eval_engine_hotpot(model: Path, path: Path) -> Row | None:
    """The same HotpotQA check through ``ene_core.NecessityEngine`` when it is importable."""
    try:
        from ene_core import NecessityEngine, NLIOracle
    except ImportError:
        return None
    engine = NecessityEngine(oracle=NLIOracle(str(model)), threshold=None)
    cases = hotpot_cases(path)
    exact = supported_n = 0
    for c in cases:
        contexts = [" ".join(p) for p in c["paragraphs"]]  # type: ignore[attr-defined]
        eng = engine.evaluate(str(c["claim"]), contexts)
        claim = eng.claims[0]
        supported_n += claim.status == "supported"
        exact += claim.status == "supported" and sorted(claim.necessary) == c["gold"]
    return Row(
        "HotpotQA 60-99 via NecessityEngine",
        len(cases),
        exact / max(len(cases), 1),
        None,
        f"supported {supported_n}/{len(cases)}; acc = necessary == gold paragraphs",
    )


def throughput(v: Verifier, premises: Sequence[str], hyps: Sequence[str]) -> float:
    n = min(256, len(premises))
    v.probs(premises[:32], hyps[:32])
    t0 = time.perf_counter()
    v.probs(premises[:n], hyps[:n], batch_size=32)
    return n / (time.perf_counter() - t0)


HELD_OUT = {  # recipe dev sources (premise-grouped split) -> row title
    "mnli": "MNLI dev",
    "fever": "FEVER symmetric",
    "factcheck": "Factcheck-GPT claims",
    "conjnli": "ConjNLI",
}


def main(argv: Sequence[str] | None = None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument(
        "--skip",
        nargs="*",
        default=[],
        help="names to skip: snli mnli recipe control qags swaps rte written sick summac hotpot"
        " engine speed",
    )
    ap.add_argument("--limit", type=int, default=None, help="first N examples per set (smoke)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument(
        "--pairs", type=Path, default=ROOT / "runs" / "data", help="data recipe output (MNLI dev)"
    )
    ap.add_argument(
        "--written",
        type=Path,
        default=ROOT / "runs" / "wmix" / "written_dev.jsonl.gz",
        help="the hand-written pairs' dev split (scripts/build_written_mix.py --out runs/wmix)",
    )
    args = ap.parse_args(argv)
    v = Verifier(args.model, threads=args.threads, device=args.device)
    lim = args.limit
    d = args.data
    rows: list[Row] = []
    skipped: list[str] = []

    def run(key: str, path: Path, fn) -> None:  # type: ignore[no-untyped-def]
        if key in args.skip:
            return
        if not path.exists():
            skipped.append(f"{path} (missing)")
            return
        t0 = time.time()
        out = fn(path)
        for r in out if isinstance(out, list) else [out]:
            if r is not None:
                rows.append(r)
        print(f"# {key} {path.name}: {time.time() - t0:.0f}s", file=sys.stderr, flush=True)

    run(
        "snli",
        d / "nli_more" / "snli_dev_test_full_esnli" / "data.jsonl",
        lambda p: eval_three_way(
            v, p, "SNLI test, full (3-way)", lim, keep=lambda r: r.get("split") == "test"
        ),
    )
    for source, title in HELD_OUT.items():
        run(
            "mnli" if source == "mnli" else "recipe",
            args.pairs / "dev.jsonl.gz",
            lambda p, s=source, t=title: eval_three_way(
                v,
                p,
                f"{t}, held out by the recipe (3-way)",
                lim,
                keep=lambda r: r.get("source", "").split(":")[0] == s,
            ),
        )
    run(
        "control",
        d / "eval_more" / "control_long_context_nli" / "data.jsonl",
        lambda p: eval_three_way(v, p, "ConTRoL (3-way, long premises, eval only)", lim),
    )
    run("qags", d / "eval_more" / "qags" / "data.jsonl", lambda p: eval_qags(v, p, lim))
    run(
        "snli",
        d / "nli" / "snli_test_subset.jsonl",
        lambda p: eval_three_way(v, p, "SNLI test subset (3-way)", lim),
    )
    run("swaps", ROOT / "benchmarks" / "data" / "swap_probe.jsonl", lambda p: eval_swaps(v, p, lim))
    run("rte", d / "nli" / "rte_dev.jsonl", lambda p: eval_rte(v, p, lim))
    run("written", args.written, lambda p: eval_written(v, p, lim))
    run(
        "sick",
        d / "nli" / "sick.jsonl",
        lambda p: eval_three_way(v, p, "SICK (3-way, eval only)", lim),
    )
    for name in ("factcc", "summeval", "xsumfaith", "polytope"):
        run(
            "summac",
            d / "consistency" / f"summac_{name}.json",
            lambda p, n=name: eval_summac(v, p, f"SummaC {n}", lim),
        )
    hotpot = d / "hotpotqa" / "hotpot_dev_distractor_first100.json"
    run("hotpot", hotpot, lambda p: eval_hotpot(v, p))
    run("engine", hotpot, lambda p: eval_engine_hotpot(args.model, p))
    if "speed" not in args.skip:
        short = ["A man in a blue shirt is riding a bike down the street."] * 256
        packed = [
            "\n".join(
                f"Sentence {i}: the committee approved the budget of 4.2 million dollars "
                f"for the new library in {1990 + i}."
                for i in range(5)
            )
        ] * 256
        hyp = ["The committee approved a budget for the library."] * 256
        rows.append(
            Row(
                "CPU pairs/s, batch 32, short pair",
                256,
                note=f"{throughput(v, short, hyp[:256]):.0f} pairs/s",
            )
        )
        rows.append(
            Row(
                "CPU pairs/s, batch 32, packed 5-sentence premise",
                256,
                note=f"{throughput(v, packed, hyp):.0f} pairs/s",
            )
        )

    print(f"\nModel: {args.model}  τ={v.tau:.2f}  max_length={v.max_length}\n")
    print("| evaluation | n | accuracy | AUROC | note |")
    print("|---|---:|---:|---:|---|")
    for r in rows:
        acc = f"{r.acc:.3f}" if r.acc is not None else "-"
        auc = f"{r.auroc:.3f}" if r.auroc is not None else "-"
        print(f"| {r.name} | {r.n} | {acc} | {auc} | {r.note} |")
    for s in skipped:
        print(f"skipped: {s}")
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=2), encoding="utf-8")
    return rows


if __name__ == "__main__":
    main()
