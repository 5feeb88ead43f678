"""ENE on a LangChain agent (LangGraph underneath): evaluate what the answering model saw and said.

The app is the LangChain "RAG agent" tutorial: ``create_agent`` with a retrieval tool that
calls ``vector_store.similarity_search`` and returns the documents as its artifact. It runs
offline in seconds: an in-memory vector store with a deterministic bag-of-words embedding and
a scripted chat model that first calls the tool, then answers from what the tool returned.

ENE's callback handler evaluates the agent's final message against the documents the answering
model call had in its input, with the user's question. A second agent carries
``pruning_middleware()``, which drops the unused documents from the tool's artifact (the
sources an app would show) after the answer.

    python examples/langgraph_agent.py                  # the default verifier (ene-nli-mini)
    python examples/langgraph_agent.py --oracle keyword # a keyword stand-in, no model needed
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import time
import uuid
from typing import Any

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.vectorstores import InMemoryVectorStore

from ene_core import EvidenceNecessityGraph, ModelNotFoundError, NecessityEngine, default_engine
from ene_integrations.langchain import NecessityCallbackHandler, pruning_middleware

CHUNKS = [
    ("range", "The Aurora 3 e-bike has a range of 120 kilometres on a full charge."),
    ("charging", "The Aurora 3 battery charges fully in four hours."),
    ("weight", "The Aurora 3 e-bike weighs 21 kilograms including the battery."),
    ("warranty", "The Aurora 3 comes with a two-year warranty on the frame and battery."),
    ("factory", "Aurora bikes are assembled in Lisbon."),
]
QUESTION = "How far can the Aurora 3 e-bike go on one charge, and how long does charging take?"
ANSWER = (
    "The Aurora 3 e-bike has a range of 120 kilometres on a full charge. "
    "Its battery charges fully in four hours."
)


class HashingEmbeddings(Embeddings):
    """Deterministic bag-of-words embedding: each word hashed into one of 256 buckets."""

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * 256
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 256] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


class ScriptedAgentModel(BaseChatModel):
    """Calls ``retrieve`` for a new question, answers ``ANSWER`` once the tool has replied;
    ``latency_s`` simulates the model's response time."""

    latency_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "scripted-agent"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedAgentModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if self.latency_s:
            time.sleep(self.latency_s)
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(ANSWER)
        else:
            call = {"name": "retrieve", "args": {"query": QUESTION}, "id": "call-1"}
            reply = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build_agent(middleware: tuple[Any, ...] = (), model_latency_s: float = 0.0) -> Any:
    """The RAG-agent tutorial app over the Aurora notes."""
    store = InMemoryVectorStore(HashingEmbeddings())
    store.add_documents([Document(text, id=key) for key, text in CHUNKS])

    @tool(response_format="content_and_artifact")
    def retrieve(query: str) -> tuple[str, list[Document]]:
        """Retrieve information related to a query."""
        docs = store.similarity_search(query, k=4)
        content = "\n\n".join(f"Source: {d.id}\nContent: {d.page_content}" for d in docs)
        return content, docs

    model = ScriptedAgentModel(latency_s=model_latency_s)
    return create_agent(model, tools=[retrieve], middleware=list(middleware))


def describe(eng: EvidenceNecessityGraph) -> str:
    lines = [f"Question: {eng.question}", f"Answer:   {eng.answer}", "Claims:"]
    for claim in eng.claims:
        if claim.checkable:
            needs = ", ".join(eng.contexts[i].id for i in claim.necessary) or "no single chunk"
            lines.append(f"  {claim.status} ({claim.classification}), needs: {needs}: {claim.text}")
    lines.append(f"Contexts the answering model saw: {[c.id for c in eng.contexts]}")
    lines.append(f"Unused: {[c.id for c in eng.contexts if not c.used]}")
    return "\n".join(lines)


def make_engine(oracle: str) -> NecessityEngine:
    if oracle == "keyword":
        from ene_core.verifiers.keyword import KeywordOracle

        return NecessityEngine(KeywordOracle())
    return default_engine()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", choices=["default", "keyword"], default="default")
    args = parser.parse_args(argv)
    try:
        engine = make_engine(args.oracle)
    except ModelNotFoundError as exc:
        print(f"{exc}\nRun with --oracle keyword to try the example without the model.")
        return 2

    handler = NecessityCallbackHandler(engine)  # background mode: the agent does not wait
    run_id = uuid.uuid4()
    state = build_agent().invoke(
        {"messages": [{"role": "user", "content": QUESTION}]},
        config={"callbacks": [handler], "run_id": run_id},
    )
    print(f"Agent replied: {state['messages'][-1].content}\n")
    result = handler.result(run_id, timeout=120)
    if result.eng is None:
        print(f"ENE: no graph ({result.error or result.skipped})")
        return 1
    print(describe(result.eng))

    pruned = build_agent((pruning_middleware(engine),)).invoke(
        {"messages": [{"role": "user", "content": QUESTION}]}
    )
    tool_message = next(m for m in pruned["messages"] if isinstance(m, ToolMessage))
    print(f"\npruning_middleware: sources kept: {[d.id for d in tool_message.artifact]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
