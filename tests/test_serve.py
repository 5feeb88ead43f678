"""``ene serve`` and ``RemoteEngine``: a real local Ray Serve (keyword oracle), and the client
against dead, silent and scripted services.

The module starts one ``ene serve`` process (a local Ray, 2 CPUs at most, one replica) and
stops it in the last test, mid-run. Everything else here needs no Ray.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")

from ene_core import (  # noqa: E402
    EvidenceNecessityGraph,
    InvalidInputError,
    LimitExceededError,
    NecessityEngine,
    OracleError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
    ServiceUnavailableError,
)
from ene_core.cli import build_engine, main  # noqa: E402
from ene_core.engine.request import parse_request  # noqa: E402
from ene_core.graph import SCHEMA_VERSION  # noqa: E402
from ene_core.service.remote import RemoteEngine  # noqa: E402
from ene_core.service.serve import Limits, ServeConfig, Service  # noqa: E402
from ene_core.verifiers.keyword import KeywordOracle  # noqa: E402

TOKEN = "test-token-" + uuid.uuid4().hex
REQUESTS: list[dict[str, Any]] = [
    {"id": "a", "answer": "Paris is in France. Dogs fly.", "contexts": ["Paris is in France."]},
    {
        "id": "b",
        "answer": "The cat sat on the mat. The tower is 300 metres tall.",
        "contexts": ["The tower is 300 metres tall.", "The cat sat on the mat.", "Red."],
        "question": "Where?",
    },
    {
        "id": "c",
        "answer": "The tower is 200 metres tall.",
        "contexts": ["The tower is 300 metres."],
    },
    {"id": "d", "answer": "Paris is the capital of France.", "contexts": []},
    {
        "answer": "The festival takes place in spring [1]. It attracts visitors [2].",
        "contexts": [
            {"text": "The festival takes place in spring.", "id": "s", "metadata": {"page": 3}},
            {"text": "It attracts visitors.", "metadata": {"tags": ["x", 1], "score": 0.5}},
            {"page_content": "Tickets are sold online."},
        ],
    },
    {  # a one-word answer: checked as the answer to its question
        "id": "f",
        "answer": "1889",
        "contexts": ["The tower was completed in 1889."],
        "question": "In what year was the tower completed?",
    },
]
ENGINE_FLAGS = argparse.Namespace(
    oracle="keyword", model=None, threshold=None, batch_size=None, device=None
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    """This checkout first on the path of every process the tests start (and Ray's workers)."""
    root = str(Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


def verdicts(engs: list[Any]) -> list[dict[str, Any]]:
    return [e.verdicts() for e in engs]


@pytest.fixture(scope="module")
def local() -> Iterator[NecessityEngine]:
    engine = build_engine(ENGINE_FLAGS)
    assert isinstance(engine, NecessityEngine)
    yield engine
    engine.close()


# -- the client alone: dead, silent and scripted services ------------------------------------------


def test_a_dead_url_fails_fast_and_typed() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with RemoteEngine(url, timeout=5, retries=2, backoff_s=0.01) as engine:
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError, match="cannot reach"):
            engine.evaluate("Paris is in France.", ["Paris is in France."])
        future = engine.submit("Paris is in France.", ["Paris is in France."])
        assert isinstance(future.exception(timeout=5), ServiceUnavailableError)
        outcomes = engine.evaluate_many(REQUESTS, return_exceptions=True)
        assert all(isinstance(o, ServiceUnavailableError) for o in outcomes)
        assert time.monotonic() - started < 3
        assert not engine.healthy()
        assert engine.worker_stats["failed"] == 1


def test_a_silent_service_times_out_within_the_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with RemoteEngine(url, timeout=0.5) as engine:
            started = time.monotonic()
            with pytest.raises(ServiceTimeoutError):
                engine.evaluate("Paris is in France.", ["Paris is in France."])
            with pytest.raises(ServiceTimeoutError):
                asyncio.run(engine.aevaluate("Paris is in France.", ["Paris is in France."]))
            assert time.monotonic() - started < 2.5


def scripted(statuses: list[int]) -> tuple[Any, list[int]]:
    """A transport answering ``statuses`` in turn (then 200 with the local ENG); logs calls."""
    calls: list[int] = []
    local = NecessityEngine(KeywordOracle())

    def answer(request: Any) -> Any:
        calls.append(1)
        status = statuses[len(calls) - 1] if len(calls) <= len(statuses) else 200
        if status == 200:
            item = json.loads(request.content)
            return httpx.Response(200, text=local.evaluate_many([item])[0].to_json())
        error = {"type": "OracleError" if status == 500 else "X", "message": f"status {status}"}
        return httpx.Response(status, json={"error": error})

    return httpx.MockTransport(answer), calls


@pytest.mark.parametrize(
    ("statuses", "calls", "error"),
    [
        ([503, 502, 504], 4, None),  # unavailable: retried, then answered
        ([429], 2, None),
        ([503] * 4, 4, ServiceUnavailableError),  # out of retries
        ([500], 1, OracleError),  # the evaluation failed: never retried
        ([400], 1, ServiceError),
        ([401], 1, ServiceAuthError),
    ],
)
def test_only_failures_before_an_answer_are_retried(
    statuses: list[int], calls: int, error: type[Exception] | None
) -> None:
    transport, log = scripted(statuses)
    with RemoteEngine("http://ene", retries=3, backoff_s=0.001, transport=transport) as engine:
        if error is None:
            assert isinstance(engine.evaluate("Paris is.", ["Paris is."]), EvidenceNecessityGraph)
        else:
            with pytest.raises(error):
                engine.evaluate("Paris is.", ["Paris is."])
    assert len(log) == calls


def test_a_full_client_queue_rejects_without_blocking() -> None:
    release = threading.Event()

    def slow(request: Any) -> Any:
        release.wait(5)
        return httpx.Response(503)

    engine = RemoteEngine(
        "http://ene", max_connections=1, max_queue=2, retries=0, transport=httpx.MockTransport(slow)
    )
    try:
        held = [engine.submit("A b.", ["A b."]) for _ in range(2)]
        rejected = engine.submit("A b.", ["A b."], block=False)
        assert type(rejected.exception(timeout=1)).__name__ == "EngineOverloadedError"
        release.set()
        assert all(isinstance(f.exception(timeout=5), ServiceUnavailableError) for f in held)
    finally:
        release.set()
        engine.close()
    assert type(engine.submit("A b.", ["A b."]).exception()).__name__ == "EngineClosedError"


@pytest.mark.parametrize("mode", ["background", "inline"])
@pytest.mark.parametrize(
    ("service", "error"), [("dead", "ServiceUnavailableError"), ("silent", "ServiceTimeoutError")]
)
def test_langchain_handler_with_a_down_or_slow_service_records_an_error_in_time(
    mode: str, service: str, error: str
) -> None:
    pytest.importorskip("langchain_core")
    from test_langchain import rag_chain

    from ene_integrations.langchain import NecessityCallbackHandler

    silent = socket.socket()  # listens (the backlog accepts) and never answers
    silent.bind(("127.0.0.1", 0))
    if service == "silent":
        silent.listen(16)
    engine = RemoteEngine(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=1, backoff_s=0.01)
    handler = NecessityCallbackHandler(engine, mode=mode, inline_timeout_s=3)
    try:
        plain = rag_chain().invoke("oak")
        run_id = uuid.uuid4()
        started = time.monotonic()
        output = rag_chain().invoke("oak", config={"callbacks": [handler], "run_id": run_id})
        assert output == plain
        result = handler.result(run_id, timeout=3)
        assert time.monotonic() - started < 2.5  # the client's timeout (1 s), not more
        assert result.eng is None and error in (result.error or "")
    finally:
        engine.close()
        silent.close()


def test_a_failing_evaluation_is_a_500_and_the_service_answers_on() -> None:
    class Raising(KeywordOracle):
        def score(self, pairs: Any) -> Any:
            if any("boom" in claim for _, claim in pairs):
                raise RuntimeError("the model fell over")
            return super().score(pairs)

    service = Service(NecessityEngine(Raising()), limits=Limits(max_contexts=2))

    async def call(body: Any, path: str = "/v1/evaluate") -> tuple[int, Any]:
        async def chunks() -> Any:
            yield json.dumps(body).encode()

        async def evaluate(request: Any) -> Any:
            return service.run_batch([request])[0]

        reply = await service.handle("POST", path, {}, chunks(), evaluate)
        return reply.status, json.loads(reply.body)

    status, body = asyncio.run(call({"answer": "It went boom.", "contexts": ["It went boom."]}))
    assert status == 500 and body["error"]["type"] == "OracleError"
    status, body = asyncio.run(
        call([REQUESTS[0], {"answer": "It went boom twice.", "contexts": ["It went boom twice."]}])
    )
    assert status == 200 and body[0]["id"] == "a" and body[1]["error"]["type"] == "OracleError"
    status, body = asyncio.run(call(REQUESTS[0], "/v1/nope"))
    assert status == 404


def test_importing_ene_needs_neither_ray_nor_httpx() -> None:
    code = (
        "import sys, ene_core, ene_core.cli, ene_core.service.serve, ene_core.service.remote\n"
        "ene_core.cli.make_parser().parse_args(['serve'])\n"
        "loaded = [m for m in ('ray', 'httpx', 'starlette', 'torch') if m in sys.modules]\n"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], env=env(), check=True)


def test_serve_options(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert main(["serve", "--oracle", "keyword", "--detach"]) == 1
    assert "--detach" in capsys.readouterr().err
    fixed = ServeConfig(replicas=3, num_gpus=0.5, max_batch_size=32).deployment_options()
    assert fixed["num_replicas"] == 3 and fixed["ray_actor_options"]["num_gpus"] == 0.5
    assert fixed["max_ongoing_requests"] == 64
    scaling = ServeConfig(min_replicas=0, max_replicas=4).deployment_options()["autoscaling_config"]
    assert (scaling["min_replicas"], scaling["max_replicas"]) == (0, 4)
    with pytest.raises(InvalidInputError):
        ServeConfig(min_replicas=3, max_replicas=2).deployment_options()


# -- on a real local Ray Serve ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``ene serve`` on a free port with a token and small limits; stopped at the end."""
    pytest.importorskip("ray.serve", reason="Ray Serve not installed (pip install 'ene[ray]')")
    port = free_port()
    command = [sys.executable, "-m", "ene_core.cli", "serve", "--oracle", "keyword"]
    command += ["--port", str(port), "--max-contexts", "8", "--max-context-chars", "2000"]
    command += ["--max-body-bytes", "65536", "--max-batch-size", "32", "--num-cpus", "1"]
    process = subprocess.Popen(
        command,
        env={**env(), "ENE_SERVE_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group: the teardown can end it whole
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"ene serve did not come up (exit code {process.poll()})")
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture
def remote(service: tuple[str, Any]) -> Iterator[RemoteEngine]:
    with RemoteEngine(service[0], timeout=30, token=TOKEN) as engine:
        yield engine


def test_health_and_info(service: tuple[str, Any], remote: RemoteEngine) -> None:
    url = service[0]
    assert httpx.get(url + "/healthz").json() == {"status": "ok"}
    info = remote.info()
    assert info["model"] == "keyword-oracle" and info["schema_version"] == SCHEMA_VERSION
    assert info["limits"]["max_contexts"] == 8
    assert remote.oracle.name == "keyword-oracle" and remote.threshold == 0.5


def test_the_services_engs_equal_the_local_engines(
    remote: RemoteEngine, local: NecessityEngine
) -> None:
    expected = verdicts(local.evaluate_many(REQUESTS))
    assert verdicts(remote.evaluate_many(REQUESTS)) == expected
    one = [
        remote.evaluate(r["answer"], r["contexts"], r.get("question"), id=r.get("id"))
        for r in REQUESTS
    ]
    assert verdicts(one) == expected
    futures = [
        remote.submit(r["answer"], r["contexts"], r.get("question"), id=r.get("id"))
        for r in REQUESTS
    ]
    assert verdicts([f.result(timeout=30) for f in futures]) == expected

    async def concurrently() -> list[Any]:
        return await asyncio.gather(
            *(
                remote.aevaluate(r["answer"], r["contexts"], r.get("question"), id=r.get("id"))
                for r in REQUESTS
            )
        )

    assert verdicts(asyncio.run(concurrently())) == expected
    assert all(type(e) is EvidenceNecessityGraph for e in one)
    short = one[-1].claims[0]
    assert short.status == "supported" and short.hypothesis == "The tower was completed in 1889."


def test_ene_eval_remote_writes_what_the_local_path_writes(
    service: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in REQUESTS) + "\n")
    monkeypatch.setenv("ENE_SERVE_TOKEN", TOKEN)
    outputs = {}
    for name, flags in (("local", ["--oracle", "keyword"]), ("remote", ["--remote", service[0]])):
        out = tmp_path / f"{name}.jsonl"
        assert main(["eval", str(source), "-o", str(out), *flags]) == 0
        outputs[name] = [
            {k: v for k, v in json.loads(line).items() if k != "stats"}
            for line in out.read_text().splitlines()
        ]
    assert outputs["remote"] == outputs["local"] and len(outputs["local"]) == len(REQUESTS)


async def test_langchain_handler_and_pruner_on_the_service(
    remote: RemoteEngine, local: NecessityEngine
) -> None:
    pytest.importorskip("langchain_core")
    from test_langchain import answer_for, docs_for, rag_chain

    from ene_integrations.langchain import NecessityCallbackHandler, NecessityPruner

    handler = NecessityCallbackHandler(remote)
    run_id = uuid.uuid4()
    output = await rag_chain().ainvoke("oak", config={"callbacks": [handler], "run_id": run_id})
    assert output == answer_for("oak")
    eng = (await handler.aresult(run_id, timeout=30)).eng
    assert eng is not None
    expected = local.evaluate(answer_for("oak"), docs_for("oak"), "oak", id=str(run_id))
    assert eng.verdicts() == expected.verdicts()
    docs = docs_for("crane")
    item = {"answer": answer_for("crane"), "context": docs}
    for out in (NecessityPruner(remote).invoke(item), await NecessityPruner(remote).ainvoke(item)):
        assert out["context"] == docs[:2] and out["evidence"].counts.supported == 2


CLIENT = """
import json, sys
from ene_core.service.remote import RemoteEngine
url, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with RemoteEngine(url, token=token, timeout=60) as engine:
    futures = [engine.submit(f"Item {i} is red.", [f"Item {i} is red.", "Noise."], id=str(i))
               for i in range(n)]
    engs = [f.result(timeout=90) for f in futures]
print(json.dumps([[e.id, e.minimal_sufficient_set] for e in engs]))
"""


def test_200_concurrent_requests_from_threads_and_two_processes(
    service: tuple[str, Any], remote: RemoteEngine
) -> None:
    url = service[0]
    others = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT, url, TOKEN, "100"],
            env=env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]

    def ask(i: int) -> EvidenceNecessityGraph:
        return remote.submit(
            f"Thing {i} is blue.", ["Noise.", f"Thing {i} is blue."], id=str(i)
        ).result(timeout=90)

    with ThreadPoolExecutor(8) as threads:
        engs = list(threads.map(ask, range(200)))
    assert [e.id for e in engs] == [str(i) for i in range(200)]
    assert all(
        e.minimal_sufficient_set == [1] and e.answer == f"Thing {i} is blue."
        for i, e in enumerate(engs)
    )
    for process in others:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        assert json.loads(out) == [[str(i), [0]] for i in range(100)]
    replica = httpx.get(url + "/v1/info", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert replica["replica"]["mean_batch"] > 1.2, replica  # Serve batched the clients together


def raw(url: str, body: Any, *, token: str | None = TOKEN, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(url + "/v1/evaluate", content=content, headers=headers, timeout=30, **kwargs)


def test_the_token_is_checked(service: tuple[str, Any]) -> None:
    url = service[0]
    assert raw(url, REQUESTS[0]).status_code == 200
    for token in (None, "wrong", TOKEN + "x", TOKEN[:-1]):
        reply = raw(url, REQUESTS[0], token=token)
        assert reply.status_code == 401 and reply.json()["error"]["type"] == "ServiceAuthError"
    assert httpx.get(url + "/v1/info").status_code == 401
    with RemoteEngine(url, token="wrong") as engine, pytest.raises(ServiceAuthError):
        engine.evaluate("Paris is in France.", ["Paris is in France."])


def test_limits_and_malformed_requests_get_typed_4xx(
    service: tuple[str, Any], remote: RemoteEngine
) -> None:
    url = service[0]
    cases = [
        ({"answer": "A b.", "contexts": ["c."] * 9}, "max_contexts"),
        ({"answer": "A b.", "contexts": ["x" * 2001]}, "max_context_chars"),
        (b'{"answer": "' + b"y" * 70_000 + b'"}', "max_body_bytes"),
    ]
    for body, limit in cases:
        reply = raw(url, body)
        error = reply.json()["error"]
        assert reply.status_code == 413, reply.text
        assert error["type"] == "LimitExceededError" and error["limit"] == limit
        assert limit in error["message"]
    with pytest.raises(LimitExceededError) as caught:
        remote.evaluate("A b.", ["c."] * 9)
    assert caught.value.limit == "max_contexts"
    # malformed: the CLI's typed messages
    for line in ('{"answer": 5}', '{"contexts": []}', '{"answer": "a", "contexts": "x"}'):
        with pytest.raises(InvalidInputError) as cli_error:
            parse_request(line)
        reply = raw(url, line.encode())
        assert reply.status_code == 400
        assert reply.json()["error"] == {
            "type": "InvalidInputError",
            "message": str(cli_error.value),
        }
    reply = raw(url, b"{not json")
    assert reply.status_code == 400 and reply.json()["error"]["type"] == "InvalidInputError"
    reply = raw(url, [REQUESTS[0], {"answer": 5}])
    assert reply.status_code == 400 and reply.json()["error"]["message"].startswith("request 1:")
    assert httpx.get(url + "/healthz").status_code == 200  # none of it took the replica down
    assert remote.evaluate("Paris is in France.", ["Paris is in France."]).counts.supported == 1


def test_odd_bodies_get_a_4xx_and_odd_text_a_warning(
    service: tuple[str, Any], remote: RemoteEngine, local: NecessityEngine
) -> None:
    url = service[0]
    for body, message in [
        (b"[" * 30_000, "the body is nested more than 64 levels deep"),  # was a 500
        (b'{"id": 1e400, "answer": "a", "contexts": []}', "a string or a finite number, got inf"),
        (b'{"answer": "a", "contexts": {"doc1": "text"}}', "list(d.values())"),
    ]:
        reply = raw(url, body)
        assert reply.status_code == 400, reply.text
        assert message in reply.json()["error"]["message"]
    reply = raw(
        url, rb'{"answer": "Paris is in France. \ud800", "contexts": ["Paris is in France."]}'
    )
    assert reply.status_code == 200 and "U+FFFD" in reply.json()["warnings"][0]
    # the client normalises what it sends, and its ENG says so as the local engine's does
    odd = [
        {
            "id": "o",
            "answer": "Paris is in France.\x00 \ud800",
            "contexts": ["Paris\x00 is in France."],
        }
    ]
    assert verdicts(remote.evaluate_many(odd)) == verdicts(local.evaluate_many(odd))
    outcomes = remote.evaluate_many([*odd, {"answer": 5}], return_exceptions=True)
    assert isinstance(outcomes[0], EvidenceNecessityGraph)
    assert isinstance(outcomes[1], InvalidInputError)


def test_stopping_the_service_mid_run_gives_typed_errors_and_loses_nothing(
    service: tuple[str, subprocess.Popen[str]],
) -> None:
    url, process = service
    engine = RemoteEngine(url, token=TOKEN, timeout=10, retries=2, backoff_s=0.05)
    futures = []
    try:
        for i in range(400):
            futures.append(engine.submit(f"Thing {i} is blue.", [f"Thing {i} is blue."]))
            if i == 100:
                futures[0].result(timeout=30)  # the service is answering
                process.send_signal(signal.SIGTERM)
            time.sleep(0.01)
        outcomes = []
        for future in futures:
            error = future.exception(timeout=30)  # every future ends: nothing hangs
            outcomes.append(error if error is not None else future.result())
        assert process.wait(60) == 0  # it shut down cleanly (Ray included)
        started = time.monotonic()
        with pytest.raises(ServiceUnavailableError):
            engine.evaluate("Paris is in France.", ["Paris is in France."])
        assert time.monotonic() - started < 5
    finally:
        engine.close()
    engs = [o for o in outcomes if isinstance(o, EvidenceNecessityGraph)]
    errors = [o for o in outcomes if not isinstance(o, EvidenceNecessityGraph)]
    assert len(engs) + len(errors) == 400 and engs and errors
    # answered before the stop, or a typed error: while stopping, Serve may answer 404 or 503
    assert all(isinstance(e, ServiceError) for e in errors), {type(e) for e in errors}
