"""The real NLIOracle code path on a tiny randomly initialised BERT (no downloads)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ene_core import (  # noqa: E402
    InvalidInputError,
    LabelMappingError,
    ModelNotFoundError,
    NecessityEngine,
    NLIOracle,
    OracleError,
    OracleOutOfMemoryError,
)
from ene_core.testing import make_tiny_nli_model  # noqa: E402
from ene_core.verifiers.nli import DEVICE_ENV, label_indices  # noqa: E402
from ene_core.verifiers.threads import own_threads  # noqa: E402

PAIRS = [
    ("The cat sat on the mat. " * (i % 7 + 1) + "Paris is the capital.", f"The cat sat {i}.")
    for i in range(40)
]


def tolerance(oracle: NLIOracle) -> float:
    """How far two group shapes may move a probability: last digits in fp32, more in 16 bits."""
    return 1e-4 if oracle.dtype == torch.float32 else 2e-2


def test_scores_are_probabilities(tiny_model_dir: str, device: str) -> None:
    oracle = NLIOracle(tiny_model_dir, device=device)
    scores = oracle.score(PAIRS)
    assert len(scores) == len(PAIRS)
    assert all(
        0 <= s.entail <= 1 and 0 <= s.contra <= 1 and s.entail + s.contra <= 1 for s in scores
    )
    assert oracle.device == torch.device(device)
    assert oracle.dtype == (torch.float32 if device == "cpu" else oracle.dtype)
    assert next(oracle.model.parameters()).device.type == oracle.device.type
    assert oracle.revision and oracle.revision.startswith("sha256:")


@pytest.mark.determinism
@pytest.mark.parametrize("bucket", [16, 48])
def test_verdicts_do_not_depend_on_batch_neighbours(
    tiny_model_dir: str, device: str, bucket: int
) -> None:
    oracle = NLIOracle(tiny_model_dir, device=device, batch_size=8, bucket_tokens=bucket)
    reference = oracle.score(PAIRS)
    rng = random.Random(7)
    for _ in range(3):
        order = list(range(len(PAIRS)))
        rng.shuffle(order)
        subset = order[: rng.randint(1, len(order))]
        shuffled = oracle.score([PAIRS[i] for i in subset])
        assert [reference[i] for i in subset] == shuffled  # bitwise equal
    assert [oracle.score([p])[0] for p in PAIRS[:5]] == reference[:5]
    # every place in a batch, among neighbours short and long (other padding lengths)
    short, long = PAIRS[0], PAIRS[6]
    for neighbours in ([short] * 9, [long] * 9, [PAIRS[i] for i in range(10, 19)]):
        for pair in (short, long, PAIRS[13]):
            for at in range(len(neighbours) + 1):
                batch = [*neighbours[:at], pair, *neighbours[at:]]
                assert oracle.score(batch)[at] == reference[PAIRS.index(pair)], (pair, at)


@pytest.mark.determinism
def test_cpu_passes_hold_one_pair_whatever_the_batch_size(tiny_model_dir: str) -> None:
    """On a CPU a GEMM row's last digits can depend on its place in the matrix (MKL's AVX2
    kernels, some AVX-512 shapes), so every deterministic pass holds one pair: the scores are
    bitwise the same for any ``batch_size`` and ``max_batch_tokens``."""
    reference = NLIOracle(tiny_model_dir, device="cpu").score(PAIRS)
    for batch, tokens in ((1, 512), (3, 512), (8, 512), (64, 1 << 20)):
        oracle = NLIOracle(tiny_model_dir, device="cpu", batch_size=batch, max_batch_tokens=tokens)
        oracle.model = RowLimit(oracle.model, max_rows=1 << 30)
        assert oracle.score(PAIRS) == reference
        assert {rows for rows, _ in oracle.model.shapes} == {1}
        assert oracle.padding["rows"] == oracle.padding["pairs"] == len(PAIRS)


# Pairs of the shipped verifier's size: its one-pair passes sum 1,536 terms in the feed-forward
# output, which MKL splits between threads (on this 2-core Xeon 109 of 177 HotpotQA pairs came
# out different in their last digits with 2 threads than with 1).
THREAD_PAIRS = [
    (
        "The Eiffel Tower was completed in 1889 for the World's Fair. " * (i % 4 + 1)
        + f"It is {300 + i} metres tall and was the tallest structure in the world until 1930.",
        f"The tower is {300 + i % 3} metres tall.",
    )
    for i in range(12)
]


class ThreadProbe(torch.nn.Module):
    """Wraps a model and records torch's intra-op thread count during each forward pass."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner, self.threads, self.runners = inner, [], set()

    def forward(self, **kwargs):  # type: ignore[no-untyped-def]
        self.threads.append(torch.get_num_threads())
        self.runners.add(threading.get_ident())
        return self.inner(**kwargs)


@pytest.mark.determinism
def test_cpu_scores_do_not_depend_on_torch_threads() -> None:
    """The same digits whatever torch's thread count (a 2-core laptop, a 64-core server): the
    passes run with ``cpu_threads``, and the caller's thread count is set back after."""
    oracle = NLIOracle(device="cpu")
    probe = oracle.model = ThreadProbe(oracle.model)
    before = torch.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 4):
            torch.set_num_threads(threads)
            probe.runners.clear()
            results.append(oracle.score(THREAD_PAIRS))
            assert torch.get_num_threads() == threads
            # the threads torch was given run one-thread passes side by side
            assert len(probe.runners) == 1 if threads == 1 else len(probe.runners) > 1
        assert set(probe.threads) == {1}
        assert results[1] == results[0] and results[2] == results[0]  # bitwise equal
        # left alone, torch's count decides (and it is not changed)
        loose = NLIOracle(device="cpu", cpu_threads=None)
        loose.model = ThreadProbe(loose.model)
        torch.set_num_threads(2)
        loose.score(THREAD_PAIRS[:2])
        assert set(loose.model.threads) == {2} and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.determinism
def test_oracles_with_other_thread_counts_never_change_them_under_each_other(
    tiny_model_dir: str,
) -> None:
    one = NLIOracle(tiny_model_dir, device="cpu", cpu_threads=1)
    two = NLIOracle(tiny_model_dir, device="cpu", cpu_threads=2)
    one.model, two.model = ThreadProbe(one.model), ThreadProbe(two.model)
    expected = {id(o): o.score(PAIRS) for o in (one, two)}
    with ThreadPoolExecutor(4) as pool:
        runs = [pool.submit(o.score, PAIRS) for _ in range(6) for o in (one, two)]
        for future, oracle in zip(runs, [o for _ in range(6) for o in (one, two)], strict=True):
            assert future.result() == expected[id(oracle)]
    assert set(one.model.threads) == {1} and set(two.model.threads) == {2}


@pytest.mark.skipif(own_threads() is None, reason="torch without MKL: the process-wide setting")
def test_other_threads_keep_torchs_thread_count_during_a_call() -> None:
    """Torch's thread count is process-wide and read once per thread: ENE's passes hold their
    own count on their own threads, so a thread of the host that first uses torch while ENE
    scores still gets the host's count."""
    seen: list[int] = []
    once = threading.Lock()  # passes run on several threads at once

    class FirstTorchCall(ThreadProbe):
        def forward(self, **kwargs):  # type: ignore[no-untyped-def]
            with once:
                if not seen:
                    host = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
                    host.start()
                    host.join()
            return super().forward(**kwargs)

    before = torch.get_num_threads()
    try:
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            oracle = NLIOracle(device="cpu")
            oracle.model = FirstTorchCall(oracle.model)
            seen.clear()
            oracle.score(THREAD_PAIRS[:4])
            assert seen == [threads] and set(oracle.model.threads) == {1}
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)


def _score_in_child(oracle: NLIOracle, results: Any) -> None:
    results.put(oracle.score(PAIRS[:6]))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_process_scores_with_its_own_worker_threads(tiny_model_dir: str) -> None:
    """A process forked after the oracle ran passes on worker threads has none of them: it
    makes its own (it would otherwise wait for threads that do not exist)."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        oracle = NLIOracle(tiny_model_dir, device="cpu")
        expected = oracle.score(PAIRS[:6])  # two workers in the parent
        fork = multiprocessing.get_context("fork")
        results = fork.Queue()
        child = fork.Process(target=_score_in_child, args=(oracle, results))
        child.start()
        try:
            got = results.get(timeout=120)
            child.join(timeout=60)
        finally:
            if child.is_alive():
                child.kill()
        assert child.exitcode == 0 and got == expected
    finally:
        torch.set_num_threads(before)


def test_cpu_threads_must_be_positive(tiny_model_dir: str) -> None:
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(InvalidInputError, match="cpu_threads"):
            NLIOracle(tiny_model_dir, device="cpu", cpu_threads=bad)  # type: ignore[arg-type]


def test_a_lone_pair_is_read_from_its_tokens_as_the_gather_would_build_it(
    tiny_model_dir: str,
) -> None:
    """A one-pair pass at the pair's own length takes its tokens as they lie (a slice of the
    uploaded tokens, no gather): the scores are bitwise those of the gathered inputs."""
    oracle = NLIOracle(tiny_model_dir, device="cpu")
    sliced = oracle.score(PAIRS)
    upload = oracle._upload

    def no_host_lengths(ids, types):  # type: ignore[no-untyped-def]
        tokens = upload(ids, types)
        return dataclasses.replace(tokens, host_lengths=[-1] * len(ids))  # the gather path

    oracle._upload = no_host_lengths  # type: ignore[method-assign]
    assert oracle.score(PAIRS) == sliced


def test_truncation_is_recorded(tiny_model_dir: str, device: str) -> None:
    oracle = NLIOracle(tiny_model_dir, device=device, max_length=32)
    short, long = oracle.score(
        [("the cat sat.", "the cat sat."), ("the cat sat. " * 50, "the cat.")]
    )
    assert not short.truncated and long.truncated
    (huge_claim,) = oracle.score([("the cat sat.", "the cat sat on the mat. " * 40)])
    assert huge_claim.truncated


def test_engine_on_real_oracle_counts_and_cache(tiny_model_dir: str, device: str) -> None:
    engine = NecessityEngine(NLIOracle(tiny_model_dir, device=device), threshold=0.3)
    contexts = ["The cat sat on the mat.", "Paris is the capital of France.", "The tower is tall."]
    first = engine.evaluate("The cat sat on the mat. Paris is the capital.", contexts)
    second = engine.evaluate("The cat sat on the mat. Paris is the capital.", contexts)
    assert first.verdicts() == second.verdicts()
    stats = second.stats
    assert stats.forward_pairs == 0
    assert stats.cache_hits + stats.empty_premises == stats.oracle_checks
    assert first.verifier.model == tiny_model_dir
    assert first.contexts[0].tokens > 0


def test_two_way_model_maps_labels(tmp_path: Path) -> None:
    path = make_tiny_nli_model(
        str(tmp_path / "m2"), id2label={0: "not_entailment", 1: "entailment"}
    )
    oracle = NLIOracle(path)
    assert (oracle.entail_index, oracle.contra_index) == (1, None)
    assert all(s.contra == 0.0 for s in oracle.score(PAIRS[:3]))


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, (0, 2)),
        ({"0": "contradiction", "1": "entailment", "2": "neutral"}, (1, 0)),
        ({0: "entailment", 1: "not-entailment"}, (0, None)),
    ],
)
def test_label_spellings(labels: dict, expected: tuple) -> None:
    assert label_indices(labels) == expected


@pytest.mark.parametrize(
    "labels", [{0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, {0: "neutral", 1: "x"}]
)
def test_unmappable_labels_raise(labels: dict) -> None:
    with pytest.raises(LabelMappingError, match=r"config\.id2label"):
        label_indices(labels)


def test_unmappable_model_raises(tmp_path: Path) -> None:
    path = make_tiny_nli_model(str(tmp_path / "bad"), id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(LabelMappingError):
        NLIOracle(path)


def test_missing_models_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="never downloads"):
        NLIOracle("some-org/not-a-local-model")
    with pytest.raises(ModelNotFoundError, match=r"config\.json"):
        NLIOracle(tmp_path)


def test_threshold_comes_from_the_model_config(tmp_path: Path) -> None:
    path = Path(make_tiny_nli_model(str(tmp_path / "tau")))
    config = json.loads((path / "config.json").read_text())
    config["ene_threshold"] = 0.42
    (path / "config.json").write_text(json.dumps(config))
    assert NecessityEngine(NLIOracle(path)).threshold == 0.42
    assert NecessityEngine(NLIOracle(path), threshold=0.6).threshold == 0.6


def test_non_deterministic_mode_scores_the_same_pairs(tiny_model_dir: str, device: str) -> None:
    oracle = NLIOracle(tiny_model_dir, device=device, batch_size=8)
    exact = oracle.score(PAIRS)
    fast = NLIOracle(tiny_model_dir, device=device, batch_size=8, deterministic=False).score(PAIRS)
    assert len(fast) == len(exact)
    tol = tolerance(oracle)
    for a, b in zip(exact, fast, strict=True):
        assert abs(a.entail - b.entail) < tol and abs(a.contra - b.contra) < tol


# -- device choice ---------------------------------------------------------------------------
def test_device_comes_from_the_argument_then_the_environment(
    tiny_model_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert NLIOracle(tiny_model_dir).device == torch.device("cpu")
    monkeypatch.setenv(DEVICE_ENV, "tpu-please")
    with pytest.raises(InvalidInputError, match=DEVICE_ENV):
        NLIOracle(tiny_model_dir)
    assert NLIOracle(tiny_model_dir, device="cpu").device.type == "cpu"  # the argument wins
    with pytest.raises(InvalidInputError, match="unknown device device="):
        NLIOracle(tiny_model_dir, device="gpu0")
    monkeypatch.setenv(DEVICE_ENV, "auto")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert NLIOracle(tiny_model_dir).device.type == expected


def test_missing_cuda_is_a_typed_error(tiny_model_dir: str) -> None:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(InvalidInputError, match="device='cpu'"):
        NLIOracle(tiny_model_dir, device=f"cuda:{count}")  # one past the last device


def test_dtype_names_and_aliases(tiny_model_dir: str, device: str) -> None:
    half = NLIOracle(tiny_model_dir, device=device, dtype="bf16")
    assert half.dtype == torch.bfloat16 == next(half.model.parameters()).dtype
    full = NLIOracle(tiny_model_dir, device=device, dtype="float32")
    for a, b in zip(full.score(PAIRS[:8]), half.score(PAIRS[:8]), strict=True):
        assert abs(a.entail - b.entail) < 2e-2 and abs(a.contra - b.contra) < 2e-2
    with pytest.raises(InvalidInputError, match="unknown dtype"):
        NLIOracle(tiny_model_dir, device=device, dtype="int8")
    with pytest.raises(InvalidInputError, match="bucket_tokens"):
        NLIOracle(tiny_model_dir, device=device, bucket_tokens=0)


# -- out of memory: the real oracle on a model that fails above N rows ----------------------
class RowLimit(torch.nn.Module):
    """Wraps a model; a forward with more than ``max_rows`` rows raises the real OOM error.

    It stands in for a device that is out of memory; the oracle code under test is unchanged.
    """

    def __init__(self, inner: torch.nn.Module, max_rows: int) -> None:
        super().__init__()
        self.inner, self.max_rows, self.shapes = inner, max_rows, []

    def forward(self, input_ids: torch.Tensor, **kwargs):  # type: ignore[no-untyped-def]
        self.shapes.append(tuple(input_ids.shape))
        if input_ids.shape[0] > self.max_rows:
            raise torch.OutOfMemoryError(f"out of memory: {input_ids.shape[0]} rows (test)")
        return self.inner(input_ids=input_ids, **kwargs)


def multi_row(oracle: NLIOracle) -> NLIOracle:
    """The groups of ``batch_size`` rows a GPU runs, also on a CPU (where a deterministic pass
    holds one pair), so that an out-of-memory split has rows to split there too. On a CPU the
    scores of a pair in such groups may then differ in their last digits with its position."""
    if oracle.device.type == "cpu":
        oracle._rows = lambda length: max(  # type: ignore[method-assign]
            1, min(oracle.batch_size, oracle.max_batch_tokens // length)
        )
    return oracle


def test_out_of_memory_splits_the_group_and_keeps_the_smaller_size(
    tiny_model_dir: str, device: str
) -> None:
    reference = NLIOracle(tiny_model_dir, device=device, batch_size=8).score(PAIRS)
    oracle = multi_row(NLIOracle(tiny_model_dir, device=device, batch_size=8))
    oracle.model = RowLimit(oracle.model, max_rows=3)
    scores = oracle.score(PAIRS)
    tol = tolerance(oracle)
    for a, b in zip(reference, scores, strict=True):
        assert abs(a.entail - b.entail) < tol and abs(a.contra - b.contra) < tol
    assert oracle.oom_splits == 2  # 8 rows -> 4 -> 2, then every later group fits at once
    assert [rows for rows, _ in oracle.model.shapes].count(8) == 1
    done = len(oracle.model.shapes)
    again = oracle.score(list(reversed(PAIRS)))
    if oracle.device.type != "cpu":  # one pair per pass is the CPU's rule, not these groups
        assert again == list(reversed(scores))  # the fixed-shape rule holds after the split
    for a, b in zip(reversed(again), scores, strict=True):
        assert abs(a.entail - b.entail) < tol and abs(a.contra - b.contra) < tol
    assert all(rows <= 3 for rows, _ in oracle.model.shapes[done:])
    assert oracle.oom_splits == 2


REFERENCE: dict[tuple[str, str, int], NLIOracle] = {}  # unlimited oracles, one per batch size


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    max_rows=st.integers(1, 9),
    batch=st.sampled_from([1, 4, 8, 16]),
    subset=st.lists(st.integers(0, len(PAIRS) - 1), min_size=1, max_size=24),
)
def test_any_row_limit_gives_the_same_scores(
    tiny_model_dir: str, device: str, max_rows: int, batch: int, subset: list[int]
) -> None:
    pairs = [PAIRS[i] for i in subset]
    key = (tiny_model_dir, device, batch)
    if key not in REFERENCE:
        REFERENCE[key] = NLIOracle(tiny_model_dir, device=device, batch_size=batch)
    expected = REFERENCE[key].score(pairs)
    oracle = multi_row(NLIOracle(tiny_model_dir, device=device, batch_size=batch))
    oracle.model = RowLimit(oracle.model, max_rows=max_rows)
    got = oracle.score(pairs)
    tol = tolerance(oracle)
    assert [s.truncated for s in got] == [s.truncated for s in expected]
    for a, b in zip(expected, got, strict=True):
        assert abs(a.entail - b.entail) < tol and abs(a.contra - b.contra) < tol
    assert (oracle.oom_splits > 0) == any(rows > max_rows for rows, _ in oracle.model.shapes)
    done, splits = len(oracle.model.shapes), oracle.oom_splits
    assert oracle.score(pairs) == got  # the sizes learnt from the OOMs fit from then on
    assert oracle.oom_splits == splits
    assert all(rows <= max_rows for rows, _ in oracle.model.shapes[done:])


def test_one_row_out_of_memory_is_a_typed_error_the_engine_records(
    tiny_model_dir: str, device: str
) -> None:
    oracle = multi_row(NLIOracle(tiny_model_dir, device=device, batch_size=4))
    inner = oracle.model
    oracle.model = RowLimit(inner, max_rows=0)  # nothing fits
    with pytest.raises(OracleOutOfMemoryError, match="single pair") as caught:
        oracle.score(PAIRS[:5])
    assert isinstance(caught.value, OracleError) and "max_length" in str(caught.value)
    assert [rows for rows, _ in oracle.model.shapes] == [4, 2, 1]
    assert oracle.oom_token_cap is None  # no size fitted: the groups stay as they were

    engine = NecessityEngine(oracle, threshold=0.3)
    contexts = ["The cat sat on the mat.", "Paris is the capital of France."]
    with pytest.raises(OracleOutOfMemoryError):
        engine.evaluate("The cat sat on the mat.", contexts)
    (recorded,) = engine.evaluate_many(
        [{"answer": "Paris is the capital.", "contexts": contexts}], return_exceptions=True
    )
    assert isinstance(recorded, OracleOutOfMemoryError)
    future = engine.submit("The cat sat.", contexts)
    assert isinstance(future.exception(timeout=30), OracleOutOfMemoryError)
    oracle.model = inner  # memory is back: the same engine and worker carry on
    eng = engine.submit("The cat sat.", contexts).result(timeout=30)
    assert eng.claims[0].status in {"supported", "unsupported", "contradicted"}
    assert engine.worker_stats["failed"] == 1 and engine.worker_stats["completed"] == 1
    engine.close()


def test_out_of_memory_while_uploading_the_inputs_is_a_typed_error(
    tiny_model_dir: str, device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    oracle = NLIOracle(tiny_model_dir, device=device, batch_size=4)
    before = oracle.score(PAIRS[:3])
    real_upload = oracle._upload

    def full_device(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise torch.OutOfMemoryError("out of memory: tried to allocate 2.00 MiB (test)")

    monkeypatch.setattr(oracle, "_upload", full_device)  # the device, not the oracle, fails
    with pytest.raises(OracleOutOfMemoryError, match="inputs or results of 3 pair") as caught:
        oracle.score(PAIRS[:3])
    assert isinstance(caught.value, OracleError) and "device='cpu'" in str(caught.value)
    (recorded,) = NecessityEngine(oracle, threshold=0.3).evaluate_many(
        [{"answer": "Paris is the capital.", "contexts": ["Paris is the capital of France."]}],
        return_exceptions=True,
    )
    assert isinstance(recorded, OracleOutOfMemoryError)
    monkeypatch.setattr(oracle, "_upload", real_upload)
    assert oracle.score(PAIRS[:3]) == before and oracle.oom_splits == 0
