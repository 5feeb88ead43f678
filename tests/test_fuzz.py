"""Hostile input at every entry point: a typed ``EneError`` or a valid result, never an untyped
exception, a traceback, a 500 or a lost good line.

Marked ``fuzz``. CI runs a bounded, derandomised number of examples per property (25); a longer,
random run is one environment variable away::

    ENE_FUZZ_EXAMPLES=2000 python -m pytest -m fuzz -q

Engines use the keyword oracle (no model): these tests are about the plumbing around it.
"""

from __future__ import annotations

import asyncio
import io
import json
import math
import os
import re
import tempfile
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ene_core import EneError, EvidenceNecessityGraph, InvalidInputError, NecessityEngine, prune
from ene_core.cli.batch import eval_lines
from ene_core.cli.inputs import parse_line, read_lines
from ene_core.errors import ENGFormatError
from ene_core.reports.report import summarize
from ene_core.reports.viewer import render_html
from ene_core.service.serve import Limits, Service
from ene_core.text.normalise import clean_text
from ene_core.verifiers.keyword import KeywordOracle

pytestmark = pytest.mark.fuzz

LONG = "ENE_FUZZ_EXAMPLES" in os.environ
FUZZ = settings(
    max_examples=int(os.environ.get("ENE_FUZZ_EXAMPLES", "25")),
    deadline=None,
    derandomize=not LONG,  # CI: the same examples every run, and no time spent shrinking
    phases=list(Phase) if LONG else [Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
ENGINE = NecessityEngine(KeywordOracle())

# -- strategies ---------------------------------------------------------------------------------
HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "</style><svg onload=alert(1)>",
    "<!--",
    "javascript:alert(1)",
]
ODD = [
    "\ud800",  # lone high surrogate
    "\udfff",  # lone low surrogate
    "\ud83d\ude00",  # a pair as two code points
    "\x00",
    "\x01",
    "\x1b[31m",
    "\x7f",
    "\x85",
    "\u200f",  # right-to-left mark
    "\u202e",  # right-to-left override
    "\u2028",  # line separator
    "\u2029",
    "\ufeff",
    "\ufffe",
    "e\u0301",  # combining acute
    "\u0301",
    "\U0001f469\u200d\U0001f469\u200d\U0001f467",  # a ZWJ emoji
    "\r\n",
    "\r",
    "\t",
    "[1]",
    "[0]",
    "[2]",
    "[99999999999999999999]",
    "{",
    "]",
    "\\",
    '"',
    "NaN",
    *HOSTILE,
]
WORDS = ["Paris", "is", "in", "France", ".", " ", "The", "tower", "330", "tall", "?", "\n", "# "]
piece = st.one_of(
    st.sampled_from(ODD + WORDS),
    st.text(st.characters(exclude_categories=()), max_size=6),  # surrogates included
)
odd_text = st.lists(piece, max_size=20).map("".join)


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), odd_text
)
json_value = st.recursive(
    json_scalar,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(odd_text, kids, max_size=4)),
    max_leaves=12,
)
python_value = st.one_of(
    json_value,
    st.sampled_from(
        [b"\xff bytes", frozenset({1}), datetime(2024, 1, 1, tzinfo=timezone.utc), Unprintable()]
    ),
    st.just(10**5000),
    st.tuples(odd_text, st.integers()),
)
metadata = st.dictionaries(st.one_of(odd_text, st.integers()), python_value, max_size=4)
any_id = st.one_of(
    st.none(),
    odd_text,
    st.integers(),
    st.floats(allow_nan=True),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
chunk = st.one_of(
    odd_text,
    st.fixed_dictionaries({"text": odd_text}, optional={"id": any_id, "metadata": metadata}),
    st.fixed_dictionaries({"page_content": odd_text}),
)


def valid_id(value: Any) -> bool:
    if value is None or isinstance(value, str):
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return len(str(value)) < 4300
    return isinstance(value, float) and math.isfinite(value)


def valid_chunk(item: Any) -> bool:
    return not isinstance(item, dict) or valid_id(item.get("id"))


_ODD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def assert_sound(eng: EvidenceNecessityGraph, *, normalised: bool = True) -> None:
    """It serialises and reads back equal; the engine's holds no lone surrogate or control
    character (a loaded one may hold control characters: they serialise)."""
    text = eng.to_json()
    assert EvidenceNecessityGraph.from_json(text) == eng
    if normalised:
        assert not any(_ODD_CHARS.search(s) for s in strings(json.loads(text)))


# -- the engine ------------------------------------------------------------------------------------
@FUZZ
@given(
    answer=odd_text,
    question=st.none() | odd_text,
    contexts=st.lists(chunk, max_size=6),
    ident=any_id,
)
def test_evaluate_gives_a_sound_graph_or_a_typed_error(
    answer: str, question: str | None, contexts: list[Any], ident: Any
) -> None:
    valid = valid_id(ident) and all(valid_chunk(c) for c in contexts)
    try:
        eng = ENGINE.evaluate(answer, contexts, question, id=ident)
    except EneError:
        assert not valid
        return
    assert valid
    assert_sound(eng)
    cleaned, surrogates, controls = clean_text(answer)
    assert eng.answer == cleaned and len(eng.contexts) == len(contexts)
    if surrogates:
        assert any("lone surrogates" in w and "answer" in w for w in eng.warnings)
    if controls:
        assert any("control characters" in w and "answer" in w for w in eng.warnings)


@FUZZ
@given(
    items=st.lists(
        st.one_of(
            st.fixed_dictionaries(
                {"answer": odd_text, "contexts": st.lists(odd_text, max_size=3)},
                optional={"question": odd_text, "id": any_id},
            ),
            json_value,
        ),
        max_size=6,
    )
)
def test_evaluate_many_fails_a_bad_request_alone(items: list[Any]) -> None:
    outcomes = ENGINE.evaluate_many(items, return_exceptions=True)
    assert len(outcomes) == len(items)
    for item, outcome in zip(items, outcomes, strict=True):
        good = (
            isinstance(item, dict)
            and isinstance(item.get("answer"), str)
            and isinstance(item.get("contexts"), list)
            and valid_id(item.get("id"))
        )
        if good:
            assert isinstance(outcome, EvidenceNecessityGraph), outcome
            assert_sound(outcome)
        else:
            assert isinstance(outcome, EneError)


@pytest.mark.parametrize(
    "contexts",
    [
        pytest.param([], id="no contexts"),
        pytest.param([f"Paris is in France {i}." for i in range(5000)], id="5000 contexts"),
        pytest.param(
            [{"id": "same", "text": f"Chunk {i}: Paris is in France."} for i in range(50)],
            id="duplicate ids",
        ),
        pytest.param(
            [("Paris is in France. \ud800\x00 The tower is tall. " * 25_000)[:1_000_000]],
            id="a 1 MB chunk",
        ),
    ],
)
def test_big_and_degenerate_requests(contexts: list[Any]) -> None:
    eng = ENGINE.evaluate("Paris is in France. The tower is tall.", contexts)
    assert_sound(eng)
    assert len(eng.contexts) == len(contexts)
    if not contexts:
        assert eng.counts.unsupported == 2
    elif isinstance(contexts[0], dict):
        assert any("duplicate context ids" in w for w in eng.warnings)
    else:
        assert eng.counts.supported >= 1


def test_a_1_mb_answer() -> None:
    answer = ("Paris is in France \ud800\x00 " * 40_000)[:1_000_000]  # one long sentence
    eng = ENGINE.evaluate(answer, ["Paris is in France."])
    assert_sound(eng)
    assert len(eng.answer) < len(answer) and "\ufffd" in eng.answer


# -- ENG files ----------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(json_value.map(lambda v: json.dumps(v, allow_nan=True)), odd_text, st.binary()))
def test_from_json_of_anything_is_an_eng_format_error(text: str | bytes) -> None:
    with pytest.raises(ENGFormatError):
        EvidenceNecessityGraph.from_json(text)


BASE = ENGINE.evaluate(
    "Paris is in France [1]. The tower is 330 metres tall [2]. Owls fly.",
    [
        {"id": "a", "text": "Paris is in France.", "metadata": {"k": [1, {"x": None}]}},
        "The tower is 330 metres tall.",
        "Bananas.",
    ],
    "Where?",
    id="q",
).model_dump(mode="json")


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*at, i))


PATHS = [p for p in _paths(BASE) if p]


def _mutated(path: tuple[Any, ...], action: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(BASE))
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if action == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return data


@FUZZ
@given(
    path=st.sampled_from(PATHS),
    action=st.sampled_from(["replace", "delete"]),
    value=json_value,
    cut=st.integers(0, 4000),
    insert=piece,
)
def test_mutated_engs_load_soundly_or_fail_typed(
    path: tuple[Any, ...], action: str, value: Any, cut: int, insert: str
) -> None:
    text = json.dumps(_mutated(path, action, value), allow_nan=True)
    for variant in (text, text[:cut], text[:cut] + insert + text[cut:], text.encode()[:cut]):
        try:
            eng = EvidenceNecessityGraph.from_json(variant)
        except ENGFormatError:
            continue
        assert_sound(eng, normalised=False)


def test_deep_and_big_eng_text_fails_typed() -> None:
    for text in ("[" * 100_000, '{"a":' * 100_000, "9" * 5000, '{"schema_version": "\u00b2.0"}'):
        with pytest.raises(ENGFormatError):
            EvidenceNecessityGraph.from_json(text)


# -- ene eval -------------------------------------------------------------------------------------
good_line = st.builds(
    lambda i, answer, contexts, question: json.dumps(
        {"id": f"good-{i}", "answer": answer, "contexts": contexts, "question": question},
        ensure_ascii=i % 2 == 0,
    ),
    st.integers(0, 10**6),
    odd_text,
    st.lists(st.one_of(odd_text, st.fixed_dictionaries({"text": odd_text})), max_size=3),
    st.none() | odd_text,
)
bad_line = st.one_of(
    json_value.map(lambda v: json.dumps(v, allow_nan=True)),
    st.builds(lambda line, cut: line[:cut], good_line, st.integers(0, 60)),
    odd_text,
    st.integers(1, 200_000).map(lambda n: "[" * n),
    st.just('{"id": 1e400, "answer": "a", "contexts": []}'),
    st.just('{"answer": "a", "contexts": {"doc1": "text"}}'),
)


def lines_of(out: io.StringIO) -> list[str]:
    """Output lines, cut at \\n only (text may hold U+2028, which splitlines() also cuts at)."""
    return out.getvalue().split("\n")[:-1]


@FUZZ
@given(st.lists(st.tuples(st.booleans(), good_line, bad_line), min_size=1, max_size=8))
def test_ene_eval_loses_no_good_line(rows: list[tuple[bool, str, str]]) -> None:
    lines = [good if use_good else bad for use_good, good, bad in rows]
    for number, line in enumerate(lines, 1):
        item = parse_line(number, line)  # never raises
        assert item.request is not None or item.problem is not None or not line.strip()
    out = io.StringIO()
    summary = eval_lines(ENGINE, lines, out, errors=io.StringIO())
    written = [EvidenceNecessityGraph.from_json(line) for line in lines_of(out)]
    good_ids = [json.loads(good)["id"] for use_good, good, _ in rows if use_good]
    assert [e.id for e in written if (e.id or "").startswith("good-")] == good_ids
    for eng in written:
        assert_sound(eng)
    assert summary.evaluated == len(written)
    assert summary.exit_code == (2 if summary.skipped or summary.failed else 0)


@FUZZ
@given(
    st.lists(
        st.one_of(
            good_line.map(lambda line: ("good", json.dumps(json.loads(line)).encode())),
            st.tuples(
                st.just("bad"),
                st.one_of(
                    st.binary(max_size=40),
                    odd_text.map(lambda t: t.encode("utf-16", "surrogatepass")),
                    odd_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
                    st.sampled_from([b"\xff\xfe{", b'{"answer": "caf\xe9", "contexts": []}']),
                ),
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_ene_eval_reads_mixed_encodings_line_by_line(rows: list[tuple[str, bytes]]) -> None:
    data = b"\n".join(raw.replace(b"\n", b" ").replace(b"\r", b" ") for _, raw in rows)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "in.jsonl"
        path.write_bytes(data)
        out = io.StringIO()
        eval_lines(ENGINE, read_lines([str(path)]), out, errors=io.StringIO())
    written = [json.loads(line)["id"] for line in lines_of(out)]
    goods = [json.loads(raw)["id"] for kind, raw in rows if kind == "good"]
    assert [i for i in written if str(i).startswith("good-")] == goods


# -- ene serve ------------------------------------------------------------------------------------
SERVICE = Service(ENGINE, limits=Limits(max_contexts=8, max_context_chars=2000))


def call(body: bytes) -> tuple[int, Any]:
    async def chunks() -> Any:
        yield body

    async def evaluate(request: Any) -> Any:
        return SERVICE.run_batch([request])[0]

    reply = asyncio.run(SERVICE.handle("POST", "/v1/evaluate", {}, chunks(), evaluate))
    return reply.status, json.loads(reply.body)


good_body = st.fixed_dictionaries(
    {"answer": odd_text, "contexts": st.lists(odd_text, max_size=3)},
    optional={"id": st.one_of(odd_text, st.integers()), "question": odd_text},
)


@FUZZ
@given(
    st.one_of(
        good_body.map(lambda b: ("good", json.dumps(b).encode())),
        st.lists(good_body, min_size=1, max_size=3).map(lambda b: ("good", json.dumps(b).encode())),
        bad_line.map(lambda line: ("any", line.encode("utf-8", "surrogatepass"))),
        st.binary().map(lambda b: ("any", b)),
        st.lists(st.one_of(good_body, json_value), max_size=4).map(
            lambda b: ("any", json.dumps(b, allow_nan=True).encode())
        ),
    )
)
def test_ene_serve_answers_a_4xx_or_sound_graphs_never_a_500(case: tuple[str, bytes]) -> None:
    kind, body = case
    status, answer = call(body)
    assert status in (200, 400, 413), answer
    if kind == "good":
        assert status == 200, answer
    if status != 200:
        assert answer["error"]["type"] in ("InvalidInputError", "LimitExceededError")
        return
    for item in answer if isinstance(answer, list) else [answer]:
        if "error" in item:
            assert item["error"]["type"] in ("InvalidInputError", "LimitExceededError")
        else:
            assert_sound(EvidenceNecessityGraph.from_dict(item))


# -- framework objects ----------------------------------------------------------------------------
@FUZZ
@given(
    answer=odd_text,
    docs=st.lists(st.tuples(odd_text, metadata, st.none() | odd_text), min_size=1, max_size=4),
)
def test_langchain_documents_with_odd_text_and_metadata(
    answer: str, docs: list[tuple[str, dict[Any, Any], str | None]]
) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.retrievers import BaseRetriever

    from ene_integrations.langchain import NecessityCallbackHandler

    documents = [
        Document(page_content=text, metadata={str(k): v for k, v in meta.items()}, id=ident)
        for text, meta, ident in docs
    ]

    class Fixed(BaseRetriever):
        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return documents

    chain = (
        Fixed()
        | (lambda found: "\n".join(d.page_content for d in found))
        | FakeListChatModel(responses=[answer or "-"])
        | StrOutputParser()
    )
    handler = NecessityCallbackHandler(ENGINE)
    run_id = uuid.uuid4()
    assert chain.invoke("q", config={"callbacks": [handler], "run_id": run_id}) == (answer or "-")
    result = handler.result(run_id, timeout=30)
    assert [result.eng, result.error, result.skipped].count(None) == 2  # one of the three
    if result.eng is not None:
        assert_sound(result.eng)
        assert {c.text for c in result.eng.contexts} <= {clean_text(t)[0] for t, _, _ in docs}
    # the same documents straight into the engine
    try:
        assert_sound(ENGINE.evaluate(answer, documents))
    except EneError as exc:
        assert isinstance(exc, InvalidInputError)


@FUZZ
@given(
    answer=odd_text,
    nodes=st.lists(st.tuples(odd_text, metadata, st.floats(allow_nan=True)), max_size=4),
)
def test_llama_index_nodes_with_odd_text_and_metadata(
    answer: str, nodes: list[tuple[str, dict[Any, Any], float]]
) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.response.schema import Response
    from llama_index.core.schema import NodeWithScore, TextNode

    from ene_integrations.llama_index import prune_unused

    scored = [
        NodeWithScore(node=TextNode(text=text, metadata={str(k): v for k, v in m.items()}), score=s)
        for text, m, s in nodes
    ]
    try:
        assert_sound(ENGINE.evaluate(answer, scored))
    except EneError as exc:
        assert isinstance(exc, InvalidInputError)
    response = Response(answer, source_nodes=scored)
    pruned = prune_unused(response, engine=ENGINE)  # fail-safe: never raises
    assert response.source_nodes == scored  # the original is untouched
    info = pruned.metadata["ene_pruning"]
    assert sorted(info["kept"] + info["dropped"]) == sorted(n.node.node_id for n in scored)


# -- pruning with another request's graph ---------------------------------------------------------
@FUZZ
@given(
    a=st.lists(odd_text, max_size=4),
    b=st.lists(odd_text, max_size=4),
    answer=odd_text,
    keep=st.sampled_from(["safe", "minimal", "necessary", "cited", "all"]),
)
def test_prune_with_a_graph_of_another_request(
    a: list[str], b: list[str], answer: str, keep: Any
) -> None:
    own = ENGINE.evaluate(answer, a)
    other = ENGINE.evaluate(answer + " Paris is in France.", b)
    for eng in (own, other):
        try:
            result = prune(a, eng, keep=keep)
        except InvalidInputError:
            assert keep == "all" or eng is other
            continue
        assert sorted(result.kept_indices + result.dropped_indices) == list(range(len(a)))
        assert [a[i] for i in result.kept_indices] == result.kept
        assert keep != "all"


# -- viewer and report ------------------------------------------------------------------------------
class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


hostile = st.lists(st.one_of(st.sampled_from(HOSTILE), piece), min_size=1, max_size=6).map("".join)


@FUZZ
@given(
    requests=st.lists(
        st.tuples(
            hostile,
            hostile,
            st.lists(st.tuples(hostile, hostile, hostile), min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=3,
    ),
    title=hostile,
)
def test_viewer_and_report_escape_hostile_text(
    requests: list[tuple[str, str, list[tuple[str, str, str]]]], title: str
) -> None:
    engs = [
        ENGINE.evaluate(
            f"{answer} [1]. Paris is in France.",
            [
                {"id": cid, "text": text, "metadata": {key: text, "source": key}}
                for cid, text, key in chunks
            ],
            question,
            id=question,
        )
        for answer, question, chunks in requests
    ]
    report = summarize(engs, resamples=50)
    page = render_html(engs, report=report, title=title)
    report.to_table()  # the terminal form renders too
    parser = Tags()
    parser.feed(page)
    tags = [tag for tag, _ in parser.tags]
    assert tags.count("script") == 1 and tags.count("style") == 1  # the page's own only
    assert not {"img", "iframe", "object", "embed", "link", "base", "form"} & set(tags)
    for tag, attrs in parser.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            if name == "href":
                assert value is not None and value.startswith("#"), value
    shown = "".join(parser.text)
    for answer, _, _ in requests:
        for payload in HOSTILE:
            if payload in clean_text(answer)[0]:
                assert payload in shown  # shown as text, not dropped
