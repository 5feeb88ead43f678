"""Score the engine on the hand-written necessity dev set (``benchmarks/data/necessity_dev.jsonl``).

    python benchmarks/necessity_dev.py [--model PATH] [--threshold T] [--top-k K]
        [--contradiction-threshold TC] [--raw-quantities] [--unchecked-amounts] [--max-words W] [--max-sentence-words S] [--json OUT]

Runs every answer through ``NecessityEngine`` (the shipped verifier, or any local Hugging Face
NLI model dir with ``--model``) and prints:
  * claim-status accuracy (supported / contradicted / unsupported) and the confusion matrix;
  * necessity-edge precision / recall / F1 over (claim, chunk) edges;
  * pruning safety: the share of gold-necessary chunks that ``ene_core.prune`` keeps with
    ``keep="minimal"`` (the verifier's own minimal set; every policy's trade-off:
    ``benchmarks/pruning_tradeoff.py``), and the share of redundant claims that keep at least
    one sufficient chunk;
  * contradiction attribution: ``claim.contradicted_by`` against the gold contradicting chunks;
  * the same per category and per domain.
Label conventions are in ``benchmarks/data/README.md``. CPU, offline, a few minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ene_core import EvidenceNecessityGraph, NecessityEngine, PremisePacker, prune
from ene_core.text.claims import split_claims

DATA = Path(__file__).resolve().parent / "data" / "necessity_dev.jsonl"
STATUSES = ("supported", "contradicted", "unsupported")


class GoldMismatchError(ValueError):
    """The gold claims do not line up with how ``ene_core.text.claims`` splits the answer."""


@dataclass(frozen=True)
class GoldClaim:
    text: str
    status: str
    necessary: frozenset[str]
    sufficient: frozenset[str]
    contradicted_by: frozenset[str]
    categories: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    id: str
    domain: str
    question: str
    answer: str
    chunks: tuple[dict[str, str], ...]
    claims: tuple[GoldClaim, ...]
    segments: tuple[int, ...] = field(default=())  # engine claim index of each gold claim


def load_cases(path: Path | str = DATA) -> list[Case]:
    """Read the set and align every gold claim with the engine's claim of the same text.

    Raises :class:`GoldMismatchError` naming the case when the engine's checkable claims and the
    gold claims differ in number, order or text, or when a label names an unknown chunk.
    """
    cases = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        cases.append(_case(row, f"{path}:{n} ({row.get('id')})"))
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise GoldMismatchError(f"{path}: duplicate case ids")
    return cases


def _case(row: dict[str, Any], where: str) -> Case:
    chunk_ids = [c["id"] for c in row["chunks"]]
    if len(set(chunk_ids)) != len(chunk_ids):
        raise GoldMismatchError(f"{where}: duplicate chunk ids")
    claims = []
    for c in row["claims"]:
        gold = GoldClaim(
            c["text"],
            c["status"],
            frozenset(c.get("necessary", [])),
            frozenset(c.get("sufficient", [])),
            frozenset(c.get("contradicted_by", [])),
            tuple(c.get("categories", [])),
        )
        if gold.status not in STATUSES:
            raise GoldMismatchError(f"{where}: unknown status {gold.status!r}")
        unknown = (gold.necessary | gold.sufficient | gold.contradicted_by) - set(chunk_ids)
        if unknown:
            raise GoldMismatchError(
                f"{where}: {gold.text!r} names unknown chunks {sorted(unknown)}"
            )
        if gold.status != "supported" and gold.necessary:
            raise GoldMismatchError(f"{where}: only supported claims have necessary chunks")
        if (gold.status == "contradicted") != bool(gold.contradicted_by):
            raise GoldMismatchError(f"{where}: {gold.text!r}: contradicted_by iff contradicted")
        claims.append(gold)
    segments = [(k, s.text) for k, s in enumerate(split_claims(row["answer"])) if s.checkable]
    engine_texts = [t for _, t in segments]
    gold_texts = [c.text for c in claims]
    if engine_texts != gold_texts:
        raise GoldMismatchError(
            f"{where}: gold claims do not match the engine's claims\n"
            f"  engine: {engine_texts}\n  gold:   {gold_texts}"
        )
    return Case(
        row["id"],
        row.get("domain", "-"),
        row.get("question", ""),
        row["answer"],
        tuple(row["chunks"]),
        tuple(claims),
        tuple(k for k, _ in segments),
    )


# -- scoring -----------------------------------------------------------------------------------
@dataclass
class Tally:
    claims: int = 0
    correct: int = 0
    tp: int = 0  # necessity edges
    fp: int = 0
    fn: int = 0
    need: int = 0  # gold-necessary chunks of gold-supported claims
    kept: int = 0  # ... of which pruning kept
    redundant: int = 0  # gold-supported claims with sufficient alternatives
    covered: int = 0  # ... of which pruning kept at least one
    blamed: int = 0  # gold- and predicted-contradicted claims
    blame_exact: int = 0  # ... whose contradicted_by equals the gold set

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def summary(self) -> dict[str, float | int | None]:
        p = _ratio(self.tp, self.tp + self.fp)
        r = _ratio(self.tp, self.tp + self.fn)
        f1 = None if p is None or r is None or p + r == 0 else 2 * p * r / (p + r)
        return {
            "claims": self.claims,
            "status_accuracy": _ratio(self.correct, self.claims),
            "necessity_precision": p,
            "necessity_recall": r,
            "necessity_f1": f1 if f1 is not None else (0.0 if self.tp + self.fn else None),
            "pruning_safety": _ratio(self.kept, self.need),
            "redundant_covered": _ratio(self.covered, self.redundant),
            "contradicted_by_exact": _ratio(self.blame_exact, self.blamed),
        }


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def score_case(
    case: Case, eng: EvidenceNecessityGraph
) -> list[tuple[GoldClaim, Tally, dict[str, Any]]]:
    """One ``(gold claim, its tally, the engine's verdict)`` per gold claim."""
    ids = [c["id"] for c in case.chunks]
    kept = {ids[i] for i in prune(list(case.chunks), eng, keep="minimal").kept_indices}
    out: list[tuple[GoldClaim, Tally, dict[str, Any]]] = []
    for gold, k in zip(case.claims, case.segments, strict=True):
        claim = eng.claims[k]
        assert claim.text == gold.text, (case.id, claim.text, gold.text)
        predicted = claim.status or "unsupported"
        need = {ids[i] for i in claim.necessary}
        t = Tally(claims=1, correct=int(predicted == gold.status))
        t.tp, t.fp, t.fn = (
            len(need & gold.necessary),
            len(need - gold.necessary),
            len(gold.necessary - need),
        )
        if gold.status == "supported":
            t.need, t.kept = len(gold.necessary), len(gold.necessary & kept)
            if gold.sufficient:
                t.redundant, t.covered = 1, int(bool(gold.sufficient & kept))
        if gold.status == "contradicted" and predicted == "contradicted":
            t.blamed = 1
            t.blame_exact = int({ids[i] for i in claim.contradicted_by} == gold.contradicted_by)
        verdict = {
            "predicted": predicted,
            "p_entail": claim.p_entail,
            "p_contra": claim.p_contra,
            "necessary": sorted(need),
            "contradicted_by": sorted(ids[i] for i in claim.contradicted_by),
            "p_entail_alone": claim.p_entail_alone,
        }
        out.append((gold, t, verdict))
    return out


def evaluate(engine: NecessityEngine, cases: Sequence[Case]) -> dict[str, Any]:
    started = time.perf_counter()
    engs = engine.evaluate_many(
        [
            {"id": c.id, "answer": c.answer, "contexts": list(c.chunks), "question": c.question}
            for c in cases
        ]
    )
    seconds = time.perf_counter() - started
    total = Tally()
    by_category: dict[str, Tally] = defaultdict(Tally)
    by_domain: dict[str, Tally] = defaultdict(Tally)
    confusion: Counter[tuple[str, str]] = Counter()
    claims_out = []
    for case, eng in zip(cases, engs, strict=True):
        for gold, t, verdict in score_case(case, eng):
            total.add(t)
            by_domain[case.domain].add(t)
            for category in gold.categories:
                by_category[category].add(t)
            confusion[gold.status, verdict["predicted"]] += 1
            claims_out.append(
                {
                    "case": case.id,
                    "text": gold.text,
                    "categories": list(gold.categories),
                    "gold": gold.status,
                    "gold_necessary": sorted(gold.necessary),
                    "gold_contradicted_by": sorted(gold.contradicted_by),
                    **verdict,
                }
            )
    return {
        "verifier": engs[0].verifier.model_dump(mode="json") if engs else None,
        "answers": len(cases),
        "overall": total.summary(),
        "confusion": {g: {p: confusion[g, p] for p in STATUSES} for g in STATUSES},
        "by_category": {k: by_category[k].summary() for k in sorted(by_category)},
        "by_domain": {k: by_domain[k].summary() for k in sorted(by_domain)},
        "claims": claims_out,
        "seconds": round(seconds, 2),
        "forward_pairs": sum(e.stats.forward_pairs for e in engs),
    }


# -- output ------------------------------------------------------------------------------------
def _fmt(value: float | int | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.3f}"


COLUMNS = [
    ("claims", "claims"),
    ("status_accuracy", "status acc."),
    ("necessity_precision", "nec. P"),
    ("necessity_recall", "nec. R"),
    ("necessity_f1", "nec. F1"),
    ("pruning_safety", "pruning safety"),
    ("redundant_covered", "redundant kept"),
    ("contradicted_by_exact", "contradicted_by exact"),
]


def table(rows: Iterable[tuple[str, dict[str, Any]]], first: str) -> str:
    head = f"| {first} | " + " | ".join(title for _, title in COLUMNS) + " |"
    rule = "|---|" + "---:|" * len(COLUMNS)
    body = [
        f"| {name} | " + " | ".join(_fmt(s[key]) for key, _ in COLUMNS) + " |" for name, s in rows
    ]
    return "\n".join([head, rule, *body])


def report(result: dict[str, Any]) -> str:
    v = result["verifier"] or {}
    lines = [
        f"necessity dev set: {result['answers']} answers, {result['overall']['claims']} claims; "
        f"model={v.get('model')} tau={v.get('threshold')} packing={v.get('packing')}; "
        f"{result['seconds']} s, {result['forward_pairs']} forward pairs",
        "",
        table([("all", result["overall"])], "set"),
        "",
        "confusion (rows: gold, columns: predicted)",
        "| gold \\ predicted | " + " | ".join(STATUSES) + " |",
        "|---|" + "---:|" * len(STATUSES),
    ]
    for g in STATUSES:
        row = result["confusion"][g]
        lines.append(f"| {g} | " + " | ".join(str(row[p]) for p in STATUSES) + " |")
    lines += ["", table(result["by_category"].items(), "category"), ""]
    lines += [table(result["by_domain"].items(), "domain")]
    return "\n".join(lines)


def build_engine(args: argparse.Namespace) -> NecessityEngine:
    packer = PremisePacker(
        top_k=args.top_k,
        max_words=args.max_words,
        max_sentence_words=args.max_sentence_words,
        align_quantities=not args.raw_quantities,
    )
    if args.oracle == "keyword":
        from ene_core.verifiers.keyword import KeywordOracle

        return NecessityEngine(
            KeywordOracle(),
            args.threshold,
            packer=packer,
            check_amounts=False if args.unchecked_amounts else None,
        )
    from ene_core import NLIOracle

    oracle = NLIOracle(args.model, device=args.device, batch_size=args.batch_size)
    return NecessityEngine(
        oracle,
        args.threshold,
        packer=packer,
        contradiction_threshold=args.contradiction_threshold,
        check_amounts=False if args.unchecked_amounts else None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    defaults = PremisePacker()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(DATA), help="the dev set JSONL")
    parser.add_argument("--model", help="local Hugging Face NLI model dir (default: shipped)")
    parser.add_argument("--threshold", type=float, help="tau (default: the model's calibrated)")
    parser.add_argument(
        "--contradiction-threshold", type=float, help="tau_c (default: the model's calibrated)"
    )
    parser.add_argument(
        "--unchecked-amounts",
        action="store_true",
        help="the model's verdicts alone: no check that the premise states the claim's amounts",
    )
    parser.add_argument("--top-k", type=int, default=defaults.top_k)
    parser.add_argument("--max-words", type=int, default=defaults.max_words)
    parser.add_argument("--max-sentence-words", type=int, default=defaults.max_sentence_words)
    parser.add_argument(
        "--raw-quantities", action="store_true", help="amounts as written (no alignment)"
    )
    parser.add_argument("--device", help="cpu, cuda ... (default: cuda if available)")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument(
        "--oracle", choices=["nli", "keyword"], default="nli", help="keyword: plumbing only"
    )
    parser.add_argument("--limit", type=int, help="only the first N answers")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = parser.parse_args(argv)
    cases = load_cases(args.data)[: args.limit]
    engine = build_engine(args)
    try:
        result = evaluate(engine, cases)
    finally:
        engine.close()
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
