"""Moved: the aggregate report lives in :mod:`ene_core.reports.report`; this module keeps the
old import path working.
"""

from .reports.report import (
    CITATION_SCALE,
    CLAIM_CLASSES,
    MAX_GROUPS,
    MAX_RANK,
    REQUEST_COLUMNS,
    TOP,
    Group,
    Mean,
    Rate,
    Report,
    RequestRow,
    bootstrap,
    interval,
    percent,
    percentile,
    read_results,
    render_table,
    summarize,
)

__all__ = [
    "CITATION_SCALE",
    "CLAIM_CLASSES",
    "MAX_GROUPS",
    "MAX_RANK",
    "REQUEST_COLUMNS",
    "TOP",
    "Group",
    "Mean",
    "Rate",
    "Report",
    "RequestRow",
    "bootstrap",
    "interval",
    "percent",
    "percentile",
    "read_results",
    "render_table",
    "summarize",
]
