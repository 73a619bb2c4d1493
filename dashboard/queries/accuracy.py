"""Precisão das previsões: how far the live feed's published arrivals were from what happened.

Reads `live_prediction_accuracy` (written by `analytics.live.accuracy.run_accuracy_day` the day
after: each day's errors per horizon, line, hour and current vs next trips, beside the
timetable's) and folds the days of a period together.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import select_rows

DIMENSIONS = ("horizon", "trip", "line", "hour")
"""The groups of the scored predictions, in the order the page and the report show them."""

ACCURACY_SCHEMA = pl.Schema(
    {
        "dimension": pl.String(),
        "key": pl.String(),
        "n_days": pl.Int64(),
        "n_predictions": pl.Int64(),
        "mae_s": pl.Float64(),
        "p50_s": pl.Float64(),
        "p90_s": pl.Float64(),
        "bias_s": pl.Float64(),
        "timetable_mae_s": pl.Float64(),
        "timetable_p50_s": pl.Float64(),
        "timetable_p90_s": pl.Float64(),
        "gain_vs_timetable": pl.Float64(),
    }
)
ACCURACY_COLUMNS = tuple(ACCURACY_SCHEMA)
"""Columns of `compute_accuracy_summary`."""


def read_prediction_accuracy(store: Store, start: date, end: date) -> pl.DataFrame:
    """The scored days of [start, end]: `live_prediction_accuracy` rows (one per day,
    dimension and key), by day."""
    return select_rows(
        store,
        "live_prediction_accuracy",
        between=("service_date", start, end),
        order_by=("service_date", "dimension", "key"),
    )


def compute_accuracy_summary(rows: pl.DataFrame) -> pl.DataFrame:
    """The period's accuracy per dimension and key (`ACCURACY_COLUMNS`).

    `rows`: `read_prediction_accuracy`. n_days: scored days in the group; n_predictions: their
    sum; mae_s, bias_s, timetable_mae_s: the exact means over every prediction (each day's
    mean weighted by its predictions); p50_s, p90_s and the timetable's: the days' percentiles
    weighted by their predictions (a percentile of several days cannot be rebuilt from the
    days' figures; on one day they are exact); gain_vs_timetable: 1 - mae_s /
    timetable_mae_s (positive: the feed beat the timetable). Seconds throughout; sorted by
    dimension in `DIMENSIONS` order, then by key in its natural order (numbers as numbers).
    """
    if rows.is_empty():
        return pl.DataFrame(schema=ACCURACY_SCHEMA)
    n = pl.col("n_predictions").cast(pl.Float64)
    weighted = [
        ((pl.col(c) * n).sum() / n.sum()).alias(c)
        for c in ACCURACY_COLUMNS
        if c.endswith("_s")  # every figure in seconds is a mean or percentile of its day
    ]
    order = {d: i for i, d in enumerate(DIMENSIONS)}
    return (
        rows.group_by("dimension", "key")
        .agg(
            pl.col("service_date").n_unique().cast(pl.Int64).alias("n_days"),
            pl.col("n_predictions").sum().cast(pl.Int64),
            *weighted,
        )
        .with_columns(
            (1.0 - pl.col("mae_s") / pl.col("timetable_mae_s")).alias("gain_vs_timetable"),
            pl.col("dimension").replace_strict(order, default=len(order)).alias("_d"),
            pl.col("key").cast(pl.Int64, strict=False).alias("_k"),
        )
        .sort("_d", "_k", "key", nulls_last=True)
        .select(ACCURACY_COLUMNS)
    )


def select_dimension(summary: pl.DataFrame, dimension: str) -> pl.DataFrame:
    """The rows of one dimension of `compute_accuracy_summary`."""
    return summary.filter(pl.col("dimension") == dimension)
