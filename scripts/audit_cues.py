"""Label shares per surface cue, and two cue-only baselines, for any NLI pairs file::

    python scripts/audit_cues.py runs/v3/v3_train.jsonl.gz [--source-prefix v3:]

Cues: a negation word added to (or removed from) the hypothesis; a number or number word in
the hypothesis not written verbatim in the premise; every content word of the hypothesis in the
premise; hypothesis-premise overlap bins; hypothesis length bins; a premise sentence with one
span of at most three tokens replaced ("one span swapped": breaking_nli's and the swap rules'
form). Baselines: a hypothesis-only classifier (logistic regression on hypothesis word
1-2-grams) and an overlap-only one (a shallow tree on overlap features), both trained on 80 % and
scored on 20 % of the file, beside the
majority class. A cue a model could learn shows as label shares far from the file's overall
shares, or a baseline far above the majority class.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_nli_data import read_jsonl_gz
from synth_nli import STOPWORDS, Pair

LABELS = ("entail", "neutral", "contra", "not-entail")
NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|nobody|nothing|cannot)\b|n't\b", re.I)
_NUM = re.compile(
    r"\b(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
    r"thirty|forty|fifty|hundred|thousand|million|dozen|half|quarter)\b",
    re.I,
)
_WORD = re.compile(r"[a-z0-9]+")
_TOKEN = re.compile(r"\w+(?:[.,']\w+)*|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def overlap(p: Pair) -> float:
    h = _content(p.hypothesis)
    return len(h & _content(p.premise)) / max(len(h), 1)


def swapped_span(p: Pair, longest: int = 3) -> tuple[str, str] | None:
    """(old, new) where the hypothesis (5+ tokens) is a sentence of the premise with one span of
    at most ``longest`` tokens replaced by another such span, else None."""
    hyp = [t.lower() for t in _TOKEN.findall(p.hypothesis)]
    if len(hyp) < 5:
        return None
    for sentence in _SENTENCE_END.split(p.premise):
        own = [t.lower() for t in _TOKEN.findall(sentence)]
        if abs(len(own) - len(hyp)) >= longest:
            continue
        shortest = min(len(own), len(hyp))
        head = next((i for i in range(shortest) if own[i] != hyp[i]), shortest)
        tail = next(
            (j for j in range(shortest - head) if own[-1 - j] != hyp[-1 - j]), shortest - head
        )
        old, new = own[head : len(own) - tail], hyp[head : len(hyp) - tail]
        if old and new and max(len(old), len(new)) <= longest:
            return " ".join(old), " ".join(new)
    return None


CUES: dict[str, Callable[[Pair], bool]] = {
    "negation added (in hypothesis, not premise)": lambda p: (
        bool(NEGATION.search(p.hypothesis)) and not NEGATION.search(p.premise)
    ),
    "negation removed (in premise, not hypothesis)": lambda p: (
        bool(NEGATION.search(p.premise)) and not NEGATION.search(p.hypothesis)
    ),
    "number not verbatim in premise": lambda p: any(
        m.group(0).lower() not in p.premise.lower() for m in _NUM.finditer(p.hypothesis)
    ),
    "every content word present": lambda p: overlap(p) == 1.0,
    "overlap < 0.5": lambda p: overlap(p) < 0.5,
    "overlap 0.5-0.99": lambda p: 0.5 <= overlap(p) < 1.0,
    "hypothesis <= 6 words": lambda p: len(p.hypothesis.split()) <= 6,
    "hypothesis 7-14 words": lambda p: 7 <= len(p.hypothesis.split()) <= 14,
    "hypothesis >= 15 words": lambda p: len(p.hypothesis.split()) >= 15,
    "one span swapped (<= 3 tokens)": lambda p: swapped_span(p) is not None,
}


def shares(pairs: Sequence[Pair]) -> list[float]:
    c = Counter(p.label for p in pairs)
    return [c[i] / max(len(pairs), 1) for i in range(4)]


def cue_table(pairs: Sequence[Pair]) -> tuple[str, float]:
    """Markdown table of label shares per cue; also the largest gap (points) to overall."""
    overall = shares(pairs)
    rows = [
        "| cue | pairs | entail / neutral / contra / not-entail | max gap (points) |",
        "|---|---|---|---|",
        f"| all pairs | {len(pairs)} | {' / '.join(f'{x:.2f}' for x in overall)} | |",
    ]
    worst = 0.0
    for name, cue in CUES.items():
        sel = [p for p in pairs if cue(p)]
        if not sel:
            rows.append(f"| {name} | 0 | | |")
            continue
        sh = shares(sel)
        gap = max(abs(a - b) for a, b in zip(sh, overall, strict=False)) * 100
        if len(sel) >= 50:
            worst = max(worst, gap)
        rows.append(f"| {name} | {len(sel)} | {' / '.join(f'{x:.2f}' for x in sh)} | {gap:.0f} |")
    return "\n".join(rows), worst


def baselines(pairs: Sequence[Pair], seed: int = 0, limit: int = 60000) -> dict[str, float]:
    """Held-out accuracy of the hypothesis-only and overlap-only classifiers and the majority."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    data = list(pairs)
    random.Random(seed).shuffle(data)
    data = data[:limit]
    cut = int(len(data) * 0.8)
    train, test = data[:cut], data[cut:]
    y_tr = [p.label for p in train]
    y_te = [p.label for p in test]
    vec = CountVectorizer(ngram_range=(1, 2), min_df=2, max_features=50000)
    x_tr = vec.fit_transform([p.hypothesis for p in train])
    clf = LogisticRegression(max_iter=300, C=1.0).fit(x_tr, y_tr)
    hyp_acc = float((clf.predict(vec.transform([p.hypothesis for p in test])) == y_te).mean())

    def feats(p: Pair) -> list[float]:
        return [
            overlap(p),
            len(p.hypothesis.split()),
            len(p.premise.split()),
            float(bool(NEGATION.search(p.hypothesis))),
            float(bool(NEGATION.search(p.premise))),
        ]

    tree = DecisionTreeClassifier(max_depth=6, random_state=seed)
    tree.fit([feats(p) for p in train], y_tr)
    ov_acc = float((tree.predict([feats(p) for p in test]) == y_te).mean())
    majority = Counter(y_te).most_common(1)[0][1] / max(len(y_te), 1)
    return {"hypothesis_only": hyp_acc, "overlap_only": ov_acc, "majority": majority}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--source-prefix", default="", help="only pairs whose source starts so")
    args = ap.parse_args()
    for path in args.files:
        pairs = [p for p in read_jsonl_gz(path) if p.source.startswith(args.source_prefix)]
        table, worst = cue_table(pairs)
        b = baselines(pairs)
        print(f"### {path} {args.source_prefix or ''}({len(pairs)} pairs)\n\n{table}\n")
        print(
            f"largest cue gap {worst:.0f} points (cues with >= 50 pairs); hypothesis-only "
            f"{b['hypothesis_only']:.3f}, overlap-only {b['overlap_only']:.3f}, majority "
            f"{b['majority']:.3f}\n"
        )


if __name__ == "__main__":
    main()
