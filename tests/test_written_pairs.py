"""The hand-written continuation pairs (scripts/data/written_pairs/) and their mix builder
(scripts/build_written_mix.py): every group is complete and twinned, the labels follow the kinds,
no text leaks from the evaluation sets, and the mix is split by chunk and deterministic."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

pytest.importorskip("pysbd")

from build_nli_data import read_jsonl_gz  # noqa: E402
from build_written_mix import OPEN_NEUTRALS, WRITTEN, in_dev, packed, read_written, two_way  # noqa: E402
from synth_nli import CONTRADICTION, NOT_ENTAILMENT  # noqa: E402

# the second set (2026-11-27): negation, hedges, joined facts and conditions, each twinned
SECOND_SET_LABEL = {
    "neg_para": "entailment",
    "hedged": "entailment",
    "joined": "entailment",
    "condition_para": "entailment",
    "neg_para_contra": "contradiction",
    "joined_contra": "contradiction",
    "condition_contra": "contradiction",
    "extra_detail": "neutral",
}
SECOND_SET = set(SECOND_SET_LABEL)


def _each_frame_once_per_label(*frames: str) -> dict[str, str]:
    """``{frame}_e`` / ``_c`` / ``_n`` for each frame, with its label."""
    return {
        f"{frame}_{suffix}": label
        for frame in frames
        for suffix, label in (("e", "entailment"), ("c", "contradiction"), ("n", "neutral"))
    }


# the third set: four frames, each written once per label in the same phrasing (so the claim's
# wording alone cannot give the label away)
THIRD_SET_LABEL = _each_frame_once_per_label("neg", "cond", "join", "hedge")
THIRD_SET = set(THIRD_SET_LABEL)
# the fourth set: the same design on amounts (another form, a computed consequence, a limit) and
# on value binding between parallel entities
FOURTH_SET_LABEL = _each_frame_once_per_label("unit", "calc", "bind", "bound")
FOURTH_SET = set(FOURTH_SET_LABEL)
KIND_LABEL = {
    "para": "entailment",
    "para_form": "entailment",
    "near_same": "entailment",
    "neg_entail": "entailment",
    "near_diff": "contradiction",
    "para_contra": "contradiction",
    "neg_contra": "contradiction",
    "same_topic": "neutral",
    "neutral_form": "neutral",
    **SECOND_SET_LABEL,
    **THIRD_SET_LABEL,
    **FOURTH_SET_LABEL,
}


def _rows() -> list[dict]:
    return [
        {**json.loads(line), "file": path.stem}
        for path in sorted(WRITTEN.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _grams(text: str, n: int = 6) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def test_every_group_has_its_kinds_and_labels_follow_kinds() -> None:
    rows = _rows()
    assert len(rows) >= 6000
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        assert set(r) == {"premise", "hypothesis", "label", "kind", "group", "file"}
        assert r["label"] == KIND_LABEL[r["kind"]], r
        groups.setdefault((r["file"], r["group"]), []).append(r)
    for key, members in groups.items():
        kinds = Counter(m["kind"] for m in members)
        assert len({m["premise"] for m in members}) == 1, key
        for frames in (THIRD_SET, FOURTH_SET):
            if set(kinds) <= frames:
                # each frame once per label
                assert len(members) == 12 and set(kinds) == frames, key
                break
        else:
            _check_early_group(key, kinds, len(members))


def _check_early_group(key: tuple[str, int], kinds: Counter[str], size: int) -> None:
    """The first two sets: eight claims per chunk."""
    assert size == 8, key
    if set(kinds) <= SECOND_SET:
        # each kind once: every entailed kind beside its contradicting twin
        assert set(kinds) == SECOND_SET, key
        return
    # the small-edit twins: a synonym (entailed) beside a contrasting word (contradicted)
    assert kinds["near_same"] == kinds["near_diff"] == 1, key
    assert kinds["neg_entail"] + kinds["neg_contra"] == 1, key


def test_no_cue_gives_away_the_label() -> None:
    rows = _rows()
    overall = Counter(r["label"] for r in rows)
    neg = re.compile(r"\b(?:not|no|never|none|neither|nobody|cannot)\b|n't\b", re.I)
    negated = [r for r in rows if neg.search(r["hypothesis"]) and not neg.search(r["premise"])]
    shares = Counter(r["label"] for r in negated)
    assert len(negated) >= 100
    for label in overall:
        gap = abs(shares[label] / len(negated) - overall[label] / len(rows))
        assert gap < 0.20, (label, gap)


def test_no_text_of_an_evaluation_set_is_in_the_pairs() -> None:
    bench = ROOT / "benchmarks" / "data"
    sealed = {"necessity_test.jsonl", "contrast_dev.jsonl"}
    owner: dict[tuple[str, ...], set[str]] = {}
    for path in bench.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            for text in _texts(json.loads(line)):
                for g in _grams(text):
                    owner.setdefault(g, set()).add(path.name)
    groups: dict[tuple[str, int], set[tuple[str, ...]]] = {}
    for r in _rows():
        seen = groups.setdefault((r["file"], r["group"]), set())
        seen |= _grams(r["premise"]) | _grams(r["hypothesis"])
    for key, grams in groups.items():
        shared = grams & owner.keys()
        assert len(shared) < 4, (key, sorted(shared)[:3])
        assert not {s for g in shared for s in owner[g]} & sealed, key


def test_mix_is_split_by_chunk_and_packs_the_chunk_among_other_domains() -> None:
    rows = read_written(WRITTEN)
    dev = {p.premise for _, p in rows if in_dev(p.premise)}
    assert 0.08 < len(dev) / len({p.premise for _, p in rows}) < 0.25
    sample = rows[:40] + rows[-40:]
    out = packed(sample, random.Random(3))
    assert len(out) == len(sample)
    for (domain, p), q in zip(sample, out, strict=True):
        chunks = q.premise.split("\n")
        assert p.premise in chunks and 2 <= len(chunks) <= 3
        assert (q.hypothesis, q.label) == (p.hypothesis, p.label)
        others = [c for c in chunks if c != p.premise]
        assert all(c not in {x.premise for d, x in sample if d == domain} for c in others)


def test_build_is_deterministic(tmp_path: Path) -> None:
    script = ROOT / "scripts" / "build_written_mix.py"
    outs = []
    for name in ("a", "b"):
        subprocess.run(
            [sys.executable, str(script), "--out", str(tmp_path / name)],
            check=True,
            capture_output=True,
        )
        outs.append(read_jsonl_gz(tmp_path / name / "v3_train.jsonl.gz"))
    train = outs[0]
    dev = read_jsonl_gz(tmp_path / "a" / "v3_dev.jsonl.gz")
    assert outs[0] == outs[1]
    assert {p.premise for p in train if p.source.startswith("written:")}.isdisjoint(
        p.premise for p in dev if p.source.startswith("written:")
    )
    assert any(p.source.startswith("written-packed:") for p in train)


def test_two_way_turns_only_contradictions_and_open_neutrals_into_not_entailment() -> None:
    rows = read_written(WRITTEN)
    rows = rows[:200] + [r for r in rows if r[1].source in OPEN_NEUTRALS][:50]
    out = two_way(rows)
    assert [d for d, _ in out] == [d for d, _ in rows]
    assert {p.label for _, p in rows} >= {CONTRADICTION} and NOT_ENTAILMENT not in {
        p.label for _, p in rows
    }
    for (_, before), (_, after) in zip(rows, out, strict=True):
        is_open = before.label == CONTRADICTION or before.source in OPEN_NEUTRALS
        want = NOT_ENTAILMENT if is_open else before.label
        assert after.label == want
        assert (after.premise, after.hypothesis) == (before.premise, before.hypothesis)
