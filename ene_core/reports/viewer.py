"""Self-contained HTML for ENGs and aggregate reports: inline CSS, JS and SVG, nothing fetched.

Every piece of text from a graph (answer, question, chunks, metadata, ids) is untrusted and
goes through :func:`esc`; the page carries no data inside its script, and its Content Security
Policy allows only the page's own script (by hash), so a payload that escaped anyway would
still not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..graph import SOURCE_KEY, Claim, ContextNode, EvidenceNecessityGraph
from ..pruning import tokens_saved_by_policy
from .report import (
    REQUEST_COLUMNS,
    Group,
    Mean,
    Rate,
    Report,
    RequestRow,
    interval,
    percent,
    policy_label,
)

COLORS = {
    "supported": "#2e7d32",
    "contradicted": "#c62828",
    "unsupported": "#ef6c00",
    "necessary": "#1f4e99",
    "used": "#7aa7e0",
    "unused": "#b0b0b0",
}

CSS = """
:root{--fg:#1d232b;--mute:#5f6b7a;--line:#d9dee5;--bg:#f6f7f9}
*{box-sizing:border-box}
body{margin:0;padding:20px 28px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
color:var(--fg);background:var(--bg)}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 6px}
h3{font-size:12px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.06em;color:var(--mute)}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 16px;
margin:14px 0}
.mute{color:var(--mute)}code{font-size:12px}
.cols{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}
.answer{flex:1 1 340px;min-width:280px}.chunkcol{flex:1 1 380px;min-width:300px}
.chunks{margin:0;padding:0;list-style:none}.graph{flex:0 0 auto}
.text{white-space:pre-wrap;font-size:15px;line-height:1.75;margin:0}
.claim{border-radius:3px;padding:1px 2px;cursor:pointer;border-bottom:2px solid}
.claim sup{font-size:10px;color:var(--mute);margin-left:1px}
.st-supported{background:#e3f3e4;border-color:#2e7d32}
.st-contradicted{background:#fde2e1;border-color:#c62828}
.st-unsupported{background:#fff0dc;border-color:#ef6c00}
.nc{color:var(--mute)}
.chunk{border:1px solid var(--line);border-left:5px solid #b0b0b0;border-radius:6px;
padding:6px 9px;margin:0 0 7px;cursor:pointer;background:#fff}
.chunk.necessary{border-left-color:#1f4e99}.chunk.used{border-left-color:#7aa7e0}
.chunk.unused{opacity:.8}.chunk .body{max-height:7.4em;overflow:auto;white-space:pre-wrap;
font-size:13px}.chunk.unused .body{max-height:2.9em}
.chunk .head{font-size:12px;color:var(--mute);display:flex;gap:8px;flex-wrap:wrap}
.badge{font-size:11px;font-weight:600;border-radius:9px;padding:0 7px;color:#fff;background:#b0b0b0}
.badge.necessary{background:#1f4e99}.badge.used{background:#7aa7e0}
.badge.supported{background:#2e7d32}.badge.contradicted{background:#c62828}
.badge.unsupported{background:#ef6c00}.badge.warn{background:#8a6d00}
.chips{display:flex;gap:6px;flex-wrap:wrap;margin:4px 0 10px}
.legend{font-size:12px;color:var(--mute);margin-top:8px}
.focus [data-key]:not(.hl){opacity:.3}.focus [data-edge]:not(.hl){opacity:.08}
.claim.hl{outline:2px solid #1d232b}.chunk.hl{box-shadow:0 0 0 2px #1d232b}
[data-edge]{fill:none;stroke:#1f4e99;stroke-width:2}[data-edge].hl{stroke-width:3.5}
[data-edge].contra{stroke:#c62828;stroke-dasharray:5 3}
svg text{font:11px system-ui,sans-serif}svg [data-key]{cursor:pointer}
.row{display:flex;gap:28px;flex-wrap:wrap;align-items:flex-start}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 8px;text-align:right;
border-bottom:1px solid var(--line)}td:first-child,th:first-child{text-align:left}
th{color:var(--mute);font-weight:600}.plots{display:flex;gap:24px;flex-wrap:wrap}
.warnings{color:#8a6d00;font-size:13px}.link{font-weight:600}
.verdicts{list-style:none;margin:8px 0 0;padding:0;font-size:13px}.verdicts li{margin:2px 0;
cursor:pointer}.verdicts .st{font-weight:600}.verdicts li.hl{outline:1px solid #1d232b}
.cites{margin-top:10px}.cites td{vertical-align:top}
.cite{font-size:12px;border-radius:3px;padding:0 4px;margin-right:3px;background:#e3f3e4}
.cite.unneeded{background:#fff0dc;color:#8a4b00;text-decoration:line-through}
.cite.missing{background:#fde2e1;color:#a01818;font-weight:600}
.cite.cited{background:#eef1f5}
"""

JS = r"""
(function () {
  var sections = document.querySelectorAll("[data-eng]");
  function activate(sec, key) {
    sec.querySelectorAll(".hl").forEach(function (e) { e.classList.remove("hl"); });
    sec.classList.toggle("focus", !!key);
    if (!key) return;
    var src = sec.querySelector('[data-key="' + key + '"]');
    var keys = [key].concat((src && src.getAttribute("data-links") || "").split(" "));
    keys.forEach(function (k) {
      if (k) sec.querySelectorAll('[data-key="' + k + '"]').forEach(function (e) {
        e.classList.add("hl");
      });
    });
    sec.querySelectorAll("[data-edge]").forEach(function (e) {
      if (e.getAttribute("data-edge").split(" ").indexOf(key) >= 0) e.classList.add("hl");
    });
  }
  sections.forEach(function (sec) {
    var pinned = null;
    function keyOf(ev) {
      var el = ev.target.closest && ev.target.closest("[data-key]");
      return el && sec.contains(el) ? el.getAttribute("data-key") : null;
    }
    sec.addEventListener("mouseover", function (ev) {
      var k = keyOf(ev); if (k && !pinned) activate(sec, k);
    });
    sec.addEventListener("mouseleave", function () { activate(sec, pinned); });
    sec.addEventListener("focusin", function (ev) { var k = keyOf(ev); if (k) activate(sec, k); });
    function pin(k) {
      pinned = k; activate(sec, k);
      try { history.replaceState(null, "", "#" + sec.id + (k ? "/" + k : "")); } catch (e) {}
    }
    sec.addEventListener("click", function (ev) {
      var k = keyOf(ev); pin(k && k !== pinned ? k : null);
    });
    var m = /^#(r-[0-9]+)\/([cd][0-9]+)$/.exec(location.hash);
    if (m && m[1] === sec.id && sec.querySelector('[data-key="' + m[2] + '"]')) {
      pin(m[2]); sec.scrollIntoView();
    }
  });
  document.documentElement.setAttribute("data-ene-ready", String(sections.length));
})();
"""


def esc(value: Any) -> str:
    """HTML-escape anything (quotes too, so the result is safe inside attributes)."""
    return html.escape(str(value), quote=True)


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()
    return (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )


def page(title: str, body: str) -> str:
    """Wrap ``body`` in a complete, self-contained document."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_csp())}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n{body}\n"
        f"<script>{JS}</script>\n</body></html>\n"
    )


# -- one graph ----------------------------------------------------------------------------------
# Everything a person reads counts from 1, like the answer's [n] citation markers: claim 1 is
# ``claims[0]``, chunk #1 is ``contexts[0]``; so do the keys in links (``#r-1/c1``).
def _ckey(index: int) -> str:
    return f"c{index + 1}"


def _dkey(index: int) -> str:
    return f"d{index + 1}"


def _chunk_state(ctx: ContextNode) -> str:
    return "necessary" if ctx.necessary_for else "used" if ctx.used else "unused"


def _claim_title(claim: Claim) -> str:
    if not claim.checkable:
        return f"claim {claim.index + 1}: {claim.kind}, not checked"
    read = "" if claim.hypothesis is None else f"; read as: {claim.hypothesis}"
    if claim.unstated_amounts:
        read += "; not in the evidence: " + ", ".join(claim.unstated_amounts)
    if claim.computed_amounts:
        read += "; computed from the evidence: " + ", ".join(claim.computed_amounts)
    if claim.arithmetic is not None:
        read += f"; worked out: {claim.arithmetic}"
    if claim.other_holder is not None:
        read += f"; the evidence gives it to: {claim.other_holder}"
    if claim.other_value is not None:
        read += f"; the evidence gives instead: {claim.other_value}"
    if claim.supported_alone_by:
        read += "; supported read alone by: " + ", ".join(
            f"#{i + 1}" for i in claim.supported_alone_by
        )
    if claim.status == "contradicted":
        by = ", ".join(f"#{i + 1}" for i in claim.contradicted_by) or "-"
        p = f"{claim.p_contra:.2f}" if claim.p_contra is not None else "-"
        return f"claim {claim.index + 1}: contradicted, p(contra)={p}, by {by}{read}"
    need = ", ".join(f"#{i + 1}" for i in claim.necessary) or "no single chunk"
    p = f"{claim.p_entail:.2f}" if claim.p_entail is not None else "-"
    return f"claim {claim.index + 1}: {claim.classification}, p(entail)={p}, needs {need}{read}"


def _edge_title(claim: Claim, chunk: int) -> str:
    text = f"claim {claim.index + 1} needs chunk #{chunk + 1}"
    without = claim.p_entail_without
    if claim.p_entail is None or without is None or chunk >= len(without):
        return text
    return f"{text}: p(entail) {claim.p_entail:.2f} with it, {without[chunk]:.2f} without"


def _answer(eng: EvidenceNecessityGraph) -> str:
    """The answer text with each claim's span wrapped in a highlight."""
    parts: list[str] = []
    cursor = 0
    text = eng.answer
    for claim in sorted(eng.claims, key=lambda c: c.span[0]):
        start, end = claim.span
        if start < cursor or end > len(text) or start >= end:
            continue  # overlapping or out-of-range span: leave that text plain
        parts.append(esc(text[cursor:start]))
        piece = esc(text[start:end])
        if claim.checkable:
            links = _claim_links(claim)
            parts.append(
                f'<span class="claim st-{esc(claim.status)}" data-key="{_ckey(claim.index)}" '
                f'data-links="{links}" tabindex="0" title="{esc(_claim_title(claim))}">'
                f"{piece}<sup>{claim.index + 1}</sup></span>"
            )
        else:
            parts.append(f'<span class="nc" title="{esc(_claim_title(claim))}">{piece}</span>')
        cursor = end
    parts.append(esc(text[cursor:]))
    return "".join(parts)


def _claim_links(claim: Claim) -> str:
    """The chunks a claim needs, or, for a contradicted claim, the chunks that contradict it."""
    return " ".join(_dkey(i) for i in (*claim.necessary, *claim.contradicted_by))


def _contradicts(eng: EvidenceNecessityGraph) -> dict[int, list[int]]:
    """Chunk index -> the claims it contradicts."""
    out: dict[int, list[int]] = {}
    for claim in eng.claims:
        for i in claim.contradicted_by:
            out.setdefault(i, []).append(claim.index)
    return out


def _source(ctx: ContextNode, anchors: Mapping[str, str]) -> str:
    """The caption of a chunk that is an inner request's answer: names it, links its section."""
    source = ctx.metadata.get(SOURCE_KEY)
    if not isinstance(source, str) or not source:
        return ""
    name = f"<code>{esc(source)}</code>"
    target = anchors.get(source)
    shown = f'<a href="#{esc(target)}">{name}</a>' if target else f"{name} (not on this page)"
    return f'<span class="link">answer of request {shown}</span>'


def _chunk(
    ctx: ContextNode, contradicts: Sequence[int] = (), anchors: Mapping[str, str] | None = None
) -> str:
    state = _chunk_state(ctx)
    links = " ".join(_ckey(k) for k in (*ctx.necessary_for, *contradicts))
    against = (
        f" · contradicts claim{'s' if len(contradicts) > 1 else ''} "
        + ", ".join(str(k + 1) for k in contradicts)
        if contradicts
        else ""
    )
    needed = (
        f"necessary for claim{'s' if len(ctx.necessary_for) > 1 else ''} "
        + ", ".join(str(k + 1) for k in ctx.necessary_for)
        if ctx.necessary_for
        else "in the minimal set"
        if ctx.used
        else "pruning drops it"
    )
    source = _source(ctx, anchors or {})
    meta = "".join(
        f"<span>{esc(k)}: <code>{esc(v)}</code></span>"
        for k, v in sorted(ctx.metadata.items())
        if not (source and k == SOURCE_KEY)
    )
    return (
        f'<li class="chunk {state}" data-key="{_dkey(ctx.index)}" data-links="{links}" '
        'tabindex="0">'
        f'<div class="head"><span class="badge {state}">{state}</span><b>#{ctx.index + 1}</b>'
        f"<code>{esc(ctx.id)}</code><span>{ctx.tokens} tokens</span>"
        f"<span>necessity {ctx.necessity_score:.2f}</span><span>{esc(needed + against)}</span>"
        f"{source}{meta}</div>"
        f'<div class="body">{esc(ctx.text)}</div></li>'
    )


def necessity_svg(eng: EvidenceNecessityGraph) -> str:
    """The claim x chunk necessity graph: claims left, chunks right, an edge per necessity."""
    claims = [c for c in eng.claims if c.checkable]
    row, top, width = 26, 22, 230
    height = top + row * max(len(claims), len(eng.contexts), 1) + 4
    cy = {c.index: top + row * i + row / 2 for i, c in enumerate(claims)}
    dy = {x.index: top + row * i + row / 2 for i, x in enumerate(eng.contexts)}
    left, right = 34, width - 34
    out = [
        f'<svg class="necessity" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" aria-label="claim by chunk necessity graph">',
        f'<text x="{left}" y="12" text-anchor="middle" fill="#5f6b7a">claims</text>',
        f'<text x="{right}" y="12" text-anchor="middle" fill="#5f6b7a">chunks</text>',
    ]
    edges = [(claim, j, "") for claim in claims for j in claim.necessary]
    edges += [(claim, j, ' class="contra"') for claim in claims for j in claim.contradicted_by]
    for claim, j, cls in edges:
        if j in dy:
            y1, y2, mid = cy[claim.index], dy[j], (left + right) / 2
            title = (
                f"claim {claim.index + 1} is contradicted by chunk #{j + 1}"
                if cls
                else _edge_title(claim, j)
            )
            out.append(
                f'<path{cls} data-edge="{_ckey(claim.index)} {_dkey(j)}" '
                f'd="M{left + 11} {y1:.1f} C{mid} {y1:.1f} {mid} {y2:.1f} {right - 11} {y2:.1f}">'
                f"<title>{esc(title)}</title></path>"
            )
    against = _contradicts(eng)
    for claim in claims:
        color = COLORS.get(claim.status or "", "#888")
        links = _claim_links(claim)
        out.append(
            f'<g data-key="{_ckey(claim.index)}" data-links="{links}">'
            f"<title>{esc(_claim_title(claim))}</title>"
            f'<circle cx="{left}" cy="{cy[claim.index]:.1f}" r="10" fill="{color}"/>'
            f'<text x="{left}" y="{cy[claim.index] + 4:.1f}" text-anchor="middle" fill="#fff">'
            f"{claim.index + 1}</text></g>"
        )
    for ctx in eng.contexts:
        state = _chunk_state(ctx)
        fill = COLORS[state] if state != "unused" else "#fff"
        stroke = COLORS[state]
        ink = "#fff" if state != "unused" else "#5f6b7a"
        y = dy[ctx.index]
        links = " ".join(_ckey(k) for k in (*ctx.necessary_for, *against.get(ctx.index, [])))
        out.append(
            f'<g data-key="{_dkey(ctx.index)}" data-links="{links}">'
            f"<title>chunk #{ctx.index + 1} ({state}): {esc(ctx.id)}</title>"
            f'<rect x="{right - 11}" y="{y - 9:.1f}" width="22" height="18" rx="4" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.5"/><text x="{right}" y="{y + 4:.1f}" '
            f'text-anchor="middle" fill="{ink}">{ctx.index + 1}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


MS_TITLE = (
    "this request's own evaluation time: its share of the batched model calls (stats.compute_ms)"
)


def _verdicts(eng: EvidenceNecessityGraph) -> str:
    """Each checked claim's verdict in words, with the chunks it needs or that contradict it
    (visible without hovering, and what a screen reader reads)."""
    rows = []
    for claim in eng.claims:
        if not claim.checkable:
            continue
        if claim.status == "contradicted":
            chunks = ", ".join(f"#{i + 1}" for i in claim.contradicted_by) or "-"
            p = f"{claim.p_contra:.2f}" if claim.p_contra is not None else "-"
            what = f"contradicted by chunk {chunks} · p(contra) {p}"
        elif claim.status == "supported":
            chunks = ", ".join(f"#{i + 1}" for i in claim.necessary)
            what = f"needs chunk {chunks}" if chunks else "no single chunk is necessary"
            what = f"{claim.classification} · {what}"
        else:
            what = "no chunk supports it"
        status = esc(claim.status)
        read = (
            ""
            if claim.hypothesis is None
            else f' <span class="read">read as: <q>{esc(claim.hypothesis)}</q></span>'
        )
        if claim.unstated_amounts:
            amounts = ", ".join(f"<q>{esc(a)}</q>" for a in claim.unstated_amounts)
            read += f' <span class="read">not in the evidence: {amounts}</span>'
        if claim.computed_amounts:
            amounts = ", ".join(f"<q>{esc(a)}</q>" for a in claim.computed_amounts)
            read += f' <span class="read">computed from the evidence: {amounts}</span>'
        if claim.arithmetic is not None:
            read += f' <span class="read">worked out: <q>{esc(claim.arithmetic)}</q></span>'
        if claim.other_holder is not None:
            holder = esc(claim.other_holder)
            read += f' <span class="read">the evidence gives it to: <q>{holder}</q></span>'
        if claim.other_value is not None:
            value = esc(claim.other_value)
            read += f' <span class="read">the evidence gives instead: <q>{value}</q></span>'
        if claim.supported_alone_by:
            alone = ", ".join(f"#{i + 1}" for i in claim.supported_alone_by)
            read += f' <span class="read">supported read alone by: {alone}</span>'

        rows.append(
            f'<li data-key="{_ckey(claim.index)}" data-links="{_claim_links(claim)}">'
            f'<span class="badge {status}">{claim.index + 1}</span> '
            f'<span class="st">{status}</span> <span class="mute">{esc(what)}</span>{read}</li>'
        )
    return f'<ol class="verdicts">{"".join(rows)}</ol>' if rows else ""


def _marker(m: int, state: str, title: str) -> str:
    return f'<span class="cite {state}" title="{esc(title)}">[{m}]</span>'


def _citations(eng: EvidenceNecessityGraph) -> str:
    """Per claim: the markers it cites (padding struck through) next to the chunks it needs
    (needed but uncited ones flagged); nothing for an answer without markers."""
    base = eng.citation_base
    if eng.citation_recall is None or base is None:
        return ""
    rows = []
    for claim in eng.claims:
        if claim.citation_supported is None:
            continue
        unneeded, missing = set(claim.citations_unneeded), set(claim.citations_missing)
        cites = "".join(
            _marker(m, "unneeded", "not needed: padding, wrong or no such chunk")
            if m in unneeded
            else _marker(m, "precise", "precise")
            for m in claim.cited
        )
        needs = "".join(
            _marker(i + base, "missing", "needed but not cited")
            if i + base in missing
            else _marker(i + base, "cited", "needed and cited")
            for i in claim.necessary
        )
        verdict = (
            '<span class="badge supported">support it</span>'
            if claim.citation_supported
            else '<span class="badge unsupported">do not support it</span>'
            if claim.cited
            else '<span class="mute">no citation</span>'
        )
        rows.append(
            f'<tr data-key="{_ckey(claim.index)}" data-links="{_claim_links(claim)}">'
            f"<td>{claim.index + 1}</td><td>{cites or '-'}</td><td>{verdict}</td>"
            f"<td>{needs or '-'}</td></tr>"
        )
    first = "[1] is chunk #1" if base == 1 else "[0] is chunk #1"
    return (
        '<div class="cites"><h3>Citations</h3><table><tr><th>claim</th><th>cites</th>'
        "<th>cited set</th><th>needs</th></tr>"
        + "".join(rows)
        + f'</table><div class="legend">markers as written ({esc(first)}); '
        '<span class="cite unneeded">[n]</span> not needed · '
        '<span class="cite missing">[n]</span> needed, not cited</div></div>'
    )


def _chips(eng: EvidenceNecessityGraph) -> str:
    c = eng.counts
    chips = [
        (c.supported, "supported", "supported"),
        (c.contradicted, "contradicted", "contradicted"),
        (c.unsupported, "unsupported", "unsupported"),
    ]
    out = [f'<span class="badge {cls}">{n} {label}</span>' for n, label, cls in chips if n]
    if eng.citation_recall is not None and eng.citation_precision is not None:
        out.append(
            f'<span class="mute">citation recall {esc(percent(eng.citation_recall))} · '
            f"precision {esc(percent(eng.citation_precision))} ·</span>"
        )
    out.append(
        f'<span class="mute">{c.fragile} fragile · {c.joint} joint · {c.robust} robust · '
        f"{c.contexts_used}/{c.contexts} chunks used · {c.tokens_saved} tokens unused · "
        f'<span title="{esc(MS_TITLE)}">{eng.stats.request_ms:.0f} ms</span></span>'
    )
    saved = " · ".join(f"{p} {n}" for p, n in tokens_saved_by_policy(eng).items())
    out.append(f'<span class="mute">· tokens pruning would save: {esc(saved)}</span>')
    return '<div class="chips">' + "".join(out) + "</div>"


def render_eng(
    eng: EvidenceNecessityGraph,
    anchor: str = "r-1",
    label: str | None = None,
    *,
    anchors: Mapping[str, str] | None = None,
    linked_from: Sequence[tuple[str, str, int]] = (),
) -> str:
    """One request as an HTML ``<section>`` (interactive once the page's script runs).

    ``anchors``: request id -> section anchor of the other ENGs on the page, so a chunk that is
    an inner request's answer (metadata ``ene_source``) links to its ENG; ``linked_from``:
    (anchor, request name, chunk index) of the chunks elsewhere that are this request's answer.
    """
    name = label or (eng.id if eng.id is not None else anchor)
    question = (
        f'<p><span class="mute">Question:</span> {esc(eng.question)}</p>' if eng.question else ""
    )
    question += "".join(
        f'<p class="mute">Its answer is chunk #{index + 1} of request '
        f'<a href="#{esc(outer)}"><code>{esc(outer_name)}</code></a></p>'
        for outer, outer_name, index in linked_from
    )
    warnings = "".join(f"<div>warning: {esc(w)}</div>" for w in eng.warnings)
    against = _contradicts(eng)
    return (
        f'<section class="card eng" id="{esc(anchor)}" data-eng>'
        f"<h2>Request <code>{esc(name)}</code></h2>{question}{_chips(eng)}"
        '<div class="cols"><div class="answer"><h3>Answer</h3>'
        f'<p class="text">{_answer(eng)}</p>{_verdicts(eng)}<div class="legend">'
        '<span class="claim st-supported">supported</span> '
        '<span class="claim st-contradicted">contradicted</span> '
        '<span class="claim st-unsupported">unsupported</span> '
        "· hover or click a claim or chunk to see what it needs (dashed: contradicts)</div>"
        f'<div class="legend">verifier <code>{esc(eng.verifier.model)}</code>, '
        f"threshold {eng.verifier.threshold:g}</div>{_citations(eng)}</div>"
        f'<div class="graph"><h3>Necessity</h3>{necessity_svg(eng)}</div>'
        '<div class="chunkcol"><h3>Chunks</h3><ol class="chunks">'
        + "".join(_chunk(c, against.get(c.index, []), anchors) for c in eng.contexts)
        + f'</ol></div></div><div class="warnings">{warnings}</div></section>'
    )


# -- the aggregate report -----------------------------------------------------------------------
def rate_bar(rate: Rate | Mean, width: int = 180) -> str:
    """A 0-100% bar to ``rate.value`` with the confidence interval as a whisker."""
    h = 14
    if rate.value is None:
        return ""
    x = rate.value * width
    parts = [
        f'<svg width="{width + 2}" height="{h}" viewBox="0 0 {width + 2} {h}" role="img" '
        f'aria-label="{esc(percent(rate.value))}"><rect x="0" y="3" width="{width}" height="8" '
        f'fill="#eef1f5"/><rect x="0" y="3" width="{x:.1f}" height="8" fill="#7aa7e0"/>'
    ]
    if rate.low is not None and rate.high is not None:
        lo, hi = rate.low * width, rate.high * width
        parts.append(
            f'<path d="M{lo:.1f} 7H{hi:.1f}M{lo:.1f} 3V11M{hi:.1f} 3V11" stroke="#1d232b" '
            'stroke-width="1.3"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(
    title: str,
    labels: Sequence[str],
    values: Sequence[float],
    *,
    ceiling: float | None = None,
    whiskers: Sequence[tuple[float | None, float | None]] | None = None,
    fmt: str = "{:g}",
    percent_axis: bool = False,
) -> str:
    """A small vertical bar chart as inline SVG (optional error whiskers)."""
    w_bar, gap, h, base = 26, 8, 150, 130
    left = 34 if percent_axis else 8
    top = max([*values, *(hi for _, hi in whiskers or () if hi is not None), 0.0])
    ceiling = ceiling or top or 1.0
    width = left + len(values) * (w_bar + gap) + 4
    out = [
        f'<figure style="margin:0"><figcaption class="mute" style="font-size:12px">{esc(title)}'
        f'</figcaption><svg width="{width}" height="{h + 18}" viewBox="0 0 {width} {h + 18}" '
        f'role="img" aria-label="{esc(title)}">'
        f'<line x1="{left}" y1="{base}" x2="{width}" y2="{base}" stroke="#9aa4b1"/>'
    ]
    scale = (base - 16) / ceiling
    if percent_axis:
        for tick in (0.5, 1.0):
            y = base - tick * ceiling * scale
            out.append(
                f'<line x1="{left}" y1="{y:.1f}" x2="{width}" y2="{y:.1f}" stroke="#e3e7ec"/>'
                f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#9aa4b1">'
                f"{tick * ceiling:.0%}</text>"
            )
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        x = left + i * (w_bar + gap)
        y = base - value * scale
        out.append(
            f'<rect x="{x}" y="{y:.1f}" width="{w_bar}" height="{base - y:.1f}" fill="#7aa7e0">'
            f"<title>{esc(label)}: {esc(fmt.format(value))}</title></rect>"
            f'<text x="{x + w_bar / 2}" y="{base + 13}" text-anchor="middle" fill="#5f6b7a">'
            f"{esc(label)}</text>"
        )
        low, high = whiskers[i] if whiskers else (None, None)
        if low is not None and high is not None:
            cx, y1, y2 = x + w_bar / 2, base - high * scale, base - low * scale
            out.append(
                f'<path d="M{cx} {y1:.1f}V{y2:.1f}M{cx - 4} {y1:.1f}H{cx + 4}M{cx - 4} {y2:.1f}'
                f'H{cx + 4}" stroke="#1d232b" stroke-width="1.2"/>'
            )
        else:
            out.append(
                f'<text x="{x + w_bar / 2}" y="{y - 3:.1f}" text-anchor="middle" fill="#1d232b">'
                f"{esc(fmt.format(value))}</text>"
            )
    out.append("</svg></figure>")
    return "".join(out)


def _rate_rows(rates: Sequence[Rate], label: Callable[[str], str] = str) -> str:
    return "".join(
        f"<tr><td>{esc(label(r.name))}</td><td>{r.numerator}/{r.denominator}</td>"
        f"<td>{esc(percent(r.value))}</td><td>{esc(interval(r))}</td><td>{rate_bar(r)}</td></tr>"
        for r in rates
    )


def _pruning_rows(rates: Sequence[Rate]) -> str:
    """The tokens each keep policy would save over the run."""
    if not rates:
        return ""
    return (
        '<h3 style="margin-top:12px">tokens pruning would save</h3><table>'
        "<tr><th>policy</th><th>tokens</th><th>value</th><th>95% CI</th><th></th></tr>"
        + _rate_rows(rates, policy_label)
        + "</table>"
    )


def _citation_rows(means: Sequence[Mean]) -> str:
    """ALCE citation recall / precision: means over the answers with markers."""
    if not means:
        return ""
    return (
        '<h3 style="margin-top:12px">citations (ALCE, mean per answer)</h3><table>'
        "<tr><th>score</th><th>answers</th><th>value</th><th>95% CI</th><th></th></tr>"
        + "".join(
            f"<tr><td>{esc(m.name)}</td><td>{m.requests}</td><td>{esc(percent(m.value))}</td>"
            f"<td>{esc(interval(m))}</td><td>{rate_bar(m)}</td></tr>"
            for m in means
        )
        + "</table>"
    )


def _group_rows(groups: Sequence[Group]) -> str:
    return "".join(
        f"<tr><td><code>{esc(g.value)}</code>"
        + (' <span class="badge warn">never used</span>' if g.never_used else "")
        + f"</td><td>{g.chunks}</td><td>{g.requests}</td><td>{g.necessary}</td>"
        f"<td>{esc(percent(g.used.value))}</td><td>{esc(interval(g.used))}</td>"
        f"<td>{rate_bar(g.used, 120)}</td></tr>"
        for g in groups
    )


def _request_rows(rows: Sequence[RequestRow], anchors: set[int]) -> str:
    def name(row: RequestRow) -> str:
        label = f"<code>{esc(row.label)}</code>"
        return f'<a href="#r-{row.position}">{label}</a>' if row.position in anchors else label

    return "".join(
        f"<tr><td>{name(r)}</td><td>{r.compute_ms:.0f}</td><td>{r.claims}</td>"
        f"<td>{r.fragile}</td><td>{r.unsupported}</td><td>{r.contradicted}</td>"
        f"<td>{r.contexts}</td><td>{r.unused}</td></tr>"
        for r in rows
    )


def render_report(report: Report, anchors: set[int] | None = None) -> str:
    """The aggregate report as an HTML ``<section>`` (tables and inline SVG plots)."""
    anchors = anchors or set()
    dist = report.necessary_per_claim
    plots = [
        bar_chart("necessary chunks per supported claim", list(dist), list(dist.values())),
    ]
    if report.by_rank:
        plots.append(
            bar_chart(
                "unused-chunk rate by retrieval rank (95% CI)",
                [r.name.split()[1] for r in report.by_rank],
                [r.value or 0.0 for r in report.by_rank],
                ceiling=1.0,
                whiskers=[(r.low, r.high) for r in report.by_rank],
                percent_axis=True,
            )
        )
    head = "<tr><th>{}</th><th>count</th><th>value</th><th>95% CI</th><th></th></tr>"
    parts = [
        '<section class="card report"><h2>Aggregate report</h2>'
        f'<p class="mute">{report.requests} requests ({report.failed} failed) · {report.claims} '
        f"checkable claims · {report.contexts} chunks · {report.tokens} tokens · 95% intervals "
        f"from {report.resamples} bootstrap resamples of requests (seed {report.seed})</p>"
        '<div class="plots"><div><table>'
        + head.format("rate")
        + _rate_rows(report.rates)
        + "</table>"
        + _citation_rows(report.citations)
        + _pruning_rows(report.pruning)
        + "</div>"
        + "".join(plots)
        + "</div>"
    ]
    tables = [
        f"<div><h3>chunks by <code>{esc(key)}</code></h3><table><tr><th>{esc(key)}</th>"
        "<th>chunks</th><th>requests</th><th>necessary</th><th>used</th><th>95% CI</th><th></th>"
        f"</tr>{_group_rows(groups)}</table></div>"
        for key, groups in report.breakdowns.items()
    ]
    request_head = (
        "<tr><th>request</th>"
        + "".join(
            f'<th title="{esc(MS_TITLE)}">{name}</th>' if "ms" in name else f"<th>{name}</th>"
            for name in REQUEST_COLUMNS
        )
        + "</tr>"
    )
    requests = [
        f"<div><h3>{title}</h3><table>{request_head}{_request_rows(rows, anchors)}</table></div>"
        for title, rows in (
            ("slowest requests", report.slowest),
            ("most fragile", report.most_fragile),
        )
        if rows
    ]
    for row in (tables, requests):
        parts.append('<div class="row" style="margin-top:16px">' + "".join(row) + "</div>")
    if report.warnings:
        parts.append(
            '<div class="warnings">'
            + "".join(f"<div>{esc(w)}</div>" for w in report.warnings)
            + "</div>"
        )
    parts.append("</section>")
    return "".join(parts)


def _links(
    engs: Sequence[EvidenceNecessityGraph], chosen: Sequence[int]
) -> tuple[dict[str, str], dict[str, list[tuple[str, str, int]]]]:
    """Request id -> anchor of its section (the first with that id), and per anchor the
    (anchor, name, chunk index) of the chunks on the page that carry its answer."""
    anchors: dict[str, str] = {}
    for i in chosen:
        if engs[i].id is not None:
            anchors.setdefault(str(engs[i].id), f"r-{i + 1}")
    linked_from: dict[str, list[tuple[str, str, int]]] = {}
    for i in chosen:
        for ctx in engs[i].contexts:
            source = ctx.metadata.get(SOURCE_KEY)
            if isinstance(source, str) and source in anchors:
                name = str(engs[i].id) if engs[i].id is not None else f"r-{i + 1}"
                linked_from.setdefault(anchors[source], []).append((f"r-{i + 1}", name, ctx.index))
    return anchors, linked_from


def render_html(
    engs: Sequence[EvidenceNecessityGraph],
    *,
    report: Report | None = None,
    title: str = "ENE",
    max_requests: int = 50,
) -> str:
    """A complete page: the aggregate report (if given), then up to ``max_requests`` graphs.

    With a report, the slowest and most fragile requests are always included (linked from its
    tables); the rest are the first ones in input order. A chunk that is another request's answer
    (metadata ``ene_source``, e.g. an agent's tool output) links to that request's section, which
    links back.
    """
    chosen = list(range(min(len(engs), max_requests)))
    if report is not None:
        extra = [r.position - 1 for r in (*report.most_fragile, *report.slowest)]
        chosen = sorted(set(chosen) | {i for i in extra if i < len(engs)})
    note = (
        f'<p class="mute">showing {len(chosen)} of {len(engs)} requests</p>'
        if len(chosen) < len(engs)
        else ""
    )
    body = [f"<h1>{esc(title)}</h1>{note}"]
    if report is not None:
        body.append(render_report(report, {i + 1 for i in chosen}))
    anchors, linked_from = _links(engs, chosen)
    body += [
        render_eng(
            engs[i], f"r-{i + 1}", anchors=anchors, linked_from=linked_from.get(f"r-{i + 1}", [])
        )
        for i in chosen
    ]
    return page(title, "\n".join(body))
