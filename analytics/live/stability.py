"""Hysteresis of the live assignment: a vehicle keeps its trip until evidence against it
accumulates.

The assignment is recomputed from scratch at every refresh (`runs.match_current_runs`,
`continuity.match_block_continuations`); on its own it follows each refresh's best guess, and
on a real day (WMATA, 2026-02-16) it moved a vehicle between its trip and a trip of another
block from one update to the next. Here the previous assignment is *held* while the vehicle's
latest fixes still lie on its trip's shape and do not run backwards along it: a different trip
(or none) replaces it only when proposed at `switch_after_refreshes` refreshes in a row, or
at once when the vehicle has left the held trip's shape or reached its terminal.
"""

from __future__ import annotations

import polars as pl

from analytics.live.continuity import ASSIGNED_SCHEMA
from analytics.matching.network import Network
from analytics.matching.options import MatchOptions
from analytics.matching.project import project_pings

PENDING_SCHEMA: dict[str, pl.DataType] = {"vehicle_id": pl.String(), "n_pending": pl.Int32()}


def locate_on_held_trips(
    pings: pl.DataFrame,
    held: pl.DataFrame,
    trips: pl.DataFrame,
    network: Network,
    options: MatchOptions,
    tail: int = 5,
) -> pl.DataFrame:
    """Where each vehicle's latest fix lies along the shape of the trip it holds.

    `pings`: recent pings (vehicle_id, t_s, x_m, y_m); `held`: `ASSIGNED_SCHEMA` rows of the
    previous refresh; `trips`: scheduled_trips (trip_id, shape_id). The last `tail` fixes are
    projected (one fix alone is ambiguous on a loop). Output: vehicle_id, t_s (the latest
    fix), dist_m (along the held trip's shape, m; absent vehicles are off it), destination_dist_m.
    """
    mine = (
        pings.select("vehicle_id", "t_s", "x_m", "y_m")
        .join(held.select("vehicle_id"), on="vehicle_id", how="semi")
        .sort("vehicle_id", "t_s")
        .group_by("vehicle_id", maintain_order=True)
        .tail(tail)
        .with_row_index("row")
        .with_columns(pl.col("row").cast(pl.Int64))
    )
    if mine.height == 0:
        return pl.DataFrame(
            schema={
                "vehicle_id": pl.String,
                "t_s": pl.Float64,
                "dist_m": pl.Float64,
                "destination_dist_m": pl.Float64,
            }
        )
    group = mine["vehicle_id"].cast(pl.Categorical).to_physical().to_numpy()
    cand = project_pings(
        mine["x_m"].to_numpy(), mine["y_m"].to_numpy(), mine["t_s"].to_numpy(), group, network,
        options,
    )  # fmt: skip
    shapes = network.shapes.select("shape_idx", "shape_id", "destination_dist_m")
    want = (
        held.select("vehicle_id", "trip_id")
        .join(trips.select("trip_id", "shape_id"), on="trip_id")
        .join(shapes, on="shape_id")
    )
    last = mine.group_by("vehicle_id").agg(pl.col("row").max())
    return (
        last.join(mine.select("row", "t_s"), on="row")
        .join(want, on="vehicle_id")
        .join(cand.select("row", "shape_idx", "dist_m"), on=["row", "shape_idx"])
        .select("vehicle_id", "t_s", "dist_m", "destination_dist_m")
    )


def hold_assignments(
    previous: pl.DataFrame,
    proposed: pl.DataFrame,
    located: pl.DataFrame,
    pending: pl.DataFrame,
    active: pl.DataFrame,
    *,
    switch_after_refreshes: int,
    backtrack_m: float,
    terminal_radius_m: float,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The assignment after hysteresis, and the switch proposals counted so far.

    `previous`, `proposed`: `ASSIGNED_SCHEMA` (the last published assignment; this refresh's
    fresh one). `located`: `locate_on_held_trips`. `pending`: `PENDING_SCHEMA` (refreshes in
    a row at which a vehicle's proposal differed from its held trip). `active`: vehicle_id of
    the vehicles heard recently. A held trip (not yet arrived) stays when its vehicle is
    still on its shape, no more than `backtrack_m` behind its last position, and the proposal
    to change it for another trip has been made fewer than `switch_after_refreshes` times in a
    row (refreshes proposing no trip do not count); the held row
    is moved on to the latest fix (ended_s, end_dist_m, is_arrived within
    `terminal_radius_m` of the destination). A trip held by one vehicle is taken from any
    other vehicle's proposal (the incumbent keeps it). Output: (`ASSIGNED_SCHEMA`,
    `PENDING_SCHEMA`).
    """
    prev = previous.filter(~pl.col("is_arrived")).join(active, on="vehicle_id", how="semi")
    same = prev.join(
        proposed.select("vehicle_id", "trip_id"), on=["vehicle_id", "trip_id"], how="semi"
    )
    contested = prev.join(same.select("vehicle_id"), on="vehicle_id", how="anti")
    # only another trip proposed counts against the held one: a refresh that proposes none
    # (the run cut short, the corridor shared) is no evidence while the fixes stay on its shape
    other = proposed.select("vehicle_id", pl.lit(1).alias("_other"))
    counts = (
        contested.select("vehicle_id")
        .join(pending, on="vehicle_id", how="left")
        .join(other, on="vehicle_id", how="left")
        .with_columns(
            (pl.col("n_pending").fill_null(0) + pl.col("_other").fill_null(0))
            .cast(pl.Int32)
            .alias("n_pending")
        )
        .drop("_other")
    )
    kept = (
        contested.join(counts, on="vehicle_id")
        .join(located.rename({"t_s": "_t", "dist_m": "_d"}), on="vehicle_id")
        .filter(
            (pl.col("n_pending") < switch_after_refreshes)
            & (pl.col("_d") >= pl.col("end_dist_m") - backtrack_m)
        )
        .with_columns(
            pl.max_horizontal("ended_s", "_t").alias("ended_s"),
            pl.max_horizontal("end_dist_m", "_d").alias("end_dist_m"),
        )
        .with_columns(
            (pl.col("end_dist_m") >= pl.col("destination_dist_m") - terminal_radius_m).alias(
                "is_arrived"
            )
        )
        .select(list(ASSIGNED_SCHEMA))
    )
    rest = proposed.join(kept.select("vehicle_id"), on="vehicle_id", how="anti").join(
        kept.select("trip_id"), on="trip_id", how="anti"
    )
    assigned = pl.concat([kept, rest.select(list(ASSIGNED_SCHEMA))])
    still = counts.join(kept.select("vehicle_id"), on="vehicle_id", how="semi")
    return assigned, still.select(list(PENDING_SCHEMA))
