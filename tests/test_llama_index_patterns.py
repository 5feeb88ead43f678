"""LlamaIndex patterns beyond one query engine: sub-questions, routers, agents, chat history.

Real LlamaIndex objects throughout: an in-memory ``VectorStoreIndex`` with ``MockEmbedding``, the
extractive mock LLM of ``test_llama_index``, LlamaIndex's own ``MockFunctionCallingLLM`` driven
by a scripted response generator (it emits the tool calls), fixed-output LLMs for selectors and
question generators. Each test asserts the ENG's exact answer, question and context set, the
links to inner ENGs, and that what the app got is unchanged and untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.agent.workflow import (
    AgentOutput,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
    ToolCallResult,
)
from llama_index.core.base.llms.types import (
    ChatMessage,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.chat_engine import CondenseQuestionChatEngine
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RouterQueryEngine, SubQuestionQueryEngine
from llama_index.core.question_gen import LLMQuestionGenerator
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.selectors import LLMMultiSelector, LLMSingleSelector
from llama_index.core.tools import QueryEngineTool, ToolSelection
from llama_index.core.workflow import StartEvent, StopEvent, Workflow, step
from test_llama_index import DOCS, ExtractiveLLM, RaisingOracle

from ene_core import NecessityEngine
from ene_integrations import llama_index as eli

CAPITAL, TOWER = "What is the capital city of France?", "How tall is the Eiffel Tower?"
BOTH = "What is the capital of France and how tall is the Eiffel Tower?"


class FixedLLM(CustomLLM):
    """Always completes with ``text`` (a selector's or question generator's JSON)."""

    text: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="fixed")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.text)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def tokens() -> Iterator[CompletionResponse]:
            yield CompletionResponse(text=self.text, delta=self.text)

        return tokens()


class SortedNodes(BaseNodePostprocessor):
    """Stable node order (score, then id): the mock embedding gives every node the same score."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return sorted(nodes, key=lambda n: (-round(n.score or 0.0, 6), n.node.node_id))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3} - {"what", "which"}


def scripted_agent_llm(tool: str, asks: Sequence[str] = ()) -> MockFunctionCallingLLM:
    """First turn: call ``tool`` with each of ``asks`` (default: the user's question); then
    answer with the tool results' sentences that share a word with the question."""

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        users = [i for i, m in enumerate(messages) if m.role.value == "user"]
        last = users[-1] if users else -1
        results = [m.content or "" for m in messages[last + 1 :] if m.role.value == "tool"]
        question = messages[last].content or "" if users else ""
        if not results:
            calls = [
                ToolSelection(tool_id=f"call-{i}", tool_name=tool, tool_kwargs={"input": ask})
                for i, ask in enumerate(asks or [question], start=1)
            ]
            return ChatMessage(
                role="assistant", content="", additional_kwargs={"tool_calls": calls}
            )
        picked = [
            s for r in results for s in re.split(r"(?<=\.)\s+", r) if _words(s) & _words(question)
        ]
        return ChatMessage(role="assistant", content=" ".join(dict.fromkeys(picked)))

    return MockFunctionCallingLLM(response_generator=respond)


class ReActScript(CustomLLM):
    """A text LLM speaking the ReAct format: one action on ``tool``, then the answer."""

    tool: str = "facts"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="react-script")

    def _reply(self, prompt: str) -> str:
        _, turn = prompt.rsplit("user: ", 1)  # the format instructions come before the turn
        if "Observation:" not in turn:
            args = json.dumps({"input": turn.splitlines()[0].strip()})
            return f"Thought: I need the facts.\nAction: {self.tool}\nAction Input: {args}"
        observation = turn.rsplit("Observation:", 1)[1].strip().splitlines()[0]
        return f"Thought: I can answer without using any more tools.\nAnswer: {observation}"

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._reply(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._reply(prompt)

        def tokens() -> Iterator[CompletionResponse]:
            so_far = ""
            for word in re.findall(r"\S+\s*", text):
                so_far += word
                yield CompletionResponse(text=so_far, delta=word)

        return tokens()


@pytest.fixture(autouse=True)
def offline_models() -> Iterator[None]:
    Settings.llm = ExtractiveLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    eli.uninstrument()


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    documents = [Document(text=t, id_=f"doc-{i}") for i, t in enumerate(DOCS)]
    return VectorStoreIndex.from_documents(documents)


@pytest.fixture
def handler(keyword_engine: Any) -> Iterator[eli.NecessityHandler]:
    yield eli.instrument(engine=keyword_engine)
    eli.uninstrument()


def engine_of(index: VectorStoreIndex) -> Any:
    return index.as_query_engine(similarity_top_k=4, node_postprocessors=[SortedNodes()])


def tool_of(index: VectorStoreIndex, name: str = "facts") -> QueryEngineTool:
    return QueryEngineTool.from_defaults(
        engine_of(index), name=name, description="Facts about Paris, towers, fruit and museums."
    )


def texts(eng: Any) -> list[str]:
    return [c.text for c in eng.contexts]


def snapshot(obj: Any) -> str:
    """What the app can read off a response, as text (compared with and without ENE).

    Metadata keys are node ids, which LlamaIndex draws at random for the nodes it creates
    (sub-question answers): the values are compared, and the type.
    """
    metadata = getattr(obj, "metadata", None)
    values = sorted(json.dumps(v, sort_keys=True, default=repr) for v in (metadata or {}).values())
    nodes = [n.node.get_content() for n in getattr(obj, "source_nodes", None) or []]
    return json.dumps([str(obj), type(metadata).__name__, values, nodes])


# -- composed query engines ----------------------------------------------------------------------
def sub_question_engine(index: VectorStoreIndex) -> SubQuestionQueryEngine:
    items = [{"sub_question": q, "tool_name": "facts"} for q in (CAPITAL, TOWER)]
    generator = LLMQuestionGenerator.from_defaults(llm=FixedLLM(text=json.dumps({"items": items})))
    return SubQuestionQueryEngine.from_defaults(
        query_engine_tools=[tool_of(index)], question_gen=generator, use_async=False, verbose=False
    )


def test_sub_question_engine_final_eng_sees_the_answers_not_the_chunks(index, handler) -> None:
    engine = sub_question_engine(index)
    plain_response = (eli.uninstrument(), engine.query(BOTH))[1]
    eli.instrument(handler)
    response = engine.query(BOTH)
    assert snapshot(response) == snapshot(plain_response)
    eng = handler.result(response, timeout=10).eng
    assert eng.answer == str(response) and eng.question == BOTH
    assert texts(eng) == [
        f"Sub question: {CAPITAL}\nResponse: {DOCS[0]}",
        f"Sub question: {TOWER}\nResponse: {DOCS[1]}",
    ]
    assert len(response.source_nodes) == 2 + 8  # the app still gets every raw chunk as a source
    inner = handler.linked(response)
    assert [inner[c.id].eng.answer for c in eng.contexts] == [DOCS[0], DOCS[1]]
    for context, (question, answer) in zip(
        eng.contexts, [(CAPITAL, DOCS[0]), (TOWER, DOCS[1])], strict=True
    ):
        sub = inner[context.id].eng
        assert sub.question == question and sub.answer == answer
        assert sorted(texts(sub)) == sorted(DOCS)  # the chunks that synthesis saw
    assert eng.counts.supported == 2


async def test_sub_question_engine_aquery(index, handler) -> None:
    response = await sub_question_engine(index).aquery(BOTH)
    eng = (await handler.aresult(response, timeout=10)).eng
    assert eng.answer == str(response) and eng.question == BOTH
    assert [t.split("\n")[0] for t in texts(eng)] == [
        f"Sub question: {CAPITAL}",
        f"Sub question: {TOWER}",
    ]
    assert len(handler.linked(response)) == 2


def router(index: VectorStoreIndex, multi: bool) -> RouterQueryEngine:
    tools = [tool_of(index, "paris"), tool_of(index, "towers")]
    if multi:
        choices = [{"choice": 1, "reason": "Paris"}, {"choice": 2, "reason": "towers"}]
        selector: Any = LLMMultiSelector.from_defaults(llm=FixedLLM(text=json.dumps(choices)))
    else:
        choice = [{"choice": 2, "reason": "towers"}]
        selector = LLMSingleSelector.from_defaults(llm=FixedLLM(text=json.dumps(choice)))
    return RouterQueryEngine(selector=selector, query_engine_tools=tools)


def test_router_single_selector_eng_is_the_selected_engines(index, handler) -> None:
    response = router(index, multi=False).query(TOWER)
    eng = handler.result(response, timeout=10).eng
    assert eng.answer == str(response) == DOCS[1] and eng.question == TOWER
    assert sorted(texts(eng)) == sorted(DOCS)
    assert [c.text for c in eng.contexts if c.used] == [DOCS[1]]
    node_ids = {n.node.node_id for n in response.source_nodes}
    assert set(response.metadata) == {"selector_result", *node_ids}  # no ENE keys


def test_router_multi_selector_eng_is_the_combination_against_the_answers(index, handler) -> None:
    response = router(index, multi=True).query(BOTH)
    eng = handler.result(response, timeout=10).eng
    assert eng.answer == str(response) and eng.question == BOTH
    inner = handler.linked(response)
    assert len(inner) == 2 and texts(eng) == [r.eng.answer for r in inner.values()]
    for result in inner.values():
        assert result.eng.question == BOTH and sorted(texts(result.eng)) == sorted(DOCS)
    assert eng.counts.supported >= 1


# -- chat: the question is the user's message ------------------------------------------------------
def test_condense_question_chat_question_is_the_users_message(index, handler) -> None:
    history = [ChatMessage(role="user", content="Tell me about Paris.")]
    chat = CondenseQuestionChatEngine.from_defaults(engine_of(index), chat_history=history)
    reply = chat.chat(TOWER)
    eng = handler.result(reply, timeout=10).eng
    assert eng.question == TOWER and eng.answer == reply.response
    assert sorted(texts(eng)) == sorted(DOCS) and reply.metadata is None


# -- agents ----------------------------------------------------------------------------------------
def check_agent(handler: Any, output: Any, question: str, answer: str) -> Any:
    assert isinstance(output, AgentOutput) and str(output) == answer
    eng = handler.result(output, timeout=10).eng
    assert eng.answer == answer and eng.question == question
    assert texts(eng) == [answer]  # the one tool output its last model call saw
    inner = handler.linked(output)[eng.contexts[0].id].eng
    assert inner.question == question and inner.answer == answer
    assert sorted(texts(inner)) == sorted(DOCS)  # necessity goes down to the chunks
    assert [c.text for c in inner.contexts if c.used] == [answer]
    return eng


async def test_function_agent_run_is_evaluated_against_its_tool_outputs(index, handler) -> None:
    agent = FunctionAgent(tools=[tool_of(index)], llm=scripted_agent_llm("facts"))
    output = await agent.run(user_msg=TOWER)
    eng = check_agent(handler, output, TOWER, DOCS[1])
    assert eng.contexts[0].id == "call-1" and eng.contexts[0].metadata["tool"] == "facts"
    assert eng.claims[0].classification == "fragile"


async def test_function_agent_stream_events_leaves_the_events_unchanged(index, handler) -> None:
    agent = FunctionAgent(tools=[tool_of(index)], llm=scripted_agent_llm("facts"))

    async def events() -> tuple[list[str], Any]:
        run = agent.run(user_msg=CAPITAL)
        seen = [type(e).__name__ async for e in run.stream_events()]
        return seen, await run

    eli.uninstrument()
    plain_events, plain_output = await events()
    eli.instrument(handler)
    traced_events, output = await events()
    assert traced_events == plain_events and str(output) == str(plain_output)
    assert "ToolCallResult" in traced_events
    check_agent(handler, output, CAPITAL, DOCS[0])


async def test_react_agent_is_evaluated_against_its_observations(index, handler) -> None:
    agent = ReActAgent(tools=[tool_of(index)], llm=ReActScript())
    output = await agent.run(user_msg=TOWER)
    check_agent(handler, output, TOWER, DOCS[1])


async def test_agent_workflow_and_earlier_turns(index, handler) -> None:
    agent = FunctionAgent(
        name="facts_agent",
        description="Answers from the facts tool.",
        tools=[tool_of(index)],
        llm=scripted_agent_llm("facts"),
    )
    workflow = AgentWorkflow(agents=[agent], root_agent="facts_agent")
    output = await workflow.run(user_msg=CAPITAL)
    check_agent(handler, output, CAPITAL, DOCS[0])
    assert handler.result(output).metadata["kind"] == "agent"


class RetrieveThenComplete(Workflow):
    """A workflow whose step retrieves (retrieval events fire), then calls ``acomplete``."""

    def __init__(self, index: VectorStoreIndex, *, top_k: int = 4, retrieve: bool = True) -> None:
        super().__init__()
        self.retriever = index.as_retriever(similarity_top_k=top_k)
        self.retrieve = retrieve

    @step
    async def answer(self, ev: StartEvent) -> StopEvent:
        nodes = await self.retriever.aretrieve(ev.query) if self.retrieve else []
        nodes = SortedNodes().postprocess_nodes(nodes)
        context = "\n".join(n.node.get_content() for n in nodes)
        response = await Settings.llm.acomplete(f"Context:\n{context}\nQuery: {ev.query}")
        return StopEvent(result=str(response))


async def test_workflow_step_calling_acomplete_is_evaluated_on_its_retrieval(
    index, handler
) -> None:
    plain = (eli.uninstrument(), await RetrieveThenComplete(index).run(query=TOWER))[1]
    eli.instrument(handler=handler)
    run = RetrieveThenComplete(index).run(query=TOWER)
    output = await run
    assert output == plain == DOCS[1]
    result = handler.result(run, timeout=5)  # by the handler run() returned
    seen = [
        n.node.get_content()
        for n in SortedNodes().postprocess_nodes(
            await index.as_retriever(similarity_top_k=4).aretrieve(TOWER)
        )
    ]
    assert result.eng.answer == output and result.eng.question == TOWER
    assert texts(result.eng) == seen and result.metadata["kind"] == "workflow"
    assert handler.result(run.get_stop_event()).request_id == result.request_id


async def test_workflow_without_retrieval_is_skipped_and_query_engines_keep_their_eng(
    index, handler
) -> None:
    run = RetrieveThenComplete(index, retrieve=False).run(query=TOWER)
    await run
    result = handler.result(run, timeout=0.5)
    assert result.eng is None and "no retrieved documents" in result.skipped

    class AskEngine(Workflow):  # no LLM call of its own: only the synthesis is evaluated
        @step
        async def answer(self, ev: StartEvent) -> StopEvent:
            return StopEvent(result=await engine_of(index).aquery(ev.query))

    response = await AskEngine().run(query=TOWER)
    assert handler.result(response, timeout=5).metadata["kind"] == "synthesis"


async def test_agent_without_tool_results_is_skipped_at_once(index, handler) -> None:
    llm = MockFunctionCallingLLM(
        response_generator=lambda messages, **kw: ChatMessage(role="assistant", content="Hello.")
    )
    output = await FunctionAgent(tools=[tool_of(index)], llm=llm).run(user_msg="Hi!")
    result = handler.result(output, timeout=0.5)  # no waiting out a timeout
    assert result.eng is None and "no retrieved documents" in result.skipped


async def test_tool_call_results_are_not_touched(index, handler) -> None:
    agent = FunctionAgent(tools=[tool_of(index)], llm=scripted_agent_llm("facts"))
    run = agent.run(user_msg=TOWER)
    results = [e async for e in run.stream_events() if isinstance(e, ToolCallResult)]
    await run
    raw = results[0].tool_output.raw_output
    assert (
        str(raw) == DOCS[1] and "ene" not in raw.metadata and "ene_request_id" not in raw.metadata
    )


# -- pruning an agent's output ---------------------------------------------------------------------
def two_call_agent(index: VectorStoreIndex) -> FunctionAgent:
    """Asks the tool about the tower and about Paris; answers the tower question from the first."""
    return FunctionAgent(tools=[tool_of(index)], llm=scripted_agent_llm("facts", [TOWER, CAPITAL]))


def calls_of(output: AgentOutput) -> list[ToolCallResult]:
    """The tool results in the output's order: parallel calls finish in any order."""
    return [t for t in output.tool_calls if isinstance(t, ToolCallResult)]


def call(output: AgentOutput, tool_id: str) -> ToolCallResult:
    return next(c for c in calls_of(output) if c.tool_id == tool_id)


def sources(output: AgentOutput) -> dict[str, list[str]]:
    """Each tool call's source texts, by call id."""
    return {
        c.tool_id: [n.node.get_content() for n in c.tool_output.raw_output.source_nodes]
        for c in calls_of(output)
    }


def agent_snapshot(output: AgentOutput) -> str:
    """Everything pruning could touch in an agent's output, as text."""
    raws = [c.tool_output.raw_output for c in calls_of(output)]
    return json.dumps(
        [
            str(output),
            sorted(output.keys()),
            [(c.tool_id, c.tool_output.content, sorted(c.keys())) for c in calls_of(output)],
            [(str(r), sorted(r.metadata), [n.node.node_id for n in r.source_nodes]) for r in raws],
        ]
    )


async def test_prune_agent_output_down_to_the_chunks_via_the_linked_engs(index, handler) -> None:
    output = await two_call_agent(index).run(user_msg=TOWER)
    assert str(output) == DOCS[1] and sorted(c.tool_id for c in calls_of(output)) == [
        "call-1",
        "call-2",
    ]
    before = agent_snapshot(output)
    assert {k: sorted(v) for k, v in sources(output).items()} == dict.fromkeys(
        ("call-1", "call-2"), sorted(DOCS)
    )
    pruned = eli.prune_unused(output)
    assert agent_snapshot(output) == before  # the original is untouched
    assert isinstance(pruned, AgentOutput) and pruned is not output and str(pruned) == DOCS[1]
    assert [(c.tool_id, c.tool_output.content) for c in calls_of(pruned)] == [
        (c.tool_id, {"call-1": DOCS[1], "call-2": DOCS[0]}[c.tool_id]) for c in calls_of(output)
    ]  # every tool call stays, in its place, with what the model read
    assert sources(pruned) == {"call-1": [DOCS[1]], "call-2": []}
    eng = handler.result(output).eng
    info = pruned.metadata["ene_pruning"]
    assert pruned.metadata["ene"] is eng and handler.request_id(pruned) == handler.request_id(
        output
    )
    assert info["kept"] == ["call-1"] and info["dropped"] == ["call-2"]
    inner = handler.linked(output)
    raw = call(pruned, "call-1").tool_output.raw_output
    assert raw.metadata["ene"] is inner["call-1"].eng  # the linked inner ENG decided
    assert info["sources"]["call-1"] == {
        "kept": [n.node.node_id for n in raw.source_nodes],
        "dropped": [c.id for c in inner["call-1"].eng.contexts if not c.used],
    }
    dropped = call(pruned, "call-2").tool_output.raw_output
    assert len(info["sources"]["call-2"]["dropped"]) == 4
    assert dropped.metadata["ene_pruning"]["tokens_saved"] == sum(
        c.tokens for c in inner["call-2"].eng.contexts
    )
    again = await eli.aprune_unused(output)
    assert agent_snapshot(again) == agent_snapshot(pruned)  # same inputs, same copy


async def test_aprune_agent_output_without_a_handler_evaluates_both_levels(
    index, keyword_engine
) -> None:
    output = await two_call_agent(index).run(user_msg=TOWER)
    before = agent_snapshot(output)
    pruned = await eli.aprune_unused(output, engine=keyword_engine, question=TOWER)
    assert agent_snapshot(output) == before
    assert sources(pruned) == {"call-1": [DOCS[1]], "call-2": []}
    eng = pruned.metadata["ene"]
    assert (
        eng.answer == DOCS[1] and eng.question == TOWER and "ene_request_id" not in pruned.metadata
    )
    assert [c.id for c in eng.contexts] == [c.tool_id for c in calls_of(output)]
    assert dict(zip([c.id for c in eng.contexts], texts(eng), strict=True)) == {
        "call-1": DOCS[1],
        "call-2": DOCS[0],
    }
    kept_raw, dropped_raw = (call(pruned, i).tool_output.raw_output for i in ("call-1", "call-2"))
    assert kept_raw.metadata["ene"].question == TOWER  # the tool's input was the inner question
    assert dropped_raw.metadata["ene_pruning"]["tokens_saved"] > 0
    assert dropped_raw.metadata["ene_pruning"]["reason"].startswith("the agent's answer did not")


async def test_prune_agent_output_fails_safe(index) -> None:
    output = await two_call_agent(index).run(user_msg=TOWER)
    broken = NecessityEngine(RaisingOracle())
    try:
        pruned = eli.prune_unused(output, engine=broken)
    finally:
        broken.close()
    assert {k: sorted(v) for k, v in sources(pruned).items()} == dict.fromkeys(
        ("call-1", "call-2"), sorted(DOCS)
    )  # nothing dropped anywhere
    info = pruned.metadata["ene_pruning"]
    assert info["kept"] == [c.tool_id for c in calls_of(output)]
    assert sorted(info["kept"]) == ["call-1", "call-2"] and "verifier is down" in info["reason"]
    assert "ene" not in pruned.metadata
    llm = MockFunctionCallingLLM(
        response_generator=lambda messages, **kw: ChatMessage(role="assistant", content="Hello.")
    )
    chatty = await FunctionAgent(tools=[tool_of(index)], llm=llm).run(user_msg="Hi!")
    pruned = eli.prune_unused(chatty)
    assert str(pruned) == "Hello." and pruned.tool_calls == []
    assert "no contexts to evaluate against" in pruned.metadata["ene_pruning"]["reason"]
