"""The viewer in a real browser: headless Chromium runs the page's script, and the DOM after it
ran is checked (``--dump-dom``); a screenshot proves it renders. Skips without Chromium
(``apt-get install chromium``)."""

from __future__ import annotations

import os
import re
import struct
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ene_core import NecessityEngine
from ene_core.report import summarize
from ene_core.testing import KeywordOracle
from ene_core.viewer import render_html

# Would mark the document if it ever ran: as a script, an event handler or a <svg onload>.
PAYLOAD = (
    "<script>document.documentElement.setAttribute('data-pwned','script')</script>"
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"
    "<svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\"></svg>"
)


@pytest.fixture
def chromium(headless_chromium: Callable[[Path], list[str]], tmp_path: Path) -> Callable[..., str]:
    def run(*args: str) -> str:
        command = [*headless_chromium(tmp_path / "profile"), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
        return done.stdout

    return run


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    engine = NecessityEngine(KeywordOracle())
    try:
        engs = engine.evaluate_many(
            [
                {
                    "id": "xss",
                    "question": "Where is Paris?",
                    "answer": "Paris is in France. The tower is 300 metres tall. Dogs fly.",
                    "contexts": [
                        {"text": "Paris is in France.", "metadata": {"source": "wiki"}},
                        {"text": PAYLOAD, "metadata": {"source": PAYLOAD}},
                        {"text": "The tower is 300 metres tall.", "metadata": {"source": "wiki"}},
                    ],
                },
                {"id": "two", "answer": "Owls hunt.", "contexts": ["Owls hunt.", "Cats purr."]},
            ]
        )
    finally:
        engine.close()
    path = tmp_path_factory.mktemp("view") / "report.html"
    path.write_text(render_html(engs, report=summarize(engs), title="browser test"))
    return path


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append({k: v or "" for k, v in attrs})


def parse(dom: str) -> list[dict[str, str]]:
    """The attributes of every element of a serialised DOM."""
    parser = _Elements()
    parser.feed(dom)
    return parser.found


def html_tag(dom: str) -> str:
    return re.search(r"<html[^>]*>", dom).group(0)


def test_script_runs_and_payloads_stay_text(
    page: Path, chromium: Callable[..., str], tmp_path: Path
) -> None:
    dom = chromium("--dump-dom", page.as_uri())
    root = html_tag(dom)
    assert 'data-ene-ready="2"' in root  # the script ran (so its CSP hash is right)
    assert "data-pwned" not in root  # no payload ran
    assert "<img" not in dom
    assert not re.search(r"<[a-z]+[^<>]*\s(onerror|onload)=", dom)  # no element has a handler
    assert "&lt;script&gt;document.documentElement" in dom
    assert "&lt;img src=x onerror=" in dom


def test_deep_link_highlights_a_claim_and_its_chunks(
    page: Path, chromium: Callable[..., str], tmp_path: Path
) -> None:
    dom = chromium("--dump-dom", page.as_uri() + "#r-1/c1")  # claim 1: keys count from 1
    elements = parse(dom)
    sections = {a["id"]: a["class"].split() for a in elements if "data-eng" in a}
    assert "focus" in sections["r-1"] and "focus" not in sections["r-2"]
    lit = {
        a["data-key"] for a in elements if "data-key" in a and "hl" in a.get("class", "").split()
    }
    assert lit == {"c1", "d1"}  # claim 1 ("Paris is in France.") needs chunk #1 only
    edges = [
        a["data-edge"] for a in elements if "data-edge" in a and "hl" in a.get("class", "").split()
    ]
    assert edges == ["c1 d1"]


def test_screenshot_renders(page: Path, chromium: Callable[..., str], tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    chromium("--window-size=1200,900", f"--screenshot={shot}", page.as_uri())
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1200, 900)
    assert len(data) > 20_000  # a blank page compresses to a few KB


@pytest.fixture(scope="module")
def contradiction_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One request whose third claim is contradicted by chunk #2, with [n] citation markers."""
    engine = NecessityEngine(KeywordOracle())
    try:
        engs = engine.evaluate_many(
            [
                {
                    "id": "tower",
                    "question": "Tell me about Paris.",
                    "answer": "Paris is in France [1]. The tower is in Paris [2]. "
                    "The tower is 200 metres tall [2]. Dogs fly.",
                    "contexts": [
                        {
                            "id": "geo",
                            "text": "Paris is in France.",
                            "metadata": {"source": "wiki"},
                        },
                        {
                            "id": "eiffel",
                            "text": "The tower is in Paris. The tower is 300 metres tall.",
                        },
                        {"id": "pets", "text": "Cats purr.", "metadata": {"source": "blog"}},
                    ],
                },
                {
                    "id": "owls",
                    "answer": "Owls hunt at night.",
                    "contexts": ["Owls hunt at night."],
                },
            ]
        )
    finally:
        engine.close()
    assert engs[0].claims[2].contradicted_by == [1]
    path = tmp_path_factory.mktemp("contra") / "report.html"
    path.write_text(render_html(engs, report=summarize(engs), title="ENE report"))
    return path


def test_a_contradicted_claim_shows_and_lights_its_contradicting_chunk(
    contradiction_page: Path, chromium: Callable[..., str], tmp_path: Path
) -> None:
    """In the browser: the verdict list names chunk #2 for claim 3, the deep link to claim 3
    lights chunk #2 and the dashed contradiction edge; the screenshot shows it rendered."""
    dom = chromium("--dump-dom", contradiction_page.as_uri() + "#r-1/c3")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))
    assert "3 contradicted contradicted by chunk #2 · p(contra) 0.90" in text
    assert "1 supported fragile · needs chunk #1" in text and "4 unsupported" in text
    assert "contradicts claim 3" in text  # the chunk's caption, counted from 1 as well
    elements = parse(dom)
    lit = {
        a["data-key"] for a in elements if "data-key" in a and "hl" in a.get("class", "").split()
    }
    assert lit == {"c3", "d2"}
    edges = [a for a in elements if "data-edge" in a and "hl" in a.get("class", "").split()]
    assert [(a["data-edge"], a.get("class")) for a in edges] == [("c3 d2", "contra hl")]
    # the report's request table: separate unsupported and contradicted columns
    assert "<th>unsupported</th><th>contradicted</th>" in dom
    shot = tmp_path / "contradiction.png"
    chromium(
        "--window-size=1280,1000", f"--screenshot={shot}", contradiction_page.as_uri() + "#r-1/c3"
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1280, 1000)
    # a rendered page, not an empty frame; since the per-policy savings table (issue 23) the deep
    # link's first screen measured 17.8-18.0 KB here (over 20 KB before): a known viewer issue
    assert len(data) > 12_000
    keep = os.environ.get("ENE_SCREENSHOT_DIR")  # to refresh docs/ images: set it to docs/
    if keep:
        Path(keep, "viewer-contradiction.png").write_bytes(data)
