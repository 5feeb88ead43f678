"""Short answers checked as the answer to their question (issue 22), on held-out HotpotQA.

    python benchmarks/short_answers.py [--model PATH] [--questions 60:100] [--device cpu]
    python benchmarks/short_answers.py --data qa [--split dev|test]    # the written QA set

For each HotpotQA dev question (60-99 by default: never trained on), two answers are evaluated
against the question's ten paragraphs, with the question:

* the gold answer ("Ronald Shusett", "821", "no"), which should be supported;
* a wrong answer drawn deterministically from the same paragraphs (:func:`wrong_answer`): for
  yes/no the flipped answer; for a choice question ("A or B?") the other option; for an answer
  with a number the same answer with another number of the paragraphs; otherwise an entity of
  the paragraphs with about as many words (a lower-case word for a lower-case answer), never
  one that appears in the question or overlaps the gold answer.

An answer *passes* when none of its checked claims is unsupported or contradicted, so an answer
with nothing checked passes: that is what a user sees, no flag. Balanced accuracy is the mean of
the right answers' pass rate and the wrong answers' flag rate. Two engines are compared on the
same verifier: with short answers read as the answer to the question (this engine), and as the
engine was before (a short answer of two or more words checked as its own text, one word not
checked at all).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ene_core import EvidenceNecessityGraph, NecessityEngine, NLIOracle
from ene_core.engine import rounds as engine_rounds
from ene_core.text import claims as claims_module
from ene_core.text.claims import Segment
from ene_core.text.short_answers import yes_no

QA = Path(__file__).resolve().parent / "data" / "short_qa.jsonl"
HOTPOT = (
    Path(__file__).resolve().parents[2] / "shared/data/hotpotqa/hotpot_dev_distractor_first100.json"
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_TOKEN = r"[A-Z0-9][\w'\u00c0-\u024f-]*(?:\.(?=[A-Z]))?"
_ENTITY = re.compile(rf"(?<![\w.]){_TOKEN}(?:\s+(?:(?:of|the|and|de|for|in)\s+)?{_TOKEN})*")
_LOWER = re.compile(r"\b[a-z][a-z-]{3,}\b")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "this that with from were been have their there which what when where also into than "
        "then they them these those such some over after before about other more most only very",
    )
)
_LEADING = frozenset({"In", "On", "At", "By", "For", "From", "With", "As", "After", "During"})
_CHOICE = re.compile(r",?\s*([^,?]+?)\s+or\s+([^,?]+?)\s*\??\s*$")


@dataclass(frozen=True)
class Case:
    qi: int
    question: str
    contexts: list[str]
    right: str
    wrong: str


def _key(qi: int, text: str) -> str:
    return hashlib.sha256(f"{qi}:{text}".encode()).hexdigest()


def _overlaps(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return a in b or b in a


def wrong_answer(qi: int, question: str, answer: str, paragraphs: Sequence[str]) -> str | None:
    """A wrong answer of the gold answer's shape, from the question's own paragraphs."""
    polarity = yes_no(answer)
    if polarity is not None and len(answer.split()) == 1:
        return "no" if polarity else "yes"
    text = " ".join(paragraphs)
    choice = _CHOICE.search(question.split(":")[-1])
    if choice:
        options = [o.strip(" \"'") for o in choice.groups()]
        words = set(answer.lower().split())
        scores = [len(words & set(o.lower().split())) for o in options]
        if max(scores) > 0 and scores[0] != scores[1]:
            return options[1] if scores[0] > scores[1] else options[0]
    number = _NUMBER.search(answer)
    if number:
        digits = len(re.sub(r"\D", "", number.group()))
        pool = sorted(
            {
                n
                for n in _NUMBER.findall(text)
                if n != number.group() and len(re.sub(r"\D", "", n)) == digits
            },
            key=lambda n: _key(qi, n),
        )
        value = pool[0] if pool else str(int(re.sub(r"\D", "", number.group())) + 7)
        return answer[: number.start()] + value + answer[number.end() :]
    size = len(answer.split())
    if answer[:1].islower():
        candidates = {w for w in _LOWER.findall(text) if w not in _STOP}
    else:
        candidates = set(_entities(text))
    candidates = {
        c
        for c in candidates
        if not _overlaps(c, answer)
        and c.lower() not in question.lower()
        and bool(re.search(r"\d", c)) == bool(re.search(r"\d", answer))
    }
    if not candidates:
        return None
    return min(candidates, key=lambda c: (abs(len(c.split()) - size), _key(qi, c)))


def _entities(text: str) -> Iterator[str]:
    """Capitalised names, sentence by sentence; a sentence's first word only when it is
    capitalised inside a sentence too ("The Office", not "Recent")."""
    sentences = re.split(r"(?<=[.!?])\s+", text)
    inside = {w for s in sentences for w in s.split()[1:] if w[:1].isupper()}
    for sentence in sentences:
        for match in _ENTITY.finditer(sentence):
            words = match.group().split()
            if words[0] in _LEADING or (match.start() == 0 and words[0] not in inside):
                words = words[1:]
            if words:
                yield " ".join(words).rstrip(".")


def qa_cases(path: Path, split: str) -> list[Case]:
    """The written QA set (``benchmarks/data/short_qa.jsonl``): one split's cases."""
    cases = []
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        if split in ("all", row["split"]):
            cases.append(Case(k, row["question"], row["contexts"], row["right"], row["wrong"]))
    return cases


@contextmanager
def hypothesis_form(form: str) -> Iterator[None]:
    """Short answers read in ``form`` ("declarative" where a rule writes one, or always
    "question_answer") while the block runs."""
    default = claims_module.DEFAULT_FORM
    claims_module.DEFAULT_FORM = form  # type: ignore[assignment]
    try:
        yield
    finally:
        claims_module.DEFAULT_FORM = default


def build_cases(lo: int, hi: int) -> list[Case]:
    data = json.loads(HOTPOT.read_text(encoding="utf-8"))
    cases = []
    for qi in range(lo, min(hi, len(data))):
        q = data[qi]
        contexts = ["".join(sents).strip() for _, sents in q["context"]]
        wrong = wrong_answer(qi, q["question"], q["answer"], contexts)
        if wrong is not None:
            cases.append(Case(qi, q["question"], contexts, q["answer"], wrong))
    return cases


# -- the engine before short answers ------------------------------------------------------------
def _as_before(segments: Sequence[Segment], question: str | None) -> list[Segment]:
    """Claims as the engine made them before short answers: a fragment of two or more words is
    a claim checked as its own text, a one-word fragment is filler."""
    return [
        replace(s, kind="claim" if len(s.text.split()) > 1 else "filler")
        if s.kind == "fragment"
        else s
        for s in segments
    ]


@contextmanager
def engine_before_short_answers() -> Iterator[None]:
    reader = engine_rounds.read_with_question
    engine_rounds.read_with_question = _as_before  # type: ignore[assignment]
    try:
        yield
    finally:
        engine_rounds.read_with_question = reader


# -- scoring ------------------------------------------------------------------------------------
def passes(eng: EvidenceNecessityGraph) -> bool:
    return not any(c.checkable and c.status != "supported" for c in eng.claims)


def checked(eng: EvidenceNecessityGraph) -> bool:
    return any(c.checkable for c in eng.claims)


def form(eng: EvidenceNecessityGraph) -> str:
    claims = [c for c in eng.claims if c.checkable]
    if not claims:
        return "nothing checked"
    if all(c.hypothesis is None for c in claims):
        return "own text"
    if any(c.hypothesis_form == "declarative" for c in claims):
        return "declarative claim"
    return "question-answer form"


def evaluate(engine: NecessityEngine, cases: Sequence[Case]) -> dict[str, Any]:
    requests = [
        {"answer": answer, "contexts": c.contexts, "question": c.question, "id": f"{c.qi}:{kind}"}
        for c in cases
        for kind, answer in (("right", c.right), ("wrong", c.wrong))
    ]
    started = time.perf_counter()
    engs = engine.evaluate_many(requests)
    seconds = time.perf_counter() - started
    right, wrong = engs[0::2], engs[1::2]
    tpr = sum(passes(e) for e in right) / len(right)
    tnr = sum(not passes(e) for e in wrong) / len(wrong)
    by_form: Counter[tuple[str, str, bool]] = Counter()
    for kind, group in (("right", right), ("wrong", wrong)):
        for e in group:
            by_form[(form(e), kind, passes(e) == (kind == "right"))] += 1
    return {
        "right_pass": tpr,
        "wrong_flagged": tnr,
        "balanced_accuracy": (tpr + tnr) / 2,
        "unchecked_right": sum(not checked(e) for e in right),
        "unchecked_wrong": sum(not checked(e) for e in wrong),
        "seconds": seconds,
        "by_form": by_form,
        "engs": engs,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="NLI model directory (default: the shipped verifier)")
    parser.add_argument("--data", choices=["hotpot", "qa"], default="hotpot")
    parser.add_argument("--questions", default="60:100", help="HotpotQA dev range (60:100)")
    parser.add_argument("--split", default="test", help="qa: dev, test or all (test)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--show", action="store_true", help="print every answer's verdicts")
    args = parser.parse_args(argv)
    if args.data == "qa":
        cases, what = qa_cases(QA, args.split), f"written QA set ({QA.name}), {args.split}"
    else:
        if not HOTPOT.exists():
            print(f"no HotpotQA at {HOTPOT}: skipped", file=sys.stderr)
            return {}
        lo, hi = (int(x) for x in args.questions.split(":"))
        cases, what = build_cases(lo, hi), f"HotpotQA dev {lo}-{hi - 1}"
    oracle = NLIOracle(args.model, device=args.device)
    engine = NecessityEngine(oracle)
    results: dict[str, dict[str, Any]] = {}
    shipped = claims_module.DEFAULT_FORM
    for name, form in (
        ("declarative where a rule applies", "declarative"),
        ("question-answer form always", "question_answer"),
    ):
        engine.cache = type(engine.cache)(engine.cache.size)  # no scores carried across
        with hypothesis_form(form):
            results[name + (" (default)" if form == shipped else "")] = evaluate(engine, cases)
    engine.cache = type(engine.cache)(engine.cache.size)
    with engine_before_short_answers():
        results["before (answers as text)"] = evaluate(engine, cases)
    engine.close()

    n = len(cases)
    print(
        f"{what}: {n} questions, {n} right + {n} wrong answers; verifier {oracle.name} "
        f"({oracle.revision}), tau={engine.threshold}"
    )
    print(
        "| engine | right answers pass | wrong answers flagged | balanced accuracy "
        "| nothing checked (right / wrong) | time s |\n|---|---:|---:|---:|---:|---:|"
    )
    for name, r in results.items():
        print(
            f"| {name} | {r['right_pass']:.3f} | {r['wrong_flagged']:.3f} | "
            f"{r['balanced_accuracy']:.3f} | {r['unchecked_right']} / {r['unchecked_wrong']} "
            f"| {r['seconds']:.0f} |"
        )
    default = next(k for k in results if k.endswith("(default)"))
    print(f"\n{default}, by what the verifier read (answers judged correctly / all):")
    forms = results[default]["by_form"]
    for name in sorted({f for f, _, _ in forms}):
        cells = []
        for kind in ("right", "wrong"):
            good, bad = forms[(name, kind, True)], forms[(name, kind, False)]
            cells.append(f"{kind} {good}/{good + bad}")
        print(f"  {name:<22} " + ", ".join(cells))
    if args.show:
        ours = results[default]["engs"]
        for c, (r, w) in zip(cases, zip(ours[0::2], ours[1::2], strict=True), strict=True):
            print(f"\n[{c.qi}] {c.question}")
            for label, e in (("right", r), ("wrong", w)):
                for claim in e.claims:
                    read = claim.hypothesis or claim.text
                    print(f"  {label:<5} {claim.status or claim.kind:<12} {read}")
    return results


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
