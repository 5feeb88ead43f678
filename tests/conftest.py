"""Shared fixtures: a deterministic keyword engine and a tiny random NLI model (no downloads)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ene_core import NecessityEngine
from ene_core.verifiers.keyword import KeywordOracle

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# Headless Chromium on a machine with no network beyond the package registries: without the
# background-networking flags it keeps trying (and failing) to reach Google's hosts.
HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--device",
        default="cpu",
        help="where the tests that run a model run it: cpu (default), cuda or cuda:N",
    )


@pytest.fixture(scope="session")
def device(request: pytest.FixtureRequest) -> str:
    """The ``--device`` for NLIOracle tests; skips them when CUDA was asked for but is absent."""
    name = str(request.config.getoption("--device"))
    if name.startswith("cuda"):
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip(f"--device {name}: torch {torch.__version__} sees no CUDA device")
    return name


@pytest.fixture
def keyword_engine() -> NecessityEngine:
    engine = NecessityEngine(KeywordOracle())
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("torch")
    from ene_core.testing import make_tiny_nli_model

    words = [
        "the",
        "cat",
        "sat",
        "on",
        "mat",
        "paris",
        "is",
        "capital",
        "of",
        "france",
        "tower",
        "tall",
        "metres",
        "red",
    ]
    return make_tiny_nli_model(str(tmp_path_factory.mktemp("tiny") / "nli"), words=words)


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def headless_chromium() -> Callable[[Path], list[str]]:
    """The headless Chromium command line for a fresh profile dir; skips without Chromium."""
    names = ("chromium", "chromium-browser", "google-chrome")
    browser = next((p for p in map(shutil.which, names) if p), None)
    if browser is None:
        pytest.skip("Chromium not installed (Debian: apt-get install -y chromium)")
    return lambda profile: [browser, *HEADLESS_FLAGS, f"--user-data-dir={profile}"]
