"""The claim stream (``engine.stream``): verdicts while the answer streams, the same ENG at the
end as ``evaluate``, whatever the chunking; bounded state; shared micro-batching."""

from __future__ import annotations

import asyncio
import gc
import itertools
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ene_core import NecessityEngine, Scores, StreamClosedError
from ene_core.engine.streaming import ClaimStream, SentenceTracker, same_verdict
from ene_core.errors import InvalidInputError, OracleError
from ene_core.graph import Claim, EvidenceNecessityGraph
from ene_core.kit.guard import ClaimGuard, annotate, replace
from ene_core.text.claims import split_claims
from ene_core.verifiers.keyword import KeywordOracle

CONTEXTS = [
    "Paris is the capital of France.",
    "The Eiffel Tower is in Paris. The tower is 330 metres tall.",
    "Bananas are yellow.",
]
ANSWER = (
    "Paris is the capital of France [1]. The tower is 330 metres tall. "
    "The tower is 500 metres tall.\nBananas grow on Mars."
)

# RAG-like pieces: sentences with stops that end nothing, markers, brackets, quotes, bullets,
# headings, questions and line breaks.
PIECES = [
    "Paris is the capital of France.",
    " The tower is 330 metres tall [2].",
    " It opened in 1889 (the World's Fair).",
    " Dr. Smith moved to the U.S. in 1990.",
    " He moved to the U.S. He liked it.",
    " The rate rose to 3.5 percent [1, 2].",
    ' She said "It is tall." Then she left.',
    " Bananas are yellow [3][1].",
    " It rose. [2]",
    " Is it the tallest?",
    " The documents do not say.",
    "\n",
    "\n- The tower is 330 metres tall.",
    "\n2) It opened in 1889",
    "\n# Summary\n",
    " Upgrade to v2.1.3. It fixes a leak.",
    " The shop opens at 9 a.m. on Mondays.",
    " Read e.g. The Hobbit first.",
    "\r\n",
]
answers = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)


def chunks(text: str, cuts: Sequence[int]) -> list[str]:
    """``text`` cut at ``cuts`` (positions, any order, repeats allowed)."""
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def drain(stream: ClaimStream, deltas: Sequence[str]) -> tuple[list[Claim], EvidenceNecessityGraph]:
    """Feed every delta, close, and collect every verdict the stream gave, in order."""
    seen: list[Claim] = []
    for delta in deltas:
        seen += stream.feed(delta)
    eng = stream.close(timeout=30)
    seen += stream.take()
    return seen, eng


def wait_for(stream: ClaimStream, count: int, timeout: float = 30.0) -> list[Claim]:
    """Poll ``take()`` until ``count`` verdicts came (the checks run in the engine's worker)."""
    got: list[Claim] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        got += stream.take()
        time.sleep(0.005)
    return got


# -- sentences: when is one complete ---------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(answers, st.lists(st.integers(min_value=0, max_value=400), max_size=30))
def test_complete_sentences_are_the_whole_answers_sentences(text: str, cuts: list[int]) -> None:
    tracker = SentenceTracker()
    for delta in chunks(text, cuts):
        tracker.add(delta)
    final = split_claims(text)
    done = tracker.done + tracker.rest()
    assert [(s.start, s.text, s.kind, s.cited) for s in done] == [
        (s.start, s.text, s.kind, s.cited) for s in final
    ]
    # a complete sentence's span only ever grows by whitespace that came later
    assert all(not text[a.end : b.end].strip() for a, b in zip(tracker.done, final, strict=False))


@pytest.mark.parametrize(
    ("prefix", "complete"),
    [
        ("He moved to the U.S. He", 0),  # "He" may still become "Hebrew"
        ("He moved to the U.S. He ", 1),
        ("It rose. [2", 0),  # a marker may still join the sentence
        ("It rose. (see", 0),  # a bracket is open
        ('She said "Go. Now', 0),  # a quote is open
        ("First line\n", 1),  # the line has ended
        ("One. Two. Thr", 1),
        ("One. Two. Three ", 2),
    ],
)
def test_a_sentence_is_complete_only_when_nothing_can_change_it(prefix: str, complete: int) -> None:
    tracker = SentenceTracker()
    tracker.add(prefix)
    assert len(tracker.done) == complete


# -- the stream and the ENG ----------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(answers, st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_any_chunking_gives_the_evaluate_eng_and_its_verdicts(text: str, cuts: list[int]) -> None:
    engine = NecessityEngine(KeywordOracle())
    try:
        reference = engine.evaluate(text, CONTEXTS, "Q?", id="r")
        stream = engine.stream(CONTEXTS, "Q?", id="r")
        seen, eng = drain(stream, chunks(text, cuts))
        assert eng.verdicts() == reference.verdicts()
        expected = [c for c in reference.claims if c.checkable]
        assert [c.index for c in seen] == [c.index for c in expected]
        assert all(same_verdict(a, b) for a, b in zip(seen, expected, strict=True))
        assert stream.revised == [] and stream.errors == []
    finally:
        engine.close()


def test_verdicts_arrive_before_the_stream_ends(keyword_engine: NecessityEngine) -> None:
    stream = keyword_engine.stream(CONTEXTS, id="early")
    stream.feed("Paris is the capital of France [1]. The tower")
    early = wait_for(stream, 1)
    assert [(c.index, c.status, c.necessary) for c in early] == [(0, "supported", [0])]
    assert early[0].citation_supported is True  # a claim with markers: its citations too
    stream.feed(" is 330 metres tall. The tower is 500 metres tall.\n")
    more = wait_for(stream, 2)
    assert [(c.index, c.status) for c in more] == [(1, "supported"), (2, "contradicted")]
    assert more[1].contradicted_by == [1]
    assert more[1].contradicted_by_ids == [keyword_engine.evaluate("", CONTEXTS).contexts[1].id]
    stream.feed("Bananas grow on Mars.")
    assert not stream.closed
    eng = stream.close(timeout=30)
    assert [(c.index, c.status) for c in stream.take()] == [(3, "unsupported")]
    assert eng.answer == ANSWER
    assert eng.verdicts() == keyword_engine.evaluate(ANSWER, CONTEXTS, id="early").verdicts()


async def test_afeed_aclose_and_the_async_iterator(keyword_engine: NecessityEngine) -> None:
    stream = keyword_engine.stream(CONTEXTS, "Where?", id="async")

    async def consume() -> list[Claim]:
        return [claim async for claim in stream]

    consumer = asyncio.create_task(consume())
    for word in ANSWER.split(" "):
        await stream.afeed(word + " ")
        await asyncio.sleep(0)
    eng = await stream.aclose()
    got = await asyncio.wait_for(consumer, 30)
    assert [c.index for c in got] == [c.index for c in eng.claims if c.checkable]
    final = [c for c in eng.claims if c.checkable]
    assert all(same_verdict(a, b) for a, b in zip(got, final, strict=True))
    again = [claim async for claim in stream]  # a new iterator starts from the first verdict
    assert [c.index for c in again] == [c.index for c in got]


def test_checks_of_concurrent_streams_share_the_micro_batcher() -> None:
    class Gated(KeywordOracle):
        """Holds the first batch until every stream has handed its sentence over."""

        def __init__(self) -> None:
            super().__init__()
            self.gate = threading.Event()

        def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
            self.gate.wait(30)
            return super().score(pairs)

    oracle = Gated()
    engine = NecessityEngine(oracle, max_wait_ms=1)
    try:
        streams = [engine.stream(CONTEXTS, id=f"s{i}") for i in range(16)]
        for i, stream in enumerate(streams):
            stream.feed(f"Paris is the capital of France [{i % 3 + 1}]. The ")
        oracle.gate.set()
        for stream in streams:
            assert len(wait_for(stream, 1)) == 1
        stats = engine.worker_stats
        assert stats["completed"] == 16
        assert stats["batches"] < 16  # the held-up checks went through in shared batches
    finally:
        engine.close()


# -- bounds ----------------------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_idle_stream_is_freed_after_its_ttl() -> None:
    engine = NecessityEngine(KeywordOracle(), stream_ttl_s=60)
    clock = engine._streams.clock = Clock()
    try:
        idle = engine.stream(CONTEXTS, id="idle")
        idle.feed("Paris is the capital of France. The tower")
        dropped = engine.stream(CONTEXTS, id="dropped")
        dropped.feed("Bananas are")
        ref = weakref.ref(dropped)
        del dropped  # never closed, and the app lets go of it
        assert engine.open_streams == 2
        clock.now = 61
        fresh = engine.stream(CONTEXTS, id="fresh")  # opening one sweeps the idle ones
        assert engine.open_streams == 1
        with pytest.raises(StreamClosedError, match="not fed for 60 s"):
            idle.feed(" is tall.")
        assert idle.text == "" and idle.take() == []  # its state is gone
        gc.collect()
        assert ref() is None
        assert fresh.close(timeout=30).answer == ""
        assert engine.open_streams == 0
    finally:
        engine.close()


def test_max_streams_frees_the_least_recently_fed() -> None:
    engine = NecessityEngine(KeywordOracle(), max_streams=2)
    try:
        first, second = engine.stream(CONTEXTS, id="1"), engine.stream(CONTEXTS, id="2")
        first.feed("Paris")  # now the second is the least recently fed
        third = engine.stream(CONTEXTS, id="3")
        assert engine.open_streams == 2
        with pytest.raises(StreamClosedError, match="max_streams"):
            second.feed(" is")
        first.feed(" is the capital of France.")
        third.feed("Bananas are yellow.")
        assert first.close(timeout=30).counts.supported == 1
        assert third.close(timeout=30).counts.supported == 1
    finally:
        engine.close()


# -- errors ----------------------------------------------------------------------------------------
def test_typed_errors(keyword_engine: NecessityEngine) -> None:
    with pytest.raises(InvalidInputError):
        keyword_engine.stream("not a list of contexts")
    stream = keyword_engine.stream(CONTEXTS)
    with pytest.raises(InvalidInputError, match="next piece"):
        stream.feed(b"bytes")  # type: ignore[arg-type]
    stream.feed("Paris is the capital of France.")
    stream.close(timeout=30)
    with pytest.raises(StreamClosedError, match="was closed"):
        stream.feed(" More.")
    discarded = keyword_engine.stream(CONTEXTS)
    discarded.discard()
    with pytest.raises(StreamClosedError, match="discarded"):
        discarded.close()


def test_a_full_queue_never_blocks_feed_and_the_eng_is_still_complete() -> None:
    class Slow(KeywordOracle):
        def __init__(self) -> None:
            super().__init__()
            self.gate = threading.Event()

        def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
            self.gate.wait(30)
            return super().score(pairs)

    oracle = Slow()
    engine = NecessityEngine(oracle, max_queue=1, max_batch_requests=1, overflow="reject")
    try:
        stream = engine.stream(CONTEXTS, id="full")
        for word in ANSWER.split(" "):  # the first check holds the worker, the queue fills up
            stream.feed(word + " ")
        assert engine.worker_stats["rejected"] >= 1
        oracle.gate.set()
        seen, eng = drain(stream, [])
        assert [c.index for c in seen] == [c.index for c in eng.claims if c.checkable]
        assert eng.verdicts() == engine.evaluate(ANSWER + " ", CONTEXTS, id="full").verdicts()
    finally:
        engine.close()


def test_a_failed_check_is_recorded_and_the_eng_still_comes() -> None:
    class FailsOnce(KeywordOracle):
        def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
            if self.calls == 0:
                self.calls += 1
                raise RuntimeError("the GPU fell off")
            return super().score(pairs)

    engine = NecessityEngine(FailsOnce())
    try:
        stream = engine.stream(CONTEXTS, id="flaky")
        stream.feed("Paris is the capital of France. The ")
        deadline = time.monotonic() + 30
        while not stream.errors and time.monotonic() < deadline:
            time.sleep(0.005)
        assert isinstance(stream.errors[0], OracleError)
        seen, eng = drain(stream, ["tower is 330 metres tall."])
        assert [(c.index, c.status) for c in seen] == [(0, "supported"), (1, "supported")]
        assert eng.counts.supported == 2
    finally:
        engine.close()


def test_with_the_shipped_verifier_the_stream_ends_in_the_evaluate_eng() -> None:
    """Robust to a retrained model: whatever its verdicts, streamed == whole-answer ENG."""
    pytest.importorskip("torch")
    engine = NecessityEngine()
    try:
        stream = engine.stream(CONTEXTS, "How tall is the tower?", id="nli")
        seen, eng = drain(stream, [w + " " for w in ANSWER.split(" ")])
        reference = engine.evaluate(ANSWER + " ", CONTEXTS, "How tall is the tower?", id="nli")
        assert eng.verdicts() == reference.verdicts()
        final = [c for c in reference.claims if c.checkable]
        assert len(seen) == len(final) == 4
        assert all(same_verdict(a, b) for a, b in zip(seen, final, strict=True))
    finally:
        engine.close()


# -- the guard, on a claim stream of its own ------------------------------------------------------
class Paced:
    """A model's tokens, each after the engine's worker went idle (a slow model)."""

    def __init__(self, engine: NecessityEngine, text: str) -> None:
        self.engine, self.text, self.closed = engine, text, False

    def __iter__(self) -> Iterator[str]:
        try:
            for word in re.findall(r"\S+\s*", self.text):
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    stats = self.engine.worker_stats
                    if stats["submitted"] == stats["completed"] + stats["failed"]:
                        break
                    time.sleep(0.002)
                yield word
        finally:
            self.closed = True


def test_guard_replaces_the_rest_after_a_contradicted_claim(
    keyword_engine: NecessityEngine,
) -> None:
    guard = ClaimGuard(
        lambda c: replace(" [The rest was withheld.]") if c.status == "contradicted" else None
    )
    model = Paced(keyword_engine, ANSWER)
    stream = keyword_engine.stream(CONTEXTS, id="guarded")
    shown = "".join(guard.wrap(iter(model), stream=stream))
    head, tail = shown.split(" [The rest was withheld.]")
    assert tail == "" and ANSWER.startswith(head) and "500 metres tall." in head
    assert "Mars" not in head
    assert [(c.index, a.kind) for c, a in guard.acted] == [(2, "replace")]
    assert stream.closed and keyword_engine.open_streams == 0


async def test_guard_on_an_async_token_stream(keyword_engine: NecessityEngine) -> None:
    async def tokens() -> AsyncIterator[str]:
        for word in Paced(keyword_engine, ANSWER):
            yield word

    guard = ClaimGuard(lambda c: annotate(f" [{c.status}]"))
    stream = keyword_engine.stream(CONTEXTS, id="aguarded")
    shown = "".join([t async for t in guard.awrap(tokens(), stream=stream)])
    assert re.sub(r" \[(contradicted|unsupported)\]", "", shown) == ANSWER
    assert [(c.index, c.status) for c, _ in guard.acted] == [
        (2, "contradicted"),
        (3, "unsupported"),
    ]
    assert shown.endswith("Mars. [unsupported]")  # the last verdict came with the ENG at the end


def test_a_short_answer_streams_read_with_its_question(keyword_engine: NecessityEngine) -> None:
    question = "What is the capital of France?"
    answer = "Paris.\nThe tower is 330 metres tall. Bananas are yellow."
    stream = keyword_engine.stream(CONTEXTS, question, id="short")
    seen, eng = drain(stream, [w + " " for w in answer.split(" ")])
    reference = keyword_engine.evaluate(answer + " ", CONTEXTS, question, id="short")
    assert eng.verdicts() == reference.verdicts()
    final = [c for c in reference.claims if c.checkable]
    assert final[0].hypothesis is not None  # the fragment was checked as the answer
    assert [c.index for c in seen] == [c.index for c in final]
    assert all(same_verdict(a, b) for a, b in zip(seen, final, strict=True))


def test_the_stream_reads_the_text_normalised_as_evaluate_does(
    keyword_engine: NecessityEngine,
) -> None:
    answer = "Paris is the capital\x00 of France. The tower is 330 metres tall."
    stream = keyword_engine.stream(CONTEXTS, id="odd")
    seen, eng = drain(stream, list(answer))
    assert eng.verdicts() == keyword_engine.evaluate(answer, CONTEXTS, id="odd").verdicts()
    assert stream.text == answer.replace("\x00", "") and stream.revised == []
    assert [c.status for c in seen] == ["supported", "supported"]
