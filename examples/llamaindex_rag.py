"""LlamaIndex RAG with ENE: which retrieved chunks did each claim of the answer need?

Offline and deterministic: a ``VectorStoreIndex`` over a few documents with ``MockEmbedding``
(every node is retrieved), and a mock LLM that answers with the context sentences sharing a
keyword with the question - so the answer uses some chunks and not others.

    python examples/llamaindex_rag.py                   # the embedded default verifier
    python examples/llamaindex_rag.py --oracle keyword  # a keyword test oracle, no model needed
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ene_core import EvidenceNecessityGraph, ModelNotFoundError, NecessityEngine, default_engine
from ene_integrations.llama_index import NecessityQueryEngine, instrument, uninstrument

DOCUMENTS = [
    "The Eiffel Tower was completed in 1889 for the World's Fair.",
    "The Eiffel Tower is 330 metres tall.",
    "Bananas are botanically berries and are rich in potassium.",
    "Gustave Eiffel's company designed and built the Eiffel Tower.",
    "The Louvre in Paris is the most visited museum in the world.",
]
QUESTION = "When was the Eiffel Tower completed, and how tall is the tower?"
_SKIP = {
    "what",
    "when",
    "which",
    "where",
    "does",
    "with",
    "from",
    "that",
    "this",
    "eiffel",
    "tower",
}


class ExtractiveLLM(CustomLLM):
    """A stand-in LLM: answers with the context sentences sharing a keyword with the question."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="extractive-mock")

    @staticmethod
    def answer(prompt: str) -> str:
        lines = [line.strip() for line in prompt.splitlines()]
        asks = [line for line in lines if line.lower().startswith(("query:", "user:"))]
        query = asks[-1].split(":", 1)[1] if asks else ""
        keys = {w for w in re.findall(r"[a-z]+", query.lower()) if len(w) > 3} - _SKIP
        picked = [
            sentence
            for line in lines
            if line not in asks
            for sentence in re.split(r"(?<=\.)\s+", line)
            if sentence and keys & set(re.findall(r"[a-z]+", sentence.lower()))
        ]
        return " ".join(dict.fromkeys(picked)) or "I don't know."

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.answer(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def tokens() -> Iterator[CompletionResponse]:
            text = ""
            for word in re.findall(r"\S+\s*", self.answer(prompt)):
                text += word
                yield CompletionResponse(text=text, delta=word)

        return tokens()


class StableOrder(BaseNodePostprocessor):
    """Orders nodes by score, then id: the same order on every run."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return sorted(nodes, key=lambda n: (-round(n.score or 0.0, 6), n.node.node_id))


def build_engine(oracle: str) -> NecessityEngine:
    if oracle == "keyword":
        from ene_core.verifiers.keyword import KeywordOracle

        return NecessityEngine(KeywordOracle())
    try:
        return default_engine()
    except ModelNotFoundError as exc:
        sys.exit(f"{exc}\nRun with --oracle keyword to try the example without the model.")


def show(eng: EvidenceNecessityGraph) -> str:
    """The graph as a reader wants it: each claim, its verdict and the chunks it needed."""
    short = {c.index: f"[{c.index}] {c.text[:70]}" for c in eng.contexts}
    lines = [f"Q: {eng.question}", f"A: {eng.answer}", "", "Claims:"]
    for claim in eng.claims:
        if not claim.checkable:
            lines.append(f"  - {claim.text!r}: not a checkable claim")
            continue
        needs = ", ".join(f"[{i}]" for i in claim.necessary) or "no single chunk"
        lines.append(
            f"  - {claim.text!r}: {claim.status} ({claim.classification}, "
            f"p_entail={claim.p_entail:.2f}); needs {needs}"
        )
    lines.append("Chunks used (minimal sufficient set):")
    lines += [f"  {short[c.index]}" for c in eng.contexts if c.used]
    lines.append("Chunks not used:")
    lines += [f"  {short[c.index]}" for c in eng.contexts if not c.used]
    counts = eng.counts
    lines.append(f"Tokens kept {counts.tokens_kept}, could be saved {counts.tokens_saved}.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", choices=["default", "keyword"], default="default")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args(argv)

    Settings.llm = ExtractiveLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    # Fixed node ids and a sorting postprocessor: the mock embedding scores every chunk the
    # same, so without them the chunk order (and the printed graph) would vary between runs.
    index = VectorStoreIndex([TextNode(text=t, id_=f"doc-{i}") for i, t in enumerate(DOCUMENTS)])
    engine = build_engine(args.oracle)

    handler = instrument(engine=engine)  # the one line: every synthesized answer now gets its ENG
    try:
        query_engine = index.as_query_engine(
            similarity_top_k=len(DOCUMENTS), node_postprocessors=[StableOrder()]
        )
        response = query_engine.query(args.question)
        result = handler.result(response, timeout=120)
        if result.eng is None:
            print(f"ENE could not evaluate this answer: {result.error}", file=sys.stderr)
            return {"response": response, "eng": None}
        print(show(result.eng))

        pruned = NecessityQueryEngine(query_engine).query(args.question)
        info = pruned.metadata["ene_pruning"]
        print(
            f"\nNecessityQueryEngine kept {len(pruned.source_nodes)} of "
            f"{len(response.source_nodes)} source nodes ({info['tokens_saved']} tokens saved)."
        )
        return {"response": response, "eng": result.eng, "pruned": pruned}
    finally:
        uninstrument()


if __name__ == "__main__":
    main()
