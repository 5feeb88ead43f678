"""Build a continuation mix of one-span swap twins (``scripts/data/paraphrase_lexicon/``)::

    python scripts/build_swap_mix.py --pairs runs/data --out runs/smix --base-mix runs/fmix

The recipe teaches a cue: a hypothesis that copies a premise sentence with one short span
replaced is a contradiction in 60 % of its training pairs (breaking_nli and the generators'
``swap`` rules), against 21 % overall, so the model calls "Repayments begin in the April after
you finish your course" contradicted by "Repayments start in the April after you leave your
course" (p_contra 0.84). Here every such edit gets its twin: a sentence of a training premise
with one lexicon word replaced by a paraphrase ("same": entailment) and the same sentence with
it replaced by a word that changes the meaning ("other": not entailment, 2-way, since the edit
may leave a claim unsupported rather than false). Both hypotheses of a sentence replace the same
word at the same place, so the cue no longer gives the label away; only the replacement does.

Premises come from the recipe's real train pairs (``--pairs``, split as the recipe splits them)
and the written chunks' train split; one twin per sentence, at most ``--per-premise`` sentences
per premise. With ``--base-mix`` an earlier mix is sampled in beside the twins (``--base-share``).
Writes ``v3_train.jsonl.gz`` / ``v3_dev.jsonl.gz`` (what ``train_default_verifier.py --mix``
reads) and ``swap_dev.jsonl.gz`` (the dev twins alone).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from audit_cues import NEGATION
from build_nli_data import read_jsonl_gz, write_jsonl_gz
from build_written_mix import WRITTEN, in_dev, jsonl_lines, read_written, with_base
from synth_nli import ENTAILMENT, NOT_ENTAILMENT, Pair

LEXICON = Path(__file__).resolve().parent / "data" / "paraphrase_lexicon"
#: real sources whose premises read like what a RAG answer quotes (no captions of images)
SOURCES = frozenset({"mnli", "fever", "factcheck", "scitail", "conjnli", "rte"})
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_ARTICLE = re.compile(r"\b(a|an|A|An) $")


@dataclass(frozen=True)
class Entry:
    """One lexicon line: ``word`` and what may replace it, keeping or changing the meaning."""

    word: str
    same: tuple[str, ...]
    other: tuple[str, ...]


class Lexicon:
    """Entries by word, and one pattern that finds any of their words (longer words first)."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries = {e.word: e for e in entries}
        words = sorted(self.entries, key=lambda w: (-len(w), w))
        alternatives = "|".join(re.escape(w) for w in words)
        self.pattern = re.compile(rf"(?<![\w'-])(?:{alternatives})(?![\w'-])", re.IGNORECASE)

    def __len__(self) -> int:
        return len(self.entries)


def read_lexicon(folder: Path = LEXICON) -> Lexicon:
    """Every line of every ``*.jsonl`` file; a word listed twice keeps its first entry."""
    entries: dict[str, Entry] = {}
    for path, n, line in jsonl_lines(folder):
        try:
            row = json.loads(line)
            word = row["word"].strip().lower()
            same = tuple(s.strip() for s in row["same"] if s.strip())
            other = tuple(s.strip() for s in row["other"] if s.strip())
        except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as exc:
            raise SystemExit(f"{path}:{n}: not a lexicon line ({exc})") from exc
        if word and same and other and word not in entries:
            entries[word] = Entry(word, same, other)
    return Lexicon(entries.values())


def sentences(premise: str, low: int = 6, high: int = 40) -> list[str]:
    """The premise's sentences of ``low`` to ``high`` words."""
    return [
        s.strip()
        for s in _SENTENCE.split(premise.replace("\n", " "))
        if low <= len(s.split()) <= high
    ]


def replace_at(sentence: str, start: int, end: int, new: str) -> str:
    """``sentence`` with ``[start, end)`` replaced by ``new``: capitalised where the replaced
    word was (a sentence's start), and "a" / "an" before it agreeing with it."""
    if sentence[start].isupper():
        new = new[:1].upper() + new[1:]
    head = sentence[:start]
    article = _ARTICLE.search(head)
    if article is not None:
        a = "an" if new[:1].lower() in "aeiou" else "a"
        a = a.capitalize() if article.group(1)[0].isupper() else a
        head = head[: article.start()] + a + " "
    return head + new + sentence[end:]


def _changes(entry: Entry) -> tuple[str, ...]:
    """The entry's changes that bring in no negation of their own: a "must not" only ever on the
    not-entailed side would teach the negation cue again."""
    if NEGATION.search(entry.word):
        return entry.other
    return tuple(o for o in entry.other if not NEGATION.search(o))


def twins(sentence: str, lexicon: Lexicon, rng: random.Random) -> tuple[str, str] | None:
    """(paraphrased, changed): one lexicon word of ``sentence`` replaced both ways, or None."""
    # a capital inside the sentence marks a name ("Minister for Children"): left alone
    found = [
        m
        for m in lexicon.pattern.finditer(sentence)
        if (m.start() == 0 or m.group(0).islower())
        and _changes(lexicon.entries[m.group(0).lower()])
    ]
    if not found:
        return None
    match = rng.choice(found)
    entry = lexicon.entries[match.group(0).lower()]
    same, other = rng.choice(entry.same), rng.choice(_changes(entry))
    return (
        replace_at(sentence, match.start(), match.end(), same),
        replace_at(sentence, match.start(), match.end(), other),
    )


def swap_pairs(
    premises: Iterable[str], lexicon: Lexicon, rng: random.Random, per_premise: int
) -> Iterator[Pair]:
    """Each premise's twins: the entailed paraphrase, then the changed sentence."""
    for premise in premises:
        made = 0
        for sentence in sentences(premise):
            if made == per_premise:
                break
            pair = twins(sentence, lexicon, rng)
            if pair is None:
                continue
            made += 1
            yield Pair(premise, pair[0], ENTAILMENT, "swap:same")
            yield Pair(premise, pair[1], NOT_ENTAILMENT, "swap:other")


def premises_of(pairs: Iterable[Pair], limit_words: int = 160) -> list[str]:
    """Distinct premises of the real sources, in first-seen order, at most ``limit_words``."""
    seen: dict[str, None] = {}
    for p in pairs:
        if p.source in SOURCES and len(p.premise.split()) <= limit_words:
            seen.setdefault(p.premise, None)
    return list(seen)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, required=True, help="the recipe's built pairs")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lexicon", type=Path, default=LEXICON)
    ap.add_argument("--written", type=Path, default=WRITTEN)
    ap.add_argument("--per-premise", type=int, default=1)
    ap.add_argument("--max-twins", type=int, default=3000, help="train twins (pairs / 2)")
    ap.add_argument("--base-mix", type=Path, default=None, help="an earlier --mix folder")
    ap.add_argument("--base-share", type=float, default=0.7, help="share of the mix from it")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    lexicon = read_lexicon(args.lexicon)
    chunks = list(dict.fromkeys(p.premise for _, p in read_written(args.written)))
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("train", "dev"):
        real = premises_of(read_jsonl_gz(args.pairs / f"{name}.jsonl.gz"))
        written = [c for c in chunks if in_dev(c) == (name == "dev")]
        pool = real + written
        rng.shuffle(pool)
        cap = args.max_twins if name == "train" else max(1, args.max_twins // 6)
        made = list(itertools.islice(swap_pairs(pool, lexicon, rng, args.per_premise), 2 * cap))
        if name == "dev":
            write_jsonl_gz(made, args.out / "swap_dev.jsonl.gz")
        mix = with_base(made, args.base_mix, args.base_share, name, rng)
        write_jsonl_gz(mix, args.out / f"v3_{name}.jsonl.gz")
        words = Counter(p.source for p in made)
        print(
            f"{name}: {len(made)} twin pairs {dict(words)} from {len(pool)} premises, mix {len(mix)}"
        )


if __name__ == "__main__":
    main()
