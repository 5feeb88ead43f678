"""Fuzz and edge cases: odd input gets a typed error or a recorded verdict, never a crash."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ene_core import EneError, EvidenceNecessityGraph, NecessityEngine
from ene_core.text.normalise import clean_text
from ene_core.verifiers.keyword import KeywordOracle

ENGINE = NecessityEngine(KeywordOracle())
unicode_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=200)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=unicode_text, contexts=st.lists(unicode_text, max_size=4))
def test_random_unicode_never_crashes(answer: str, contexts: list[str]) -> None:
    eng = ENGINE.evaluate(answer, contexts)
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng
    assert len(eng.contexts) == len(contexts)
    assert eng.answer == clean_text(answer)[0]  # spans index the normalised answer
    for claim in eng.claims:
        assert eng.answer[claim.span[0] : claim.span[1]].strip()
        assert claim.status is None or claim.checkable


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.integers(), max_size=2)))
def test_wrong_types_raise_typed_errors(value: object) -> None:
    with pytest.raises(EneError):
        ENGINE.evaluate(value, ["ctx"])  # type: ignore[arg-type]
    if value is not None and not isinstance(value, list):
        with pytest.raises(EneError):
            ENGINE.evaluate("Some claim here.", [value])


def test_huge_chunk_is_windowed() -> None:
    words = [f"word{i % 997}" for i in range(10_000)]
    huge = " ".join(words[:5000]) + " Paris is the capital of France. " + " ".join(words[5000:])
    eng = ENGINE.evaluate("Paris is the capital of France.", [huge, "Unrelated text."])
    assert eng.claims[0].status == "supported"
    assert eng.claims[0].necessary == [0]
    assert eng.contexts[0].tokens >= 10_000


def test_huge_chunk_without_punctuation() -> None:
    blob = " ".join(["lorem"] * 10_000)
    eng = ENGINE.evaluate("Lorem is lorem lorem.", [blob])
    assert eng.claims[0].status == "supported"


def test_duplicate_chunks_are_redundant_not_necessary() -> None:
    chunk = "Paris is the capital of France."
    eng = ENGINE.evaluate("Paris is the capital of France.", [chunk, chunk, "Other text."])
    claim = eng.claims[0]
    assert claim.classification == "robust" and claim.necessary == []
    assert len(eng.minimal_sufficient_set) == 1
    assert (
        any("duplicate context ids" in w for w in eng.warnings) is False
    )  # ids differ by position


def test_duplicate_ids_are_warned() -> None:
    eng = ENGINE.evaluate("x y z.", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    assert any("duplicate context ids" in w for w in eng.warnings)


@pytest.mark.parametrize(
    "answer",
    [
        "\u200b\u200b",
        "Ünïcödé façade. 東京は首都です。",
        "🙂🙂🙂",
        "a" * 50_000,
    ],
)
def test_odd_answers(answer: str) -> None:
    eng = ENGINE.evaluate(answer, ["Ünïcödé façade is nice.", "東京は首都です。"])
    assert eng.answer == answer
