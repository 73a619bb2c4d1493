"""km efficiency (CGS art. 2, 20-II): km run ÷ km programmed per month and over a rolling window.

Renewal in CGS needs at least 90 % of the programmed monthly km, assessed every 12 months. The
minimum ratio and the window come from the profile (`km.efficiency_min_ratio`,
`km.window_months`). A month without data is absent from the window, not zero: the window
ratio is Σ km run ÷ Σ km programmed over the months present, and `n_months` says how many.
"""

from __future__ import annotations

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
