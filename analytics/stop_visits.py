"""Stop visits: arrival and departure at every stop of each matched run, with delays."""

from __future__ import annotations

import polars as pl

from analytics.crossings import compute_crossings
from analytics.options import MatchOptions

RUN_KEY = ["vehicle_id", "run_id"]


def compute_stop_visits(
    runs: pl.DataFrame,
    track: pl.DataFrame,
    trips: pl.DataFrame,
    trip_stops: pl.DataFrame,
    options: MatchOptions,
) -> pl.DataFrame:
    """One row per stop of every matched run (columns of `stop_visits`, times as UTC instants).

    Times come from the run's pings around the stop's position along the shape (see
    `analytics.crossings`); a visit is `is_interpolated` when no ping lies within
    `stop_radius_m` of the stop along the shape. Stops the run never reached have null times.
    Planned times are the trip's planned start plus the template's offsets.
    """
    matched = runs.filter(pl.col("trip_id").is_not_null()).select(
        *RUN_KEY, "trip_id", "start_dist_m", "end_dist_m"
    )
    stops = (
        matched.join(trips.select("trip_id", "template_trip_id", "planned_start_at"), on="trip_id")
        .join(trip_stops, on="template_trip_id")
        .rename({"stop_dist_m": "target_m"})
    )
    cross = compute_crossings(track, stops, RUN_KEY, options.clearance_m)
    # a stop beyond the run's end or before its start was not visited by this run
    reached = pl.col("target_m").is_between(
        pl.col("start_dist_m") - options.stop_radius_m, pl.col("end_dist_m") + options.stop_radius_m
    )
    out = cross.with_columns(
        pl.when(reached).then(pl.col("arrive_s")).alias("arrive_s"),
        pl.when(reached).then(pl.col("leave_s")).alias("leave_s"),
    ).with_columns(
        (pl.col("planned_start_at") + pl.duration(seconds=pl.col("arrival_offset_s"))).alias(
            "planned_arrival_at"
        ),
        (pl.col("planned_start_at") + pl.duration(seconds=pl.col("departure_offset_s"))).alias(
            "planned_departure_at"
        ),
        pl.from_epoch((pl.col("arrive_s") * 1e6).round().cast(pl.Int64), "us")
        .dt.replace_time_zone("UTC")
        .alias("arrival_at"),
        pl.from_epoch((pl.col("leave_s") * 1e6).round().cast(pl.Int64), "us")
        .dt.replace_time_zone("UTC")
        .alias("departure_at"),
    )
    return out.select(
        "vehicle_id",
        pl.col("run_id").alias("run_index"),
        "trip_id",
        "stop_sequence",
        "stop_id",
        pl.col("target_m").alias("stop_dist_m"),
        "planned_arrival_at",
        "planned_departure_at",
        "arrival_at",
        "departure_at",
        ((pl.col("arrival_at") - pl.col("planned_arrival_at")).dt.total_seconds())
        .cast(pl.Int32)
        .alias("arrival_delay_s"),
        ((pl.col("departure_at") - pl.col("planned_departure_at")).dt.total_seconds())
        .cast(pl.Int32)
        .alias("departure_delay_s"),
        "nearest_ping_m",
        (pl.col("nearest_ping_m").fill_null(float("inf")) > options.stop_radius_m).alias(
            "is_interpolated"
        ),
    ).sort("vehicle_id", "run_index", "stop_sequence")
