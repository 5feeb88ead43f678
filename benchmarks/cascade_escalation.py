"""The share of pairs a Cascade escalates, with the embedded model first, on the dev sets.

    python benchmarks/cascade_escalation.py [--bands 0.05,0.1,0.15,0.2,0.3] [--data FILE ...]

Runs the engine once over the dev sets (``necessity_dev`` and ``necessity_fresh*``; never the
sealed test set) with the embedded verifier, records the scores of every pair it sends to the
model, and counts, for each band, the pairs that ``Cascade(first, then, band=b).unsure`` would
send to ``then`` (around the model's own τ and τ_c). The share depends only on ``first`` and the
band; the pairs the engine asks are exactly these when ``then`` agrees with ``first`` (a second
instance of the embedded model), and nearly so otherwise (later rounds follow the verdicts).
Also prints the share of checkable claims whose own scores (against their packed premise, as the
ENG shows them) lie within the band. CPU, offline.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ene_core import Cascade, NecessityEngine, NLIOracle, Scores
from ene_core.testing import KeywordOracle

DATA = Path(__file__).resolve().parent / "data"
DEV_SETS = ["necessity_dev.jsonl", *(f"necessity_fresh{s}.jsonl" for s in ("", 2, 3, 4, 5, 6))]


class Recording:
    """The embedded model, keeping the scores of every reading it makes."""

    def __init__(self, oracle: NLIOracle) -> None:
        self.oracle = oracle
        self.name, self.revision = oracle.name, oracle.revision
        self.default_threshold = oracle.default_threshold
        self.default_contradiction_threshold = oracle.default_contradiction_threshold
        self.readings: list[Scores] = []
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return self.oracle.count_tokens(text)

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        return self.oracle.count_tokens_many(texts)

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        return self.score_parts([((p,), h) for p, h in pairs])

    def score_parts(self, pairs: Sequence[tuple[Sequence[str], str]]) -> list[Scores]:
        scores = self.oracle.score_parts(pairs)
        with self._lock:
            self.readings += scores
        return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bands", default="0.05,0.1,0.15,0.2,0.3")
    parser.add_argument("--data", nargs="*", default=[str(DATA / n) for n in DEV_SETS])
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args(argv)
    bands = [float(b) for b in args.bands.split(",")]
    first = Recording(NLIOracle(device="cpu"))
    engine = NecessityEngine(first)
    requests = []
    for path in args.data:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                requests.append(
                    {
                        "id": row["id"],
                        "answer": row["answer"],
                        "contexts": row["chunks"],
                        "question": row.get("question"),
                    }
                )
    started = time.perf_counter()
    engs = engine.evaluate_many(requests)
    seconds = time.perf_counter() - started
    claims = [c for eng in engs for c in eng.claims if c.checkable]
    result: dict[str, Any] = {
        "cases": len(engs),
        "claims": len(claims),
        "readings": len(first.readings),
        "threshold": engine.threshold,
        "contradiction_threshold": engine.contradiction_threshold,
        "seconds": round(seconds, 1),
        "bands": {},
    }
    print(
        f"{len(engs)} cases, {len(claims)} claims, {len(first.readings)} model readings "
        f"(tau={engine.threshold:g}, tau_c={engine.contradiction_threshold:g}), {seconds:.0f}s"
    )
    print("band   pairs escalated          claims whose scores lie within the band")
    for band in bands:
        cascade = Cascade(first, KeywordOracle(), band=band)
        pairs = sum(cascade.unsure(s) for s in first.readings)
        unsure = sum(cascade.unsure(Scores(c.p_entail or 0.0, c.p_contra or 0.0)) for c in claims)
        result["bands"][band] = {"pairs": pairs, "claims": unsure}
        print(
            f"{band:<6g} {pairs:>5} / {len(first.readings)} ({pairs / len(first.readings):.1%})"
            f"       {unsure:>4} / {len(claims)} ({unsure / len(claims):.1%})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
