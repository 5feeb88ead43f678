"""What people read of ENGs: :mod:`~ene_core.reports.report` (``ene report``: aggregate
statistics with bootstrap intervals) and :mod:`~ene_core.reports.viewer` (``ene view``: the
self-contained HTML page of requests, claims and chunks).
"""
