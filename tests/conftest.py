"""Shared fixtures: a deterministic keyword engine and a tiny random NLI model (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ene_core import NecessityEngine
from ene_core.testing import KeywordOracle

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


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
