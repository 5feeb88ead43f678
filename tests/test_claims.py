import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core.claims import split_claims, split_sentences


def texts(answer: str) -> list[str]:
    return [s.text for s in split_claims(answer) if s.checkable]


def test_abbreviations_decimals_initials_stay_in_one_claim() -> None:
    answer = (
        "Dr. Smith moved to the U.S. in 1990. The rate rose to 3.5 percent. "
        "J. R. R. Tolkien wrote The Hobbit. St. Louis is on the Mississippi."
    )
    assert texts(answer) == [
        "Dr. Smith moved to the U.S. in 1990.",
        "The rate rose to 3.5 percent.",
        "J. R. R. Tolkien wrote The Hobbit.",
        "St. Louis is on the Mississippi.",
    ]


def test_citations_are_stripped_and_kept() -> None:
    segments = split_claims("Paris is the capital [1]. It has museums [2, 3]. Tall tower. [4]")
    assert [s.text for s in segments] == ["Paris is the capital.", "It has museums.", "Tall tower."]
    assert [s.cited for s in segments] == [(1,), (2, 3), (4,)]


def test_citation_ranges_expand() -> None:
    (segment,) = split_claims("Rain fell for days [2-4].")
    assert segment.cited == (2, 3, 4)


def test_lists_line_breaks_headings_and_non_claims() -> None:
    answer = (
        "# Summary\n"
        "Here is what I found:\n"
        "- The tower is 330 metres tall.\n"
        "2) It opened in 1889\n"
        "Is it the tallest?\n"
        "The documents do not say.\n"
        "Sources: [1] wiki"
    )
    segments = split_claims(answer)
    kinds = [(s.kind, s.text) for s in segments]
    assert kinds == [
        ("heading", "# Summary"),
        ("heading", "Here is what I found:"),
        ("claim", "The tower is 330 metres tall."),
        ("claim", "It opened in 1889"),
        ("question", "Is it the tallest?"),
        ("refusal", "The documents do not say."),
        ("heading", "Sources: wiki"),
    ]


def test_empty_and_blank_answers_have_no_segments() -> None:
    assert split_claims("") == []
    assert split_claims(" \n\t ") == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_spans_tile_the_answer(answer: str) -> None:
    segments = split_claims(answer)
    if not answer.strip():
        assert segments == []
        return
    assert segments[0].start == 0
    assert segments[-1].end == len(answer)
    for a, b in itertools.pairwise(segments):
        assert a.end == b.start
    assert all(answer[s.start : s.end].strip() for s in segments)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["The cat sat.", "Dr. Who left [1].", "- item one", "3.5 is a number.", "Why?", "\n"]
        ),
        max_size=12,
    ).map(" ".join)
)
def test_spans_tile_rag_like_answers(answer: str) -> None:
    segments = split_claims(answer)
    assert "".join(answer[s.start : s.end] for s in segments) == (answer if answer.strip() else "")


def test_sentence_spans_cover_context_text() -> None:
    text = "First sentence. Second one!\nThird line"
    spans = split_sentences(text)
    assert "".join(text[a:b] for a, b in spans) == text
    assert len(spans) == 3


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        ("It runs Python 3.12. Python is fast.", ["It runs Python 3.12.", "Python is fast."]),
        (
            "Water boils at 100 °C. Ice melts at 0 °C.",
            ["Water boils at 100 °C.", "Ice melts at 0 °C."],
        ),
        ("Version 1.2.3. Next came 2.0.", ["Version 1.2.3.", "Next came 2.0."]),
        ("It is 3.5 m. wide", ["It is 3.5 m. wide"]),  # no capital after the stop: one claim
        ("Pi is about 3.14 and rising.", ["Pi is about 3.14 and rising."]),
    ],
)
def test_a_sentence_ending_in_a_decimal_or_temperature_is_split(
    answer: str, claims: list[str]
) -> None:
    assert [s.text for s in split_claims(answer) if s.checkable] == claims
