"""Block continuity: a vehicle that finished trip k of its block is expected on trip k + 1.

The batch matcher cuts runs from whole traces; live, the run a vehicle has just begun is short
and a corridor shared with other lines can hide it for many minutes (a longer share of a short
line's itinerary beats it), so the vehicle would look idle at its terminal while it already
carries passengers. The block is the strongest prior a timetable gives: after trip k the
vehicle runs the next trip of the same block. This module checks that expectation against the
pings since trip k ended — on the next trip's shape, past the origin terminal's geofence, moving
forward — and, when they agree, places the vehicle on that trip (TransitClock's "assignment by
block", with the evidence test of the batch matcher's geometry).
"""

from __future__ import annotations

import polars as pl

from analytics.matching.network import Network
from analytics.matching.options import MatchOptions
from analytics.matching.project import project_pings

ASSIGNED_SCHEMA: dict[str, pl.DataType] = {
    "vehicle_id": pl.String(),
    "trip_id": pl.String(),
    "started_s": pl.Float64(),
    "ended_s": pl.Float64(),
    "end_dist_m": pl.Float64(),
    "is_arrived": pl.Boolean(),
    "departure_delay_s": pl.Int32(),
}


def build_block_expectations(
    completed: pl.DataFrame, trips: pl.DataFrame, open_trips: pl.DataFrame
) -> pl.DataFrame:
    """The trip each vehicle should run next: the one after its last completed trip in the block.

    `completed`: trip_id, vehicle_id, ended_s (trips finished today). `trips`: scheduled_trips.
    `open_trips`: trip_id of trips nobody has finished. Output: vehicle_id, trip_id, shape_id,
    plan_start_s (epoch s), after_s (when the previous trip ended: evidence counts after it).
    """
    plan = trips.select(
        "trip_id",
        "block_id",
        "shape_id",
        (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("plan_start_s"),
    )
    last = (
        completed.sort("ended_s")
        .group_by("vehicle_id")
        .last()
        .join(
            plan.select("trip_id", "block_id", pl.col("plan_start_s").alias("_prev_s")),
            on="trip_id",
        )
        .filter(pl.col("block_id").is_not_null())
        .select("vehicle_id", "block_id", "_prev_s", pl.col("ended_s").alias("after_s"))
    )
    return (
        last.join(plan.join(open_trips.select("trip_id"), on="trip_id", how="semi"), on="block_id")
        .filter(pl.col("plan_start_s") > pl.col("_prev_s"))
        .sort("plan_start_s")
        .group_by("vehicle_id")
        .first()
        .select("vehicle_id", "trip_id", "shape_id", "plan_start_s", "after_s")
    )


def match_block_continuations(
    pings: pl.DataFrame,
    expected: pl.DataFrame,
    open_trips: pl.DataFrame,
    network: Network,
    options: MatchOptions,
    claimed: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Vehicles whose pings since their last trip show them on the expected next trip.

    `pings`: recent pings (vehicle_id, t_s, x_m, y_m); `expected`: `build_block_expectations`.
    A vehicle qualifies when its latest ping lies on the trip's shape (within the on-route
    buffer), at least two pings after `after_s` lie past the origin terminal's geofence, and
    they progress forward by more than `clearance_m` (counted from the start of the final
    forward progress: pings later passed again from behind are the layover, not the trip), and the departure fits the expected trip
    about as well as any other open trip of its shape (`open_trips`: scheduled_trips rows):
    its departure cost (deviation, early seconds weighed `early_cost_factor`) less
    `block_bonus_s` is at most the best other trip's — so a block swapped at a cold start is
    not carried on forever. A trip another active vehicle's block expects of it (`claimed`:
    vehicle_id, trip_id) is no better explanation: a late bus keeps its own block's trip
    rather than take the next bus's. Output `ASSIGNED_SCHEMA`: started_s is
    the first ping past the geofence (departure, epoch s), end_dist_m the latest position along
    the shape (m), is_arrived when it is inside the destination geofence, departure_delay_s
    against the planned start (s, + late).
    """
    if expected.height == 0 or pings.height == 0:
        return pl.DataFrame(schema=ASSIGNED_SCHEMA)
    mine = (
        pings.select("vehicle_id", "t_s", "x_m", "y_m")
        .join(expected.select("vehicle_id", "after_s"), on="vehicle_id")
        .filter(pl.col("t_s") > pl.col("after_s"))
        .sort("vehicle_id", "t_s")
        .with_row_index("row")
        .with_columns(pl.col("row").cast(pl.Int64))
    )
    if mine.height == 0:
        return pl.DataFrame(schema=ASSIGNED_SCHEMA)
    group = mine["vehicle_id"].cast(pl.Categorical).to_physical().to_numpy()
    cand = project_pings(
        mine["x_m"].to_numpy(), mine["y_m"].to_numpy(), mine["t_s"].to_numpy(), group, network,
        options,
    )  # fmt: skip
    shapes = network.shapes.select("shape_idx", "shape_id", "origin_dist_m", "destination_dist_m")
    want = expected.join(shapes, on="shape_id").select(
        "vehicle_id", "trip_id", "shape_idx", "plan_start_s", "origin_dist_m", "destination_dist_m"
    )
    latest = mine.group_by("vehicle_id").agg(pl.col("row").max().alias("_last_row"))
    on_shape = (
        mine.select("row", "vehicle_id", "t_s")
        .join(want, on="vehicle_id")
        .join(cand.select("row", "shape_idx", "dist_m"), on=["row", "shape_idx"])
        .join(latest, on="vehicle_id")
    )
    r = options.terminal_radius_m
    past = on_shape.filter(pl.col("dist_m") > pl.col("origin_dist_m") + r).sort("vehicle_id", "t_s")
    # the departure is where the final forward progress begins: a vehicle laying over past
    # the geofence (or looping round the terminal) before it leaves is not yet on its trip,
    # and dating the departure from its first ping there makes an on-time trip look early
    later_min = (
        pl.col("dist_m").reverse().cum_min().reverse().shift(-1).over("vehicle_id", "trip_id")
    )
    past = past.with_columns(
        (pl.col("dist_m") > later_min + options.clearance_m).fill_null(False).alias("_back")
    ).with_columns(
        pl.when(pl.col("_back"))
        .then(pl.col("row"))
        .max()
        .over("vehicle_id", "trip_id")
        .fill_null(-1)
        .alias("_last_back")
    )
    out = (
        past.filter(pl.col("row") > pl.col("_last_back"))
        .group_by("vehicle_id", "trip_id", "plan_start_s", "destination_dist_m")
        .agg(
            pl.col("t_s").first().alias("started_s"),
            pl.col("t_s").last().alias("ended_s"),
            pl.col("dist_m").first().alias("_d0"),
            pl.col("dist_m").last().alias("end_dist_m"),
            pl.len().alias("_n"),
            (pl.col("row").last() == pl.col("_last_row").first()).alias("_is_latest"),
        )
        .filter(
            pl.col("_is_latest")
            & (pl.col("_n") >= 2)
            & (pl.col("end_dist_m") - pl.col("_d0") > options.clearance_m)
            # a deadhead along the shape hours before the trip is not the trip
            & ((pl.col("started_s") - pl.col("plan_start_s")).abs() <= options.match_window_s)
        )
    )
    dev = pl.col("started_s") - pl.col("_start_s")
    cost = pl.when(dev < 0).then(-dev * options.early_cost_factor).otherwise(dev)
    best_other = (
        out.select("vehicle_id", "trip_id", "started_s")
        .join(want.select("vehicle_id", "shape_idx"), on="vehicle_id")
        .join(
            open_trips.select(
                pl.col("trip_id").alias("_other"),
                (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("_start_s"),
                "shape_id",
            ).join(shapes.select("shape_id", "shape_idx"), on="shape_id"),
            on="shape_idx",
        )
        .filter(pl.col("_other") != pl.col("trip_id"))
        .join(
            (claimed if claimed is not None else expected).select(
                pl.col("trip_id").alias("_other"), pl.col("vehicle_id").alias("_claimant")
            ),
            on="_other",
            how="left",
        )
        .filter(pl.col("_claimant").is_null() | (pl.col("_claimant") == pl.col("vehicle_id")))
        .group_by("vehicle_id")
        .agg(cost.min().alias("_best_other"))
    )
    own = pl.col("started_s") - pl.col("plan_start_s")
    own_cost = pl.when(own < 0).then(-own * options.early_cost_factor).otherwise(own)
    out = (
        out.join(best_other, on="vehicle_id", how="left")
        .filter(
            (own_cost - options.block_bonus_s <= pl.col("_best_other"))
            | pl.col("_best_other").is_null()
        )
        # two vehicles expected on one trip (a block handed over): the better departure wins
        .sort(own_cost, "vehicle_id")
        .unique("trip_id", keep="first", maintain_order=True)
    )
    return out.select(
        "vehicle_id",
        "trip_id",
        "started_s",
        "ended_s",
        "end_dist_m",
        (pl.col("end_dist_m") >= pl.col("destination_dist_m") - r).alias("is_arrived"),
        (pl.col("started_s") - pl.col("plan_start_s"))
        .round()
        .cast(pl.Int32)
        .alias("departure_delay_s"),
    )
