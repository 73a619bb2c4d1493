"""Tendências e risco: monthly ICV, its three parts and IQS per operator, and who is at risk.

Reads `indicators` (operator scope, monthly periods 'YYYY-MM') and `annual_grades` (the latest
grade, the cassação watch, the provisional stamp). Returns long frames for the charts and one
row per operator for the "em risco" panel. The overdue cases come from the case database
(`cases.workflow.Workflow.overdue`, the cases the logged-in account may read), read by the page;
`build_overdue_by_operator` sums them up per operator.
"""

from __future__ import annotations

import polars as pl

from core.pt_br import to_number
from core.store import Store
from core.texts import gettext as _
from dashboard.queries.snapshot import ALL

SERIES = (
    "icv_score",
    "icv_fulfilment",
    "icv_punctuality",
    "breakdowns_per_10000_km",
    "iqs",
)
"""The monthly indicators the trends page draws: the ICV score, its three parts (BG art.
57-I a, b, c) and the IQS (57-II)."""


def read_monthly_series(store: Store, operator_id: str, year: int) -> pl.DataFrame:
    """Monthly values of `SERIES` per operator in `year` (and the 12 months before, for the
    trend): `month` (first day, a Date), `operator_id`, `indicator`, `value`; one operator
    when `operator_id` is set."""
    params: list[object] = [f"{year - 1}-01", f"{year}-12", list(SERIES)]
    where = ""
    if operator_id != ALL:
        where = " AND scope_id = ?"
        params.append(operator_id)
    return store.query(
        "SELECT strptime(period || '-01', '%Y-%m-%d')::DATE AS month, scope_id AS operator_id, "
        "indicator, value FROM indicators WHERE scope = 'operator' "
        "AND regexp_full_match(period, '\\d{4}-\\d{2}') AND period BETWEEN ? AND ? "
        f"AND list_contains(?::VARCHAR[], indicator){where} AND value IS NOT NULL "
        "ORDER BY operator_id, indicator, month",
        params,
    )


def build_risk(
    series: pl.DataFrame, grades: pl.DataFrame, e_below: float, months: int = 3
) -> pl.DataFrame:
    """One row per operator with a reason to watch it, most serious first: `operator_id`,
    `last_grade` (latest year in `annual_grades`, '—' when none), `n_e_consecutive`,
    `is_cassacao_watch`, `is_provisional`, `recent_icv` (mean ICV score of the last `months`
    months with a value), `is_heading_for_e` (recent_icv below `e_below`, the profile's
    minimum points for D) and `reasons` (pt-BR, '; '-joined). Operators without any reason
    are left out."""
    recent = (
        series.filter(pl.col("indicator") == "icv_score")
        .sort("month")
        .group_by("operator_id")
        .agg(pl.col("value").tail(months).mean().alias("recent_icv"))
    )
    latest = (
        grades.filter(pl.col("scope") == "operator")
        .sort("year")
        .group_by("scope_id")
        .agg(
            pl.col("grade").last().alias("last_grade"),
            pl.col("year").last().alias("last_year"),
            pl.col("n_e_consecutive").last(),
            pl.col("is_cassacao_watch").last(),
            pl.col("is_provisional").last(),
        )
        .rename({"scope_id": "operator_id"})
    )
    frame = latest.join(recent, on="operator_id", how="full", coalesce=True).with_columns(
        pl.col("last_grade").fill_null("—"),
        pl.col("n_e_consecutive").fill_null(0),
        pl.col("is_cassacao_watch").fill_null(False),
        pl.col("is_provisional").fill_null(False),
        (pl.col("recent_icv") < e_below).fill_null(False).alias("is_heading_for_e"),
    )
    reasons = pl.concat_list(
        pl.when(pl.col("is_cassacao_watch")).then(
            pl.lit(_("cassação watch (grade E in 3 years in a row or 8 in total)"))
        ),
        pl.when(pl.col("last_grade") == "E").then(
            pl.format(_("grade E in {}"), pl.col("last_year"))
        ),
        pl.when(pl.col("is_heading_for_e")).then(
            pl.lit(
                _(
                    "mean ICV of the last {months} months below {points} points (heading for "
                    "grade E)",
                    months=months,
                    points=to_number(e_below, 0),
                )
            )
        ),
    ).list.drop_nulls()
    return (
        frame.with_columns(reasons.list.join("; ").alias("reasons"), reasons.list.len().alias("_n"))
        .filter(pl.col("_n") > 0)
        .sort(["is_cassacao_watch", "_n", "recent_icv"], descending=[True, True, False])
        .drop("_n", "last_year")
    )


def build_overdue_by_operator(overdue: pl.DataFrame) -> pl.DataFrame:
    """Overdue cases per operator, most late first, from `Workflow.overdue` (`case_id`,
    `operator_id`, `pending`, `due_on`, `days_late`): `operator_id`, `n_overdue`, and the
    oldest one's `oldest_case_id`, `oldest_due_on`, `oldest_days_late` and `oldest_pending`
    (the act awaited)."""
    if overdue.is_empty():
        return pl.DataFrame()
    return (
        overdue.sort("due_on", "case_id")
        .group_by("operator_id", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n_overdue"),
            pl.col("case_id").first().alias("oldest_case_id"),
            pl.col("due_on").first().alias("oldest_due_on"),
            pl.col("days_late").first().alias("oldest_days_late"),
            pl.col("pending").first().alias("oldest_pending"),
        )
        .sort(["oldest_days_late", "operator_id"], descending=[True, False])
    )
