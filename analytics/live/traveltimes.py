"""Travel times between consecutive stops learned from past `stop_visits`, and the day's
per-trip stop times with both the timetable's and the learned running times."""

from __future__ import annotations

import polars as pl

SEGMENT_KEY = ["from_stop_id", "stop_id", "hour"]


def build_segment_times(visits: pl.DataFrame, timezone: str, min_samples: int) -> pl.DataFrame:
    """Median observed time from one stop to the next, per local hour of day.

    `visits`: rows of `stop_visits`. Output: from_stop_id, stop_id, hour (0-23, local time of
    the arrival at the first stop), learned_seg_s (median arrival-to-arrival seconds, dwell at
    the first stop included), n_samples. Only pairs seen at least `min_samples` times.
    """
    run = ["service_date", "vehicle_id", "run_index"]
    seg = (
        visits.filter(pl.col("arrival_at").is_not_null())
        .sort(*run, "stop_sequence")
        .with_columns(
            pl.col("stop_id").shift(1).over(run).alias("from_stop_id"),
            pl.col("stop_sequence").shift(1).over(run).alias("_prev_seq"),
            # from a run's first stop, time from its departure: the arrival there may be
            # the start of a layover, not part of the trip
            pl.when(pl.col("stop_sequence").shift(2).over(run).is_null())
            .then(pl.coalesce(pl.col("departure_at"), pl.col("arrival_at")).shift(1).over(run))
            .otherwise(pl.col("arrival_at").shift(1).over(run))
            .alias("_prev_at"),
        )
        .filter(pl.col("_prev_seq") == pl.col("stop_sequence") - 1)
        .with_columns(
            (pl.col("arrival_at") - pl.col("_prev_at")).dt.total_seconds().alias("_s"),
            pl.col("_prev_at").dt.convert_time_zone(timezone).dt.hour().cast(pl.Int8).alias("hour"),
        )
        .filter(pl.col("_s") > 0)
    )
    return (
        seg.group_by(SEGMENT_KEY)
        .agg(
            pl.col("_s").median().alias("learned_seg_s"),
            pl.len().cast(pl.Int32).alias("n_samples"),
        )
        .filter(pl.col("n_samples") >= min_samples)
    )


def build_trip_stop_times(
    trips: pl.DataFrame, trip_stops: pl.DataFrame, segments: pl.DataFrame, timezone: str
) -> pl.DataFrame:
    """Every stop of every trip of the day with planned and learned times.

    `trips`: scheduled_trips; `trip_stops`: per template trip (network.trip_stops);
    `segments`: `build_segment_times`. Output per (trip_id, stop_sequence): stop_id,
    stop_dist_m (along the shape, m), planned_arrival_s / planned_departure_s (epoch s),
    sched_seg_s (timetable seconds from the previous stop's arrival), learned_seg_s (learned
    seconds for that segment at the planned hour, the timetable's where no history), and the
    cumulative `sched_cum_s` / `learned_cum_s` from the first stop (seconds).
    """
    start = (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("_start_s")
    out = (
        trips.select("trip_id", "template_trip_id", start)
        .join(trip_stops, on="template_trip_id")
        .sort("trip_id", "stop_sequence")
        .with_columns(
            (pl.col("_start_s") + pl.col("arrival_offset_s")).alias("planned_arrival_s"),
            (pl.col("_start_s") + pl.col("departure_offset_s")).alias("planned_departure_s"),
            pl.col("stop_id").shift(1).over("trip_id").alias("from_stop_id"),
        )
        .with_columns(
            pl.col("planned_arrival_s").diff().over("trip_id").fill_null(0.0).alias("sched_seg_s"),
            pl.from_epoch(pl.col("planned_arrival_s").shift(1).over("trip_id").cast(pl.Int64))
            .dt.replace_time_zone("UTC")
            .dt.convert_time_zone(timezone)
            .dt.hour()
            .cast(pl.Int8)
            .alias("hour"),
        )
        .join(segments.select(*SEGMENT_KEY, "learned_seg_s"), on=SEGMENT_KEY, how="left")
        .with_columns(
            pl.when(pl.col("from_stop_id").is_null())
            .then(0.0)
            .otherwise(pl.col("learned_seg_s").fill_null(pl.col("sched_seg_s")))
            .alias("learned_seg_s")
        )
        .with_columns(
            pl.col("sched_seg_s").cum_sum().over("trip_id").alias("sched_cum_s"),
            pl.col("learned_seg_s").cum_sum().over("trip_id").alias("learned_cum_s"),
        )
    )
    return out.select(
        "trip_id",
        pl.col("stop_sequence").cast(pl.Int32),
        "stop_id",
        "stop_dist_m",
        "planned_arrival_s",
        "planned_departure_s",
        "sched_seg_s",
        "learned_seg_s",
        "sched_cum_s",
        "learned_cum_s",
    ).sort("trip_id", "stop_sequence")
