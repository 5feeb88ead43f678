"""Aggregate report: numbers against a hand-computed case, bootstrap determinism, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ene_core import EvidenceNecessityGraph, NecessityEngine
from ene_core.cli import main
from ene_core.reports.report import percentile, read_results, summarize
from ene_core.verifiers.keyword import KeywordOracle

WIKI, BLOG = {"source": "wiki"}, {"source": "blog"}

# KeywordOracle: entailed iff every content word is present; contradicted iff only numbers differ.
REQUESTS = [
    {  # A: claim 1 fragile (needs chunk 0), claim 2 unsupported; chunk 1 unused
        "id": "A",
        "answer": "Paris is in France. Dogs fly.",
        "contexts": [
            {"text": "Paris is in France.", "metadata": WIKI},  # 4 tokens
            {"text": "Cats purr.", "metadata": BLOG},  # 2 tokens
        ],
    },
    {  # B: claim 1 robust (two copies), claim 2 fragile (chunk 2); minimal set {0, 2}
        "id": "B",
        "answer": "Owls hunt at night. The tower is 300 metres tall.",
        "contexts": [
            {"text": "Owls hunt at night.", "metadata": WIKI},  # 4
            {"text": "Owls hunt at night.", "metadata": WIKI},  # 4
            {"text": "The tower is 300 metres tall.", "metadata": WIKI},  # 6
        ],
    },
    {  # C: the only claim is contradicted: nothing supported, pruning keeps everything
        "id": "C",
        "answer": "The tower is 200 metres tall.",
        "contexts": [
            {"text": "The tower is 300 metres tall.", "metadata": WIKI},  # 6
            {"text": "Bread is baked.", "metadata": BLOG},  # 3
        ],
    },
]


@pytest.fixture(scope="module")
def engs() -> list[EvidenceNecessityGraph]:
    engine = NecessityEngine(KeywordOracle())
    try:
        return engine.evaluate_many(REQUESTS)
    finally:
        engine.close()


def test_fixture_verdicts_are_what_the_hand_computation_assumes(engs) -> None:
    a, b, c = engs
    assert [x.classification for x in a.claims] == ["fragile", "unsupported"]
    assert [x.classification for x in b.claims] == ["robust", "fragile"]
    assert [x.classification for x in c.claims] == ["contradicted"]
    assert [x.used for x in a.contexts] == [True, False]
    assert [x.used for x in b.contexts] == [True, False, True]
    assert [x.used for x in c.contexts] == [False, False]


def test_rates_match_hand_computation(engs) -> None:
    report = summarize(engs, failed=1)
    got = {r.name: (r.numerator, r.denominator) for r in report.rates}
    assert got == {
        "unsupported": (1, 5),
        "contradicted": (1, 5),
        "fragile": (2, 5),
        "joint": (0, 5),
        "robust": (1, 5),
        "chunks unused": (4, 7),
        "chunks necessary": (2, 7),
        # A saves 2 and B 4 of 6 + 14 + 9 tokens; C has no supported claim, so prune keeps all
        "tokens pruning saves": (6, 29),
    }
    assert report.rate("fragile").value == pytest.approx(0.4)
    assert (report.requests, report.failed, report.claims, report.contexts, report.tokens) == (
        3,
        1,
        5,
        7,
        29,
    )
    assert report.necessary_per_claim == {"0": 1, "1": 2, "2": 0, "3": 0, "4+": 0}
    assert [(r.name, r.numerator, r.denominator) for r in report.by_rank] == [
        ("rank 1", 1, 3),
        ("rank 2", 3, 3),
        ("rank 3", 0, 1),
    ]


def test_metadata_breakdown_flags_a_source_that_is_never_used(engs) -> None:
    groups = {g.value: g for g in summarize(engs).breakdowns["source"]}
    wiki, blog = groups["wiki"], groups["blog"]
    assert (wiki.chunks, wiki.requests, wiki.necessary, wiki.tokens) == (5, 3, 2, 24)
    assert (wiki.used.numerator, wiki.used.denominator) == (3, 5) and not wiki.never_used
    assert (blog.chunks, blog.requests, blog.used.numerator) == (2, 2, 0) and blog.never_used


def test_most_fragile_and_slowest(engs) -> None:
    report = summarize(engs, top=2)
    assert [r.label for r in report.most_fragile] == ["A", "B"]  # 1 fragile of 2 each: input order
    assert len(report.slowest) == 2
    assert report.slowest[0].compute_ms >= report.slowest[1].compute_ms
    assert max(e.stats.compute_ms for e in engs) == report.slowest[0].compute_ms


def test_unsupported_and_contradicted_are_separate_columns(engs) -> None:
    rows = {r.label: r for r in summarize(engs, top=3).slowest}
    assert (rows["A"].unsupported, rows["A"].contradicted) == (1, 0)
    assert (rows["C"].unsupported, rows["C"].contradicted) == (0, 1)
    table = summarize(engs, top=3).to_table()
    assert "compute ms" in table and "unsupported  contradicted" in table


def _eng_with_times(eng: EvidenceNecessityGraph, **stats: float | None) -> EvidenceNecessityGraph:
    return eng.model_copy(update={"stats": eng.stats.model_copy(update=stats)})


def test_slowest_ranks_each_request_by_its_own_time_not_the_batch_time(engs) -> None:
    """In one batch every request's wall time is the batch's; compute_ms tells them apart."""
    timed = [
        _eng_with_times(e, duration_ms=900.0, compute_ms=ms)
        for e, ms in zip(engs, (100.0, 700.0, 100.0), strict=True)
    ]
    report = summarize(timed, top=1)
    assert [r.label for r in report.slowest] == ["B"] and report.slowest[0].compute_ms == 700.0
    # an ENG from before schema 1.2 has no compute_ms: its wall time stands in
    old = [
        _eng_with_times(e, duration_ms=ms, compute_ms=None)
        for e, ms in zip(engs, (5.0, 9.0, 1.0), strict=True)
    ]
    assert [r.label for r in summarize(old, top=1).slowest] == ["B"]


def test_bootstrap_interval_hand_computed_for_two_requests(engs) -> None:
    # unsupported: A = 1/2, B = 0/2. Resampling two requests gives AA (1/2), AB or BA (1/4) or
    # BB (0); with 1000 resamples both extremes occur far more than 2.5% of the time.
    report = summarize(engs[:2], resamples=1000, seed=0)
    rate = report.rate("unsupported")
    assert (rate.low, rate.high) == (0.0, 0.5)
    robust = report.rate("robust")  # A 0/2, B 1/2: the mirror image
    assert (robust.low, robust.high) == (0.0, 0.5)


def test_bootstrap_is_seeded_and_deterministic(engs) -> None:
    many = engs * 4  # 12 requests: intervals that vary with the resamples
    first, again = summarize(many, seed=7), summarize(many, seed=7)
    assert first.to_dict() == again.to_dict()
    other = summarize(many, seed=8)
    assert [(r.low, r.high) for r in first.rates] != [(r.low, r.high) for r in other.rates]
    for rate in first.rates:
        assert rate.low is not None and rate.high is not None
        assert rate.low <= rate.value <= rate.high


def test_single_request_interval_collapses_to_the_estimate(engs) -> None:
    rate = summarize(engs[:1]).rate("unsupported")
    assert rate.value == 0.5 and (rate.low, rate.high) == (0.5, 0.5)


def test_empty_input_has_no_intervals() -> None:
    report = summarize([])
    assert report.requests == 0 and all(r.value is None and r.low is None for r in report.rates)
    assert "0 requests" in report.to_table()


def test_percentile_interpolates() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([float(i) for i in range(101)], 0.025) == pytest.approx(2.5)
    assert percentile([3.0], 0.975) == 3.0


def test_table_lists_rates_intervals_and_flags(engs) -> None:
    table = summarize(engs, failed=1).to_table()
    assert "3 requests (1 failed)" in table
    assert "unsupported" in table and "1/5" in table and "20.0%" in table
    assert "NEVER USED" in table and "most fragile requests" in table


def test_read_results_counts_error_records_and_reads_pretty_json(tmp_path: Path, engs) -> None:
    out = tmp_path / "out.jsonl"
    lines = [engs[0].to_json(), json.dumps({"line": 2, "error": "line 2: bad"}), engs[1].to_json()]
    out.write_text("\n".join(lines) + "\n\n")
    got, failed = read_results(out)
    assert [e.id for e in got] == ["A", "B"] and failed == 1
    single = tmp_path / "one.json"
    single.write_text(engs[2].to_json(indent=2))
    assert [e.id for e in read_results(single)[0]] == ["C"]


def test_report_cli_is_identical_across_hash_seeds(tmp_path: Path, engs) -> None:
    """Bootstrap determinism across processes (no dependence on set or dict hashing)."""
    out = tmp_path / "out.jsonl"
    out.write_text("".join(e.to_json() + "\n" for e in engs * 3))
    runs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        cmd = [sys.executable, "-m", "ene_core.cli", "report", str(out), "--json", "--seed", "5"]
        runs.append(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
    assert runs[0] == runs[1]
    assert json.loads(runs[0])["rates"][0]["name"] == "unsupported"


def test_eval_with_report_writes_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in REQUESTS))
    out, html = tmp_path / "out.jsonl", tmp_path / "report.html"
    assert (
        main(["eval", str(src), "-o", str(out), "--oracle", "keyword", "--report", str(html)]) == 0
    )
    page = html.read_text()
    assert "Aggregate report" in page and page.count("data-eng>") == 3
    assert "<th>unsupported</th><th>contradicted</th>" in page
    assert main(["report", str(out)]) == 0
    assert "tokens pruning saves" in capsys.readouterr().out


def test_intervals_do_not_depend_on_numpy(engs, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    many = engs * 5
    with_numpy = summarize(many, seed=2).to_dict()
    monkeypatch.setattr("ene_core.reports.report._numpy", lambda: None)
    assert summarize(many, seed=2).to_dict() == with_numpy


def test_eval_report_with_the_default_verifier(tmp_path: Path) -> None:
    model = Path(__file__).resolve().parents[1] / "ene_core" / "models" / "ene-nli-mini"
    if not (model / "config.json").is_file():
        pytest.skip("the default verifier (ene_core/models/ene-nli-mini) is not in this checkout")
    pytest.importorskip("torch")
    src = tmp_path / "in.jsonl"
    request = {
        "id": "paris",
        "answer": "Paris is the capital of France.",
        "contexts": [
            {"text": "Paris is the capital and largest city of France.", "metadata": WIKI},
            {"text": "Bread is baked in ovens.", "metadata": BLOG},
        ],
    }
    src.write_text(json.dumps(request) + "\n")
    out, html = tmp_path / "out.jsonl", tmp_path / "report.html"
    assert main(["eval", str(src), "-o", str(out), "--report", str(html), "--device", "cpu"]) == 0
    (eng,), failed = read_results(out)
    assert failed == 0 and eng.verifier.model == "ene-nli-mini"
    assert eng.claims[0].status == "supported" and eng.contexts[0].used
    assert not eng.contexts[1].used
    page = html.read_text()
    assert "ene-nli-mini" in page and "Aggregate report" in page


def test_tokens_each_keep_policy_would_save(engs) -> None:
    from ene_core.reports.viewer import render_html

    report = summarize(engs)
    got = {r.name: (r.numerator, r.denominator) for r in report.pruning}
    # B: "necessary" keeps only chunk 2 (claim 1 is robust), so it also drops both owl chunks
    assert got == {"safe": (6, 29), "minimal": (6, 29), "necessary": (10, 29), "cited": (0, 29)}
    assert report.rate("tokens pruning saves").numerator == got["safe"][0]
    table = report.to_table()
    rows = {line.split("  ")[0]: line.split()[-4:] for line in table.splitlines()}
    assert rows['keep="safe" (default)'] == ["6/29", "20.7%", "[0.0,", "33.3]"]
    assert rows['keep="necessary"'][0] == "10/29"
    page = render_html(engs, report=report)
    assert "tokens pruning would save" in page
    assert "tokens pruning would save: safe 4 · minimal 4 · necessary 8 · cited 0" in page
