"""Moved: the HTML viewer lives in :mod:`ene_core.reports.viewer`; this module keeps the old
import path working.
"""

from .reports.viewer import (
    COLORS,
    CSS,
    JS,
    MS_TITLE,
    bar_chart,
    esc,
    necessity_svg,
    page,
    rate_bar,
    render_eng,
    render_html,
    render_report,
)

__all__ = [
    "COLORS",
    "CSS",
    "JS",
    "MS_TITLE",
    "bar_chart",
    "esc",
    "necessity_svg",
    "page",
    "rate_bar",
    "render_eng",
    "render_html",
    "render_report",
]
