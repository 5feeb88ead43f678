"""The framework-free run model: which answer, question and contexts a run is evaluated on."""

from __future__ import annotations

import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import IncompleteRequestError, NecessityDispatcher, NecessityEngine
from ene_core.kit.runs import Message, RunRecorder, dispatch_decision, normalise
from ene_core.verifiers.keyword import KeywordOracle

PARIS = {"id": "paris", "text": "Paris is the capital of France."}
TOWER = {"id": "tower", "text": "The Eiffel Tower is 330 metres tall."}
BANANA = {"id": "banana", "text": "Bananas are yellow."}
ANSWER = "Paris is the capital of France. The tower is 330 metres tall."


def tool_turn(rec: RunRecorder, docs: list[Any], *, call: str = "m1") -> list[Message]:
    """An agent's first model call asks for a tool; the tool returns ``docs`` as its artifact."""
    question = Message("user", "What is the capital of France and how tall is the tower?")
    rec.model_start(call, [question])
    rec.model_end(call, "")
    rec.documents(docs, origin="tool-run")
    content = "\n\n".join(d["text"] for d in docs)
    return [question, Message("assistant", "", tool_calls=1), Message("tool", content)]


def test_lcel_chain_string_in_string_out() -> None:
    rec = RunRecorder()
    rec.root_input("capital of France")
    rec.documents([PARIS, TOWER, BANANA], origin="retriever")
    rec.model_start("m", f"Context:\n{TOWER['text']}\n{PARIS['text']}\nQuestion: capital?")
    rec.model_end("m", ANSWER)
    decision = rec.decide(ANSWER)
    assert decision.ok and decision.answer == ANSWER
    assert decision.question == "capital of France"
    assert decision.contexts == [TOWER, PARIS]  # order of the model's input; banana never seen
    assert decision.origins == [("retriever", 1), ("retriever", 0)]
    assert decision.context_source == "input"


def test_agent_answer_is_the_final_message_and_contexts_are_the_tool_results() -> None:
    rec = RunRecorder()
    history = tool_turn(rec, [PARIS, TOWER])
    rec.root_input({"messages": history[:1]})
    rec.model_start("m2", history)
    rec.model_end("m2", ANSWER)
    rec.model_start("grader", [Message("user", f"Is this grounded? {ANSWER}")])
    rec.model_end("grader", "yes")  # a grader after the generator is not the answer
    out = {"messages": [*history, Message("assistant", ANSWER)]}
    decision = rec.decide(out)
    assert decision.answer == ANSWER
    assert decision.question == history[0].text
    assert decision.contexts == [PARIS, TOWER]


def test_generation_key_wins_over_the_last_model_and_rejected_documents_are_out() -> None:
    rec = RunRecorder()
    rec.root_input({"question": "capital of France?"})
    rec.documents([PARIS, BANANA], origin="r1")
    rec.model_start("grade-banana", [Message("user", f"Relevant? {BANANA['text']}")])
    rec.model_end("grade-banana", "no")
    rec.model_start("rewrite", [Message("user", "Rewrite: capital of France?")])
    rec.model_end("rewrite", "France capital city")
    rec.documents([PARIS, TOWER], origin="r2")  # the same Paris document retrieved again
    rec.model_start("gen", [Message("system", f"{PARIS['text']}\n{TOWER['text']}")])
    rec.model_end("gen", ANSWER)
    rec.model_start("grade", [Message("user", ANSWER)])
    rec.model_end("grade", "yes")
    decision = rec.decide({"question": "capital of France?", "generation": ANSWER})
    assert decision.answer == ANSWER and decision.question == "capital of France?"
    assert decision.contexts == [PARIS, TOWER]  # once each; the rejected banana is not there
    assert decision.origins == [("r1", 0), ("r2", 1)]


def test_earlier_turns_artifacts_in_the_history_count() -> None:
    rec = RunRecorder()
    old = Message("tool", PARIS["text"], documents=(PARIS,))
    history = [
        Message("user", "capital?"),
        Message("assistant", "", 1),
        old,
        Message("assistant", "Paris."),
        Message("user", "and the tower?"),
    ]
    rec.root_input({"messages": history})
    turn = tool_turn(rec, [TOWER], call="m1")
    rec.model_start("m2", [*history, *turn[1:]])
    rec.model_end("m2", ANSWER)
    decision = rec.decide({"messages": [*history, *turn[1:], Message("assistant", ANSWER)]})
    assert decision.question == "and the tower?"
    assert decision.contexts == [PARIS, TOWER]
    assert decision.origins == [("input", 0), ("tool-run", 0)]


def test_documents_without_ids_are_deduplicated_by_normalised_text() -> None:
    rec = RunRecorder()
    rec.root_input("q")
    rec.documents(["Paris is the capital of France.", "paris is the  CAPITAL of France"])
    rec.model_start("m", "Paris is the capital of France.")
    rec.model_end("m", "Paris is the capital.")
    decision = rec.decide("Paris is the capital.")
    assert decision.contexts == ["Paris is the capital of France."]


def test_tagged_documents_replace_the_input_match() -> None:
    rec = RunRecorder()
    rec.root_input("q")
    rec.documents([PARIS, TOWER, BANANA], origin="r")
    rec.documents([TOWER, PARIS], origin="rerank", tagged=True)
    rec.model_start("m", "summaries only")  # the model saw a rewritten form: tag says what
    rec.model_end("m", ANSWER)
    decision = rec.decide(ANSWER)
    assert decision.contexts == [TOWER, PARIS] and decision.context_source == "tagged"


def test_explicit_outcomes() -> None:
    no_retrieval = RunRecorder()
    no_retrieval.root_input("hi")
    no_retrieval.model_start("m", "hi")
    no_retrieval.model_end("m", "hello")
    decision = no_retrieval.decide("hello")
    assert not decision.ok and "no retrieved documents" in (decision.skipped or "")

    unseen = RunRecorder()
    unseen.documents([BANANA])
    unseen.model_start("m", "hi")
    unseen.model_end("m", "hello")
    assert "none of the 1 recorded documents" in (unseen.decide("hello").skipped or "")

    no_answer = RunRecorder()
    no_answer.documents([PARIS])
    no_answer.model_start("m", PARIS["text"])
    no_answer.model_end("m", "")
    assert "no answer" in (no_answer.decide({"messages": [Message("user", "q")]}).skipped or "")

    failed = RunRecorder().decide(error=ValueError("boom"))
    assert isinstance(failed.error, ValueError) and not failed.ok


def test_stopped_early() -> None:
    rec = RunRecorder()
    rec.documents([PARIS])
    rec.model_start("m", PARIS["text"])
    assert isinstance(rec.decide(stopped=True).error, IncompleteRequestError)
    rec.model_end("m", "Paris is the capital of France.")
    decision = rec.decide(stopped=True)  # the model had finished: its output is the answer
    assert decision.answer == "Paris is the capital of France." and decision.contexts == [PARIS]


def test_question_fallback_and_other_answer_shapes() -> None:
    rec = RunRecorder()
    rec.root_input({"topic": 3})  # no question in the input: the answering call's user message
    rec.documents([PARIS])
    rec.model_start("m", [Message("system", PARIS["text"]), Message("user", "capital?")])
    rec.model_end("m", "Paris.")
    assert rec.decide({"reply": "Paris."}).answer == "Paris."  # a string some model wrote
    assert rec.decide({"reply": "Paris."}).question == "capital?"
    assert rec.decide(Message("assistant", "Paris.")).answer == "Paris."
    assert rec.decide([Message("user", "q"), Message("assistant", "Paris.")]).answer == "Paris."
    assert rec.decide({"answer": "PARIS!"}).answer == "PARIS!"  # matches after normalising
    assert not rec.decide({"reply": "London."}).ok  # not written by any model


def test_bounded_state() -> None:
    rec = RunRecorder(max_documents=3, max_model_calls=2)
    rec.documents([f"doc {i}" for i in range(10)])
    assert rec.dropped == 7
    for i in range(5):
        rec.model_start(i, "doc 0 doc 1")
    assert len(rec._calls) == 2 and list(rec._calls) == [3, 4]
    rec.model_end(0, "evicted")  # an evicted call's end is ignored
    rec.model_end(4, "doc 0")
    assert rec.decide("doc 0").contexts == ["doc 0", "doc 1"]


def test_events_from_many_threads() -> None:
    rec = RunRecorder()
    rec.root_input("q")
    docs = [{"id": f"d{i}", "text": f"fact number {i} here"} for i in range(40)]

    def tool(i: int) -> None:
        rec.documents(docs[i * 4 : i * 4 + 4], origin=f"tool{i}")

    threads = [threading.Thread(target=tool, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rec.model_start("m", "\n".join(d["text"] for d in docs))
    rec.model_end("m", "fact number 1 here")
    assert rec.decide("fact number 1 here").contexts == docs  # input order, whatever the threads


def test_dispatch_decision_records_skips_and_evaluates() -> None:
    engine = NecessityEngine(KeywordOracle(), max_wait_ms=1)
    try:
        dispatcher = NecessityDispatcher(engine)
        rec = RunRecorder()
        rec.root_input("q")
        rec.model_start("m", "hello")
        rec.model_end("m", "hello")
        dispatch_decision(dispatcher, "skip", rec.decide("hello"))
        skipped = dispatcher.result("skip", timeout=0)  # at once, no waiting
        assert skipped.eng is None and skipped.error is None and skipped.skipped
        dispatch_decision(dispatcher, "err", rec.decide(error=KeyError("x")))
        assert "KeyError" in (dispatcher.result("err", timeout=0).error or "")
        rec.documents([PARIS])
        rec.model_start("m2", PARIS["text"])
        rec.model_end("m2", PARIS["text"])
        dispatch_decision(dispatcher, "ok", rec.decide(PARIS["text"]))
        eng = dispatcher.result("ok", timeout=10).eng
        assert eng is not None and [c.id for c in eng.contexts] == ["paris"]
    finally:
        engine.close()


# -- properties ----------------------------------------------------------------------------------

words = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
sentences = st.lists(words, min_size=2, max_size=6).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(sentences, min_size=1, max_size=8, unique_by=normalise),
    seen=st.data(),
    repeats=st.integers(min_value=1, max_value=3),
)
def test_contexts_are_exactly_the_recorded_documents_in_the_answering_input(
    texts: list[str], seen: st.DataObject, repeats: int
) -> None:
    shown = seen.draw(st.lists(st.sampled_from(texts), unique=True))
    docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)]
    rec = RunRecorder()
    rec.root_input({"messages": [Message("user", "the question")]})
    for _ in range(repeats):  # the same documents retrieved several times
        rec.documents(docs, origin="r")
    prompt = " || ".join(shown)
    rec.model_start("gen", [Message("system", prompt), Message("user", "the question")])
    rec.model_end("gen", "ANSWER TEXT")
    rec.model_start("grader", [Message("user", " ".join(texts))])  # saw everything
    rec.model_end("grader", "yes")
    decision = rec.decide({"messages": [Message("assistant", "ANSWER TEXT")]})
    assert decision.answer == "ANSWER TEXT" and decision.question == "the question"
    got = {d["id"] for d in decision.contexts}
    expected = {d["id"] for d in docs if f" {normalise(d['text'])} " in f" {normalise(prompt)} "}
    assert got == expected and len(decision.contexts) == len(got)
    assert set(map(normalise, shown)) <= {normalise(d["text"]) for d in decision.contexts}
    if not shown:
        assert decision.skipped and not decision.ok


@settings(max_examples=100, deadline=None)
@given(st.permutations(list(range(6))))
def test_the_decision_does_not_depend_on_the_order_documents_arrived(order: list[int]) -> None:
    docs = [{"id": f"d{i}", "text": f"sentence {i} about topic {i}"} for i in range(6)]
    prompt = "\n".join(d["text"] for d in docs[::2])
    rec = RunRecorder()
    rec.root_input("q")
    for i in order:
        rec.documents([docs[i]], origin=i)
    rec.model_start("m", prompt)
    rec.model_end("m", "an answer")
    assert rec.decide("an answer").contexts == docs[::2]


@given(st.text(max_size=60))
def test_normalise_is_idempotent_and_whitespace_blind(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert normalise(" \n".join(text.split())) == normalise(text)
