"""Build verifier v3's counterbalanced pairs (:mod:`synth_v3`) beside the v2 recipe::

    python scripts/build_v3_data.py --data ../shared/data --out runs/v3

Writes ``v3_train.jsonl.gz`` / ``v3_dev.jsonl.gz`` (generated from train / dev premises of the
recipe's own split, HotpotQA questions 0-53 / 54-59; 60-99 stay unseen) and, with ``--recipe``,
the v2 recipe's ``train.jsonl.gz`` / ``dev.jsonl.gz`` that v3 training mixes in.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

from build_nli_data import (
    GENERATED_FROM,
    HOTPOT_CALIB_QUESTIONS,
    HOTPOT_TRAIN_QUESTIONS,
    _in_dev,
    _seed_sentences,
    build,
    real_pairs,
    write_jsonl_gz,
)
from nli_sources import normalise
from synth_nli import Pair
from synth_v3 import (
    generate,
    hotpot_question_pairs,
    hotpot_topic_pairs,
    mine_privatives,
)

#: seed sentences per source (train side; dev gets a twentieth)
SEEDS = {"mnli": 9000, "snli": 3000, "conjnli": 2000, "fever": 3000, "scitail": 2000}
TEMPLATE_ROUNDS = 9000


def build_v3(data_dir: Path, seed: int = 13) -> tuple[list[Pair], list[Pair], dict[str, str]]:
    real = real_pairs(data_dir, {})
    train_prem = [
        p.premise for name in GENERATED_FROM for p in real[name] if not _in_dev(p.premise, seed)
    ]
    lexicon = mine_privatives(train_prem)
    train: list[Pair] = []
    dev: list[Pair] = []
    for name, n in SEEDS.items():
        r = random.Random(f"v3:{seed}:{name}")
        tr = [p for p in real[name] if not _in_dev(p.premise, seed)]
        dv = [p for p in real[name] if _in_dev(p.premise, seed)]
        train.extend(
            generate(
                _seed_sentences(tr, r, n),
                _seed_sentences(tr, r, 20000),
                lexicon,
                r,
                name,
                TEMPLATE_ROUNDS * n // sum(SEEDS.values()),
            )
        )
        dev.extend(
            generate(
                _seed_sentences(dv, r, n // 20),
                _seed_sentences(dv, r, 2000),
                lexicon,
                r,
                name,
                TEMPLATE_ROUNDS * n // sum(SEEDS.values()) // 20,
            )
        )
    hotpot = json.loads(
        (data_dir / "hotpotqa" / "hotpot_dev_distractor_first100.json").read_text(encoding="utf-8")
    )
    train.extend(hotpot_question_pairs(hotpot, HOTPOT_TRAIN_QUESTIONS, random.Random(seed + 5)))
    dev.extend(hotpot_question_pairs(hotpot, HOTPOT_CALIB_QUESTIONS, random.Random(seed + 6)))
    pool = [s.strip() for q in hotpot[:54] for _t, ss in q["context"] for s in ss if s.strip()]
    rt = random.Random(f"topic:{seed}")  # its own stream: the pairs above stay as they were built
    train.extend(hotpot_topic_pairs(hotpot, HOTPOT_TRAIN_QUESTIONS, pool, rt))
    dev.extend(hotpot_topic_pairs(hotpot, HOTPOT_CALIB_QUESTIONS, pool, rt))
    seen: set[tuple[str, str]] = set()
    out = []
    for part in (dev, train):
        kept = []
        for p in part:
            key = (normalise(p.premise), normalise(p.hypothesis))
            if key in seen or not key[0] or not key[1]:
                continue
            seen.add(key)
            kept.append(p)
        out.append(kept)
    dev, train = out
    random.Random(seed).shuffle(train)
    return train, dev, lexicon


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=Path("runs/v3"))
    ap.add_argument("--recipe", action="store_true", help="also write the v2 recipe's pairs")
    ap.add_argument("--samples", type=int, default=0)
    ap.add_argument(
        "--only", default=None, help="keep the families whose tag matches this regex (a focus mix)"
    )
    args = ap.parse_args()
    train, dev, lexicon = build_v3(args.data, args.seed)
    if args.only:
        keep = re.compile(args.only)
        train, dev = (
            [p for p in part if keep.search(p.source.split(":")[-1])] for part in (train, dev)
        )
    write_jsonl_gz(train, args.out / "v3_train.jsonl.gz")
    write_jsonl_gz(dev, args.out / "v3_dev.jsonl.gz")
    (args.out / "privatives.json").write_text(json.dumps(lexicon, indent=0), encoding="utf-8")
    fam = Counter((p.source.split(":")[-1], p.label) for p in train)
    print(f"v3 train {len(train)}, dev {len(dev)}, privative lexicon {len(lexicon)} words")
    print("labels", Counter(p.label for p in train))
    for k, v in sorted(fam.items()):
        print(k, v)
    for p in random.Random(0).sample(train, args.samples):
        print(f"[{p.label} {p.source}] P: {p.premise[:240]!r}\n    H: {p.hypothesis!r}")
    if args.recipe:
        splits = build(args.data, seed=args.seed)
        write_jsonl_gz(splits.train, args.out / "train.jsonl.gz")
        write_jsonl_gz(splits.calib, args.out / "dev.jsonl.gz")
        print(splits.summary())
