"""Data coverage: was there data to judge a trip.

Unobserved is not failed (DESIGN.md). A trip without a matched GPS run is judged by:

- the operator's AVL feed: while no vehicle of the operator sends a fix for at least the
  profile's `evidence.feed_outage_min_s`, the feed is down (`compute_feed_outages`); a trip
  whose planned window lies in such an outage for at least `evidence.feed_down_min_share` is
  `not_evaluated`, never suppressed;
- the vehicle: a trip whose vehicle is not watched (`compute_watched`: the block's GPS vehicle
  ran its trips around it, or was on the air during it), on a day when a registered,
  non-reserve vehicle of the operator sent no fix at all (a dark vehicle; when the day has
  ticketing data, one that carried passengers), cannot be told apart from a trip run by that
  vehicle: it is `not_evaluated`;
- evidence besides GPS (ticketing, inspections): `analytics.matching.evidence`.

Reads the day's pings (as per-minute activity), the vehicle register, the trips and the
matched runs; returns per-vehicle activity and operators, the `avl_coverage` rows, each
trip's operator, the feed outages and each trip's share of feed up, the block vehicles,
whether each trip is watched and the dark vehicles per operator. Per day, vectorised.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from core.tables.matching import RUN_OUTCOMES

UNKNOWN_OPERATOR = "?"


ACTIVITY_DENSE_BINS_PER_PING = 4
"""`compute_ping_activity` counts fixes in a dense (vehicle x minute) table when it has at most
this many cells per ping (a city's day: ~1.2; a day of a few stray fixes a month apart would
not), else it groups"""


def compute_ping_activity(pings: pl.DataFrame) -> pl.DataFrame:
    """Fixes per vehicle and minute: vehicle_id, minute (epoch minutes), n_pings, first_s,
    last_s (epoch seconds of the minute's first and last fix), ping_operator_id (the operator
    the pings name, when they do). Small beside the pings: the day's coverage is computed
    from it.

    Pings without an operator, vehicle ids and instants all given (the store's), are counted
    in a dense table of (vehicle, minute) cells (`_dense_activity`: a third of the CPU of a
    group-by on a day's ~440 k pings); the rows come by vehicle, then minute. Otherwise, and
    when that table would be large (`ACTIVITY_DENSE_BINS_PER_PING`), a group-by (rows in no
    order): the same rows."""
    t = pl.col("event_at").dt.epoch("ms") / 1000.0
    if (
        "operator_id" not in pings.columns
        and pings.height > 0
        and not pings["vehicle_id"].has_nulls()
        and not pings["event_at"].has_nulls()
    ):
        dense = _dense_activity(pings, t)
        if dense is not None:
            return dense
    op = (
        [pl.col("operator_id").drop_nulls().first().alias("ping_operator_id")]
        if "operator_id" in pings.columns
        else [pl.lit(None, pl.String).alias("ping_operator_id")]
    )
    # grouped on the vehicle as a categorical (an integer code per id): three quarters of the
    # CPU of a group-by on the strings over a day's ~440 k pings
    return (
        pings.select(
            pl.col("vehicle_id").cast(pl.Categorical),
            t.alias("_t"),
            *([pl.col("operator_id")] if "operator_id" in pings.columns else []),
        )
        .with_columns((pl.col("_t") // 60).cast(pl.Int64).alias("minute"))
        .group_by("vehicle_id", "minute")
        .agg(
            pl.len().cast(pl.Int64).alias("n_pings"),
            pl.col("_t").min().alias("first_s"),
            pl.col("_t").max().alias("last_s"),
            *op,
        )
        .with_columns(pl.col("vehicle_id").cast(pl.String))
    )


def _dense_activity(pings: pl.DataFrame, t: pl.Expr) -> pl.DataFrame | None:
    """`compute_ping_activity` of pings without nulls in vehicle_id and event_at and without
    operator_id: each fix's cell (vehicle code x minutes since the first) in a table of counts,
    first and last instants (numpy's `bincount`, `minimum.at`, `maximum.at`), then the cells
    with fixes. None when the table would hold more than `ACTIVITY_DENSE_BINS_PER_PING` cells
    a ping. The instants and minutes are the group-by's expressions; the minimum and maximum
    of the same floats: the same values."""
    vehicles = pings["vehicle_id"].unique().sort()
    frame = pings.select(
        pl.col("vehicle_id").cast(pl.Enum(vehicles)).to_physical().alias("_v"), t.alias("_t")
    ).with_columns((pl.col("_t") // 60).cast(pl.Int64).alias("minute"))
    first_minute, last_minute = frame.select(
        pl.col("minute").min().alias("a"), pl.col("minute").max().alias("b")
    ).row(0)
    span = last_minute - first_minute + 1
    bins = vehicles.len() * span
    if bins > ACTIVITY_DENSE_BINS_PER_PING * pings.height:
        return None
    cell = frame["_v"].to_numpy().astype(np.int64) * span + (
        frame["minute"].to_numpy() - first_minute
    )
    t_s = frame["_t"].to_numpy()
    n_pings = np.bincount(cell, minlength=bins)
    first_s = np.full(bins, np.inf)
    last_s = np.full(bins, -np.inf)
    np.minimum.at(first_s, cell, t_s)
    np.maximum.at(last_s, cell, t_s)
    seen = np.flatnonzero(n_pings)
    return pl.DataFrame(
        {
            "vehicle_id": vehicles.gather(seen // span),
            "minute": seen % span + first_minute,
            "n_pings": n_pings[seen].astype(np.int64),
            "first_s": first_s[seen],
            "last_s": last_s[seen],
            "ping_operator_id": pl.Series([None] * len(seen), dtype=pl.String),
        }
    )


def compute_vehicle_operators(activity: pl.DataFrame, vehicles: pl.DataFrame) -> pl.DataFrame:
    """vehicle_id, operator_id, is_reserve for every registered vehicle and every vehicle that
    sent a fix: the register's operator, else the one its pings name, else '?'."""
    pinged = activity.group_by("vehicle_id").agg(pl.col("ping_operator_id").drop_nulls().first())
    reg = vehicles.select("vehicle_id", "operator_id", "is_reserve").unique("vehicle_id")
    return (
        pl.concat([reg.select("vehicle_id"), pinged.select("vehicle_id")])
        .unique()
        .join(reg, on="vehicle_id", how="left")
        .join(pinged, on="vehicle_id", how="left")
        .select(
            "vehicle_id",
            pl.coalesce("operator_id", "ping_operator_id", pl.lit(UNKNOWN_OPERATOR)).alias(
                "operator_id"
            ),
            "is_reserve",
        )
    )


def compute_avl_coverage(
    activity: pl.DataFrame, vehicle_ops: pl.DataFrame, outcomes: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The `avl_coverage` rows of a day (without service_date): per operator and vehicle,
    whether it reported, its fixes and minutes with a fix, first and last fix, and the trips
    it ran by `outcomes` (0 without them)."""
    if outcomes is None:
        outcomes = pl.DataFrame(schema={"vehicle_id": pl.String(), "outcome": pl.String()})
    per = activity.group_by("vehicle_id").agg(
        pl.col("n_pings").sum(),
        pl.len().cast(pl.Int32).alias("n_minutes_with_fix"),
        pl.col("first_s").min(),
        pl.col("last_s").max(),
    )
    ran = (
        outcomes.filter(pl.col("vehicle_id").is_not_null() & pl.col("outcome").is_in(RUN_OUTCOMES))
        .group_by("vehicle_id")
        .agg(pl.len().cast(pl.Int32).alias("n_trips_run"))
    )

    def at(c: str) -> pl.Expr:
        return pl.from_epoch((pl.col(c) * 1e6).round().cast(pl.Int64), "us").dt.replace_time_zone(
            "UTC"
        )

    return (
        vehicle_ops.join(per, on="vehicle_id", how="left")
        .join(ran, on="vehicle_id", how="left")
        .select(
            "operator_id",
            "vehicle_id",
            (pl.col("n_pings").fill_null(0) > 0).alias("is_reporting"),
            "is_reserve",
            pl.col("n_pings").fill_null(0),
            pl.col("n_minutes_with_fix").fill_null(0),
            at("first_s").alias("first_ping_at"),
            at("last_s").alias("last_ping_at"),
            pl.col("n_trips_run").fill_null(0),
        )
        .sort("operator_id", "vehicle_id")
    )


def compute_trip_operators(
    trips: pl.DataFrame, routes: pl.DataFrame, vehicle_ops: pl.DataFrame, runs: pl.DataFrame
) -> pl.DataFrame:
    """trip_id, operator_id of every trip: the route's agency when it names an operator of the
    vehicles known that day, else the operator of most vehicles that ran the line's trips,
    else '?' (then the whole feed stands for the operator's)."""
    known = vehicle_ops["operator_id"].unique().implode()
    by_agency = (
        routes.select("route_id", pl.col("agency_id").alias("_agency"))
        .filter(pl.col("_agency").is_in(known))
        .unique("route_id", keep="first")
    )
    by_runs = (
        runs.filter(pl.col("trip_id").is_not_null())
        .select("route_id", "vehicle_id")
        .join(vehicle_ops.select("vehicle_id", "operator_id"), on="vehicle_id")
        .group_by("route_id", "operator_id")
        .len()
        .sort(["route_id", "len", "operator_id"], descending=[False, True, False])
        .unique("route_id", keep="first")
        .select("route_id", pl.col("operator_id").alias("_by_runs"))
    )
    return (
        trips.select("trip_id", "route_id")
        .join(by_agency, on="route_id", how="left")
        .join(by_runs, on="route_id", how="left")
        .select(
            "trip_id",
            pl.coalesce("_agency", "_by_runs", pl.lit(UNKNOWN_OPERATOR)).alias("operator_id"),
        )
    )


def compute_feed_outages(
    activity: pl.DataFrame,
    vehicle_ops: pl.DataFrame,
    operators: pl.Series,
    lo_s: float,
    hi_s: float,
    min_s: float,
) -> pl.DataFrame:
    """Outages of each operator's feed within [lo_s, hi_s] (epoch s): operator_id, start_s,
    end_s. An outage is a silence of at least `min_s` between two fixes of any of the
    operator's vehicles (or the window's ends). Operator '?' stands for the whole feed: a trip
    whose operator is unknown is judged by every fix of the day. An operator without a fix
    is down over the whole window."""
    ops = pl.DataFrame({"operator_id": operators.unique().cast(pl.String)})
    # each operator's first and last fix per minute; the minutes of every fix of the day once
    # for '?' (a minimum and a maximum of minimums and maximums: the same values as grouping
    # every (operator, vehicle-minute) row, at half the rows and on an integer key for '?')
    minute = (pl.col("first_s") // 60).alias("_m")
    span = (pl.col("first_s").min(), pl.col("last_s").max())
    fixes = activity.filter((pl.col("last_s") >= lo_s) & (pl.col("first_s") <= hi_s)).select(
        "vehicle_id", "first_s", "last_s"
    )
    by_op = (
        fixes.join(vehicle_ops.select("vehicle_id", "operator_id"), on="vehicle_id")
        .join(ops, on="operator_id", how="semi")
        .group_by("operator_id", minute)
        .agg(*span)
    )
    whole = (
        fixes.group_by(minute)
        .agg(*span)
        .select(pl.lit(UNKNOWN_OPERATOR).alias("operator_id"), "_m", "first_s", "last_s")
        .join(ops, on="operator_id", how="semi")
    )
    # the window's two ends as fixes of every operator, so silences at the ends count
    ends = ops.join(
        pl.DataFrame({"first_s": [lo_s, hi_s], "last_s": [lo_s, hi_s]}), how="cross"
    ).select("operator_id", minute, "first_s", "last_s")
    fixes = (
        pl.concat([by_op, whole, ends], how="vertical_relaxed")
        .group_by("operator_id", "_m")
        .agg(*span)
        .sort("operator_id", "first_s")
    )
    return (
        fixes.with_columns(pl.col("first_s").shift(-1).over("operator_id").alias("end_s"))
        .select("operator_id", pl.col("last_s").alias("start_s"), "end_s")
        .filter(pl.col("end_s") - pl.col("start_s") >= min_s)
    )


def compute_feed_up_share(
    trips: pl.DataFrame, trip_ops: pl.DataFrame, outages: pl.DataFrame
) -> pl.DataFrame:
    """trip_id, feed_up_share: share of the trip's planned window (at least a minute) that no
    outage of its operator's feed covers (0-1)."""
    plan = trips.select(
        "trip_id",
        (pl.col("planned_start_at").dt.epoch("ms") / 1000.0).alias("_p0"),
        (pl.col("planned_end_at").dt.epoch("ms") / 1000.0).alias("_p1"),
    ).join(trip_ops, on="trip_id")
    down = (
        plan.join(outages, on="operator_id")
        .with_columns(
            (pl.min_horizontal("_p1", "end_s") - pl.max_horizontal("_p0", "start_s"))
            .clip(lower_bound=0.0)
            .alias("_down_s")
        )
        .group_by("trip_id")
        .agg(pl.col("_down_s").sum())
    )
    dur = (pl.col("_p1") - pl.col("_p0")).clip(lower_bound=60.0)
    return plan.join(down, on="trip_id", how="left").select(
        "trip_id",
        (1.0 - pl.col("_down_s").fill_null(0.0) / dur).clip(0.0, 1.0).alias("feed_up_share"),
    )


def compute_block_vehicles(trips: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """block_id, block_vehicle_id: the vehicle that ran most of the block's trips by GPS (the
    first in id order on a tie). Blocks without a run have no row."""
    return (
        runs.filter(pl.col("trip_id").is_not_null())
        .select("trip_id", "vehicle_id")
        .join(trips.select("trip_id", "block_id"), on="trip_id")
        .filter(pl.col("block_id").is_not_null())
        .group_by("block_id", "vehicle_id")
        .len()
        .sort(["block_id", "len", "vehicle_id"], descending=[False, True, False])
        .unique("block_id", keep="first")
        .select("block_id", pl.col("vehicle_id").alias("block_vehicle_id"))
    )


def compute_watched(
    trips: pl.DataFrame, runs: pl.DataFrame, activity: pl.DataFrame, blocks: pl.DataFrame
) -> pl.DataFrame:
    """trip_id, is_watched: whether the vehicle that should have run the trip is known and was
    reporting, so that a trip without evidence is a suppression seen, not a gap in the data.

    Watched: the block's vehicle (`compute_block_vehicles`) ran by GPS trips of the block both
    before and after it (in the block's order), or ran at least two of the block's trips and
    sent a fix during the trip's planned window (it was on the air, doing something else).
    """
    order = trips.select(
        "trip_id",
        "block_id",
        (pl.col("planned_start_at").dt.epoch("ms") / 1000.0).alias("_p0"),
        (pl.col("planned_end_at").dt.epoch("ms") / 1000.0).alias("_p1"),
    ).with_columns(pl.int_range(pl.len()).sort_by("_p0").over("block_id").alias("_k"))
    ran = (
        runs.filter(pl.col("trip_id").is_not_null())
        .select("trip_id", "vehicle_id")
        .join(order.select("trip_id", "block_id", "_k"), on="trip_id")
        .join(blocks, on="block_id")
        .filter(pl.col("vehicle_id") == pl.col("block_vehicle_id"))
        .group_by("block_id")
        .agg(
            pl.col("_k").min().alias("_k_min"),
            pl.col("_k").max().alias("_k_max"),
            pl.len().alias("_n_ran"),
        )
    )
    minutes = activity.select(pl.col("vehicle_id").alias("block_vehicle_id"), "minute")
    per = order.join(blocks, on="block_id", how="left").join(ran, on="block_id", how="left")
    # on the air: the vehicle's first minute with a fix from the trip's first minute on
    # (an as-of join, forward) is not past its last minute; as a lookup of every minute of
    # every trip's window it cost about four times more
    on_air = (
        per.filter(pl.col("block_vehicle_id").is_not_null() & (pl.col("_n_ran") >= 2))
        .select(
            "trip_id",
            "block_vehicle_id",
            (pl.col("_p0") // 60).cast(pl.Int64).alias("_m0"),
            (pl.col("_p1") // 60).cast(pl.Int64).alias("_m1"),
        )
        .drop_nulls(["_m0", "_m1"])
        .sort("_m0")
        .join_asof(
            minutes.sort("minute"),
            left_on="_m0",
            right_on="minute",
            by="block_vehicle_id",
            strategy="forward",
            check_sortedness=False,  # both sorted just above (Polars cannot check it by group)
        )
        .filter(pl.col("minute") <= pl.col("_m1"))
        .select("trip_id")
        .unique()
        .with_columns(pl.lit(True).alias("_on_air"))
    )
    return per.join(on_air, on="trip_id", how="left").select(
        "trip_id",
        (
            ((pl.col("_k") > pl.col("_k_min")) & (pl.col("_k") < pl.col("_k_max"))).fill_null(False)
            | pl.col("_on_air").fill_null(False)
        ).alias("is_watched"),
    )


def compute_dark_operators(avl: pl.DataFrame, taps: pl.DataFrame) -> pl.DataFrame:
    """operator_id, n_dark_vehicles: registered, non-reserve vehicles that sent no fix all day
    (`avl`: `compute_avl_coverage` rows). When the day has ticketing data, only those among
    them with a tap count: a vehicle that neither pinged nor carried a passenger stood in the
    garage (a fleet cut is not hidden as missing data)."""
    dark = avl.filter(~pl.col("is_reporting") & (pl.col("is_reserve") == False))  # noqa: E712
    if taps.height:
        dark = dark.join(taps.select("vehicle_id").unique(), on="vehicle_id", how="semi")
    return dark.group_by("operator_id").agg(pl.len().cast(pl.Int32).alias("n_dark_vehicles"))
