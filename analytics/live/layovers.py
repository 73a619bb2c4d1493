"""Layovers (recovery at a terminal between two trips of a vehicle) learned from past
`stop_visits`, and what each trip of the day inherits from them.

Two facts decide when a vehicle leaves on its next trip, and history tells both per terminal
(the next trip's first stop):
- `learned_layover_s`: the recovery a vehicle takes when it arrives too late to leave on time
  (from its arrival at the previous trip's last stop to its departure from the next trip's
  first stop; terminal dwell and any repositioning included). Only pairs where the vehicle
  arrived with less than `min_layover_s` to spare teach it: there the layover, not the
  timetable, set the departure.
- `learned_departure_offset_s`: how late vehicles leave when they are ready in time (the
  terminal's habit: a driver who always leaves 30 s after the hour). Only pairs where the
  vehicle arrived with at least `min_layover_s` plus the learned layover to spare teach it.

With no history (a fresh city on its first day) or too few pairs at a terminal, the network's
median is used, and without that the method's defaults: the minimum layover of the options
and no offset, so the first day predicts exactly as the engine did before learning.
"""

from __future__ import annotations

import polars as pl

LAYOVER_COLUMNS = ("trip_id", "layover_s", "departure_offset_s", "is_layover_learned")


def build_layover_pairs(visits: pl.DataFrame, max_gap_s: float) -> pl.DataFrame:
    """Consecutive trips of one vehicle on one day with the time between them.

    `visits`: rows of `stop_visits`. A trip's end is its last stop's observed arrival, the next
    trip's start its first stop's departure (arrival when the matcher gave none). Pairs whose
    next planned departure is more than `max_gap_s` after the arrival are left out (a pull-in
    or a crew break, not a layover). Output: stop_id (first stop of the next trip),
    arrived_at (UTC), departed_at (UTC), planned_departure_at (UTC, next trip), slack_s
    (planned departure minus arrival, seconds: negative when it arrived after it), taken_s
    (departed_at minus arrived_at, seconds), departure_delay_s (departed_at minus planned,
    seconds, + late).
    """
    trip = ["service_date", "vehicle_id", "trip_id"]
    seen = visits.filter(pl.col("arrival_at").is_not_null() & ~pl.col("is_interpolated"))
    ends = (
        seen.sort("stop_sequence")
        .group_by(trip)
        .agg(
            pl.col("stop_sequence").first().alias("_first_seq"),
            pl.col("stop_id").first(),
            pl.coalesce("departure_at", "arrival_at").first().alias("departed_at"),
            pl.col("planned_departure_at").first(),
            pl.col("arrival_at").last().alias("arrived_at"),
            pl.col("stop_sequence").last().alias("_last_seq"),
        )
    )
    # a trip counts only when its first and last stops were both seen: a trip picked up or
    # lost midway says nothing of the terminal
    bounds = visits.group_by("trip_id").agg(
        pl.col("stop_sequence").min().alias("_min_seq"),
        pl.col("stop_sequence").max().alias("_max_seq"),
    )
    whole = (
        ends.join(bounds, on="trip_id")
        .filter(
            (pl.col("_first_seq") == pl.col("_min_seq"))
            & (pl.col("_last_seq") == pl.col("_max_seq"))
        )
        .sort("service_date", "vehicle_id", "planned_departure_at")
    )
    vehicle = ["service_date", "vehicle_id"]
    pairs = whole.with_columns(
        pl.col("arrived_at").shift(1).over(vehicle).alias("_prev_arrived_at")
    ).filter(pl.col("_prev_arrived_at").is_not_null())
    secs = lambda a, b: (pl.col(a) - pl.col(b)).dt.total_microseconds() / 1e6  # noqa: E731
    return (
        pairs.select(
            "stop_id",
            pl.col("_prev_arrived_at").alias("arrived_at"),
            "departed_at",
            "planned_departure_at",
            secs("planned_departure_at", "_prev_arrived_at").alias("slack_s"),
            secs("departed_at", "_prev_arrived_at").alias("taken_s"),
            secs("departed_at", "planned_departure_at").alias("departure_delay_s"),
        )
        .filter((pl.col("slack_s") <= max_gap_s) & (pl.col("taken_s") >= 0))
        .drop_nulls(["planned_departure_at"])
    )


def build_terminal_layovers(
    pairs: pl.DataFrame, min_layover_s: float, min_samples: int
) -> pl.DataFrame:
    """Learned layover and departure offset per terminal (see the module docstring).

    `pairs`: `build_layover_pairs`. Output: stop_id ('*' for the whole network's row),
    learned_layover_s, n_layover_samples, learned_departure_offset_s, n_offset_samples; a
    value is null where fewer than `min_samples` pairs taught it.
    """
    late = pairs.filter(pl.col("slack_s") < min_layover_s)
    net_layover = late["taken_s"].median() if late.height >= min_samples else None
    ready_after = min_layover_s + (float(net_layover) if net_layover is not None else 0.0)  # type: ignore[arg-type]
    ready = pairs.filter(pl.col("slack_s") >= ready_after)

    def per(frame: pl.DataFrame, value: str, name: str, n_name: str) -> pl.DataFrame:
        local = frame.group_by("stop_id").agg(
            pl.col(value).median().alias(name), pl.len().cast(pl.Int32).alias(n_name)
        )
        network = frame.select(
            pl.lit("*").alias("stop_id"),
            pl.col(value).median().alias(name),
            pl.len().cast(pl.Int32).alias(n_name),
        )
        return pl.concat([local, network]).with_columns(
            pl.when(pl.col(n_name) >= min_samples).then(pl.col(name)).alias(name)
        )

    return per(late, "taken_s", "learned_layover_s", "n_layover_samples").join(
        per(ready, "departure_delay_s", "learned_departure_offset_s", "n_offset_samples"),
        on="stop_id",
        how="full",
        coalesce=True,
    )


def build_trip_layovers(
    stop_times: pl.DataFrame, terminals: pl.DataFrame, min_layover_s: float
) -> pl.DataFrame:
    """What each trip of the day starts with when it follows another of its vehicle's trips.

    `stop_times`: `build_trip_stop_times`; `terminals`: `build_terminal_layovers`. Output
    `LAYOVER_COLUMNS` per trip: layover_s (its terminal's learned layover, else the network's,
    else `min_layover_s`; seconds), departure_offset_s (likewise, else 0), is_layover_learned
    (true when either came from history).
    """
    first = stop_times.sort("stop_sequence").group_by("trip_id").agg(pl.col("stop_id").first())
    network = terminals.filter(pl.col("stop_id") == "*")
    net_layover = network["learned_layover_s"][0] if network.height else None
    net_offset = network["learned_departure_offset_s"][0] if network.height else None
    local = terminals.filter(pl.col("stop_id") != "*").select(
        "stop_id", "learned_layover_s", "learned_departure_offset_s"
    )
    return (
        first.join(local, on="stop_id", how="left")
        .with_columns(
            pl.col("learned_layover_s").fill_null(pl.lit(net_layover, pl.Float64)),
            pl.col("learned_departure_offset_s").fill_null(pl.lit(net_offset, pl.Float64)),
        )
        .select(
            "trip_id",
            pl.col("learned_layover_s").fill_null(min_layover_s).alias("layover_s"),
            pl.col("learned_departure_offset_s").fill_null(0.0).alias("departure_offset_s"),
            (
                pl.col("learned_layover_s").is_not_null()
                | pl.col("learned_departure_offset_s").is_not_null()
            ).alias("is_layover_learned"),
        )
        .sort("trip_id")
    )
