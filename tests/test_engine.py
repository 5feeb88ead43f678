"""Engine semantics under the transparent KeywordOracle (entailed iff all content words present)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import EvidenceNecessityGraph, InvalidInputError, NecessityEngine, OracleError
from ene_core.verifiers.keyword import KeywordOracle
from ene_core.verifiers.protocol import Scores

CONTEXTS = [
    "Paris is the capital of France. It has many museums.",
    "The Eiffel Tower is in Paris. The tower is 330 metres tall.",
    "Bananas are yellow fruit.",
    "The Eiffel Tower stands in Paris, France.",
]


def by_text(eng: EvidenceNecessityGraph) -> dict[str, object]:
    return {c.text: c for c in eng.claims}


def test_classifications(keyword_engine: NecessityEngine) -> None:
    answer = (
        "Paris is the capital of France [1]. "
        "The Eiffel Tower is in Paris. "
        "The tower is 330 metres tall and Paris is the capital of France. "
        "The tower is 500 metres tall. "
        "Dogs can fly over oceans. "
        "Is it worth a visit?"
    )
    eng = keyword_engine.evaluate(answer, CONTEXTS)
    claims = by_text(eng)
    fragile = claims["Paris is the capital of France."]
    assert (fragile.status, fragile.classification, fragile.necessary) == (
        "supported",
        "fragile",
        [0],
    )
    assert fragile.cited == [1]
    robust = claims["The Eiffel Tower is in Paris."]
    assert (robust.classification, robust.necessary) == ("robust", [])
    joint = claims["The tower is 330 metres tall and Paris is the capital of France."]
    assert (joint.classification, joint.necessary) == ("joint", [0, 1])
    assert claims["The tower is 500 metres tall."].status == "contradicted"
    unsupported = claims["Dogs can fly over oceans."]
    assert (unsupported.status, unsupported.p_entail_without) == ("unsupported", None)
    question = claims["Is it worth a visit?"]
    assert (question.kind, question.status, question.classification) == ("question", None, None)
    assert eng.counts.checkable_claims == 5 and eng.counts.claims == 6
    assert (eng.counts.fragile, eng.counts.joint, eng.counts.robust) == (1, 1, 1)
    # the bananas chunk carries nothing
    assert not eng.contexts[2].used and eng.contexts[2].necessary_for == []
    assert eng.contexts[2].necessity_score == 0.0


def test_necessity_edges_and_scores(keyword_engine: NecessityEngine) -> None:
    eng = keyword_engine.evaluate(
        "Paris is the capital of France. The tower is 330 metres tall.", CONTEXTS
    )
    assert eng.edges == [(0, 0), (1, 1)]
    assert eng.contexts[0].necessary_for == [0] and eng.contexts[1].necessary_for == [1]
    scores = [c.necessity_score for c in eng.contexts]
    assert sum(scores) == pytest.approx(1.0)
    assert scores[2] == scores[3] == 0.0


def test_minimal_sufficient_set_adds_for_robust_claims(keyword_engine: NecessityEngine) -> None:
    # Supported by chunk 1 and chunk 3 alike: no single chunk is necessary, but one must be kept.
    eng = keyword_engine.evaluate("The Eiffel Tower is in Paris.", CONTEXTS)
    assert eng.claims[0].classification == "robust"
    assert len(eng.minimal_sufficient_set) == 1
    assert eng.minimal_sufficient_set[0] in (1, 3)
    kept = [CONTEXTS[i] for i in eng.minimal_sufficient_set]
    again = keyword_engine.evaluate("The Eiffel Tower is in Paris.", kept)
    assert again.claims[0].status == "supported"


def test_minimal_set_drops_additions_made_redundant(keyword_engine: NecessityEngine) -> None:
    contexts = ["alpha beta.", "gamma delta.", "alpha beta gamma delta.", "alpha beta again."]
    eng = keyword_engine.evaluate("Alpha is beta. Gamma is delta.", contexts)
    # Each claim has redundant support; the greedy pass keeps a set that supports both.
    kept = eng.minimal_sufficient_set
    check = keyword_engine.evaluate("Alpha is beta. Gamma is delta.", [contexts[i] for i in kept])
    assert check.counts.supported == 2
    assert len(kept) <= 2


def test_oracle_calls_are_bounded() -> None:
    oracle = KeywordOracle()
    engine = NecessityEngine(oracle, cache_size=0)
    answer = "Paris is the capital of France. The tower is 330 metres tall. Cats bark loudly."
    eng = engine.evaluate(answer, CONTEXTS)
    n, checkable, supported = len(CONTEXTS), 3, 2
    necessity_checks = checkable + supported * n  # baseline + leave-one-out
    mss_checks = eng.stats.oracle_checks - necessity_checks
    assert eng.stats.oracle_checks >= necessity_checks
    assert mss_checks <= supported * (2 * n + 1) + n * supported
    # each fresh check is one row, and one more where its premise is also read as its focus:
    # forward_pairs counts both
    assert oracle.pairs_scored == eng.stats.forward_pairs
    fresh = eng.stats.forward_pairs - eng.stats.focus_pairs
    assert eng.stats.focus_pairs <= fresh
    assert fresh + eng.stats.cache_hits + eng.stats.empty_premises == eng.stats.oracle_checks
    assert fresh <= checkable * (1 + n) + eng.stats.oracle_checks - necessity_checks


def test_unchanged_premise_skips_the_model(keyword_engine: NecessityEngine) -> None:
    # Only chunk 2 enters this claim's premise: leaving out 0, 1 or 3 costs no model call.
    eng = keyword_engine.evaluate("Bananas are yellow fruit.", CONTEXTS)
    assert eng.claims[0].necessary == [2]
    assert eng.stats.oracle_checks == 1 + 4 + 1  # baseline, leave-one-out, minimal-set check
    assert eng.stats.forward_pairs == 1 and eng.stats.empty_premises == 1
    assert eng.stats.cache_hits == 4


def test_cache_makes_repeats_free(keyword_engine: NecessityEngine) -> None:
    first = keyword_engine.evaluate("Paris is the capital of France.", CONTEXTS)
    second = keyword_engine.evaluate("Paris is the capital of France.", CONTEXTS)
    assert first.stats.forward_pairs > 0
    assert second.stats.forward_pairs == 0
    assert first.verdicts() == second.verdicts()


def test_empty_answer_and_no_contexts_are_recorded(keyword_engine: NecessityEngine) -> None:
    empty = keyword_engine.evaluate("", CONTEXTS)
    assert empty.claims == [] and "answer is empty" in empty.warnings[0]
    assert all(not c.used for c in empty.contexts)
    bare = keyword_engine.evaluate("Paris is the capital of France.", [])
    assert bare.claims[0].status == "unsupported"
    assert bare.stats.forward_pairs == 0 and bare.stats.empty_premises == 1
    assert any("no contexts" in w for w in bare.warnings)


def test_bad_inputs_raise_typed_errors(keyword_engine: NecessityEngine) -> None:
    with pytest.raises(InvalidInputError, match="answer must be a str"):
        keyword_engine.evaluate(None, CONTEXTS)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="not a single string"):
        keyword_engine.evaluate("x y", "a chunk")
    with pytest.raises(InvalidInputError, match="context 1 has no text"):
        keyword_engine.evaluate("x y", ["ok", 42])
    with pytest.raises(InvalidInputError, match="threshold"):
        NecessityEngine(KeywordOracle(), threshold=1.5)


def test_context_shapes_and_ids(keyword_engine: NecessityEngine) -> None:
    class Doc:
        def __init__(self, text: str) -> None:
            self.page_content, self.id, self.metadata = text, None, {"source": object()}

    contexts = [
        {"id": "a", "text": "Paris is the capital of France.", "metadata": {"rank": 1}},
        Doc("The tower is 330 metres tall."),
    ]
    eng = keyword_engine.evaluate("Paris is the capital of France.", contexts)
    assert eng.contexts[0].id == "a" and eng.contexts[0].metadata == {"rank": 1}
    assert eng.contexts[1].id.startswith("ctx1-")
    assert isinstance(eng.contexts[1].metadata["source"], str)  # made JSON-safe
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng


def test_evaluate_many_matches_evaluate(keyword_engine: NecessityEngine) -> None:
    requests = [
        {"answer": "Paris is the capital of France.", "contexts": CONTEXTS, "id": "1"},
        {"answer": "The tower is 330 metres tall. Dogs fly.", "contexts": CONTEXTS[:2]},
        {"answer": "", "contexts": []},
    ]
    many = keyword_engine.evaluate_many(requests)
    fresh = NecessityEngine(KeywordOracle())
    single = [fresh.evaluate(r["answer"], r["contexts"], id=r.get("id")) for r in requests]
    assert [e.verdicts() for e in many] == [e.verdicts() for e in single]
    assert many[0].id == "1"


class Garbage(KeywordOracle):
    def score(self, pairs):  # type: ignore[no-untyped-def]
        return [Scores(float("nan"), 2.0) for _ in pairs]


class Short(KeywordOracle):
    def score(self, pairs):  # type: ignore[no-untyped-def]
        return []


@pytest.mark.parametrize("oracle", [Garbage(), Short()])
def test_broken_oracles_raise_oracle_error(oracle: KeywordOracle) -> None:
    engine = NecessityEngine(oracle)
    with pytest.raises(OracleError):
        engine.evaluate("Paris is the capital of France.", CONTEXTS)
    outcomes = engine.evaluate_many(
        [{"answer": "Paris is the capital of France.", "contexts": CONTEXTS}],
        return_exceptions=True,
    )
    assert isinstance(outcomes[0], OracleError)


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(lambda w: " ".join(w) + ".")


@settings(max_examples=60, deadline=None)
@given(
    answer=st.lists(sentence, min_size=1, max_size=3).map(" ".join),
    contexts=st.lists(st.lists(sentence, min_size=1, max_size=2).map(" ".join), max_size=5),
)
def test_removing_an_unused_context_changes_no_status(answer: str, contexts: list[str]) -> None:
    engine = NecessityEngine(KeywordOracle())
    eng = engine.evaluate(answer, contexts)
    for claim in eng.claims:
        assert set(claim.necessary) <= set(range(len(contexts)))
        assert set(claim.necessary) <= set(eng.minimal_sufficient_set)
    for unused in eng.unused_contexts:
        rest = [c for i, c in enumerate(contexts) if i != unused.index]
        again = engine.evaluate(answer, rest)
        assert [c.status for c in again.claims] == [c.status for c in eng.claims]


class _SlowKeywordOracle(KeywordOracle):
    """The keyword oracle, taking time in proportion to the text it scores (like a model)."""

    def score(self, pairs):
        time.sleep(sum(len(p) + len(h) for p, h in pairs) / 20_000)  # 1 ms per 20 characters
        return super().score(pairs)


def test_each_request_gets_its_own_time_in_a_shared_batch() -> None:
    """Requests evaluated together share the batch's wall time (``duration_ms``), but each is
    charged only its share of the model calls (``compute_ms``), by the text it sent."""
    engine = NecessityEngine(_SlowKeywordOracle())
    big = {
        "answer": " ".join(f"The tower {i} is {i} metres tall." for i in range(8)),
        "contexts": [f"The tower {i} is {i} metres tall. " * 5 for i in range(8)],
    }
    small = {"answer": "Owls hunt.", "contexts": ["Owls hunt."]}
    started = time.perf_counter()
    heavy, light = engine.evaluate_many([big, small])
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert heavy.stats.compute_ms > 20 * light.stats.compute_ms
    assert light.stats.duration_ms > 10 * light.stats.compute_ms  # it waited for the batch
    total = heavy.stats.compute_ms + light.stats.compute_ms
    assert 0.8 * elapsed_ms <= total <= 1.05 * elapsed_ms  # the shares add up to the batch
    alone = engine.evaluate(small["answer"], small["contexts"])
    # alone, it is charged its own model calls and never more than its wall time
    assert 0 < alone.stats.compute_ms <= 1.05 * alone.stats.duration_ms + 0.5


def test_repeated_sentences_fill_one_premise_slot() -> None:
    """Near-duplicate chunks must not crowd the evidence out of the top-k premise."""
    contexts = ["Alpha.", "alpha.", "Beta.", "beta. ", "Gamma."]
    eng = NecessityEngine(KeywordOracle()).evaluate("alpha is beta gamma.", contexts)
    (claim,) = eng.claims
    assert claim.status == "supported"
    assert claim.necessary == [4]  # alpha and beta each have a copy; gamma has none
    for copy in (0, 1):
        rest = [c for i, c in enumerate(contexts) if i != copy]
        assert (
            NecessityEngine(KeywordOracle()).evaluate("alpha is beta gamma.", rest).claims[0].status
            == "supported"
        )
