"""OpenTelemetry for ENE: one ``ene.evaluate`` EVALUATOR span per evaluated request.

Adapters capture ``trace=current_span_context()`` on the request's thread and pass
``recorders=default_recorders() + user_recorders`` to :class:`ene_core.NecessityDispatcher`;
both are safe without opentelemetry installed. The span contract is documented in
``docs/tracing.md``.

``NecessityResult.metadata`` (optional, a mapping) may carry:

* ``"documents"``: a list aligned with the evaluated contexts, each ``None`` or
  ``{"span_id": <int or 16-hex str>, "position": <int>}`` naming the retriever span that
  returned the context and its position there (see :func:`document_refs`); used for Phoenix
  document annotations (:mod:`ene_integrations.phoenix`).
* ``"framework"`` (e.g. ``"langchain"``) and any other primitive values, exported as
  ``ene.framework`` / ``ene.metadata.<key>``.
* ``"claim_times_ns"``: claim index -> when its verdict was known while the answer streamed
  (ns since the epoch); that claim's ``ene.claim`` event gets this time (the span starts at
  the earliest) and ``ene.claim.streamed``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from ene_core.graph import SOURCE_KEY

from ._attributes import short_hash, truncate

logger = logging.getLogger("ene.otel")

SPAN_NAME = "ene.evaluate"
CLAIM_EVENT = "ene.claim"
GENAI_EVENT = "gen_ai.evaluation.result"
LinkMode = Literal["auto", "child", "link"]
Primitive = str | bool | int | float
_NANOS = 1_000_000_000


# -- the seam used by the adapters ---------------------------------------------------------------
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


def default_recorders(*, phoenix: bool | None = None) -> list[Any]:
    """The recorders an adapter installs by default. Never raises.

    ``[]`` unless an SDK TracerProvider is configured globally; then
    ``[NecessitySpanRecorder()]``, plus the shared
    :class:`~ene_integrations.phoenix.PhoenixDocumentAnnotator` when ``phoenix`` is true, or when
    it is ``None`` and ``arize-phoenix-client`` is installed and a Phoenix endpoint is configured
    (``PHOENIX_COLLECTOR_ENDPOINT``, ``PHOENIX_ENDPOINT`` or ``PHOENIX_BASE_URL``).
    """
    recorders: list[Any] = []
    try:
        if not sdk_provider_configured():
            return recorders
        recorders.append(NecessitySpanRecorder())
        from .phoenix import PhoenixDocumentAnnotator, phoenix_configured

        if phoenix or (phoenix is None and phoenix_configured()):
            recorders.append(PhoenixDocumentAnnotator.shared())
    except Exception:
        logger.warning("ENE: could not create the default tracing recorders", exc_info=True)
    return recorders


def document_refs(span_context: Any, count: int, start: int = 0) -> list[dict[str, Any]]:
    """``metadata["documents"]`` entries for ``count`` documents returned by one retriever span."""
    if span_context is None or not getattr(span_context, "is_valid", False):
        return [None] * count  # type: ignore[list-item]
    span_id = f"{span_context.span_id:016x}"
    return [{"span_id": span_id, "position": start + i} for i in range(count)]


_OI_LANGCHAIN: list[Any] = []  # [LangChainInstrumentor class] or [None] once looked up


def langchain_run_span_context(run_id: Any) -> Any:
    """The ``SpanContext`` of OpenInference's span for a LangChain run, or ``None``.

    Only while the run is open and ``openinference-instrumentation-langchain`` is instrumented
    (its spans are never made current, so adapters ask for them by run id). Never raises.
    """
    try:
        if not _OI_LANGCHAIN:
            try:
                from openinference.instrumentation.langchain import LangChainInstrumentor
            except Exception:
                LangChainInstrumentor = None  # type: ignore[assignment,misc]
            _OI_LANGCHAIN.append(LangChainInstrumentor)
        if _OI_LANGCHAIN[0] is None:
            return None
        instrumentor = _OI_LANGCHAIN[0]()
        if not instrumentor.is_instrumented_by_opentelemetry:
            return None
        span = instrumentor.get_span(run_id)
        ctx = span.get_span_context() if span is not None else None
        return ctx if ctx is not None and ctx.is_valid else None
    except Exception:
        return None


def configure_otlp(
    endpoint: str,
    *,
    project_name: str | None = None,
    service_name: str = "ene",
    simple: bool = False,
    set_global: bool = True,
) -> Any:
    """An SDK ``TracerProvider`` exporting OTLP/HTTP to ``endpoint`` (``.../v1/traces``).

    ``project_name`` sets the ``openinference.project.name`` resource attribute (the Phoenix
    project). ``simple=True`` exports each span as it ends (scripts, tests); the default batches.
    With ``set_global`` it becomes the global provider (which OpenTelemetry allows only once).
    """
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    attributes: dict[str, str] = {"service.name": service_name}
    if project_name:
        attributes["openinference.project.name"] = project_name
    provider = TracerProvider(resource=Resource.create(attributes))
    processor = SimpleSpanProcessor if simple else BatchSpanProcessor
    provider.add_span_processor(processor(OTLPSpanExporter(endpoint=endpoint)))
    if set_global:
        trace.set_tracer_provider(provider)
    return provider


def _error_type(message: str) -> str:
    head = message.split(":", 1)[0]
    return head if head.isidentifier() else "Exception"


# -- the recorder ----------------------------------------------------------------------------------
class NecessitySpanRecorder:
    """Dispatcher recorder: each ``NecessityResult`` becomes one ``ene.evaluate`` span.

    Placement (``link_mode``):

    * ``"child"``: a child of the request span captured in ``result.trace``.
    * ``"link"``: the annotation pattern, a carrier span in its own trace with exactly one Link
      to the request span (for evaluations that finish long after the request, offline
      re-evaluation, or backends that drop late children).
    * ``"auto"`` (default): child, unless the evaluation took longer than ``link_after_s``
      (the typical tail-sampling decision wait), then link.

    Without a captured request span the span is a root with no link. The span never becomes
    a child of whatever happens to be current on the thread that calls the recorder.
    """

    def __init__(
        self,
        tracer_provider: Any = None,
        *,
        capture_content: bool = False,
        max_value_length: int = 1024,
        max_claim_events: int = 64,
        max_list_items: int = 64,
        link_mode: LinkMode = "auto",
        link_after_s: float = 30.0,
    ) -> None:
        from opentelemetry import trace

        if link_mode not in ("auto", "child", "link"):
            raise ValueError(f"link_mode must be 'auto', 'child' or 'link', got {link_mode!r}")
        self._tracer = trace.get_tracer("ene", tracer_provider=tracer_provider)
        self.capture_content = capture_content
        self.max_value_length = max(int(max_value_length), 16)
        self.max_claim_events = max(int(max_claim_events), 0)
        self.max_list_items = max(int(max_list_items), 0)
        self.link_mode = link_mode
        self.link_after_s = link_after_s
        self._lock = threading.Lock()
        self._stats = dict.fromkeys(
            ("spans", "failures", "dropped_events", "dropped_attributes", "dropped_list_items"), 0
        )

    @property
    def stats(self) -> dict[str, int]:
        """Spans recorded, recorder failures, and claim events / attributes / list items cut."""
        with self._lock:
            return dict(self._stats)

    def __call__(self, result: Any) -> None:
        """Record ``result``; never raises (failures are logged and counted)."""
        try:
            self.record(result)
        except Exception:
            with self._lock:
                self._stats["failures"] += 1
                first = self._stats["failures"] == 1
            if first:
                logger.warning("ENE span recorder failed", exc_info=True)

    def placement(self, result: Any) -> Literal["child", "link", "root"]:
        """Where the span for ``result`` goes (see the class docstring)."""
        ctx = result.trace
        if ctx is None or not getattr(ctx, "is_valid", False):
            return "root"
        if self.link_mode != "auto":
            return self.link_mode
        late = (result.ended_ns - result.started_ns) > self.link_after_s * _NANOS
        return "link" if late else "child"

    def record(self, result: Any) -> Any:
        """Create and end the span for ``result``; returns it."""
        from opentelemetry import context as otel_context
        from opentelemetry import trace
        from opentelemetry.trace import Link, Status, StatusCode

        where = self.placement(result)
        context = otel_context.Context()  # explicit: never the caller's current span
        links: list[Any] = []
        if where == "child":
            context = trace.set_span_in_context(trace.NonRecordingSpan(result.trace), context)
        elif where == "link":
            links = [Link(result.trace, {"ene.link.type": "evaluates"})]

        times = _claim_times(result)  # verdicts known while the answer streamed
        span = self._tracer.start_span(
            SPAN_NAME,
            context=context,
            links=links,
            start_time=min([result.started_ns, *times.values()]),
        )
        if not span.is_recording():  # sampled out: nothing to build
            span.end(end_time=max(result.ended_ns, result.started_ns))
            return span
        limits = getattr(span, "_limits", None)  # the SDK's SpanLimits; absent on no-op spans
        max_attrs = _limit(limits, "max_span_attributes")
        max_events = _limit(limits, "max_events")
        max_event_attrs = _limit(limits, "max_event_attributes")

        evaluations = answer_evaluations(result.eng) if result.eng is not None else []
        genai = [_genai_attributes(e, self.max_value_length) for e in evaluations]
        genai = genai[: max_events if max_events is not None else len(genai)]
        claims = list(self._claim_events(result)) if result.eng is not None else []
        room = self.max_claim_events
        if max_events is not None:
            room = min(room, max_events - len(genai))
        dropped_events = max(len(claims) - room, 0)
        claims = claims[: max(room, 0)]

        attrs, dropped_items = self._attributes(result, where, evaluations, dropped_events)
        attrs, dropped_attrs = _cap(attrs, max_attrs, "ene.attributes.dropped")
        _drop_incomplete_evaluations(attrs, len(evaluations))
        span.set_attributes(attrs)
        events = [(GENAI_EVENT, e) for e in genai] + [(CLAIM_EVENT, e) for e in claims]
        for name, event in events:
            index = event.get("ene.claim.index") if name == CLAIM_EVENT else None
            when = times.get(index, result.ended_ns) if isinstance(index, int) else result.ended_ns
            span.add_event(name, _cap(dict(event), max_event_attrs)[0], when)
        if result.error is not None:
            span.set_status(Status(StatusCode.ERROR, truncate(result.error, self.max_value_length)))
        span.end(end_time=max(result.ended_ns, result.started_ns))
        with self._lock:
            self._stats["spans"] += 1
            self._stats["dropped_events"] += dropped_events
            self._stats["dropped_attributes"] += dropped_attrs
            self._stats["dropped_list_items"] += dropped_items
        return span

    # -- attributes ----------------------------------------------------------------------------
    def _attributes(
        self, result: Any, where: str, evaluations: list[dict[str, Any]], dropped_events: int
    ) -> tuple[dict[str, Primitive | list[Any]], int]:
        """Flat attributes in priority order (a cap keeps the first ones) and list items dropped."""
        cut = self.max_value_length
        out: dict[str, Primitive | list[Any]] = {
            "openinference.span.kind": "EVALUATOR",
            "ene.request_id": truncate(str(result.request_id), cut),
            "ene.placement": where,
            "ene.status": "ok" if result.eng is not None else "error",
            "ene.claim_events.dropped": dropped_events,
            "ene.list_items.dropped": 0,  # set below; early so that an attribute cap keeps it
        }
        dropped = 0

        def put_list(key: str, values: Sequence[str]) -> None:
            nonlocal dropped
            kept = [truncate(v, cut) for v in values[: self.max_list_items]]
            dropped += len(values) - len(kept)
            out[key] = kept

        if result.error is not None:
            out["error.type"] = _error_type(result.error)
            out["ene.error"] = truncate(result.error, cut)
        eng = result.eng
        if eng is not None:
            c = eng.counts
            s = eng.stats
            out.update(
                {
                    "ene.schema_version": eng.schema_version,
                    "ene.verifier.model": truncate(eng.verifier.model, cut),
                    "ene.verifier.threshold": float(eng.verifier.threshold),
                    "ene.claims.total": c.claims,
                    "ene.claims.checkable": c.checkable_claims,
                    "ene.claims.supported": c.supported,
                    "ene.claims.contradicted": c.contradicted,
                    "ene.claims.unsupported": c.unsupported,
                    "ene.claims.fragile": c.fragile,
                    "ene.claims.joint": c.joint,
                    "ene.claims.robust": c.robust,
                    "ene.contexts.total": c.contexts,
                    "ene.contexts.used": c.contexts_used,
                    "ene.contexts.unused": c.contexts_unused,
                    "ene.tokens.kept": c.tokens_kept,
                    "ene.tokens.saved": c.tokens_saved,
                    "ene.oracle.checks": s.oracle_checks,
                    "ene.oracle.forward_pairs": s.forward_pairs,
                    "ene.oracle.cache_hits": s.cache_hits,
                    "ene.duration_ms": float(s.duration_ms),
                    "ene.compute_ms": float(s.request_ms),
                }
            )
            if eng.citation_recall is not None and eng.citation_precision is not None:
                out["ene.citation.recall"] = float(eng.citation_recall)
                out["ene.citation.precision"] = float(eng.citation_precision)
            if eng.chunk_filter is not None:  # a chunk filter ran before generation
                out["ene.filter.dropped"] = eng.chunk_filter.dropped
                out["ene.filter.kept"] = eng.chunk_filter.kept
                out["ene.filter.tokens_saved"] = eng.chunk_filter.tokens_saved
                out["ene.filter.errors"] = len(eng.chunk_filter.errors)
        for i, evaluation in enumerate(evaluations):
            for field, value in evaluation.items():
                if value is not None:
                    text = truncate(value, cut) if isinstance(value, str) else value
                    out[f"evaluations.{i}.evaluation.{field}"] = text
        if eng is not None:
            put_list("ene.contexts.unused_ids", [x.id for x in eng.contexts if not x.used])
            put_list(
                "ene.contexts.necessary_ids",
                [x.id for x in eng.contexts if x.necessary_for],
            )
            out["output.value"] = truncate(summary(eng), cut)
            out["output.mime_type"] = "text/plain"
            if self.capture_content:
                out["input.value"] = truncate(eng.answer, cut)
                if eng.question is not None:
                    out["ene.question"] = truncate(eng.question, cut)
            else:
                out["ene.answer.sha256"] = short_hash(eng.answer)
            put_list("ene.contexts.ids", [x.id for x in eng.contexts])
            put_list("ene.contexts.sha256", [short_hash(x.text) for x in eng.contexts])
            sources = [str(x.metadata.get(SOURCE_KEY) or "") for x in eng.contexts]
            if any(sources):  # a chunk carrying an inner answer: that request's ene.request_id
                put_list("ene.contexts.sources", sources)
        meta = result.metadata if isinstance(result.metadata, Mapping) else {}
        for key, value in meta.items():
            if not isinstance(key, str) or key == "documents":
                continue
            name = "ene.framework" if key == "framework" else f"ene.metadata.{key}"
            if isinstance(value, bool | int | float):
                out[name] = value
            elif isinstance(value, str):
                out[name] = truncate(value, cut)
        out["ene.list_items.dropped"] = dropped
        return out, dropped

    def _claim_events(self, result: Any) -> Iterator[dict[str, Primitive | list[Any]]]:
        eng = result.eng
        cut = self.max_value_length
        streamed = _claim_times(result)
        for claim in eng.claims:
            if not claim.checkable:
                continue
            ids = [eng.contexts[j].id for j in claim.necessary]
            against = [eng.contexts[j].id for j in claim.contradicted_by]
            event: dict[str, Primitive | list[Any]] = {
                "ene.claim.index": claim.index,
                "ene.claim.status": claim.status or "unchecked",
                "ene.claim.classification": claim.classification or "none",
                "ene.claim.necessary_context_ids": [
                    truncate(x, cut) for x in ids[: self.max_list_items]
                ],
                "ene.claim.span": [int(claim.span[0]), int(claim.span[1])],
            }
            if claim.p_entail is not None:
                event["ene.claim.p_entail"] = float(claim.p_entail)
            if claim.index in streamed:  # its event's time is when it was known
                event["ene.claim.streamed"] = True
            if self.capture_content:
                event["ene.claim.text"] = truncate(claim.text, cut)
            else:
                event["ene.claim.sha256"] = short_hash(claim.text)
            # added later: after the fields above, so an attribute cap drops these first
            if against:
                event["ene.claim.contradicted_by_context_ids"] = [
                    truncate(x, cut) for x in against[: self.max_list_items]
                ]
            if claim.hypothesis is not None:  # a short answer read as the question's answer
                event["ene.claim.read_as_answer"] = True
                if self.capture_content:
                    event["ene.claim.hypothesis"] = truncate(claim.hypothesis, cut)
            for name, found in (  # amounts the evidence states nowhere, or computes
                ("unstated", claim.unstated_amounts),
                ("computed", claim.computed_amounts),
            ):
                if found:
                    event[f"ene.claim.{name}_amount_count"] = len(found)
                    if self.capture_content:
                        event[f"ene.claim.{name}_amounts"] = [
                            truncate(a, cut) for a in found[: self.max_list_items]
                        ]
            if claim.arithmetic is not None:  # a comparison the evidence's amounts settled
                event["ene.claim.arithmetic"] = True
                if self.capture_content:
                    event["ene.claim.arithmetic_working"] = truncate(claim.arithmetic, cut)
            if claim.other_holder is not None:  # the evidence gives its unique role to another
                event["ene.claim.role_held_by_another"] = True
                if self.capture_content:
                    event["ene.claim.other_holder"] = truncate(claim.other_holder, cut)
            if claim.other_value is not None:  # the evidence gives its amount to something else
                event["ene.claim.value_held_by_another"] = True
                if self.capture_content:
                    event["ene.claim.other_value"] = truncate(claim.other_value, cut)
            if claim.supported_alone_by:  # supported by contexts read alone, not packed
                event["ene.claim.supported_alone_by"] = [
                    int(i) for i in claim.supported_alone_by[: self.max_list_items]
                ]
            if claim.citation_supported is not None:  # markers as written in the answer
                cap = self.max_list_items
                event["ene.claim.citation_supported"] = claim.citation_supported
                event["ene.claim.cited"] = [int(m) for m in claim.cited[:cap]]
                event["ene.claim.citations_unneeded"] = [
                    int(m) for m in claim.citations_unneeded[:cap]
                ]
                event["ene.claim.citations_missing"] = [
                    int(m) for m in claim.citations_missing[:cap]
                ]
            yield event


# -- answer-level evaluations --------------------------------------------------------------------
def answer_evaluations(eng: Any) -> list[dict[str, Any]]:
    """The answer-level results as OpenInference evaluation objects (name/score/label/...)."""
    c = eng.counts
    out: list[dict[str, Any]] = []
    checkable = [x for x in eng.claims if x.checkable]
    bad = [x.index for x in checkable if x.status != "supported"]
    if c.checkable_claims:
        label = "contradicted" if c.contradicted else "unsupported" if bad else "supported"
        note = f"{c.supported} of {c.checkable_claims} claims supported"
        if bad:
            note += "; not supported: " + _claims(bad)
        read = [x.index for x in checkable if x.hypothesis is not None]
        if read:
            note += "; read as the answer to the question: " + _claims(read)
        score: float | None = c.supported / c.checkable_claims
    else:
        label, note, score = "no_claims", "the answer has no checkable claims", None
        unread = [x.index for x in eng.claims if x.kind == "fragment"]
        if unread:
            note += "; short answers not checked without a question: " + _claims(unread)
    out.append(_evaluation("ene.support", score, label, note))

    unused = [x.id for x in eng.contexts if not x.used]
    if c.contexts:
        label = "none_used" if c.contexts_used == 0 else "some_unused" if unused else "all_used"
        note = f"{c.contexts_used} of {c.contexts} contexts used"
        if unused:
            note += "; unused: " + ", ".join(unused[:20]) + (" …" if len(unused) > 20 else "")
        out.append(_evaluation("ene.context_use", c.contexts_used / c.contexts, label, note))

    if c.supported:
        fragile = [x.index for x in checkable if x.classification == "fragile"]
        label = "fragile" if fragile else "robust"
        note = f"{len(fragile)} of {c.supported} supported claims rest on a single context"
        if fragile:
            note += ": " + _claims(fragile)
        out.append(_evaluation("ene.fragility", len(fragile) / c.supported, label, note))
    out.extend(_citation_evaluations(eng))
    return out


def _citation_evaluations(eng: Any) -> list[dict[str, Any]]:
    """ALCE citation recall and precision, for an answer with ``[n]`` markers."""
    recall, precision = eng.citation_recall, eng.citation_precision
    if recall is None or precision is None:
        return []
    checkable = [x for x in eng.claims if x.checkable]
    off = [x.index for x in checkable if not x.citation_supported]
    note = f"{len(checkable) - len(off)} of {len(checkable)} claims supported by their citations"
    if off:
        note += "; not: " + _claims(off)
    missing = [x.index for x in checkable if x.citations_missing]
    if missing:
        note += "; uncited needed chunks: " + _claims(missing)
    label = "supported" if not off else "unsupported"
    out = [_evaluation("ene.citation_recall", recall, label, note)]
    total = sum(len(x.cited) for x in checkable)
    padding = [(x.index, m) for x in checkable for m in x.citations_unneeded]
    note = f"{total - len(padding)} of {total} citations precise"
    if padding:
        shown = ", ".join(f"[{m}] of claim {k + 1}" for k, m in padding[:20])
        note += "; not needed: " + shown + (" …" if len(padding) > 20 else "")
    label = "no_citations" if not total else "imprecise" if padding else "precise"
    out.append(_evaluation("ene.citation_precision", precision, label, note))
    return out


def summary(eng: Any) -> str:
    """One line for ``output.value``: verdicts and unused contexts (ids only, no content)."""
    return " · ".join(e["explanation"] for e in answer_evaluations(eng))


def _evaluation(name: str, score: float | None, label: str, explanation: str) -> dict[str, Any]:
    return {
        "name": name,
        "score": None if score is None else round(float(score), 6),
        "label": label,
        "explanation": explanation,
        "annotator_kind": "CODE",
    }


def _claims(indices: Sequence[int]) -> str:
    """Claims as people count them, from 1 (the ENG's indices count from 0)."""
    shown = ", ".join(str(i + 1) for i in indices[:20])
    return f"claim{'s' if len(indices) > 1 else ''} {shown}" + (" …" if len(indices) > 20 else "")


def _genai_attributes(evaluation: Mapping[str, Any], cut: int) -> dict[str, Primitive]:
    out: dict[str, Primitive] = {"gen_ai.evaluation.name": evaluation["name"]}
    if evaluation["score"] is not None:
        out["gen_ai.evaluation.score.value"] = evaluation["score"]
    out["gen_ai.evaluation.score.label"] = evaluation["label"]
    out["gen_ai.evaluation.explanation"] = truncate(evaluation["explanation"], cut)
    return out


def _drop_incomplete_evaluations(attrs: dict[str, Any], count: int) -> None:
    """An evaluation cut by an attribute cap is omitted, never left without a result."""
    for i in range(count):
        prefix = f"evaluations.{i}.evaluation."
        if not any(prefix + f in attrs for f in ("score", "label", "explanation")):
            for key in [k for k in attrs if k.startswith(prefix)]:
                del attrs[key]


def _claim_times(result: Any) -> dict[int, int]:
    """When each claim's verdict was known while the answer streamed (claim index -> ns since
    the epoch): ``metadata["claim_times_ns"]``, from :mod:`ene_core.kit.answer_streams`."""
    meta = result.metadata if isinstance(result.metadata, Mapping) else {}
    times = meta.get("claim_times_ns")
    if not isinstance(times, Mapping):
        return {}
    return {k: v for k, v in times.items() if isinstance(k, int) and isinstance(v, int)}


def _limit(limits: Any, name: str) -> int | None:
    value = getattr(limits, name, None)
    return value if isinstance(value, int) and value >= 0 else None


def _cap(
    attrs: dict[str, Any], limit: int | None, counter: str | None = None
) -> tuple[dict[str, Any], int]:
    """Keep the first attributes (priority order) within ``limit``; the count of the dropped
    ones goes into the ``counter`` attribute, which takes one of the slots."""
    if limit is None or len(attrs) <= limit:
        return attrs, 0
    keep = limit - 1 if counter and limit > 0 else limit
    dropped = len(attrs) - keep
    kept = dict(list(attrs.items())[:keep])
    if counter and limit > 0:
        kept[counter] = dropped
    return kept, dropped


# -- python -m ene_integrations.otel: run a script with tracing on --------------------------------
def instrument_openinference(tracer_provider: Any = None) -> list[str]:
    """Turn on OpenInference's LangChain / LlamaIndex instrumentors where installed (they make
    the retriever spans that Phoenix document annotations attach to); returns those enabled."""
    enabled = []
    for module, name in (
        ("openinference.instrumentation.langchain", "LangChainInstrumentor"),
        ("openinference.instrumentation.llama_index", "LlamaIndexInstrumentor"),
    ):
        try:
            instrumentor = getattr(__import__(module, fromlist=[name]), name)()
            if not instrumentor.is_instrumented_by_opentelemetry:
                instrumentor.instrument(tracer_provider=tracer_provider)
            enabled.append(name)
        except Exception:
            logger.debug("%s is not available", name, exc_info=True)
    return enabled


def check_endpoint(endpoint: str, timeout: float = 2.0) -> str | None:
    """Why nothing can take spans at the OTLP/HTTP ``endpoint``, or ``None`` when a server
    accepts connections there. Bounded by ``timeout`` seconds, name lookup included."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http:// or https:// URL"
    host = parts.hostname
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(f"{host}:{port}: {exc.strerror or exc}")

    worker = threading.Thread(target=connect, name="ene-otlp-check", daemon=True)
    worker.start()
    worker.join(timeout + 0.5)
    return outcome[0] if outcome else f"{host}:{port}: no answer within {timeout:g} s"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ene_integrations.otel [--endpoint URL] [--project NAME] script.py [args]``:
    run a script with OTLP/HTTP export, OpenInference instrumentation and ENE's recorders."""
    import argparse
    import os
    import runpy
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m ene_integrations.otel", description=main.__doc__
    )
    parser.add_argument(
        "--endpoint",
        default=os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or "http://127.0.0.1:6006/v1/traces",
        help="OTLP/HTTP traces endpoint (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)",
    )
    project = os.environ.get("PHOENIX_PROJECT_NAME", "default")
    parser.add_argument("--project", default=project, help="openinference.project.name")
    parser.add_argument("--no-openinference", action="store_true", help="no framework spans")
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="run the script even if nothing answers at the endpoint (its spans are lost)",
    )
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    prog = parser.prog
    if not os.path.isfile(ns.script):
        print(f"{prog}: error: {ns.script}: no such script", file=sys.stderr)
        return 1
    problem = None if ns.no_check else check_endpoint(ns.endpoint)
    if problem:  # fail at once: the exporter would retry every span for minutes
        print(
            f"{prog}: error: no OTLP collector at {ns.endpoint} ({problem}). Start one "
            "(e.g. `phoenix serve`), pass --endpoint URL, or --no-check to run without it.",
            file=sys.stderr,
        )
        return 1
    provider = configure_otlp(ns.endpoint, project_name=ns.project, simple=True)
    if not ns.no_openinference:
        instrument_openinference(provider)
    sys.argv = [ns.script, *ns.args]
    code: Any = 0
    try:
        runpy.run_path(ns.script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    finally:
        from .phoenix import PhoenixDocumentAnnotator

        PhoenixDocumentAnnotator.flush_shared()
        provider.force_flush()
        provider.shutdown()
    return code if isinstance(code, int) else (0 if code is None else 1)


if __name__ == "__main__":
    raise SystemExit(main())
