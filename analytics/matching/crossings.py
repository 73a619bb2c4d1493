"""When a vehicle passed a position along its shape, from the pings around it.

A track is a run's pings with monotone progress (`prog_m`, the running maximum of the position
along the shape, so GPS noise at a standstill never moves it backwards). The vehicle *arrives*
at a target when its progress reaches it and *leaves* when progress clears it by
`clearance_m`; each instant is extrapolated from the ping beyond the crossing at the speed of
the adjacent step, and clipped between the two pings around the crossing — a bus that stood at
a stop left it some time between its last ping there and its first ping away.
"""

from __future__ import annotations

import polars as pl

RUN_KEY = ["vehicle_id", "run_index"]
"""a run of a day's matching (and its track): its vehicle and its number in the vehicle's day"""
MIN_SPEED_M_S = 1.0  # below this a step says nothing about when the crossing happened
MAX_SPEED_M_S = 30.0


def group_start(*cols: str) -> pl.Expr:
    """True on the first row of each group of a frame sorted by `cols`."""
    return pl.any_horizontal([pl.col(c) != pl.col(c).shift(1) for c in cols]).fill_null(True)


GROUP_START = "is_group_start"
"""the column `group_start` is written to, which `prev_in_group` and its kin read"""


def prev_in_group(x: pl.Expr) -> pl.Expr:
    """`x` of the previous row in the same group (null at a group start); needs a
    `GROUP_START` column from `group_start` on a frame sorted by group. Much cheaper than
    `shift().over()` with thousands of groups."""
    return pl.when(~pl.col(GROUP_START)).then(x.shift(1))


def next_in_group(x: pl.Expr) -> pl.Expr:
    """`x` of the next row in the same group (null at a group end); see `prev_in_group`."""
    return pl.when(~pl.col(GROUP_START).shift(-1).fill_null(True)).then(x.shift(-1))


def cum_max_in_group(x: pl.Expr) -> pl.Expr:
    """Running maximum of `x` (metres) within each group (needs `GROUP_START`, see
    `prev_in_group`).

    One global running maximum of the millimetres lifted by a step per group larger than their
    span (exact integers: no group sees the one before it) finds the row holding each running
    maximum; its own value is carried forward, so results are values of `x` itself (equal
    positions stay equal: ties between identical itineraries and anchors placed exactly at a
    terminal decide runs). A fraction of the cost of a windowed `cum_max().over()`."""
    mm = (x * 1000.0).round().cast(pl.Int64)
    lo = mm.min()
    lifted = mm - lo + pl.col(GROUP_START).cast(pl.Int64).cum_sum() * (mm.max() - lo + 1)
    held = pl.when(lifted == lifted.cum_max()).then(x).forward_fill()
    return pl.when(x.is_not_null()).then(held)


def build_track(run_pings: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """Add per-ping step speeds to a track: `v_prev_m_s`, `v_next_m_s`, `t_prev_s`, `t_next_s`.

    Input: key columns, `t_s` (epoch seconds) and `prog_m` (monotone along the shape, metres),
    sorted by key and time.
    """
    prog, t = pl.col("prog_m"), pl.col("t_s")
    v_prev = ((prog - prev_in_group(prog)) / (t - prev_in_group(t))).clip(
        MIN_SPEED_M_S, MAX_SPEED_M_S
    )
    return (
        run_pings.with_columns(group_start(*key).alias(GROUP_START))
        .with_columns(v_prev.alias("v_prev_m_s"))
        .with_columns(
            next_in_group(pl.col("v_prev_m_s")).alias("v_next_m_s"),
            prev_in_group(t).alias("t_prev_s"),
            next_in_group(t).alias("t_next_s"),
        )
        .drop(GROUP_START)
    )


def compute_crossings(
    track: pl.DataFrame, targets: pl.DataFrame, key: list[str], clearance_m: float
) -> pl.DataFrame:
    """For each target (key columns + `target_m`), when the track arrived at and left it.

    Adds `arrive_s` and `leave_s` (epoch seconds, null when the track never got there) and
    `nearest_ping_m` (along-shape distance from the target to the nearest ping of the track).
    The rule stated on frames; matching runs it on arrays (`stop_visits.compute_run_crossings`,
    checked against this one by the tests).
    """
    tr = track.select(
        *key, "t_s", "prog_m", "v_prev_m_s", "v_next_m_s", "t_prev_s", "t_next_s"
    ).sort("prog_m")
    tg = targets.with_row_index("target_row").sort("target_m")
    # arrival: the last ping before the target, moving on at its incoming speed
    before = tg.join_asof(
        tr.with_columns(pl.col("prog_m").alias("before_m")),
        left_on="target_m",
        right_on="prog_m",
        by=key,
        strategy="backward",
        allow_exact_matches=False,
        # sorted by progress within each key; Polars cannot check that with `by`
        check_sortedness=False,
    ).select(
        "target_row",
        # no ping beyond the target: the track never reached it
        pl.when(pl.col("t_next_s").is_not_null())
        .then(
            (
                pl.col("t_s")
                + (pl.col("target_m") - pl.col("before_m"))
                / pl.coalesce("v_prev_m_s", "v_next_m_s", pl.lit(MIN_SPEED_M_S))
            ).clip(pl.col("t_s"), pl.col("t_next_s"))
        )
        .alias("arrive_s"),
        (pl.col("target_m") - pl.col("before_m")).alias("gap_before_m"),
    )
    # departure: the first ping clear of the target, extrapolated back at its outgoing speed
    clear = tg.with_columns((pl.col("target_m") + clearance_m).alias("clear_m"))
    after = clear.join_asof(
        tr.with_columns(pl.col("prog_m").alias("after_m")),
        left_on="clear_m",
        right_on="prog_m",
        by=key,
        strategy="forward",
        allow_exact_matches=False,
        # sorted by progress within each key; Polars cannot check that with `by`
        check_sortedness=False,
    ).select(
        "target_row",
        (
            pl.col("t_s")
            - (pl.col("after_m") - pl.col("target_m"))
            / pl.coalesce("v_next_m_s", "v_prev_m_s", pl.lit(MIN_SPEED_M_S))
        )
        .clip(pl.coalesce("t_prev_s", "t_s"), pl.col("t_s"))
        .alias("leave_s"),
    )
    near = tg.join_asof(
        tr.with_columns(pl.col("prog_m").alias("nearest_m")),
        left_on="target_m",
        right_on="prog_m",
        by=key,
        strategy="nearest",
        check_sortedness=False,
    ).select("target_row", (pl.col("nearest_m") - pl.col("target_m")).abs().alias("nearest_ping_m"))
    out = (
        tg.join(before, on="target_row", how="left")
        .join(after, on="target_row", how="left")
        .join(near, on="target_row", how="left")
        .sort("target_row")
    )
    # a target before the first ping (the run started past it) has no arrival;
    # the vehicle reached it no later than it left it
    return out.with_columns(pl.min_horizontal("arrive_s", "leave_s").alias("arrive_s")).drop(
        "target_row", "gap_before_m"
    )
