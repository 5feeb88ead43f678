"""A real Arize Phoenix server for the end-to-end tracing tests.

Phoenix runs from its own virtual environment (``$ENE_PHOENIX_VENV``, default ``.phoenix-venv``;
create it with ``bash scripts/phoenix_env.sh``) as a subprocess on loopback, with free ports and
a temporary working directory, and is stopped by its PID. Without that environment the tests
skip, unless ``ENE_REQUIRE_PHOENIX=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0


def unavailable(reason: str) -> None:
    if os.environ.get("ENE_REQUIRE_PHOENIX") == "1":
        pytest.fail(f"{reason} (ENE_REQUIRE_PHOENIX=1)")
    pytest.skip(reason)


def phoenix_executable() -> Path:
    venv = Path(os.environ.get("ENE_PHOENIX_VENV") or REPO / ".phoenix-venv")
    return venv / "bin" / "phoenix"


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass
class Phoenix:
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def otlp_endpoint(self) -> str:
        return f"{self.base_url}/v1/traces"

    def spans(self, project: str) -> list[dict[str, Any]]:
        """Every span of ``project`` through the REST API (``GET /v1/projects/{name}/spans``)."""
        import httpx

        out: list[dict[str, Any]] = []
        params: dict[str, Any] = {"limit": 1000}
        while True:
            r = httpx.get(f"{self.base_url}/v1/projects/{project}/spans", params=params)
            if r.status_code == 404:  # the project does not exist yet
                return []
            r.raise_for_status()
            body = r.json()
            out += body["data"]
            if not body.get("next_cursor"):
                return out
            params["cursor"] = body["next_cursor"]

    def graphql(self, query: str, **variables: Any) -> dict[str, Any]:
        import httpx

        r = httpx.post(f"{self.base_url}/graphql", json={"query": query, "variables": variables})
        r.raise_for_status()
        body = r.json()
        assert not body.get("errors"), body["errors"]
        return body["data"]  # type: ignore[no-any-return]

    def document_evaluations(self, span_node_id: str) -> list[dict[str, Any]]:
        """``documentEvaluations`` of a span (by its GraphQL node id) through GraphQL."""
        query = """query ($id: ID!) { node(id: $id) { ... on Span {
            numDocuments
            documentEvaluations { documentPosition name label score explanation annotatorKind }
        } } }"""
        return self.graphql(query, id=span_node_id)["node"]["documentEvaluations"]  # type: ignore[no-any-return]

    def log_tail(self, n: int = 40) -> str:
        lines = self.log.read_text(errors="replace").splitlines()
        return "\n".join(lines[-n:])


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    exe = phoenix_executable()
    if not exe.exists():
        unavailable(f"no Phoenix server at {exe}: create it with `bash scripts/phoenix_env.sh`")
    for module in ("httpx", "opentelemetry.exporter.otlp.proto.http", "phoenix.client"):
        try:
            __import__(module)
        except ImportError:
            unavailable(f"{module} is not installed in the project environment")
    import httpx

    workdir = tmp_path_factory.mktemp("phoenix")
    http_port, grpc_port = free_ports(2)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    env.update(
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(http_port),
        PHOENIX_GRPC_PORT=str(grpc_port),
        PHOENIX_WORKING_DIR=str(workdir),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        PHOENIX_DISABLE_AGENT_ASSISTANT="true",
        PHOENIX_LOG_MIGRATIONS="false",
    )
    log = workdir / "phoenix.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(exe), "serve"],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    server = Phoenix(f"http://127.0.0.1:{http_port}", process, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"Phoenix exited with {process.returncode}:\n{server.log_tail()}")
            try:
                if httpx.get(f"{server.base_url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix not healthy in {START_TIMEOUT_S}s:\n{server.log_tail()}")
            time.sleep(0.5)
        yield server
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
