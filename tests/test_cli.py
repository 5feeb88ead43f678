from __future__ import annotations

import json
from pathlib import Path

import pytest

from ene_core import SCHEMA_VERSION, EvidenceNecessityGraph
from ene_core.cli import main


def test_eval_writes_one_eng_per_good_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "a",
                        "answer": "Paris is in France.",
                        "contexts": ["Paris is in France."],
                    }
                ),
                "{not json",
                json.dumps({"id": "b", "answer": 5}),
                json.dumps(
                    {
                        "id": "c",
                        "answer": "Owls hunt.",
                        "contexts": [{"id": "k", "text": "Owls hunt.", "metadata": {"s": 1}}],
                        "question": "Do owls hunt?",
                    }
                ),
            ]
        )
    )
    out = tmp_path / "out.jsonl"
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword"]) == 2  # lines skipped
    engs = [EvidenceNecessityGraph.from_json(line) for line in out.read_text().splitlines()]
    assert [e.id for e in engs] == ["a", "c"]
    assert engs[1].contexts[0].id == "k" and engs[1].question == "Do owls hunt?"
    err = capsys.readouterr().err
    assert "line 2: skipped: not valid JSON" in err
    assert "line 3: skipped: missing 'contexts'" in err
    assert "2 requests evaluated, 2 lines skipped, 0 failed" in err


def test_eval_on_error_fail_and_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"answer": "a b.", "contexts": []}\n[1]\n{"answer": "c d.", "contexts": []}\n')
    out = tmp_path / "o.jsonl"
    argv = ["eval", str(src), "-o", str(out), "--oracle", "keyword"]
    assert main([*argv, "--on-error", "fail"]) == 2
    assert "stopped at line 2" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 1  # the line before the bad one is kept
    assert main([*argv, "--on-error", "record"]) == 2
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[1] == {
        "line": 2,
        "error": "not a request: a line must be a JSON object, got an array",
    }
    assert lines[0]["schema_version"] == lines[2]["schema_version"] == SCHEMA_VERSION


def test_evaluate_prints_readable_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "evaluate",
        "--oracle",
        "keyword",
        "--answer",
        "Paris is in France. Dogs fly.",
        "--context",
        "Paris is in France.",
        "--context",
        "Cats.",
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "fragile" in text and "UNUSED" in text and "unsupported" in text
    assert main([*args, "--json"]) == 0
    eng = EvidenceNecessityGraph.from_json(capsys.readouterr().out)
    assert eng.counts.supported == 1


def test_schema_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "EvidenceNecessityGraph"


def test_missing_model_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    assert (
        main(["evaluate", "--model", "/nonexistent/model", "--answer", "x y.", "--context", "x"])
        == 1
    )
    err = capsys.readouterr().err
    assert "ModelNotFoundError: model '/nonexistent/model' does not exist" in err
    assert "config.json" in err and "Repo id" not in err
