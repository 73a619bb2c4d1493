"""km efficiency (CGS art. 2, 20-II): km run ÷ km programmed per month and over a rolling window.

Renewal in CGS needs at least 90 % of the programmed monthly km, assessed every 12 months. The
minimum ratio and the window come from the profile (`km.efficiency_min_ratio`,
`km.window_months`). A month without data is absent from the window, not zero: the window
ratio is Σ km run ÷ Σ km programmed over the months present, and `n_months` says how many.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from analytics.indices.scopes import IndicatorSpec, to_indicator_rows
from core.periods import Period
from core.profile import Profile

SOURCE = "CGS art. 2, 20-II (km.efficiency_min_ratio, km.window_months)"


def compute_km_efficiency(monthly: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Monthly and rolling km efficiency per scope.

    `monthly`: scope, scope_id, month (Date, first day), km_run, km_programmed (km).
    Returns those plus: efficiency (0-1, null with no programmed km), window_km_run,
    window_km_programmed (km over the `km.window_months` months ending with this one),
    window_efficiency (0-1), n_months (months with data in the window), is_month_below and
    is_window_below (below `km.efficiency_min_ratio`).
    """
    minimum = profile.km.efficiency_min_ratio.value
    window = profile.km.window_months.value
    frame = monthly.sort("scope", "scope_id", "month")
    rolled = frame.rolling(
        index_column="month", period=f"{window}mo", group_by=["scope", "scope_id"]
    ).agg(
        pl.col("km_run").sum().alias("window_km_run"),
        pl.col("km_programmed").sum().alias("window_km_programmed"),
        pl.len().cast(pl.Int32).alias("n_months"),
    )
    ratio = lambda num, den: pl.when(pl.col(den) > 0).then(pl.col(num) / pl.col(den))  # noqa: E731
    return (
        frame.join(rolled, on=["scope", "scope_id", "month"], how="left")
        .with_columns(
            ratio("km_run", "km_programmed").alias("efficiency"),
            ratio("window_km_run", "window_km_programmed").alias("window_efficiency"),
        )
        .with_columns(
            (pl.col("efficiency") < minimum).alias("is_month_below"),
            (pl.col("window_efficiency") < minimum).alias("is_window_below"),
        )
    )


def list_months_below(efficiency: pl.DataFrame) -> pl.DataFrame:
    """The months whose km efficiency is below the minimum: scope, scope_id, month, efficiency."""
    return efficiency.filter(pl.col("is_month_below")).select(
        "scope", "scope_id", "month", "efficiency", "km_run", "km_programmed"
    )


KM_SPECS = (
    IndicatorSpec("km_efficiency", "km_run", "km_programmed", "ratio", SOURCE),
    IndicatorSpec("km_efficiency_window", "window_km_run", "window_km_programmed", "ratio", SOURCE),
    IndicatorSpec("km_months_below", "n_months_below", "n_months_in_period", "months", SOURCE),
)


def compute_km_indicators(efficiency: pl.DataFrame, period: Period) -> pl.DataFrame:
    """km indicators of `period`: the period's efficiency, the rolling window ending at its
    last month, and the months below the minimum (numerator) out of the months with data."""
    inside = efficiency.filter(pl.col("month").is_between(period.start.replace(day=1), period.end))
    per_scope = inside.group_by("scope", "scope_id").agg(
        pl.col("km_run").sum(),
        pl.col("km_programmed").sum(),
        pl.col("is_month_below").fill_null(False).sum().cast(pl.Float64).alias("n_months_below"),
        pl.len().cast(pl.Float64).alias("n_months_in_period"),
        pl.col("window_km_run").sort_by("month").last(),
        pl.col("window_km_programmed").sort_by("month").last(),
    )
    return to_indicator_rows(per_scope, KM_SPECS, period)


def build_km_term_series(monthly: pl.DataFrame, start: date, end: date) -> pl.DataFrame:
    """The km efficiency month by month over a concession term (CGS art. 2 p.ú. a: at least
    the minimum share of the programmed km over the initial term), one row per scope and month
    of [start, end], months without data included and marked.

    `monthly`: scope, scope_id, month (Date, first day), km_run, km_programmed (km). Returns
    scope, scope_id, month, km_run, km_programmed (null when the month has no data),
    efficiency (0-1), has_data (false: no km programmed was judged that month -- it is kept
    out of the term's sums, not counted as 0 %), term_km_run and term_km_programmed (sums from
    the term's start up to the month, months with data only) and term_efficiency (their
    ratio: the term-long figure as it stood at the end of that month).
    """
    months = pl.DataFrame(
        pl.date_range(start.replace(day=1), end.replace(day=1), "1mo", eager=True).alias("month")
    )
    scopes = monthly.select("scope", "scope_id").unique()
    present = monthly.filter(pl.col("km_programmed").fill_null(0) > 0).select(
        "scope", "scope_id", "month", "km_run", "km_programmed"
    )
    ratio = lambda num, den: pl.when(pl.col(den) > 0).then(pl.col(num) / pl.col(den))  # noqa: E731
    return (
        scopes.join(months, how="cross")
        .join(present, on=["scope", "scope_id", "month"], how="left")
        .sort("scope", "scope_id", "month")
        .with_columns(
            pl.col("km_programmed").is_not_null().alias("has_data"),
            ratio("km_run", "km_programmed").alias("efficiency"),
            pl.col("km_run").fill_null(0).cum_sum().over("scope", "scope_id").alias("term_km_run"),
            pl.col("km_programmed")
            .fill_null(0)
            .cum_sum()
            .over("scope", "scope_id")
            .alias("term_km_programmed"),
        )
        .with_columns(ratio("term_km_run", "term_km_programmed").alias("term_efficiency"))
    )


def compute_km_term(series: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """The term's verdict per scope from `build_km_term_series`: scope, scope_id, n_months
    (months of the term so far), n_months_with_data, months_without_data ('YYYY-MM' joined by
    ', '), km_run, km_programmed (sums over the months with data), term_efficiency,
    n_months_below (months with data below `km.efficiency_min_ratio`) and is_term_met
    (term_efficiency at or above it; null without any data)."""
    minimum = profile.km.efficiency_min_ratio.value
    return (
        series.sort("month")
        .group_by("scope", "scope_id")
        .agg(
            pl.len().cast(pl.Int32).alias("n_months"),
            pl.col("has_data").sum().cast(pl.Int32).alias("n_months_with_data"),
            pl.col("month")
            .filter(~pl.col("has_data"))
            .dt.strftime("%Y-%m")
            .str.join(", ")
            .alias("months_without_data"),
            pl.col("km_run").sum(),
            pl.col("km_programmed").sum(),
            (pl.col("efficiency") < minimum).sum().cast(pl.Int32).alias("n_months_below"),
        )
        .with_columns(
            pl.when(pl.col("km_programmed") > 0)
            .then(pl.col("km_run") / pl.col("km_programmed"))
            .alias("term_efficiency")
        )
        .with_columns((pl.col("term_efficiency") >= minimum).alias("is_term_met"))
        .sort("scope", "scope_id")
    )
