"""``ene serve``: one shared engine for many app processes, as a Ray Serve deployment.

Each replica loads the verifier once; Ray Serve's dynamic batching (``@serve.batch``) gathers
the requests of every client into one engine batch (:meth:`NecessityEngine.evaluate_many`),
run off the replica's event loop. The HTTP JSON API:

- ``POST /v1/evaluate``: one request object (an ``ene eval`` line) answers its ENG; a list
  answers a list, in order, of ENGs or ``{"error": {...}}`` (one failed request fails alone).
- ``GET /healthz``: ``{"status": "ok"}``, without the token (for load balancers and probes).
- ``GET /v1/info``: the verifier (model, revision, thresholds), schema version and limits.

Errors are ``{"error": {"type", "message", "limit"?}}``: 400 for malformed JSON or fields (the
CLI's typed messages; JSON nested more than 64 levels deep too), 401 for a missing or wrong
bearer token, 413 for a request over a limit (``limit`` names it), 500 when the evaluation
failed. Nothing a request does takes a replica down. Ray and Ray Serve are imported only when
the service is built (``pip install 'ene[ray]'``).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..engine import NecessityEngine, Request
from ..errors import EneError, InvalidInputError, LimitExceededError
from ..graph import SCHEMA_VERSION
from ..request import load_json, request_from_item

TOKEN_ENV = "ENE_SERVE_TOKEN"
logger = logging.getLogger("ene")


@dataclass(frozen=True)
class Limits:
    """What one HTTP call may carry; over a limit the call is answered 413 naming it."""

    max_body_bytes: int = 16 * 1024 * 1024
    max_requests: int = 256  # requests in one POST (a list)
    max_contexts: int = 256  # contexts in one request
    max_context_chars: int = 100_000  # characters in one context


LIMITS = tuple(f.name for f in fields(Limits))


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status and JSON text."""

    status: int
    body: str
    headers: tuple[tuple[str, str], ...] = ()


class Failure:
    """A request that failed inside a batch; serialised as ``{"error": {...}}``."""

    def __init__(self, error: BaseException) -> None:
        self.type = type(error).__name__
        self.message = str(error)
        self.limit = getattr(error, "limit", None)
        self.bad_input = isinstance(error, InvalidInputError)  # the caller's fault: a 4xx

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.limit is not None:
            error["limit"] = self.limit
        return {"error": error}

    def status(self) -> int:
        if self.limit is not None:
            return 413
        return 400 if self.bad_input else 500


def token_digest(token: str | None) -> str | None:
    """What replicas keep of the token: its SHA-256, never the token itself."""
    return None if not token else hashlib.sha256(token.encode()).hexdigest()


class Service:
    """One replica's HTTP logic, without Ray: token, limits, parsing, routing, the engine.

    ``evaluate`` (one :class:`Request` -> ENG JSON text or :class:`Failure`) is what batches;
    the deployment passes Serve's batcher, which calls :meth:`run_batch` on whole batches.
    """

    def __init__(
        self,
        engine: NecessityEngine,
        *,
        limits: Limits | None = None,
        token_sha256: str | None = None,
    ) -> None:
        self.engine = engine
        self.limits = limits or Limits()
        self._digest = None if token_sha256 is None else bytes.fromhex(token_sha256)
        self._lock = threading.Lock()
        self.counts = {"batches": 0, "requests": 0}  # this replica's, since it started

    def info(self) -> dict[str, Any]:
        oracle = self.engine.oracle
        return {
            "model": oracle.name,
            "revision": oracle.revision,
            "threshold": self.engine.threshold,
            "contradiction_threshold": self.engine.contradiction_threshold,
            "schema_version": SCHEMA_VERSION,
            "limits": asdict(self.limits),
            "replica": self.stats(),
        }

    def stats(self) -> dict[str, float]:
        """Batches and requests this replica evaluated, and their mean batch size."""
        with self._lock:
            batches, requests = self.counts["batches"], self.counts["requests"]
        return {"batches": batches, "requests": requests, "mean_batch": requests / max(batches, 1)}

    def authorized(self, header: str | None) -> bool:
        if self._digest is None:
            return True
        scheme, _, given = (header or "").partition(" ")
        offered = hashlib.sha256(given.strip().encode()).digest()
        # compare_digest on the digests: constant time whatever the length of the guess
        return hmac.compare_digest(offered, self._digest) and scheme.lower() == "bearer"

    def run_batch(self, requests: Sequence[Request]) -> list[str | Failure]:
        """Evaluate a batch (in a worker thread); each request becomes ENG JSON or a Failure."""
        with self._lock:
            self.counts["batches"] += 1
            self.counts["requests"] += len(requests)
        try:
            outcomes = self.engine.evaluate_many(requests, return_exceptions=True)
        except Exception as exc:  # never raises by contract; a replica must survive anyway
            outcomes = [exc] * len(requests)
        return [Failure(o) if isinstance(o, BaseException) else o.to_json() for o in outcomes]

    def parse(self, body: bytes) -> tuple[list[Request], bool]:
        """The body as requests and whether it was a single object; raises typed errors."""
        data = load_json(body, what="the body")
        single = not isinstance(data, list)
        items = [data] if single else data
        if len(items) > self.limits.max_requests:
            raise LimitExceededError(
                f"{len(items)} requests in one call; the service takes at most "
                f"{self.limits.max_requests} (max_requests): send smaller lists",
                "max_requests",
            )
        requests = []
        for n, item in enumerate(items):
            where = "" if single else f"request {n}: "
            try:
                request = request_from_item(item)
            except EneError as exc:
                raise type(exc)(f"{where}{exc}") from None
            self._check(request, where)
            requests.append(request)
        return requests, single

    def _check(self, request: Request, where: str) -> None:
        limits = self.limits
        if len(request.contexts) > limits.max_contexts:
            raise LimitExceededError(
                f"{where}{len(request.contexts)} contexts; the service takes at most "
                f"{limits.max_contexts} per request (max_contexts)",
                "max_contexts",
            )
        for i, context in enumerate(request.contexts):
            if len(context.text) > limits.max_context_chars:
                raise LimitExceededError(
                    f"{where}context {i} has {len(context.text)} characters; the service takes "
                    f"at most {limits.max_context_chars} (max_context_chars)",
                    "max_context_chars",
                )

    async def read_body(self, length: str | None, chunks: AsyncIterable[bytes]) -> bytes:
        """The body, refused (413) as soon as it is known to be over ``max_body_bytes``."""
        limit = self.limits.max_body_bytes
        if length is not None and length.isdigit() and int(length) > limit:
            raise _body_too_large(int(length), limit)
        body = bytearray()
        async for chunk in chunks:
            body += chunk
            if len(body) > limit:
                raise _body_too_large(len(body), limit)
        return bytes(body)

    async def handle(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        chunks: AsyncIterable[bytes],
        evaluate: Callable[[Request], Awaitable[str | Failure]],
    ) -> Reply:
        """Answer one HTTP call; never raises."""
        try:
            return await self._route(method, path.rstrip("/") or "/", headers, chunks, evaluate)
        except Exception as exc:
            if not isinstance(exc, EneError):
                logger.exception("ene serve: %s %s failed", method, path)
            failure = Failure(exc)
            return Reply(failure.status(), json.dumps(failure.to_dict()))

    async def _route(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        chunks: AsyncIterable[bytes],
        evaluate: Callable[[Request], Awaitable[str | Failure]],
    ) -> Reply:
        routes = {"/healthz": "GET", "/v1/info": "GET", "/v1/evaluate": "POST"}
        if path not in routes:
            return _error(404, "NotFound", f"no route {path}: try POST /v1/evaluate")
        if method != routes[path]:
            return _error(405, "MethodNotAllowed", f"{path} takes {routes[path]}")
        if path == "/healthz":
            return Reply(200, json.dumps({"status": "ok"}))
        if not self.authorized(headers.get("authorization")):
            return Reply(
                401,
                json.dumps(_error_dict("ServiceAuthError", "missing or wrong bearer token")),
                (("www-authenticate", "Bearer"),),
            )
        if path == "/v1/info":
            return Reply(200, json.dumps(self.info()))
        body = await self.read_body(headers.get("content-length"), chunks)
        requests, single = self.parse(body)
        outcomes = await asyncio.gather(*(evaluate(r) for r in requests))
        if single:
            outcome = outcomes[0]
            if isinstance(outcome, Failure):
                return Reply(outcome.status(), json.dumps(outcome.to_dict()))
            return Reply(200, outcome)
        parts = [json.dumps(o.to_dict()) if isinstance(o, Failure) else o for o in outcomes]
        return Reply(200, "[" + ",".join(parts) + "]")


def _body_too_large(size: int, limit: int) -> LimitExceededError:
    return LimitExceededError(
        f"the body has {size} bytes; the service takes at most {limit} (max_body_bytes)",
        "max_body_bytes",
    )


def _error_dict(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def _error(status: int, kind: str, message: str) -> Reply:
    return Reply(status, json.dumps(_error_dict(kind, message)))


# -- the Ray Serve deployment ---------------------------------------------------------------------
@dataclass(frozen=True)
class ServeConfig:
    """How the service runs: replicas, resources and batching (the engine flags are separate)."""

    replicas: int = 1
    min_replicas: int | None = None  # both bounds set: autoscaling instead of ``replicas``
    max_replicas: int | None = None
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    max_batch_size: int = 64
    batch_wait_ms: float = 5.0
    max_queued_requests: int = 1024  # per replica; then 503 (the client backs off and retries)
    limits: Limits = Limits()

    def deployment_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "ray_actor_options": {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus},
            # Serve's default (5) would cap every batch at 5; let a whole batch be in flight
            "max_ongoing_requests": max(2 * self.max_batch_size, 16),
            "max_queued_requests": self.max_queued_requests,
        }
        if self.min_replicas is not None or self.max_replicas is not None:
            low = self.min_replicas if self.min_replicas is not None else 1
            high = self.max_replicas if self.max_replicas is not None else max(low, 1)
            if not 0 <= low <= high or high < 1:
                raise InvalidInputError(
                    f"replica bounds need 0 <= min <= max and max >= 1, got {low}..{high}"
                )
            options["autoscaling_config"] = {
                "min_replicas": low,
                "max_replicas": high,
                "target_ongoing_requests": self.max_batch_size,
            }
        else:
            if self.replicas < 1:
                raise InvalidInputError(f"--replicas must be at least 1, got {self.replicas}")
            options["num_replicas"] = self.replicas
        return options


def build_app(
    engine_options: Mapping[str, Any],
    config: ServeConfig | None = None,
    *,
    token: str | None = None,
) -> Any:
    """The Ray Serve application (``Deployment.bind(...)``) of the ENE service.

    ``engine_options`` are the engine flags (:func:`ene_core.service.options.engine_options`);
    each replica builds its engine from them, so the verifier loads once per replica.
    """
    from ray import serve
    from starlette.requests import Request as HTTPRequest
    from starlette.responses import Response

    cfg = config or ServeConfig()

    class EneService:
        def __init__(self, options: dict[str, Any], limits: Limits, digest: str | None) -> None:
            from .options import build_engine

            engine = build_engine(argparse.Namespace(**options))
            if not isinstance(engine, NecessityEngine):
                raise InvalidInputError("ene serve evaluates locally: drop --remote")
            self.service = Service(engine, limits=limits, token_sha256=digest)

        @serve.batch(
            max_batch_size=cfg.max_batch_size, batch_wait_timeout_s=cfg.batch_wait_ms / 1e3
        )
        async def evaluate(self, requests: list[Request]) -> list[str | Failure]:
            # off the event loop: health checks and other calls are answered meanwhile
            return await asyncio.to_thread(self.service.run_batch, requests)

        async def __call__(self, request: HTTPRequest) -> Response:
            path = request.scope.get("path", "/")
            root = request.scope.get("root_path", "")
            if root and path.startswith(root):
                path = path[len(root) :]
            reply = await self.service.handle(
                request.method, path, request.headers, request.stream(), self.evaluate
            )
            return Response(
                reply.body,
                status_code=reply.status,
                headers=dict(reply.headers),
                media_type="application/json",
            )

    deployment: Any = serve.deployment(EneService, name="ene")
    deployment = deployment.options(**cfg.deployment_options())
    return deployment.bind(dict(engine_options), cfg.limits, token_digest(token))


def start(
    engine_options: Mapping[str, Any],
    config: ServeConfig | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    address: str | None = None,
    token: str | None = None,
    name: str = "ene",
    route_prefix: str = "/",
) -> str:
    """Deploy the service and return its URL once every replica is up.

    Connects to ``address`` (or ``RAY_ADDRESS``) when given, else starts a local Ray, unless
    Ray is already initialised in this process. ``host``/``port`` apply when this call starts
    Serve on the cluster (Serve keeps the HTTP options it was first started with).
    """
    try:
        import ray
        from ray import serve
    except ImportError:
        raise EneError("ene serve needs Ray Serve: pip install 'ene[ray]'") from None
    local = not ray.is_initialized() and not (address or os.environ.get("RAY_ADDRESS"))
    if not ray.is_initialized():
        if local:
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    serve.start(http_options={"host": host, "port": port}, logging_config={"log_level": "WARNING"})
    try:
        serve.run(
            build_app(engine_options, config, token=token), name=name, route_prefix=route_prefix
        )
    except RuntimeError as exc:  # a replica failed to start (e.g. the model is not there)
        why = _deployment_message(name) or str(exc)
        stop(name, everything=local)
        raise EneError(f"the service did not start: {why}") from None
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{route_prefix.rstrip('/')}"


def _deployment_message(name: str) -> str | None:
    """The last line of why the application's deployment failed (a replica's error)."""
    from ray import serve

    try:
        deployments = serve.status().applications[name].deployments.values()
        message = " ".join(d.message for d in deployments if d.message)
    except Exception:
        return None
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else None


def stop(name: str = "ene", *, everything: bool = True) -> None:
    """Delete the application; with ``everything``, shut Serve and this process's Ray down."""
    import ray
    from ray import serve

    if everything:
        serve.shutdown()
        ray.shutdown()
    else:
        serve.delete(name)
