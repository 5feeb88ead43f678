"""ene calibrate: thresholds chosen on dev only, a profile written, read back, used by the engine
and recorded in the ENG; the judge and cascade flags of the engine commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_server import JudgeServer

from ene_core import NecessityEngine, ProfileError, VerifierProfile
from ene_core.cli.calibrate import calibrate, read_cases
from ene_core.cli.commands import main
from ene_core.testing import KeywordOracle
from ene_core.verifiers.profile import choose_thresholds, split_ids

CASES = [
    ("Owls hunt at night.", ["Owls hunt at night."], "supported"),
    ("Owls hunt in the day.", ["Owls hunt at night."], "unsupported"),
    ("The bridge is 300 metres long.", ["The bridge is 330 metres long."], "contradicted"),
    ("Cats sleep a lot.", ["Cats sleep a lot and eat fish."], "supported"),
    ("Cats sleep all day and hunt mice.", ["Cats sleep all day."], "unsupported"),
    ("The tower is 50 metres tall.", ["The tower is 50 metres tall."], "supported"),
    ("Bread rises with yeast and sugar.", ["Bread rises with yeast."], "unsupported"),
    ("The river is 20 km long.", ["The river is 25 km long."], "contradicted"),
    ("Bees make honey.", ["Bees make honey in hives."], "supported"),
    ("Bees make wax and honey daily.", ["Bees make honey."], "supported"),
]


def write_cases(path: Path, flip: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    other = {"supported": "unsupported", "unsupported": "contradicted", "contradicted": "supported"}
    with path.open("w") as f:
        for n, (answer, contexts, status) in enumerate(CASES):
            case_id = f"case-{n}"
            gold = other[status] if case_id in flip else status
            row = {"id": case_id, "answer": answer, "chunks": contexts}
            row["claims"] = [{"text": answer, "status": gold}]
            f.write(json.dumps(row) + "\n")


def make(tau: float | None, tau_c: float | None) -> NecessityEngine:
    return NecessityEngine(KeywordOracle(), tau, contradiction_threshold=tau_c)


def test_thresholds_are_chosen_on_dev_only(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    write_cases(path)
    cases, problems = read_cases(str(path))
    assert not problems and len(cases) == len(CASES)
    taus = [0.1, 0.3, 0.5, 0.7, 0.9]
    profile = calibrate(KeywordOracle(), cases, make_engine=make, taus=taus, test_share=0.3)
    _, test_ids = split_ids([c.id for c in cases], 0.3)
    write_cases(path, flip=test_ids)  # the test part's labels turned around
    flipped, _ = read_cases(str(path))
    again = calibrate(KeywordOracle(), flipped, make_engine=make, taus=taus, test_share=0.3)
    assert (again.threshold, again.contradiction_threshold) == (
        profile.threshold,
        profile.contradiction_threshold,
    )
    assert again.dev == profile.dev and again.test != profile.test


def test_calibrate_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases, out, profile_path = tmp_path / "cases.jsonl", tmp_path / "out.jsonl", tmp_path / "p.json"
    write_cases(cases)
    args = [
        "calibrate",
        str(cases),
        "-o",
        str(profile_path),
        "--oracle",
        "keyword",
        "--grid",
        "0.2",
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "chosen on dev: tau=" in printed and "  dev " in printed and "  test " in printed
    profile = VerifierProfile.read(profile_path)
    assert profile.verifier == "keyword-oracle" and profile.split["candidates"] == 16
    assert profile == VerifierProfile.from_dict(json.loads(profile_path.read_text()))
    engine = NecessityEngine(KeywordOracle(), profile=profile_path)
    assert engine.threshold == profile.threshold
    assert engine.contradiction_threshold == profile.contradiction_threshold
    # ene eval reads it and the ENG records it
    requests = tmp_path / "in.jsonl"
    requests.write_text(json.dumps({"answer": "Owls hunt at night.", "contexts": ["Owls hunt."]}))
    args = ["eval", str(requests), "-o", str(out), "--oracle", "keyword", "--quiet"]
    assert main([*args, "--verifier-profile", str(profile_path)]) == 0
    eng = json.loads(out.read_text().splitlines()[0])
    assert eng["verifier"]["profile"] == profile.record()
    assert eng["verifier"]["threshold"] == profile.threshold


def test_a_profile_of_another_verifier_or_with_thresholds_is_refused(tmp_path: Path) -> None:
    profile = VerifierProfile("ene-nli-mini", "abc", 0.6, 0.8, 0.05)
    with pytest.raises(ProfileError, match="calibrated for 'ene-nli-mini'"):
        NecessityEngine(KeywordOracle(), profile=profile)
    mine = VerifierProfile("keyword-oracle", "1", 0.6, 0.8, 0.05)
    with pytest.raises(ValueError, match="not both"):
        NecessityEngine(KeywordOracle(), 0.5, profile=mine)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"ene_profile": 99}))
    with pytest.raises(ProfileError, match="upgrade"):
        VerifierProfile.read(bad)
    bad.write_text("{")
    assert (
        main(["evaluate", "--answer", "x", "--oracle", "keyword", "--verifier-profile", str(bad)])
        == 1
    )


def test_choose_respects_the_cap() -> None:
    results = {
        (0.5, 0.5): {"right": 10, "supported_to_contradicted": 3, "false_contradiction_rate": 0.3},
        (0.5, 0.9): {"right": 8, "supported_to_contradicted": 0, "false_contradiction_rate": 0.0},
    }
    assert choose_thresholds(results, 0.1) == ((0.5, 0.9), True)
    assert choose_thresholds(results, 0.5) == ((0.5, 0.5), True)


def test_judge_and_cascade_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = JudgeServer()
    try:
        monkeypatch.setenv("MY_JUDGE_KEY", "sk-flag-SECRET")
        requests, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        requests.write_text(
            json.dumps(
                {"id": "a", "answer": "Owls hunt at night.", "contexts": ["Owls hunt at night."]}
            )
            + "\n"
        )
        judge = ["--judge-model", "m", "--judge-url", server.url, "--judge-key-env", "MY_JUDGE_KEY"]
        assert (
            main(["eval", str(requests), "-o", str(out), "--quiet", "--oracle", "judge", *judge])
            == 0
        )
        text = out.read_text()
        eng = json.loads(text)
        assert (
            eng["claims"][0]["status"] == "supported"
            and eng["claims"][0]["judge_read"] == "logprobs"
        )
        assert "sk-flag-SECRET" not in text
        assert server.headers[-1]["Authorization"] == "Bearer sk-flag-SECRET"
        cascade = ["--oracle", "keyword", "--cascade", "judge", "--cascade-band", "0.5", *judge]
        assert main(["eval", str(requests), "-o", str(out), "--quiet", *cascade]) == 0
        eng = json.loads(out.read_text())
        assert eng["verifier"]["model"].startswith("cascade(keyword-oracle -> llm-judge:m")
        assert eng["claims"][0]["decided_by"] == "llm-judge:m"
        server.mode = "500"  # a failing judge: the line is recorded as failed, the run goes on
        failing = ["--oracle", "judge", *judge, "--judge-timeout", "2", "--on-error", "record"]
        assert main(["eval", str(requests), "-o", str(out), "--quiet", *failing]) == 2
        record = json.loads(out.read_text())
        assert "JudgeError" in record["error"] and "SECRET" not in out.read_text()
    finally:
        server.close()
