"""Avaliação anual: the annual grades (BG art. 56-58, 72-VII) and the reports offered for the
year.

Reads `annual_grades` (by operator / lot and year; also the annual dossier's grade history
and the list of graded operators and lots), the verdict criteria of one operator or lot as the
dossier shows them and, for the offers, what `dashboard.downloads.compute_report_offers` reads.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from core.periods import months_back
from core.profile import Profile, load_profile
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


def read_verdict_criteria(
    store: Store, profile_id: str, scope: str, scope_id: str, year: int
) -> pl.DataFrame:
    """The verdict criteria of one operator or lot in `year` under profile `profile_id`, the
    very rows the annual dossier
    prints (`dashboard.reports.annual_verdict.build_verdict_tables`; the criteria are those
    `pontual profiles show` lists): verdict, verdict_title, criterion, article, status,
    status_label (pt-BR), value, threshold, is_law, decides, note, and outcome (the verdict's
    pt-BR result: apta / não apta / em aberto / alerta / sem alerta)."""
    from dashboard.reports.annual_verdict import build_verdict_tables

    profile = load_profile(profile_id)
    grades = read_scope_grades(store, scope, scope_id, year)
    year_values = dict(
        store.query(
            "SELECT indicator, value FROM indicators WHERE scope = ? AND scope_id = ? "
            "AND period = ?",
            [scope, scope_id, f"{year:04d}"],
        ).rows()
    )
    current = grades.filter(pl.col("year") == year)
    grade = current.row(0, named=True) if current.height else {}
    criteria, outcomes, _ = build_verdict_tables(
        store, profile, scope, scope_id, year, grades, year_values, grade
    )
    return criteria.with_columns(
        pl.col("verdict").replace_strict(outcomes, default=None).alias("outcome")
    )


def read_monthly_figures(
    store: Store, scope: str, scope_id: str, start: date | None, end: date
) -> pl.DataFrame:
    """The stored monthly figures of one scope over the months of [start, end] (from its first
    stored month when `start` is None; from the month
    rows of `indicators`): scope, scope_id, month (Date), equivalent_passengers, km_run and
    km_programmed (km), cost_km (cost × km run; null when no cost was given that month). A
    month without indicators has no row."""
    rows = store.query(
        "SELECT period, indicator, numerator, denominator, value FROM indicators "
        "WHERE scope = ? AND scope_id = ? AND length(period) = 7 AND period >= ? "
        "AND period <= ? "
        "AND indicator IN ('equivalent_passengers', 'km_efficiency', 'technical_tariff_brl')",
        [scope, scope_id, start.strftime("%Y-%m") if start else "", end.strftime("%Y-%m")],
    )
    schema = {
        "scope": pl.String,
        "scope_id": pl.String,
        "month": pl.Date,
        "equivalent_passengers": pl.Float64,
        "km_run": pl.Float64,
        "km_programmed": pl.Float64,
        "cost_km": pl.Float64,
    }
    if rows.is_empty():
        return pl.DataFrame(schema=schema)
    one = lambda name, column: (  # noqa: E731
        pl.col(column).filter(pl.col("indicator") == name).first().cast(pl.Float64)
    )
    return (
        rows.group_by("period")
        .agg(
            one("equivalent_passengers", "value").alias("equivalent_passengers"),
            one("km_efficiency", "numerator").alias("km_run"),
            one("km_efficiency", "denominator").alias("km_programmed"),
            one("technical_tariff_brl", "numerator").alias("cost_km"),
        )
        .select(
            pl.lit(scope).alias("scope"),
            pl.lit(scope_id).alias("scope_id"),
            (pl.col("period") + "-01").str.to_date().alias("month"),
            *list(schema)[3:],
        )
        .sort("month")
    )


def read_tariff_worksheet(
    store: Store, profile_id: str | Profile, scope: str, scope_id: str, end_month: date
) -> pl.DataFrame:
    """The technical tariff worksheet of one scope for the profile's `tariff.demand_months`
    months ending with `end_month` (`analytics.indices.tariff`: line, item, value, unit,
    article); empty when the profile declares no [tariff]."""
    from analytics.indices.tariff import (
        WORKSHEET_SCHEMA,
        build_tariff_worksheet,
        compute_tariff_inputs,
    )

    profile = load_profile(profile_id) if isinstance(profile_id, str) else profile_id
    if profile.tariff is None:
        return pl.DataFrame(schema=WORKSHEET_SCHEMA)
    start = months_back(end_month, profile.tariff.demand_months.value).start
    monthly = read_monthly_figures(store, scope, scope_id, start, end_month)
    return build_tariff_worksheet(compute_tariff_inputs(monthly, profile, end_month), profile)


def read_km_term_series(
    store: Store, scope: str, scope_id: str, end: date, start: date | None = None
) -> pl.DataFrame:
    """The km efficiency month by month over the concession term up to `end`
    (`analytics.indices.km.build_km_term_series`; months without data included, `has_data`
    false). The term starts at `start`, else at the scope's first month with km data."""
    from analytics.indices.km import build_km_term_series

    monthly = read_monthly_figures(store, scope, scope_id, start, end)
    monthly = monthly.filter(pl.col("km_programmed").is_not_null())
    first = start or (monthly["month"].min() if monthly.height else end)
    return build_km_term_series(monthly, first, end)  # type: ignore[arg-type]
