"""``ene eval`` as a user meets it, through real processes: nothing lost, clear failures,
exit codes, --resume after a real interruption, progress and the documented formats.

Every run uses ``--oracle keyword`` (no model): these tests are about the batch tool.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from ene_core import EvidenceNecessityGraph
from ene_core.cli import EXAMPLE_LINES, main
from ene_core.cli.batch import eval_lines
from ene_core.cli.inputs import count_lines, parse_line, read_lines
from ene_core.cli.outputs import AtomicOutput, ResumeState, record_key
from ene_core.cli.progress import Progress, progress_wanted
from ene_core.verifiers.keyword import KeywordOracle

ROOT = Path(__file__).resolve().parents[1]


def ene(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter (stderr is a pipe: no progress bar)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ene_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
    )


def request(i: int, *, with_id: bool = True) -> dict:
    item = {
        "answer": f"Paris is in France {i}. The tower is {i} metres tall.",
        "contexts": [f"Paris is in France {i}.", f"The tower is {i} metres tall.", "Owls hunt."],
    }
    return {"id": f"r{i}", **item} if with_id else item


def write_jsonl(path: Path, items: Sequence[dict | str | bytes]) -> Path:
    with open(path, "wb") as out:
        for item in items:
            if isinstance(item, bytes):
                out.write(item + b"\n")
            else:
                text = item if isinstance(item, str) else json.dumps(item)
                out.write(text.encode() + b"\n")
    return path


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- nothing lost --------------------------------------------------------------------------------
def test_a_missing_input_leaves_an_existing_output_alone(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text("precious\n")
    done = ene("eval", str(tmp_path / "missing.jsonl"), "-o", str(out), "--oracle", "keyword")
    assert done.returncode == 1
    assert out.read_text() == "precious\n"
    assert "missing.jsonl: no such file or directory" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("how", ["same path", "symlink to the input", "hard link", "via dir/.."])
def test_output_equal_to_the_input_is_refused(tmp_path: Path, how: str) -> None:
    src = write_jsonl(tmp_path / "x.jsonl", [request(1)])
    before = src.read_bytes()
    out = {
        "same path": src,
        "symlink to the input": tmp_path / "link.jsonl",
        "hard link": tmp_path / "hard.jsonl",
        "via dir/..": tmp_path / "sub" / ".." / "x.jsonl",
    }[how]
    if how == "symlink to the input":
        out.symlink_to(src)
    elif how == "hard link":
        os.link(src, out)
    elif how == "via dir/..":
        (tmp_path / "sub").mkdir()
    done = ene("eval", str(src), "-o", str(out), "--oracle", "keyword")
    assert done.returncode == 1, done.stderr
    assert "is the input file" in done.stderr and "Traceback" not in done.stderr
    assert src.read_bytes() == before


def test_report_and_shard_outputs_that_would_destroy_input_are_refused(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(1)])
    before = src.read_bytes()
    out = tmp_path / "out.jsonl"
    done = ene("eval", str(src), "-o", str(out), "--oracle", "keyword", "--report", str(src))
    assert done.returncode == 1 and "is the input file" in done.stderr
    assert src.read_bytes() == before and not out.exists()  # refused before the run
    shards = tmp_path / "shards"
    shards.mkdir()
    write_jsonl(shards / "part-0.jsonl", [request(2)])
    inside = ene("eval", str(shards), "-o", str(shards / "out.jsonl"), "--oracle", "keyword")
    assert inside.returncode == 1 and "inside the input directory" in inside.stderr
    marker = ene("eval", str(shards), "-o", str(shards / "_out.jsonl"), "--oracle", "keyword")
    assert marker.returncode == 0, marker.stderr  # names starting with _ are not read as shards


def test_an_input_symlinked_to_the_output_is_refused(tmp_path: Path) -> None:
    out = write_jsonl(tmp_path / "out.jsonl", [request(1)])
    link = tmp_path / "in.jsonl"
    link.symlink_to(out)
    done = ene("eval", str(link), "-o", str(out), "--oracle", "keyword", "--resume")
    assert done.returncode == 1 and "is the input file" in done.stderr


def test_a_line_that_is_not_utf8_is_one_bad_line(tmp_path: Path) -> None:
    src = write_jsonl(
        tmp_path / "in.jsonl",
        [request(1), b'{"id": "latin1", "answer": "caf\xe9", "contexts": []}', request(3)],
    )
    out = tmp_path / "out.jsonl"
    done = ene("eval", str(src), "-o", str(out), "--oracle", "keyword")
    assert done.returncode == 2  # some lines skipped
    assert [r["id"] for r in records(out)] == ["r1", "r3"]  # the lines around it are written
    assert "line 2: skipped: not UTF-8 text (byte 0xe9 at byte 32)" in done.stderr
    assert "Traceback" not in done.stderr and "UnicodeDecodeError" not in done.stderr


def test_bad_lines_are_reported_with_number_and_reason_and_summarised(tmp_path: Path) -> None:
    src = write_jsonl(
        tmp_path / "in.jsonl",
        [
            request(1),
            "{not json",
            "[1, 2]",
            {"id": "no-contexts", "answer": "x"},
            {"id": "bad-answer", "answer": 5, "contexts": []},
            "",
            request(7),
        ],
    )
    out = tmp_path / "out.jsonl"
    done = ene("eval", str(src), "-o", str(out), "--oracle", "keyword")
    assert done.returncode == 2
    assert [r["id"] for r in records(out)] == ["r1", "r7"]
    reasons = {
        2: "not valid JSON: Expecting property name enclosed in double quotes (column 2)",
        3: "not a request: a line must be a JSON object, got an array",
        4: "missing 'contexts'",
        5: "answer must be a str, got int",
    }
    for number, reason in reasons.items():  # as it happens, and again in the summary
        assert done.stderr.count(f"line {number}: skipped: {reason}") == 2, done.stderr
    summary = done.stderr.splitlines()[-1]
    assert summary.startswith("ene eval: 2 requests evaluated, 4 lines skipped, 0 failed")
    assert "4 claims: 0 unsupported, 0 contradicted" in summary and "requests/s" in summary


def test_exit_codes(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [request(1), request(2)])
    bad = write_jsonl(tmp_path / "bad.jsonl", [request(1), "{"])
    out = str(tmp_path / "out.jsonl")
    assert ene("eval", str(good), "-o", out, "--oracle", "keyword").returncode == 0
    assert ene("eval", str(bad), "-o", out, "--oracle", "keyword").returncode == 2
    usage = ene("eval", str(good), "-o", out, "--oracle", "psychic")
    assert usage.returncode == 1 and "invalid choice" in usage.stderr
    assert ene("eval", str(good)).returncode == 1  # -o is required
    assert ene("eval", str(good), "-o", str(tmp_path / "nodir" / "o.jsonl")).returncode == 1
    assert ene("eval", str(good), "-o", str(tmp_path)).returncode == 1  # a directory
    assert ene("--help").returncode == 0


def test_user_errors_never_show_a_traceback(tmp_path: Path) -> None:
    eng_file = tmp_path / "eng.jsonl"
    main(
        [
            "eval",
            str(write_jsonl(tmp_path / "in.jsonl", [request(1)])),
            "-o",
            str(eng_file),
            "--oracle",
            "keyword",
            "-q",
        ]
    )
    runs = [
        ("view", str(tmp_path / "missing.json")),
        ("report", str(tmp_path / "missing.jsonl")),
        ("view", str(eng_file), "-o", str(eng_file)),  # would overwrite its input
        ("report", str(eng_file), "--html", str(tmp_path / "nodir" / "r.html")),
        ("evaluate", "--answer", "x y.", "--model", str(tmp_path / "no-model")),
        ("eval", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--model", "./nope"),
    ]
    for args in runs:
        done = ene(*args)
        assert done.returncode == 1, (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stderr.startswith("ene "), done.stderr
    assert records(eng_file)[0]["id"] == "r1"  # the view did not overwrite it
    nope = ene(
        "eval", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--model", "./nope"
    )
    assert "model './nope' does not exist" in nope.stderr and "config.json" in nope.stderr
    assert not (tmp_path / "o.jsonl").exists()  # a bad --model fails before the output


def test_a_failed_run_leaves_the_old_output_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(i) for i in range(100)])
    out = tmp_path / "out.jsonl"
    out.write_text("old results\n")
    written = {"n": 0}
    original = AtomicOutput.write

    def disk_full_later(self, text):  # the disk fills up after 40 lines
        written["n"] += 1
        if written["n"] > 40:
            raise OSError(28, "No space left on device", self.temp)
        return original(self, text)

    monkeypatch.setattr(AtomicOutput, "write", disk_full_later)
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "-q"]) == 1
    assert out.read_text() == "old results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]  # no temp


def test_ctrl_c_keeps_an_old_output_and_saves_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(i) for i in range(100)])
    original = KeywordOracle.score
    calls = {"n": 0}

    def interrupt_later(self, pairs):
        calls["n"] += 1
        if calls["n"] % 4 == 0:
            raise KeyboardInterrupt
        return original(self, pairs)

    monkeypatch.setattr(KeywordOracle, "score", interrupt_later)
    old = tmp_path / "old.jsonl"
    old.write_text("old results\n")
    assert main(["eval", str(src), "-o", str(old), "--oracle", "keyword"]) == 130
    assert old.read_text() == "old results\n"
    assert f"{old} is left as it was" in capsys.readouterr().err
    new = tmp_path / "new.jsonl"
    assert main(["eval", str(src), "-o", str(new), "--oracle", "keyword"]) == 130
    kept = records(new)
    assert [r["id"] for r in kept] == [f"r{i}" for i in range(len(kept))] and kept
    assert "add --resume to continue" in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_the_output_keeps_its_permissions(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(1)])
    out = tmp_path / "out.jsonl"
    out.write_text("")
    out.chmod(0o640)
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "-q"]) == 0
    assert out.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "fresh.jsonl"
    AtomicOutput(str(fresh)).commit()
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask


# -- resume --------------------------------------------------------------------------------------
def test_sigint_then_resume_finishes_a_real_run_without_duplicates(tmp_path: Path) -> None:
    """A real ``ene eval --resume`` process is interrupted with SIGINT while it writes, then
    the same command finishes it: every request once, in input order, same verdicts."""
    total = 3000
    items: list[dict | str] = [request(i, with_id=i % 3 != 0) for i in range(total)]
    items[10] = "{bad line"  # reported by both runs, written by neither
    items[11] = request(9, with_id=False)  # an id-less duplicate of line 10 (request 9)
    assert "id" not in items[9]
    src = write_jsonl(tmp_path / "in.jsonl", items)
    out = tmp_path / "out.jsonl"
    argv = [sys.executable, "-m", "ene_core.cli", "eval", str(src), "-o", str(out)]
    argv += ["--oracle", "keyword", "--resume", "--on-error", "record"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # as a terminal's Ctrl-C reaches a foreground process: a runner started in the background
    # (`.ci/run &`) hands its children SIGINT ignored, and Python then installs no handler
    restore = functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL)
    run = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=restore)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_bytes().count(b"\n") >= 200:
            break
        time.sleep(0.005)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    first = out.read_bytes().count(b"\n")
    assert 200 <= first < total, "the run was not interrupted midway"
    assert "interrupted" in err and "run the same command again to continue" in err

    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr  # the bad line's error record is in the output
    assert f"{first} already in the output (1 as error records)" in done.stderr
    got = records(out)
    assert len(got) == total  # 2999 ENGs + one error record, nothing twice
    want_ids = [it.get("id") if isinstance(it, dict) else None for it in items]
    assert [r.get("id") for r in got] == want_ids
    assert got[10] == {
        "line": 11,
        "error": "not valid JSON: Expecting property name enclosed in double quotes (column 2)",
    }
    answers = [r["answer"] for r in got if "answer" in r]
    assert answers.count(request(9)["answer"]) == 2  # both copies are evaluated, once each
    engine_verdicts = EvidenceNecessityGraph.from_dict(got[-1]).verdicts()
    fresh = tmp_path / "fresh.jsonl"
    assert (
        main(
            [
                "eval",
                str(src),
                "-o",
                str(fresh),
                "--oracle",
                "keyword",
                "-q",
                "--on-error",
                "record",
            ]
        )
        == 2
    )
    assert EvidenceNecessityGraph.from_dict(records(fresh)[-1]).verdicts() == engine_verdicts
    assert [r.get("id") for r in records(fresh)] == want_ids


def _started(folder: Path) -> bool:
    """Whether a run writing into ``folder`` has a ``.part`` file with a whole line in it."""
    for p in folder.iterdir():
        with contextlib.suppress(FileNotFoundError):  # renamed at the end of the run
            if p.suffix == ".part" and b"\n" in p.read_bytes():
                return True
    return False


def test_sigterm_ends_a_run_like_ctrl_c(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(i) for i in range(6000)])
    out = tmp_path / "out.jsonl"
    argv = [sys.executable, "-m", "ene_core.cli", "eval", str(src), "-o", str(out)]
    argv += ["--oracle", "keyword"]
    run = subprocess.Popen(
        argv, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not _started(tmp_path):
        time.sleep(0.005)  # until the run has written a line (a fixed wait fails on a busy machine)
    assert _started(tmp_path), "the run wrote no line in 300 s"
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    kept = records(out)  # no output before: what was done is kept, ready for --resume
    assert 0 < len(kept) < 6000 and [r["id"] for r in kept] == [f"r{i}" for i in range(len(kept))]
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".part"]


def test_resume_repairs_a_line_cut_off_by_a_kill(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(i) for i in range(5)])
    out = tmp_path / "out.jsonl"
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "-q"]) == 0
    full = out.read_bytes()
    lines = full.splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # killed while writing line 3
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "-q", "--resume"]) == 0
    assert [r["id"] for r in records(out)] == ["r0", "r1", "r2", "r3", "r4"]
    out.write_bytes(b"".join(lines[:2]).rstrip(b"\n"))  # a whole last line, no newline
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "-q", "--resume"]) == 0
    assert [r["id"] for r in records(out)] == ["r0", "r1", "r2", "r3", "r4"]


def test_resume_refuses_what_it_cannot_continue(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(1), request(2)])
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nmore notes\n")
    done = ene("eval", str(src), "-o", str(notes), "--oracle", "keyword", "--resume")
    assert done.returncode == 1 and "not ene eval output" in done.stderr
    assert notes.read_text() == "my notes\nmore notes\n"
    out = tmp_path / "out.jsonl"
    write_jsonl(out, [])
    assert (
        main(
            [
                "eval",
                str(write_jsonl(tmp_path / "one.jsonl", [request(1)])),
                "-o",
                str(out),
                "--oracle",
                "keyword",
                "-q",
            ]
        )
        == 0
    )
    before = out.read_text()
    other = ene(
        "eval", str(src), "-o", str(out), "--oracle", "keyword", "--resume", "--threshold", "0.7"
    )
    assert (
        other.returncode == 1
        and "threshold 0.5" in other.stderr
        and "threshold 0.7" in other.stderr
    )
    assert out.read_text() == before
    ray = ene("eval", str(src), "-o", str(out), "--resume", "--backend", "ray")
    assert ray.returncode == 1 and "local backend" in ray.stderr


def test_contradiction_threshold_reaches_every_eng_and_resume_holds_to_it(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(i) for i in range(3)])
    out = tmp_path / "out.jsonl"
    keyword = ("--oracle", "keyword", "-q")
    first = ene("eval", str(src), "-o", str(out), *keyword, "--contradiction-threshold", "0.8")
    assert first.returncode == 0, first.stderr
    verifiers = [r["verifier"] for r in records(out)]
    assert [(v["threshold"], v["contradiction_threshold"]) for v in verifiers] == [(0.5, 0.8)] * 3
    before = out.read_text()
    other = ene("eval", str(src), "-o", str(out), *keyword, "--resume")
    assert other.returncode == 1
    assert "contradiction threshold 0.8" in other.stderr
    assert "contradiction threshold 0.5" in other.stderr
    assert out.read_text() == before
    again = ene(
        "eval", str(src), "-o", str(out), *keyword, "--resume", "--contradiction-threshold", "0.8"
    )
    assert again.returncode == 0, again.stderr
    assert out.read_text() == before  # every request was already there
    bad = ene(
        "eval",
        str(src),
        "-o",
        str(tmp_path / "new.jsonl"),
        *keyword,
        "--contradiction-threshold",
        "1.5",
    )
    assert bad.returncode == 1 and "contradiction_threshold must be in (0, 1]" in bad.stderr
    assert "Traceback" not in bad.stderr and not (tmp_path / "new.jsonl").exists()


def test_remote_refuses_flags_that_choose_the_verifier(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(1)])
    out = tmp_path / "out.jsonl"
    for flags in (["--threshold", "0.3"], ["--contradiction-threshold", "0.7"], ["--model", "m"]):
        run = ene("eval", str(src), "-o", str(out), "--remote", "http://127.0.0.1:9", *flags)
        assert run.returncode == 1, run.stderr
        assert f"pass {flags[0]} to `ene serve`" in run.stderr and "Traceback" not in run.stderr
        assert not out.exists()


def test_resume_state_reads_an_older_eng_without_a_contradiction_threshold(
    tmp_path: Path,
) -> None:
    eng = {"schema_version": "1.0", "id": "a", "answer": "x", "contexts": []}
    older = {**eng, "verifier": {"model": "m", "threshold": 0.4}}
    newer = {
        **eng,
        "id": "b",
        "verifier": {"model": "m", "threshold": 0.4, "contradiction_threshold": 0.7},
    }
    state = ResumeState.read(str(write_jsonl(tmp_path / "out.jsonl", [older, newer])))
    assert state.verifiers == {("m", 0.4, 0.4), ("m", 0.4, 0.7)}


def test_resume_state_matches_by_id_content_and_line() -> None:
    state = ResumeState("out.jsonl")
    eng_with_id = {"schema_version": "1.2", "id": "a", "answer": "x", "contexts": []}
    eng_without = {
        "schema_version": "1.2",
        "id": None,
        "answer": "y",
        "question": None,
        "contexts": [{"text": "c"}],
    }
    error = {"line": 4, "error": "not valid JSON"}

    for record in (eng_with_id, eng_without, eng_without):
        state.keys[record_key(record)] += 1
    state.error_keys[record_key(error)] += 1
    a = parse_line(1, json.dumps({"id": "a", "answer": "other text", "contexts": []}))
    y = parse_line(2, json.dumps({"answer": "y", "contexts": ["c"]}))
    y_other = parse_line(3, json.dumps({"answer": "y", "contexts": ["d"]}))
    bad = parse_line(4, "{nope")
    assert [state.take(i) for i in (a, a, y, y, y, y_other, bad, bad)] == [
        "ok",
        None,
        "ok",
        "ok",
        None,
        None,
        "error",
        None,
    ]


# -- reading -------------------------------------------------------------------------------------
def test_line_ends_and_a_bom_are_read_like_python_text(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfa\r\nb\rc\xe2\x80\xa8d\n\ne"
    path = tmp_path / "x.jsonl"
    path.write_bytes(raw)
    with open(path, encoding="utf-8-sig") as stream:
        want = [line.rstrip("\n") for line in stream]
    assert list(read_lines([str(path)])) == want == ["a", "b", "c\u2028d", "", "e"]
    assert count_lines([str(path)]) == 5


def test_read_lines_splits_across_read_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"ab\r\ncd\r\n\xff\xfe\rlast\r\n\r\nx\r"
    path = tmp_path / "x.jsonl"
    path.write_bytes(data)
    whole = list(read_lines([str(path)]))
    assert [type(x).__name__ for x in whole] == ["str", "str", "NotText", "str", "str", "str"]
    for size in range(1, 8):  # every cut, a \r\n split between two reads included
        monkeypatch.setattr("ene_core.cli.inputs.READ_SIZE", size)
        assert list(read_lines([str(path)])) == whole
        assert count_lines([str(path)]) == len(whole)


# -- progress and docs ---------------------------------------------------------------------------
def test_progress_bar_has_total_rate_and_eta_on_a_terminal(tmp_path: Path) -> None:
    stream = io.StringIO()
    with Progress(10, enabled=True, stream=stream, force_terminal=True) as bar:
        bar.message("ene eval: line 3: skipped: not valid JSON")
        for _ in range(10):
            bar.advance()
            time.sleep(0.01)
        bar._bar.refresh()
        shown = stream.getvalue()
    assert "10/10" in shown and "requests/s" in shown and "ETA" in shown
    assert "line 3: skipped" in shown


def test_progress_is_off_in_pipes_ci_and_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert progress_wanted(Tty())
    assert not progress_wanted(io.StringIO())  # a pipe or a file
    assert not progress_wanted(Tty(), quiet=True)
    monkeypatch.setenv("CI", "true")
    assert not progress_wanted(Tty())


def test_eval_lines_reports_through_the_progress(tmp_path: Path) -> None:
    from ene_core import NecessityEngine

    errors = io.StringIO()
    out = io.StringIO()
    summary = eval_lines(
        NecessityEngine(KeywordOracle()), ["{", json.dumps(request(1)), ""], out, errors=errors
    )
    assert summary.counts == {"ok": 1, "failed": 0, "bad_lines": 1}
    assert summary.exit_code == 2 and summary.claims == 2
    assert errors.getvalue().startswith("ene eval: line 1: skipped: not valid JSON")


def test_quiet_prints_only_problems(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [request(1), "{"])
    done = ene("eval", str(src), "-o", str(tmp_path / "o.jsonl"), "--oracle", "keyword", "-q")
    assert done.returncode == 2
    assert "line 2: skipped" in done.stderr and "requests evaluated" not in done.stderr
    clean = write_jsonl(tmp_path / "clean.jsonl", [request(1)])
    quiet = ene("eval", str(clean), "-o", str(tmp_path / "c.jsonl"), "--oracle", "keyword", "-q")
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_help_documents_formats_and_exit_codes_and_its_example_runs(tmp_path: Path) -> None:
    shown = ene("eval", "--help").stdout
    for needle in (
        "id ",
        "question",
        "answer",
        "contexts",
        '"metadata"',
        "exit status",
        "--resume",
        "ETA",
        "ene schema",
        "130",
    ):
        assert needle in shown, needle
    example = [line.strip() for line in shown.splitlines() if line.strip().startswith('{"id"')]
    assert example == list(EXAMPLE_LINES) and len(example) == 3
    src = write_jsonl(tmp_path / "example.jsonl", example)
    out = tmp_path / "out.jsonl"
    done = ene("eval", str(src), "-o", str(out), "--oracle", "keyword")
    assert done.returncode == 0, done.stderr
    assert [r["id"] for r in records(out)] == ["q1", "q2", "q3"]
    assert records(out)[1]["contexts"][0]["metadata"] == {"source": "wiki"}
    cli_page = (ROOT / "docs" / "cli.md").read_text()
    assert all(line in cli_page for line in EXAMPLE_LINES)  # docs/cli.md shows the same file


def test_the_summary_line_says_what_was_done(tmp_path: Path) -> None:
    src = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {
                "id": "c",
                "answer": "The tower is 200 metres tall.",
                "contexts": ["The tower is 300 metres tall."],
            },
            {"id": "u", "answer": "Dogs fly.", "contexts": ["Cats purr."]},
        ],
    )
    done = ene("eval", str(src), "-o", str(tmp_path / "o.jsonl"), "--oracle", "keyword")
    assert done.returncode == 0
    (line,) = done.stderr.splitlines()
    assert re.fullmatch(
        r"ene eval: 2 requests evaluated, 0 lines skipped, 0 failed · 2 claims: 1 unsupported, "
        r"1 contradicted, 0 unchecked · \d+\.\d s \(\d+\.\d requests/s\) -> .*o\.jsonl",
        line,
    ), line


def test_the_summary_counts_sentences_left_unchecked(tmp_path: Path) -> None:
    # issue 54: a bare name without a question cannot be a claim: unchecked, and counted
    src = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"id": "n", "answer": "Delhi", "contexts": ["Delhi is a city."]},
            {"id": "q", "answer": "Delhi", "contexts": ["Delhi is a city."], "question": "Where?"},
            {"id": "s", "answer": "A man and woman pose.", "contexts": ["A man poses."]},
        ],
    )
    done = ene("eval", str(src), "-o", str(tmp_path / "o.jsonl"), "--oracle", "keyword")
    assert done.returncode == 0
    assert "2 claims: " in done.stderr and ", 1 unchecked · " in done.stderr, done.stderr
    stats = [json.loads(line)["stats"] for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [s["unchecked_sentences"] for s in stats] == [1, 0, 0]
