"""Premise windows and single-string input (ene_core.verifiers.windows) on a tiny tokenizer."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from ene_core.testing import make_tiny_nli_model
from ene_core.verifiers.protocol import Scores
from ene_core.verifiers.windows import aggregate, premise_windows, single_text

WORDS = [f"w{n}" for n in range(100)]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> object:
    from transformers import AutoTokenizer

    path = make_tiny_nli_model(str(tmp_path_factory.mktemp("win") / "nli"), words=WORDS)
    return AutoTokenizer.from_pretrained(path)


def test_a_premise_that_fits_is_read_whole(tokenizer: object) -> None:
    premise = " ".join(WORDS[:10])
    assert premise_windows(tokenizer, premise, "w1 w2", max_length=64) == ([premise], False)
    assert premise_windows(tokenizer, premise, "w1", max_length=64, window=32) == (
        [premise],
        False,
    )


def test_a_long_premise_is_cut_on_record_or_read_in_windows(tokenizer: object) -> None:
    premise = " ".join(WORDS)  # 100 tokens
    (cut,), truncated = premise_windows(tokenizer, premise, "w1 w2", max_length=32)
    assert truncated and premise.startswith(cut) and len(cut.split()) == 32 - 3 - 2 - 1
    texts, truncated = premise_windows(tokenizer, premise, "w1 w2", max_length=64, window=20)
    assert not truncated and all(len(t.split()) == 20 for t in texts)
    assert texts[0].startswith("w0 ") and texts[-1].endswith("w99")
    assert set(" ".join(texts).split()) == set(WORDS)  # every token in some window
    overlapping, _ = premise_windows(tokenizer, premise, "w1", max_length=64, window=20, stride=10)
    assert len(overlapping) == 9 and overlapping[1].startswith("w10 ")
    # a window wider than the model's room is narrowed to fit with the claim
    wide, _ = premise_windows(tokenizer, premise, "w1 w2", max_length=32, window=500)
    assert all(len(t.split()) == 32 - 3 - 2 - 1 for t in wide)


def test_single_string_input_counts_its_separator(tokenizer: object) -> None:
    premise = " ".join(WORDS)
    (cut,), truncated = premise_windows(
        tokenizer, premise, "w1 w2", max_length=32, separator=" [SEP] "
    )
    assert truncated and len(cut.split()) == 32 - 2 - 1 - 2 - 1  # [CLS] .. [SEP], sep, claim
    assert single_text("a b", "c", " [SEP] ") == "a b [SEP] c"


def test_the_most_entailing_window_counts() -> None:
    scores = [Scores(0.2, 0.1), Scores(0.9, 0.05), Scores(0.1, 0.7, truncated=True)]
    assert aggregate(scores) == Scores(0.9, 0.7, truncated=True)
    assert aggregate(scores[:1]) == scores[0]
