"""Odd input, case by case (issue 27): the normalisation of text at the boundary, strict types,
the JSON reader's guards, and the cases a new user met: a lone surrogate that sank an ``ene
eval`` run, contexts given as a mapping read as their keys, a deep body answered 500, and
``"id": 1e400``. The property-based fuzzing of every entry point is tests/test_fuzz.py."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ene_core import (
    ENGFormatError,
    EvidenceNecessityGraph,
    InvalidInputError,
    NecessityEngine,
    prune,
)
from ene_core.cli.batch import eval_lines
from ene_core.engine.request import load_json, parse_request
from ene_core.errors import PruneMismatchError
from ene_core.graph import SCHEMA_VERSION
from ene_core.reports.report import read_results
from ene_core.service.serve import Service
from ene_core.text.normalise import MAX_DEPTH, Normaliser, check_id, clean_text, json_depth
from ene_core.verifiers.keyword import KeywordOracle

ROOT = Path(__file__).resolve().parents[1]
ENGINE = NecessityEngine(KeywordOracle())
SURROGATE_LINE = (
    r'{"id": "s", "answer": "Paris is in France. \ud800", "contexts": ["Paris is in France."]}'
)
DEEP = "[" * 100_000 + "]" * 100_000


# -- the normalisation ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "cleaned", "surrogates", "controls"),
    [
        ("plain text\twith tab\nand lines\r\n", "plain text\twith tab\nand lines\r\n", 0, 0),
        ("a\ud800b", "a\ufffdb", 1, 0),
        ("\udfff\ud800", "\ufffd\ufffd", 2, 0),
        ("pair \ud83d\ude00 joins", "pair \U0001f600 joins", 0, 0),
        ("nul\x00 esc\x1b[0m del\x7f c1\x85", "nul esc[0m del c1", 0, 4),
        ("\u200fRTL \u2028 e\u0301 \ufeff", "\u200fRTL \u2028 e\u0301 \ufeff", 0, 0),
        ("\ufffd already", "\ufffd already", 0, 0),
    ],
)
def test_clean_text(text: str, cleaned: str, surrogates: int, controls: int) -> None:
    assert clean_text(text) == (cleaned, surrogates, controls)


def test_the_eng_says_what_was_changed_and_where() -> None:
    eng = ENGINE.evaluate(
        "Paris is in France.\x00 \ud800",
        ["Paris is in France.", {"id": "x\x01", "text": "ok", "metadata": {"k\ud800": "v\x00"}}],
        "Where\ud800?",
        id="q\x00",
    )
    assert eng.answer == "Paris is in France. \ufffd" and eng.question == "Where\ufffd?"
    assert eng.id == "q" and eng.contexts[1].id == "x"
    assert eng.contexts[1].metadata == {"k\ufffd": "v"}
    assert eng.warnings[:2] == [
        "lone surrogates (not valid Unicode) replaced with U+FFFD in answer, question, "
        "context 1 metadata",
        "control characters (NUL and others; tab and line ends are kept) removed from answer, "
        "id, context 1 id, context 1 metadata",
    ]
    assert EvidenceNecessityGraph.from_json(eng.to_json()) == eng  # the issue: to_json raised
    assert eng.claims[0].status == "supported"


def test_a_warning_names_five_places_and_counts_the_rest() -> None:
    norm = Normaliser()
    for i in range(8):
        norm.text("\x00", f"context {i}")
    assert norm.warnings() == [
        "control characters (NUL and others; tab and line ends are kept) removed from "
        "context 0, context 1, context 2, context 3, context 4 and 3 more"
    ]


def test_clean_input_gets_no_warning_and_is_unchanged() -> None:
    answer = "Ünïcödé façade 🙂. 東京は首都です。"
    eng = ENGINE.evaluate(answer, ["Ünïcödé façade 🙂 is nice."])
    assert eng.answer == answer and not any("U+FFFD" in w or "control" in w for w in eng.warnings)


def test_metadata_becomes_plain_json() -> None:
    class Odd:
        def __str__(self) -> str:
            raise RuntimeError("no")

    meta = {1: (1, 2), "big": 10**30, "nan": float("nan"), "odd": Odd(), "b": b"x", "ok": [None]}
    eng = ENGINE.evaluate("A b.", [{"text": "A b.", "metadata": meta}])
    assert eng.contexts[0].metadata == {
        "1": [1, 2],
        "big": str(10**30),
        "nan": "nan",
        "odd": "<Odd>",
        "b": "b'x'",
        "ok": [None],
    }
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(InvalidInputError, match=f"more than {MAX_DEPTH} levels"):
        ENGINE.evaluate("A b.", [{"text": "A b.", "metadata": cycle}])


# -- strict types -------------------------------------------------------------------------------------
def test_contexts_as_a_mapping_are_refused_not_read_as_keys() -> None:
    with pytest.raises(InvalidInputError, match=r"not a mapping.*list\(d\.values\(\)\)"):
        ENGINE.evaluate("Paris is in France.", {"doc1": "Paris is in France."})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="not a set"):
        ENGINE.evaluate("Paris is in France.", {"Paris is in France."})
    with pytest.raises(InvalidInputError, match="got int"):
        ENGINE.evaluate("Paris is in France.", 5)  # type: ignore[arg-type]
    eng = ENGINE.evaluate("Paris is in France.", (t for t in ["Paris is in France."]))
    assert eng.counts.supported == 1  # any other iterable is fine


@pytest.mark.parametrize(
    ("value", "expected"),
    [("q1", "q1"), (7, "7"), (1.5, "1.5"), (None, None), ("", "")],
)
def test_ids_are_strings_or_finite_numbers(value: Any, expected: str | None) -> None:
    assert check_id(value, "id") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("inf"), "finite number, got inf .*1e400"),
        (float("nan"), "finite number, got nan"),
        (True, "got a boolean"),
        ([1], "got an array"),
        ({"a": 1}, "got an object"),
        pytest.param(10**5000, "too long", id="5001 digits"),
    ],
)
def test_other_ids_are_typed_errors(value: Any, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        ENGINE.evaluate("A b.", ["A b."], id=value)
    with pytest.raises(InvalidInputError, match=f"context 0: id .*{message}"):
        ENGINE.evaluate("A b.", [{"id": value, "text": "A b."}])


def test_evaluate_many_keeps_a_bad_requests_error_in_its_place() -> None:
    good = {"id": "g", "answer": "A b.", "contexts": ["A b."]}
    outcomes = ENGINE.evaluate_many(
        [good, {"answer": "A b.", "contexts": {"d": "A b."}}, 5, good], return_exceptions=True
    )
    assert [type(o).__name__ for o in outcomes] == [
        "EvidenceNecessityGraph",
        "InvalidInputError",
        "InvalidInputError",
        "EvidenceNecessityGraph",
    ]
    with pytest.raises(InvalidInputError):
        ENGINE.evaluate_many([good, 5])
    with pytest.raises(InvalidInputError, match="wrap one in a list"):
        ENGINE.evaluate_many(good)  # type: ignore[arg-type]


# -- the JSON reader ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DEEP, "nested more than 64 levels deep"),
        ('{"a": "[[[[", "b": ' + "[" * 65 + "]" * 65 + "}", "nested more than 64 levels deep"),
        ('{"answer": NaN}', "not valid JSON: NaN is not a JSON number"),
        ('{"answer": -Infinity}', "not valid JSON: -Infinity is not a JSON number"),
        ('{"n": ' + "9" * 5000 + "}", "4300 digits"),
        ('{"answer": "a"', "not valid JSON: Expecting ',' delimiter"),
        (b'{"answer": "caf\xe9"}', "not UTF-8 text (byte 0xe9 at byte 16)"),
    ],
)
def test_load_json_refuses_with_typed_errors(text: str | bytes, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_json(text)


def test_json_depth_skips_strings_and_is_exact() -> None:
    assert json_depth('{"a": ["[[[", {"b": "]]\\"["}]}') == 3
    assert json_depth("[" * 65 + "]" * 65) == 65
    assert json_depth("64") == 0
    assert load_json("[" * 64 + "]" * 64) == eval("[" * 64 + "]" * 64)  # 64 levels are fine


def test_id_1e400_gets_a_message_that_says_what_to_do() -> None:
    with pytest.raises(InvalidInputError, match=r"finite number, got inf .*pass it as a string"):
        parse_request('{"id": 1e400, "answer": "a", "contexts": []}')
    assert parse_request('{"id": 2.5, "answer": "a", "contexts": []}').id == "2.5"


# -- ene eval: the run a lone surrogate sank --------------------------------------------------------
def test_ene_eval_reports_odd_lines_and_writes_every_good_one(tmp_path: Path) -> None:
    lines = [
        '{"id": "a", "answer": "Paris is in France.", "contexts": ["Paris is in France."]}',
        SURROGATE_LINE,
        '{"id": "m", "answer": "Paris is in France.", "contexts": {"doc1": "Paris is in France."}}',
        '{"id": 1e400, "answer": "a", "contexts": []}',
        DEEP,
        '{"id": "n", "answer": "Nul\\u0000 is here.", "contexts": ["Nul is here."]}',
        '{"id": "z", "answer": "Owls hunt.", "contexts": ["Owls hunt."]}',
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ene_core.cli",
            "eval",
            str(source),
            "-o",
            str(out),
            "--oracle",
            "keyword",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    engs = read_results(out)[0]
    assert [e.id for e in engs] == ["a", "s", "n", "z"]
    assert engs[1].answer == "Paris is in France. \ufffd" and "U+FFFD" in engs[1].warnings[0]
    assert engs[2].answer == "Nul is here." and engs[2].counts.supported == 1
    for number, reason in [
        (3, "not a mapping"),
        (4, "finite number, got inf"),
        (5, "nested more than 64 levels deep"),
    ]:
        assert done.stderr.count(f"line {number}: skipped: ") == 2, (
            done.stderr
        )  # now and at the end
        assert reason in done.stderr
    assert "4 requests evaluated, 3 lines skipped, 0 failed" in done.stderr


def test_ene_eval_output_with_line_separators_reads_back(tmp_path: Path) -> None:
    out = io.StringIO()
    line = json.dumps({"id": "u", "answer": "Paris\u2028is in France.\x85", "contexts": []})
    eval_lines(ENGINE, [line], out)
    path = tmp_path / "out.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    (eng,), failed = read_results(path)  # splitlines() would have cut the line at U+2028
    assert eng.answer == "Paris\u2028is in France." and failed == 0


# -- ene serve (in-process; tests/test_serve.py checks a real Ray Serve) -------------------------------
def post(body: bytes) -> tuple[int, Any]:
    service = Service(ENGINE)

    async def chunks() -> Any:
        yield body

    async def evaluate(request: Any) -> Any:
        return service.run_batch([request])[0]

    reply = asyncio.run(service.handle("POST", "/v1/evaluate", {}, chunks(), evaluate))
    return reply.status, json.loads(reply.body)


def test_ene_serve_answers_odd_bodies_with_a_4xx_that_says_why() -> None:
    status, body = post(DEEP.encode())
    assert status == 400
    assert body["error"] == {
        "type": "InvalidInputError",
        "message": "the body is nested more than 64 levels deep",
    }
    status, body = post(b'{"id": 1e400, "answer": "a", "contexts": []}')
    assert status == 400 and "finite number, got inf" in body["error"]["message"]
    status, body = post(b'{"answer": "a", "contexts": {"doc1": "text"}}')
    assert status == 400 and "list(d.values())" in body["error"]["message"]
    status, body = post(b'[{"answer": "a", "contexts": []}, {"answer": NaN, "contexts": []}]')
    assert status == 400 and "NaN is not a JSON number" in body["error"]["message"]
    status, body = post(SURROGATE_LINE.encode())
    assert status == 200 and "U+FFFD" in body["warnings"][0]
    assert EvidenceNecessityGraph.from_dict(body).answer == "Paris is in France. \ufffd"


# -- ENG files ----------------------------------------------------------------------------------------
def test_from_json_refuses_what_would_not_serialise() -> None:
    good = ENGINE.evaluate("Paris is in France.", ["Paris is in France."]).to_json()
    assert EvidenceNecessityGraph.from_json(good.replace("France", "Fr\\ud83d\\ude00nce"))
    bad = [
        good.replace("France", "Fr\\ud800nce"),  # a lone surrogate escape
        good.replace("France", "Fr\ud800nce"),  # a lone surrogate in the text itself
        good.replace('"metadata":{}', '"metadata":' + '{"a":' * 200 + "1" + "}" * 200, 1),
        good.replace(f'"schema_version":"{SCHEMA_VERSION}"', '"schema_version":"\u00b2.3"'),
        good.replace('"threshold":0.5', '"threshold":NaN'),
        good.replace('"threshold":0.5', '"threshold":1e400'),
        good.encode("utf-8").replace(b"France", b"Fr\xed\xa0\x80nce"),  # CESU-8 surrogate
        '{"schema_version": "1.3", "n": ' + "9" * 5000 + "}",
    ]
    for text in bad:
        assert text != good
        with pytest.raises(ENGFormatError):
            EvidenceNecessityGraph.from_json(text)


# -- pruning ------------------------------------------------------------------------------------------
def test_prune_matches_chunks_as_the_graph_has_them() -> None:
    chunks = ["Paris is in France.", "Bananas are yellow."]
    other = ["Owls hunt at night.", "Paris is in France."]
    eng = ENGINE.evaluate("Paris is in France.", chunks)
    assert prune(chunks, eng).kept == ["Paris is in France."]
    with pytest.raises(PruneMismatchError, match=r"item 0 .* is not the graph's context 0"):
        prune(other, eng)
    odd = [{"id": "a\x00", "text": "Paris is in France.\x00"}, "Bananas are yellow."]
    assert prune(odd, ENGINE.evaluate("Paris is in France.", odd)).kept_indices == [0]
    assert prune([0, 1], eng).kept == [0]  # positions are not chunks: only the count is checked
    unsupported = ENGINE.evaluate("Owls fly.", chunks)
    with pytest.raises(InvalidInputError, match="keep must be one of"):
        prune(chunks, unsupported, keep="all")  # type: ignore[arg-type]
