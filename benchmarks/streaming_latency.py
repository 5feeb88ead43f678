"""Verdicts while the answer streams: how long after a sentence's last token its verdict comes,
and what streaming verdicts cost the app's token rate.

    python benchmarks/streaming_latency.py                       # keyword oracle and the model
    python benchmarks/streaming_latency.py --oracle keyword --streams 1 16 --token-ms 20

**Latency** (``engine.stream``): answers of the necessity dev set (``benchmarks/data``) stream
word by word, one word every ``--token-ms``, from 1 or 16 concurrent streams (asyncio tasks on
one engine, so their checks share the micro-batcher); a consumer task per stream reads the
verdicts with ``async for``. A sentence's latency is the time from the token holding its last
character to its verdict; it includes the wait for the next sentence's first word (the split
must not change any more). Sentences followed by another are checked while the answer streams;
the last sentence's verdict comes with the whole answer's ENG (``aclose``), reported apart.

**Token rate** (the LangChain handler on an LCEL chain whose model streams one word every
``--token-ms``): the tokens per second the app receives from ``chain.stream`` with no ENE, with
ENE's handler, and with its handler and ``on_claim`` (verdicts while streaming); 1 or 16 app
threads, variants in rotating order, ``--repeats`` rounds. Overhead = 1 - rate / rate without.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ene_core import NecessityEngine

DATA = Path(__file__).resolve().parent / "data" / "necessity_dev.jsonl"


def cases(limit: int) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    rows = [r for r in rows if len(re.findall(r"[.!?](?:\s|$)", r["answer"])) >= 2]
    return rows[:limit]


def words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)


def build_engine(oracle: str) -> NecessityEngine:
    if oracle == "keyword":
        from ene_core.verifiers.keyword import KeywordOracle

        return NecessityEngine(KeywordOracle())
    engine = NecessityEngine()
    engine.evaluate("The warm-up loads the model.", ["It is loaded before timing starts."])
    return engine


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


# -- latency ---------------------------------------------------------------------------------
async def one_stream(
    engine: NecessityEngine, case: dict[str, Any], token_s: float
) -> tuple[list[float], list[float], int]:
    """Latencies (ms) of the sentences checked while streaming and of those complete only at
    the end, and how many verdicts of the first kind came before the last token."""
    stream = engine.stream([c["text"] for c in case["chunks"]], case["question"], case["id"])
    fed: list[tuple[int, float]] = []  # (text length after the token, when it was fed)
    arrived: list[tuple[Any, float]] = []
    closed = asyncio.Event()

    async def consume() -> None:
        async for claim in stream:
            arrived.append((claim, time.perf_counter()))
        closed.set()

    consumer = asyncio.create_task(consume())
    length = 0
    for i, word in enumerate(words(case["answer"])):
        if i:
            await asyncio.sleep(token_s)
        await stream.afeed(word)
        length += len(word)
        fed.append((length, time.perf_counter()))
    ended = time.perf_counter()
    complete = stream.complete  # the sentences checked while streaming; the rest: at the end
    await stream.aclose()
    await asyncio.wait_for(consumer, 600)
    text = stream.text
    early, last, before = [], [], 0
    for claim, at in arrived:
        visible_end = claim.span[0] + len(text[claim.span[0] : claim.span[1]].rstrip())
        token_at = next(t for end, t in fed if end >= visible_end)
        (early if claim.index < complete else last).append((at - token_at) * 1000)
        before += claim.index < complete and at < ended
    return early, last, before


async def latency(
    engine: NecessityEngine, rows: list[dict[str, Any]], n: int, token_s: float
) -> dict[str, Any]:
    early: list[float] = []
    last: list[float] = []
    before = 0
    for start in range(0, len(rows), n):
        batch = rows[start : start + n]
        for e, lst, b in await asyncio.gather(*(one_stream(engine, c, token_s) for c in batch)):
            early += e
            last += lst
            before += b
    return {"early": early, "last": last, "before": before}


# -- token rate ------------------------------------------------------------------------------
def paced_chain(case: dict[str, Any], token_s: float) -> Any:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough

    docs = [Document(c["text"], id=c["id"]) for c in case["chunks"]]
    answer = case["answer"]

    class Chunks(BaseRetriever):
        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return docs

    class PacedModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "paced"

        def _generate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])

        def _stream(
            self, messages: list[BaseMessage], stop: Any = None, **kw: Any
        ) -> Iterator[ChatGenerationChunk]:
            for word in words(answer):
                time.sleep(token_s)
                yield ChatGenerationChunk(message=AIMessageChunk(word))

    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    context = Chunks() | (lambda found: "\n".join(d.page_content for d in found))
    return (
        {"context": context, "question": RunnablePassthrough()}
        | prompt
        | PacedModel()
        | StrOutputParser()
    )


def token_rates(
    engine: NecessityEngine, rows: list[dict[str, Any]], n: int, token_s: float, repeats: int
) -> dict[str, dict[str, list[float]]]:
    from ene_integrations.langchain import NecessityCallbackHandler

    variants: dict[str, Any] = {
        "without ENE": None,
        "ENE handler": NecessityCallbackHandler(engine),
        "ENE + on_claim": NecessityCallbackHandler(engine, on_claim=lambda rid, claim: None),
    }
    rates: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}  # app thread, us per token
    chains = [(paced_chain(c, token_s), c) for c in rows[:n]]
    for round_ in range(repeats):
        order = list(variants.items())
        order = order[round_ % len(order) :] + order[: round_ % len(order)]
        for name, handler in order:
            seen: list[float] = []
            used: list[float] = []
            ids: list[uuid.UUID] = []

            def app(
                chain: Any,
                case: dict[str, Any],
                handler: Any = handler,
                ids: list[uuid.UUID] = ids,
                seen: list[float] = seen,
                used: list[float] = used,
            ) -> None:
                run_id = uuid.uuid4()
                ids.append(run_id)
                config = {} if handler is None else {"callbacks": [handler], "run_id": run_id}
                start, start_cpu = time.perf_counter(), time.thread_time()
                count = sum(1 for _ in chain.stream(case["question"], config=config))
                seen.append(count / (time.perf_counter() - start))
                used.append((time.thread_time() - start_cpu) / count * 1e6)

            threads = [threading.Thread(target=app, args=pair) for pair in chains]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rates[name].append(statistics.median(seen))
            cpu[name].append(statistics.median(used))
            if handler is not None:  # drain, so no variant runs on another's backlog
                for run_id in ids:
                    handler.result(run_id, timeout=900)
    return {"rates": rates, "cpu": cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--oracle", nargs="+", default=["keyword", "model"], choices=["keyword", "model"]
    )
    parser.add_argument("--streams", nargs="+", type=int, default=[1, 16])
    parser.add_argument("--answers", type=int, default=16, help="dev-set answers per run")
    parser.add_argument("--token-ms", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3, help="token-rate rounds per variant")
    args = parser.parse_args(argv)
    token_s = args.token_ms / 1000
    rows = cases(args.answers)
    print(
        f"{len(rows)} dev-set answers, one word every {args.token_ms:g} ms; latency from a "
        "sentence's last token to its verdict"
    )
    print(
        "| oracle | streams | sentences checked while streaming | p50 ms | p95 ms "
        "| verdict before the answer ended | last sentence (with the ENG) p50 / p95 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for oracle in args.oracle:
        for n in args.streams:
            engine = build_engine(oracle)
            try:
                got = asyncio.run(latency(engine, rows, n, token_s))
            finally:
                engine.close()
            early, last = got["early"], got["last"]
            share = got["before"] / len(early) if early else float("nan")
            print(
                f"| {oracle} | {n} | {len(early)} | {percentile(early, 50):.0f} "
                f"| {percentile(early, 95):.0f} | {share:.0%} | {percentile(last, 50):.0f} / "
                f"{percentile(last, 95):.0f} |",
                flush=True,
            )
    print()
    print(
        f"tokens/s the app receives from chain.stream (median over threads, {args.repeats} rounds)"
    )
    print(
        "| oracle | app threads | without ENE | ENE handler | ENE + on_claim | overhead "
        "(on_claim) | app-thread CPU per token: without / handler / + on_claim (us) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for oracle in args.oracle:
        for n in args.streams:
            engine = build_engine(oracle)
            try:
                got = token_rates(engine, rows, n, token_s, args.repeats)
            finally:
                engine.close()
            med = {k: statistics.median(v) for k, v in got["rates"].items()}
            use = {k: statistics.median(v) for k, v in got["cpu"].items()}
            overhead = 1 - med["ENE + on_claim"] / med["without ENE"]
            print(
                f"| {oracle} | {n} | {med['without ENE']:.2f} | {med['ENE handler']:.2f} "
                f"| {med['ENE + on_claim']:.2f} | {overhead:+.1%} | {use['without ENE']:.0f} / "
                f"{use['ENE handler']:.0f} / {use['ENE + on_claim']:.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
