"""The run model: what the answering model saw and said in one request, framework-free.

A framework adapter creates one :class:`RunRecorder` per root run (one request) and translates
its callbacks into the recorder's events; when the root run ends, :meth:`RunRecorder.decide`
returns a :class:`RunDecision`: the ``answer``, ``question`` and ``contexts`` to evaluate, or a
``skipped`` reason, or an ``error``. Events take plain values only: strings, mappings,
:class:`Message` and document-like objects (anything :func:`ene_core.text.contexts.to_context`
reads: ``str``, ``{"text", "id"}``, LangChain ``Document``, LlamaIndex nodes).

Events (thread-safe, never raise on odd input, bounded memory per run)::

    rec = RunRecorder()
    rec.root_input(value)                       # the root run's input
    rec.documents(docs, origin=retriever_run)   # retrieved documents, tool artifacts, node outputs
    rec.documents(docs, origin=step, tagged=True)  # "this is the context the model saw" override
    rec.chunk_filter(record)                    # a chunk filter call before generation
    rec.model_start(call_id, messages_or_prompt) # a model call's input (list[Message] or str)
    rec.model_end(call_id, output_text)         # its output text (None: the call failed)
    decision = rec.decide(output)               # the root's output; or error=exc / stopped=True

Rules of :meth:`RunRecorder.decide`:

* **answer** = the text the user got: the root output if it is a string, its final assistant
  :class:`Message` (a list of messages, or a mapping's ``"messages"``), or the string (or
  message) under ``answer`` / ``output`` / ``result`` / ``generation`` / ``response`` / ``text``
  / ``content``; else any top-level string of the output that some model call wrote. Not
  whichever model finished last (a grader's ``"yes"`` is never the answer).
* **the answering call** = the latest finished model call whose output is the answer (after
  normalising case, punctuation and whitespace); else the latest whose output contains the answer
  or is contained in it; else the latest finished call.
* **contexts** = the recorded documents whose text occurs in that call's input (any message:
  system prompt, user prompt, tool results, earlier turns), each once (key: the document's id,
  else its normalised text), in order of first occurrence in the input. Documents recorded with
  ``tagged=True`` replace this: they are taken as given (deduplicated, in recorded order).
  Candidates are every document recorded during the run plus the documents in the root input
  and in tool messages' ``documents`` (artifacts of earlier turns still in the history).
* **question** = the root input if it is a string, the last user message of its messages, or
  its ``question`` / ``input`` / ``query`` field; else the answering call's last user message.
* **filtered** = the chunk filter calls recorded before the answering call started (all of them
  when no call is known): the ENG lists the chunks they dropped as filtered before generation,
  never as unused. A record that cannot be read is logged and kept as the call's error.

``stopped=True`` (a stream closed by its consumer, a cancelled task): the latest finished call's
output is the answer. A run that ends without an answer while a model call is still running is
an :class:`~ene_core.errors.IncompleteRequestError`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.request import FilterCall, filter_call
from ..errors import IncompleteRequestError
from ..text.contexts import to_context

__all__ = ["Message", "RunDecision", "RunRecorder", "dispatch_decision", "normalise"]

ANSWER_KEYS = ("answer", "output", "result", "generation", "response", "text", "content")
QUESTION_KEYS = ("question", "input", "query")
_WORD = re.compile(r"\w+")
_NO_OUTPUT: Any = object()
logger = logging.getLogger("ene")


def normalise(text: str) -> str:
    """Lower-case words joined by single spaces: how texts are compared across formatting."""
    return " ".join(_WORD.findall(text.casefold()))


@dataclass(frozen=True)
class Message:
    """One chat message, framework-free.

    ``role``: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``; ``tool_calls``: how many
    tool calls an assistant message makes (a message with tool calls is not a final answer);
    ``documents``: document-like objects attached to it (a tool message's artifact).
    """

    role: str
    text: str
    tool_calls: int = 0
    documents: tuple[Any, ...] = ()


@dataclass(frozen=True)
class RunDecision:
    """What to evaluate for one run, or why not (``skipped``), or what failed (``error``)."""

    answer: str | None = None
    question: str | None = None
    contexts: list[Any] = field(default_factory=list)
    origins: list[tuple[Any, int]] = field(default_factory=list)  # (origin, position) per context
    context_source: str = "input"  # "input" (found in the model's input) or "tagged"
    filtered: list[FilterCall] = field(default_factory=list)  # chunk filter calls before it
    skipped: str | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        """Whether there is something to evaluate."""
        return self.skipped is None and self.error is None and self.answer is not None


@dataclass
class _Doc:
    item: Any
    key: str
    norm: str
    origin: Any
    position: int


@dataclass
class _Call:
    present: dict[str, int]  # document key -> first position in the input
    last_user: str | None
    filters: int = 0  # chunk filter calls recorded before it started
    output: str | None = None
    done: bool = False


class RunRecorder:
    """Records one root run's events and decides what to evaluate (see the module docstring).

    ``max_documents`` caps the documents kept per run (later ones are ignored and counted in
    ``dropped``); ``max_model_calls`` caps the model calls kept (the oldest go first), and the
    chunk filter calls kept (later ones are ignored).
    """

    def __init__(self, *, max_documents: int = 512, max_model_calls: int = 128) -> None:
        self.max_documents = max_documents
        self.max_model_calls = max_model_calls
        self.dropped = 0
        self._filters: list[FilterCall] = []
        self._docs: dict[str, _Doc] = {}
        self._tagged: dict[str, _Doc] = {}
        self._calls: OrderedDict[Hashable, _Call] = OrderedDict()
        self._question: str | None = None
        self._lock = threading.Lock()

    # -- events --------------------------------------------------------------------------------
    def root_input(self, value: Any) -> None:
        """The root run's input: the question, and any documents it carries. Called again
        (e.g. when a streamed input is complete), a new question replaces the old one."""
        question = _question_of(value)
        with self._lock:
            self._question = question or self._question
            self._add(_documents_in(value), "input", self._docs)

    def documents(self, items: Iterable[Any], *, origin: Any = None, tagged: bool = False) -> None:
        """Documents that became available to the run (non-documents are ignored)."""
        with self._lock:
            self._add(items, origin, self._tagged if tagged else self._docs)

    def chunk_filter(self, record: Any) -> None:
        """A chunk filter call before generation: its record (the LangChain
        ``"ene_chunk_filter"`` event's data, a LlamaIndex ``ChunkFilterEvent`` as a mapping; see
        :func:`~ene_core.engine.request.filter_call`). One that cannot be read is logged and
        recorded as a call with that error, so the ENG says a filter ran and why it shows
        nothing."""
        try:
            call = filter_call(record)
        except Exception as exc:
            logger.warning("ENE: unreadable chunk filter record (%s): %s", type(record), exc)
            call = FilterCall(chunks=0, kept=0, error=f"unreadable chunk filter record: {exc}")
        with self._lock:
            if len(self._filters) < self.max_model_calls:
                self._filters.append(call)

    def model_start(self, call_id: Hashable, inputs: Sequence[Message] | str) -> None:
        """A model call starts with ``inputs`` (its messages, or its prompt text)."""
        messages = [Message("user", inputs)] if isinstance(inputs, str) else list(inputs)
        with self._lock:
            for message in messages:
                if message.documents:  # artifacts of earlier tool calls still in the history
                    self._add(message.documents, "history", self._docs)
            text = f" {' '.join(normalise(m.text) for m in messages if m.text)} "
            present: dict[str, int] = {}
            for doc in self._docs.values():
                if doc.norm:
                    at = text.find(f" {doc.norm} ")
                    if at >= 0:
                        present[doc.key] = at
            users = [m.text for m in messages if m.role == "user" and m.text]
            self._calls[call_id] = _Call(present, users[-1] if users else None, len(self._filters))
            while len(self._calls) > self.max_model_calls:
                self._calls.popitem(last=False)

    def model_end(self, call_id: Hashable, output: str | None) -> None:
        """A model call finished with ``output`` text (``None`` when it failed)."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is not None:
                call.output, call.done = output, True

    # -- decision ------------------------------------------------------------------------------
    def decide(
        self, output: Any = _NO_OUTPUT, *, error: BaseException | None = None, stopped: bool = False
    ) -> RunDecision:
        """The root run ended with ``output`` (or ``error``; or its consumer ``stopped`` early)."""
        if error is not None:
            return RunDecision(error=error)
        with self._lock:
            finished = [c for c in self._calls.values() if c.done and c.output is not None]
            running = any(not c.done for c in self._calls.values())
            if stopped or output is _NO_OUTPUT:
                answer = None if running else (finished[-1].output if finished else None)
            else:
                answer = _answer_of(output, [c.output or "" for c in finished])
            if not answer or not answer.strip():
                if running:
                    return RunDecision(
                        error=IncompleteRequestError(
                            "the run ended before its model finished (stream closed early?)"
                        )
                    )
                return RunDecision(skipped="the run's output has no answer text")
            if not finished and not self._tagged:
                return RunDecision(answer=answer, skipped="no model call wrote the answer")
            call = _answering_call(answer, finished)
            question = self._question or (call.last_user if call else None)
            docs = self._seen_by(call)
            source = "tagged" if self._tagged else "input"
            if not docs:
                reason = (
                    f"none of the {len(self._docs)} recorded documents is in the input of the "
                    "model call that wrote the answer"
                    if self._docs
                    else "no retrieved documents (nothing to evaluate the answer against)"
                )
                return RunDecision(answer=answer, question=question, skipped=reason)
            return RunDecision(
                answer=answer,
                question=question,
                contexts=[d.item for d in docs],
                origins=[(d.origin, d.position) for d in docs],
                context_source=source,
                filtered=self._filters[: call.filters] if call else list(self._filters),
            )

    def candidate(self, call_id: Hashable = None) -> tuple[list[Any], str | None]:
        """The contexts and question an answer written by model call ``call_id`` would be
        evaluated on (what :meth:`decide` gives when it is the answering call); no contexts for
        a call this recorder does not know, unless documents were recorded ``tagged``."""
        with self._lock:
            call = self._calls.get(call_id)
            question = self._question or (call.last_user if call else None)
            if call is None and not self._tagged:
                return [], question
            return [d.item for d in self._seen_by(call)], question

    # -- internals -----------------------------------------------------------------------------
    def _seen_by(self, call: _Call | None) -> list[_Doc]:
        """The documents an answer by ``call`` is evaluated on: the tagged ones, else those in
        its input, in order of first occurrence (lock held)."""
        if self._tagged:
            return list(self._tagged.values())
        present = call.present if call else {}
        return sorted(
            (self._docs[k] for k in present if k in self._docs),
            key=lambda d: (present[d.key], d.key),
        )

    def _add(self, items: Iterable[Any], origin: Any, into: dict[str, _Doc]) -> None:
        for position, item in enumerate(items):
            raw_id = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
            raw_id = raw_id or getattr(item, "node_id", None)
            key = f"id:{raw_id}" if raw_id not in (None, "") else None
            if key is not None and key in into:
                continue  # seen: skip before normalising its text again
            try:
                context = to_context(item, position)
            except Exception:
                continue  # not a document
            norm = normalise(context.text)
            key = key or f"text:{norm}"
            if key in into:
                continue
            if len(self._docs) + len(self._tagged) >= self.max_documents:
                self.dropped += 1
                continue
            into[key] = _Doc(item, key, norm, origin, position)


def _text_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return value.text
    return None


def _final_message(messages: Sequence[Any]) -> str | None:
    """The text of the last message if it is an assistant message without tool calls."""
    if messages and isinstance(messages[-1], Message):
        last = messages[-1]
        if last.role == "assistant" and not last.tool_calls:
            return last.text
    return None


def _is_messages(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and bool(value)
        and all(isinstance(m, Message) for m in value)
    )


def _answer_of(output: Any, outputs: list[str]) -> str | None:
    if isinstance(output, (str, Message)):
        return _text_of(output)
    if _is_messages(output):
        return _final_message(output)
    if isinstance(output, Mapping):
        if _is_messages(output.get("messages")):
            final = _final_message(output["messages"])
            if final is not None:
                return final
        for key in ANSWER_KEYS:
            text = _text_of(output.get(key))
            if text is not None:
                return text
        written = {normalise(o) for o in outputs if o}
        for value in output.values():
            text = _text_of(value)
            if text and normalise(text) in written:
                return text
    return None


def _answering_call(answer: str, finished: list[_Call]) -> _Call | None:
    target = normalise(answer)
    for call in reversed(finished):
        if normalise(call.output or "") == target:
            return call
    for call in reversed(finished):
        out = normalise(call.output or "")
        if out and (target in out or out in target):
            return call
    return finished[-1] if finished else None


def _question_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return value.text if value.role == "user" else None
    if isinstance(value, Mapping):
        messages = value.get("messages")
        if _is_messages(messages):
            value = messages
        else:
            for key in QUESTION_KEYS:
                text = _text_of(value.get(key))
                if text:
                    return text
            return None
    if _is_messages(value):
        users = [m.text for m in value if m.role == "user" and m.text]
        return users[-1] if users else None
    return None


def _documents_in(value: Any) -> list[Any]:
    """Documents in a root input: a list of documents, a mapping's lists, message artifacts."""
    found: list[Any] = []
    values = list(value.values()) if isinstance(value, Mapping) else [value]
    for v in values:
        if isinstance(v, Sequence) and not isinstance(v, str):
            for item in v:
                if isinstance(item, Message):
                    found.extend(item.documents)
                elif not isinstance(item, str):
                    found.append(item)
    return found


def dispatch_decision(
    dispatcher: Any,
    request_id: str,
    decision: RunDecision,
    *,
    trace: Any = None,
    metadata: Any = None,
) -> None:
    """Hand ``decision`` to a :class:`~ene_core.kit.results.NecessityDispatcher`: evaluate it, or
    record its error or skip reason (so ``result(request_id)`` returns at once). Never raises."""
    try:
        if decision.error is not None:
            dispatcher.record_error(request_id, decision.error, trace=trace, metadata=metadata)
        elif not decision.ok:
            reason = decision.skipped or "nothing to evaluate"
            dispatcher.record_skipped(request_id, reason, trace=trace, metadata=metadata)
        else:
            dispatcher.dispatch(
                request_id,
                decision.answer,
                decision.contexts,
                decision.question,
                trace=trace,
                metadata=metadata,
                filtered=decision.filtered or None,
            )
    except Exception as exc:  # the dispatcher never raises; this keeps waiters from hanging
        dispatcher.record_error(request_id, exc, trace=trace, metadata=metadata)
