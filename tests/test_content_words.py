"""The light stemmer behind ``content_words``: ranking, culprit shares, scope and value lists all
compare words through it, so a word's inflections must meet and unrelated words must not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ene_core.text.words import content_words, word_share


@pytest.mark.parametrize(
    "forms",
    [
        "rate rates",
        "fee fees",
        "day days",
        "use uses",
        "plan plans",
        "phone phones",
        "minute minutes",
        "price prices",
        "vaccine vaccines",
        "employee employees",
        "change changes changed changing",
        "class classes",
        "box boxes",
        "church churches",
        "study studies studied",
        "charge charges charged charging",
    ],
)
def test_a_words_inflections_stem_alike(forms: str) -> None:
    assert len(set(content_words(forms))) == 1


@pytest.mark.parametrize(
    "word", ["status", "analysis", "bonus", "class", "glass", "news", "bus", "gas"]
)
def test_words_ending_in_s_that_are_not_plurals_keep_a_stem_of_their_own(word: str) -> None:
    (stem,) = content_words(word)
    assert len(stem) >= len(word) - 1
    assert stem != content_words("note")[0]


def test_note_stays_apart_from_not_and_rate_from_rat() -> None:
    assert content_words("note rate") == ["note", "rate"]


def test_a_plural_in_the_evidence_shares_the_claims_words() -> None:
    claim = "The rate includes phone support."
    assert word_share(claim, ["All rates include phone support."]) == 1.0


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz '-", max_size=40))
def test_content_words_are_lower_case_and_never_empty_strings(text: str) -> None:
    words = content_words(text)
    assert all(w and w == w.lower() for w in words)
