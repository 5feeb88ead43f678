"""Map every labelled source in ``../shared/data`` to ENE's verifier labels.

Each source keeps its own label names; :data:`SOURCES` says, per source, how a raw label maps to
entailment / neutral / contradiction, or to *not entailment* for honest 2-way sources (trained
with ``-log(p_neutral + p_contradiction)``). A raw label missing from a mapping is dropped and
counted, never guessed.

Left out on purpose:

* ``qnli_dev``: its premise is a *question*; the label says whether the sentence answers it, which
  is not entailment.
* SNLI ``split: test`` and every pair of ``nli/snli_*_subset.jsonl`` (both slices of SNLI dev):
  evaluation only.
* ``nli/sick.jsonl`` (non-commercial licence), ``consistency/``, ``eval_more/``, ``nli/rte_dev``:
  evaluation only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from synth_nli import CONTRADICTION, ENTAILMENT, NEUTRAL, NOT_ENTAILMENT, Pair

E, N, C, NE = ENTAILMENT, NEUTRAL, CONTRADICTION, NOT_ENTAILMENT


def _faithdial(raw: str) -> int | None:
    """FaithDial audit labels are free text: any hallucination is unsupported; pure entailment
    is supported; generic / uncooperative replies say nothing checkable and are dropped."""
    low = raw.lower()
    if "hallucinat" in low:
        return NE
    return E if low.strip() == "entailment" else None


@dataclass(frozen=True)
class Source:
    """One folder of ``nli_more/`` (or file of ``nli/``) and how its labels map."""

    path: str
    labels: Mapping[str, int] | None = None
    premise: str = "premise"
    hypothesis: str = "hypothesis"
    both_ways: bool = False  # also add the swapped pair (PAWS: the relation is symmetric)
    keep_split: str | None = None  # only rows whose ``split`` equals this

    def map_label(self, raw: str) -> int | None:
        if self.labels is None:
            return _faithdial(raw)
        return self.labels.get(raw.strip())


THREE_WAY = {"entailment": E, "neutral": N, "contradiction": C}

SOURCES: dict[str, Source] = {
    "snli": Source("nli_more/snli_dev_test_full_esnli", THREE_WAY, keep_split="dev"),
    "mnli": Source("nli_more/mnli_dev_m_mm", THREE_WAY),
    "conjnli": Source("nli_more/conjnli", THREE_WAY),
    "breaking_nli": Source("nli_more/breaking_nli", THREE_WAY),
    # PAWS: word-swapped sentence pairs; a paraphrase entails in both directions, a
    # non-paraphrase does not entail (it may be neutral or contradictory: 2-way).
    "paws": Source(
        "nli_more/paws_wiki_dev_test",
        {"paraphrase": E, "not_paraphrase": NE},
        premise="sentence1",
        hypothesis="sentence2",
        both_ways=True,
    ),
    # MED's 'neutral' also covers contradiction (README): 2-way.
    "med": Source("nli_more/med_monotonicity", {"entailment": E, "neutral": NE}),
    "begin": Source(
        "nli_more/begin_dialogue_attribution",
        {"Fully attributable": E, "Not fully attributable": NE},
    ),
    # Partially supported claims are not supported (fail-closed): neutral.
    "factcheck": Source(
        "nli_more/factcheck_gpt_claim_evidence",
        {"completely-support": E, "partially-support": N, "refute": C, "irrelevant": N},
    ),
    "faithdial": Source("nli_more/faithdial_begin_audit", None),
    # SciTail's original labels are entails / neutral (the copy renamed neutral).
    "scitail": Source("nli_more/scitail_test", {"entailment": E, "not_entailment": N}),
    "fever": Source("nli_more/fever_symmetric", {"SUPPORTS": E, "REFUTES": C}),
    "q2": Source("nli_more/q2_wow_consistency", {"consistent": E, "inconsistent": NE}),
    "rte": Source("nli/rte_train.jsonl", {"entailment": E, "not_entailment": NE}),
}


def read_rows(path: Path) -> Iterator[dict[str, str]]:
    """JSON lines of a source folder (``data.jsonl``) or file."""
    file = path / "data.jsonl" if path.is_dir() else path
    with file.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def source_pairs(
    name: str, rows: Iterator[dict[str, str]], dropped: dict[str, int] | None = None
) -> Iterator[Pair]:
    """Mapped pairs of one source; rows with unmapped labels are counted in ``dropped``."""
    src = SOURCES[name]
    for row in rows:
        if src.keep_split and row.get("split") != src.keep_split:
            continue
        label = src.map_label(str(row.get("label", "")))
        premise = str(row.get(src.premise) or "").strip()
        hypothesis = str(row.get(src.hypothesis) or "").strip()
        if label is None or not premise or not hypothesis:
            if dropped is not None:
                dropped[name] = dropped.get(name, 0) + 1
            continue
        yield Pair(premise, hypothesis, label, name)
        if src.both_ways:
            yield Pair(hypothesis, premise, label, name)


def snli_eval_keys(data_dir: Path) -> set[tuple[str, str]]:
    """(premise, hypothesis) of the SNLI subsets kept for evaluation: never train on them."""
    keys: set[tuple[str, str]] = set()
    for name in ("snli_dev_subset.jsonl", "snli_test_subset.jsonl"):
        for row in read_rows(data_dir / "nli" / name):
            keys.add((normalise(row["premise"]), normalise(row["hypothesis"])))
    return keys


def normalise(text: str) -> str:
    """Key for de-duplication: case- and whitespace-insensitive, detokenised punctuation."""
    out = " ".join(text.lower().split())
    for a, b in ((" .", "."), (" ,", ","), (" '", "'"), (" n't", "n't"), (" ?", "?"), (" !", "!")):
        out = out.replace(a, b)
    return out
