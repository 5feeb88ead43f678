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

from ene_core import EvidenceNecessityGraph, InvalidInputError, NecessityEngine, prune
from ene_core.cli import main
from ene_core.graph import SCHEMA_VERSION
from ene_core.reports.report import summarize
from ene_core.reports.viewer import render_eng, render_html
from ene_core.verifiers.keyword import KeywordOracle

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
    assert (
        "citation [8] names no chunk" in eng.warnings[0] and "[0] is the first" in eng.warnings[0]
    )


def test_zero_based_marker_names_the_first_chunk() -> None:
    eng = engine(citation_base=0).evaluate("Kestrel Labs was founded by Ingrid Dahl [0].", CHUNKS)
    assert rows(eng) == [([0], True, [], [])]
    assert eng.warnings == []
    # with 1-based numbering the same marker names no chunk
    eng = engine().evaluate("Kestrel Labs was founded by Ingrid Dahl [0].", CHUNKS)
    assert rows(eng) == [([0], False, [0], [1])]
    assert "citation [0] names no chunk" in eng.warnings[0]


def test_marker_pair_before_a_full_stop_mid_answer() -> None:
    # ``[3][2].`` followed by another sentence: two claims, the pair on the first
    answer = "The Kestrel drone weighs 895 grams [3][2]. Kestrel Labs was founded by Ingrid Dahl."
    eng = engine().evaluate(answer, CHUNKS)
    assert [c.text for c in eng.claims] == [
        "The Kestrel drone weighs 895 grams.",
        "Kestrel Labs was founded by Ingrid Dahl.",
    ]
    assert rows(eng) == [([3, 2], True, [], []), ([], False, [], [1])]
    assert (eng.citation_recall, eng.citation_precision) == (0.5, 1.0)


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


def test_new_engs_are_1_3_or_later_and_round_trip() -> None:
    assert tuple(map(int, SCHEMA_VERSION.split("."))) >= (1, 3)
    eng = engine().evaluate(ANSWER, CHUNKS)
    data = json.loads(eng.to_json())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["citation_recall"] == pytest.approx(0.4)
    assert data["claims"][1]["citations_unneeded"] == [1]
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng
    schema = EvidenceNecessityGraph.json_schema()
    props = schema["$defs"]["Claim"]["properties"]
    assert {"citation_supported", "citations_unneeded", "citations_missing"} <= set(props)
    assert {"citation_recall", "citation_precision"} <= set(schema["properties"])
    assert schema["$id"].endswith(f"eng-{SCHEMA_VERSION}.json")


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_stored_engs_before_citations_still_load(version: str) -> None:
    text = (Path(__file__).parent / "data" / f"eng_{version.replace('.', '_')}.json").read_text()
    assert '"citation_recall"' not in text and '"contradicted_by"' in text
    eng = EvidenceNecessityGraph.from_json(text)
    assert eng.schema_version == version
    assert eng.citation_recall is None and eng.citation_precision is None
    assert eng.claims[0].cited == [1] and eng.claims[0].citation_supported is None
    assert eng.claims[0].citations_unneeded == [] == eng.claims[0].citations_missing
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng


# -- pruning ----------------------------------------------------------------------------------
def test_prune_cited_keeps_needed_citations_only() -> None:
    eng = engine().evaluate(ANSWER, CHUNKS)
    result = prune(CHUNKS, eng, keep="cited")
    # [4] (claim 1) and [3][2] (claim 4) are needed; [1] is padding, [3] of claim 3 is wrong,
    # and chunk 1 ([1]), needed by the uncited claim 0, is not a source of the answer
    assert result.kept_indices == [1, 2, 3] and result.dropped_indices == [0]
    assert result.reason == "kept the cited set"
    assert prune(CHUNKS, eng, keep="minimal").kept_indices == [0, 1, 2, 3]  # needs them all


def test_prune_cited_keeps_a_needed_chunk_behind_an_imprecise_citation() -> None:
    # The cited set ([2]) does not entail the claim, so ALCE calls [2] imprecise; the claim
    # still needs chunk [2] (with [3]), so pruning keeps it.
    eng = engine().evaluate("The Kestrel drone weighs 895 grams [2].", CHUNKS)
    assert rows(eng) == [([2], False, [2], [3])]
    assert prune(CHUNKS, eng, keep="cited").kept_indices == [1]


def test_prune_cited_is_fail_safe() -> None:
    plain = engine().evaluate("Bananas are yellow.", CHUNKS)
    assert prune(CHUNKS, plain, keep="cited").kept == CHUNKS
    assert "cites nothing" in prune(CHUNKS, plain, keep="cited").reason
    padding = engine().evaluate("Bananas are yellow [2].", CHUNKS)
    result = prune(CHUNKS, padding, keep="cited")
    assert result.kept == CHUNKS and "no citation is needed" in result.reason
    zero = engine(citation_base=0).evaluate("Bananas are yellow [3].", CHUNKS)
    assert prune(CHUNKS, zero, keep="cited").kept_indices == [3]
    with pytest.raises(InvalidInputError, match="'cited'"):
        prune(CHUNKS, zero, keep="all")  # type: ignore[arg-type]


def test_langchain_pruner_drops_padding_sources() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from ene_integrations.langchain import NecessityPruner

    docs = [Document(page_content=t) for t in CHUNKS]
    e = engine()
    try:
        out = NecessityPruner(e, keep="cited").invoke({"answer": ANSWER, "context": docs})
    finally:
        e.close()
    assert out["context"] == docs[1:]
    assert out["evidence"].citation_precision == pytest.approx(0.5)


# -- where the ENG shows ----------------------------------------------------------------------
def evaluate_cli(*extra: str) -> list[str]:
    argv = ["evaluate", "--oracle", "keyword", *extra]
    for chunk in CHUNKS:
        argv += ["--context", chunk]
    return argv


def test_cli_evaluate_shows_cited_against_needed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*evaluate_cli(), "--answer", ANSWER]) == 0
    out = capsys.readouterr().out
    assert "  [1] uncited; missing [1]\n" in out
    assert "  [2] cites [4][1]: supported; unneeded [1]\n" in out
    assert "  [3] cites [9]: NOT supported; unneeded [9]\n" in out
    assert "  [4] cites [3]: NOT supported; unneeded [3]; missing [2]\n" in out
    assert "  [5] cites [3][2]: supported\n" in out
    assert "citation recall 0.40, precision 0.50," in out
    assert main([*evaluate_cli("--citation-base", "0"), "--answer", shift(ANSWER, -1)]) == 0
    assert "  [2] cites [3][0]: supported; unneeded [0]\n" in capsys.readouterr().out


def test_cli_without_markers_shows_no_citations(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*evaluate_cli(), "--answer", "Bananas are yellow."]) == 0
    assert "citation" not in capsys.readouterr().out


def test_cli_eval_summary_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.jsonl"
    requests = [
        {"answer": ANSWER, "contexts": CHUNKS},
        {"answer": "The Kestrel drone is light [2].", "contexts": CHUNKS},
        {"answer": "Bananas are yellow.", "contexts": CHUNKS},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in requests))
    out = tmp_path / "out.jsonl"
    assert main(["eval", str(src), "-o", str(out), "--oracle", "keyword"]) == 0
    err = capsys.readouterr().err
    # means over the two answers with markers: recall (0.4 + 1) / 2, precision (0.5 + 1) / 2
    assert "citations (2 answers): recall 0.700, precision 0.750" in err
    assert main(["report", str(out)]) == 0
    table = capsys.readouterr().out
    assert re.search(r"citation recall\s+2\s+70\.0%\s+\[", table)
    assert re.search(r"citation precision\s+2\s+75\.0%\s+\[", table)


def test_report_means_per_answer_with_intervals() -> None:
    e = engine()
    engs = e.evaluate_many(
        [
            {"answer": ANSWER, "contexts": CHUNKS},
            {"answer": "The Kestrel drone is light [2].", "contexts": CHUNKS},
            {"answer": "Bananas are yellow.", "contexts": CHUNKS},
        ]
    )
    report = summarize(engs, seed=3)
    recall, precision = report.citations
    assert (recall.name, recall.requests, precision.requests) == ("citation recall", 2, 2)
    assert recall.value == pytest.approx(0.7) and precision.value == pytest.approx(0.75)
    assert recall.low is not None and recall.high is not None
    assert 0.4 <= recall.low <= recall.value <= recall.high <= 1.0
    assert report.to_dict()["citations"][0]["value"] == pytest.approx(0.7)
    # the citation means leave every other interval as it was
    unmarked = [
        x.model_copy(update={"citation_recall": None, "citation_precision": None}) for x in engs
    ]
    plain = summarize(unmarked, seed=3)
    assert plain.citations == [] and plain.rates == report.rates
    assert "citations (ALCE" not in plain.to_table() and "citations (ALCE" in report.to_table()


def test_viewer_shows_cited_against_needed() -> None:
    eng = engine().evaluate(ANSWER, CHUNKS)
    html = render_eng(eng)
    assert "<h3>Citations</h3>" in html
    assert "citation recall 40.0% · precision 50.0%" in html
    row = re.search(r'<tr data-key="c2".*?</tr>', html)
    assert row is not None
    assert 'class="cite unneeded" title="not needed: padding, wrong or no such chunk">[1]' in row[0]
    assert 'class="cite precise" title="precise">[4]' in row[0]
    row = re.search(r'<tr data-key="c4".*?</tr>', html)
    assert row is not None and 'class="cite missing" title="needed but not cited">[2]' in row[0]
    assert "do not support it" in row[0]
    page = render_html([eng], report=summarize([eng]))
    assert "citations (ALCE, mean per answer)" in page
    plain = engine().evaluate("Bananas are yellow.", CHUNKS)
    assert "Citations" not in render_eng(plain) and "citation recall" not in render_eng(plain)


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
