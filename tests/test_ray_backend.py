"""``ene eval --backend ray`` writes what the single-process path writes (a local Ray, CPU)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

import pytest

from ene_core.cli import build_engine, engine_options, main
from ene_core.cli import make_parser as cli_parser
from ene_core.cli.batch import eval_lines
from ene_core.cli.inputs import NotText, input_files, read_lines
from ene_core.cli.ray_backend import eval_with_ray, split_lines

REQUESTS = [
    {"id": "a", "answer": "Paris is in France. Dogs fly.", "contexts": ["Paris is in France."]},
    {
        "id": "b",
        "answer": "The cat sat on the mat. The tower is 300 metres tall.",
        "contexts": ["The tower is 300 metres tall.", "The cat sat on the mat.", "Red."],
        "question": "Where?",
    },
    {
        "id": "c",
        "answer": "The tower is 200 metres tall.",
        "contexts": ["The tower is 300 metres."],
    },
    {"id": "d", "answer": "Paris is the capital of France.", "contexts": []},
]


@pytest.fixture(scope="module")
def local_ray() -> None:
    ray = pytest.importorskip("ray", reason="Ray not installed (pip install 'ene[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture
def shards(tmp_path: Path) -> Path:
    """Three shards with a bad line, a blank line, a request that fails validation and a line
    that is not UTF-8."""
    lines: list[str | bytes] = [json.dumps(r) for r in REQUESTS * 3]
    lines[4] = "{not json"
    lines[6] = ""
    lines[7] = json.dumps({"id": "bad", "answer": 5, "contexts": []})
    lines[10] = b'{"id": "latin1", "answer": "caf\xe9", "contexts": []}'
    folder = tmp_path / "shards"
    folder.mkdir()
    for n, start in enumerate((0, 5, 9)):
        end = {0: 5, 5: 9, 9: len(lines)}[start]
        shard = [x if isinstance(x, bytes) else x.encode() for x in lines[start:end]]
        (folder / f"part-{n:02d}.jsonl").write_bytes(b"\n".join(shard) + b"\n")
    (folder / "_SUCCESS").write_text("")  # marker files are not input
    return folder


def local_output(folder: Path, *extra: str) -> list[str]:
    args = cli_parser().parse_args(["eval", str(folder), "-o", "-", *extra])
    out = io.StringIO()
    eval_lines(
        build_engine(args),
        read_lines(input_files(str(folder))),
        out,
        on_error=args.on_error,
        errors=io.StringIO(),
    )
    return out.getvalue().splitlines()


def comparable(line: str) -> dict:
    """Everything but ``stats.duration_ms`` / cache counters, which vary run to run."""
    data = json.loads(line)
    if "stats" in data:
        data["stats"] = {"oracle_checks": data["stats"]["oracle_checks"]}
    return data


def test_ray_output_equals_local_output_keyword(local_ray, shards: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray.jsonl"
    argv = ["eval", str(shards), "-o", str(out), "--oracle", "keyword", "--on-error", "record"]
    assert main([*argv, "--backend", "ray", "--workers", "2"]) == 2  # lines skipped: exit 2
    got = out.read_text().splitlines()
    want = local_output(shards, "--oracle", "keyword", "--on-error", "record")
    assert len(got) == len(want) == 11  # 12 lines, one blank
    assert [comparable(x) for x in got] == [comparable(x) for x in want]
    errors = [json.loads(x) for x in got if "error" in json.loads(x)]
    assert [e["line"] for e in errors] == [5, 8, 11]  # numbered across shards, like locally
    assert errors[2]["error"].startswith("not UTF-8 text")
    assert [json.loads(x).get("id") for x in got][:4] == ["a", "b", "c", "d"]


def test_ray_output_equals_local_output_tiny_nli(
    local_ray, shards: Path, tmp_path: Path, tiny_model_dir: str
) -> None:
    extra = ["--model", tiny_model_dir, "--device", "cpu"]
    args = cli_parser().parse_args(["eval", str(shards), "-o", "-", *extra])
    out = tmp_path / "ray.jsonl"
    counts = eval_with_ray(
        input_files(str(shards)),
        str(out),
        engine_options=engine_options(args),
        workers=1,
        errors=io.StringIO(),
    )
    assert counts.counts == {"ok": 8, "failed": 0, "bad_lines": 3}
    got = out.read_text().splitlines()
    want = local_output(shards, *extra)
    assert [comparable(x) for x in got] == [comparable(x) for x in want]
    assert json.loads(got[0])["verifier"]["model"] != "keyword-oracle"


def test_engine_options_carry_both_thresholds_to_a_worker() -> None:
    args = cli_parser().parse_args(
        ["eval", "in.jsonl", "-o", "-", "--oracle", "keyword", "--contradiction-threshold", "0.7"]
    )
    options = json.loads(json.dumps(engine_options(args)))  # as it crosses to a Ray actor
    engine = build_engine(argparse.Namespace(**options))
    assert (engine.threshold, engine.contradiction_threshold) == (0.5, 0.7)


def test_split_lines_matches_the_local_reader(tmp_path: Path) -> None:
    raw = "\ufeffa\r\nb\rc\u2028d\n\ne".encode() + b"\n\xff\n"
    path = tmp_path / "x.jsonl"
    path.write_bytes(raw)
    rows = split_lines({"bytes": raw})
    local = list(read_lines([str(path)]))
    assert [NotText(r["problem"]) if r["problem"] else r["line"] for r in rows] == local
    assert local[:5] == ["a", "b", "c\u2028d", "", "e"] and isinstance(local[5], NotText)


def test_missing_ray_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(REQUESTS[0]) + "\n")
    argv = ["eval", str(src), "-o", str(tmp_path / "o.jsonl"), "--oracle", "keyword"]
    assert main([*argv, "--backend", "ray"]) == 1
    assert "pip install 'ene[ray]'" in capsys.readouterr().err
