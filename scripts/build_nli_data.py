"""Build the training and calibration pairs of ``ene-nli-mini`` from ``../shared/data``.

Sources and use (licences in the model card):

* ``nli/snli_dev_subset.jsonl`` (CC BY-SA 4.0): real 3-way pairs + rule-based pairs from its
  premises and hypotheses; 10 % of premises held out for calibration.
* ``nli/rte_train.jsonl`` (research use): real 2-way pairs (loss on p_entail only for
  'not_entailment') + rule-based pairs from its premise sentences; 10 % held out.
* ``hotpotqa/hotpot_dev_distractor_first100.json`` (CC BY-SA 4.0): paragraphs of questions 0-59
  only (54-59 for calibration); questions 60-99 stay unseen for the benchmark.

Never read here: SNLI test, RTE dev, SICK, SummaC (evaluation only).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from synth_nli import (
    CONTRADICTION,
    ENTAILMENT,
    LABEL_IDS,
    NEUTRAL,
    NOT_ENTAILMENT,
    Pair,
    add_detail,
    entities,
    negate,
    pack_premise,
    paraphrase,
    question_to_claim,
    shorten,
    split_sentences,
    swap_antonym,
    swap_entity,
    swap_number,
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


# --------------------------------------------------------------------------- SNLI


def snli_pairs(
    rows: Sequence[dict[str, str]], rng: random.Random, calib_fraction: float = 0.1
) -> DataSplits:
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        if row["label"] in ("entailment", "neutral", "contradiction"):
            groups[row["premise"]].append(row)
    premises = sorted(groups)
    rng.shuffle(premises)
    n_calib = int(len(premises) * calib_fraction)
    splits = DataSplits()
    for i, premise in enumerate(premises):
        items = groups[premise]
        if i < n_calib:
            splits.calib.extend(
                Pair(premise, r["hypothesis"], LABEL_IDS[r["label"]], "snli:real") for r in items
            )
            continue
        others = [p for p in premises[n_calib:] if p != premise]
        for r in items:
            label = LABEL_IDS[r["label"]]
            splits.train.append(Pair(premise, r["hypothesis"], label, "snli:real"))
            # the same pair inside a packed premise with unrelated captions around it
            splits.train.append(
                Pair(
                    _packed([premise], rng.sample(others, 4), rng),
                    r["hypothesis"],
                    label,
                    "snli:packed",
                )
            )
            hyp = r["hypothesis"]
            if label == ENTAILMENT:
                # P |= H, so anything incompatible with H contradicts P
                contra = [
                    h
                    for h in (negate(hyp), swap_antonym(hyp, rng), swap_number(hyp, rng))
                    if h and h != hyp
                ]
                if contra:
                    splits.train.append(
                        Pair(premise, rng.choice(contra), CONTRADICTION, "snli:derived")
                    )
                detail = add_detail(hyp, premise, rng)
                if detail:
                    splits.train.append(Pair(premise, detail, NEUTRAL, "snli:derived"))
                short = shorten(hyp, rng)
                if short:
                    splits.train.append(Pair(premise, short, ENTAILMENT, "snli:derived"))
                if len(premise.split()) >= len(hyp.split()) + 4:
                    # the reverse direction: the short hypothesis does not state the details
                    splits.train.append(Pair(hyp, premise, NEUTRAL, "snli:reverse"))
        splits.train.extend(_rule_pairs(premise, premise, (), rng, "snli"))
        # SNLI convention: the same subject doing an incompatible activity is a contradiction
        swapped = _swap_predicate(premise, others, rng)
        if swapped:
            splits.train.append(Pair(premise, swapped, CONTRADICTION, "snli:predicate"))
        # the human hypotheses are captions too: rules applied with the hypothesis as premise
        for r in items:
            if r["label"] != "contradiction" and len(r["hypothesis"].split()) >= 5:
                splits.train.extend(
                    _rule_pairs(r["hypothesis"], r["hypothesis"], (), rng, "snli:hyp")
                )
    return splits


_CAPTION = re.compile(r"^(.{3,60}?)\s(is|are)\s(.+)$")


def _swap_predicate(caption: str, others: Sequence[str], rng: random.Random) -> str | None:
    """'A man is riding a bike' + 'A dog is sleeping on a couch' -> 'A man is sleeping ...'."""
    m = _CAPTION.match(caption.rstrip("."))
    if not m:
        return None
    for other in rng.sample(list(others), min(8, len(others))):
        o = _CAPTION.match(other.rstrip("."))
        if o and o.group(3).split()[0] != m.group(3).split()[0]:
            return f"{m.group(1)} {m.group(2)} {o.group(3)}."
    return None


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
        claim = question_to_claim(q["question"], q["answer"])
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


# --------------------------------------------------------------------------- all


def build(data_dir: Path, seed: int = 13) -> DataSplits:
    """All training and calibration pairs, deterministic for a given ``seed``."""
    rng = random.Random(seed)
    nli = data_dir / "nli"
    splits = DataSplits()
    for part in (
        snli_pairs(_read_jsonl(nli / "snli_dev_subset.jsonl"), random.Random(seed + 1)),
        rte_pairs(_read_jsonl(nli / "rte_train.jsonl"), random.Random(seed + 2)),
    ):
        splits.train.extend(part.train)
        splits.calib.extend(part.calib)
    hotpot = json.loads(
        (data_dir / "hotpotqa" / "hotpot_dev_distractor_first100.json").read_text(encoding="utf-8")
    )
    splits.train.extend(hotpot_pairs(hotpot, random.Random(seed + 3), HOTPOT_TRAIN_QUESTIONS))
    splits.calib.extend(
        hotpot_pairs(hotpot, random.Random(seed + 4), HOTPOT_CALIB_QUESTIONS, per_question=4)
    )
    # de-duplicate, drop degenerate pairs, keep a deterministic order
    seen: set[tuple[str, str]] = set()
    for name in ("train", "calib"):
        kept: list[Pair] = []
        for p in getattr(splits, name):
            key = (p.premise, p.hypothesis)
            if key in seen or not p.hypothesis.strip() or not p.premise.strip():
                continue
            seen.add(key)
            kept.append(p)
        setattr(splits, name, kept)
    rng.shuffle(splits.train)
    return splits


if __name__ == "__main__":
    import sys

    splits = build(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data"))
    print(splits.summary())
    for p in random.Random(0).sample(splits.train, 25):
        print(f"[{p.label} {p.source}] P: {p.premise[:300]!r}\n    H: {p.hypothesis!r}")
