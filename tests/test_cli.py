from __future__ import annotations

import json
from pathlib import Path

import pytest

from ene_core import EvidenceNecessityGraph
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
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword"]) == 0
    engs = [EvidenceNecessityGraph.from_json(line) for line in out.read_text().splitlines()]
    assert [e.id for e in engs] == ["a", "c"]
    assert engs[1].contexts[0].id == "k" and engs[1].question == "Do owls hunt?"
    err = capsys.readouterr().err
    assert "line 2" in err and "line 3" in err and "2 evaluated" in err


def test_eval_on_error_fail_and_record(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"answer": "a b."}\n[1]\n')
    with pytest.raises(SystemExit, match="line 2"):
        main(
            [
                "eval",
                str(src),
                "-o",
                str(tmp_path / "o.jsonl"),
                "--oracle",
                "keyword",
                "--on-error",
                "fail",
            ]
        )
    out = tmp_path / "r.jsonl"
    main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "--on-error", "record"])
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[1] == {"line": 2, "error": "line 2: each line must be a JSON object"}
    assert lines[0]["schema_version"] == "1.1"


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
        == 2
    )
    assert "ModelNotFoundError" in capsys.readouterr().err
