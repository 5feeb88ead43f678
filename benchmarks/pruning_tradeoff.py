"""The pruning trade-off of each keep policy, measured on labelled answers.

    python benchmarks/pruning_tradeoff.py [--model PATH] [--sets dev test hotpot] [--json OUT]
    python benchmarks/pruning_tradeoff.py --calibrate      # choose the "safe" margins on dev

Evaluates every answer once with ``NecessityEngine`` (the shipped verifier by default), then
prunes each with every policy of ``ene_core.kit.pruning`` and prints, per set and policy:

* **safety**: the share of truly supported claims that keep every needed chunk (all gold
  ``necessary`` chunks, and one of the ``sufficient`` ones for a redundant claim);
* **unused dropped**: the share of truly unused chunks (named by no label of the answer) dropped;
* **tokens saved**: the share of all context tokens dropped;
* **contradicting kept**: the share of the chunks that truly contradict a claim that are kept.

Sets: ``dev`` (``benchmarks/data/necessity_dev.jsonl``, the only one margins are tuned on),
``test`` (``necessity_test.jsonl``, sealed: reported, never tuned on) and ``hotpot`` (HotpotQA
questions 60-99, never trained on: the claim built from question and answer, its gold supporting
paragraphs needed, the 8 distractors unused; from ``--hotpot``, ``$ENE_HOTPOT`` or
``../shared/data/hotpotqa``).

``--calibrate`` searches the margins of the ``"safe"`` policy on the dev set: the grid point
(each margin in 0, 0.025 .. ``--max-margin``) that drops the most truly unused chunks among
those keeping every needed chunk of at least ``--goal`` of the truly supported claims, with 95%
confidence (the lower end of the Wilson interval of the dev safety; ``--z 0``: the point
value), ties to the smallest margins, and prints the constants to paste into
``ene_core/kit/pruning.py``. The confidence is there because the verifier and τ were tuned on this
same dev set, so its point safety is optimistic. ``--engs DIR``
keeps each set's graphs between runs (reused while the verifier is the same). CPU, offline.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from necessity_dev import DATA, build_engine, load_cases  # benchmarks/ is on sys.path

from ene_core import EvidenceNecessityGraph, NecessityEngine, PremisePacker, prune
from ene_core.kit.pruning import DEFAULT_KEEP, KEEP_POLICIES, SafeMargins

HERE = Path(__file__).resolve().parent
TEST = HERE / "data" / "necessity_test.jsonl"
HOTPOT = Path(
    os.environ.get(
        "ENE_HOTPOT", HERE.parents[1] / "shared/data/hotpotqa/hotpot_dev_distractor_first100.json"
    )
)
GOAL = 0.95  # issue 23: every needed chunk of >= 95% of truly supported claims
Z = 1.96  # ... reached on dev with 95% confidence: dev is where the verifier was tuned


@dataclass(frozen=True)
class Truth:
    """One labelled claim: the engine's claim index and what a correct prune keeps."""

    claim: int
    status: str
    necessary: frozenset[int] = frozenset()
    sufficient: frozenset[int] = frozenset()
    contradicted_by: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Labelled:
    """One answer of a set: the request and its labels (chunk indices)."""

    id: str
    request: dict[str, Any]
    claims: tuple[Truth, ...]

    @property
    def unused(self) -> set[int]:
        named = set()
        for t in self.claims:
            named |= t.necessary | t.sufficient | t.contradicted_by
        return set(range(len(self.request["contexts"]))) - named


def necessity_set(path: Path) -> list[Labelled]:
    """A hand-written necessity set (dev or test), labels as chunk indices."""
    out = []
    for case in load_cases(path):
        at = {c["id"]: i for i, c in enumerate(case.chunks)}
        truths = tuple(
            Truth(
                k,
                g.status,
                _indices(at, g.necessary),
                _indices(at, g.sufficient),
                _indices(at, g.contradicted_by),
            )
            for g, k in zip(case.claims, case.segments, strict=True)
        )
        request = {
            "id": case.id,
            "answer": case.answer,
            "contexts": list(case.chunks),
            "question": case.question,
        }
        out.append(Labelled(case.id, request, truths))
    return out


def _indices(at: dict[str, int], ids: Iterable[str]) -> frozenset[int]:
    return frozenset(at[i] for i in ids)


def hotpot_set(path: Path) -> list[Labelled]:
    """HotpotQA 60-99 as ``benchmarks/eval_verifier.py`` builds them: one declarative claim per
    question, its gold paragraphs needed (yes/no and unrewritable questions skipped)."""
    from eval_verifier import hotpot_cases  # torch, sklearn: only for this set

    from ene_core.text.claims import split_claims

    out = []
    for c in hotpot_cases(path):
        answer = str(c["claim"])
        contexts = [" ".join(p) for p in c["paragraphs"]]  # type: ignore[attr-defined]
        gold = frozenset(c["gold"])  # type: ignore[arg-type]
        # the claim may split into sentences: the answer as a whole needs the gold paragraphs
        first = next(k for k, s in enumerate(split_claims(answer)) if s.checkable)
        out.append(
            Labelled(
                f"hotpot-{c['qi']}",
                {"id": f"hotpot-{c['qi']}", "answer": answer, "contexts": contexts},
                (Truth(first, "supported", gold),),
            )
        )
    return out


# -- scoring ---------------------------------------------------------------------------------
@dataclass
class Tally:
    supported: int = 0  # truly supported claims
    safe: int = 0  # ... that keep every needed chunk
    unused: int = 0  # truly unused chunks
    dropped: int = 0  # ... dropped
    tokens: int = 0  # all context tokens
    saved: int = 0  # ... dropped
    contradicting: int = 0  # truly contradicting chunks
    kept_contra: int = 0  # ... kept
    misses: list[str] = field(default_factory=list)

    def add(self, case: Labelled, eng: EvidenceNecessityGraph, kept: set[int], saved: int) -> None:
        for t in case.claims:
            if t.status == "supported":
                self.supported += 1
                ok = t.necessary <= kept and (not t.sufficient or bool(t.sufficient & kept))
                self.safe += ok
                if not ok:
                    self.misses.append(f"{case.id} claim {t.claim}")
            self.contradicting += len(t.contradicted_by)
            self.kept_contra += len(t.contradicted_by & kept)
        unused = case.unused
        self.unused += len(unused)
        self.dropped += len(unused - kept)
        self.tokens += sum(c.tokens for c in eng.contexts)
        self.saved += saved

    def row(self) -> dict[str, float | None]:
        return {
            "safety": _ratio(self.safe, self.supported),
            "unused_dropped": _ratio(self.dropped, self.unused),
            "tokens_saved": _ratio(self.saved, self.tokens),
            "contradicting_kept": _ratio(self.kept_contra, self.contradicting),
        }


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def score(
    cases: Sequence[Labelled],
    engs: Sequence[EvidenceNecessityGraph],
    keep: str,
    margins: SafeMargins | None = None,
) -> Tally:
    """The tally of one policy over a set."""
    tally = Tally()
    for case, eng in zip(cases, engs, strict=True):
        result = prune(case.request["contexts"], eng, keep=keep, margins=margins)  # type: ignore[arg-type]
        tally.add(case, eng, set(result.kept_indices), result.tokens_saved)
    return tally


def wilson_low(successes: int, n: int, z: float) -> float:
    """The lower end of the Wilson score interval of ``successes / n`` (``z``: e.g. 1.96)."""
    if n == 0:
        return 0.0
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def calibrate(
    cases: Sequence[Labelled],
    engs: Sequence[EvidenceNecessityGraph],
    *,
    goal: float = GOAL,
    z: float = Z,
    max_margin: float = 0.3,
    step: float = 0.025,
) -> tuple[SafeMargins, dict[str, float | None], bool]:
    """The margins of the ``"safe"`` policy for these (dev) cases: the most unused chunks
    dropped among the grid points whose safety reaches ``goal`` with confidence (the lower end
    of its Wilson interval at ``z``; ``z=0``: the safety itself) (ties: the smallest margins);
    if none does, the safest. Returns the margins, their row and whether the goal was met."""
    grid = [round(i * step, 6) for i in range(round(max_margin / step) + 1)]
    best: tuple[Any, ...] | None = None
    for e, c, a in itertools.product(grid, grid, grid):
        margins = SafeMargins(e, c, a)
        tally = score(cases, engs, "safe", margins)
        row = tally.row()
        safety = wilson_low(tally.safe, tally.supported, z)
        dropped = row["unused_dropped"] or 0.0
        met = safety >= goal
        key = (met, dropped if met else safety, safety if met else dropped, -(e + c + a), -e)
        if best is None or key > best[0]:
            best = (key, margins, row)
    assert best is not None
    return best[1], best[2], bool(best[0][0])


# -- running ---------------------------------------------------------------------------------
def graphs(
    engine: NecessityEngine, name: str, cases: Sequence[Labelled], store: Path | None
) -> tuple[list[EvidenceNecessityGraph], float | None]:
    """Each case's graph: from ``store`` when it holds this set by this verifier, else evaluated
    (and stored). Also the evaluation's seconds (``None`` when reused)."""
    path = store / f"{name}.jsonl" if store else None
    ids = [c.id for c in cases]
    if path and path.exists():
        engs = [EvidenceNecessityGraph.from_json(line) for line in path.read_text().splitlines()]
        same = [e.id for e in engs] == ids and all(
            e.verifier.model == engine.oracle.name and e.verifier.threshold == engine.threshold
            for e in engs
        )
        if same:
            return engs, None
    started = time.perf_counter()
    engs = engine.evaluate_many([c.request for c in cases])
    seconds = time.perf_counter() - started
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(e.to_json() + "\n" for e in engs))
    return engs, seconds


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(results: dict[str, dict[str, dict[str, float | None]]]) -> str:
    lines = [
        "| set | policy | safety | unused dropped | tokens saved | contradicting kept |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, rows in results.items():
        for policy, row in rows.items():
            label = f"**{policy}** (default)" if policy == DEFAULT_KEEP else policy
            lines.append(
                f"| {name} | {label} | {_fmt(row['safety'])} | {_fmt(row['unused_dropped'])} | "
                f"{_fmt(row['tokens_saved'])} | {_fmt(row['contradicting_kept'])} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    defaults = PremisePacker()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=["dev", "test", "hotpot"])
    parser.add_argument("--dev", default=str(DATA), help="the dev set JSONL")
    parser.add_argument("--test", default=str(TEST), help="the sealed test set JSONL")
    parser.add_argument("--hotpot", default=str(HOTPOT), help="hotpot_dev_distractor_first100")
    parser.add_argument("--model", help="local Hugging Face NLI model dir (default: shipped)")
    parser.add_argument("--threshold", type=float, help="tau (default: the model's calibrated)")
    parser.add_argument("--device", help="cpu, cuda ... (default: cuda if available)")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument(
        "--oracle", choices=["nli", "keyword"], default="nli", help="keyword: plumbing only"
    )
    parser.add_argument("--limit", type=int, help="only the first N answers of each set")
    parser.add_argument("--calibrate", action="store_true", help="choose the margins on dev")
    parser.add_argument("--goal", type=float, default=GOAL, help="the safety goal (0.95)")
    parser.add_argument(
        "--z", type=float, default=Z, help="confidence of reaching it (Wilson z; 0: point value)"
    )
    parser.add_argument("--max-margin", type=float, default=0.3)
    parser.add_argument("--engs", metavar="DIR", help="keep the graphs here between runs")
    parser.add_argument("--misses", action="store_true", help="list the unsafe claims (dev)")
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = parser.parse_args(argv)
    args.top_k, args.max_words = defaults.top_k, defaults.max_words
    args.max_sentence_words = defaults.max_sentence_words
    args.raw_quantities, args.contradiction_threshold = not defaults.align_quantities, None
    args.unchecked_amounts = False
    loaders = {
        "dev": lambda: necessity_set(Path(args.dev)),
        "test": lambda: necessity_set(Path(args.test)),
        "hotpot": lambda: hotpot_set(Path(args.hotpot)),
    }
    sets = ["dev", *[s for s in args.sets if s != "dev"]] if args.calibrate else args.sets
    engine = build_engine(args)
    store = Path(args.engs) if args.engs else None
    margins: SafeMargins | None = None
    results: dict[str, dict[str, dict[str, float | None]]] = {}
    out: dict[str, Any] = {"sets": {}}
    try:
        for name in sets:
            if name not in loaders:
                parser.error(f"unknown set {name!r} (dev, test, hotpot)")
            if name == "hotpot" and not Path(args.hotpot).exists():
                print(f"skipped hotpot: no {args.hotpot}", file=sys.stderr)
                continue
            cases = loaders[name]()[: args.limit]
            engs, seconds = graphs(engine, name, cases, store)
            if name == "dev" and args.calibrate:
                margins, row, met = calibrate(
                    cases, engs, goal=args.goal, z=args.z, max_margin=args.max_margin
                )
                out["calibration"] = {"margins": margins.__dict__, "dev": row, "goal_met": met}
            rows = {p: score(cases, engs, p, margins).row() for p in KEEP_POLICIES}
            results[f"{name} ({len(cases)})"] = rows
            out["sets"][name] = {"answers": len(cases), "seconds": seconds, "policies": rows}
            if args.misses and name == "dev":
                print(
                    "unsafe dev claims (safe policy):", score(cases, engs, "safe", margins).misses
                )
    finally:
        engine.close()
    first = next(iter(out["sets"].values()), None)
    v = engine.oracle.name
    print(f"pruning trade-off: model={v} tau={engine.threshold}")
    if first is not None and "calibration" not in out:
        print(f"safe margins: {SafeMargins().__dict__} (the constants in ene_core/kit/pruning.py)")
    print()
    print(table(results))
    if "calibration" in out:
        cal = out["calibration"]
        m = cal["margins"]
        status = "reached" if cal["goal_met"] else "NOT reached (the safest point)"
        print(
            f"\ncalibrated on dev, goal: safety >= {args.goal} (the lower end of its Wilson "
            f"interval at z={args.z}): {status}; dev safety {_fmt(cal['dev']['safety'])}, "
            f"unused dropped {_fmt(cal['dev']['unused_dropped'])}"
        )
        print(
            f"ENTAIL_MARGIN = {m['entail']}\nCONTRA_MARGIN = {m['contra']}\n"
            f"ALONE_MARGIN = {m['alone']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
