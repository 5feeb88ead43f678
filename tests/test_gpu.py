"""GPU-only behaviour of NLIOracle on the shipped verifier; runs with ``pytest --device cuda``.

Half precision on the device with results close to fp32 on the CPU, the fixed-shape determinism
rule at GPU group sizes, and real CUDA out-of-memory errors (a per-process memory cap), split and
retried or recorded as ``OracleOutOfMemoryError``. On the CPU every test here skips.
"""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from ene_core import NecessityEngine, NLIOracle, OracleOutOfMemoryError  # noqa: E402
from ene_core.verifiers.protocol import Scores  # noqa: E402
from ene_core.verifiers.verdict import decide  # noqa: E402

FACTS = [
    "The Eiffel Tower was completed in 1889 and is 330 metres tall.",
    "Marie Curie won the Nobel Prize in Chemistry in 1911.",
    "The Amazon is the largest rainforest on Earth.",
    "Mount Everest is 8,849 metres above sea level.",
    "The Great Wall of China is more than 21,000 kilometres long.",
    "Penicillin was discovered by Alexander Fleming in 1928.",
    "The Pacific is the deepest ocean, with the Mariana Trench at its floor.",
    "Ada Lovelace wrote the first published algorithm for Babbage's engine.",
    "The Danube flows through ten countries before reaching the Black Sea.",
    "Tokyo hosted the Summer Olympics in 1964 and in 2021.",
]
CLAIMS = [
    "The Eiffel Tower is 330 metres tall.",
    "The Eiffel Tower is 500 metres tall.",
    "Marie Curie won a Nobel Prize in 1911.",
    "Marie Curie won the Nobel Prize in Physics in 1925.",
    "Penicillin was discovered in 1928.",
    "Alexander Fleming was born in Paris.",
    "The Danube reaches the Black Sea.",
    "Tokyo hosted the Olympics twice.",
]


def pairs(n: int, *, long: bool = False, seed: int = 0) -> list[tuple[str, str]]:
    """Premises of 1-4 facts (``long``: 12-20, truncated to the model's maximum) and claims."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.randint(12, 20) if long else rng.randint(1, 4)
        premise = " ".join(rng.choice(FACTS) for _ in range(k))
        out.append((premise, CLAIMS[i % len(CLAIMS)]))
    return out


PAIRS = pairs(96)


@pytest.fixture(scope="module")
def cuda(device: str) -> str:
    if not device.startswith("cuda"):
        pytest.skip("GPU-only behaviour: run with --device cuda")
    return device


@pytest.fixture(scope="module")
def cpu_fp32() -> list[Scores]:
    return NLIOracle(device="cpu").score(PAIRS)


@pytest.fixture
def memory_cap(cuda: str):  # type: ignore[no-untyped-def]
    """``cap(extra_bytes)`` limits this process to what it holds now plus ``extra_bytes``."""
    index = torch.device(cuda).index or 0
    total = torch.cuda.get_device_properties(index).total_memory

    def cap(extra: int) -> None:
        torch.cuda.synchronize(index)
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(
            (torch.cuda.memory_reserved(index) + extra) / total, index
        )

    yield cap
    torch.cuda.set_per_process_memory_fraction(1.0, index)
    torch.cuda.empty_cache()


def test_the_gpu_runs_half_precision_in_big_groups(cuda: str) -> None:
    oracle = NLIOracle(device=cuda)
    half = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    assert oracle.device.type == "cuda" and oracle.dtype == half
    weights = next(oracle.model.parameters())
    assert weights.device.type == "cuda" and weights.dtype == half
    assert (oracle.batch_size, oracle.max_batch_tokens) == (64, 32768)
    assert all(isinstance(s.entail, float) for s in oracle.score(PAIRS[:3]))


@pytest.mark.parametrize(
    ("dtype", "max_diff", "mean_diff"),
    [(None, 0.05, 0.01), ("float16", 0.05, 0.01), ("float32", 1e-3, 1e-4)],
)
def test_gpu_scores_match_cpu_fp32(
    cuda: str, cpu_fp32: list[Scores], dtype: str | None, max_diff: float, mean_diff: float
) -> None:
    oracle = NLIOracle(device=cuda, dtype=dtype)
    got = oracle.score(PAIRS)
    diffs = [
        max(abs(a.entail - b.entail), abs(a.contra - b.contra))
        for a, b in zip(cpu_fp32, got, strict=True)
    ]
    assert max(diffs) < max_diff and sum(diffs) / len(diffs) < mean_diff, (max(diffs), oracle.dtype)
    tau = oracle.default_threshold or 0.5
    margin = max(diffs)  # no verdict can flip for a pair further than this from every boundary
    clear = [
        i
        for i, s in enumerate(cpu_fp32)
        if min(abs(s.entail - tau), abs(s.contra - tau), abs(s.entail - s.contra)) > margin
    ]
    assert len(clear) >= len(PAIRS) // 4  # the comparison below is not vacuous
    assert [decide(cpu_fp32[i], tau) for i in clear] == [decide(got[i], tau) for i in clear]
    assert len({decide(s, tau) for s in got}) == 3  # the pairs exercise every verdict


def test_gpu_groups_do_not_depend_on_batch_neighbours(cuda: str) -> None:
    oracle = NLIOracle(device=cuda)
    mixed = PAIRS + pairs(40, long=True, seed=1)  # several length buckets, one truncated
    reference = oracle.score(mixed)
    rng = random.Random(3)
    for _ in range(4):
        subset = rng.sample(range(len(mixed)), rng.randint(1, len(mixed)))
        assert oracle.score([mixed[i] for i in subset]) == [reference[i] for i in subset]
    assert [oracle.score([p])[0] for p in mixed[:6]] == reference[:6]  # bitwise, alone


def test_gpu_overlap_reports_every_pass_with_the_same_scores(cuda: str) -> None:
    """On by default on CUDA: each pass comes back through pinned copies and events while the
    device runs on; the scores, and the engine's ENGs, are those of one transfer per call."""
    oracle = NLIOracle(device=cuda)
    assert oracle.overlap
    mixed = PAIRS + pairs(40, long=True, seed=1)
    seen: list[int] = []
    streamed = oracle.score_parts(
        [((p,), h) for p, h in mixed], lambda done, scores: seen.extend(done)
    )
    assert sorted(seen) == list(range(len(mixed)))
    assert streamed == oracle.score(mixed)
    requests = [{"answer": " ".join(CLAIMS[i : i + 3]), "contexts": FACTS} for i in range(6)]
    overlapped = NecessityEngine(oracle, support_matrix=True).evaluate_many(requests)
    plain = NecessityEngine(NLIOracle(device=cuda, overlap=False), support_matrix=True)
    assert [e.verdicts() for e in overlapped] == [
        e.verdicts() for e in plain.evaluate_many(requests)
    ]


def test_real_gpu_out_of_memory_is_split_and_retried(cuda: str, memory_cap) -> None:  # type: ignore[no-untyped-def]
    work = pairs(2048, long=True, seed=2)  # every pair fills the 192-token bucket
    reference = NLIOracle(device=cuda, dtype="float32").score(work[:64])
    oracle = NLIOracle(device=cuda, dtype="float32", batch_size=4096, max_batch_tokens=1 << 30)
    memory_cap(1 << 30)  # 4096 x 192 fp32 activations need several GiB
    got = oracle.score(work)
    assert oracle.oom_splits >= 1 and oracle.oom_token_cap is not None
    assert oracle.oom_token_cap // oracle.max_length < 4096
    for a, b in zip(reference, got[:64], strict=True):
        assert abs(a.entail - b.entail) < 1e-4 and abs(a.contra - b.contra) < 1e-4
    splits = oracle.oom_splits
    assert oracle.score(work[:100]) == got[:100]  # the learnt size fits and keeps shapes fixed
    assert oracle.oom_splits == splits


def test_real_gpu_out_of_memory_on_one_row_is_recorded(cuda: str, memory_cap) -> None:  # type: ignore[no-untyped-def]
    oracle = NLIOracle(device=cuda, dtype="float32")
    before = oracle.score(PAIRS[:3])
    memory_cap(64 << 20)
    ballast = []  # fill every free block, largest first, so not even one row fits
    size = 64 << 20
    while size >= 512:
        try:
            ballast.append(torch.empty(size, dtype=torch.uint8, device=cuda))
        except torch.OutOfMemoryError:
            size //= 2
    try:
        with pytest.raises(OracleOutOfMemoryError, match="out of memory"):
            oracle.score(pairs(1, long=True))
        engine = NecessityEngine(oracle)
        (recorded,) = engine.evaluate_many(
            [{"answer": CLAIMS[0], "contexts": FACTS[:3]}], return_exceptions=True
        )
        assert isinstance(recorded, OracleOutOfMemoryError)
    finally:
        ballast.clear()
    assert oracle.score(PAIRS[:3]) == before  # memory is back: same oracle, same numbers
