"""A local chat-completions server for the LLM judge's tests: real HTTP on 127.0.0.1.

Its "model" answers Yes when the document holds every content word of the claim, No (or, asked
the three-way prompt, No for a contradiction and Unclear otherwise) as the KeywordOracle decides.
``mode`` picks the server's behaviour: ``ok``, ``nologprobs`` (no log probabilities),
``refuse-logprobs`` (400 when asked for them), ``flaky`` (429 then 500 before each success, by
request count), ``500``, ``slow`` (answers after ``delay`` seconds), ``malformed`` (200, not
JSON), ``wrong-shape`` (JSON without choices), ``401``.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ene_core.testing import KeywordOracle

_ASKED = re.compile(r"Document:\n(?P<premise>.*)\n\nClaim: (?P<claim>.*?)\n\n", re.S)


class JudgeServer:
    def __init__(self, mode: str = "ok", delay: float = 0.0) -> None:
        self.mode = mode
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.failures_before_success = 2  # flaky: 429, then 500, then the answer
        self._lock = threading.Lock()
        self._fails: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                status, payload, extra = server.answer(self.path, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in {"Content-Type": "application/json", **extra}.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if path != "/v1/chat/completions":
            return 404, {"error": "not found"}, {}
        mode = self.mode
        if mode == "401":
            return 401, {"error": {"message": "bad key"}}, {}
        if mode == "500":
            return 500, {"error": {"message": "overloaded"}}, {}
        if mode == "malformed":
            return 200, b"{this is not json", {}
        if mode == "wrong-shape":
            return 200, {"id": "x", "object": "chat.completion"}, {}
        if mode == "slow":
            time.sleep(self.delay)
        if mode == "refuse-logprobs" and body.get("logprobs"):
            return 400, {"error": {"message": "logprobs are not supported"}}, {}
        user = body["messages"][-1]["content"]
        if mode == "flaky":
            with self._lock:
                seen = self._fails.get(user, 0)
                self._fails[user] = seen + 1
            if seen < self.failures_before_success:
                if seen == 0:
                    return 429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}
                return 503, {"error": {"message": "busy"}}, {}
        word = self._decide(user)
        logprobs = None
        if body.get("logprobs") and mode != "nologprobs":
            others = [w for w in ("Yes", "No", "Unclear") if w != word]
            top = [
                {"token": word, "logprob": math.log(0.9)},
                {"token": f" {word.lower()}", "logprob": math.log(0.05)},
                {"token": others[0], "logprob": math.log(0.03)},
                {"token": others[1], "logprob": math.log(0.01)},
            ]
            logprobs = {"content": [{"token": word, "logprob": math.log(0.9), "top_logprobs": top}]}
        completion = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": word + "."},
                    "logprobs": logprobs,
                    "finish_reason": "length",
                }
            ],
            "usage": {
                "prompt_tokens": len(user.split()),
                "completion_tokens": 1,
                "total_tokens": len(user.split()) + 1,
            },
        }
        return 200, completion, {}

    @staticmethod
    def _decide(user: str) -> str:
        found = _ASKED.search(user)
        if found is None:
            return "Unclear"
        scores = KeywordOracle._one(found["premise"], found["claim"])
        three_way = "Unclear" in user
        if scores.entail >= 0.5:
            return "Yes"
        if scores.contra >= 0.5 or not three_way:
            return "No"
        return "Unclear"
