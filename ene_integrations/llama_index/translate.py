"""LlamaIndex values -> the run model's: what the model saw of a node or a tool call, chat
messages, questions and answers; and the OpenTelemetry seams (span contexts, recorders)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from llama_index.core.agent.workflow import ToolCallResult
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.schema import MetadataMode, NodeWithScore

from ene_core import Message, NecessityResult
from ene_core.text.contexts import stable_id

logger = logging.getLogger("ene.llama_index")


_ROLES = {"function": "tool", "chatbot": "assistant", "model": "assistant", "developer": "system"}


def _context(node: NodeWithScore) -> dict[str, Any]:
    """What the LLM saw of ``node`` (its text with LLM-visible metadata), keyed by node id."""
    inner = node.node
    return {
        "id": inner.node_id,
        "text": inner.get_content(metadata_mode=MetadataMode.LLM),
        "metadata": {"score": node.score, "ref_doc_id": inner.ref_doc_id},
    }


def _tool_context(result: ToolCallResult, position: int) -> dict[str, Any]:
    """What the model read of a tool call's result, keyed by the tool call id."""
    text = str(result.tool_output.content)
    return {
        "id": result.tool_id or stable_id(text, position),
        "text": text,
        "metadata": {"tool": result.tool_name},
    }


def _document(
    node_id: str, position: int, found: dict[str, tuple[str, int, Any]]
) -> dict[str, Any]:
    retriever = found.get(node_id)
    return {
        "node_id": node_id,
        "position": position,
        "retriever_span_id": retriever[0] if retriever else None,
        "retriever_position": retriever[1] if retriever else None,
        "retriever_trace": retriever[2] if retriever else None,
    }


def _query_text(query: Any) -> str | None:
    if isinstance(query, str):
        return query
    text = getattr(query, "query_str", None)
    return text if isinstance(text, str) else None


def _message(message: Any) -> Message:
    """A LlamaIndex ``ChatMessage`` as the run model's :class:`~ene_core.Message`."""
    role = str(getattr(message.role, "value", message.role))
    calls = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or []
    text = message.content if isinstance(message.content, str) else ""
    return Message(_ROLES.get(role, role), text, tool_calls=len(calls))


def _user_message(start_event: Any) -> str | None:
    """The user's message of an agent run: ``user_msg``, else the history's last user turn."""
    getter = getattr(start_event, "get", None)
    if getter is None:
        return None
    user_msg = getter("user_msg")
    if isinstance(user_msg, str):
        return user_msg
    if user_msg is not None:
        return _message(user_msg).text or None
    history = [_message(m) for m in getter("chat_history") or []]
    users = [m.text for m in history if m.role == "user" and m.text]
    return users[-1] if users else None


def _start_question(start_event: Any) -> str | None:
    """The question of a workflow run: its ``StartEvent``'s ``query`` / ``question`` / ``input``
    / ``message``, else the user's message as for an agent."""
    getter = getattr(start_event, "get", None)
    if getter is not None:
        for key in ("query", "question", "input", "message"):
            value = getter(key)
            if isinstance(value, str) and value:
                return value
    return _user_message(start_event)


def _agent_answer(output: Any) -> Any:
    """The text an agent run gave the app (``AgentOutput.response``), else the output as is."""
    message = getattr(output, "response", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else output


def _llama_span_context(span_id: str | None) -> Any:
    """The OTel SpanContext that an OTel span handler (e.g. OpenInference) made for a span."""
    if not span_id:
        return None
    try:
        for handler in get_dispatcher().span_handlers:
            span = handler.open_spans.get(span_id)
            otel = getattr(span, "_otel_span", None) if span is not None else None
            if otel is not None:
                return otel.get_span_context()
    except Exception:
        logger.debug("no OTel span for %s", span_id, exc_info=True)
    return None


def _current_span_context() -> Any:
    try:
        from ..otel import current_span_context
    except ImportError:
        return None
    return current_span_context()


def _default_recorders() -> list[Callable[[NecessityResult], Any]]:
    try:
        from ..otel import default_recorders
    except ImportError:
        return []
    try:
        return list(default_recorders())
    except Exception:
        logger.exception("ENE could not create the OpenTelemetry recorders")
        return []
