"""Rules per verifier: the embedded model declares the rules that pay on the sealed test,
KeywordOracle (the rules' test stand-in) every rule, any other verifier none; rules= and --rules switch them per rule; the ENG records
each rule's flag."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ene_core import Cascade, InvalidInputError, NecessityEngine
from ene_core.cli import main
from ene_core.engine.necessity import parse_rules, resolve_rules
from ene_core.testing import KeywordOracle
from ene_core.verifiers.protocol import EMBEDDED_RULES, RULES, declared_rules

ALL = frozenset(RULES)


class Plain:
    """A verifier of one's own that declares nothing."""

    name = "my-verifier"
    revision = None
    default_threshold = 0.5

    def __init__(self) -> None:
        self.inner = KeywordOracle()

    def score(self, pairs: Any) -> Any:
        return self.inner.score(pairs)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class Embedded(Plain):
    name = "ene-nli-mini"


def test_who_declares_what() -> None:
    assert declared_rules(Plain()) == frozenset()
    assert declared_rules(Embedded()) == EMBEDDED_RULES < ALL
    assert declared_rules(KeywordOracle()) == ALL
    assert declared_rules(Cascade(KeywordOracle(), Plain())) == ALL  # the first verifier's
    assert declared_rules(Cascade(Plain(), KeywordOracle())) == frozenset()


def test_rules_switch_per_rule() -> None:
    oracle = KeywordOracle()
    assert resolve_rules(oracle) == ALL
    assert resolve_rules(oracle, {"bindings": False}) == ALL - {"bindings"}
    assert resolve_rules(Plain(), {"amounts": True}) == {"amounts"}
    assert resolve_rules(oracle, "none,amounts") == {"amounts"}
    assert resolve_rules(oracle, "no-scope,no-polarity") == ALL - {"scope", "polarity"}
    assert resolve_rules(Plain(), "all") == ALL
    assert resolve_rules(oracle, False) == frozenset()
    assert resolve_rules(oracle, ["arithmetic"]) == {"arithmetic"}
    assert resolve_rules(oracle, check_bindings=False) == {"amounts", "arithmetic", "masking"}
    assert resolve_rules(Plain(), check_amounts=True) == {"amounts", "arithmetic", "masking"}
    assert parse_rules("all,no-culprits") == {**dict.fromkeys(RULES, True), "culprits": False}
    for wrong in ("no-such", {"nope": True}, ["amount"]):
        with pytest.raises(InvalidInputError, match="unknown rule"):
            resolve_rules(oracle, wrong)  # type: ignore[arg-type]


# a value the evidence gives to another: the bindings rule contradicts the claim
ANSWER = "The Atlas Tower is the tallest building in Norland."
CONTEXTS = ["The Borel Spire is the tallest building in Norland; the Atlas Tower is second."]


def test_the_eng_records_the_rules_that_applied() -> None:
    on = NecessityEngine(KeywordOracle()).evaluate(ANSWER, CONTEXTS)
    off = NecessityEngine(KeywordOracle(), rules={"bindings": False}).evaluate(ANSWER, CONTEXTS)
    plain = NecessityEngine(Plain()).evaluate(ANSWER, CONTEXTS)
    flags = {name: getattr(on.verifier, f"check_{name}") for name in RULES}
    assert flags == dict.fromkeys(RULES, True)
    assert off.verifier.check_bindings is False and off.verifier.check_scope is True
    assert {getattr(plain.verifier, f"check_{name}") for name in RULES} == {False}
    assert on.claims[0].status == "contradicted" and on.claims[0].other_holder
    assert off.claims[0].other_holder is None and plain.claims[0].other_holder is None


def test_cli_rules_flag(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--answer", ANSWER, "--context", CONTEXTS[0], "--json"]
    assert main([*argv, "--oracle", "keyword", "--rules", "no-bindings,no-masking"]) == 0
    verifier = json.loads(capsys.readouterr().out)["verifier"]
    assert verifier["check_bindings"] is False and verifier["check_masking"] is False
    assert verifier["check_amounts"] is True
    assert main([*argv, "--oracle", "keyword", "--rules", "no-such"]) == 1
    assert "unknown rule" in capsys.readouterr().err


def test_rules_cross_process_boundaries_and_are_refused_with_remote() -> None:
    import argparse

    from ene_core import EneError
    from ene_core.cli import build_engine, engine_options, make_parser

    args = make_parser().parse_args(
        ["eval", "in.jsonl", "-o", "out.jsonl", "--oracle", "keyword", "--rules", "none"]
    )
    options = engine_options(args)  # what a Ray actor or a Serve replica receives
    assert options["rules"] == "none"
    assert build_engine(argparse.Namespace(**options)).rules == frozenset()
    remote = make_parser().parse_args(
        ["eval", "in.jsonl", "-o", "o.jsonl", "--remote", "http://127.0.0.1:1", "--rules", "all"]
    )
    with pytest.raises(EneError, match="--rules"):
        build_engine(remote)
