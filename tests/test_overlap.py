"""Planning while the model runs, and what planning caches by text: same ENGs, same counts."""

from __future__ import annotations

import math
import random
import threading
from collections import Counter
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import EvidenceNecessityGraph, NecessityEngine, OracleError
from ene_core.engine.premise import EvidenceIndex, PremisePacker
from ene_core.text.words import content_words
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores

FACTS = [
    "Paris is the capital of France.",
    "The tower is 330 metres tall.",
    "The tower is 300 metres tall.",
    "Bananas are yellow fruit.",
    "Rome has many fountains.",
    "The river floods every spring.",
    "Owls hunt at night.",
]


def requests(n: int) -> list[dict[str, object]]:
    rng = random.Random(n)
    return [
        {
            "answer": " ".join(rng.sample(FACTS, rng.randint(1, 3))),
            "contexts": rng.sample(FACTS, rng.randint(1, 6)),
        }
        for _ in range(n)
    ]


def counts(eng: EvidenceNecessityGraph) -> tuple[int, int, int, int]:
    s = eng.stats
    return s.oracle_checks, s.forward_pairs, s.cache_hits, s.empty_premises


class PassingOracle(KeywordOracle):
    """The keyword oracle as a model that reports its forward passes (``size`` pairs each, the
    last pass first when ``backwards``) through ``on_scored``; ``after_first`` runs once the
    first pass of a call is reported."""

    overlap = True

    def __init__(
        self, size: int = 2, backwards: bool = True, after_first: Callable[[], None] | None = None
    ) -> None:
        super().__init__()
        self.size, self.backwards, self.after_first = size, backwards, after_first
        self.streamed_calls = 0

    def score_parts(
        self,
        pairs: Sequence[tuple[Sequence[str], str]],
        on_scored: Callable[[list[int], list[Scores]], None] | None = None,
    ) -> list[Scores]:
        scores = self.score([("".join(parts), claim) for parts, claim in pairs])
        if on_scored is not None:
            self.streamed_calls += 1
            n, size = len(pairs), self.size
            passes = [list(range(s, min(s + size, n))) for s in range(0, n, size)]
            for k, done in enumerate(passes[::-1] if self.backwards else passes):
                on_scored(done, [scores[i] for i in done])
                if k == 0 and self.after_first is not None:
                    self.after_first()
        return scores


def test_overlapped_rounds_give_the_same_engs_and_counts() -> None:
    batch = requests(30)
    oracle = PassingOracle()
    overlapped = NecessityEngine(oracle, support_matrix=True).evaluate_many(batch)
    plain = NecessityEngine(KeywordOracle(), support_matrix=True).evaluate_many(batch)
    assert oracle.streamed_calls > 0
    assert [e.verdicts() for e in overlapped] == [e.verdicts() for e in plain]
    assert [counts(e) for e in overlapped] == [counts(e) for e in plain]


TOWER = [
    "The tower in Paris is 330 metres tall and was finished in 1889.",
    "Paris hosts many tourists every spring.",
    "The river floods every spring.",
]


@pytest.mark.parametrize("size", [1, 2, 3])
def test_pairs_read_twice_are_reported_once_both_readings_are_in(size: int) -> None:
    # The tower's premise packs a sentence that shares one word: it is also read as its focus,
    # and the passes that bring a pair's two readings differ (backwards, `size` pairs each).
    batch = [
        {
            "answer": "The tower in Paris is 330 metres tall. The river floods every spring.",
            "contexts": TOWER,
        },
        *requests(8),
    ]
    oracle = PassingOracle(size=size)
    overlapped = NecessityEngine(oracle).evaluate_many(batch)
    plain = NecessityEngine(KeywordOracle()).evaluate_many(batch)
    assert oracle.streamed_calls > 0 and overlapped[0].stats.focus_pairs > 0
    assert [e.model_dump(exclude={"stats"}) for e in overlapped] == [
        e.model_dump(exclude={"stats"}) for e in plain
    ]
    assert [(counts(e), e.stats.focus_pairs) for e in overlapped] == [
        (counts(e), e.stats.focus_pairs) for e in plain
    ]


def test_plans_move_on_while_the_model_scores_the_rest() -> None:
    stepped = threading.Event()

    class Engine(NecessityEngine):
        def _plan(self, request, tally, tokens):  # type: ignore[no-untyped-def]
            plan = super()._plan(request, tally, tokens)
            checks = next(plan)
            while True:
                scores = yield checks
                stepped.set()  # a plan received its scores
                try:
                    checks = plan.send(scores)
                except StopIteration as done:
                    return done.value

    moved: list[bool] = []
    oracle = PassingOracle(
        size=1, backwards=False, after_first=lambda: moved.append(stepped.wait(30))
    )
    # The first request needs one pair in its first round: the first pass completes it, and it
    # takes its next step while the oracle is still inside the call.
    lone = {"answer": "Owls hunt at night.", "contexts": ["Owls hunt at night."]}
    engs = Engine(oracle).evaluate_many([lone, *requests(12)])
    assert moved and moved[0]
    assert all(isinstance(e, EvidenceNecessityGraph) for e in engs)


def test_an_oracle_failure_mid_round_fails_the_requests_of_the_round() -> None:
    class Failing(PassingOracle):
        def __init__(self) -> None:
            super().__init__(after_first=self.fail)
            self.armed = True

        def fail(self) -> None:
            if self.armed:
                self.armed = False
                raise RuntimeError("device lost")

    engine = NecessityEngine(Failing())
    batch = requests(8)
    outcomes = engine.evaluate_many(batch, return_exceptions=True)
    assert all(isinstance(o, OracleError) and "device lost" in str(o) for o in outcomes)
    again = engine.evaluate_many(batch)  # the engine is still usable
    plain = NecessityEngine(KeywordOracle()).evaluate_many(batch)
    assert [e.verdicts() for e in again] == [e.verdicts() for e in plain]


@pytest.mark.determinism
def test_nli_oracle_overlap_gives_bitwise_the_same_engs(tiny_model_dir: str, device: str) -> None:
    from ene_core.verifiers.nli import NLIOracle

    batch = requests(16)
    engs = {}
    for overlap in (False, True):
        oracle = NLIOracle(tiny_model_dir, device=device, overlap=overlap)
        assert oracle.overlap is overlap
        engs[overlap] = NecessityEngine(oracle, threshold=0.3, support_matrix=True).evaluate_many(
            batch
        )
    assert [e.verdicts() for e in engs[True]] == [e.verdicts() for e in engs[False]]
    assert [counts(e) for e in engs[True]] == [counts(e) for e in engs[False]]
    pairs = [((fact,), claim) for fact in FACTS for claim in FACTS[:3]]
    seen: list[int] = []
    streamed = oracle.score_parts(pairs, lambda done, scores: seen.extend(done))
    assert sorted(seen) == list(range(len(pairs)))  # every pass reported, each pair once
    assert streamed == oracle.score_parts(pairs)


# -- what planning caches by text --------------------------------------------------------------


def reference_ranking(index: EvidenceIndex, claim: str) -> list[int]:
    """BM25 as written out in the packing rule: every sentence scored against the claim, terms
    added in sorted order; positive scores, best first, ties by position."""
    sentences = [(s.position, Counter(content_words(s.text))) for s in index.sentences]
    n = len(sentences)
    df: Counter[str] = Counter()
    for _, terms in sentences:
        df.update(terms.keys())
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    avg = sum(sum(terms.values()) for _, terms in sentences) / n if n else 1.0
    query = set(content_words(claim))
    scored = []
    for position, terms in sentences:
        length, score = sum(terms.values()), 0.0
        for term in sorted(query & terms.keys()):
            tf = terms[term]
            score += idf[term] * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / avg))
        if score > 0:
            scored.append((-score, position))
    return [position for _, position in sorted(scored)]


WORDS = ["alpha", "beta", "gamma", "delta", "tower", "towers", "paris", "3", "7", "the", "is"]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(
    lambda w: " ".join(w).capitalize() + "."
)
chunk = st.lists(sentence, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(
    contexts=st.lists(chunk, min_size=1, max_size=5),
    claims=st.lists(sentence, min_size=1, max_size=3),
    top_k=st.integers(1, 4),
    keep=st.sets(st.integers(0, 4)),
)
def test_cached_index_ranks_and_packs_like_a_fresh_one(
    contexts: list[str], claims: list[str], top_k: int, keep: set[int]
) -> None:
    packer = PremisePacker(top_k=top_k, max_words=12)
    shared = packer.index(contexts)
    assert packer.index(list(contexts)) is shared  # the same texts: the same index
    for claim in claims:
        fresh = EvidenceIndex(contexts, packer)
        assert [s.position for s, _ in shared._ranking(claim)] == reference_ranking(fresh, claim)
        for subset in (None, keep):
            premise = shared.premise(claim, subset)
            assert premise == fresh.premise(claim, subset)
            assert "".join(premise.parts) == premise.text
            # the focus: some of the packed sentences (fewer), in the same order
            lines = [part.strip() for part in premise.parts]
            focus = [part.strip() for part in premise.focus]
            assert len(focus) < max(len(lines), 1)
            assert focus == [line for line in lines if line in focus]


def test_premise_parts_carry_their_separators() -> None:
    index = PremisePacker().index(
        ["The tower is tall. The tower is in Paris.", "Paris has a tower."]
    )
    premise = index.premise("The tower in Paris is tall.")
    assert premise.parts == (
        "The tower is tall.",
        " The tower is in Paris.",
        "\nParis has a tower.",
    )


@pytest.mark.parametrize("keep", [None, {0}, {1}])
def test_a_premise_is_built_once_per_claim_and_subset(keep: set[int] | None) -> None:
    index = PremisePacker().index(["The tower is tall.", "Paris has a tower."])
    assert index.premise("The tower is tall.", keep) is index.premise("The tower is tall.", keep)
