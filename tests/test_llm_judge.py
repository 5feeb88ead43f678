"""LLMJudge against a real local chat-completions server (tests/judge_server.py): verdicts from
log probabilities, from text where there are none, retries, typed failures, the disk cache, and
a key that never shows."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest
from judge_server import JudgeServer

from ene_core import JudgeError, LLMJudge, NecessityEngine, OracleError
from ene_core.verifiers.llm_judge import KEY_ENV, PROMPT_VERSION, judge_messages

KEY = "sk-test-SECRET-0123456789"
PARIS = "Paris is the capital of France. The Seine flows through Paris."
CLAIM = "Paris is the capital of France."


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    s = JudgeServer()
    yield s
    s.close()


def judge(server: JudgeServer, **kwargs: object) -> LLMJudge:
    options: dict[str, object] = {"api_key": KEY, "backoff_s": 0.01, "timeout": 5.0}
    options.update(kwargs)
    return LLMJudge("test-model", base_url=server.url, **options)  # type: ignore[arg-type]


def test_supported_where_the_judge_says_so_from_log_probabilities(server: JudgeServer) -> None:
    j = judge(server)
    eng = NecessityEngine(j).evaluate(
        "Paris is the capital of France. Paris has a metro.", [PARIS, "Bananas are yellow."]
    )
    first, second = eng.claims
    assert first.status == "supported" and first.judge_read == "logprobs"
    assert first.p_entail == pytest.approx(0.95)  # "Yes" 0.9 + " yes" 0.05, both Yes-like
    assert second.status == "unsupported" and second.p_entail == pytest.approx(0.03)
    assert eng.verifier.model == "llm-judge:test-model"
    assert eng.verifier.revision == PROMPT_VERSION
    assert eng.stats.verifier_tokens > 0 and j.usage["tokens"] >= eng.stats.verifier_tokens
    sent = server.requests[0]
    assert sent["model"] == "test-model" and sent["temperature"] == 0 and sent["logprobs"]
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_three_way_prompt_finds_contradictions(server: JudgeServer) -> None:
    j = judge(server, three_way=True)
    eng = NecessityEngine(j).evaluate(
        "The tower is 300 metres tall.", ["The tower is 330 metres tall."]
    )
    assert eng.claims[0].status == "contradicted"
    assert eng.claims[0].p_contra == pytest.approx(0.95)
    assert "Unclear" in server.requests[0]["messages"][-1]["content"]


def test_no_log_probabilities_reads_the_text_and_the_eng_says_so(server: JudgeServer) -> None:
    server.mode = "nologprobs"
    eng = NecessityEngine(judge(server)).evaluate(CLAIM, [PARIS])
    claim = eng.claims[0]
    assert claim.status == "supported" and claim.p_entail == 1.0 and claim.judge_read == "text"


def test_a_server_that_refuses_log_probabilities_is_read_as_text(server: JudgeServer) -> None:
    server.mode = "refuse-logprobs"
    j = judge(server)
    assert j.score([(PARIS, CLAIM)])[0].read == "text"
    assert j.score([(PARIS, "Rome is in Spain.")])[0].entail == 0.0
    assert not server.requests[-1].get("logprobs")  # it stopped asking


def test_429_and_5xx_are_retried(server: JudgeServer) -> None:
    server.mode = "flaky"
    j = judge(server)
    scores = j.score([(PARIS, CLAIM), (PARIS, "Rome is in Spain.")])
    assert [round(s.entail, 2) for s in scores] == [0.95, 0.03]
    assert j.usage["retries"] == 4 and j.usage["requests"] == 2


@pytest.mark.parametrize("mode", ["500", "malformed", "wrong-shape", "401"])
def test_a_failing_server_is_a_typed_error(server: JudgeServer, mode: str) -> None:
    server.mode = mode
    j = judge(server, retries=1)
    with pytest.raises(JudgeError) as caught:
        j.score([(PARIS, CLAIM)])
    assert KEY not in str(caught.value)
    if mode == "401":
        assert KEY_ENV in str(caught.value) and len(server.requests) == 1  # no retry
    # through the engine: the request fails with the typed error, the app keeps going
    engine = NecessityEngine(j)
    outcome = engine.evaluate_many([{"answer": CLAIM, "contexts": [PARIS]}], return_exceptions=True)
    assert isinstance(outcome[0], OracleError) and isinstance(outcome[0], JudgeError)
    with pytest.raises(JudgeError):
        engine.submit(CLAIM, [PARIS]).result(timeout=30)
    engine.close()


def test_a_timeout_is_a_typed_error(server: JudgeServer) -> None:
    server.mode, server.delay = "slow", 1.0
    j = judge(server, timeout=0.2, retries=1)
    with pytest.raises(JudgeError, match="no answer within"):
        j.score([(PARIS, CLAIM)])


def test_an_unreachable_server_is_a_typed_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    j = LLMJudge(
        "m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, retries=1, backoff_s=0.01
    )
    with pytest.raises(JudgeError, match="cannot reach"):
        j.score([(PARIS, CLAIM)])


def test_the_key_never_shows(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    server.mode = "flaky"
    j = LLMJudge("test-model", base_url=server.url, backoff_s=0.01)  # the key from the env
    eng = NecessityEngine(j).evaluate(CLAIM, [PARIS])
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in eng.to_json() and KEY not in repr(j) and KEY not in str(vars(j).get("name"))
    assert KEY not in caplog.text and caplog.records  # the retries were logged, without it
    server.mode = "500"
    with pytest.raises(JudgeError) as caught:
        LLMJudge("test-model", base_url=server.url, retries=0).score([(PARIS, "x y")])
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)


def test_batching_and_the_disk_cache_do_not_change_scores(server: JudgeServer, tmp_path) -> None:
    pairs = [(PARIS, CLAIM), (PARIS, "Rome is in Spain."), (PARIS, CLAIM)]
    together = judge(server, cache_dir=tmp_path).score(pairs)
    apart = [judge(server).score([p])[0] for p in pairs]
    assert [(s.entail, s.contra) for s in together] == [(s.entail, s.contra) for s in apart]
    asked = len(server.requests)
    again = judge(server, cache_dir=tmp_path)
    cached = again.score(pairs)
    assert len(server.requests) == asked  # all from disk
    assert [(s.entail, s.contra, s.read) for s in cached] == [
        (s.entail, s.contra, s.read) for s in together
    ]
    assert all(s.tokens == 0 for s in cached) and again.usage["cache_hits"] == 2


def test_the_prompt_is_versioned() -> None:
    messages = judge_messages("DOC", "CLAIM")
    assert messages[-1]["content"].startswith("Document:\nDOC\n\nClaim: CLAIM")
    assert "Yes or No" in messages[-1]["content"]


def test_a_failing_judge_is_a_recorded_failure_for_an_adapter(
    server: JudgeServer, caplog: pytest.LogCaptureFixture
) -> None:
    from ene_core import NecessityDispatcher

    server.mode = "500"
    engine = NecessityEngine(judge(server, retries=1))
    dispatcher = NecessityDispatcher(engine, mode="inline")
    result = dispatcher.dispatch("run-1", CLAIM, [PARIS])
    assert result is not None and not result.ok and result.error is not None
    assert result.error.startswith("JudgeError:") and KEY not in result.error
    assert KEY not in caplog.text
    engine.close()
