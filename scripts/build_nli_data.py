"""Build the verifier's training and dev pairs from ``../shared/data`` (one seeded command)::

    python scripts/build_nli_data.py --data ../shared/data --out runs/data

Sources and use (licences in the model card):

* every labelled source of ``nli_more/`` mapped by :mod:`nli_sources` (QNLI left out; SNLI
  ``split: test`` and the two ``nli/snli_*_subset.jsonl`` slices kept for evaluation only);
* ``nli/rte_train.jsonl`` (research use): real 2-way pairs + rule pairs from its premises;
* generated hard cases (:func:`hard_cases`) from the premises of MNLI, SNLI dev, ConjNLI, FEVER
  and SciTail: swaps, negation, added details, stronger quantifiers, surface variants, evidence
  in the middle of packed premises, two-fact claims;
* ``hotpotqa/`` paragraphs of questions 0-59 only (54-59 for dev); 60-99 stay unseen.

The dev split (4 % of premises, hashed with the seed) calibrates τ. Never read here: SNLI test,
RTE dev, SICK, SummaC, ConTRoL, QAGS (evaluation only).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nli_sources import SOURCES, normalise, read_rows, snli_eval_keys, source_pairs
from synth_nli import (
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    NOT_ENTAILMENT,
    Pair,
    add_detail,
    change_quantifier,
    entities,
    inflect,
    join_claims,
    negate,
    pack_premise,
    paraphrase,
    question_to_claim,
    shorten,
    split_sentences,
    swap_antonym,
    swap_entity,
    swap_number,
    swap_unit,
)

HOTPOT_TRAIN_QUESTIONS = range(0, 54)
HOTPOT_CALIB_QUESTIONS = range(54, 60)
_PRONOUN_START = re.compile(
    r"^(He|She|It|They|The (?:film|band|company|album|song|series|book|novel|show|team|club|"
    r"school|university|city|town|village|game|group|station|building|magazine|newspaper))\b"
)


@dataclass
class DataSplits:
    """Training pairs and the held-out calibration pairs (for τ and dev metrics)."""

    train: list[Pair] = field(default_factory=list)
    calib: list[Pair] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        def count(pairs: Sequence[Pair]) -> str:
            by_label = Counter(p.label for p in pairs)
            by_source = Counter(p.source.split(":")[0] for p in pairs)
            return f"{len(pairs)} pairs, labels {dict(sorted(by_label.items()))}, {dict(by_source)}"

        return f"train: {count(self.train)}\ncalib: {count(self.calib)}"


def _read_jsonl(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _packed(
    evidence: Sequence[str], distractors: Sequence[str], rng: random.Random, max_extra: int = 4
) -> str:
    """Evidence sentences (kept in order and together) placed among 0..max_extra distractors."""
    n = rng.randint(0, min(max_extra, len(distractors)))
    extra = rng.sample(list(distractors), n) if n else []
    pos = rng.randint(0, len(extra))
    lines = [*extra[:pos], *evidence, *extra[pos:]]
    return "\n".join(lines)


def _rule_pairs(
    sentence: str,
    premise: str,
    entity_pool: Sequence[str],
    rng: random.Random,
    source: str,
    places: Sequence[str] = (),
) -> Iterable[Pair]:
    """E / C / N hypotheses generated from one evidence sentence inside ``premise``."""
    short = shorten(sentence, rng)
    base = short or sentence
    para = paraphrase(base, rng)
    entailed = [h for h in (short, para) if h]
    if not entailed or rng.random() < 0.3:
        entailed.append(sentence)
    yield Pair(premise, rng.choice(entailed), ENTAILMENT, f"{source}:extract")
    contra = [
        h
        for h in (
            swap_number(base, rng),
            swap_entity(base, entity_pool, rng),
            negate(base),
            swap_antonym(base, rng),
        )
        if h and h != base
    ]
    if contra:
        yield Pair(premise, rng.choice(contra), CONTRADICTION, f"{source}:swap")
    detail = add_detail(base, premise, rng, places)
    if detail:
        yield Pair(premise, detail, NEUTRAL, f"{source}:detail")


# --------------------------------------------------------------------------- RTE


def rte_pairs(
    rows: Sequence[dict[str, str]],
    rng: random.Random,
    calib_fraction: float = 0.1,
    rule_keep: float = 0.5,
) -> DataSplits:
    """Real RTE pairs (2-way) plus rule pairs from one sentence of ``rule_keep`` of the premises.

    The rule pairs are kept for half of the documents only: RTE premises are long and CPU time
    is the budget; SNLI-style short pairs are cheaper per pair.
    """
    rows = list(rows)
    rng.shuffle(rows)
    n_calib = int(len(rows) * calib_fraction)
    splits = DataSplits()
    doc_sentences = [split_sentences(r["premise"]) for r in rows]
    all_sentences = [s for sents in doc_sentences[n_calib:] for s in sents]
    entity_pool = sorted({e for r in rows[n_calib:] for e in entities(r["premise"])})
    for i, row in enumerate(rows):
        label = ENTAILMENT if row["label"] == "entailment" else NOT_ENTAILMENT
        pair = Pair(row["premise"], row["hypothesis"], label, "rte:real")
        if i < n_calib:
            splits.calib.append(pair)
            continue
        sents = doc_sentences[i]
        splits.train.append(pair)
        if len(sents) <= 3:
            splits.train.append(
                Pair(
                    _packed(sents, rng.sample(all_sentences, 2), rng, 2),
                    row["hypothesis"],
                    label,
                    "rte:packed",
                )
            )
        local_pool = [e for e in entities(row["premise"])] + rng.sample(entity_pool, 20)
        hyp = row["hypothesis"]
        if label == ENTAILMENT:
            contra = [
                h
                for h in (negate(hyp), swap_number(hyp, rng), swap_entity(hyp, local_pool, rng))
                if h and h != hyp
            ]
            if contra:
                splits.train.append(
                    Pair(row["premise"], rng.choice(contra), CONTRADICTION, "rte:derived")
                )
            detail = add_detail(hyp, row["premise"], rng, entity_pool)
            if detail:
                splits.train.append(Pair(row["premise"], detail, NEUTRAL, "rte:derived"))
        # rule pairs from one premise sentence, evidence among its neighbours (+ distractors)
        target = rng.randrange(len(sents))
        window = sents[max(0, target - rng.randint(0, 1)) : target + 1 + rng.randint(0, 1)]
        premise = _packed(window, rng.sample(all_sentences, 2), rng, 2)
        if rng.random() < rule_keep:
            splits.train.extend(
                _rule_pairs(sents[target], premise, local_pool, rng, "rte", entity_pool)
            )
        if len(sents) >= 3:
            # leave-one-out: the evidence sentence is gone, its neighbours stay
            rest = [s for j, s in enumerate(sents) if j != target]
            hyp_e = shorten(sents[target], rng) or sents[target]
            if not set(hyp_e.lower().split()) <= set(" ".join(rest).lower().split()):
                splits.train.append(Pair("\n".join(rest), hyp_e, NEUTRAL, "rte:removed"))
    return splits


# --------------------------------------------------------------------------- HotpotQA


def _title(title: str) -> str:
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def hotpot_pairs(
    questions: Sequence[dict], rng: random.Random, indices: Iterable[int], per_question: int = 10
) -> list[Pair]:
    out: list[Pair] = []
    for qi in indices:
        q = questions[qi]
        paras = [(t, [s.strip() for s in sents if s.strip()]) for t, sents in q["context"]]
        flat = [(pi, si, s) for pi, (_, sents) in enumerate(paras) for si, s in enumerate(sents)]
        pool = sorted({e for _, _, s in flat for e in entities(s)} | {_title(t) for t, _ in paras})
        places = [e for e in pool if len(e.split()) <= 3]
        src = f"hotpot:q{qi}"
        # single-sentence evidence inside a packed premise of related sentences
        for _ in range(per_question):
            pi, si, sent = rng.choice(flat)
            if len(sent.split()) < 5:
                continue
            others = [s for (pj, sj, s) in flat if (pj, sj) != (pi, si)]
            distract = rng.sample(others, rng.randint(1, 4))
            ordered = sorted(
                [(pi, si, sent)] + [x for x in flat if x[2] in distract], key=lambda x: (x[0], x[1])
            )
            premise = "\n".join(x[2] for x in ordered)
            out.extend(_rule_pairs(sent, premise, pool, rng, src, places))
            # leave-one-out: evidence removed, same distractors
            hyp = shorten(sent, rng) or sent
            premise_wo = "\n".join(x[2] for x in ordered if x[2] != sent)
            out.append(Pair(premise_wo, hyp, NEUTRAL, f"{src}:removed"))
        # multi-hop 1: a pronoun sentence resolved with the paragraph's first sentence
        for title, sents in paras:
            for j in range(1, len(sents)):
                m = _PRONOUN_START.match(sents[j])
                if not m or rng.random() > 0.5:
                    continue
                hyp = _PRONOUN_START.sub(_title(title), sents[j], count=1)
                hyp = shorten(hyp, rng) or hyp
                distract = [s for (_, _, s) in rng.sample(flat, 3) if s not in sents]
                both = _packed([sents[0], sents[j]], distract, rng, 3)
                out.append(Pair(both, hyp, ENTAILMENT, f"{src}:hop-pronoun"))
                out.append(
                    Pair(_packed([sents[j]], distract, rng, 3), hyp, NEUTRAL, f"{src}:hop-missing")
                )
                contra = swap_number(hyp, rng) or swap_entity(hyp, pool, rng) or negate(hyp)
                if contra:
                    out.append(Pair(both, contra, CONTRADICTION, f"{src}:hop-swap"))
                break
        # multi-hop 2: a conjunction of two facts from two paragraphs
        facts = [(t, i) for t, i in q["supporting_facts"]]
        by_title = {t: sents for t, sents in paras}
        gold = [by_title[t][i] for t, i in facts if t in by_title and i < len(by_title[t])]
        if len(gold) >= 2:
            a, b = gold[0], gold[1]
            if not _PRONOUN_START.match(a) and not _PRONOUN_START.match(b):
                sa, sb = shorten(a, rng) or a, shorten(b, rng) or b
                hyp = f"{sa.rstrip('.')}, and {sb}"
                distract = [s for (_, _, s) in rng.sample(flat, 4) if s not in (a, b)]
                out.append(Pair(_packed([a, b], distract, rng), hyp, ENTAILMENT, f"{src}:hop-and"))
                out.append(Pair(_packed([a], distract, rng), hyp, NEUTRAL, f"{src}:hop-missing"))
                out.append(Pair(_packed([b], distract, rng), hyp, NEUTRAL, f"{src}:hop-missing"))
                broken = swap_number(sb, rng) or swap_entity(sb, pool, rng) or negate(sb)
                if broken:
                    out.append(
                        Pair(
                            _packed([a, b], distract, rng),
                            f"{sa.rstrip('.')}, and {broken}",
                            CONTRADICTION,
                            f"{src}:hop-swap",
                        )
                    )
        # multi-hop 3: the claim built from question + answer, as the benchmark builds it
        # (not for yes/no questions: the v2 recipe never had them)
        yes_no = q["answer"].lower() in ("yes", "no")
        claim = None if yes_no else question_to_claim(q["question"], q["answer"])
        gold_titles = list(dict.fromkeys(t for t, _ in facts))
        if claim and len(gold_titles) >= 2:
            gold_s = [s for t in gold_titles for s in by_title.get(t, [])]
            out.append(Pair(pack_premise(gold_s, claim, k=5), claim, ENTAILMENT, f"{src}:qa"))
            for drop in gold_titles[:2]:
                kept = [t for t, _ in paras if t != drop]
                ks = [s for t in kept for s in by_title[t]]
                out.append(Pair(pack_premise(ks, claim, k=5), claim, NEUTRAL, f"{src}:qa-missing"))
            other = [
                e
                for e in pool
                if e.lower() not in q["answer"].lower() and e.lower() not in claim.lower()
            ]
            if other and q["answer"] in claim:
                wrong = claim.replace(q["answer"], rng.choice(other), 1)
                out.append(
                    Pair(pack_premise(gold_s, wrong, k=5), wrong, CONTRADICTION, f"{src}:qa-swap")
                )
    return out


# --------------------------------------------------------------------------- generated hard cases


def hard_cases(
    sentences: Sequence[str], pool: Sequence[str], rng: random.Random, source: str
) -> list[Pair]:
    """RAG-shaped pairs from real sentences: each evidence sentence sits in the middle of a packed
    premise of 2-5 sentences from other documents, and is turned into

    * contradiction: number / date / entity / unit swap, negation, antonym;
    * neutral: an added detail, a stronger quantifier, or the evidence removed (leave-one-out);
    * entailment: an extract, paraphrase, or surface variant (plural/singular, digits/words);
    * two-fact claims: both sentences present (entailment) or one removed (neutral).
    """
    entity_pool = sorted({e for s in pool[:3000] for e in entities(s)})
    places = [e for e in entity_pool if len(e.split()) <= 3]
    out: list[Pair] = []
    for sent in sentences:
        distract = rng.sample(list(pool), min(rng.randint(1, 4), len(pool)))
        if sent in distract:
            continue
        cut = rng.randint(0, len(distract))
        if len(distract) >= 2:  # evidence in the middle most of the time
            cut = rng.randint(1, len(distract) - 1) if rng.random() < 0.7 else cut
        lines = [*distract[:cut], sent, *distract[cut:]]
        premise = "\n".join(lines)
        out.extend(_rule_pairs(sent, premise, entity_pool, rng, f"gen:{source}", places))
        base = shorten(sent, rng) or sent
        for rule, label in (
            (swap_unit(base, rng), CONTRADICTION),
            (change_quantifier(base, rng), NEUTRAL),
            (inflect(base, rng), ENTAILMENT),
        ):
            if rule and rule != base:
                out.append(Pair(premise, rule, label, f"gen:{source}:{_name(label)}-v2"))
        if rng.random() < 0.35:
            out.append(Pair("\n".join(distract), base, NEUTRAL, f"gen:{source}:removed"))
        if distract and rng.random() < 0.35:
            other = rng.choice(distract)
            if 5 <= len(other.split()) <= 30:
                claim = join_claims(base, shorten(other, rng) or other)
                out.append(Pair(premise, claim, ENTAILMENT, f"gen:{source}:two-facts"))
                without = "\n".join(x for x in lines if x != other)
                out.append(Pair(without, claim, NEUTRAL, f"gen:{source}:two-facts-missing"))
    return out


def _name(label: int) -> str:
    return ("entail", "neutral", "contra", "not-entail")[label]


def _seed_sentences(pairs: Sequence[Pair], rng: random.Random, n: int) -> list[str]:
    """Distinct single-sentence premises of 6-40 words, sampled."""
    seen: dict[str, None] = {}
    for p in pairs:
        words = len(p.premise.split())
        if 6 <= words <= 40 and "\n" not in p.premise and p.premise.count(". ") == 0:
            seen.setdefault(p.premise, None)
    pool = list(seen)
    rng.shuffle(pool)
    return pool[:n]


# --------------------------------------------------------------------------- all

#: Generated pairs per real source: seed sentences drawn from its premises.
GENERATED_FROM = {"mnli": 6000, "snli": 2500, "conjnli": 3000, "fever": 800, "scitail": 800}
DEV_FRACTION = 0.04


def _in_dev(text: str, seed: int, fraction: float = DEV_FRACTION) -> bool:
    """Deterministic premise-grouped dev split (same premise, same side)."""
    h = hashlib.sha1(f"{seed}:{normalise(text)}".encode()).digest()
    return int.from_bytes(h[:4], "big") / 2**32 < fraction


def generated(
    real: dict[str, list[Pair]], seed: int, gen_seed: int | None = None
) -> tuple[list[Pair], list[Pair]]:
    """Hard cases from the premises of each source in :data:`GENERATED_FROM`, split as the real
    pairs are (``seed``); ``gen_seed`` draws another sample (extra pairs for distillation)."""
    train: list[Pair] = []
    dev: list[Pair] = []
    for name, n in GENERATED_FROM.items():
        r = random.Random(f"{seed if gen_seed is None else gen_seed}:{name}")
        train_real = [p for p in real[name] if not _in_dev(p.premise, seed)]
        sentences = _seed_sentences(train_real, r, n)
        pool = _seed_sentences(train_real, r, 20000)
        train.extend(hard_cases(sentences, pool, r, name))
        dev_real = [p for p in real[name] if _in_dev(p.premise, seed)]
        dev_sents = _seed_sentences(dev_real, r, n // 20)
        dev.extend(hard_cases(dev_sents, _seed_sentences(dev_real, r, 2000), r, name))
    return train, dev


def real_pairs(data_dir: Path, dropped: dict[str, int]) -> dict[str, list[Pair]]:
    """Mapped real pairs of every ``nli_more`` source (RTE is handled by :func:`rte_pairs`)."""
    return {
        name: list(source_pairs(name, read_rows(data_dir / src.path), dropped))
        for name, src in SOURCES.items()
        if name != "rte"
    }


def extra_pairs(data_dir: Path, splits: DataSplits, seed: int = 13) -> list[Pair]:
    """A second sample of generated hard cases (train premises only, no pair already in
    ``splits``): more inputs for the teacher to label when distilling."""
    real = real_pairs(data_dir, {})
    train_gen, _ = generated(real, seed, gen_seed=seed + 1000)
    seen = {(normalise(p.premise), normalise(p.hypothesis)) for p in splits.train + splits.calib}
    out: list[Pair] = []
    for p in train_gen:
        key = (normalise(p.premise), normalise(p.hypothesis))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def build(data_dir: Path, seed: int = 13) -> DataSplits:
    """All training and dev pairs, deterministic for a given ``seed``.

    Real pairs of every source in :data:`nli_sources.SOURCES`, generated hard cases from their
    premises, RTE rule pairs and HotpotQA questions 0-53 (54-59 for dev). The dev split holds
    out whole premises. Duplicates (normalised premise + hypothesis) and the SNLI evaluation
    subsets are dropped.
    """
    rng = random.Random(seed)
    splits = DataSplits()
    banned = snli_eval_keys(data_dir)
    real = real_pairs(data_dir, splits.dropped)
    for pairs in real.values():
        for p in pairs:
            (splits.calib if _in_dev(p.premise, seed) else splits.train).append(p)
    train_gen, dev_gen = generated(real, seed)
    splits.train.extend(train_gen)
    splits.calib.extend(dev_gen)
    rte = rte_pairs(read_rows(data_dir / "nli" / "rte_train.jsonl"), random.Random(seed + 2))
    splits.train.extend(rte.train)
    splits.calib.extend(rte.calib)
    hotpot = json.loads(
        (data_dir / "hotpotqa" / "hotpot_dev_distractor_first100.json").read_text(encoding="utf-8")
    )
    splits.train.extend(hotpot_pairs(hotpot, random.Random(seed + 3), HOTPOT_TRAIN_QUESTIONS))
    splits.calib.extend(
        hotpot_pairs(hotpot, random.Random(seed + 4), HOTPOT_CALIB_QUESTIONS, per_question=4)
    )
    # de-duplicate (dev wins over train), drop degenerate pairs, keep a deterministic order
    seen: set[tuple[str, str]] = set(banned)
    for name in ("calib", "train"):
        kept: list[Pair] = []
        for p in getattr(splits, name):
            key = (normalise(p.premise), normalise(p.hypothesis))
            if key in seen or not key[0] or not key[1]:
                splits.dropped["duplicate"] = splits.dropped.get("duplicate", 0) + 1
                continue
            seen.add(key)
            kept.append(p)
        setattr(splits, name, kept)
    rng.shuffle(splits.train)
    return splits


def table(splits: DataSplits) -> str:
    """Markdown table of pair counts per source family and label."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for part in ("train", "calib"):
        for p in getattr(splits, part):
            fam = (
                p.source.split(":")[0]
                if not p.source.startswith("gen:")
                else ":".join(p.source.split(":")[:2])
            )
            rows[fam][f"{part}:{_name(p.label)}"] += 1
    cols = [f"{part}:{_name(i)}" for part in ("train", "calib") for i in range(4)]
    lines = ["| source | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    total: Counter[str] = Counter()
    for fam in sorted(rows):
        total.update(rows[fam])
        lines.append(f"| {fam} | " + " | ".join(str(rows[fam][c]) for c in cols) + " |")
    lines.append("| **all** | " + " | ".join(str(total[c]) for c in cols) + " |")
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(splits.dropped.items()))
    return "\n".join(lines) + f"\n\ndropped: {dropped}"


def write_jsonl_gz(pairs: Sequence[Pair], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")


def read_jsonl_gz(path: Path) -> list[Pair]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [Pair(**json.loads(line)) for line in fh]


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="Build the verifier's training and dev pairs.")
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=None, help="folder for train/dev .jsonl.gz")
    ap.add_argument("--samples", type=int, default=0, help="print this many random pairs")
    ap.add_argument("--extra", action="store_true", help="also write extra.jsonl.gz (distillation)")
    args = ap.parse_args()
    splits = build(args.data, seed=args.seed)
    print(table(splits))
    if args.out:
        write_jsonl_gz(splits.train, args.out / "train.jsonl.gz")
        write_jsonl_gz(splits.calib, args.out / "dev.jsonl.gz")
        if args.extra:
            extra = extra_pairs(args.data, splits, seed=args.seed)
            write_jsonl_gz(extra, args.out / "extra.jsonl.gz")
            print(f"\nextra pairs for distillation: {len(extra)}")
    for p in random.Random(0).sample(splits.train, args.samples):
        print(f"[{_name(p.label)} {p.source}] P: {p.premise[:300]!r}\n    H: {p.hypothesis!r}")
