"""``LLMJudge``: any OpenAI-compatible chat-completions server (vLLM, llama.cpp server, Ollama,
hosted APIs) as a verifier.

Each (premise, claim) pair is one chat completion of a versioned grounding prompt
(:data:`PROMPT_VERSION`: document, claim -> Yes / No; :data:`PROMPT_VERSION_3WAY` adds a
contradiction answer). ``p(supported)`` is the probability of the first answer token being
Yes-like ("Yes", " yes", "Y", ...), summed over the first token's top log probabilities; only a
server that gives no log probabilities is read from the text of its answer (1 or 0), and the
ENG says so (``Claim.judge_read``).

Requests run concurrently, at most ``max_concurrency`` at a time; a 429, a 5xx, a dropped
connection or a timeout is retried with jittered exponential backoff (``retries`` times, a 429's
``Retry-After`` honoured up to ``max_retry_after_s``); what still fails raises
:class:`~ene_core.errors.JudgeError`, which the engine records as the request's failure. The
key comes from ``$ENE_JUDGE_API_KEY`` unless given, and is never part of a message, a log line,
a repr or an ENG. With ``cache_dir`` answers are kept on disk (SQLite), keyed by model, prompt
version, premise and claim.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..errors import InvalidInputError, JudgeError
from .protocol import Read, Scores
from .retry import pause, retry_after

__all__ = ["KEY_ENV", "PROMPT_VERSION", "PROMPT_VERSION_3WAY", "LLMJudge", "judge_messages"]

KEY_ENV = "ENE_JUDGE_API_KEY"
PROMPT_VERSION = "ene-grounding-1"
PROMPT_VERSION_3WAY = "ene-grounding-3way-1"
SYSTEM = (
    "You are a careful fact checker. You decide whether a document supports a claim, using "
    "only what the document says."
)
QUESTION = "Is the claim supported by the document? Answer with one word: Yes or No."
QUESTION_3WAY = (
    "Answer with one word: Yes if the document supports the claim, No if the document "
    "contradicts it, Unclear if it does neither."
)
log = logging.getLogger("ene.judge")


def judge_messages(premise: str, claim: str, *, three_way: bool = False) -> list[dict[str, str]]:
    """The chat messages of one check (the prompt :data:`PROMPT_VERSION` names)."""
    question = QUESTION_3WAY if three_way else QUESTION
    user = f"Document:\n{premise}\n\nClaim: {claim}\n\n{question}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class LLMJudge:
    """A chat-completions model as a :class:`~ene_core.verifiers.protocol.SupportOracle`.

    >>> judge = LLMJudge("Qwen2.5-7B-Instruct", base_url="http://127.0.0.1:8000/v1")
    >>> engine = NecessityEngine(oracle=judge)

    ``three_way``: the prompt also asks for contradictions ("No" then means contradicted), so
    claims can be called contradicted; the default prompt only tells supported from not.
    """

    default_threshold: float | None = 0.5

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://127.0.0.1:8000/v1",
        api_key: str | None = None,
        api_key_env: str = KEY_ENV,
        three_way: bool = False,
        max_concurrency: int = 8,
        timeout: float = 60.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        max_retry_after_s: float = 30.0,
        top_logprobs: int = 20,
        cache_dir: str | os.PathLike[str] | None = None,
        transport: Any = None,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise JudgeError("LLMJudge needs httpx: pip install httpx") from None
        if not model:
            raise InvalidInputError("LLMJudge needs a model name")
        if timeout <= 0 or max_concurrency < 1:
            raise InvalidInputError("LLMJudge needs timeout > 0 and max_concurrency >= 1")
        self.model = model
        self.three_way = three_way
        self.prompt_version = PROMPT_VERSION_3WAY if three_way else PROMPT_VERSION
        self.name = f"llm-judge:{model}"
        self.revision: str | None = self.prompt_version
        self.default_contradiction_threshold = 0.5 if three_way else None
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.retries = max(0, retries)
        self.backoff_s = backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.top_logprobs = top_logprobs
        self._key = api_key if api_key is not None else os.environ.get(api_key_env) or None
        self._httpx = httpx
        self._client = httpx.Client(
            timeout=self.timeout,
            limits=httpx.Limits(max_connections=max_concurrency),
            headers={"Authorization": f"Bearer {self._key}"} if self._key else {},
            transport=transport,
        )
        self._pool = ThreadPoolExecutor(max_concurrency, thread_name_prefix="ene-judge")
        self._lock = threading.Lock()
        self._logprobs = True  # off once the server refuses them
        self._cache = _DiskCache(Path(cache_dir)) if cache_dir is not None else None
        self.usage = dict.fromkeys(
            ("requests", "retries", "tokens", "cache_hits", "text_reads", "unreadable"), 0
        )

    def __repr__(self) -> str:
        where, prompt = self._where(), self.prompt_version
        return f"LLMJudge({self.model!r}, base_url={where!r}, prompt={prompt!r})"

    def __enter__(self) -> LLMJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._client.close()
        if self._cache is not None:
            self._cache.close()

    # -- scoring --------------------------------------------------------------------------
    def score(self, pairs: Sequence[tuple[str, str]]) -> list[Scores]:
        """Each pair's scores, in order; the same whatever the batching (temperature 0, each
        pair its own request). Raises :class:`JudgeError` when a pair cannot be scored."""
        unique = list(dict.fromkeys(pairs))
        found: dict[tuple[str, str], Scores] = {}
        todo = []
        for pair in unique:
            cached = self._cache.get(self._key_of(pair)) if self._cache is not None else None
            if cached is not None:
                found[pair] = cached
                self._count("cache_hits")
            else:
                todo.append(pair)
        futures = [self._pool.submit(self._ask, premise, claim) for premise, claim in todo]
        errors: list[BaseException] = []
        for pair, future in zip(todo, futures, strict=True):
            try:
                found[pair] = future.result()
            except BaseException as exc:
                errors.append(exc)
        if errors:  # the first pair's error, whatever order the requests finished in
            first = errors[0]
            raise first if isinstance(first, JudgeError) else JudgeError(self._safe(repr(first)))
        if self._cache is not None:
            for pair in todo:
                s = found[pair]
                self._cache.put(self._key_of(pair), (s.entail, s.contra, s.read))
        return [found[pair] for pair in pairs]

    def _ask(self, premise: str, claim: str) -> Scores:
        messages = judge_messages(premise, claim, three_way=self.three_way)
        data = self._post(messages)
        self._count("requests")
        scores = self._read(data)
        usage = data.get("usage")
        if not isinstance(usage, dict):
            usage = {}
        tokens = usage.get("total_tokens")
        if not isinstance(tokens, int):
            parts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
            tokens = sum(v for v in parts if isinstance(v, int))
        self._count("tokens", tokens)
        self._count("text_reads", scores.read == "text")
        self._count("unreadable", scores.read == "unreadable")
        return Scores(scores.entail, scores.contra, tokens=tokens, read=scores.read)

    def _post(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """One chat completion with retries; its decoded body, or :class:`JudgeError`."""
        httpx = self._httpx
        url = f"{self.base_url}/chat/completions"
        reason = "no answer"
        attempt = 0
        while attempt <= self.retries:
            logprobs = self._logprobs
            body: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": 0,
                "max_tokens": 1 if logprobs else 4,
            }
            if logprobs:
                body.update(logprobs=True, top_logprobs=self.top_logprobs)
            wait = 0.0
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException:
                reason = f"no answer within {self.timeout:g}s"
            except httpx.TransportError as exc:
                reason = f"cannot reach it ({type(exc).__name__})"
            else:
                status = response.status_code
                if status == 200:
                    return self._decode(response)
                if status in (401, 403):
                    raise JudgeError(
                        f"the judge at {self._where()} refused the key (HTTP {status}): set "
                        f"${self.api_key_env} or pass api_key="
                    )
                if status == 400 and logprobs and "logprob" in response.text.lower():
                    with self._lock:
                        self._logprobs = False  # read the answers' text from now on
                    log.warning("judge %s gives no log probabilities: reading text", self._where())
                    continue  # at once, and not counted as a try
                if status != 429 and status < 500:
                    raise JudgeError(
                        f"the judge at {self._where()} refused the request (HTTP {status}): "
                        f"{self._safe(response.text[:200])}"
                    )
                reason = f"HTTP {status}"
                wait = retry_after(response.headers.get("retry-after"), self.max_retry_after_s)
            if attempt < self.retries:
                self._count("retries")
                log.info("judge %s: %s; retry %d", self._where(), reason, attempt + 1)
                pause(attempt, self.backoff_s, at_least=wait)
            attempt += 1
        raise JudgeError(
            f"the judge at {self._where()} failed after {self.retries + 1} tries: {reason}"
        )

    def _decode(self, response: Any) -> dict[str, Any]:
        try:
            data = response.json()
            choice = data["choices"][0]
            if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
                raise TypeError
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeError(
                f"the judge at {self._where()} answered something that is not a chat "
                f"completion: {self._safe(response.text[:200])!r}"
            ) from None
        return data

    def _read(self, data: dict[str, Any]) -> Scores:
        """The scores of one completion: from its first token's top log probabilities, or
        from its text where there are none."""
        choice = data["choices"][0]
        top = _top_logprobs(choice.get("logprobs"))
        if top:
            yes = sum(math.exp(lp) for token, lp in top if _like(token, "yes"))
            no = sum(math.exp(lp) for token, lp in top if _like(token, "no"))
            entail = min(yes, 1.0)
            contra = min(no, 1.0 - entail) if self.three_way else 0.0
            return Scores(entail, contra, read="logprobs")
        content = choice["message"].get("content") or ""
        words = str(content).strip().split()
        word = words[0].strip(".,:;!*\"'").lower() if words else ""
        read: Read = "text" if word in ("yes", "no", "unclear") else "unreadable"
        return Scores(
            1.0 if word == "yes" else 0.0,
            1.0 if word == "no" and self.three_way else 0.0,
            read=read,
        )

    # -- helpers --------------------------------------------------------------------------
    def _key_of(self, pair: tuple[str, str]) -> str:
        text = json.dumps([self.model, self.prompt_version, *pair], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _where(self) -> str:
        """The server's address without credentials, query or fragment."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"

    def _safe(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def _count(self, what: str, n: int | bool = 1) -> None:
        with self._lock:
            self.usage[what] += int(n)


def _like(token: Any, word: str) -> bool:
    """A token that starts ``word`` (" Yes", "YES", "▁yes", "Y"): its Yes-like or No-like
    spellings."""
    text = str(token).strip().lstrip("▁Ġ").strip().lower()
    return bool(text) and word.startswith(text)


def _top_logprobs(logprobs: Any) -> list[tuple[str, float]]:
    """The first token's alternatives (token, log probability), the chosen one included."""
    try:
        first = logprobs["content"][0]
        pairs = [(first["token"], float(first["logprob"]))]
        for item in first.get("top_logprobs") or []:
            pairs.append((item["token"], float(item["logprob"])))
    except (KeyError, IndexError, TypeError, ValueError):
        return []
    seen: dict[str, float] = {}
    for token, lp in pairs:
        if math.isfinite(lp) and lp <= 0.0:
            seen.setdefault(str(token), lp)
    return list(seen.items())


class _DiskCache:
    """Scores on disk (SQLite), keyed by a digest of model, prompt version, premise and claim."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(folder / "llm-judge.sqlite3", check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, value TEXT)")
        self._db.commit()
        self._lock = threading.Lock()

    def get(self, key: str) -> Scores | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM scores WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        entail, contra, read = json.loads(row[0])
        return Scores(float(entail), float(contra), read=read)

    def put(self, key: str, value: tuple[float, float, str | None]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO scores VALUES (?, ?)", (key, json.dumps(list(value)))
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
