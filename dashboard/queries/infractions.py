"""Infrações: the infractions the indices job suggests for an inspector to review (BG Anexo I).

Reads `suggested_infractions` (of an operator, by the day of the fact; also the annual
dossier).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import select_rows


def read_suggested_infractions(
    store: Store, start: date, end: date, operator_id: str
) -> pl.DataFrame:
    """`suggested_infractions` of an operator (all when ALL) whose fact occurred in
    [start, end] (`occurred_on`, the service day), by day."""
    return select_rows(
        store,
        "suggested_infractions",
        {"operator_id": operator_id},
        between=("occurred_on", start, end),
        order_by=("occurred_on",),
    )
