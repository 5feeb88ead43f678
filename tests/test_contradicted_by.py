"""``Claim.contradicted_by`` (ENG 1.1; 1.0 still loads) and how the CLI and viewer show it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ene_core import EvidenceNecessityGraph, NecessityEngine
from ene_core.cli import main, render
from ene_core.engine.premise import PremisePacker
from ene_core.graph import SCHEMA_VERSION
from ene_core.reports.viewer import render_eng, render_html
from ene_core.verifiers.keyword import KeywordOracle

FIXTURE_1_0 = Path(__file__).parent / "data" / "eng_1_0.json"


def ctx(*texts: str) -> list[dict[str, str]]:
    return [{"id": f"c{i}", "text": t} for i, t in enumerate(texts)]


def test_single_chunk_contradiction_is_named(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate(
        "The tower is 500 metres tall. Bananas are yellow.",
        ctx(
            "Paris is the capital of France.",
            "The tower is 330 metres tall.",
            "Bananas are yellow.",
        ),
    )
    tower, bananas = eng.claims
    assert tower.status == "contradicted" and tower.contradicted_by == [1]
    assert tower.necessary == []
    assert bananas.status == "supported" and bananas.contradicted_by == []


def test_every_chunk_that_contradicts_alone_is_named(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate(
        "The tower is 500 metres tall.",
        ctx(
            "The tower is 330 metres tall.", "Bananas are yellow.", "The tower is 324 metres tall."
        ),
    )
    assert eng.claims[0].contradicted_by == [0, 2]


@pytest.mark.parametrize("check_amounts", [True, False])
def test_a_contradiction_without_a_culprit_is_unsupported(check_amounts: bool) -> None:
    # Neither chunk contradicts alone (each misses a word); only the packed premise does.
    engine = NecessityEngine(KeywordOracle(), check_amounts=check_amounts)
    eng = engine.evaluate("Alpha is beta 7.", ctx("Alpha has 5.", "Beta.", "Gamma."))
    claim = eng.claims[0]
    assert claim.p_contra is not None and claim.p_contra > 0.5  # the packed premise "contradicts"
    assert claim.status == "unsupported" and claim.contradicted_by == []
    assert claim.unstated_amounts == (["7"] if check_amounts else [])
    packer = PremisePacker(top_k=4)
    pairs = NecessityEngine(KeywordOracle(), check_amounts=check_amounts, packer=packer)
    eng = pairs.evaluate("Alpha is beta 7.", ctx("Alpha 5.", "Alpha 6.", "Beta.", "Beta gamma."))
    assert eng.claims[0].status == "unsupported" and eng.claims[0].contradicted_by == []


def test_blame_costs_at_most_top_k_checks_per_contradicted_claim() -> None:
    contexts = ctx(
        *[f"Filler number {i} about towers." for i in range(8)], "The tower is 330 metres tall."
    )
    plain = NecessityEngine(KeywordOracle()).evaluate("Bananas are yellow.", contexts)
    contra = NecessityEngine(KeywordOracle()).evaluate("The tower is 500 metres tall.", contexts)
    assert contra.claims[0].contradicted_by == [8]
    top_k = PremisePacker().top_k
    # baseline only (+ at most top_k single-chunk checks); no leave-one-out over all 9 chunks
    assert plain.stats.oracle_checks == 1
    assert 1 < contra.stats.oracle_checks <= 1 + top_k


def test_stored_1_0_eng_still_loads() -> None:
    text = FIXTURE_1_0.read_text()
    assert '"contradicted_by"' not in text  # written before the field existed
    eng = EvidenceNecessityGraph.from_json(text)
    assert eng.schema_version == "1.0"
    contradicted = [c for c in eng.claims if c.status == "contradicted"]
    assert len(contradicted) == 1 and contradicted[0].contradicted_by == []
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng
    assert "p(contra)=" in render(eng)


def test_new_engs_have_contradicted_by_and_round_trip(keyword_engine: NecessityEngine) -> None:
    assert tuple(map(int, SCHEMA_VERSION.split("."))) >= (1, 1)
    eng = keyword_engine.evaluate(
        "The tower is 500 metres tall.", ["The tower is 330 metres tall."]
    )
    data = json.loads(eng.to_json())
    assert data["schema_version"] == SCHEMA_VERSION and data["claims"][0]["contradicted_by"] == [0]
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng
    schema = EvidenceNecessityGraph.json_schema()
    assert "contradicted_by" in schema["$defs"]["Claim"]["properties"]
    assert schema["$id"].endswith(f"eng-{SCHEMA_VERSION}.json")


def test_cli_labels_the_probability_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "evaluate",
            "--oracle",
            "keyword",
            "--answer",
            "The tower is 330 metres tall. The tower is 500 metres tall.",
            "--context",
            "Bananas are yellow.",
            "--context",
            "The tower is 330 metres tall.",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    supported, contradicted = out.splitlines()[1:3]
    # claims and chunks count from 1, like [n] citation markers: chunk #2 is contexts[1]
    assert supported.startswith("  [1] fragile") and "p(entail)=0.95" in supported
    assert "needs #2" in supported
    # the keyword oracle's contradiction probability is 0.90 (its entailment is 0.03)
    assert contradicted.startswith("  [2] contradicted") and "p(contra)=0.90" in contradicted
    assert "by    #2" in contradicted and "p(entail)" not in contradicted
    assert "  #1 UNUSED" in out and "  #2 used" in out


def test_viewer_titles_name_the_contradicting_chunk(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate(
        "The tower is 500 metres tall.", ["x y.", "The tower is 330 metres tall."]
    )
    html = render_html([eng])
    assert "claim 1: contradicted, p(contra)=0.90, by #2" in html


def test_viewer_draws_contradiction_edges(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate(
        "Paris is the capital of France. The tower is 500 metres tall.",
        ["Paris is the capital of France.", "Bananas are yellow.", "The tower is 330 metres tall."],
    )
    html = render_eng(eng)
    assert '<path class="contra" data-edge="c2 d3"' in html  # keys count from 1 too
    assert html.count('class="contra"') == 1  # the necessity edge c1-d1 stays plain
    assert '<path data-edge="c1 d1"' in html
    assert "claim 2 is contradicted by chunk #3" in html
    assert 'data-key="c2" data-links="d3"' in html  # hovering the claim lights the chunk
    assert 'data-key="d3" data-links="c2"' in html
    assert "contradicts claim 2" in html
