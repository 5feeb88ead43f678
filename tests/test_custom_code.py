"""A model that ships its own code (HHEM-style) runs only with trust_remote_code=True."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core import NecessityEngine, RemoteCodeError
from ene_core.cli import main
from ene_core.testing import make_tiny_custom_code_model
from ene_core.verifiers.custom import CustomCodeOracle
from ene_core.verifiers.seq2seq import Seq2SeqOracle


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_tiny_custom_code_model(str(tmp_path_factory.mktemp("custom") / "judge"))


def test_refused_without_the_flag(model: str) -> None:
    for refused in (lambda: CustomCodeOracle(model), lambda: Seq2SeqOracle(model)):
        with pytest.raises(RemoteCodeError, match="trust_remote_code=True") as caught:
            refused()
        assert "modeling_tiny_judge.TinyJudge" in str(caught.value)
    with pytest.raises(RemoteCodeError):
        CustomCodeOracle(model, trust_remote_code="yes")  # type: ignore[arg-type]


def test_loads_and_scores_with_the_flag(model: str) -> None:
    oracle = CustomCodeOracle(model, trust_remote_code=True)
    supported, unrelated = oracle.score(
        [("The cat sat on the mat.", "The cat sat."), ("Dogs bark.", "The cat sat.")]
    )
    assert supported.entail > 0.9 and unrelated.entail < 0.1
    assert oracle.score([("Dogs bark.", "The cat sat.")]) == [unrelated]
    eng = NecessityEngine(oracle).evaluate(
        "The cat sat.", ["The cat sat on the mat.", "Dogs bark."]
    )
    assert eng.claims[0].status == "supported" and eng.claims[0].necessary == [0]
    assert eng.verifier.check_amounts is False  # no rules for a verifier of one's own


def test_cli_needs_the_flag(model: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--answer", "The cat sat.", "--context", "The cat sat on the mat."]
    argv += ["--oracle", "custom", "--model", model, "--json"]
    assert main(argv) == 1
    assert "--trust-remote-code" in capsys.readouterr().err
    assert main([*argv, "--trust-remote-code"]) == 0
    assert json.loads(capsys.readouterr().out)["claims"][0]["status"] == "supported"


def test_a_declaration_cannot_trust_the_code_for_you(model: str, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "declared"
    shutil.copytree(model, copy)
    (copy / "ene_verifier.json").write_text(json.dumps({"trust_remote_code": True}))
    with pytest.raises(RemoteCodeError, match=r"ene_verifier\.json cannot say so"):
        CustomCodeOracle(str(copy))
    assert CustomCodeOracle(str(copy), trust_remote_code=True).rules == frozenset()


def test_the_flag_crosses_process_boundaries(model: str) -> None:
    import argparse

    from ene_core.cli import build_engine, engine_options, make_parser

    argv = ["eval", "in.jsonl", "-o", "out.jsonl", "--oracle", "custom", "--model", model]
    argv.append("--trust-remote-code")
    options = engine_options(make_parser().parse_args(argv))  # a Ray actor's or replica's
    assert options["trust_remote_code"] is True
    engine = build_engine(argparse.Namespace(**options))
    assert isinstance(engine.oracle, CustomCodeOracle)
    options["trust_remote_code"] = None
    with pytest.raises(RemoteCodeError):
        build_engine(argparse.Namespace(**options))
