"""OpenTelemetry for ENE: one ``ene.evaluate`` EVALUATOR span per evaluated request.

Adapters capture ``trace=current_span_context()`` on the request's thread and pass
``recorders=default_recorders() + user_recorders`` to :class:`ene_core.NecessityDispatcher`.
Both functions are safe without opentelemetry installed.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("ene.otel")


def current_span_context() -> Any:
    """The current OTel ``SpanContext`` if valid, else ``None``. Never raises."""
    try:
        from opentelemetry import trace

        ctx = trace.get_current_span().get_span_context()
        return ctx if ctx.is_valid else None
    except Exception:
        return None


def sdk_provider_configured() -> bool:
    """Whether the global tracer provider is a real SDK provider (not the no-op/proxy)."""
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        return isinstance(trace.get_tracer_provider(), TracerProvider)
    except Exception:
        return False


def default_recorders() -> list[Any]:
    """``[NecessitySpanRecorder()]`` when an SDK TracerProvider is set globally, else ``[]``."""
    if not sdk_provider_configured():
        return []
    try:
        return [NecessitySpanRecorder()]
    except Exception:
        logger.exception("could not create the ENE span recorder")
        return []


class NecessitySpanRecorder:
    """Dispatcher recorder: turns a ``NecessityResult`` into an ``ene.evaluate`` span."""

    def __init__(self, tracer_provider: Any = None) -> None:
        from opentelemetry import trace

        self._tracer = trace.get_tracer("ene", tracer_provider=tracer_provider)

    def __call__(self, result: Any) -> None:
        try:
            from opentelemetry import trace

            parent = None
            if result.trace is not None:
                parent = trace.set_span_in_context(trace.NonRecordingSpan(result.trace))
            span = self._tracer.start_span(
                "ene.evaluate", context=parent, start_time=result.started_ns
            )
            span.set_attribute("openinference.span.kind", "EVALUATOR")
            span.end(end_time=result.ended_ns)
        except Exception:
            logger.exception("ENE span recorder failed")
