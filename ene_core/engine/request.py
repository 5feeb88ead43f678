"""One evaluation: :class:`Request` (an answer, its contexts and optionally the question), built
and checked from what callers pass, its texts normalised once (:mod:`ene_core.text.normalise`); and
its JSON form (:func:`load_json`, :func:`request_from_item`), shared by ``ene eval`` input lines
and ``ene serve`` request bodies."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import EneError, InvalidInputError
from ..graph import ChunkFilterRecord, FilteredContext
from ..text.claims import Segment
from ..text.contexts import Context, to_contexts
from ..text.normalise import Normaliser, check_id, decode_json

REQUIRED_FIELDS = ("answer", "contexts")


@dataclass(frozen=True)
class FilterCall:
    """One chunk filter call before generation, checked (:func:`filter_call`): how many chunks
    it was given and kept, the chunks it dropped, its tokens, model and error."""

    chunks: int
    kept: int
    dropped: tuple[FilteredContext, ...] = ()
    tokens_kept: int = 0
    tokens_saved: int = 0
    threshold: float | None = None
    model: str | None = None
    revision: str | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The call as the JSON form's ``filtered`` entries write it (:func:`filter_call`)."""
        return {
            "chunks": self.chunks,
            "kept": self.kept,
            "dropped": [d.model_dump(exclude={"call"}) for d in self.dropped],
            "tokens_kept": self.tokens_kept,
            "tokens_saved": self.tokens_saved,
            "threshold": self.threshold,
            "model": self.model,
            "revision": self.revision,
            "error": self.error,
        }


def filter_call(payload: Any) -> FilterCall:
    """One chunk filter call from its record: the LangChain ``"ene_chunk_filter"`` event's data,
    a LlamaIndex ``ChunkFilterEvent`` as a mapping, or a ``filtered`` entry of the JSON form:
    ``{"chunks": int, "kept": int or [indices], "dropped": [{"index", "text", "score", "id"
    (or "node_id")}], "tokens_kept", "tokens_saved", "threshold", "model", "revision",
    "error"}`` (only ``dropped`` is required). :class:`InvalidInputError` saying what is wrong."""
    if isinstance(payload, FilterCall):
        return payload
    if not isinstance(payload, Mapping):
        raise InvalidInputError(f"a filter call is a mapping, got {type(payload).__name__}")
    raw = payload.get("dropped")
    if not isinstance(raw, (list, tuple)):
        raise InvalidInputError("a filter call needs 'dropped': a list of the dropped chunks")
    dropped = []
    for n, item in enumerate(raw):
        where = f"filter call: dropped chunk {n}"
        if not isinstance(item, Mapping) or not isinstance(item.get("text"), str):
            raise InvalidInputError(f"{where} needs a 'text' string")
        ident = item.get("id", item.get("node_id"))
        dropped.append(
            FilteredContext(
                index=_count(item.get("index", n), f"{where}: index"),
                id=None if ident is None else str(ident),
                text=item["text"],
                score=_number(item.get("score"), f"{where}: score"),
            )
        )
    kept = payload.get("kept", 0)
    kept = len(kept) if isinstance(kept, (list, tuple)) else _count(kept, "filter call: kept")
    chunks = _count(payload.get("chunks", kept + len(dropped)), "filter call: chunks")
    if chunks < kept + len(dropped):
        raise InvalidInputError(
            f"filter call: {kept} kept and {len(dropped)} dropped of only {chunks} chunks"
        )
    error = payload.get("error")
    return FilterCall(
        chunks=chunks,
        kept=kept,
        dropped=tuple(dropped),
        tokens_kept=_count(payload.get("tokens_kept", 0), "filter call: tokens_kept"),
        tokens_saved=_count(payload.get("tokens_saved", 0), "filter call: tokens_saved"),
        threshold=_number(payload.get("threshold"), "filter call: threshold"),
        model=_optional_text(payload.get("model")),
        revision=_optional_text(payload.get("revision")),
        error=_optional_text(error),
    )


def filter_record(
    calls: Sequence[FilterCall], contexts: Sequence[Context]
) -> tuple[ChunkFilterRecord | None, list[FilteredContext]]:
    """The ENG's ``chunk_filter`` and ``filtered_contexts`` of a request's filter calls: every
    chunk they dropped, once (by text), but never one the model saw after all (a context)."""
    if not calls:
        return None, []
    seen = {" ".join(c.text.split()) for c in contexts}
    filtered = []
    for k, call in enumerate(calls):
        for chunk in call.dropped:
            key = " ".join(chunk.text.split())
            if key not in seen:
                seen.add(key)
                filtered.append(chunk.model_copy(update={"call": k}))
    named = [c for c in calls if c.model is not None]
    thresholds = [c.threshold for c in calls if c.threshold is not None]
    record = ChunkFilterRecord(
        model=named[-1].model if named else None,
        revision=named[-1].revision if named else None,
        threshold=thresholds[-1] if thresholds else None,
        calls=len(calls),
        chunks=sum(c.chunks for c in calls),
        kept=sum(c.kept for c in calls),
        dropped=sum(len(c.dropped) for c in calls),
        tokens_kept=sum(c.tokens_kept for c in calls),
        tokens_saved=sum(c.tokens_saved for c in calls),
        errors=[c.error for c in calls if c.error],
    )
    return record, filtered


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{where} must be a non-negative integer, got {value!r}")
    return value


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInputError(f"{where} must be a finite number or null, got {value!r}")
    return float(value)


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Request:
    """One evaluation: an answer, its contexts and (optionally) the question; ``filtered``: the
    chunk filter calls that ran before generation (their dropped chunks are not contexts)."""

    answer: str
    contexts: tuple[Context, ...]
    question: str | None = None
    id: str | None = None
    warnings: tuple[str, ...] = ()  # what the normalisation changed; the ENG carries them
    filtered: tuple[FilterCall, ...] = ()

    @classmethod
    def build(
        cls,
        answer: Any,
        contexts: Iterable[Any] | None,
        question: Any = None,
        id: Any = None,
        filtered: Iterable[Any] | None = None,
    ) -> Request:
        """Check the types strictly and normalise every text (:mod:`ene_core.text.normalise`).

        ``filtered``: records of the chunk filter calls before generation (see
        :func:`filter_call`); their dropped chunks go to the ENG's ``filtered_contexts``."""
        if not isinstance(answer, str):
            raise InvalidInputError(f"answer must be a str, got {type(answer).__name__}")
        if question is not None and not isinstance(question, str):
            raise InvalidInputError(
                f"question must be a str or None, got {type(question).__name__}"
            )
        ident = check_id(id, "id")
        given = to_contexts(contexts)
        norm = Normaliser()
        answer = norm.text(answer, "answer")
        question = None if question is None else norm.text(question, "question")
        ident = None if ident is None else norm.text(ident, "id")
        chunks = tuple(
            Context(
                norm.text(c.text, f"context {i}"),
                norm.text(c.id, f"context {i} id"),
                norm.metadata(c.metadata, f"context {i} metadata"),
            )
            for i, c in enumerate(given)
        )
        calls = _filter_calls(filtered, norm)
        return cls(answer, chunks, question, ident, tuple(norm.warnings()), calls)

    @classmethod
    def from_mapping(cls, item: Mapping[str, Any] | Request) -> Request:
        if isinstance(item, Request):
            return item
        if not isinstance(item, Mapping) or "answer" not in item:
            raise InvalidInputError("each request needs an 'answer' (and usually 'contexts')")
        return cls.build(
            item["answer"],
            item.get("contexts"),
            item.get("question"),
            item.get("id"),
            item.get("filtered"),
        )


def _filter_calls(filtered: Iterable[Any] | None, norm: Normaliser) -> tuple[FilterCall, ...]:
    """The checked filter calls, their dropped chunks' texts and ids normalised."""
    if filtered is None:
        return ()
    if isinstance(filtered, (str, bytes, Mapping)) or not isinstance(filtered, Iterable):
        raise InvalidInputError(
            f"filtered must be a list of filter calls, got {type(filtered).__name__}"
        )
    calls = []
    for k, given in enumerate(filtered):
        call = filter_call(given)
        dropped = tuple(
            d.model_copy(
                update={
                    "text": norm.text(d.text, f"filter call {k} chunk {d.index}"),
                    "id": None if d.id is None else norm.text(d.id, f"filter call {k} id"),
                }
            )
            for d in call.dropped
        )
        error = None if call.error is None else norm.text(call.error, f"filter call {k} error")
        calls.append(dataclasses.replace(call, dropped=dropped, error=error))
    return tuple(calls)


@dataclass(frozen=True)
class ClaimsRequest(Request):
    """Sentences of a streamed answer to check now (``segments``: segment index -> segment of
    the whole answer): only their claim-level rounds run, and the plan returns
    ``{segment index: Claim}`` instead of an ENG. ``shared`` is the stream's, kept between its
    requests (the premise index of its contexts, built once)."""

    segments: dict[int, Segment] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def build_all(items: Iterable[Any], *, keep_errors: bool) -> list[Request | EneError]:
    """Each item as a :class:`Request`; a bad one raises, or with ``keep_errors`` stands as its
    :class:`InvalidInputError` (``evaluate_many(..., return_exceptions=True)``)."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InvalidInputError(
            f"requests must be a list of requests, got {type(items).__name__}: wrap one in a list"
        )
    built: list[Request | EneError] = []
    for item in items:
        try:
            built.append(Request.from_mapping(item))
        except EneError as exc:
            if not keep_errors:
                raise
            built.append(exc)
    return built


def run_built(
    built: Sequence[Request | EneError], run: Callable[[list[Request]], Sequence[Any]]
) -> list[Any]:
    """``run`` on the requests among ``built``; the outcomes in order, errors in their places."""
    results = iter(run([b for b in built if isinstance(b, Request)]))
    return [b if isinstance(b, EneError) else next(results) for b in built]


# -- the JSON form -------------------------------------------------------------------------------
def load_json(text: str | bytes, *, what: str = "") -> Any:
    """JSON text (an ``ene eval`` line, an ``ene serve`` body: ``what``) as a value, strictly
    (:func:`~ene_core.text.normalise.decode_json`: nested at most
    :data:`~ene_core.text.normalise.MAX_DEPTH` levels, no ``NaN``); :class:`InvalidInputError`
    saying why not."""
    subject = f"{what} is " if what else ""
    try:
        return decode_json(text)
    except UnicodeDecodeError as exc:
        raw = exc.object
        raise InvalidInputError(
            f"{subject}not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})"
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{subject}not valid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except ValueError as exc:  # too deep, NaN, an integer of over 4300 digits
        raise InvalidInputError(f"{subject}{exc}") from None


def parse_request(line: str) -> Request:
    """One JSONL line as a request; raises :class:`InvalidInputError` saying what is wrong."""
    return request_from_item(load_json(line))


def request_from_item(item: Any) -> Request:
    """One decoded JSON value as a request (``ene eval`` lines, ``ene serve`` bodies)."""
    if not isinstance(item, dict):
        raise InvalidInputError(
            f"not a request: a line must be a JSON object, got {_json_type(item)}"
        )
    missing = [name for name in REQUIRED_FIELDS if name not in item]
    if missing:
        names = " and ".join(repr(name) for name in missing)
        raise InvalidInputError(f"missing {names} (each line needs 'answer' and 'contexts')")
    return Request.from_mapping(item)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", dict: "an object"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")
