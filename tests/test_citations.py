"""Citation checking (ALCE recall and precision), hand-computed with the keyword oracle.

The keyword oracle entails iff the premise holds every content word of the claim, so every
expected value below follows from reading the chunks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import EvidenceNecessityGraph, InvalidInputError, NecessityEngine
from ene_core.claims import split_claims
from ene_core.graph import SCHEMA_VERSION
from ene_core.testing import KeywordOracle

FIXTURE_1_1 = Path(__file__).parent / "data" / "eng_1_1.json"

CHUNKS = [
    "Kestrel Labs was founded by Ingrid Dahl.",  # [1]
    "The Kestrel drone is light.",  # [2]
    "It weighs 895 grams.",  # [3]
    "Bananas are yellow.",  # [4]
]
ANSWER = (
    "Kestrel Labs was founded by Ingrid Dahl. "  # uncited
    "Bananas are yellow [4, 1]. "  # [1] is padding
    "The tower is tall [9]. "  # no chunk 9
    "The Kestrel drone is light [3]. "  # cites the wrong chunk
    "The Kestrel drone weighs 895 grams [3][2]."  # needs both, cites both
)


def shift(answer: str, by: int) -> str:
    return re.sub(r"\d+(?=[\],])", lambda m: str(int(m.group()) + by), answer)


def engine(**options: Any) -> NecessityEngine:
    return NecessityEngine(KeywordOracle(), **options)


def rows(eng: EvidenceNecessityGraph) -> list[tuple[Any, ...]]:
    return [
        (c.cited, c.citation_supported, c.citations_unneeded, c.citations_missing)
        for c in eng.claims
    ]


EXPECTED = [
    ([], False, [], [1]),
    ([4, 1], True, [1], []),
    ([9], False, [9], []),
    ([3], False, [3], [2]),
    ([3, 2], True, [], []),
]


def test_markers_claim_by_claim() -> None:
    eng = engine().evaluate(ANSWER, CHUNKS)
    assert [c.status for c in eng.claims] == [
        "supported",
        "supported",
        "unsupported",
        "supported",
        "supported",
    ]
    assert rows(eng) == EXPECTED
    assert eng.claims[4].necessary == [1, 2]  # [3][2] is exactly what the claim needs
    # recall: claims 1 and 4 of 5; precision: 3 of 6 citations ([1], [9], [3] are not precise)
    assert eng.citation_recall == pytest.approx(2 / 5)
    assert eng.citation_precision == pytest.approx(3 / 6)
    assert eng.warnings == [
        "citation [9] names no chunk: there are 4 chunks and [1] is the first; "
        "it counts as not supporting"
    ]


def test_zero_based_markers_give_the_same_verdicts() -> None:
    eng = engine(citation_base=0).evaluate(shift(ANSWER, -1), CHUNKS)
    expected = [
        ([m - 1 for m in cited], ok, [m - 1 for m in bad], [m - 1 for m in miss])
        for cited, ok, bad, miss in EXPECTED
    ]
    assert rows(eng) == expected
    assert (eng.citation_recall, eng.citation_precision) == pytest.approx((0.4, 0.5))
    assert "citation [8] names no chunk" in eng.warnings[0] and "[0] is the first" in eng.warnings[0]


def test_zero_based_marker_names_the_first_chunk() -> None:
    eng = engine(citation_base=0).evaluate("Kestrel Labs was founded by Ingrid Dahl [0].", CHUNKS)
    assert rows(eng) == [([0], True, [], [])]
    assert eng.warnings == []
    # with 1-based numbering the same marker names no chunk
    eng = engine().evaluate("Kestrel Labs was founded by Ingrid Dahl [0].", CHUNKS)
    assert rows(eng) == [([0], False, [0], [1])]
    assert "citation [0] names no chunk" in eng.warnings[0]


def test_marker_pair_before_the_full_stop_is_one_claims_citations() -> None:
    # ``[3][2].`` in the middle of an answer is issue 15's claim-splitting bug; here the pair
    # ends the answer, and the split is checked on its own.
    segments = split_claims("Kestrel Labs was founded by Ingrid Dahl. It weighs 895 grams [3][2].")
    assert [(s.text, s.cited) for s in segments] == [
        ("Kestrel Labs was founded by Ingrid Dahl.", ()),
        ("It weighs 895 grams.", (3, 2)),
    ]


def test_a_cited_chunk_that_only_helps_together_is_precise() -> None:
    # Neither chunk entails alone, and neither can go: both citations are precise.
    eng = engine().evaluate("The Kestrel drone weighs 895 grams [3][2].", CHUNKS)
    assert rows(eng) == [([3, 2], True, [], [])]
    assert (eng.citation_recall, eng.citation_precision) == (1.0, 1.0)


def test_redundant_citations_are_both_precise() -> None:
    # Each chunk entails the claim alone: ALCE keeps both (condition A).
    chunks = ["Bananas are yellow.", "Bananas are yellow when ripe."]
    eng = engine().evaluate("Bananas are yellow [1][2].", chunks)
    assert rows(eng) == [([1, 2], True, [], [])]
    assert eng.claims[0].classification == "robust"


def test_answer_without_markers_has_no_citation_scores() -> None:
    eng = engine().evaluate("Bananas are yellow. The Kestrel drone is light.", CHUNKS)
    assert eng.citation_recall is None and eng.citation_precision is None
    assert [c.citation_supported for c in eng.claims] == [None, None]
    assert all(c.citations_missing == [] for c in eng.claims)


def test_non_claims_are_not_scored() -> None:
    eng = engine().evaluate("Is it light [2]? The Kestrel drone is light [2].", CHUNKS)
    assert [c.kind for c in eng.claims] == ["question", "claim"]
    assert rows(eng) == [([2], None, [], []), ([2], True, [], [])]
    assert (eng.citation_recall, eng.citation_precision) == (1.0, 1.0)


def test_markers_only_on_a_sources_line_score_zero() -> None:
    # ALCE: claims without a citation have recall 0; no citation on a claim: precision 0.
    eng = engine().evaluate("Bananas are yellow.\nSources: [4]", CHUNKS)
    assert eng.claims[0].citation_supported is False and eng.claims[0].citations_missing == [4]
    assert (eng.citation_recall, eng.citation_precision) == (0.0, 0.0)


def test_extra_checks_are_at_most_one_plus_two_per_citation() -> None:
    on = engine().evaluate(ANSWER, CHUNKS)
    off = engine(check_citations=False).evaluate(ANSWER, CHUNKS)
    assert off.citation_recall is None and off.claims[1].citation_supported is None
    assert off.claims[1].citations_unneeded == [] and off.warnings == []
    strip = {"citation_supported", "citations_unneeded", "citations_missing"}
    for a, b in zip(on.claims, off.claims, strict=True):
        assert a.model_dump(exclude=strip) == b.model_dump(exclude=strip)
    assert on.contexts == off.contexts
    assert on.minimal_sufficient_set == off.minimal_sufficient_set
    # [4, 1]: set + 2 x 2; [9]: nothing to check; [3]: the set only; [3][2]: set + 2 x 2
    assert on.stats.oracle_checks - off.stats.oracle_checks == 5 + 0 + 1 + 5
    bound = sum(1 + 2 * len(c.cited) for c in on.claims if c.cited)
    assert on.stats.forward_pairs - off.stats.forward_pairs <= bound


def test_cited_set_equal_to_all_chunks_reuses_the_baseline_score() -> None:
    chunks = ["The Kestrel drone is light.", "It weighs 895 grams."]
    on = engine().evaluate("The Kestrel drone weighs 895 grams [1][2].", chunks)
    off = engine(check_citations=False).evaluate("The Kestrel drone weighs 895 grams.", chunks)
    # the cited set is the baseline premise, each alone / without is a leave-one-out premise
    assert on.stats.forward_pairs == off.stats.forward_pairs
    assert on.stats.oracle_checks == off.stats.oracle_checks + 5


def test_evaluate_many_batches_citation_checks_with_the_rest() -> None:
    oracle = KeywordOracle()
    eng_engine = NecessityEngine(oracle)
    engs = eng_engine.evaluate_many(
        [{"answer": ANSWER, "contexts": CHUNKS}, {"answer": shift(ANSWER, 0), "contexts": CHUNKS}]
    )
    assert rows(engs[0]) == rows(engs[1]) == EXPECTED
    # one model call per round, whatever the number of requests
    single = KeywordOracle()
    NecessityEngine(single).evaluate(ANSWER, CHUNKS)
    assert oracle.calls == single.calls


def test_citation_base_is_validated() -> None:
    with pytest.raises(InvalidInputError, match="citation_base must be 0 or 1"):
        engine(citation_base=2)
    e = engine()
    e.citation_base = 5  # set later: refused per request
    with pytest.raises(InvalidInputError):
        e.evaluate(ANSWER, CHUNKS)


def test_new_engs_are_1_3_and_round_trip() -> None:
    assert SCHEMA_VERSION == "1.3"
    eng = engine().evaluate(ANSWER, CHUNKS)
    data = json.loads(eng.to_json())
    assert data["schema_version"] == "1.3"
    assert data["citation_recall"] == pytest.approx(0.4)
    assert data["claims"][1]["citations_unneeded"] == [1]
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng
    schema = EvidenceNecessityGraph.json_schema()
    props = schema["$defs"]["Claim"]["properties"]
    assert {"citation_supported", "citations_unneeded", "citations_missing"} <= set(props)
    assert {"citation_recall", "citation_precision"} <= set(schema["properties"])
    assert schema["$id"].endswith("eng-1.3.json")


def test_stored_1_1_eng_still_loads() -> None:
    text = FIXTURE_1_1.read_text()
    assert '"citation_recall"' not in text and '"contradicted_by"' in text
    eng = EvidenceNecessityGraph.from_json(text)
    assert eng.schema_version == "1.1"
    assert eng.citation_recall is None and eng.citation_precision is None
    assert eng.claims[0].cited == [1] and eng.claims[0].citation_supported is None
    assert eng.claims[0].citations_unneeded == [] == eng.claims[0].citations_missing
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng


# -- properties -------------------------------------------------------------------------------
WORDS = ["alpha", "beta", "gamma", "delta", "tower", "paris", "3", "7"]
sentence = st.lists(st.sampled_from(WORDS), min_size=2, max_size=4).map(" ".join)


@st.composite
def cited_requests(draw: st.DrawFn) -> tuple[list[str], list[str], list[list[int]], list[int]]:
    chunks = [
        " ".join(s.capitalize() + "." for s in draw(st.lists(sentence, min_size=1, max_size=2)))
        for _ in range(draw(st.integers(1, 5)))
    ]
    claims = draw(st.lists(sentence.map(lambda s: s.capitalize()), min_size=1, max_size=3))
    markers = [
        draw(st.lists(st.integers(1, len(chunks) + 1), max_size=3, unique=True)) for _ in claims
    ]
    perm = list(draw(st.permutations(range(len(chunks)))))
    return chunks, claims, markers, perm


def write(claims: list[str], markers: list[list[int]], base: int = 1) -> str:
    """One claim per line (a line break is a hard boundary), markers as ``[a, b]``."""
    lines = []
    for text, cited in zip(claims, markers, strict=True):
        tail = f" [{', '.join(str(m - 1 + base) for m in cited)}]" if cited else ""
        lines.append(f"{text}{tail}.")
    return "\n".join(lines)


@settings(max_examples=120, deadline=None)
@given(request=cited_requests(), base=st.sampled_from([0, 1]))
def test_scores_are_rates_and_permutation_free(
    request: tuple[list[str], list[str], list[list[int]], list[int]], base: int
) -> None:
    chunks, claims, markers, perm = request
    e = engine(citation_base=base)
    eng = e.evaluate(write(claims, markers, base), chunks)
    has_markers = any(markers)
    for value in (eng.citation_recall, eng.citation_precision):
        assert (value is None) == (not has_markers)
        assert value is None or 0.0 <= value <= 1.0
    # chunk ``perm[j]`` moves to position ``j``: marker m (1-based) becomes new[m - 1] + 1
    new = {old: j for j, old in enumerate(perm)}

    def renumber(m: int) -> int:
        return new[m - 1] + 1 if m - 1 in new else m  # markers past the end stay as they are

    moved = e.evaluate(
        write(claims, [[renumber(m) for m in ms] for ms in markers], base),
        [chunks[i] for i in perm],
    )
    assert (moved.citation_recall, moved.citation_precision) == (
        eng.citation_recall,
        eng.citation_precision,
    )
    for a, b in zip(eng.claims, moved.claims, strict=True):
        assert b.citation_supported == a.citation_supported

        def mapped(values: list[int]) -> list[int]:
            return [renumber(m - base + 1) + base - 1 for m in values]

        assert b.cited == mapped(a.cited)
        assert b.citations_unneeded == mapped(a.citations_unneeded)
        assert sorted(b.citations_missing) == sorted(mapped(a.citations_missing))
    assert moved.warnings == eng.warnings
