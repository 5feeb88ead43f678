"""Build a continuation mix from hand-written pairs (``scripts/data/written_pairs/``)::

    python scripts/build_written_mix.py --out runs/wmix --base-mix runs/topic --base-share 0.4

The written pairs are RAG-shaped: a documentation-style chunk and claims about it in an answer's
words (eight per chunk; twelve in the third and fourth). The first set (products ... workplace) has
a reworded fact, a fact in another form, a near copy with a synonym and its twin with a contrasting
word, a reworded contradiction, a negated claim under either label and two same-topic neutrals; the
second (education ... sport) has a negation rewording, a hedged fact, two facts joined, a condition
restated (each beside its contradicting twin) and a true fact with an unstated detail added; the
third (automotive ... utilities) writes four frames (a negation, a condition, two facts joined, a
hedge) once per label in the same phrasing, so the claim's wording alone does not give its label;
the fourth (childcare ... theatre) writes the same way four frames on amounts and binding (an
amount in another form, a computed consequence, a value bound to one of two parallel entities, a
limit restated). Each pair is used twice: against its own chunk, and against its chunk packed
between chunks of other domains (the engine reads a claim against every chunk at once). Chunks are
split into train and dev by the recipe's premise hash, so no chunk is in both. With ``--base-mix``
the earlier mix (``v3_train`` / ``v3_dev``) is sampled in beside them, so the continuation keeps
what that mix taught. With ``--two-way-contradictions`` the written contradictions are trained as
2-way "not entailment" (run Y; the dev split keeps 3 labels), and so are the fourth set's binding
neutrals (a reader may take a chunk's listing as exclusive). Writes ``v3_train.jsonl.gz`` /
``v3_dev.jsonl.gz`` (the names ``scripts/train_default_verifier.py --mix`` reads) and
``written_dev.jsonl.gz`` (the written dev pairs alone, unpacked).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_nli_data import _in_dev, read_jsonl_gz, write_jsonl_gz
from synth_nli import CONTRADICTION, LABEL_IDS, NOT_ENTAILMENT, Pair

WRITTEN = Path(__file__).resolve().parent / "data" / "written_pairs"
DEV_SHARE = 0.15


def jsonl_lines(folder: Path) -> Iterator[tuple[Path, int, str]]:
    """(file, line number, line) for every non-blank line of every ``*.jsonl`` file of
    ``folder``, in file and line order."""
    for path in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                yield path, n, line


def read_written(folder: Path) -> list[tuple[str, Pair]]:
    """(domain, pair) for every line of every ``*.jsonl`` file, in file and line order."""
    rows: list[tuple[str, Pair]] = []
    for path, n, line in jsonl_lines(folder):
        try:
            r = json.loads(line)
            label = LABEL_IDS[r["label"]]
        except (json.JSONDecodeError, KeyError) as exc:
            raise SystemExit(f"{path}:{n}: not a written pair ({exc})") from exc
        rows.append((path.stem, Pair(r["premise"], r["hypothesis"], label, r["kind"])))
    return rows


def in_dev(premise: str, seed: int = 13) -> bool:
    """The recipe's premise-grouped split, at :data:`DEV_SHARE`."""
    return _in_dev(premise, seed, DEV_SHARE)


def tagged(rows: list[tuple[str, Pair]]) -> list[Pair]:
    return [Pair(p.premise, p.hypothesis, p.label, f"written:{p.source}") for _, p in rows]


# neutrals that give one entity what the chunk states for the other: a reader may take the
# chunk's listing as exclusive (and call them contradicted), so they only teach "not entailed"
OPEN_NEUTRALS = frozenset({"bind_n"})


def two_way(rows: list[tuple[str, Pair]]) -> list[tuple[str, Pair]]:
    """Contradictions (and :data:`OPEN_NEUTRALS`) as 2-way 'not entailment': they teach what is
    not entailed, and leave which of neutral or contradicted it is to the recipe."""
    return [(d, replace(p, label=NOT_ENTAILMENT) if _open(p) else p) for d, p in rows]


def _open(p: Pair) -> bool:
    return p.label == CONTRADICTION or p.source in OPEN_NEUTRALS


def packed(rows: list[tuple[str, Pair]], rng: random.Random) -> list[Pair]:
    """Each pair again, its chunk packed at a random place among 1-2 chunks of other domains."""
    by_domain: dict[str, list[str]] = {}
    for domain, p in rows:
        chunks = by_domain.setdefault(domain, [])
        if not chunks or chunks[-1] != p.premise:
            chunks.append(p.premise)
    others = {
        domain: [c for d, cs in sorted(by_domain.items()) if d != domain for c in cs]
        for domain in by_domain
    }
    out = []
    for domain, p in rows:
        chunks = rng.sample(others[domain], rng.choice((1, 2)))
        chunks.insert(rng.randrange(len(chunks) + 1), p.premise)
        out.append(Pair("\n".join(chunks), p.hypothesis, p.label, f"written-packed:{p.source}"))
    return out


def with_base(
    mix: list[Pair], base_mix: Path | None, share: float, name: str, rng: random.Random
) -> list[Pair]:
    """``mix`` and, with ``base_mix``, pairs sampled from its ``v3_{name}`` split to make up
    ``share`` of the result; shuffled."""
    mix = list(mix)
    if base_mix is not None:
        base = read_jsonl_gz(base_mix / f"v3_{name}.jsonl.gz")
        want = round(len(mix) * share / (1 - share))
        mix += rng.sample(base, min(want, len(base)))
    rng.shuffle(mix)
    return mix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--written", type=Path, default=WRITTEN)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base-mix", type=Path, default=None, help="an earlier --mix folder")
    ap.add_argument(
        "--base-share", type=float, default=0.5, help="share of the new mix from --base-mix"
    )
    ap.add_argument(
        "--two-way-contradictions",
        action="store_true",
        help="train on the written contradictions as 'not entailment' (dev keeps 3-way labels)",
    )
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = read_written(args.written)
    dev = [in_dev(p.premise, args.seed) for _, p in rows]
    split = {
        "train": [r for r, d in zip(rows, dev, strict=True) if not d],
        "dev": [r for r, d in zip(rows, dev, strict=True) if d],
    }
    if args.two_way_contradictions:
        split["train"] = two_way(split["train"])
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl_gz(tagged(split["dev"]), args.out / "written_dev.jsonl.gz")
    for name, part in split.items():
        own = tagged(part)
        mix = with_base(own + packed(part, rng), args.base_mix, args.base_share, name, rng)
        write_jsonl_gz(mix, args.out / f"v3_{name}.jsonl.gz")
        labels = Counter(p.label for p in own)
        print(f"{name}: {len(part)} written pairs ({dict(sorted(labels.items()))}), mix {len(mix)}")


if __name__ == "__main__":
    main()
