"""The necessity dev set loads and aligns with the engine's claims; its scorer counts right."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "necessity_dev", ROOT / "benchmarks" / "necessity_dev.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["necessity_dev"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_the_whole_set_aligns_and_covers_every_category(bench: ModuleType) -> None:
    cases = bench.load_cases()
    assert len(cases) >= 80
    claims = [c for case in cases for c in case.claims]
    assert Counter(c.status for c in claims).keys() == {"supported", "contradicted", "unsupported"}
    categories = {cat for c in claims for cat in c.categories}
    assert {
        "paraphrase",
        "inflection",
        "negation",
        "number",
        "date",
        "entity",
        "unit",
        "extra_detail",
        "multi_hop",
        "redundant",
        "distractor",
        "near_duplicate",
        "buried",
    } <= categories
    assert len({case.domain for case in cases}) >= 7
    for c in claims:
        if "multi_hop" in c.categories and not c.sufficient:
            assert len(c.necessary) >= 2, c.text
        if "redundant" in c.categories:
            assert len(c.sufficient) >= 2, c.text


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROWS = [
    {
        "id": "a",
        "answer": "Paris is the capital of France. Bananas grow in Iceland. Is it nice?",
        "chunks": [
            {"id": "p", "text": "Paris is the capital of France."},
            {"id": "b", "text": "Bananas are yellow."},
        ],
        "claims": [
            {"text": "Paris is the capital of France.", "status": "supported", "necessary": ["p"]},
            {"text": "Bananas grow in Iceland.", "status": "unsupported"},
        ],
    },
    {
        "id": "b",
        "answer": "The tower is 330 metres tall [1]. The tower is 500 metres tall.",
        "chunks": [
            {"id": "t", "text": "The tower is 330 metres tall."},
            {"id": "t2", "text": "Indeed the tower is 330 metres tall."},
        ],
        "claims": [
            {
                "text": "The tower is 330 metres tall.",
                "status": "supported",
                "necessary": [],
                "sufficient": ["t", "t2"],
            },
            {
                "text": "The tower is 500 metres tall.",
                "status": "contradicted",
                "contradicted_by": ["t", "t2"],
            },
        ],
    },
]


def test_mismatched_gold_fails_loudly(bench: ModuleType, tmp_path: Path) -> None:
    split = json.loads(json.dumps(ROWS))
    split[0]["claims"][1]["text"] = "Bananas grow in Iceland!"
    with pytest.raises(bench.GoldMismatchError, match=r"\(a\).*do not match"):
        bench.load_cases(write(tmp_path / "x.jsonl", split))
    unknown = json.loads(json.dumps(ROWS))
    unknown[0]["claims"][0]["necessary"] = ["nope"]
    with pytest.raises(bench.GoldMismatchError, match="unknown chunks"):
        bench.load_cases(write(tmp_path / "y.jsonl", unknown))
    missing = json.loads(json.dumps(ROWS))
    missing[1]["claims"][1]["contradicted_by"] = []
    with pytest.raises(bench.GoldMismatchError, match="contradicted_by iff contradicted"):
        bench.load_cases(write(tmp_path / "z.jsonl", missing))


def test_scores_with_the_keyword_oracle(bench: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    data = write(tmp_path / "d.jsonl", ROWS)
    assert bench.main(["--data", str(data), "--oracle", "keyword", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    overall = result["overall"]
    assert overall["claims"] == 4 and overall["status_accuracy"] == 1.0
    assert overall["necessity_precision"] == overall["necessity_recall"] == 1.0
    assert overall["pruning_safety"] == 1.0 and overall["redundant_covered"] == 1.0
    assert overall["contradicted_by_exact"] == 1.0
    assert result["confusion"]["contradicted"]["contradicted"] == 1

    # The same engine output against wrong gold: every metric notices.
    wrong = json.loads(json.dumps(ROWS))
    wrong[0]["claims"][0]["necessary"] = ["b"]
    wrong[0]["claims"][1]["status"] = "supported"
    wrong[1]["claims"][1]["contradicted_by"] = ["t"]
    assert (
        bench.main(["--data", str(write(data, wrong)), "--oracle", "keyword", "--json", str(out)])
        == 0
    )
    overall = json.loads(out.read_text())["overall"]
    assert overall["status_accuracy"] == 0.75
    assert overall["necessity_precision"] == overall["necessity_recall"] == 0.0
    assert overall["pruning_safety"] == 0.0
    assert overall["contradicted_by_exact"] == 0.0


@pytest.mark.parametrize(
    "name",
    [f"necessity_fresh{n}.jsonl" for n in ("", 2, 3, 4, 5)] + ["necessity_test.jsonl"],
)
def test_the_other_sets_align_and_name_real_chunks(bench: ModuleType, name: str) -> None:
    cases = bench.load_cases(ROOT / "benchmarks" / "data" / name)
    claims = [c for case in cases for c in case.claims]
    assert len(cases) >= 40 and len(claims) >= 130
    assert Counter(c.status for c in claims).keys() == {"supported", "contradicted", "unsupported"}
    for c in claims:
        if c.status != "supported":
            assert not c.necessary, c.text
        if "redundant" in c.categories:
            assert len(c.sufficient) >= 2, c.text
