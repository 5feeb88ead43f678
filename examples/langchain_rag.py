"""ENE on a LangChain RAG chain: which retrieved chunks did the answer need?

Runs offline in seconds: an in-memory vector store with a deterministic bag-of-words
embedding, a fake chat model whose answer uses some chunks and not others, and ENE's
callback handler attached. Then the same chain with sources, pruned by ``NecessityPruner``.

    python examples/langchain_rag.py                  # the default verifier (ene-nli-mini)
    python examples/langchain_rag.py --oracle keyword # a keyword stand-in, no model needed
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import sys
import uuid
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from ene_core import EvidenceNecessityGraph, ModelNotFoundError, NecessityEngine, default_engine
from ene_integrations.langchain import NecessityCallbackHandler, NecessityPruner

CHUNKS = [
    ("range", "The Aurora 3 e-bike has a range of 120 kilometres on a full charge."),
    ("charging", "The Aurora 3 battery charges fully in four hours."),
    ("weight", "The Aurora 3 e-bike weighs 21 kilograms including the battery."),
    ("warranty", "The Aurora 3 comes with a two-year warranty on the frame and battery."),
    ("factory", "Aurora bikes are assembled in Lisbon."),
    ("support", "Our support line is open on weekdays from nine to five."),
]
QUESTION = "How far can the Aurora 3 e-bike go on one charge, and how long does the battery take to charge?"
ANSWER = (
    "The Aurora 3 e-bike has a range of 120 kilometres on a full charge. "
    "Its battery charges fully in four hours."
)
PROMPT = ChatPromptTemplate.from_messages(
    [("system", "Answer from the context only.\n\n{context}"), ("human", "{question}")]
)


class HashingEmbeddings(Embeddings):
    """Deterministic bag-of-words embedding: each word hashed into one of ``size`` buckets."""

    def __init__(self, size: int = 256) -> None:
        self.size = size

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.size
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.size
            vector[bucket] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


def build_retriever(k: int = 4) -> Any:
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents([Document(text, id=key) for key, text in CHUNKS])
    return store.as_retriever(search_kwargs={"k": k})


def format_docs(docs: list[Document]) -> str:
    return "\n".join(d.page_content for d in docs)


def build_chain(retriever: Any, model_latency_s: float | None = None) -> Any:
    """The usual LCEL RAG chain; the fake model answers ``ANSWER`` (after a simulated delay)."""
    llm = FakeListChatModel(responses=[ANSWER], sleep=model_latency_s)
    return (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | PROMPT
        | llm
        | StrOutputParser()
    )


def build_sources_chain(retriever: Any, engine: NecessityEngine) -> Any:
    """RAG with sources, then pruned to the sources the answer needed."""
    answer = (
        (lambda x: {"context": format_docs(x["context"]), "question": x["question"]})
        | PROMPT
        | FakeListChatModel(responses=[ANSWER])
        | StrOutputParser()
    )
    return (
        RunnableParallel({"context": retriever, "question": RunnablePassthrough()})
        .assign(answer=answer)
        .pipe(NecessityPruner(engine))
    )


def describe(eng: EvidenceNecessityGraph) -> str:
    """The ENG as a reader wants it: claims with verdicts, then necessary and unused chunks."""
    lines = ["Claims:"]
    for claim in eng.claims:
        if not claim.checkable:
            continue
        needs = ", ".join(eng.contexts[i].id for i in claim.necessary) or "no single chunk"
        lines.append(
            f"  [{claim.index}] {claim.status} ({claim.classification}), "
            f"p_entail={claim.p_entail:.2f}, needs: {needs}\n      {claim.text}"
        )
    necessary = [c for c in eng.contexts if c.necessary_for]
    lines.append("Necessary chunks:")
    lines += [f"  {c.id}: {c.text}  (claims {c.necessary_for})" for c in necessary] or ["  none"]
    lines.append("Unused chunks:")
    lines += [f"  {c.id}: {c.text}" for c in eng.contexts if not c.used] or ["  none"]
    counts = eng.counts
    lines.append(
        f"Contexts: {counts.contexts_used}/{counts.contexts} used; "
        f"tokens kept {counts.tokens_kept}, saved {counts.tokens_saved}"
    )
    return "\n".join(lines)


def make_engine(oracle: str) -> NecessityEngine:
    if oracle == "keyword":
        from ene_core.verifiers.keyword import KeywordOracle

        return NecessityEngine(KeywordOracle())
    return default_engine()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--oracle",
        choices=["default", "keyword"],
        default="default",
        help="'keyword' is a deterministic stand-in for when the default model is missing",
    )
    args = parser.parse_args(argv)
    try:
        engine = make_engine(args.oracle)
    except ModelNotFoundError as exc:
        print(f"{exc}\nRun with --oracle keyword to try the example without the model.")
        return 2

    retriever = build_retriever()
    handler = NecessityCallbackHandler(engine)  # background mode: the chain does not wait
    run_id = uuid.uuid4()
    answer = build_chain(retriever).invoke(
        QUESTION, config={"callbacks": [handler], "run_id": run_id}
    )
    print(f"Question: {QUESTION}\nAnswer:   {answer}\n")
    result = handler.result(run_id, timeout=120)
    if result.eng is None:
        print(f"ENE evaluation failed: {result.error}")
        return 1
    print(describe(result.eng))

    pruned = build_sources_chain(retriever, engine).invoke(QUESTION)
    print("\nNecessityPruner (RAG with sources):")
    print(f"  sources kept: {[d.id for d in pruned['context']]}")
    print(f"  context tokens: {pruned['tokens_before']} -> {pruned['tokens_after']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
