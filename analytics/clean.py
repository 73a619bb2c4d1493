"""Clean one vehicle-day trace: drop duplicates, order by event time, flag outliers and gaps.

Every kept row keeps its `ping_id`, so everything downstream traces back to the stored pings.
"""

from __future__ import annotations

import polars as pl

from analytics.options import MatchOptions


def clean_pings(pings: pl.DataFrame, options: MatchOptions) -> pl.DataFrame:
    """Return the pings deduplicated and ordered, with quality flags.

    Input: ping_id, vehicle_id, event_at, x_m, y_m (projected, metres) and any other columns.
    Duplicates (same vehicle and event time) keep the lowest ping_id. Added columns:
    `t_s` (event time as epoch seconds, float), `dt_s` (seconds since the previous ping),
    `is_gap_before` (dt_s above `gap_s`), `is_outlier` (a jump: the implied speed to both the
    previous and the next ping exceeds `max_speed_m_s`, or the path through the fix is longer
    than the straight line between its neighbours by more than `spike_m`: it leaps away and
    back).
    """
    df = (
        pings.sort("vehicle_id", "event_at", "ping_id")
        .unique(["vehicle_id", "event_at"], keep="first", maintain_order=True)
        .with_columns((pl.col("event_at").dt.epoch("us") / 1e6).alias("t_s"))
    )
    over = "vehicle_id"
    dt_prev = pl.col("t_s").diff().over(over)
    dt_next = -pl.col("t_s").diff(-1).over(over)
    step_prev = ((pl.col("x_m").diff().pow(2) + pl.col("y_m").diff().pow(2)).sqrt()).over(over)
    step_next = ((pl.col("x_m").diff(-1).pow(2) + pl.col("y_m").diff(-1).pow(2)).sqrt()).over(over)
    skip = (
        (
            (pl.col("x_m").shift(-1) - pl.col("x_m").shift(1)).pow(2)
            + (pl.col("y_m").shift(-1) - pl.col("y_m").shift(1)).pow(2)
        )
        .sqrt()
        .over(over)
    )
    spike = (step_prev + step_next - skip) > options.spike_m
    v_prev = step_prev / dt_prev.clip(lower_bound=1.0)
    v_next = step_next / dt_next.clip(lower_bound=1.0)
    vmax = options.max_speed_m_s
    df = df.with_columns(
        dt_prev.alias("dt_s"),
        (dt_prev > options.gap_s).fill_null(False).alias("is_gap_before"),
        (
            (v_prev.fill_null(0.0) > vmax) & (v_next.fill_null(float("inf")) > vmax)
            | (v_prev.is_null() & (v_next > vmax))
            | spike.fill_null(False)
        )
        .fill_null(False)
        .alias("is_outlier"),
    )
    return df
