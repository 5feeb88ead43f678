"""HTML viewer: escaping of untrusted text, self-containment, structure, and the CLI."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ene_core import EvidenceNecessityGraph, NecessityEngine
from ene_core.cli import main
from ene_core.reports.report import summarize
from ene_core.reports.viewer import JS, render_eng, render_html
from ene_core.verifiers.keyword import KeywordOracle

PAYLOAD = '<script>window.pwned=1</script><img src=x onerror="alert(\'x\')"> & "quoted"'


class Tags(HTMLParser):
    """Every start tag with its attributes, and text per enclosing tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.text: list[tuple[tuple[str, ...], str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "br", "img", "input", "link", "circle", "rect", "path", "line"):
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.text.append((tuple(self.stack), data))


def parse(page: str) -> Tags:
    parser = Tags()
    parser.feed(page)
    return parser


@pytest.fixture(scope="module")
def engine() -> NecessityEngine:
    engine = NecessityEngine(KeywordOracle())
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def eng(engine: NecessityEngine) -> EvidenceNecessityGraph:
    return engine.evaluate(
        "Paris is in France. The tower is 300 metres tall. Dogs fly. Is it <u>nice</u>?",
        [
            {"id": "p1", "text": "Paris is in France.", "metadata": {"source": "wiki"}},
            {"id": "t1", "text": "The tower is 300 metres tall."},
            {"id": 'x"><script>alert(1)</script>', "text": PAYLOAD, "metadata": {PAYLOAD: PAYLOAD}},
        ],
        question=f"What about {PAYLOAD}?",
        id="req</title><script>alert(2)</script>",
    )


def test_untrusted_text_never_becomes_markup(eng: EvidenceNecessityGraph) -> None:
    page = render_html([eng])
    tags = parse(page)
    assert [t for t, _ in tags.tags].count("script") == 1  # only the page's own script
    assert not any(t == "img" for t, _ in tags.tags)
    assert not any(t == "u" for t, _ in tags.tags)  # the answer's <u> stays text
    assert not any(k.startswith("on") for _, attrs in tags.tags for k in attrs)
    assert "<script>window.pwned" not in page and "&lt;script&gt;window.pwned=1" in page
    text = "".join(data for _, data in tags.text)
    assert PAYLOAD in text  # rendered literally, as the reader should see it
    assert "<u>nice</u>" in text


def test_page_is_self_contained_with_a_strict_policy(eng: EvidenceNecessityGraph) -> None:
    page = render_html([eng], report=summarize([eng]))
    tags = parse(page)
    for _, attrs in tags.tags:
        for name in ("src", "href", "action", "xlink:href"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), (name, value)
    assert "url(" not in page and "@import" not in page and "<link" not in page
    csp = next(
        a["content"] for t, a in tags.tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    digest = base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()
    assert "default-src 'none'" in csp and f"script-src 'sha256-{digest}'" in csp
    assert f"<script>{JS}</script>" in page  # the hash covers exactly the script that is there
    assert len(render_html([eng]).encode()) < 20_000


def test_claims_chunks_and_graph_agree_with_the_eng(eng: EvidenceNecessityGraph) -> None:
    tags = parse(render_eng(eng))
    claims = [a for t, a in tags.tags if t == "span" and "data-key" in a]
    checkable = [c for c in eng.claims if c.checkable]
    # keys count from 1, like everything the page shows (claim 1, chunk #1, [1] markers)
    assert [a["data-key"] for a in claims] == [f"c{c.index + 1}" for c in checkable]
    for attrs, claim in zip(claims, checkable, strict=True):
        assert f"st-{claim.status}" in attrs["class"]
        assert attrs["data-links"].split() == [f"d{i + 1}" for i in claim.necessary]
    statuses = {c.status for c in checkable}
    assert statuses == {"supported", "unsupported"}

    chunks = [a for t, a in tags.tags if t == "li" and "chunk" in (a.get("class") or "")]
    states = [a["class"].split()[1] for a in chunks]
    assert states == ["necessary", "necessary", "unused"]
    assert [a["data-links"].split() for a in chunks] == [
        [f"c{k + 1}" for k in ctx.necessary_for] for ctx in eng.contexts
    ]
    edges = sorted(tuple(a["data-edge"].split()) for t, a in tags.tags if "data-edge" in a)
    assert edges == sorted((f"c{k + 1}", f"d{j + 1}") for k, j in eng.edges)
    assert edges  # the fixture has necessity edges to draw


def test_answer_text_is_reproduced_exactly(eng: EvidenceNecessityGraph) -> None:
    tags = parse(render_eng(eng))
    shown = "".join(
        data
        for stack, data in tags.text
        if "p" in stack and "sup" not in stack and stack[-1] != "h2"
    )
    assert eng.answer in shown.replace("Question: What about " + PAYLOAD + "?", "")


def test_report_links_point_at_included_requests(engine: NecessityEngine) -> None:
    engs = engine.evaluate_many(
        {"id": f"r{i}", "answer": "Paris is in France.", "contexts": ["Paris is in France."]}
        for i in range(6)
    )
    report = summarize(engs, top=2)
    page = render_html(engs, report=report, max_requests=1)
    tags = parse(page)
    ids = {a["id"] for _, a in tags.tags if "id" in a}
    links = {a["href"][1:] for t, a in tags.tags if t == "a"}
    assert links and links <= ids
    assert "showing" in page and f"of {len(engs)} requests" in page
    assert page.count("<svg") >= 3  # plots and at least one necessity graph


def test_view_cli_reads_json_and_jsonl(tmp_path: Path, eng: EvidenceNecessityGraph) -> None:
    single = tmp_path / "one.json"
    single.write_text(eng.to_json(indent=2))
    assert main(["view", str(single)]) == 0
    page = (tmp_path / "one.html").read_text()
    assert page.count("data-eng>") == 1
    many = tmp_path / "out.jsonl"
    many.write_text("".join(eng.to_json() + "\n" for _ in range(3)))
    target = tmp_path / "view.html"
    assert main(["view", str(many), "-o", str(target)]) == 0
    assert target.read_text().count("data-eng>") == 3


def test_view_cli_rejects_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"line": 1, "error": "bad"}) + "\n")
    assert main(["view", str(empty)]) == 1
    assert "holds no ENG" in capsys.readouterr().err


def test_overlapping_spans_fall_back_to_plain_text(eng: EvidenceNecessityGraph) -> None:
    data = eng.model_dump(mode="json")
    data["claims"][1]["span"] = [0, 5]  # overlaps claim 0
    broken = EvidenceNecessityGraph.from_dict(data)
    shown = re.sub(r"<[^>]+>", "", render_eng(broken))
    assert "The tower is 300 metres tall." in shown


def test_degenerate_graphs_render(engine: NecessityEngine) -> None:
    empty, no_contexts = engine.evaluate_many(
        [{"answer": "", "contexts": ["A chunk."]}, {"answer": "Owls hunt.", "contexts": []}]
    )
    for eng in (empty, no_contexts):
        tags = parse(render_html([eng], report=summarize([eng])))
        assert sum(1 for t, _ in tags.tags if t == "svg") >= 1
    assert "every claim is unsupported" in render_eng(no_contexts)  # the ENG's warning is shown


def test_linked_engs_name_and_link_their_inner_requests(engine: NecessityEngine) -> None:
    """An agent's chunk that is a tool's answer (``ene_source``) links to that tool's ENG."""
    inner = engine.evaluate(
        "The tower is 300 metres tall.",
        ["Paris is in France.", "The tower is 300 metres tall."],
        id="synth-1",
    )
    outer = engine.evaluate(
        "The tower is 300 metres tall.",
        [
            {"id": "call-1", "text": inner.answer, "metadata": {"ene_source": "synth-1"}},
            {"id": "call-2", "text": "Dogs bark.", "metadata": {"ene_source": PAYLOAD}},
        ],
        id="agent-1",
    )
    page = render_html([outer, inner])
    tags = parse(page)
    ids = {a["id"] for _, a in tags.tags if "id" in a}
    links = [a["href"] for t, a in tags.tags if t == "a"]
    assert links == ["#r-2", "#r-1"] and {h[1:] for h in links} <= ids  # there and back
    shown = re.sub(r"\s+", " ", "".join(data for _, data in tags.text))
    assert "answer of request synth-1" in shown
    assert "Its answer is chunk #1 of request agent-1" in shown
    assert f"answer of request {PAYLOAD} (not on this page)" in shown  # escaped, not markup
    assert [t for t, _ in tags.tags].count("script") == 1
    assert "ene_source:" not in shown  # shown as the link caption, not as raw metadata
    alone = parse(render_eng(outer))  # without the inner ENG on the page: named, not linked
    assert not any(t == "a" for t, _ in alone.tags)
    assert "answer of request synth-1 (not on this page)" in "".join(d for _, d in alone.text)


def test_contradicted_claims_name_their_contradicting_chunks(engine: NecessityEngine) -> None:
    """Visible without hovering: each claim's verdict, and for a contradicted claim the chunk
    that contradicts it, numbered from 1 like the answer's [n] markers."""
    eng = engine.evaluate(
        "Paris is in France [1]. The tower is 200 metres tall [2].",
        ["Paris is in France.", "The tower is 300 metres tall.", "Cats purr."],
    )
    assert eng.claims[1].contradicted_by == [1]  # the second chunk, #2 on the page
    tags = parse(render_eng(eng))
    items = [
        a
        for t, a in tags.tags
        if t == "li" and "data-key" in a and "chunk" not in a.get("class", "")
    ]
    assert [a["data-key"] for a in items] == ["c1", "c2"]
    assert items[1]["data-links"] == "d2"
    shown = re.sub(r"\s+", " ", "".join(data for _, data in tags.text))
    assert "1 supported fragile · needs chunk #1" in shown
    assert "2 contradicted contradicted by chunk #2 · p(contra) 0.90" in shown
    assert "contradicts claim 2" in shown  # and the chunk says whom it contradicts
    edges = [a for t, a in tags.tags if "data-edge" in a]
    assert {(a["data-edge"], a.get("class")) for a in edges} == {
        ("c1 d1", None),
        ("c2 d2", "contra"),
    }


def test_request_time_is_the_requests_own_share(engine: NecessityEngine) -> None:
    big, small = engine.evaluate_many(
        [
            {"answer": "Paris is in France. " * 30, "contexts": ["Paris is in France."] * 20},
            {"answer": "Owls hunt.", "contexts": ["Owls hunt."]},
        ]
    )
    assert big.stats.compute_ms > small.stats.compute_ms
    chips = render_eng(small)
    assert f"{small.stats.compute_ms:.0f} ms</span>" in chips and "stats.compute_ms" in chips
