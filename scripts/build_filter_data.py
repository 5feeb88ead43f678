"""Build the chunk filter's training and held-out pairs from public data (issue 55).

Sources (all in ``../shared/data`` or the project's own dev sets):

- HotpotQA dev questions 0-47 (train) and 48-59 (held out): each question against its ten
  paragraphs (the supporting ones needed, the retrieved distractors, which share the question's
  words, not), and each supporting paragraph alone among the four paragraphs of *other*
  questions that share most of its question's words (not needed: the twin of every positive
  that wins on shared words). Questions 60-99 are the benchmark and are never read here.
- Off-topic twins (train only): for each request, chunks of the other kind of data (hand-written
  chunks for HotpotQA questions; Wikipedia paragraphs and other cases' chunks for hand-written
  cases) sharing no content word with the question, not needed, so that a chunk's length and
  style are no cue.
- QNLI dev (train only, weight 0.5; the shipped filter leaves it out: ``--no-qnli``): a question and a sentence that answers it (needed) or a
  sentence of the same passage that does not.
- The hand-written necessity sets (the chunks a supported claim needs or may use are needed,
  every other chunk is not): necessity_dev, necessity_fresh, fresh2, fresh3 (train, weight 2,
  plus two chunks of other cases of the same file that share the question's words, not needed),
  necessity_fresh4 (held out). fresh5, fresh6 and necessity_test are never read here: they stay
  held out for benchmarks/chunk_filter.py.

    python scripts/build_filter_data.py --out /tmp/filter_data
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ene_core.filtering.training import Pair, write_pairs  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
HOTPOT = SHARED / "hotpotqa" / "hotpot_dev_distractor_first100.json"
QNLI = SHARED / "nli_more" / "qnli_dev" / "data.jsonl"
DATA = ROOT / "benchmarks" / "data"
TRAIN_SETS = ("necessity_dev", "necessity_fresh", "necessity_fresh2", "necessity_fresh3")
DEV_SETS = ("necessity_fresh4",)
HOTPOT_TRAIN = range(0, 48)
HOTPOT_DEV = range(48, 60)
HOTPOT_BENCHMARK = range(60, 100)  # never read here

STOP = set(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "as",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "not",
        "no",
        "yes",
        "than",
        "then",
        "there",
        "their",
        "they",
        "he",
        "she",
        "his",
        "her",
        "him",
        "i",
        "you",
        "your",
        "we",
        "our",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
        "also",
        "into",
        "about",
        "over",
        "after",
        "before",
        "during",
        "between",
        "both",
        "same",
        "other",
        "such",
        "more",
        "most",
        "many",
        "much",
        "one",
        "two",
        "first",
    ]
)
WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that are not stop words."""
    return {w for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 1}


def paragraph_text(sentences: list[str]) -> str:
    return " ".join(s.strip() for s in sentences).strip()


def hotpot_pairs(indices: range, *, title_prefix: float, rng: random.Random) -> list[Pair]:
    """Ten-paragraph groups and supporting-paragraph isolation groups of the questions."""
    data = json.loads(HOTPOT.read_text(encoding="utf-8"))
    questions = [data[i] for i in indices]
    pool = [
        (qi, title, paragraph_text(sentences))
        for qi, q in zip(indices, questions, strict=False)
        for title, sentences in q["context"]
    ]
    pairs: list[Pair] = []
    for qi, q in zip(indices, questions, strict=False):
        gold = {title for title, _ in q["supporting_facts"]}

        def text_of(title: str, body: str) -> str:
            return f"{title}: {body}" if rng.random() < title_prefix else body

        for title, sentences in q["context"]:
            pairs.append(
                Pair(
                    q["question"],
                    text_of(title, paragraph_text(sentences)),
                    int(title in gold),
                    1.0,
                    f"hotpot-{qi}",
                    "hotpot",
                )
            )
        words = content_words(q["question"])
        others = sorted(
            (p for p in pool if p[0] != qi),
            key=lambda p: (-len(words & content_words(p[2])), p[0], p[1]),
        )
        for j, (title, sentences) in enumerate(t for t in q["context"] if t[0] in gold):
            group = f"hotpot-iso-{qi}-{j}"
            pairs.append(
                Pair(
                    q["question"],
                    text_of(title, paragraph_text(sentences)),
                    1,
                    1.0,
                    group,
                    "hotpot-iso",
                )
            )
            for _, o_title, o_text in others[:4]:
                pairs.append(
                    Pair(q["question"], text_of(o_title, o_text), 0, 1.0, group, "hotpot-iso")
                )
    return pairs


def qnli_pairs() -> list[Pair]:
    pairs = []
    for line in QNLI.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        pairs.append(
            Pair(
                row["premise"],
                row["hypothesis"],
                int(row["label"] == "entailment"),
                0.5,
                f"qnli-{row['premise']}",
                "qnli",
            )
        )
    return pairs


def needed_ids(case: dict) -> set[str]:
    """The chunks a supported claim needs or may use (``necessary`` and ``sufficient``)."""
    needed: set[str] = set()
    for claim in case["claims"]:
        if claim["status"] == "supported":
            needed.update(claim.get("necessary", []))
            for alternative in claim.get("sufficient", []) or []:
                if isinstance(alternative, list):
                    needed.update(alternative)
                else:
                    needed.add(alternative)
    return needed


def necessity_pairs(name: str, *, weight: float, cross: int) -> list[Pair]:
    cases = [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line]
    pairs = []
    for case in cases:
        question = case.get("question") or ""
        needed = needed_ids(case)
        group = f"{name}:{case['id']}"
        for chunk in case["chunks"]:
            pairs.append(
                Pair(question, chunk["text"], int(chunk["id"] in needed), weight, group, name)
            )
        if cross:
            words = content_words(question)
            own = {c["text"] for c in case["chunks"]}
            others = sorted(
                {c["text"] for other in cases if other is not case for c in other["chunks"]} - own,
                key=lambda t: (-len(words & content_words(t)), t),
            )
            for text in others[:cross]:
                pairs.append(Pair(question, text, 0, weight, group, f"{name}-cross"))
    return pairs


def off_topic_twins(
    pairs: list[Pair], pool: list[str], per_group: int, rng: random.Random
) -> list[Pair]:
    """For each request, ``per_group`` chunks of the other kind of data (short hand-written
    chunks for HotpotQA questions, Wikipedia paragraphs for the hand-written cases) that share
    no content word with its question, not needed: without them, chunk length and style alone
    told a needed chunk from a distractor."""
    out: list[Pair] = []
    seen: set[str] = set()
    for pair in pairs:
        if pair.group in seen:
            continue
        seen.add(pair.group)
        words = content_words(pair.question)
        picked = 0
        for text in rng.sample(pool, min(len(pool), 50)):
            if picked == per_group:
                break
            if not words & content_words(text):
                out.append(Pair(pair.question, text, 0, pair.weight, pair.group, "off-topic"))
                picked += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="/tmp/filter_data")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    hotpot = hotpot_pairs(HOTPOT_TRAIN, title_prefix=0.5, rng=rng)
    written: list[Pair] = []
    for name in TRAIN_SETS:
        written += necessity_pairs(name, weight=2.0, cross=2)
    short_pool = sorted({p.text for p in written})
    long_pool = sorted({p.text for p in hotpot})
    train = (
        hotpot
        + written
        + off_topic_twins(hotpot, short_pool, 2, rng)
        + off_topic_twins(written, long_pool, 1, rng)
        + off_topic_twins(written, short_pool, 1, rng)
        + qnli_pairs()
    )
    dev = hotpot_pairs(HOTPOT_DEV, title_prefix=0.0, rng=rng)
    for name in DEV_SETS:
        dev += necessity_pairs(name, weight=1.0, cross=0)
    write_pairs(train, out / "train.jsonl")
    write_pairs(dev, out / "dev.jsonl")
    for label, pairs in (("train", train), ("dev", dev)):
        by_source: dict[str, list[int]] = {}
        for p in pairs:
            by_source.setdefault(p.source, []).append(p.label)
        print(label, len(pairs), {k: (len(v), sum(v)) for k, v in sorted(by_source.items())})


if __name__ == "__main__":
    main()
