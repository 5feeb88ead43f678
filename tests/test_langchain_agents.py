"""Agents and graphs: the ENG is built on what the answering model saw and said.

Real ``langchain.agents.create_agent`` and LangGraph graphs (StateGraph, MessagesState,
ToolNode, tools_condition), a real InMemoryVectorStore, scripted chat models that emit tool
calls. Every test asserts the ENG's exact answer, question and context set, and that the app's
output is the same with and without ENE (up to the random ids LangChain gives messages).
"""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain.agents.middleware import dynamic_prompt
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import create_retriever_tool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from lc_world import ScriptedChatModel, agent_script, by_keyword, make_store, text_of

from ene_core import NecessityEngine, NecessityResult
from ene_core.verifiers.keyword import KeywordOracle
from ene_integrations.langchain import (
    NecessityCallbackHandler,
    NecessityPruner,
    instrument,
    pruning_middleware,
    report_documents,
    uninstrument,
)

TALL = "How tall is the Eiffel Tower?"
TALL_ANSWER = "The Eiffel Tower is 330 metres tall."
BOTH = "How tall is the Eiffel Tower and when was it completed?"
BOTH_ANSWER = "The Eiffel Tower is 330 metres tall. The Eiffel Tower was completed in 1889."
STORE = make_store()


@pytest.fixture(scope="module")
def engine() -> Any:
    engine = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    yield engine
    engine.close()


@pytest.fixture
def handler(engine: NecessityEngine) -> NecessityCallbackHandler:
    return NecessityCallbackHandler(engine)


_IDS = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\d{4}-\d\d-\d\dT[\d:.+]+"  # debug-mode timestamps
)


def same(a: Any, b: Any) -> bool:
    """Equal up to the random message/run ids and timestamps LangChain generates per run."""
    return _IDS.sub("<id>", repr(a)) == _IDS.sub("<id>", repr(b))


def ids(result: NecessityResult) -> list[str]:
    assert result.error is None and result.skipped is None, (result.error, result.skipped)
    assert result.eng is not None
    return [c.id for c in result.eng.contexts]


def run(app: Any, value: Any, handler: NecessityCallbackHandler, **config: Any) -> Any:
    """Invoke with and without ENE; the outputs must match. Returns (output, result)."""
    plain = app.invoke(value, config=dict(config))
    run_id = uuid.uuid4()
    out = app.invoke(value, config={**config, "callbacks": [handler], "run_id": run_id})
    assert same(out, plain)
    return out, handler.result(run_id, timeout=10)


# -- the apps -----------------------------------------------------------------------------------


@tool(response_format="content_and_artifact")
def retrieve(query: str) -> tuple[str, list[Document]]:
    """Retrieve information related to a query."""
    docs = STORE.similarity_search(query, k=2)
    return "\n\n".join(f"Source: {d.id}\nContent: {d.page_content}" for d in docs), docs


def rag_agent(**kwargs: Any) -> Any:
    """The LangChain RAG-agent tutorial: create_agent + a content_and_artifact tool."""
    script = agent_script({TALL: TALL_ANSWER, BOTH: BOTH_ANSWER}, **kwargs)
    return create_agent(ScriptedChatModel(respond=script), tools=[retrieve])


# -- create_agent -------------------------------------------------------------------------------


def test_create_agent_with_a_content_and_artifact_tool(handler: NecessityCallbackHandler) -> None:
    out, result = run(rag_agent(), {"messages": [{"role": "user", "content": TALL}]}, handler)
    assert text_of(out["messages"][-1]) == TALL_ANSWER
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height", "tower-year"]
    assert result.eng.minimal_sufficient_set == [0]


def test_create_agent_with_create_retriever_tool(handler: NecessityCallbackHandler) -> None:
    search = create_retriever_tool(
        STORE.as_retriever(search_kwargs={"k": 2}), "retrieve", "Search the Paris notes."
    )
    script = agent_script({TALL: TALL_ANSWER})
    agent = create_agent(ScriptedChatModel(respond=script), tools=[search])
    _out, result = run(agent, {"messages": [("user", TALL)]}, handler)
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height", "tower-year"]
    assert result.metadata["documents"][0]["position"] == 0  # the retriever run and position


def test_parallel_tool_calls_each_document_once(handler: NecessityCallbackHandler) -> None:
    queries = {BOTH: ["Eiffel Tower tall", "Eiffel Tower completed"]}  # both return both docs
    out, result = run(rag_agent(queries=queries), {"messages": [HumanMessage(BOTH)]}, handler)
    assert len(out["messages"][1].tool_calls) == 2
    assert result.eng.answer == BOTH_ANSWER
    assert sorted(ids(result)) == ["tower-height", "tower-year"]
    assert [c.classification for c in result.eng.claims] == ["fragile", "fragile"]


def test_multi_turn_agent_counts_earlier_turns_still_in_the_history(
    handler: NecessityCallbackHandler,
) -> None:
    louvre = "Which museum is the most visited?"
    both = "The Eiffel Tower is 330 metres tall. The Louvre is the most visited museum."
    script = agent_script({TALL: TALL_ANSWER, louvre: both})
    agent = create_agent(
        ScriptedChatModel(respond=script), tools=[retrieve], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": str(uuid.uuid4())}, "callbacks": [handler]}
    agent.invoke({"messages": [HumanMessage(TALL)]}, config=config)
    run_id = uuid.uuid4()
    agent.invoke({"messages": [HumanMessage(louvre)]}, config={**config, "run_id": run_id})
    result = handler.result(run_id, timeout=10)
    assert result.eng.answer == both and result.eng.question == louvre
    assert set(ids(result)) == {"tower-height", "tower-year", "louvre", "seine"}
    assert result.eng.counts.supported == 2


def test_dynamic_prompt_with_a_retriever_and_with_report_documents(
    handler: NecessityCallbackHandler,
) -> None:
    retriever = STORE.as_retriever(search_kwargs={"k": 2})

    @dynamic_prompt
    def with_retriever(request: Any) -> str:
        docs = retriever.invoke(text_of(request.state["messages"][-1]))
        return "Use this context:\n\n" + "\n\n".join(d.page_content for d in docs)

    @dynamic_prompt
    def with_similarity_search(request: Any) -> str:
        docs = STORE.similarity_search(text_of(request.state["messages"][-1]), k=2)
        report_documents(docs)  # a vector store call emits no callback: tell ENE
        return "Use this context:\n\n" + "\n\n".join(d.page_content for d in docs)

    script = agent_script({TALL: TALL_ANSWER}, tool=None)
    for middleware in (with_retriever, with_similarity_search):
        agent = create_agent(ScriptedChatModel(respond=script), middleware=[middleware])
        _out, result = run(agent, {"messages": [HumanMessage(TALL)]}, handler)
        assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
        assert ids(result) == ["tower-height", "tower-year"]


def test_report_documents_outside_a_run_is_a_no_op() -> None:
    report_documents([Document("x")])  # no run, no handler: nothing happens, nothing raises


def test_dynamic_prompt_with_similarity_search_is_caught_by_instrument(
    engine: NecessityEngine,
) -> None:
    """The docs' pattern: ``instrument()``, and a middleware that searches the store itself."""

    @dynamic_prompt
    def with_context(request: Any) -> str:
        docs = STORE.similarity_search(text_of(request.state["messages"][-1]), k=2)
        return "Use this context:\n\n" + "\n\n".join(d.page_content for d in docs)

    script = agent_script({TALL: TALL_ANSWER}, tool=None)
    agent = create_agent(ScriptedChatModel(respond=script), middleware=[with_context])
    plain = agent.invoke({"messages": [HumanMessage(TALL)]})
    handler = instrument(NecessityCallbackHandler(engine))
    try:
        run_id = uuid.uuid4()
        out = agent.invoke({"messages": [HumanMessage(TALL)]}, config={"run_id": run_id})
        result = handler.result(run_id, timeout=10)
    finally:
        uninstrument()
    assert same(out, plain)
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height", "tower-year"]
    assert "__wrapped__" not in vars(type(STORE).similarity_search)  # uninstrument restores it


async def test_instrument_catches_async_searches_and_leaves_retrievers_their_documents(
    engine: NecessityEngine,
) -> None:
    """An async search in a node is caught; a retriever's own search stays the retriever's
    (its run is the origin of what only it found, as without instrumented stores)."""
    llm = ScriptedChatModel(respond=by_keyword([("330 metres", TALL_ANSWER)]))
    retriever = STORE.as_retriever(search_kwargs={"k": 2})

    async def answer(state: Custom) -> dict[str, Any]:
        question = text_of(state["messages"][-1])
        found = await STORE.asimilarity_search_with_score(question, k=1)
        docs = [doc for doc, _score in found] + await retriever.ainvoke(question)
        reply = await llm.ainvoke([HumanMessage("\n".join(d.page_content for d in docs))])
        return {"note": reply.content}

    class Retrievers(BaseCallbackHandler):
        def __init__(self) -> None:
            self.runs: list[str] = []

        def on_retriever_start(self, *args: Any, run_id: uuid.UUID, **kwargs: Any) -> None:
            self.runs.append(str(run_id))

    graph = StateGraph(Custom)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    handler, seen = instrument(NecessityCallbackHandler(engine)), Retrievers()
    try:
        run_id = uuid.uuid4()
        out = await graph.compile().ainvoke(
            QUESTION, config={"run_id": run_id, "callbacks": [seen]}
        )
        result = await handler.aresult(run_id, timeout=10)
    finally:
        uninstrument()
    assert out["note"] == TALL_ANSWER
    assert ids(result) == ["tower-height", "tower-year"]
    origins = [d["run_id"] for d in result.metadata["documents"]]
    assert origins[0] not in seen.runs and origins[1] == seen.runs[0]


def test_history_aware_retrieval_chain_second_turn_has_only_its_own_chunks(
    handler: NecessityCallbackHandler,
) -> None:
    """``create_history_aware_retriever`` + ``create_retrieval_chain``: the earlier turns in
    ``chat_history`` are conversation, not chunks (the first answer even repeats one)."""
    chains = pytest.importorskip("langchain_classic.chains")
    stuff = pytest.importorskip("langchain_classic.chains.combine_documents")
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

    completed = "When was it completed?"
    completed_answer = "The Eiffel Tower was completed in 1889."

    def respond(messages: list[Any]) -> AIMessage:
        seen = "\n".join(text_of(m) for m in messages)
        if "reformulate" in seen:
            return AIMessage("When was the Eiffel Tower completed?")
        return AIMessage(completed_answer if "1889" in seen else TALL_ANSWER)

    llm = ScriptedChatModel(respond=respond)
    rephrase = ChatPromptTemplate.from_messages(
        [
            ("system", "Given the chat history, reformulate the latest question."),
            MessagesPlaceholder("chat_history"),
            ("human", "{input}"),
        ]
    )
    qa = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer from this context:\n\n{context}"),
            MessagesPlaceholder("chat_history"),
            ("human", "{input}"),
        ]
    )
    retriever = chains.create_history_aware_retriever(
        llm, STORE.as_retriever(search_kwargs={"k": 1}), rephrase
    )
    chain = chains.create_retrieval_chain(retriever, stuff.create_stuff_documents_chain(llm, qa))
    first, result = run(chain, {"input": TALL, "chat_history": []}, handler)
    assert first["answer"] == TALL_ANSWER and ids(result) == ["tower-height"]
    history = [HumanMessage(TALL), AIMessage(first["answer"])]
    second, result = run(chain, {"input": completed, "chat_history": history}, handler)
    assert second["answer"] == completed_answer
    assert [d.id for d in second["context"]] == ["tower-year"]
    assert result.eng.answer == completed_answer and result.eng.question == completed
    assert ids(result) == ["tower-year"]


# -- LangGraph graphs ---------------------------------------------------------------------------


class RagState(TypedDict):
    question: str
    context: list[Document]
    answer: str


def tutorial_graph() -> Any:
    """The LangGraph RAG tutorial: a retrieve node puts Documents in state, generate answers."""
    llm = ScriptedChatModel(respond=by_keyword([("330 metres", TALL_ANSWER)]))

    def retrieve_node(state: RagState) -> dict[str, Any]:
        return {"context": STORE.similarity_search(state["question"], k=3)}

    def generate(state: RagState) -> dict[str, Any]:
        docs = "\n\n".join(d.page_content for d in state["context"])
        reply = llm.invoke([HumanMessage(f"Question: {state['question']}\nContext: {docs}")])
        return {"answer": reply.content}

    graph = StateGraph(RagState)
    graph.add_node("retrieve", retrieve_node)
    graph.add_node("generate", generate)
    graph.add_edge(START, "retrieve")
    graph.add_edge("retrieve", "generate")
    return graph.compile()


def test_langgraph_rag_tutorial_documents_in_state(handler: NecessityCallbackHandler) -> None:
    out, result = run(tutorial_graph(), {"question": TALL}, handler)
    assert out["answer"] == TALL_ANSWER
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height", "tower-year", "tower-builder"]


def agentic_rag_graph() -> Any:
    """LangGraph's agentic RAG tutorial: ToolNode + tools_condition, a grader that rejects the
    first retrieval, a rewrite step, and a generator that sees only the last tool result."""
    search = create_retriever_tool(
        STORE.as_retriever(search_kwargs={"k": 2}), "retrieve", "Search the Paris notes."
    )
    question = "What is the tallest landmark in Paris?"
    rewritten = "Eiffel Tower height metres"
    agent_model = ScriptedChatModel(respond=agent_script({}, tool="retrieve"))
    grader = ScriptedChatModel(respond=by_keyword([("metres", "yes")], default="no"))
    rewriter = ScriptedChatModel(respond=by_keyword([(question, rewritten)]))
    generator = ScriptedChatModel(respond=by_keyword([("330 metres", TALL_ANSWER)]))

    def generate_query_or_respond(state: MessagesState) -> dict[str, Any]:
        return {"messages": [agent_model.invoke(state["messages"])]}

    def grade_documents(state: MessagesState) -> str:
        context = text_of(state["messages"][-1])
        verdict = grader.invoke([HumanMessage(f"Is this relevant?\n{context}")]).content
        return "generate_answer" if verdict == "yes" else "rewrite_question"

    def rewrite_question(state: MessagesState) -> dict[str, Any]:
        reply = rewriter.invoke([HumanMessage(f"Rewrite: {text_of(state['messages'][0])}")])
        return {"messages": [HumanMessage(text_of(reply))]}

    def generate_answer(state: MessagesState) -> dict[str, Any]:
        prompt = (
            f"Question: {text_of(state['messages'][0])}\nContext: {state['messages'][-1].content}"
        )
        return {"messages": [generator.invoke([HumanMessage(prompt)])]}

    graph = StateGraph(MessagesState)
    graph.add_node(generate_query_or_respond)
    graph.add_node("retrieve", ToolNode([search]))
    graph.add_node(rewrite_question)
    graph.add_node(generate_answer)
    graph.add_edge(START, "generate_query_or_respond")
    graph.add_conditional_edges(
        "generate_query_or_respond", tools_condition, {"tools": "retrieve", END: END}
    )
    graph.add_conditional_edges("retrieve", grade_documents)
    graph.add_edge("generate_answer", END)
    graph.add_edge("rewrite_question", "generate_query_or_respond")
    return graph.compile(), question


def test_agentic_rag_rejected_retrieval_and_rewritten_query_are_not_used(
    handler: NecessityCallbackHandler,
) -> None:
    app, question = agentic_rag_graph()
    out, result = run(app, {"messages": [HumanMessage(question)]}, handler)
    assert text_of(out["messages"][-1]) == TALL_ANSWER
    assert result.eng.answer == TALL_ANSWER
    assert result.eng.question == question  # not "Eiffel Tower height metres"
    assert ids(result) == ["tower-height", "tower-year"]  # not the rejected seine/banana


class SelfRagState(TypedDict):
    question: str
    documents: list[Document]
    generation: str
    checks: list[str]


def test_self_rag_graders_after_generation_are_not_the_answer(
    handler: NecessityCallbackHandler,
) -> None:
    retrieval_grader = ScriptedChatModel(respond=by_keyword([("Eiffel", "yes")], default="no"))
    generator = ScriptedChatModel(respond=by_keyword([("330 metres", TALL_ANSWER)]))
    hallucination_grader = ScriptedChatModel(respond=by_keyword([("Facts", "yes")]))

    def retrieve_node(state: SelfRagState) -> dict[str, Any]:
        return {"documents": STORE.similarity_search(state["question"], k=4)}

    def grade(state: SelfRagState) -> dict[str, Any]:
        kept = [
            d
            for d in state["documents"]
            if retrieval_grader.invoke([HumanMessage(f"Relevant? {d.page_content}")]).content
            == "yes"
        ]
        return {"documents": kept}

    def generate(state: SelfRagState) -> dict[str, Any]:
        docs = "\n".join(d.page_content for d in state["documents"])
        reply = generator.invoke([HumanMessage(f"{docs}\nQuestion: {state['question']}")])
        return {"generation": reply.content}

    def check(state: SelfRagState) -> dict[str, Any]:
        verdict = hallucination_grader.invoke(
            [HumanMessage(f"Facts: {state['documents']}\nAnswer: {state['generation']}")]
        )
        return {"checks": [verdict.content]}

    graph = StateGraph(SelfRagState)
    for name, node in (("retrieve", retrieve_node), ("grade", grade), ("generate", generate)):
        graph.add_node(name, node)
    graph.add_node("check", check)
    graph.add_edge(START, "retrieve")
    graph.add_edge("retrieve", "grade")
    graph.add_edge("grade", "generate")
    graph.add_edge("generate", "check")
    out, result = run(graph.compile(), {"question": TALL}, handler)
    assert out["generation"] == TALL_ANSWER and out["checks"] == ["yes"]
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height", "tower-year", "tower-builder"]  # not the banana/louvre


# -- run modes ----------------------------------------------------------------------------------

MODES: list[Any] = ["values", "updates", "messages", "custom", "debug", ["values", "messages"]]
QUESTION = {"messages": [HumanMessage(TALL)]}


def assert_tall(result: NecessityResult) -> None:
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height", "tower-year"]


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_stream_every_mode(handler: NecessityCallbackHandler, mode: Any) -> None:
    agent = rag_agent()
    plain = list(agent.stream(QUESTION, stream_mode=mode))
    run_id = uuid.uuid4()
    config = {"callbacks": [handler], "run_id": run_id}
    assert same(list(agent.stream(QUESTION, config=config, stream_mode=mode)), plain)
    assert_tall(handler.result(run_id, timeout=10))


@pytest.mark.parametrize("mode", ["values", "updates", "messages"])
async def test_astream_and_ainvoke(handler: NecessityCallbackHandler, mode: str) -> None:
    agent = rag_agent()
    plain = [c async for c in agent.astream(QUESTION, stream_mode=mode)]
    run_id, other = uuid.uuid4(), uuid.uuid4()
    config = {"callbacks": [handler], "run_id": run_id}
    streamed = [c async for c in agent.astream(QUESTION, config=config, stream_mode=mode)]
    assert same(streamed, plain)
    assert_tall(await handler.aresult(run_id, timeout=10))
    out = await agent.ainvoke(QUESTION, config={"callbacks": [handler], "run_id": other})
    assert same(out, await agent.ainvoke(QUESTION))
    assert_tall(await handler.aresult(other, timeout=10))


async def test_astream_events(handler: NecessityCallbackHandler) -> None:
    agent = rag_agent()
    plain = [(e["event"], e["name"]) async for e in agent.astream_events(QUESTION, version="v2")]
    run_id = uuid.uuid4()
    config = {"callbacks": [handler], "run_id": run_id}
    events = [
        (e["event"], e["name"])
        async for e in agent.astream_events(QUESTION, version="v2", config=config)
    ]
    assert events == plain
    assert_tall(await handler.aresult(run_id, timeout=10))


def test_instrument_covers_agents_and_graphs(engine: NecessityEngine) -> None:
    handler = instrument(NecessityCallbackHandler(engine))
    try:
        agent_id, graph_id = uuid.uuid4(), uuid.uuid4()
        rag_agent().invoke(QUESTION, config={"run_id": agent_id})
        tutorial_graph().invoke({"question": TALL}, config={"run_id": graph_id})
        assert_tall(handler.result(agent_id, timeout=10))
        assert len(ids(handler.result(graph_id, timeout=10))) == 3
    finally:
        uninstrument()


# -- explicit outcomes --------------------------------------------------------------------------


def test_an_agent_without_retrieval_is_skipped_at_once(handler: NecessityCallbackHandler) -> None:
    agent = create_agent(ScriptedChatModel(respond=agent_script({TALL: "Hi."}, tool=None)))
    run_id = uuid.uuid4()
    agent.invoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    result = handler.result(run_id, timeout=0)
    assert result.eng is None and result.error is None and result.skipped
    assert handler.pending == 0


def test_a_failing_graph_is_recorded_at_once(handler: NecessityCallbackHandler) -> None:
    def boom(state: MessagesState) -> dict[str, Any]:
        raise ValueError("node failed")

    graph = StateGraph(MessagesState)
    graph.add_node("boom", boom)
    graph.add_edge(START, "boom")
    run_id = uuid.uuid4()
    with pytest.raises(ValueError, match="node failed"):
        graph.compile().invoke(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    assert "ValueError" in (handler.result(run_id, timeout=0).error or "")


# -- pruning ------------------------------------------------------------------------------------


def artifacts(out: dict[str, Any]) -> list[list[str]]:
    return [[d.id for d in m.artifact] for m in out["messages"] if isinstance(m, ToolMessage)]


def test_agent_piped_into_the_pruner(engine: NecessityEngine) -> None:
    out = (rag_agent() | NecessityPruner(engine)).invoke(QUESTION)
    assert artifacts(out) == [["tower-height"]]
    assert out["evidence"].answer == TALL_ANSWER
    assert out["tokens_after"] < out["tokens_before"]
    assert text_of(out["messages"][-1]) == TALL_ANSWER


def test_pruning_middleware_in_create_agent(engine: NecessityEngine) -> None:
    script = agent_script({TALL: TALL_ANSWER})
    agent = create_agent(
        ScriptedChatModel(respond=script),
        tools=[retrieve],
        middleware=[pruning_middleware(engine)],
    )
    out = agent.invoke(QUESTION)
    assert artifacts(out) == [["tower-height"]]
    assert [type(m).__name__ for m in out["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert text_of(out["messages"][2]).count("Content:") == 2  # what the model read stays


async def test_pruner_as_the_last_node_of_a_message_graph(engine: NecessityEngine) -> None:
    model = ScriptedChatModel(respond=agent_script({TALL: TALL_ANSWER}))

    def agent_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent_node)
    graph.add_node("tools", ToolNode([retrieve]))
    graph.add_node("prune", NecessityPruner(engine))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "prune"})
    graph.add_edge("tools", "agent")
    app = graph.compile()
    for out in (app.invoke(QUESTION), await app.ainvoke(QUESTION)):
        assert artifacts(out) == [["tower-height"]]
        assert len(out["messages"]) == 4


def test_pruner_on_state_without_a_final_answer_prunes_nothing(engine: NecessityEngine) -> None:
    messages = [
        HumanMessage(TALL),
        AIMessage("", tool_calls=[{"name": "x", "args": {}, "id": "1"}]),
    ]
    out = NecessityPruner(engine).invoke({"messages": messages})
    assert out["messages"] == messages and out["evidence"] is None


class Custom(TypedDict):
    messages: Annotated[list[Any], add_messages]
    note: str


def test_graph_with_a_custom_state_key_answer(handler: NecessityCallbackHandler) -> None:
    """Another common shape: the answer under a custom key, written by a model."""
    llm = ScriptedChatModel(respond=by_keyword([("330 metres", TALL_ANSWER)]))

    def answer(state: Custom) -> dict[str, Any]:
        docs = STORE.similarity_search(text_of(state["messages"][-1]), k=1)
        report_documents(docs)
        reply = llm.invoke([HumanMessage(docs[0].page_content)])
        return {"note": reply.content}

    graph = StateGraph(Custom)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    out, result = run(graph.compile(), QUESTION, handler)
    assert out["note"] == TALL_ANSWER
    assert result.eng.answer == TALL_ANSWER and result.eng.question == TALL
    assert ids(result) == ["tower-height"]


def test_the_agent_example_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    import runpy
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "langgraph_agent.py"
    namespace = runpy.run_path(str(example), run_name="langgraph_agent_example")
    assert namespace["main"](["--oracle", "keyword"]) == 0
    out = capsys.readouterr().out
    assert "Contexts the answering model saw: ['weight', 'range', 'warranty', 'charging']" in out
    assert "sources kept: ['range', 'charging']" in out


async def test_concurrent_agent_runs_each_eng_is_its_own(handler: NecessityCallbackHandler) -> None:
    import asyncio

    agent = rag_agent()
    questions = [TALL if i % 2 else BOTH for i in range(40)]
    run_ids = [uuid.uuid4() for _ in questions]
    outs = await asyncio.gather(
        *(
            agent.ainvoke(
                {"messages": [HumanMessage(q)]}, config={"callbacks": [handler], "run_id": r}
            )
            for q, r in zip(questions, run_ids, strict=True)
        )
    )
    for question, run_id, out in zip(questions, run_ids, outs, strict=True):
        result = await handler.aresult(run_id, timeout=30)
        expected = TALL_ANSWER if question == TALL else BOTH_ANSWER
        assert text_of(out["messages"][-1]) == expected
        assert result.eng.answer == expected and result.eng.question == question
        assert sorted(ids(result)) == ["tower-height", "tower-year"]
    assert handler.pending == 0 and len(handler._runs) == 0
