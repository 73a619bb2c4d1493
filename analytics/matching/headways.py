"""Frequent lines: headways at the origin and excess waiting time (TfL EWT) per line and hour.

A line-direction-hour is frequent when its mean planned headway is at most the profile's
`frequent_headway_max_s`. SWT = ΣH²/(2ΣH) over planned headways, AWT the same over observed
departures (every counted run of that line and direction that left the origin), EWT = AWT − SWT.
"""

from __future__ import annotations

import polars as pl

from core.instants import to_utc_instant


def compute_headways(
    trips: pl.DataFrame, runs: pl.DataFrame, frequent_headway_max_s: float
) -> pl.DataFrame:
    """Columns of `headway_observations` (without service_date/version columns)."""
    key = ["route_id", "direction_id"]
    planned = trips.select(
        *key, (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("t_s")
    ).with_columns(pl.col("direction_id").fill_null(-1))
    observed = (
        runs.filter(pl.col("is_departed") & pl.col("is_counted"))
        .select(*key, pl.col("started_s").alias("t_s"))
        .with_columns(pl.col("direction_id").cast(pl.Int32).fill_null(-1))
    )

    def headways(df: pl.DataFrame, name: str) -> pl.DataFrame:
        return (
            df.sort(*key, "t_s")
            .with_columns(pl.col("t_s").diff().over(key).alias("h"))
            .with_columns((pl.col("t_s") // 3600 * 3600).alias("hour_s"))
            .group_by(*key, "hour_s")
            .agg(
                pl.len().alias(f"n_{name}"),
                pl.col("h").mean().alias(f"{name}_headway_mean_s"),
                pl.col("h").max().alias(f"{name}_headway_max_s"),
                (pl.col("h").pow(2).sum() / (2 * pl.col("h").sum())).alias(f"{name}_wait_s"),
            )
        )

    p = headways(planned, "planned")
    o = headways(observed, "observed")
    out = (
        p.join(o, on=[*key, "hour_s"], how="left")
        .filter(pl.col("planned_headway_mean_s") <= frequent_headway_max_s)
        .with_columns(pl.col("n_observed").fill_null(0))
    )
    return out.select(
        *key,
        to_utc_instant("hour_s").alias("hour_at"),
        "n_planned",
        "n_observed",
        "planned_headway_mean_s",
        "observed_headway_mean_s",
        "observed_headway_max_s",
        pl.col("planned_wait_s").alias("scheduled_wait_s"),
        pl.col("observed_wait_s").alias("actual_wait_s"),
        (pl.col("observed_wait_s") - pl.col("planned_wait_s")).alias("excess_wait_s"),
    ).sort(*key, "hour_at")
