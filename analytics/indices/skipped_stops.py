"""Stops of a regular trip where the doors never opened (BG art. 7-I, Anexo I XVII, "recusar o
embarque ou desembarque em ponto de parada").

A regular trip observes every stop of its itinerary (art. 7-I); a semi-express or express trip
lists only the stops it serves in the timetable, so the stops of a trip's stop visits are the
stops it owes. "Passed without halting" alone would over-suggest (ADR 0065): with 30 s fixes a
10-20 s halt often falls between two fixes. The evidence here is the unit's own door event
(`vehicle_locations.event_code = 'door_open'`), and only on trips whose door sensor is shown to
work: a stop visit counts as *served* when a door event of the vehicle lies within
`infractions.skipped_stop_zone_m` of the stop and within `skipped_stop_margin_s` of the visit's
window (arrival - margin .. departure + margin); a trip is *judged* when at least
`skipped_stop_min_door_events` of its stops were served. On a judged trip, a visit is a skipped
stop when it is not served and
- it was observed (`is_interpolated` false: a fix lies within the stop radius, so the vehicle
  really passed there; an interpolated visit may be a GPS gap or a detour);
- it is not the trip's first or last stop (terminals: boarding and alighting there happen
  around layovers the visit window does not bound);
- the trip has no approved incident (a justified detour may skip stops lawfully).
The GTFS pickup_type / drop_off_type (1: no pickup / no drop-off) are not in the store
(`gtfs_stop_times` lacks them), so no stop is excused for them yet.

Corroboration, listed for the fiscal, not gating the suggestion: the fixes of the vehicle
through the stop's zone (its visit window plus the margin) with their lowest reported speed (a
refusal can happen with the bus standing at the stop, and a short halt is often seen by no
fix), and the stop's demand: taps placed at that stop on other trips of the line within
`skipped_stop_demand_window_s` (`tap_placements`; a stop where nobody ever boards at that hour
makes a refusal less likely, but a rider may have wanted to alight). See ADR 0098.
"""

from __future__ import annotations

from datetime import date, datetime

import numpy as np
import polars as pl

from analytics.indices.infractions import FACT_COLUMNS
from core.profile import Profile, Seconds
from core.store import Store

DOOR_EVENT = "door_open"

EARTH_RADIUS_M = 6_371_000.0
TRIP_KEY = ("service_date", "vehicle_id", "run_index", "trip_id")

SKIPPED_SCHEMA = pl.Schema(
    {
        "service_date": pl.Date(),
        "vehicle_id": pl.String(),
        "run_index": pl.Int32(),
        "trip_id": pl.String(),
        "operator_id": pl.String(),
        "stop_sequence": pl.Int32(),
        "stop_id": pl.String(),
        "arrival_at": pl.Datetime("us", "UTC"),
        "departure_at": pl.Datetime("us", "UTC"),
        "n_stops_served": pl.UInt32(),
        "door_ping_ids": pl.String(),
        "zone_ping_ids": pl.String(),
        "zone_min_speed_m_s": pl.Float64(),
        "n_demand_taps": pl.UInt32(),
    }
)
"""One skipped stop: the trip (service_date, vehicle_id, run_index, trip_id), its operator,
the stop (stop_sequence, stop_id), the visit window (arrival_at, departure_at, UTC);
n_stops_served: stops of the trip where a door event was seen (the sensor works);
door_ping_ids: the trip's door events (ping ids, comma-separated); zone_ping_ids: the fixes of
the vehicle in the stop's time window (null when none were given); zone_min_speed_m_s: their
lowest reported speed, m/s (null: none); n_demand_taps: fare taps placed at that stop (boarding
there) on other trips of the trip's line within `skipped_stop_demand_window_s` of the visit,
the stop's demand at that hour (null when no placed taps were given)."""


def _distance_m(lat1: pl.Expr, lon1: pl.Expr, lat2: pl.Expr, lon2: pl.Expr) -> pl.Expr:
    """Straight-line metres on a local flat earth (a stop zone is tens of metres wide)."""
    rad = np.pi / 180.0
    dy = (lat2 - lat1) * rad * EARTH_RADIUS_M
    dx = (lon2 - lon1) * rad * EARTH_RADIUS_M * (lat1 * rad).cos()
    return (dx * dx + dy * dy).sqrt()


def compute_skipped_stops(
    visits: pl.DataFrame,
    doors: pl.DataFrame,
    stops: pl.DataFrame,
    profile: Profile,
    *,
    excused_trips: pl.DataFrame | None = None,
    zone_pings: pl.DataFrame | None = None,
    placed_taps: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Skipped stops (SKIPPED_SCHEMA). `visits`: stop_visits rows (TRIP_KEY, stop_sequence,
        stop_id, arrival_at, departure_at, is_interpolated); `doors`: door events (ping_id,
        vehicle_id, operator_id, event_at, lat, lon); `stops`: stop_id, stop_lat, stop_lon;
        `excused_trips`: service_date, trip_id of the trips an approved incident covers; `zone_pings`: the vehicles' fixes
        (ping_id, vehicle_id, event_at, speed_m_s) for the evidence; `placed_taps`: tap_placements
    rows (trip_id, route_id, stop_id, event_at) for the stop's demand. Empty without the profile's
        values or without door events."""
    inf = profile.infractions
    zone, margin, least = (
        inf.skipped_stop_zone_m,
        inf.skipped_stop_margin_s,
        inf.skipped_stop_min_door_events,
    )
    if zone is None or margin is None or least is None or doors.height == 0 or visits.height == 0:
        return pl.DataFrame(schema=SKIPPED_SCHEMA)
    pad = pl.duration(seconds=margin.value)
    v = (
        visits.filter(pl.col("trip_id").is_not_null() & pl.col("arrival_at").is_not_null())
        .with_columns(
            pl.col("vehicle_id").cast(pl.String),
            pl.coalesce("departure_at", "arrival_at").alias("departure_at"),
            (pl.col("stop_sequence") == pl.col("stop_sequence").min().over(TRIP_KEY)).alias("_f"),
            (pl.col("stop_sequence") == pl.col("stop_sequence").max().over(TRIP_KEY)).alias("_l"),
        )
        .join(stops.select("stop_id", "stop_lat", "stop_lon"), on="stop_id", how="left")
    )
    d = doors.select(
        pl.col("ping_id").alias("door_ping_id"),
        pl.col("vehicle_id").cast(pl.String),
        pl.col("operator_id"),
        pl.col("event_at").alias("door_at"),
        pl.col("lat").alias("door_lat"),
        pl.col("lon").alias("door_lon"),
    )
    # a door event serves a visit when it is near the stop in both time and place
    near = (
        v.select(*TRIP_KEY, "stop_sequence", "arrival_at", "departure_at", "stop_lat", "stop_lon")
        .join(d, on="vehicle_id")
        .filter(
            pl.col("door_at").is_between(pl.col("arrival_at") - pad, pl.col("departure_at") + pad)
            & (
                _distance_m(
                    pl.col("stop_lat"), pl.col("stop_lon"), pl.col("door_lat"), pl.col("door_lon")
                )
                <= zone.value
            )
        )
    )
    served = near.select(*TRIP_KEY, "stop_sequence").unique()
    # the trip's door events: all the vehicle's door events inside the trip's window
    trips = v.group_by(TRIP_KEY).agg(
        (pl.col("arrival_at").min() - pad).alias("_t0"),
        (pl.col("departure_at").max() + pad).alias("_t1"),
    )
    trip_doors = (
        trips.join(d, on="vehicle_id")
        .filter(pl.col("door_at").is_between("_t0", "_t1"))
        .group_by(TRIP_KEY)
        .agg(
            pl.col("operator_id").drop_nulls().first(),
            pl.col("door_ping_id").sort().cast(pl.String).str.join(",").alias("door_ping_ids"),
        )
    )
    judged = (
        served.group_by(TRIP_KEY)
        .agg(pl.len().cast(pl.UInt32).alias("n_stops_served"))
        .filter(pl.col("n_stops_served") >= least.value)
        .join(trip_doors, on=list(TRIP_KEY))
    )
    if excused_trips is not None and excused_trips.height:
        judged = judged.join(
            excused_trips.select("service_date", "trip_id"),
            on=["service_date", "trip_id"],
            how="anti",
        )
    skipped = (
        v.filter(~pl.col("is_interpolated") & ~pl.col("_f") & ~pl.col("_l"))
        .join(judged, on=list(TRIP_KEY))
        .join(served, on=[*TRIP_KEY, "stop_sequence"], how="anti")
    )
    if zone_pings is not None and zone_pings.height and skipped.height:
        through = (
            skipped.select(*TRIP_KEY, "stop_sequence", "arrival_at", "departure_at")
            .join(
                zone_pings.select(
                    "ping_id", pl.col("vehicle_id").cast(pl.String), "event_at", "speed_m_s"
                ),
                on="vehicle_id",
            )
            .filter(
                pl.col("event_at").is_between(
                    pl.col("arrival_at") - pad, pl.col("departure_at") + pad
                )
            )
            .group_by(*TRIP_KEY, "stop_sequence")
            .agg(
                pl.col("ping_id").sort().cast(pl.String).str.join(",").alias("zone_ping_ids"),
                pl.col("speed_m_s").min().alias("zone_min_speed_m_s"),
            )
        )
        skipped = skipped.join(through, on=[*TRIP_KEY, "stop_sequence"], how="left")
    else:
        skipped = skipped.with_columns(
            pl.lit(None, pl.String).alias("zone_ping_ids"),
            pl.lit(None, pl.Float64).alias("zone_min_speed_m_s"),
        )
    skipped = skipped.with_columns(
        _demand_near(skipped, placed_taps, inf.skipped_stop_demand_window_s)
    )
    return (
        skipped.select(list(SKIPPED_SCHEMA)).cast(SKIPPED_SCHEMA).sort("arrival_at", "vehicle_id")
    )


def _demand_near(
    skipped: pl.DataFrame, placed_taps: pl.DataFrame | None, window: Seconds | None
) -> pl.Series:
    """n_demand_taps per row of `skipped` (see SKIPPED_SCHEMA)."""
    if placed_taps is None or window is None or skipped.height == 0:
        return pl.Series("n_demand_taps", [None] * skipped.height, dtype=pl.UInt32)
    pad = pl.duration(seconds=window.value)
    route = placed_taps.select("trip_id", "route_id").unique("trip_id")
    rows = skipped.select("trip_id", "stop_id", "arrival_at").with_row_index("_r")
    taps = placed_taps.select(
        pl.col("trip_id").alias("_tap_trip"), "route_id", "stop_id", pl.col("event_at")
    )
    near = (
        rows.join(route, on="trip_id", how="left")
        .join(taps, on=["route_id", "stop_id"])
        .filter(
            (pl.col("_tap_trip") != pl.col("trip_id"))
            & pl.col("event_at").is_between(pl.col("arrival_at") - pad, pl.col("arrival_at") + pad)
        )
        .group_by("_r")
        .agg(pl.len().cast(pl.UInt32).alias("n"))
    )
    counted = rows.join(near, on="_r", how="left").sort("_r")
    return counted["n"].fill_null(0).alias("n_demand_taps")


def match_skipped_stop_facts(
    skipped: pl.DataFrame, routes_of_trips: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """Facts XVII (FACT_COLUMNS), one per trip: its skipped stops with their times and fixes,
    and the trip's door events. `routes_of_trips`: trip_id, route_id."""
    tz = profile.general.timezone.value
    local = pl.col("arrival_at").dt.convert_time_zone(tz)
    one = pl.format(
        "parada {} (sequência {}) às {} sem abertura de porta; pings na zona: {}; "
        "menor velocidade {} m/s; embarques na parada em outras viagens da linha na mesma "
        "hora: {}",
        "stop_id",
        "stop_sequence",
        local.dt.strftime("%H:%M:%S"),
        pl.col("zone_ping_ids").fill_null("nenhum"),
        pl.col("zone_min_speed_m_s").round(1).cast(pl.String).fill_null("-"),
        pl.col("n_demand_taps").cast(pl.String).fill_null("sem dados"),
    )
    routes = routes_of_trips.select("trip_id", "route_id").unique("trip_id")
    return (
        skipped.with_columns(local.dt.date().alias("occurred_on"), one.alias("_ev"))
        .group_by(*TRIP_KEY)
        .agg(
            pl.col("operator_id").first(),
            pl.col("occurred_on").first(),
            pl.col("arrival_at").min().alias("occurred_at"),
            pl.len().alias("_n"),
            pl.col("n_stops_served").first(),
            pl.col("door_ping_ids").first(),
            pl.col("_ev").sort_by("arrival_at").str.join("; ").alias("_evs"),
            pl.col("zone_ping_ids").drop_nulls().str.join(",").alias("_zone"),
        )
        .join(routes, on="trip_id", how="left")
        .select(
            pl.lit("XVII").alias("item"),
            pl.col("operator_id").fill_null("?"),
            "route_id",
            "vehicle_id",
            "occurred_on",
            "occurred_at",
            pl.format(
                "viagem {} (veículo {}): {} parada(s) do itinerário sem abertura de porta, com o "
                "sensor de porta funcionando em {} outra(s) parada(s) da viagem",
                "trip_id",
                "vehicle_id",
                "_n",
                "n_stops_served",
            ).alias("fact"),
            pl.format("{}; eventos de porta da viagem: pings {}", "_evs", "door_ping_ids").alias(
                "evidence"
            ),
            pl.col("trip_id").alias("trip_ids"),
            pl.when(pl.col("_zone") == "")
            .then(pl.col("door_ping_ids"))
            .otherwise(pl.format("{},{}", "_zone", "door_ping_ids"))
            .alias("ping_ids"),
        )
        .select(FACT_COLUMNS)
        .sort("occurred_at", "vehicle_id")
    )


def read_door_stop_visits(
    store: Store, first_day: date, last_day: date, start_at: datetime, end_at: datetime
) -> pl.DataFrame:
    """The reached stop visits of the service days, of the vehicles that reported a door event
    in the period (the others cannot be judged, and a year of visits is large)."""
    return store.query(
        """
        SELECT service_date, vehicle_id, run_index, trip_id, stop_sequence, stop_id,
               arrival_at, departure_at, is_interpolated
        FROM stop_visits
        WHERE service_date BETWEEN ? AND ? AND arrival_at IS NOT NULL
          AND vehicle_id IN (SELECT DISTINCT vehicle_id FROM vehicle_locations
                             WHERE event_at >= ? AND event_at < ? AND event_code = ?)
        ORDER BY service_date, vehicle_id, run_index, stop_sequence
        """,
        [first_day, last_day, start_at, end_at, DOOR_EVENT],
    )


def to_excused_trips(outcomes: pl.DataFrame) -> pl.DataFrame:
    """service_date, trip_id of the trips an approved incident covers (a justified detour may
    leave stops out lawfully)."""
    if outcomes.height == 0:
        return pl.DataFrame(schema={"service_date": pl.Date, "trip_id": pl.String})
    return outcomes.filter(pl.col("is_justified") & pl.col("incident_id").is_not_null()).select(
        "service_date", "trip_id"
    )


def read_stop_taps(store: Store, skipped: pl.DataFrame, window_s: int) -> pl.DataFrame:
    """The placed taps (trip_id, route_id, stop_id, event_at) at the stops found skipped,
    within `window_s` of their visits: the stops' demand."""
    if skipped.height == 0:
        return pl.DataFrame(
            schema={
                "trip_id": pl.String,
                "route_id": pl.String,
                "stop_id": pl.String,
                "event_at": pl.Datetime("us", "UTC"),
            }
        )
    return store.query(
        """
        WITH w AS (SELECT unnest(?::VARCHAR[]) AS stop_id, unnest(?::TIMESTAMPTZ[]) AS t)
        -- a tap is its operator, id and instant (as fare_transactions'; ADR 0103): DISTINCT
        -- drops the tap found through two nearby skipped visits, never two operators' taps
        SELECT DISTINCT p.operator_id, p.transaction_id, p.trip_id, p.route_id, p.stop_id,
               p.event_at
        FROM tap_placements p JOIN w ON p.stop_id = w.stop_id
         AND p.event_at BETWEEN w.t - to_seconds(?) AND w.t + to_seconds(?)
        WHERE p.placement = 'placed'
        """,
        [skipped["stop_id"].to_list(), skipped["arrival_at"].to_list(), window_s, window_s],
    ).drop("operator_id", "transaction_id")


def read_zone_pings(store: Store, skipped: pl.DataFrame, margin_s: int) -> pl.DataFrame:
    """The fixes (ping_id, vehicle_id, event_at, speed_m_s) of the vehicles through the zones of
    the stops found skipped: only those few windows are read, not the period's pings."""
    if skipped.height == 0:
        return pl.DataFrame(
            schema={
                "ping_id": pl.Int64,
                "vehicle_id": pl.String,
                "event_at": pl.Datetime("us", "UTC"),
                "speed_m_s": pl.Float64,
            }
        )
    starts: list[datetime] = skipped["arrival_at"].to_list()
    ends: list[datetime] = skipped["departure_at"].to_list()
    return store.query(
        """
        WITH w AS (
            SELECT unnest(?::VARCHAR[]) AS vehicle_id, unnest(?::TIMESTAMPTZ[]) AS t0,
                   unnest(?::TIMESTAMPTZ[]) AS t1
        )
        SELECT DISTINCT p.ping_id, p.vehicle_id, p.event_at, p.speed_m_s
        FROM vehicle_locations p JOIN w ON p.vehicle_id = w.vehicle_id
         AND p.event_at BETWEEN w.t0 - to_seconds(?) AND w.t1 + to_seconds(?)
        ORDER BY p.vehicle_id, p.event_at
        """,
        [skipped["vehicle_id"].to_list(), starts, ends, margin_s, margin_s],
    )
