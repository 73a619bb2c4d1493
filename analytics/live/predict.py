"""Where each vehicle is on its trip, its delay, and predicted arrivals at the stops ahead.

Three predictions are made for every stop ahead (the backtest compares them):
- `timetable_s`: the planned arrival (what a passenger without real time sees);
- `constant_delay_s`: the planned arrival plus the delay now;
- `predicted_s` (Pontual's): the learned travel times from the vehicle's position, with the
  constant-delay estimate weighted by exp(-h / delay_decay_s) at h seconds ahead, so the
  current delay decays toward the learned pattern. Where no history exists the learned times
  are the timetable's, and the prediction falls back to the timetable's running times.
The next trips of the vehicle's block start at their planned time plus the terminal's learned
departure offset, or after the previous trip's predicted arrival plus the terminal's learned
layover when that is later (`analytics.live.layovers`; the minimum layover and no offset where
history taught nothing), never before their planned time.
"""

from __future__ import annotations

import math

import polars as pl

PREDICTION_COLUMNS = (
    "vehicle_id",
    "trip_id",
    "stop_sequence",
    "stop_id",
    "block_order",
    "planned_arrival_s",
    "timetable_s",
    "constant_delay_s",
    "predicted_s",
)


def compute_trip_positions(vehicles: pl.DataFrame, stop_times: pl.DataFrame) -> pl.DataFrame:
    """Each vehicle's place on its trip and its delay.

    `vehicles`: vehicle_id, trip_id, t_s (time of the fix, epoch s), dist_m (along the shape).
    `stop_times`: `build_trip_stop_times`. Output: the input plus `stop_index` (sequence of
    the last stop passed), `frac` (share of the next segment run, 0-1), `planned_here_s`
    (planned time at this position, epoch s), `delay_s` (t_s - planned_here_s, + late) and
    `end_dist_m` (the trip's last stop along the shape, m).
    """
    st = stop_times.select(
        "trip_id",
        "stop_sequence",
        "stop_dist_m",
        "planned_arrival_s",
        "planned_departure_s",
    )
    joined = vehicles.select("vehicle_id", "trip_id", "dist_m").join(st, on="trip_id")
    behind = (
        joined.filter(pl.col("stop_dist_m") <= pl.col("dist_m"))
        .sort("stop_sequence")
        .group_by("vehicle_id")
        .last()
        .select(
            "vehicle_id",
            pl.col("stop_sequence").alias("stop_index"),
            pl.col("stop_dist_m").alias("_d0"),
            pl.col("planned_departure_s").alias("_t0"),
        )
    )
    ahead = (
        joined.filter(pl.col("stop_dist_m") > pl.col("dist_m"))
        .sort("stop_sequence")
        .group_by("vehicle_id")
        .first()
        .select(
            "vehicle_id",
            pl.col("stop_dist_m").alias("_d1"),
            pl.col("planned_arrival_s").alias("_t1"),
        )
    )
    ends = st.group_by("trip_id").agg(
        pl.col("stop_dist_m").max().alias("end_dist_m"),
        pl.col("stop_sequence").min().alias("_first_seq"),
    )
    frac = (
        ((pl.col("dist_m") - pl.col("_d0")) / (pl.col("_d1") - pl.col("_d0")).clip(lower_bound=1.0))
        .clip(0.0, 1.0)
        .fill_null(0.0)
    )
    out = (
        vehicles.join(behind, on="vehicle_id", how="left")
        .join(ahead, on="vehicle_id", how="left")
        .join(ends, on="trip_id", how="left")
        .with_columns(
            pl.col("stop_index").fill_null(pl.col("_first_seq") - 1),
            frac.alias("frac"),
        )
        .with_columns(
            pl.coalesce(
                pl.col("_t0") + pl.col("frac") * (pl.col("_t1") - pl.col("_t0")),
                pl.col("_t1"),
                pl.col("_t0"),
            ).alias("planned_here_s")
        )
        .with_columns((pl.col("t_s") - pl.col("planned_here_s")).alias("delay_s"))
    )
    return out.drop("_d0", "_t0", "_d1", "_t1", "_first_seq")


def compute_stop_predictions(
    positions: pl.DataFrame,
    stop_times: pl.DataFrame,
    trips: pl.DataFrame,
    *,
    delay_decay_s: float,
    min_layover_s: float,
    next_trips: int,
    layovers: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Predicted arrivals at the remaining stops of each vehicle's trip and its block's next trips.

    `positions`: `compute_trip_positions` rows (vehicle_id, trip_id, t_s, stop_index, frac,
    delay_s; optional arrived_s: when a laying-over vehicle reached its trip's terminal, and
    waiting_s: the time of its latest fix while it is still there, since it leaves no sooner).
    `trips`: scheduled_trips (trip_id, block_id, planned_start_at). `layovers`:
    `analytics.live.layovers.build_trip_layovers` (layover_s, departure_offset_s per trip);
    without it every next trip gets `min_layover_s` and no offset. Output columns
    `PREDICTION_COLUMNS`: block_order 0 for the current trip, 1.. for the next ones; times in
    epoch seconds.
    """
    st = stop_times.select(
        "trip_id", "stop_sequence", "stop_id", "planned_arrival_s", "learned_seg_s", "learned_cum_s"
    )
    cur = positions.select("vehicle_id", "trip_id", "t_s", "stop_index", "frac", "delay_s")
    here = (
        cur.join(st, on="trip_id")
        .filter(pl.col("stop_sequence") <= pl.col("stop_index") + 1)
        .sort("stop_sequence")
        .group_by("vehicle_id")
        .agg(
            pl.col("learned_cum_s").last().alias("_cum_next"),
            pl.col("learned_seg_s").last().alias("_seg_next"),
            pl.col("stop_sequence").last().alias("_next_seq"),
        )
    )
    ahead = (
        cur.join(here, on="vehicle_id")
        .join(st, on="trip_id")
        .filter(
            (pl.col("stop_sequence") >= pl.col("_next_seq"))
            & (pl.col("stop_sequence") > pl.col("stop_index"))
        )
        .with_columns(
            # learned seconds from here: the rest of the current segment, then whole segments
            (
                pl.col("learned_cum_s")
                - pl.col("_cum_next")
                + (1.0 - pl.col("frac")) * pl.col("_seg_next")
            )
            .clip(lower_bound=0.0)
            .alias("_ahead_s")
        )
    )
    weight = (-pl.col("_ahead_s") / delay_decay_s).exp() if delay_decay_s > 0 else pl.lit(0.0)
    current = ahead.select(
        "vehicle_id",
        "trip_id",
        "stop_sequence",
        "stop_id",
        pl.lit(0, pl.Int32).alias("block_order"),
        "planned_arrival_s",
        pl.col("planned_arrival_s").alias("timetable_s"),
        (pl.col("planned_arrival_s") + pl.col("delay_s")).alias("constant_delay_s"),
        (
            weight * (pl.col("planned_arrival_s") + pl.col("delay_s"))
            + (1.0 - weight) * (pl.col("t_s") + pl.col("_ahead_s"))
        ).alias("predicted_s"),
    )
    parts = [current]
    # next trips of the block, chained through the predicted end of the previous one
    ends = current.group_by("vehicle_id").agg(
        pl.col("predicted_s").max().alias("_end_s"),
        pl.col("constant_delay_s").max().alias("_end_const_s"),
    )
    plan = trips.select(
        "trip_id",
        "block_id",
        (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("_start_s"),
    ).filter(pl.col("block_id").is_not_null())
    # a vehicle past its trip's last stop (laying over) ended it when it arrived at the
    # terminal (`arrived_s`): its next departure is that arrival plus the layover, never
    # earlier than planned. Dating the end from its last fix instead pushed the next trip
    # later with every minute the engine had not yet seen it leave (up to an hour late on
    # the WMATA day, where the real departure was on time)
    arrived = pl.col("arrived_s") if "arrived_s" in positions.columns else pl.col("t_s")
    waiting = pl.col("waiting_s") if "waiting_s" in positions.columns else pl.lit(None, pl.Float64)
    prev = (
        positions.select(
            "vehicle_id", "trip_id", "t_s", arrived.alias("_arrived_s"), waiting.alias("_wait_s")
        )
        .join(plan, on="trip_id")
        .join(ends, on="vehicle_id", how="left")
        .with_columns(
            pl.col("_end_s").fill_null(pl.col("_arrived_s")).fill_null(pl.col("t_s")),
            pl.col("_end_const_s").fill_null(pl.col("_arrived_s")).fill_null(pl.col("t_s")),
        )
    )
    rest = (
        layovers.select("trip_id", "layover_s", "departure_offset_s")
        if layovers is not None
        else pl.DataFrame(
            schema={"trip_id": pl.String, "layover_s": pl.Float64, "departure_offset_s": pl.Float64}
        )
    )
    totals = st.group_by("trip_id").agg(pl.col("learned_cum_s").max().alias("_dur_s"))
    sched = stop_times.group_by("trip_id").agg(
        (pl.col("planned_arrival_s").max() - pl.col("planned_arrival_s").min()).alias("_plan_dur_s")
    )
    for order in range(1, next_trips + 1):
        nxt = (
            prev.select("vehicle_id", "block_id", "_start_s", "_end_s", "_end_const_s", "_wait_s")
            .join(
                plan.rename({"trip_id": "_next", "_start_s": "_next_start_s"}),
                on="block_id",
            )
            .filter(pl.col("_next_start_s") > pl.col("_start_s"))
            .sort("_next_start_s")
            .group_by("vehicle_id")
            .first()
            .join(totals.rename({"trip_id": "_next"}), on="_next", how="left")
            .join(sched.rename({"trip_id": "_next"}), on="_next", how="left")
            .join(rest.rename({"trip_id": "_next"}), on="_next", how="left")
            .with_columns(
                pl.col("layover_s").fill_null(min_layover_s),
                # never earlier than planned, whatever the terminal's habit
                pl.col("departure_offset_s").fill_null(0.0).clip(lower_bound=0.0),
            )
            .with_columns(
                # the terminal's habit when ready in time, the recovery when late, and a
                # vehicle still waiting at the terminal leaves no sooner than now
                pl.max_horizontal(
                    pl.col("_next_start_s") + pl.col("departure_offset_s"),
                    pl.col("_end_s") + pl.col("layover_s"),
                    "_wait_s",
                ).alias("_pred_start_s"),
                # the constant-delay baseline keeps the plain rule (timetable, minimum layover)
                pl.max_horizontal("_next_start_s", pl.col("_end_const_s") + min_layover_s).alias(
                    "_const_start_s"
                ),
            )
        )
        if nxt.height == 0:
            break
        stops = nxt.select(
            "vehicle_id",
            pl.col("_next").alias("trip_id"),
            "_next_start_s",
            "_pred_start_s",
            "_const_start_s",
        ).join(st, on="trip_id")
        parts.append(
            stops.select(
                "vehicle_id",
                "trip_id",
                "stop_sequence",
                "stop_id",
                pl.lit(order, pl.Int32).alias("block_order"),
                "planned_arrival_s",
                pl.col("planned_arrival_s").alias("timetable_s"),
                (
                    pl.col("planned_arrival_s") + pl.col("_const_start_s") - pl.col("_next_start_s")
                ).alias("constant_delay_s"),
                (pl.col("_pred_start_s") + pl.col("learned_cum_s")).alias("predicted_s"),
            )
        )
        prev = nxt.select(
            "vehicle_id",
            pl.col("_next").alias("trip_id"),
            "block_id",
            pl.col("_next_start_s").alias("_start_s"),
            (pl.col("_pred_start_s") + pl.col("_dur_s")).alias("_end_s"),
            (pl.col("_const_start_s") + pl.col("_plan_dur_s")).alias("_end_const_s"),
            pl.lit(None, pl.Float64).alias("_wait_s"),
        )
    return pl.concat(parts, how="vertical_relaxed").sort(
        "vehicle_id", "block_order", "stop_sequence"
    )


def horizon_weight(horizon_s: float, delay_decay_s: float) -> float:
    """Weight of the constant-delay estimate h seconds ahead (documentation and tests)."""
    return math.exp(-horizon_s / delay_decay_s) if delay_decay_s > 0 else 0.0
