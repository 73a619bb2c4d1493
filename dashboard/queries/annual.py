"""Avaliação anual: the annual grades (BG art. 56-58, 72-VII) and the reports offered for the
year.

Reads `annual_grades` (by operator / lot and year; also the annual dossier's grade history
and the list of graded operators and lots) and, for the offers, what
`dashboard.downloads.compute_report_offers` reads.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import ALL, select_rows


def read_annual_grades(store: Store, operator_id: str, lot_id: str) -> pl.DataFrame:
    """`annual_grades` rows by year: of the chosen lot, else of the chosen operator, else of
    every operator and lot (scope, scope_id, year, scores, grade, renewal, cassação watch)."""
    if lot_id != ALL:
        equal = {"scope": "lot", "scope_id": lot_id}
    elif operator_id != ALL:
        equal = {"scope": "operator", "scope_id": operator_id}
    else:
        equal = {}
    return select_rows(store, "annual_grades", equal, order_by=("scope", "scope_id", "year"))


def read_report_offers(store: Store, year: int) -> list[Any]:
    """The reports of `year` the Avaliação anual page offers (`downloads.ReportOffer`)."""
    from dashboard.downloads import compute_report_offers  # ReportLab loads only when asked

    return compute_report_offers(store, year)


def read_scope_grades(store: Store, scope: str, scope_id: str, up_to_year: int) -> pl.DataFrame:
    """The grade history of one operator or lot (`annual_grades`, every column, declared
    dtypes) up to `up_to_year`, by year."""
    return store.read(
        "annual_grades", "scope = ? AND scope_id = ? AND year <= ?", [scope, scope_id, up_to_year]
    ).sort("year")


def read_annual_scopes(store: Store, year: int, scope: str = "operator") -> list[str]:
    """Operators (or lots) graded in `year` in `annual_grades`."""
    grades = store.read("annual_grades", "year = ? AND scope = ?", [year, scope], ("scope_id",))
    return sorted(grades["scope_id"].unique().to_list())
