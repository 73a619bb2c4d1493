"""Frequent lines: headways at the origin and excess waiting time (TfL EWT) per line and hour.

A line-direction-hour is frequent when its mean planned headway is at most the profile's
`frequent_headway_max_s`. SWT = ΣH²/(2ΣH) over planned headways, AWT the same over observed
departures (every counted run of that line and direction that left the origin), EWT = AWT − SWT.

Bunching (`compute_bunching`, `compute_bunching_by_hour`): at each stop of a frequent line, the
observed headway of a visit is the time since the previous vehicle of the same line and
direction left that stop on the same service day; the visit is bunched when that headway is
below the profile's `bunching_headway_max_ratio` times the line's planned mean headway in the
hour the trip was planned to start (`headway_observations.planned_headway_mean_s`). Only hours
of frequent service are judged (the table holds only those). These run on the stored
`stop_visits` when a page asks (no stored column: the store's schema is unchanged).
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


BUNCHING_KEY = ("service_date", "route_id", "direction_id")


def compute_bunching(visits: pl.DataFrame, planned: pl.DataFrame, max_ratio: float) -> pl.DataFrame:
    """Every judged stop visit of frequent hours with its observed headway and the verdict.

    `visits`: `service_date`, `route_id`, `direction_id`, `stop_id`, `trip_id`, `vehicle_id`,
    `planned_start_at` (the trip's), `at` (when the vehicle left the stop: departure, else
    arrival), `stop_dist_m`. `planned`: `service_date`, `route_id`, `direction_id`, `hour_at`,
    `planned_headway_mean_s` (rows of `headway_observations`).

    Returns the visits that have a leader at their stop and a planned headway in their trip's
    start hour, with `hour_at` (that hour), `headway_s` (since the leader), `scheduled_headway_s`,
    `leader_trip_id`, `leader_vehicle_id` and `is_bunched` (headway_s < max_ratio x scheduled);
    sorted by line, direction, stop and time.
    """
    if visits.is_empty() or planned.is_empty():
        return pl.DataFrame()
    stop = [*BUNCHING_KEY, "stop_id"]
    ordered = (
        visits.with_columns(pl.col("direction_id").cast(pl.Int32).fill_null(-1))
        .drop_nulls("at")
        .sort(*stop, "at")
        .with_columns(
            ((pl.col("at") - pl.col("at").shift().over(stop)).dt.total_microseconds() / 1e6).alias(
                "headway_s"
            ),
            pl.col("trip_id").shift().over(stop).alias("leader_trip_id"),
            pl.col("vehicle_id").shift().over(stop).alias("leader_vehicle_id"),
            pl.col("planned_start_at").dt.truncate("1h").alias("hour_at"),
        )
        .drop_nulls("headway_s")
    )
    heads = planned.select(
        *BUNCHING_KEY,
        "hour_at",
        pl.col("planned_headway_mean_s").alias("scheduled_headway_s"),
    ).with_columns(pl.col("direction_id").cast(pl.Int32))
    return (
        ordered.join(heads, on=[*BUNCHING_KEY, "hour_at"], how="inner")
        .drop_nulls("scheduled_headway_s")
        .with_columns(
            (pl.col("headway_s") < max_ratio * pl.col("scheduled_headway_s")).alias("is_bunched")
        )
        .sort(*stop, "at")
    )


def compute_bunching_by_hour(bunching: pl.DataFrame) -> pl.DataFrame:
    """Per line, direction and planned-start hour: `n_headways` (judged stop headways),
    `n_bunched` and `bunched_share` (n_bunched / n_headways), from `compute_bunching`."""
    if bunching.is_empty():
        return pl.DataFrame()
    return (
        bunching.group_by(*BUNCHING_KEY, "hour_at")
        .agg(
            pl.len().cast(pl.Int64).alias("n_headways"),
            pl.col("is_bunched").sum().cast(pl.Int64).alias("n_bunched"),
        )
        .with_columns((pl.col("n_bunched") / pl.col("n_headways")).alias("bunched_share"))
        .sort(*BUNCHING_KEY, "hour_at")
    )
