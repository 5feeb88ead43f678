"""ChunkFilter (issue 55): the keep rules, the shipped model, training and labels from ENGs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hash_seeds import outputs_under_hash_seeds

from ene_core.filtering._text import chunk_text
from ene_core.filtering.model import ChunkFilter, select
from ene_core.filtering.network import DEFAULT_FILTER_DIR, FilterSettings

pytest.importorskip("torch")
pytest.importorskip("transformers")

QUESTION = "When does the Riverside store open on Saturdays?"
HOURS = "Riverside store opening hours: Monday to Saturday, 9:00 to 18:00. Closed on Sunday."
OFF_TOPIC = [
    "The Andromeda galaxy is about 2.5 million light-years from Earth.",
    "Sourdough needs a starter of flour and water fed daily for a week.",
    "The 1912 Olympic marathon was won by Ken McArthur of South Africa.",
]


@pytest.fixture(scope="module")
def shipped() -> ChunkFilter:
    return ChunkFilter()


# -- the keep rule --------------------------------------------------------------------------------
def test_select_keeps_at_or_above_the_threshold_in_input_order() -> None:
    assert select([0.9, 0.1, 0.5, 0.7], 0.5) == [0, 2, 3]


def test_select_never_returns_nothing_and_honours_min_and_max_keep() -> None:
    assert select([0.1, 0.3, 0.2], 0.9) == [1]
    assert select([0.1, 0.3, 0.2], 0.9, min_keep=2) == [1, 2]
    assert select([0.9, 0.8, 0.95, 0.1], 0.5, max_keep=2) == [0, 2]
    assert select([0.9, 0.8], 0.5, min_keep=5) == [0, 1]
    assert select([], 0.5) == []


def test_select_keeps_a_nan_score() -> None:
    assert select([math.nan, 0.1, 0.9], 0.5) == [0, 2]


# -- chunk shapes -----------------------------------------------------------------------------------
def test_chunk_text_reads_strings_dicts_documents_and_nodes() -> None:
    assert chunk_text("plain") == "plain"
    assert chunk_text({"id": "a", "text": "from a dict"}) == "from a dict"
    documents = pytest.importorskip("langchain_core.documents")
    assert chunk_text(documents.Document(page_content="a document")) == "a document"
    schema = pytest.importorskip("llama_index.core.schema")
    node = schema.TextNode(text="a node", metadata={"file": "x.txt"})
    assert chunk_text(node) == "a node"
    assert chunk_text(schema.NodeWithScore(node=node, score=0.3)) == "a node"
    with pytest.raises(TypeError):
        chunk_text(42)


# -- the shipped filter -------------------------------------------------------------------------------
def test_the_default_filter_ships_small_with_a_calibrated_threshold() -> None:
    settings = FilterSettings.read(DEFAULT_FILTER_DIR)
    size = sum(p.stat().st_size for p in DEFAULT_FILTER_DIR.iterdir() if p.is_file())
    assert size < 20 * 1024 * 1024  # a delta on top of ene-nli-mini, not another 45 MB
    assert 0.0 < settings.threshold < 1.0
    assert settings.min_keep >= 1
    assert settings.training.get("held_out_pairs", 0) > 0


def test_the_shipped_filter_ranks_the_needed_chunk_first(shipped: ChunkFilter) -> None:
    chunks = [OFF_TOPIC[0], HOURS, *OFF_TOPIC[1:]]
    scores = shipped.scores(QUESTION, chunks)
    assert len(scores) == 4 and all(0.0 <= s <= 1.0 for s in scores)
    assert max(range(4), key=scores.__getitem__) == 1
    kept = shipped.keep(QUESTION, chunks)
    assert 1 in kept and kept == sorted(kept)
    assert len(kept) < 4  # off-topic chunks go


def test_decide_accounts_for_tokens_and_takes_documents(shipped: ChunkFilter) -> None:
    documents = pytest.importorskip("langchain_core.documents")
    docs = [documents.Document(page_content=t) for t in [HOURS, *OFF_TOPIC]]
    decision = shipped.decide(QUESTION, docs)
    assert decision.error is None
    assert sorted(decision.kept + decision.dropped) == [0, 1, 2, 3]
    assert decision.tokens_kept > 0 and decision.tokens_saved == decision.tokens_dropped
    assert decision.tokens_dropped > 0


def test_any_error_keeps_every_chunk_and_is_recorded(shipped: ChunkFilter, caplog) -> None:
    before = shipped.errors
    decision = shipped.decide(QUESTION, [HOURS, object(), OFF_TOPIC[0]])
    assert decision.kept == [0, 1, 2] and decision.dropped == []
    assert decision.error and "TypeError" in decision.error
    assert shipped.errors == before + 1 and shipped.last_error == decision.error
    assert "keeping all 3 chunks" in caplog.text
    assert shipped.keep(QUESTION, []) == []


def test_overrides_of_the_keep_rule(shipped: ChunkFilter) -> None:
    strict = ChunkFilter(threshold=1.01, min_keep=2)
    assert len(strict.keep(QUESTION, [HOURS, *OFF_TOPIC])) == 2
    with pytest.raises(ValueError):
        ChunkFilter(min_keep=0)


# -- training and labels ------------------------------------------------------------------------------
def test_training_writes_a_loadable_filter_with_split_checkpoints_and_threshold(
    tmp_path: Path,
) -> None:
    from ene_core.filtering.training import Pair, train_filter

    pairs = []
    for k in range(6):
        group = f"r{k}"
        pairs.append(Pair(QUESTION, HOURS, 1, 1.0, group))
        pairs += [Pair(QUESTION, text, 0, 1.0, group) for text in OFF_TOPIC]
    out = tmp_path / "filter"
    settings = train_filter(
        pairs[:16],
        pairs[16:],
        out,
        num_layers=1,
        max_length=32,
        epochs=1,
        batch_size=4,
        max_steps=3,
        checkpoint_every=2,
    )
    assert (out / "split.json").exists() and (out / "checkpoints" / "step-2").is_dir()
    assert json.loads((out / "split.json").read_text())["held_out_groups"] == ["r4", "r5"]
    assert settings.threshold == FilterSettings.read(out).threshold
    assert (out / "delta.safetensors").stat().st_size < 4 * 1024 * 1024  # one layer + head
    trained = ChunkFilter(out)
    assert len(trained.scores(QUESTION, [HOURS, *OFF_TOPIC])) == 4


def _tiny_pairs() -> list:
    from ene_core.filtering.training import Pair

    pairs = []
    for k in range(6):
        pairs.append(Pair(f"{QUESTION} ({k})", HOURS, 1, 1.0 + k / 10, f"r{k}"))
        pairs += [Pair(QUESTION, text[: 20 + 9 * k], 0, 1.0, f"r{k}") for text in OFF_TOPIC]
    return pairs


def test_the_trained_layers_alone_give_the_networks_logits() -> None:
    """Training runs the frozen part once and the trained layers on its output: the logits are
    the network's own, from cached and from recomputed outputs, and with every layer trained
    the dropout draws are the network's own too."""
    import torch
    from transformers import AutoTokenizer

    from ene_core.filtering.network import build_network
    from ene_core.filtering.training import (
        _collate,
        _encode,
        _FrozenPart,
        _head_logits,
        _inputs,
    )

    base = FilterSettings().base_dir()
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = build_network(base, 2)
    pairs = _tiny_pairs()[:9]
    inputs = _inputs(tokenizer, pairs, 24)
    ids, types = _encode(tokenizer, pairs, 24)
    rows = list(range(len(pairs)))
    for key, value in _collate(ids, types, tokenizer.pad_token_id).items():
        assert torch.equal(value, inputs[key]), key
    with torch.inference_mode():
        expected = model(**inputs).logits[:, 0]
        for frozen_layers in (0, 1):
            for cache_bytes in (1 << 30, 0):
                part = _FrozenPart(
                    model, frozen_layers, ids, types, tokenizer.pad_token_id, cache_bytes
                )
                assert part.cached == bool(cache_bytes)
                hidden, mask = part(rows)
                got = _head_logits(model, hidden, mask, frozen_layers)
                assert torch.allclose(got, expected, atol=1e-5), (frozen_layers, cache_bytes)
    model.train()
    part = _FrozenPart(model, 0, ids, types, tokenizer.pad_token_id, 1 << 30)
    torch.manual_seed(3)
    expected = model(**inputs).logits[:, 0]
    torch.manual_seed(3)
    hidden, mask = part(rows)
    hidden = torch.nn.functional.dropout(hidden, model.bert.embeddings.dropout.p, training=True)
    got = _head_logits(model, hidden, mask, 0)
    assert torch.allclose(got, expected, atol=1e-5)
    assert not torch.allclose(got, model(**inputs).logits[:, 0], atol=1e-3)  # other draws


def test_training_is_deterministic_and_trains_only_the_unfrozen_layers(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from ene_core.filtering.training import train_filter

    pairs = _tiny_pairs()
    common = dict(num_layers=2, max_length=32, batch_size=4, max_steps=3, epochs=2)
    common.update(checkpoint_every=2, threads=1, lexical=False)

    def train(name: str, **options) -> dict:
        out = tmp_path / name
        settings = train_filter(pairs[:16], pairs[16:], out, **common, **options)
        assert settings.training["frozen_layers"] == options.get("frozen_layers", 0)
        assert settings.training["threads"] == 1
        return load_file(str(out / "delta.safetensors"))

    first, again = train("a", frozen_layers=1), train("b", frozen_layers=1)
    assert first.keys() == again.keys()
    assert all(first[k].equal(again[k]) for k in first)  # the same bytes, run after run
    recomputed = train(
        "c", frozen_layers=1, feature_cache_mb=0
    )  # the frozen layer run for every batch
    assert all(first[k].float().allclose(recomputed[k].float(), atol=2e-3) for k in first)
    base = load_file(str(FilterSettings().base_dir() / "model.safetensors"))
    layer0 = [k for k in first if k.startswith("bert.encoder.layer.0.")]
    layer1 = [k for k in first if k.startswith("bert.encoder.layer.1.")]
    assert layer0 and layer1
    assert all(first[k].equal(base[k].half()) for k in layer0)  # frozen
    assert not all(first[k].equal(base[k].half()) for k in layer1)  # trained
    every = train("d")
    assert not all(every[k].equal(base[k].half()) for k in layer0)
    assert (tmp_path / "a" / "checkpoints" / "step-2" / "delta.safetensors").exists()
    assert (
        len(ChunkFilter(tmp_path / "a" / "checkpoints" / "step-2").scores(QUESTION, [HOURS])) == 1
    )
    with pytest.raises(ValueError, match="frozen_layers"):
        train_filter(pairs[:16], pairs[16:], tmp_path / "e", num_layers=2, frozen_layers=2)


def test_labels_from_an_eng(keyword_engine) -> None:
    from ene_core.filtering.labels import needed_contexts, pairs_from_eng

    contexts = [
        "The city museum opens at 9 am and closes at 6 pm.",
        "The Eiffel Tower is in Paris. The tower is 330 metres tall.",
        "Bananas are yellow.",
    ]
    eng = keyword_engine.evaluate(
        "The museum opens at 9 am. The tower is 330 metres tall.",
        contexts,
        question="When does the museum open and how tall is the tower?",
    )
    assert needed_contexts(eng) == {0, 1}
    pairs = pairs_from_eng(eng)
    assert [p.label for p in pairs] == [1, 1, 0]
    assert all(p.weight == 1.0 for p in pairs)
    no_question = keyword_engine.evaluate("The museum opens at 9 am.", contexts)
    assert pairs_from_eng(no_question) == []


def test_train_filter_command_from_engs(keyword_engine, tmp_path: Path, capsys) -> None:
    from ene_core.cli import main as ene

    def main(argv: list[str]) -> int:  # ene train-filter ...
        return ene(["train-filter", *argv])

    contexts = [
        "The city museum opens at 9 am and closes at 6 pm.",
        "The Eiffel Tower is in Paris. The tower is 330 metres tall.",
        "Bananas are yellow.",
    ]
    lines = []
    for k in range(8):
        eng = keyword_engine.evaluate(
            "The museum opens at 9 am.", contexts, question=f"When does the museum open? ({k})"
        )
        lines.append(eng.model_copy(update={"id": f"req-{k}"}).to_json())
    lines.append('{"error": "boom", "line": 9}')
    engs = tmp_path / "engs.jsonl"
    engs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "filter"
    argv = [str(engs), "--out", str(out), "--layers", "1", "--max-length", "32"]
    assert main([*argv, "--max-steps", "2", "--held-out", "0.3", "--batch-size", "4"]) == 0
    printed = capsys.readouterr().out
    assert "8 used" in printed and "1 unreadable" in printed
    settings = FilterSettings.read(out)
    assert settings.num_layers == 1 and settings.combine is not None
    assert json.loads((out / "split.json").read_text())["held_out_groups"]
    assert len(ChunkFilter(out).keep("When does the museum open?", contexts)) >= 1
    assert main([str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 1  # an input error
    assert "missing.jsonl: no such file" in capsys.readouterr().err
    assert main([*argv, "--frozen-layers", "1"]) == 1  # --layers 1 has none to freeze
    assert "--frozen-layers must be 0 to 0" in capsys.readouterr().err


def test_lexical_features_are_the_same_in_every_process() -> None:
    """Sums over the question's words run in one order whatever the string hash seed."""
    code = (
        "import random; from ene_core.filtering.lexical import lexical_features as f;"
        "r = random.Random(0); v = [f'w{i}' for i in range(60)];"
        "t = lambda k: ' '.join(r.choice(v) for _ in range(k));"
        "print([f(t(12), [t(40) for _ in range(6)]) for _ in range(40)])"
    )
    outputs = outputs_under_hash_seeds(code, ("1", "2", "3", "4"))
    assert len(outputs) == 1 and "0." in outputs.pop()  # four seeds, one answer
