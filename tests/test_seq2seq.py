"""Seq2SeqOracle on tiny random T5 models built here (no download): one decoder step, the
answer tokens read from the tokenizer, scores independent of batching, premises cut only on
record, verdicts that follow the model, and the CLI kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core import InvalidInputError, NecessityEngine
from ene_core.cli import main
from ene_core.testing import make_tiny_seq2seq_model
from ene_core.verifiers.seq2seq import Seq2SeqOracle

WORDS = ["the", "cat", "sat", "on", "mat"]
PAIRS = [
    ("The cat sat on the mat.", "A cat sat."),
    ("Paris is in France. The Seine runs through it. " * 4, "Paris is in Spain."),
    ("x", "y"),
    ("The museum opens at nine on weekdays.", "The museum opens at nine."),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("t5")
    return {
        "random": make_tiny_seq2seq_model(str(root / "random"), seed=1, words=WORDS),
        "yes": make_tiny_seq2seq_model(str(root / "yes"), answer="yes"),
        "no": make_tiny_seq2seq_model(str(root / "no"), answer="no"),
        "maybe": make_tiny_seq2seq_model(str(root / "maybe"), answer="maybe"),
    }


def test_answer_tokens_come_from_the_tokenizer(models: dict[str, str]) -> None:
    oracle = Seq2SeqOracle(models["random"], yes="Yes", no="No", unclear="Maybe")
    tokens = oracle.tokenizer.convert_ids_to_tokens(oracle.answer_ids)
    assert tokens == ["yes", "no", "maybe"]  # the tokenizer lower-cases: its ids, not ours
    assert oracle.rules == frozenset() and oracle.name == models["random"]
    assert oracle.revision is not None and oracle.revision.startswith("sha256:")
    assert oracle.count_tokens("the cat sat") == 3


def test_answer_words_that_share_a_first_token_are_refused(models: dict[str, str]) -> None:
    with pytest.raises(InvalidInputError, match="first tokens"):
        Seq2SeqOracle(models["random"], yes="yes", no="yes")
    with pytest.raises(InvalidInputError, match=r"\{hypothesis\}"):
        Seq2SeqOracle(models["random"], prompt="{premise} only")


@pytest.mark.parametrize("batch_size", [1, 8, 32])
def test_scores_do_not_depend_on_the_neighbours(models: dict[str, str], batch_size: int) -> None:
    oracle = Seq2SeqOracle(models["random"], batch_size=batch_size)
    together = oracle.score(PAIRS)
    alone = [oracle.score([pair])[0] for pair in PAIRS]
    shuffled = oracle.score(PAIRS[::-1])[::-1]
    assert together == alone == shuffled  # bitwise
    assert len({round(s.entail, 6) for s in together}) > 1  # not a saturated model
    assert all(0.0 < s.entail < 1.0 and s.contra == 0.0 for s in together)


@pytest.mark.determinism
def test_cpu_passes_run_with_cpu_threads_whatever_torchs_count(models: dict[str, str]) -> None:
    """As NLIOracle's: a pass's last digits would otherwise follow the machine's core count."""
    import torch

    oracle = Seq2SeqOracle(models["random"], device="cpu")
    inner, seen = oracle.model, []

    def forward(**kwargs):  # type: ignore[no-untyped-def]
        seen.append(torch.get_num_threads())
        return inner(**kwargs)

    oracle.model = forward  # type: ignore[assignment]
    before = torch.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 4):
            torch.set_num_threads(threads)
            results.append(oracle.score(PAIRS))
            assert torch.get_num_threads() == threads
        assert set(seen) == {1} and results[0] == results[1] == results[2]
        with pytest.raises(InvalidInputError, match="cpu_threads"):
            Seq2SeqOracle(models["random"], cpu_threads=0)
    finally:
        torch.set_num_threads(before)


def test_a_premise_too_long_is_cut_on_record(models: dict[str, str]) -> None:
    oracle = Seq2SeqOracle(models["random"], max_length=40)
    long, short = oracle.score([("word " * 200, "A cat sat."), PAIRS[0]])
    assert long.truncated and not short.truncated
    context = " ".join(f"The cat sat on mat {n}." for n in range(40))
    eng = NecessityEngine(oracle).evaluate("A cat sat.", [context])
    assert eng.stats.truncated_premises >= 1


def test_verdicts_follow_the_model(models: dict[str, str]) -> None:
    answer, contexts = "The cat sat on the mat.", ["The cat sat on the mat.", "Dogs bark."]
    verdicts = {}
    for name in ("yes", "no", "maybe"):
        oracle = Seq2SeqOracle(models[name], unclear="maybe")
        verdicts[name] = NecessityEngine(oracle).evaluate(answer, contexts).claims[0].status
    two_way = Seq2SeqOracle(models["no"])
    verdicts["no, two answers"] = (
        NecessityEngine(two_way).evaluate(answer, contexts).claims[0].status
    )
    assert verdicts == {
        "yes": "supported",
        "no": "contradicted",
        "maybe": "unsupported",
        "no, two answers": "unsupported",  # without a third answer, "no" is "not entailed"
    }


def test_cli_offers_the_kind(models: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--answer", "The cat sat.", "--context", "The cat sat.", "--json"]
    argv += ["--oracle", "seq2seq", "--model", models["yes"], "--seq2seq-answers", "yes,no,maybe"]
    assert main(argv) == 0
    eng = json.loads(capsys.readouterr().out)
    assert eng["claims"][0]["status"] == "supported"
    assert eng["verifier"]["model"] == str(Path(models["yes"]))
    assert eng["verifier"]["check_bindings"] is False  # no rules for a verifier of one's own


def test_the_model_declares_its_prompt_answers_threshold_and_rules(
    models: dict[str, str], tmp_path: Path
) -> None:
    import shutil

    model = tmp_path / "declared"
    shutil.copytree(models["no"], model)
    declaration = {
        "prompt": "Document: {premise} Claim: {hypothesis} Answer:",
        "answers": ["yes", "no", "maybe"],
        "threshold": 0.7,
        "rules": ["bindings"],
    }
    (model / "ene_verifier.json").write_text(json.dumps(declaration))
    oracle = Seq2SeqOracle(str(model))
    assert oracle.prompt == declaration["prompt"] and oracle.three_way
    assert oracle.default_threshold == 0.7 and oracle.rules == {"bindings"}
    engine = NecessityEngine(oracle)
    assert engine.threshold == 0.7 and engine.rules == {"bindings"}
    assert engine.evaluate("A cat sat.", ["A cat sat."]).claims[0].status == "contradicted"
    assert not Seq2SeqOracle(str(model), yes="yes", no="no").three_way  # arguments win
    (model / "ene_verifier.json").write_text(json.dumps({"answers": ["yes"]}))
    with pytest.raises(InvalidInputError, match=r"ene_verifier\.json: answers"):
        Seq2SeqOracle(str(model))
    (model / "ene_verifier.json").write_text(json.dumps({"window": 256}))
    with pytest.raises(InvalidInputError, match="does not read"):
        Seq2SeqOracle(str(model))
    (model / "ene_verifier.json").write_text(json.dumps({"rule": []}))
    with pytest.raises(InvalidInputError, match="unknown field"):
        Seq2SeqOracle(str(model))
