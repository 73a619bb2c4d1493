"""Data coverage and evidence: was there data to judge a trip, and what shows it ran.

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
- ticketing (BG art. 57 §2): at least `evidence.ticketing_min_taps` taps on one vehicle, on the
  trip's line (or a validator without a line), within the trip's planned window ±
  `evidence.ticketing_margin_s`, outside every GPS run of that vehicle (taps inside a run are
  that run's). The vehicle is the block's (the one that ran its other trips) when known; for a
  block without any run, the vehicle with most such taps, one trip at a time per vehicle;
- an in-loco inspection (BG art. 57 §2, art. 77): the trip's vehicle, or its line, seen at a
  stop of the trip (or anywhere when the record names no stop) within the planned window ±
  `evidence.inspection_margin_s`.

Everything here is per day, vectorised, and independent of the GPS batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from core.profile import Profile

UNKNOWN_OPERATOR = "?"


def _empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def _no_vehicles() -> pl.DataFrame:
    return _empty(
        {"vehicle_id": pl.String(), "operator_id": pl.String(), "is_reserve": pl.Boolean()}
    )


def _no_taps() -> pl.DataFrame:
    return _empty(
        {"event_at": pl.Datetime("us", "UTC"), "vehicle_id": pl.String(), "route_id": pl.String()}
    )


def _no_inspections() -> pl.DataFrame:
    return _empty(
        {
            "inspection_id": pl.String(),
            "observed_at": pl.Datetime("us", "UTC"),
            "vehicle_id": pl.String(),
            "route_id": pl.String(),
            "stop_id": pl.String(),
            "is_vehicle_seen": pl.Boolean(),
            "inspector": pl.String(),
        }
    )


def _no_routes() -> pl.DataFrame:
    return _empty({"route_id": pl.String(), "agency_id": pl.String()})


@dataclass
class DayEvidence:
    """What besides the pings a day is judged with (frames of the store; each may be empty).

    `vehicles`: the register (vehicle_id, operator_id, is_reserve); `taps`: fare_transactions
    (event_at, vehicle_id, route_id); `inspections`: the inspections table; `routes`:
    gtfs_routes (route_id, agency_id); `stop_times`: the day's trip stops (trip_id, stop_id),
    for inspections at a stop.
    """

    vehicles: pl.DataFrame = field(default_factory=_no_vehicles)
    taps: pl.DataFrame = field(default_factory=_no_taps)
    inspections: pl.DataFrame = field(default_factory=_no_inspections)
    routes: pl.DataFrame = field(default_factory=_no_routes)


def compute_ping_activity(pings: pl.DataFrame) -> pl.DataFrame:
    """Fixes per vehicle and minute: vehicle_id, minute (epoch minutes), n_pings, first_s,
    last_s (epoch seconds of the minute's first and last fix), ping_operator_id (the operator
    the pings name, when they do). Small beside the pings: the day's coverage is computed
    from it."""
    t = pl.col("event_at").dt.epoch("ms") / 1000.0
    op = (
        [pl.col("operator_id").drop_nulls().first().alias("ping_operator_id")]
        if "operator_id" in pings.columns
        else [pl.lit(None, pl.String).alias("ping_operator_id")]
    )
    return (
        pings.select(
            "vehicle_id",
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
        outcomes = _empty({"vehicle_id": pl.String(), "outcome": pl.String()})
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


RUN_OUTCOMES = ("on_time", "late", "early")


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
    by_op = activity.join(vehicle_ops.select("vehicle_id", "operator_id"), on="vehicle_id")
    fixes = pl.concat(
        [
            by_op.select("operator_id", "first_s", "last_s"),
            activity.select(pl.lit(UNKNOWN_OPERATOR).alias("operator_id"), "first_s", "last_s"),
        ]
    ).filter((pl.col("last_s") >= lo_s) & (pl.col("first_s") <= hi_s))
    ops = pl.DataFrame({"operator_id": operators.unique().cast(pl.String)})
    # the window's two ends as fixes of every operator, so silences at the ends count
    ends = ops.join(pl.DataFrame({"first_s": [lo_s, hi_s], "last_s": [lo_s, hi_s]}), how="cross")
    fixes = (
        pl.concat([fixes.join(ops, on="operator_id", how="semi"), ends], how="vertical_relaxed")
        .group_by("operator_id", (pl.col("first_s") // 60).alias("_m"))
        .agg(pl.col("first_s").min(), pl.col("last_s").max())
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
    on_air = (
        per.filter(pl.col("block_vehicle_id").is_not_null() & (pl.col("_n_ran") >= 2))
        .with_columns(
            pl.int_ranges(
                (pl.col("_p0") // 60).cast(pl.Int64), (pl.col("_p1") // 60).cast(pl.Int64) + 1
            ).alias("minute")
        )
        .explode("minute")
        .join(minutes, on=["block_vehicle_id", "minute"], how="semi")
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


def compute_ticketing_evidence(
    missing: pl.DataFrame,
    taps: pl.DataFrame,
    runs: pl.DataFrame,
    profile: Profile,
    activity: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Trips shown run by ticketing: trip_id, vehicle_id, n_taps, first_tap_s.

    `missing`: trips without a GPS run: trip_id, route_id, _p0, _p1 (planned window, epoch s),
    block_vehicle_id (null when the block has no run), is_watched (`compute_watched`). Rule in the module docstring; taps up
    to `ticketing_margin_s` before a GPS run of their vehicle are that run's too (boarding at
    the terminal before it leaves), and a vehicle seen by GPS running another trip over the whole
    of the trip's planned window cannot have run it.
    """
    ev = profile.evidence
    margin = float(ev.ticketing_margin_s.value)
    need = int(ev.ticketing_min_taps.value)
    schema = {
        "trip_id": pl.String(),
        "vehicle_id": pl.String(),
        "n_taps": pl.Int64(),
        "first_tap_s": pl.Float64(),
    }
    if taps.height == 0 or missing.height == 0:
        return _empty(schema)
    t = taps.filter(pl.col("vehicle_id").is_not_null()).select(
        "vehicle_id",
        pl.col("route_id").alias("_tap_route"),
        (pl.col("event_at").dt.epoch("ms") / 1000.0).alias("_tap_s"),
    )
    # taps inside a GPS run of their vehicle (or boarding just before it) are that run's
    spans = runs.select(
        "vehicle_id", (pl.col("started_s") - margin).alias("_from_s"), "ended_s"
    ).sort("_from_s")
    t = (
        t.sort("_tap_s")
        .join_asof(
            spans,
            left_on="_tap_s",
            right_on="_from_s",
            by="vehicle_id",
            # both sides sorted by time; Polars cannot check that with `by`
            check_sortedness=False,
        )
        .filter(pl.col("ended_s").is_null() | (pl.col("_tap_s") > pl.col("ended_s")))
        .select("vehicle_id", "_tap_route", "_tap_s")
    )
    inside = (pl.col("_tap_s") >= pl.col("_p0") - margin) & (
        pl.col("_tap_s") <= pl.col("_p1") + margin
    )
    agg = [pl.len().alias("n_taps"), pl.col("_tap_s").min().alias("first_tap_s")]
    known = (
        missing.filter(pl.col("block_vehicle_id").is_not_null())
        .join(t, left_on="block_vehicle_id", right_on="vehicle_id")
        .filter(
            inside & (pl.col("_tap_route").is_null() | (pl.col("_tap_route") == pl.col("route_id")))
        )
        .group_by("trip_id", pl.col("block_vehicle_id").alias("vehicle_id"), "_p0", "_p1")
        .agg(*agg)
        .filter(pl.col("n_taps") >= need)
    )
    # otherwise, when the trip's vehicle is not watched by GPS (`compute_watched`: no block
    # vehicle, or one that ran the block only in part): the taps of any vehicle on the line,
    # in hour buckets so the join stays small on a dark day
    orphans = (
        missing.filter(~pl.col("is_watched").fill_null(False))
        .join(known.select("trip_id"), on="trip_id", how="anti")
        .with_columns(
            pl.int_ranges(
                ((pl.col("_p0") - margin) // 3600).cast(pl.Int64),
                ((pl.col("_p1") + margin) // 3600).cast(pl.Int64) + 1,
            ).alias("_h")
        )
        .explode("_h")
    )
    loose = (
        orphans.join(
            t.with_columns((pl.col("_tap_s") // 3600).cast(pl.Int64).alias("_h")),
            left_on=["route_id", "_h"],
            right_on=["_tap_route", "_h"],
        )
        .filter(inside)
        .group_by("trip_id", "vehicle_id", "_p0", "_p1")
        .agg(*agg)
        .filter(pl.col("n_taps") >= need)
    )
    # a vehicle GPS saw running another trip over this one's window did not run it
    busy = (
        pl.concat([known, loose])
        .join(
            runs.filter(pl.col("trip_id").is_not_null()).select(
                "vehicle_id", "started_s", "ended_s"
            ),
            on="vehicle_id",
        )
        # over all of it: a late vehicle still finishing its previous trip is not busy
        .filter((pl.col("started_s") <= pl.col("_p0")) & (pl.col("ended_s") >= pl.col("_p1")))
        .select("trip_id", "vehicle_id")
        .unique()
    )
    known = known.join(busy, on=["trip_id", "vehicle_id"], how="anti")
    if activity is not None and activity.height:
        seen_idle = _seen_idle(pl.concat([known, loose]), activity, runs)
        known = known.join(seen_idle, on=["trip_id", "vehicle_id"], how="anti")
        loose = loose.join(seen_idle, on=["trip_id", "vehicle_id"], how="anti")
    loose = (
        loose.join(busy, on=["trip_id", "vehicle_id"], how="anti")
        .join(known.select("trip_id"), on="trip_id", how="anti")
        # one vehicle per trip (most taps), then one trip at a time per vehicle
        .sort(["trip_id", "n_taps", "vehicle_id"], descending=[False, True, False])
        .unique("trip_id", keep="first")
        .sort("vehicle_id", "_p0")
        .filter((pl.col("_p0") >= pl.col("_p1").shift(1).over("vehicle_id")).fill_null(True))
    )
    return pl.concat([known.select(*schema), loose.select(*schema)]).cast(
        schema  # type: ignore[arg-type]
    )


def _seen_idle(pairs: pl.DataFrame, activity: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """(trip_id, vehicle_id) of `pairs` (with _p0, _p1) whose vehicle sent fixes outside its
    runs in at least half the minutes of the trip's planned window."""
    spans = runs.select("vehicle_id", "started_s", "ended_s").sort("started_s")
    idle = (
        activity.select("vehicle_id", "minute", (pl.col("minute") * 60 + 30.0).alias("_t"))
        .sort("_t")
        .join_asof(
            spans,
            left_on="_t",
            right_on="started_s",
            by="vehicle_id",
            check_sortedness=False,
        )
        .filter(pl.col("ended_s").is_null() | (pl.col("_t") > pl.col("ended_s")))
        .select("vehicle_id", "minute")
    )
    return (
        pairs.select(
            "trip_id",
            "vehicle_id",
            pl.int_ranges(
                (pl.col("_p0") // 60).cast(pl.Int64), (pl.col("_p1") // 60).cast(pl.Int64) + 1
            ).alias("minute"),
        )
        .with_columns(pl.col("minute").list.len().alias("_n"))
        .explode("minute")
        .join(idle, on=["vehicle_id", "minute"])
        .group_by("trip_id", "vehicle_id")
        .agg(pl.len().alias("_idle"), pl.col("_n").first())
        .filter(pl.col("_idle") >= 0.5 * pl.col("_n"))
        .select("trip_id", "vehicle_id")
    )


def compute_inspection_evidence(
    missing: pl.DataFrame,
    inspections: pl.DataFrame,
    trip_stops: pl.DataFrame,
    profile: Profile,
) -> pl.DataFrame:
    """Trips shown run by an in-loco inspection: trip_id, vehicle_id (the one seen, may be
    null), inspection_id, inspector, observed_s. `trip_stops`: trip_id, stop_id."""
    margin = float(profile.evidence.inspection_margin_s.value)
    schema = {
        "trip_id": pl.String(),
        "vehicle_id": pl.String(),
        "inspection_id": pl.String(),
        "inspector": pl.String(),
        "observed_s": pl.Float64(),
    }
    seen = inspections.filter(pl.col("is_vehicle_seen"))
    if seen.height == 0 or missing.height == 0:
        return _empty(schema)
    ins = seen.select(
        "inspection_id",
        "inspector",
        pl.col("vehicle_id").alias("_seen_vehicle"),
        pl.col("route_id").alias("_seen_route"),
        pl.col("stop_id").alias("_seen_stop"),
        (pl.col("observed_at").dt.epoch("ms") / 1000.0).alias("observed_s"),
    )
    pairs = missing.join(ins, how="cross").filter(
        (pl.col("observed_s") >= pl.col("_p0") - margin)
        & (pl.col("observed_s") <= pl.col("_p1") + margin)
        & (
            (pl.col("_seen_vehicle") == pl.col("block_vehicle_id")).fill_null(False)
            | (pl.col("_seen_route") == pl.col("route_id")).fill_null(False)
        )
    )
    at_stop = pairs.filter(pl.col("_seen_stop").is_not_null()).join(
        trip_stops.select("trip_id", pl.col("stop_id").alias("_seen_stop")).unique(),
        on=["trip_id", "_seen_stop"],
        how="semi",
    )
    anywhere = pairs.filter(pl.col("_seen_stop").is_null())
    return (
        pl.concat([at_stop, anywhere])
        .sort("trip_id", "observed_s")
        .unique("trip_id", keep="first")
        .select(
            "trip_id",
            pl.coalesce("_seen_vehicle", "block_vehicle_id").alias("vehicle_id"),
            "inspection_id",
            "inspector",
            "observed_s",
        )
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


@dataclass
class TripContext:
    """What a day's trips are judged with besides their GPS runs.

    `trips`: per scheduled trip: trip_id, operator_id, feed_up_share, block_vehicle_id,
    is_watched (`compute_watched`), n_dark_vehicles (of its operator); `ticketing`: `compute_ticketing_evidence`;
    `inspections`: `compute_inspection_evidence`; `outages`: operator_id, start_s, end_s;
    `avl`: `compute_avl_coverage` without the trips run.
    """

    trips: pl.DataFrame
    ticketing: pl.DataFrame
    inspections: pl.DataFrame
    outages: pl.DataFrame
    avl: pl.DataFrame


def compute_trip_context(
    trips: pl.DataFrame,
    runs: pl.DataFrame,
    activity: pl.DataFrame,
    evidence: DayEvidence,
    trip_stops: pl.DataFrame,
    profile: Profile,
    window_s: tuple[float, float],
) -> TripContext:
    """Every fact `compute_trip_outcomes` needs beside the runs (see the module docstring).
    `runs`: matched runs (trip_id null when unmatched); `window_s`: the day's ping window."""
    ev = profile.evidence
    vehicle_ops = compute_vehicle_operators(activity, evidence.vehicles)
    trip_ops = compute_trip_operators(trips, evidence.routes, vehicle_ops, runs)
    outages = compute_feed_outages(
        activity,
        vehicle_ops,
        trip_ops["operator_id"],
        window_s[0],
        window_s[1],
        float(ev.feed_outage_min_s.value),
    )
    avl = compute_avl_coverage(activity, vehicle_ops)
    blocks = compute_block_vehicles(trips, runs)
    watched = compute_watched(trips, runs, activity, blocks)
    per_trip = (
        trips.select("trip_id", "block_id")
        .join(trip_ops, on="trip_id", how="left")
        .join(compute_feed_up_share(trips, trip_ops, outages), on="trip_id", how="left")
        .join(blocks, on="block_id", how="left")
        .join(watched, on="trip_id", how="left")
        .join(compute_dark_operators(avl, evidence.taps), on="operator_id", how="left")
        .with_columns(
            pl.col("n_dark_vehicles").fill_null(0), pl.col("feed_up_share").fill_null(1.0)
        )
        .drop("block_id")
    )
    taken = runs.filter(pl.col("trip_id").is_not_null()).select("trip_id")
    missing = (
        trips.join(taken, on="trip_id", how="anti")
        .select(
            "trip_id",
            "route_id",
            "block_id",
            (pl.col("planned_start_at").dt.epoch("ms") / 1000.0).alias("_p0"),
            (pl.col("planned_end_at").dt.epoch("ms") / 1000.0).alias("_p1"),
        )
        .join(blocks, on="block_id", how="left")
        .join(watched, on="trip_id", how="left")
    )
    return TripContext(
        trips=per_trip,
        ticketing=compute_ticketing_evidence(missing, evidence.taps, runs, profile, activity),
        inspections=compute_inspection_evidence(missing, evidence.inspections, trip_stops, profile),
        outages=outages,
        avl=avl,
    )
