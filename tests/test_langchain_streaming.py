"""LangChain apps that stream: verdicts reach ``on_claim`` before the stream ends, the app's
tokens are unchanged, the ENG is the one without streaming, verdicts of a model call that is
not the answer are retracted, a guard stops a stream, an abandoned stream is freed.

Real LCEL chains, ``create_agent`` and LangGraph graphs over a real InMemoryVectorStore; the
chat model streams word by word and waits, before each word, until ENE's worker is idle (a
slow model), so when a verdict arrives does not depend on the machine's speed.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langgraph.graph import END, START, StateGraph
from lc_world import StreamingChatModel, agent_script, by_keyword, make_store
from pydantic import BaseModel
from test_langchain_agents import retrieve, same

from ene_core import NecessityEngine, StreamedClaim
from ene_core.engine.streaming import same_verdict
from ene_core.kit.guard import ClaimGuard, annotate, stop
from ene_core.verifiers.keyword import KeywordOracle
from ene_integrations.langchain import NecessityCallbackHandler

QUESTION = "How tall is the Eiffel Tower?"
ANSWER = (
    "The Eiffel Tower is 330 metres tall. The Eiffel Tower was completed in 1889. "
    "The Eiffel Tower is 500 metres tall. Bananas are blue."
)
STORE = make_store()


@pytest.fixture
def engine() -> Any:
    engine = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    yield engine
    engine.close()


def idle(engine: NecessityEngine, timeout: float = 30.0) -> None:
    """Wait until the engine's worker has nothing queued or running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = engine.worker_stats
        if stats["submitted"] == stats["completed"] + stats["failed"]:
            return
        time.sleep(0.002)


class Log:
    """What the handler reported, and how far the app's stream was when it did."""

    def __init__(self) -> None:
        self.tokens = 0
        self.claims: list[tuple[str, StreamedClaim, int]] = []
        self.retracted: list[tuple[str, list[StreamedClaim]]] = []

    def on_claim(self, request_id: str, claim: StreamedClaim) -> None:
        self.claims.append((request_id, claim, self.tokens))

    def on_retract(self, request_id: str, claims: list[StreamedClaim]) -> None:
        self.retracted.append((request_id, claims))

    def standing(self) -> list[StreamedClaim]:
        """Emitted and not retracted, in order."""
        gone = {(r, c.index, c.text) for r, cs in self.retracted for c in cs}
        return [c for r, c, _ in self.claims if (r, c.index, c.text) not in gone]


def rag_chain(engine: NecessityEngine, answer: str = ANSWER) -> Any:
    """The LCEL RAG chain of the LangChain docs, with a model that streams ``answer``."""
    model = StreamingChatModel(
        respond=lambda messages: AIMessage(answer), pace=lambda: idle(engine)
    )
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context.\n{context}"), ("human", "{question}")]
    )
    retriever = STORE.as_retriever(search_kwargs={"k": 3})
    docs = retriever | (lambda found: "\n\n".join(d.page_content for d in found))
    return {"context": docs, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()


def tokens_of(events: list[Any]) -> str:
    return "".join(
        str(e["data"]["chunk"].content) for e in events if e["event"] == "on_chat_model_stream"
    )


def reference(engine: NecessityEngine, chain: Any, run_id: uuid.UUID) -> Any:
    """The ENG of the same run without streaming and without on_claim."""
    plain = NecessityCallbackHandler(engine)
    chain.invoke(QUESTION, config={"callbacks": [plain], "run_id": run_id})
    return plain.result(run_id, timeout=30).eng


def assert_streamed_as_the_eng(log: Log, eng: Any, request_id: str) -> None:
    final = [c for c in eng.claims if c.checkable]
    standing = [c for c in log.standing() if True]
    assert {r for r, _, _ in log.claims} == {request_id}
    assert [c.index for c in standing] == [c.index for c in final]
    assert all(same_verdict(a, b) for a, b in zip(standing, final, strict=True))


def test_chain_stream_gives_verdicts_before_the_stream_ends(engine: NecessityEngine) -> None:
    log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=log.on_claim, on_retract=log.on_retract)
    chain = rag_chain(engine)
    plain = list(chain.stream(QUESTION))
    run_id = uuid.uuid4()
    streamed = []
    for token in chain.stream(QUESTION, config={"callbacks": [handler], "run_id": run_id}):
        streamed.append(token)
        log.tokens += 1
    assert streamed == plain  # the app's tokens are unchanged
    result = handler.result(run_id, timeout=30)
    assert result.eng is not None and result.eng.answer == ANSWER
    early = [(c.index, c.status, at) for _, c, at in log.claims if at < len(streamed)]
    assert [(k, status) for k, status, _ in early] == [
        (0, "supported"),
        (1, "supported"),
        (2, "contradicted"),
    ]
    assert log.claims[2][1].contradicted_by_ids == ["tower-height"]
    assert log.claims[0][1].necessary_ids == ["tower-height"]
    assert log.retracted == []
    assert_streamed_as_the_eng(log, result.eng, str(run_id))
    assert result.eng.verdicts() == reference(engine, chain, run_id).verdicts()
    assert engine.open_streams == 0


async def test_astream_and_astream_events(engine: NecessityEngine) -> None:
    log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=log.on_claim, on_retract=log.on_retract)
    chain = rag_chain(engine)
    plain = [t async for t in chain.astream(QUESTION)]
    run_id, events_id = uuid.uuid4(), uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    streamed = []
    async for token in chain.astream(QUESTION, config=config):
        streamed.append(token)
        log.tokens += 1
    assert streamed == plain
    eng = (await handler.aresult(run_id, timeout=30)).eng
    assert [c.index for _, c, at in log.claims if at < len(streamed)] == [0, 1, 2]
    assert_streamed_as_the_eng(log, eng, str(run_id))

    events_log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=events_log.on_claim)
    config = {"callbacks": [handler], "run_id": events_id}
    events = [e async for e in chain.astream_events(QUESTION, version="v2", config=config)]
    plain_events = [e async for e in chain.astream_events(QUESTION, version="v2")]
    # the parallel branches' events may interleave differently; the model's tokens may not
    assert sorted((e["event"], e["name"]) for e in events) == sorted(
        (e["event"], e["name"]) for e in plain_events
    )
    assert tokens_of(events) == tokens_of(plain_events) == ANSWER
    eng = (await handler.aresult(events_id, timeout=30)).eng
    assert_streamed_as_the_eng(events_log, eng, str(events_id))


def test_agent_stream_messages_the_tool_call_is_not_the_answer(engine: NecessityEngine) -> None:
    log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=log.on_claim, on_retract=log.on_retract)
    answer = "The Eiffel Tower is 330 metres tall. The Eiffel Tower was completed in 1889."
    model = StreamingChatModel(respond=agent_script({QUESTION: answer}), pace=lambda: idle(engine))
    agent = create_agent(model, tools=[retrieve])
    state = {"messages": [{"role": "user", "content": QUESTION}]}
    plain = list(agent.stream(state, stream_mode="messages"))
    run_id = uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    streamed = list(agent.stream(state, config=config, stream_mode="messages"))
    assert same(streamed, plain)
    result = handler.result(run_id, timeout=30)
    assert result.eng is not None and result.eng.answer == answer
    assert [c.id for c in result.eng.contexts] == ["tower-height", "tower-year"]
    assert log.retracted == []
    assert_streamed_as_the_eng(log, result.eng, str(run_id))
    assert log.claims[0][2] < len(streamed)  # the first verdict came while the answer streamed


class SelfRag(TypedDict, total=False):
    question: str
    context: str
    generation: str
    grade: str


def test_a_grader_after_the_answer_is_not_the_answer(engine: NecessityEngine) -> None:
    """Self-RAG: the grader streams checkable sentences too (the first is checked while the
    grader streams); the run model decides the generation is the answer, so the grader's
    verdicts are retracted."""
    log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=log.on_claim, on_retract=log.on_retract)
    answer = "The Eiffel Tower is 330 metres tall. Bananas are blue."
    grade = "The generation is grounded in the retrieved facts. It needs no rewrite."
    generator = StreamingChatModel(respond=lambda m: AIMessage(answer), pace=lambda: idle(engine))
    grader = StreamingChatModel(respond=by_keyword([("Grade", grade)]), pace=lambda: idle(engine))
    retriever = STORE.as_retriever(search_kwargs={"k": 2})

    def retrieve_node(state: SelfRag) -> SelfRag:
        docs = retriever.invoke(state["question"])
        return {"context": "\n".join(d.page_content for d in docs)}

    def generate(state: SelfRag) -> SelfRag:
        reply = generator.invoke(f"Context: {state['context']}\nQuestion: {state['question']}")
        return {"generation": str(reply.content)}

    def grade_node(state: SelfRag) -> SelfRag:
        reply = grader.invoke(f"Grade: {state['generation']}\nFacts: {state['context']}")
        return {"grade": str(reply.content)}

    graph = StateGraph(SelfRag)
    for name, node in (("retrieve", retrieve_node), ("generate", generate), ("grade", grade_node)):
        graph.add_node(name, node)
    graph.add_edge(START, "retrieve")
    graph.add_edge("retrieve", "generate")
    graph.add_edge("generate", "grade")
    graph.add_edge("grade", END)
    app = graph.compile()
    run_id = uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    chunks = list(app.stream({"question": QUESTION}, config=config, stream_mode="messages"))
    assert "".join(str(c[0].content) for c in chunks) == answer + grade
    result = handler.result(run_id, timeout=30)
    assert result.eng is not None and result.eng.answer == answer
    retracted = [c.text for _, claims in log.retracted for c in claims]
    assert retracted == ["The generation is grounded in the retrieved facts."]
    assert_streamed_as_the_eng(log, result.eng, str(run_id))


def test_a_guard_stops_the_stream_on_a_contradicted_claim(engine: NecessityEngine) -> None:
    run_id = uuid.uuid4()
    guard = ClaimGuard(
        lambda claim: stop() if claim.status == "contradicted" else None, request_id=str(run_id)
    )
    handler = NecessityCallbackHandler(engine, on_claim=guard.on_claim)
    chain = rag_chain(engine)
    tokens = chain.stream(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    shown = "".join(guard.wrap(tokens))
    assert ANSWER.startswith(shown)
    assert "500 metres tall." in shown and "blue" not in shown  # stopped right after it
    assert [(c.index, a.kind) for c, a in guard.acted] == [(2, "stop")]
    result = handler.result(run_id, timeout=30)
    assert result.eng is None  # the model was stopped: no answer to evaluate
    assert engine.open_streams == 0


def test_a_guard_annotates_and_lets_the_rest_through(engine: NecessityEngine) -> None:
    run_id = uuid.uuid4()
    note = " [not supported by the sources]"

    def policy(claim: StreamedClaim) -> Any:
        return annotate(note)

    guard = ClaimGuard(policy, request_id=str(run_id))
    handler = NecessityCallbackHandler(engine, on_claim=guard.on_claim)
    chain = rag_chain(engine)
    tokens = chain.stream(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    shown = "".join(guard.wrap(tokens, finish=lambda: handler.result(run_id, timeout=30)))
    assert shown.replace(note, "") == ANSWER  # the model's tokens, all of them, unchanged
    # between tokens, as soon as the verdict is in: just after the flagged sentence
    assert shown.index(note) > ANSWER.index("500 metres tall.")
    assert shown.index(note) < shown.index("blue")
    assert shown.endswith("blue." + note)  # the last claim's verdict came with the ENG
    assert [(c.index, c.status) for c, _ in guard.acted] == [
        (2, "contradicted"),
        (3, "unsupported"),
    ]
    assert handler.result(run_id, timeout=30).eng is not None


def test_an_abandoned_stream_is_freed(engine: NecessityEngine) -> None:
    log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=log.on_claim, on_retract=log.on_retract)
    run_id = uuid.uuid4()
    stream = rag_chain(engine).stream(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    for i, _token in enumerate(stream):
        if i == 12:  # after the first sentence's verdict
            break
    stream.close()
    assert handler.result(run_id, timeout=30).eng is None  # no answer: nothing evaluated
    assert [c.index for _, c, _ in log.claims] == [0]
    assert [[c.index for c in claims] for _, claims in log.retracted] == [[0]]  # no answer
    assert engine.open_streams == 0


def test_each_verdict_is_a_span_event_at_the_time_it_was_known(engine: NecessityEngine) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ene_integrations.otel import CLAIM_EVENT, NecessitySpanRecorder

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    log = Log()
    handler = NecessityCallbackHandler(
        engine, on_claim=log.on_claim, recorders=[NecessitySpanRecorder(provider)]
    )
    run_id = uuid.uuid4()
    tokens = list(
        rag_chain(engine).stream(QUESTION, config={"callbacks": [handler], "run_id": run_id})
    )
    result = handler.result(run_id, timeout=30)
    assert "".join(tokens) == ANSWER and result.eng is not None
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "ene.evaluate"]
    events = {e.attributes["ene.claim.index"]: e for e in span.events if e.name == CLAIM_EVENT}
    streamed = [k for k, e in sorted(events.items()) if e.attributes.get("ene.claim.streamed")]
    assert streamed == [0, 1, 2]  # the last claim was known with the ENG
    times = [events[k].timestamp for k in range(4)]
    assert times == sorted(times) and times[2] < result.started_ns <= times[3]
    assert span.start_time == times[0]  # the span covers the verdicts
    assert events[2].attributes["ene.claim.status"] == "contradicted"


class JsonGrader(StreamingChatModel):
    """A grader behind ``with_structured_output``: the binding carries the structured-output
    format (what LangChain reports to callbacks); its reply streams as text."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(**kwargs)


class Grade(BaseModel):
    grounded: bool


def test_a_structured_output_call_is_never_a_candidate(engine: NecessityEngine) -> None:
    log = Log()
    handler = NecessityCallbackHandler(engine, on_claim=log.on_claim, on_retract=log.on_retract)
    answer = "The Eiffel Tower is 330 metres tall. Bananas are blue."
    verdict = "The answer is grounded in the facts. It needs no rewrite."
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    generator = StreamingChatModel(respond=lambda m: AIMessage(answer), pace=lambda: idle(engine))
    grader = JsonGrader(respond=lambda m: AIMessage(verdict), pace=lambda: idle(engine))
    docs = STORE.as_retriever(search_kwargs={"k": 2}) | (
        lambda found: "\n".join(d.page_content for d in found)
    )
    with_context = ChatPromptTemplate.from_messages(
        [("system", "{context}"), ("human", "{question}")]
    )
    app = {"context": docs, "question": RunnablePassthrough()} | RunnableParallel(
        answer=with_context | generator | StrOutputParser(),
        grade=prompt | grader.with_structured_output(Grade),
    )
    run_id = uuid.uuid4()
    list(app.stream(QUESTION, config={"callbacks": [handler], "run_id": run_id}))
    result = handler.result(run_id, timeout=30)
    assert result.eng is not None and result.eng.answer == answer
    assert all(c.text != "The answer is grounded in the facts." for _, c, _ in log.claims)
    assert log.retracted == []
    assert_streamed_as_the_eng(log, result.eng, str(run_id))


class WithoutStreams:
    """An engine with the ``Engine`` surface and no ``stream`` (like a ``RemoteEngine``)."""

    def __init__(self, engine: NecessityEngine) -> None:
        self._engine = engine
        self.oracle, self.threshold = engine.oracle, engine.threshold

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        return self._engine.submit(*args, **kwargs)


def test_an_engine_without_streams_gives_the_verdicts_with_the_eng(
    engine: NecessityEngine,
) -> None:
    log = Log()
    handler = NecessityCallbackHandler(
        WithoutStreams(engine), on_claim=log.on_claim, on_retract=log.on_retract
    )  # type: ignore[arg-type]
    run_id = uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    tokens = []
    for token in rag_chain(engine).stream(QUESTION, config=config):
        tokens.append(token)
        log.tokens += 1
    result = handler.result(run_id, timeout=30)
    assert "".join(tokens) == ANSWER and result.eng is not None
    assert all(at == len(tokens) for _, _, at in log.claims)  # all of them with the ENG
    assert_streamed_as_the_eng(log, result.eng, str(run_id))
