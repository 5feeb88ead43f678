"""NLIOracle reads a model the way it declares (ene_verifier.json or arguments): one string
(document, separator, claim), the premise in windows of a declared size (the most entailing
window counts), its thresholds and rules; a long premise is never cut silently; a model with its
own code only with trust_remote_code=True."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core import InvalidInputError, NecessityEngine, NLIOracle, RemoteCodeError
from ene_core.testing import make_tiny_custom_code_model, make_tiny_nli_model
from ene_core.verifiers.protocol import EMBEDDED_RULES

WORDS = [f"w{n}" for n in range(300)]
LONG = " ".join(WORDS)  # 300 tokens, more than the tiny model's 64-token window below
ANSWER = "The w1 has w2."
CONTEXT = "The w1 has w2 and " + " ".join(WORDS) + "."  # one sentence


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_tiny_nli_model(str(tmp_path_factory.mktemp("nliw") / "nli"), words=WORDS)


def _declare(model: str, tmp_path: Path, **fields: object) -> str:
    copy = tmp_path / "declared"
    shutil.copytree(model, copy)
    (copy / "ene_verifier.json").write_text(json.dumps(fields))
    return str(copy)


def test_a_long_premise_without_windows_is_cut_on_record(model: str) -> None:
    oracle = NLIOracle(model, max_length=64)
    (score,) = oracle.score([(LONG, "w1 w2")])
    assert score.truncated
    eng = NecessityEngine(oracle).evaluate(ANSWER, [CONTEXT])
    assert eng.stats.truncated_premises >= 1


def test_windows_read_the_whole_premise_and_the_best_window_counts(model: str) -> None:
    oracle = NLIOracle(model, max_length=64, window=32, stride=16)
    (score,) = oracle.score([(LONG, "w1 w2")])
    assert not score.truncated
    windows = [" ".join(WORDS[s : s + 32]) for s in range(0, 300 - 32, 16)] + [
        " ".join(WORDS[-32:])
    ]
    plain = NLIOracle(model, max_length=64)
    each = plain.score([(w, "w1 w2") for w in windows])
    assert not any(s.truncated for s in each)
    assert score.entail == max(s.entail for s in each)
    assert score.contra == max(s.contra for s in each)
    short = [("w1 w2 w3", "w1 w2")]
    assert oracle.score(short) == plain.score(short)  # a premise that fits: one window
    eng = NecessityEngine(oracle).evaluate(ANSWER, [CONTEXT])
    assert eng.stats.truncated_premises == 0 and eng.stats.forward_pairs > 0


def test_single_string_input(model: str, tmp_path: Path) -> None:
    import torch
    from transformers import AutoTokenizer

    declared = _declare(model, tmp_path, input="single", separator=" | ", window=24)
    oracle = NLIOracle(declared, max_length=64)
    assert oracle.input == "single" and oracle.window == 24 and oracle.separator == " | "
    (single,) = oracle.score([("w1 w2 w3", "w1")])
    tokenizer = AutoTokenizer.from_pretrained(model)
    inputs = tokenizer("w1 w2 w3 | w1", return_tensors="pt")
    with torch.no_grad():
        probs = oracle.model(input_ids=inputs["input_ids"]).logits.softmax(-1)[0]
    assert single.entail == pytest.approx(float(probs[0]), abs=1e-6)
    assert single.contra == pytest.approx(float(probs[2]), abs=1e-6)
    assert single != NLIOracle(model, max_length=64).score([("w1 w2 w3", "w1")])[0]
    (long,) = oracle.score([(LONG, "w1")])
    assert not long.truncated
    assert NLIOracle(declared, input="pair").input == "pair"  # arguments win


def test_the_declaration_sets_thresholds_and_rules(model: str, tmp_path: Path) -> None:
    declared = _declare(model, tmp_path, threshold=0.6, rules=["bindings", "culprits"])
    oracle = NLIOracle(declared)
    assert oracle.default_threshold == 0.6 and oracle.rules == {"bindings", "culprits"}
    assert NecessityEngine(oracle).rules == {"bindings", "culprits"}
    assert NLIOracle(model).rules == frozenset()
    with pytest.raises(InvalidInputError, match="does not read"):
        NLIOracle(_declare(model, tmp_path / "x", prompt="{premise} {hypothesis}"))


def test_the_embedded_model_by_path_keeps_its_rules() -> None:
    from ene_core.verifiers.nli import DEFAULT_MODEL_DIR

    assert NLIOracle(DEFAULT_MODEL_DIR).rules == EMBEDDED_RULES


def test_a_model_with_its_own_code_needs_the_flag(tmp_path: Path) -> None:
    path = make_tiny_custom_code_model(str(tmp_path / "custom"))
    with pytest.raises(RemoteCodeError, match="trust_remote_code=True"):
        NLIOracle(path)


def test_the_cli_flags_reach_the_oracle(model: str, tmp_path: Path) -> None:
    import argparse

    from ene_core.cli import build_engine, engine_options, make_parser

    argv = ["eval", "in.jsonl", "-o", "out.jsonl", "--model", model, "--nli-input", "single"]
    argv += ["--nli-window", "48", "--nli-stride", "24"]
    options = engine_options(make_parser().parse_args(argv))  # a Ray actor's or replica's
    oracle = build_engine(argparse.Namespace(**options)).oracle
    assert (oracle.input, oracle.window, oracle.stride) == ("single", 48, 24)
    custom = make_tiny_custom_code_model(str(tmp_path / "custom"))
    refused = make_parser().parse_args(["eval", "in.jsonl", "-o", "o.jsonl", "--model", custom])
    with pytest.raises(RemoteCodeError, match="--trust-remote-code"):
        build_engine(refused)
