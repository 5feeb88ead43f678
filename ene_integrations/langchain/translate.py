"""LangChain values -> the plain values :mod:`ene_core.kit.runs` reads: messages, the documents
in run outputs and tool artifacts, a model call's answer text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import LLMResult

from ene_core.kit.runs import Message

_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}


def _text(content: Any) -> str:
    """A message content's text: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, Sequence):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "".join(parts)


def _is_document(item: Any) -> bool:
    """A Document, or one a checkpointer stored as a mapping (``page_content``)."""
    return isinstance(item, Document) or (
        isinstance(item, Mapping) and isinstance(item.get("page_content"), str)
    )


def _artifact_documents(artifact: Any) -> tuple[Any, ...]:
    if _is_document(artifact):
        return (artifact,)
    if isinstance(artifact, (list, tuple)):
        return tuple(d for d in artifact if _is_document(d))
    return ()


def _message(m: Any) -> Message:
    """A LangChain message (or a ``{"role", "content"}`` dict, or a ``(role, text)`` pair)."""
    if isinstance(m, BaseMessage):
        if isinstance(m, HumanMessage):
            role = "user"
        elif isinstance(m, AIMessage):
            return Message("assistant", _text(m.content), len(m.tool_calls or ()))
        elif isinstance(m, SystemMessage):
            role = "system"
        elif isinstance(m, ToolMessage):
            return Message("tool", _text(m.content), documents=_artifact_documents(m.artifact))
        elif isinstance(m, ChatMessage):
            role = _ROLES.get(m.role, m.role)
        else:
            role = _ROLES.get(m.type, m.type)
        return Message(role, _text(m.content))
    if isinstance(m, Mapping):
        role = str(m.get("role", m.get("type", "user")))
        calls = m.get("tool_calls") or ()
        return Message(_ROLES.get(role, role), _text(m.get("content", "")), len(calls))
    if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[0], str):
        return Message(_ROLES.get(m[0], m[0]), _text(m[1]))
    return Message("user", _text(m))


def _messages(value: Any) -> list[Message] | None:
    if isinstance(value, str):
        return [Message("user", value)]
    if isinstance(value, BaseMessage):
        return [_message(value)]
    if isinstance(value, (list, tuple)) and all(
        isinstance(m, (BaseMessage, Mapping, tuple, list)) for m in value
    ):
        return [_message(m) for m in value]
    return None


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(m, BaseMessage) for m in value)
    )


def _plain(value: Any) -> Any:
    """A root input or output as :mod:`ene_core.kit.runs` reads it (messages become Message)."""
    if isinstance(value, BaseMessage):
        return _message(value)
    if isinstance(value, Mapping):
        out = dict(value)
        if "messages" in out:
            converted = _messages(out["messages"])
            out["messages"] = converted if converted is not None else out["messages"]
        for key, item in out.items():
            if isinstance(item, BaseMessage):
                out[key] = _message(item)
            elif _is_message_list(item):  # e.g. "chat_history": earlier turns, not documents
                out[key] = [_message(m) for m in item]
        return out
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], BaseMessage):
        return [_message(m) if isinstance(m, BaseMessage) else m for m in value]
    return value


def _documents_in(value: Any, depth: int = 0) -> list[Any]:
    """Documents a run's output carries: documents, tool artifacts, LangGraph updates."""
    if isinstance(value, Document):
        return [value]
    if isinstance(value, ToolMessage):
        return list(_artifact_documents(value.artifact))
    if depth > 2:
        return []
    update = getattr(value, "update", None)  # a LangGraph Command
    if update is not None and not isinstance(value, Mapping) and not callable(update):
        return _documents_in(update, depth + 1)
    items: Iterable[Any] = ()
    if isinstance(value, Mapping):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    found: list[Any] = []
    for item in items:
        if depth < 2 or isinstance(item, (Document, ToolMessage)):
            found.extend(_documents_in(item, depth + 1))
    return found


def _answer_text(response: LLMResult) -> str | None:
    """The first generation's text (the full text, also when the model streamed)."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            if message is not None and not generation.text:
                return _text(message.content)
            return generation.text
    return None


def _as_documents(output: Any) -> list[Any] | None:
    """Read a tagged step's output as a list of documents (or strings), else ``None``."""
    if isinstance(output, (Document, str)):
        return [output]
    if isinstance(output, Mapping):
        for key in ("context", "documents", "output"):
            if key in output:
                return _as_documents(output[key])
        return None
    if isinstance(output, (list, tuple)) and all(
        isinstance(item, (Document, str, Mapping)) for item in output
    ):
        return list(output)
    return None


def _calls_tools(output: Any) -> bool:
    """Whether a streamed chunk or a model's result carries a tool call (not a final answer)."""
    if isinstance(output, LLMResult):
        return any(_calls_tools(g) for gens in output.generations for g in gens)
    message = getattr(output, "message", None)
    return bool(getattr(message, "tool_calls", None) or getattr(message, "tool_call_chunks", None))


def _structured(callback_kwargs: Mapping[str, Any]) -> bool:
    """Whether a chat model call asks for structured output (``with_structured_output``)."""
    options = callback_kwargs.get("options")
    return isinstance(options, Mapping) and bool(options.get("ls_structured_output_format"))
