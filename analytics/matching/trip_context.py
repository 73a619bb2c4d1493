"""The trip context of a day: everything besides the GPS runs that a day's trips are judged with.

Unobserved is not failed (DESIGN.md): `compute_trip_context` puts together the data coverage
(`analytics.matching.coverage`: feed outages, watched vehicles, dark vehicles) and the evidence
besides GPS (`analytics.matching.evidence`: ticketing, inspections). Reads the day's trips,
matched runs, per-minute ping activity, the `DayEvidence` frames (register, taps, inspections,
routes) and the profile; returns a `TripContext` for `compute_trip_outcomes`. Everything here is
per day, vectorised, and independent of the GPS batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from analytics.matching.coverage import (
    compute_avl_coverage,
    compute_block_vehicles,
    compute_dark_operators,
    compute_feed_outages,
    compute_feed_up_share,
    compute_trip_operators,
    compute_vehicle_operators,
    compute_watched,
)
from analytics.matching.evidence import compute_inspection_evidence, compute_ticketing_evidence
from core.profile import Profile


def _no_vehicles() -> pl.DataFrame:
    return pl.DataFrame(
        schema={"vehicle_id": pl.String(), "operator_id": pl.String(), "is_reserve": pl.Boolean()}
    )


def _no_taps() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "event_at": pl.Datetime("us", "UTC"),
            "vehicle_id": pl.String(),
            "route_id": pl.String(),
        }
    )


def _no_inspections() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
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
    return pl.DataFrame(schema={"route_id": pl.String(), "agency_id": pl.String()})


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
