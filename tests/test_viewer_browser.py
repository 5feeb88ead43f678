"""The viewer in a real browser: headless Chromium runs the page's script, and the DOM after it
ran is checked (``--dump-dom``); a screenshot proves it renders. Skips without Chromium
(``apt-get install chromium``).

A deep link scrolls the page, and ``--screenshot`` does not follow the scroll: it captures the
top of the document at the window's size, drawn only where it overlaps the scrolled viewport (the
rest is blank). Screenshots of deep links therefore come from :func:`viewport_screenshot`, which
asks the browser for its viewport over the DevTools protocol."""

from __future__ import annotations

import base64
import json
import os
import re
import select
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from ene_core import NecessityEngine
from ene_core.reports.report import summarize
from ene_core.reports.viewer import render_html
from ene_core.verifiers.keyword import KeywordOracle

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


# Runs argv[3:] with the pipe ends argv[1] and argv[2] on fds 3 and 4 (moved above 9 first, so
# putting one in place cannot overwrite the other). Not a shell: dash redirects fds 0-9 only.
ON_FDS_3_AND_4 = """
import fcntl, os, sys
ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
for target, fd in zip((3, 4), ends):
    os.dup2(fd, target)
    os.close(fd)
os.execvp(sys.argv[3], sys.argv[3:])
"""


def viewport_screenshot(
    command: list[str], url: str, width: int, height: int, timeout: float = 60.0
) -> bytes:
    """The PNG of what a ``width`` x ``height`` viewport shows once ``url`` loaded (its script
    ran, a deep link scrolled): the DevTools protocol over ``--remote-debugging-pipe``, where the
    browser reads commands on fd 3 and writes replies on fd 4, each a JSON text ended by NUL."""
    commands_read, commands = os.pipe()
    replies, replies_write = os.pipe()
    ends = (str(commands_read), str(replies_write))
    browser = subprocess.Popen(
        [sys.executable, "-c", ON_FDS_3_AND_4, *ends, *command, "--remote-debugging-pipe"],
        pass_fds=(commands_read, replies_write),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(commands_read)
    os.close(replies_write)
    deadline = time.monotonic() + timeout
    pending = b""
    events: list[dict[str, Any]] = []
    ids = iter(range(1, 1 << 30))

    def receive() -> dict[str, Any]:
        nonlocal pending
        while b"\0" not in pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([replies], [], [], left)[0]:
                raise TimeoutError(f"no reply from the browser within {timeout} s")
            data = os.read(replies, 1 << 16)
            if not data:
                raise EOFError("the browser closed its pipe")
            pending += data
        message, pending = pending.split(b"\0", 1)
        return json.loads(message)

    def post(method: str, session: str | None = None, **params: Any) -> int:
        number = next(ids)
        message = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(commands, json.dumps(message).encode() + b"\0")
        return number

    def call(method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        number = post(method, session, **params)
        while True:
            reply = receive()
            if reply.get("id") != number:
                events.append(reply)
            elif "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            else:
                return reply["result"]

    def wait_for(event: str) -> None:
        while not any(e.get("method") == event for e in events):
            events.append(receive())

    try:
        target = call("Target.createTarget", url="about:blank")["targetId"]
        session = call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        call("Page.enable", session)
        events.clear()
        call("Page.navigate", session, url=url)
        wait_for("Page.loadEventFired")
        png = base64.b64decode(call("Page.captureScreenshot", session, format="png")["data"])
        post("Browser.close")
        return png
    finally:
        os.close(commands)
        os.close(replies)
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()
            browser.wait()


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
    contradiction_page: Path,
    chromium: Callable[..., str],
    headless_chromium: Callable[[Path], list[str]],
    tmp_path: Path,
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
    # the first screen after the deep link scrolled to request 1 (not ``--screenshot``: see above)
    command = headless_chromium(tmp_path / "viewport-profile")
    data = viewport_screenshot(command, contradiction_page.as_uri() + "#r-1/c3", 1280, 1000)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1280, 1000)
    assert len(data) > 20_000  # a blank viewport compresses to a few KB
    keep = os.environ.get("ENE_SCREENSHOT_DIR")  # to refresh docs/ images: set it to docs/
    if keep:
        Path(keep, "viewer-contradiction.png").write_bytes(data)
