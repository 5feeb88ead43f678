from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import ENGFormatError, ENGVersionError, EvidenceNecessityGraph, NecessityEngine
from ene_core.verifiers.keyword import KeywordOracle

ENGINE = NecessityEngine(KeywordOracle(), support_matrix=True)
words = st.sampled_from(["alpha", "beta", "gamma", "délta", "ε", "🙂", "12", "3.5"])
sentence = st.lists(words, min_size=1, max_size=4).map(lambda w: " ".join(w) + ".")


@settings(max_examples=60, deadline=None)
@given(
    answer=st.lists(sentence, max_size=4).map(" ".join),
    contexts=st.lists(st.lists(sentence, min_size=1, max_size=3).map(" ".join), max_size=4),
    question=st.none() | st.text(max_size=20),
)
def test_round_trip_is_lossless(answer: str, contexts: list[str], question: str | None) -> None:
    eng = ENGINE.evaluate(answer, contexts, question)
    text = eng.to_json()
    back = EvidenceNecessityGraph.from_json(text)
    assert back == eng
    assert back.to_json() == text


def test_support_matrix_and_uncertainty() -> None:
    eng = ENGINE.evaluate("alpha is beta. gamma is.", ["alpha beta.", "gamma.", "zzz."])
    row = eng.claims[0].support_row
    assert row is not None and len(row) == 3
    assert row[0] > row[1] and row[2] == 0.0
    assert eng.claims[0].uncertainty == pytest.approx(1 - sum(row) / 3)


def sample() -> dict:
    return json.loads(ENGINE.evaluate("alpha beta.", ["alpha beta."]).to_json())


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "not ENG JSON"),
        ("{", "not ENG JSON"),
        ("[]", "JSON object"),
        ('{"answer": "x"}', "schema_version"),
        ('{"schema_version": "one"}', "schema_version"),
    ],
)
def test_malformed_json_raises_format_error(text: str, match: str) -> None:
    with pytest.raises(ENGFormatError, match=match):
        EvidenceNecessityGraph.from_json(text)


def test_invalid_fields_are_named() -> None:
    data = sample()
    data["claims"][0]["status"] = "maybe"
    del data["counts"]
    with pytest.raises(ENGFormatError, match=r"claims\.0\.status") as err:
        EvidenceNecessityGraph.from_dict(data)
    assert "counts" in str(err.value)


def test_unknown_fields_are_rejected() -> None:
    data = sample()
    data["surprise"] = 1
    with pytest.raises(ENGFormatError, match="surprise"):
        EvidenceNecessityGraph.from_dict(data)


def test_newer_major_version_is_refused() -> None:
    data = sample()
    data["schema_version"] = "2.0"
    with pytest.raises(ENGVersionError, match="upgrade ene"):
        EvidenceNecessityGraph.from_dict(data)


def test_json_schema_validates_structure() -> None:
    schema = EvidenceNecessityGraph.json_schema()
    assert schema["title"] == "EvidenceNecessityGraph"
    assert {"claims", "contexts", "verifier", "counts", "stats"} <= set(schema["required"])
    assert "Claim" in schema["$defs"]


def test_published_schema_is_current() -> None:
    from pathlib import Path

    published = Path(__file__).resolve().parents[1] / "docs" / "eng.schema.json"
    assert json.loads(published.read_text()) == EvidenceNecessityGraph.json_schema(), (
        "regenerate it: ene schema > docs/eng.schema.json"
    )
