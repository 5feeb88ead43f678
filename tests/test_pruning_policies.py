"""Keep policies: the fail-safe default keeps contradicting and uncertain evidence, says why, and
refuses a graph of other contexts; the ENG records what each claim's premise was fed."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from ene_core import (
    DEFAULT_KEEP,
    EvidenceNecessityGraph,
    InvalidInputError,
    KeepReason,
    NecessityEngine,
    NecessityResult,
    PruneMismatchError,
    prune,
)
from ene_core.kit.pruning import (
    KEEP_POLICIES,
    SafeMargins,
    supporting_alone,
    tokens_saved_by_policy,
    uncertain,
)

# The example: the 330-metre chunk proves the first claim wrong.
CONTEXTS = [
    "The Eiffel Tower is 330 metres tall.",
    "Bananas are yellow.",
    "Paris is the capital of France.",
]
ANSWER = "The Eiffel Tower is 500 metres tall. Paris is the capital of France."
NONE = SafeMargins(0.0, 0.0, 0.0)


@pytest.fixture
def eng(keyword_engine: NecessityEngine) -> EvidenceNecessityGraph:
    return keyword_engine.evaluate(ANSWER, CONTEXTS)


def test_the_default_keeps_a_contradicting_chunk_and_says_why(eng) -> None:
    assert DEFAULT_KEEP == "safe"
    minimal = prune(CONTEXTS, eng, keep="minimal")
    assert minimal.kept == [CONTEXTS[2]] and minimal.policy == "minimal"
    result = prune(CONTEXTS, eng)
    assert result.policy == "safe" and result.reason == "kept the safe set"
    assert result.kept == [CONTEXTS[0], CONTEXTS[2]] and result.dropped == [CONTEXTS[1]]
    assert result.why == ((KeepReason("contradicts", 0),), (KeepReason("needed"),))
    assert result.explain() == ["0: contradicts claim 0", "2: needed"]
    assert result.tokens_saved == eng.contexts[1].tokens


def test_the_eng_records_what_fed_each_premise(eng) -> None:
    wrong, right = eng.claims
    assert wrong.status == "contradicted" and wrong.premise_contexts == [0]
    assert wrong.p_entail_alone is not None and len(wrong.p_entail_alone) == 1
    assert right.status == "supported" and right.premise_contexts == [2]
    assert right.p_entail_alone is None  # only claims not supported are checked chunk by chunk
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng


def test_an_uncertain_verdict_keeps_the_chunks_of_its_premise(keyword_engine) -> None:
    # KeywordOracle: "Spain" is missing, so entailment is 0.4 * 2/3 = 0.27, below tau = 0.5
    contexts = ["Paris is the capital of France.", "Owls hunt at night.", "Bread is baked."]
    eng = keyword_engine.evaluate("Paris is the capital of Spain. Owls hunt at night.", contexts)
    doubt = eng.claims[0]
    assert doubt.status == "unsupported" and doubt.premise_contexts == [0]
    assert prune(contexts, eng, margins=NONE).kept == [contexts[1]]
    near = prune(contexts, eng, margins=SafeMargins(entail=0.25, contra=0.0, alone=0.0))
    assert near.kept == contexts[:2]
    assert near.why[0] == (KeepReason("uncertain", 0),)
    assert str(near.why[0][0]) == "uncertain claim 0"
    # the same claim through its best single chunk: uncertain once it is within the margin
    assert not uncertain(eng, doubt, SafeMargins(0.0, 0.0, 0.2))
    assert uncertain(eng, doubt, SafeMargins(0.0, 0.0, 0.25))


def test_uncertain_follows_both_thresholds_and_the_best_single_chunk(eng) -> None:
    claim = eng.claims[1].model_copy(
        update={"status": "unsupported", "p_entail": 0.1, "p_contra": 0.1}
    )
    assert not uncertain(eng, claim, SafeMargins(0.2, 0.2, 0.2))
    contra = claim.model_copy(update={"p_contra": 0.45})  # tau_c = 0.5
    assert uncertain(eng, contra, SafeMargins(0.0, 0.1, 0.0))
    assert not uncertain(eng, contra, SafeMargins(0.0, 0.01, 0.0))
    alone = claim.model_copy(update={"p_entail_alone": [0.05, 0.42]})  # tau = 0.5
    assert uncertain(eng, alone, SafeMargins(0.0, 0.0, 0.1))
    assert not uncertain(eng, alone, SafeMargins(0.0, 0.0, 0.05))
    supported = eng.claims[1].model_copy(update={"p_entail": 0.55})
    assert uncertain(eng, supported, SafeMargins(0.1, 0.0, 0.0))


def test_a_contradicted_claim_keeps_the_chunk_that_alone_supports_it(eng) -> None:
    # issue 54: a true claim called contradicted lost the chunk that alone entails it
    wrong = eng.claims[0].model_copy(
        update={"premise_contexts": [0, 1], "p_entail_alone": [0.2, 0.8]}
    )  # tau = 0.5: chunk 1 alone supports the claim the engine called contradicted
    assert wrong.status == "contradicted"
    assert supporting_alone(eng, wrong, NONE) == [1]
    assert supporting_alone(eng, wrong, SafeMargins(0.0, 0.0, 0.35)) == [0, 1]
    graph = eng.model_copy(update={"claims": [wrong, eng.claims[1]]})
    kept = prune(CONTEXTS, graph, margins=NONE)
    assert kept.kept_indices == [0, 1, 2]
    assert kept.why[1] == (KeepReason("uncertain", 0),)
    # the twin: the same chunk scoring under tau alone is dropped as before
    low = wrong.model_copy(update={"p_entail_alone": [0.2, 0.3]})
    graph = eng.model_copy(update={"claims": [low, eng.claims[1]]})
    assert prune(CONTEXTS, graph, margins=NONE).kept_indices == [0, 2]
    # a supported claim is never asked
    assert supporting_alone(eng, eng.claims[1], NONE) == []


def test_a_graph_without_premise_records_keeps_everything_for_an_uncertain_claim() -> None:
    data = json.loads((Path(__file__).parent / "data" / "eng_1_2.json").read_text())
    old = EvidenceNecessityGraph.from_dict(data)
    assert old.claims[0].premise_contexts is None
    items = list(range(len(old.contexts)))
    tight = prune(items, old, margins=NONE)
    assert tight.kept == [0, 2]
    assert tight.why[1] == (KeepReason("needed"), KeepReason("contradicts", 2))
    wide = prune(items, old, margins=SafeMargins(0.5, 0.0, 0.0))  # every claim is now uncertain
    assert wide.kept == items
    assert KeepReason("uncertain", 0) in wide.why[-1]


def test_every_policy_and_its_tokens(eng) -> None:
    saved = tokens_saved_by_policy(eng)
    assert set(saved) == set(KEEP_POLICIES)
    assert saved["minimal"] == sum(c.tokens for c in eng.contexts if not c.used)
    assert saved["safe"] == eng.contexts[1].tokens < saved["minimal"]
    assert saved["cited"] == 0  # the answer cites nothing: nothing pruned
    with pytest.raises(InvalidInputError, match="keep must be one of"):
        prune(CONTEXTS, eng, keep="all")  # type: ignore[arg-type]


def test_a_graph_of_other_contexts_is_a_typed_error_naming_the_first_mismatch(eng) -> None:
    with pytest.raises(PruneMismatchError, match=r"item 0 .* is not the graph's context 0"):
        prune(list(reversed(CONTEXTS)), eng)
    other = [CONTEXTS[0], CONTEXTS[1], "Rome is the capital of Italy."]
    with pytest.raises(PruneMismatchError, match="item 2") as caught:
        prune(other, eng)
    assert isinstance(caught.value, InvalidInputError)
    with pytest.raises(PruneMismatchError, match="same list"):
        prune(CONTEXTS[:2], eng)
    with pytest.raises(PruneMismatchError, match="item 1 is not a context"):
        prune([CONTEXTS[0], object(), CONTEXTS[2]], eng)
    # the same chunks as mappings (their ids), or by text under other ids, or as positions
    as_dicts = [{"id": c.id, "text": c.text} for c in eng.contexts]
    assert prune(as_dicts, eng).kept_indices == [0, 2]
    renamed = [{"id": f"doc-{i}", "text": t} for i, t in enumerate(CONTEXTS)]
    assert prune(renamed, eng).kept_indices == [0, 2]
    assert prune([0, 1, 2], eng).kept == [0, 2]


def test_a_failed_or_skipped_result_keeps_everything(eng) -> None:
    def result(**kw: object) -> NecessityResult:
        return NecessityResult("r", kw.get("eng"), kw.get("error"), 0, 0, skipped=kw.get("skipped"))  # type: ignore[arg-type]

    failed = prune(CONTEXTS, result(error="OracleError: down"))
    assert failed.kept == CONTEXTS and "failed (OracleError: down)" in failed.reason
    assert (
        failed.why == ((KeepReason("unpruned"),),) * 3 and str(failed.why[0][0]) == "nothing pruned"
    )
    skipped = prune(CONTEXTS, result(skipped="no retrieval"))
    assert skipped.kept == CONTEXTS and "skipped (no retrieval)" in skipped.reason
    assert prune(CONTEXTS, result(eng=eng)).kept_indices == [0, 2]
    record = {"line": 3, "error": "not JSON"}  # an ene eval error record
    assert prune(CONTEXTS, record).kept == CONTEXTS
    assert prune(CONTEXTS, json.loads(eng.to_json())).kept_indices == [0, 2]
    with pytest.raises(InvalidInputError, match="prune needs"):
        prune(CONTEXTS, "not a graph")  # type: ignore[arg-type]


def test_every_entry_point_defaults_to_the_safe_policy() -> None:
    lc = pytest.importorskip("ene_integrations.langchain")
    li = pytest.importorskip("ene_integrations.llama_index")
    for entry in (
        prune,
        lc.NecessityPruner,
        lc.pruning_middleware,
        li.prune_unused,
        li.aprune_unused,
        li.NecessityQueryEngine,
        li.NecessityChatEngine,
    ):
        assert inspect.signature(entry).parameters["keep"].default == DEFAULT_KEEP, entry


def test_langchain_pruner_keeps_the_contradicting_document_by_default(keyword_engine) -> None:
    lc = pytest.importorskip("ene_integrations.langchain")
    from langchain_core.documents import Document

    docs = [Document(page_content=t, id=f"d{i}") for i, t in enumerate(CONTEXTS)]
    item = {"answer": ANSWER, "context": docs}
    out = lc.NecessityPruner(keyword_engine).invoke(item)
    assert out["context"] == [docs[0], docs[2]]
    assert out["tokens_before"] - out["tokens_after"] == out["evidence"].contexts[1].tokens
    minimal = lc.NecessityPruner(keyword_engine, keep="minimal").invoke(item)
    assert minimal["context"] == [docs[2]]


async def test_llama_index_prune_unused_keeps_the_contradicting_node(keyword_engine) -> None:
    li = pytest.importorskip("ene_integrations.llama_index")
    from llama_index.core.base.response.schema import Response
    from llama_index.core.schema import NodeWithScore, TextNode

    nodes = [
        NodeWithScore(node=TextNode(text=t, id_=f"n{i}"), score=1.0) for i, t in enumerate(CONTEXTS)
    ]
    response = Response(ANSWER, source_nodes=nodes)
    for pruned in (
        li.prune_unused(response, engine=keyword_engine),
        await li.aprune_unused(response, engine=keyword_engine),
    ):
        assert [n.node.node_id for n in pruned.source_nodes] == ["n0", "n2"]
        info = pruned.metadata["ene_pruning"]
        assert info["policy"] == "safe" and info["dropped"] == ["n1"]
        assert info["why"] == {"n0": ["contradicts claim 0"], "n2": ["needed"]}
    minimal = li.prune_unused(response, engine=keyword_engine, keep="minimal")
    assert [n.node.node_id for n in minimal.source_nodes] == ["n2"]
    assert len(response.source_nodes) == 3  # the original is untouched


def test_a_verdict_the_engine_overrode_is_uncertain(keyword_engine) -> None:
    # the keyword oracle "contradicts" through the packed premise only (no chunk alone): the
    # engine calls the claim unsupported, against the model, so its premise chunks are kept
    contexts = ["Alpha has 5.", "Beta.", "Gamma is green."]
    eng = keyword_engine.evaluate("Alpha is beta 7. Gamma is green.", contexts)
    overruled, green = eng.claims
    assert overruled.status == "unsupported" and overruled.p_contra > 0.5
    assert uncertain(eng, overruled, NONE) and not uncertain(eng, green, NONE)
    kept = prune(list(contexts), eng, margins=NONE)
    assert kept.kept_indices == [0, 1, 2]
    assert KeepReason("uncertain", 0) in kept.why[0]
