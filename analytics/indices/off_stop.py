"""Doors opened away from any stop during a run (BG Anexo I VI, "permitir embarque ou
desembarque fora da parada ou terminal").

The evidence is the unit's own door event (`vehicle_locations.event_code = 'door_open'`), not
a fare tap: riders tap the validator after boarding, while the bus moves, so a tap's position
says nothing about where they boarded. A door opening counts when it happens inside one of the
vehicle's runs (`trips_performed`: a garage or a layover off the network is not a trip) and its
fix is farther than `infractions.off_stop_min_distance_m` from every stop of the feed (any
stop or terminal: the law says "fora da parada", not "fora das paradas da linha"). One
suggestion per vehicle and local day, listing the door events (ping ids) and their distances.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl

from analytics.indices.infractions import FACT_COLUMNS
from core.profile import Profile
from core.store import Store

DOOR_EVENT = "door_open"
EARTH_RADIUS_M = 6_371_000.0

OFF_STOP_SCHEMA = pl.Schema(
    {
        "ping_id": pl.Int64(),
        "vehicle_id": pl.String(),
        "operator_id": pl.String(),
        "event_at": pl.Datetime("us", "UTC"),
        "nearest_stop_id": pl.String(),
        "nearest_stop_m": pl.Float64(),
    }
)


def _local_xy(lat: np.ndarray, lon: np.ndarray, lat0: float) -> np.ndarray:
    """Metres east and north of (lat0, 0) on a local flat earth (a city is a few km wide)."""
    rad = np.pi / 180.0
    return np.column_stack(
        [lon * rad * EARTH_RADIUS_M * np.cos(lat0 * rad), lat * rad * EARTH_RADIUS_M]
    )


def compute_off_stop_doors(
    doors: pl.DataFrame, stops: pl.DataFrame, runs: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """Door openings away from every stop during a run (OFF_STOP_SCHEMA): the door event's
    ping, nearest_stop_id and nearest_stop_m (straight line). `doors`: ping_id, vehicle_id,
    operator_id, event_at, lat, lon (door events only); `stops`: stop_id, stop_lat, stop_lon;
    `runs`: vehicle_id, started_at, ended_at. Empty without the profile's distance."""
    limit = profile.infractions.off_stop_min_distance_m
    stops = stops.filter(pl.col("stop_lat").is_not_null() & pl.col("stop_lon").is_not_null())
    if limit is None or doors.height == 0 or stops.height == 0:
        return pl.DataFrame(schema=OFF_STOP_SCHEMA)
    from scipy.spatial import cKDTree  # imported here: a second to import, for door events only

    lat0 = float(stops["stop_lat"].mean())  # type: ignore[arg-type]
    tree = cKDTree(_local_xy(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy(), lat0))
    dist, idx = tree.query(_local_xy(doors["lat"].to_numpy(), doors["lon"].to_numpy(), lat0))
    near = doors.with_columns(
        pl.Series("nearest_stop_m", dist, dtype=pl.Float64),
        pl.Series("nearest_stop_id", stops["stop_id"].gather(idx), dtype=pl.String),
    ).filter(pl.col("nearest_stop_m") > limit.value)
    in_run = near.join(runs.select("vehicle_id", "started_at", "ended_at"), on="vehicle_id").filter(
        pl.col("event_at").is_between("started_at", "ended_at")
    )
    return (
        in_run.unique("ping_id")
        .select(list(OFF_STOP_SCHEMA))
        .cast(OFF_STOP_SCHEMA)
        .sort("event_at", "vehicle_id")
    )


def match_off_stop_facts(doors: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Facts VI (FACT_COLUMNS), one per vehicle and local day."""
    tz = profile.general.timezone.value
    local = pl.col("event_at").dt.convert_time_zone(tz)
    one = pl.format(
        "{} a {} m da parada mais próxima ({}; ping {})",
        local.dt.strftime("%H:%M:%S"),
        pl.col("nearest_stop_m").round(0).cast(pl.Int64),
        "nearest_stop_id",
        "ping_id",
    )
    return (
        doors.with_columns(local.dt.date().alias("occurred_on"), one.alias("_ev"))
        .group_by("operator_id", "vehicle_id", "occurred_on")
        .agg(
            pl.col("event_at").min().alias("occurred_at"),
            pl.len().alias("_n"),
            pl.col("_ev").sort_by("event_at").str.join("; ").alias("evidence"),
            pl.col("ping_id").sort().cast(pl.String).str.join(",").alias("ping_ids"),
        )
        .select(
            pl.lit("VI").alias("item"),
            "operator_id",
            pl.lit(None, dtype=pl.String).alias("route_id"),
            "vehicle_id",
            "occurred_on",
            "occurred_at",
            pl.format(
                "veículo {}: {} abertura(s) de porta fora de parada ou terminal durante a viagem "
                "(evento de porta do AVL)",
                "vehicle_id",
                "_n",
            ).alias("fact"),
            "evidence",
            pl.lit(None, dtype=pl.String).alias("trip_ids"),
            "ping_ids",
        )
        .select(FACT_COLUMNS)
        .sort("occurred_on", "vehicle_id")
    )


def read_door_events(store: Store, start_at: datetime, end_at: datetime) -> pl.DataFrame:
    """The door events of the period: ping_id, vehicle_id, operator_id, event_at, lat, lon."""
    return store.query(
        "SELECT ping_id, vehicle_id, operator_id, event_at, lat, lon FROM vehicle_locations "
        "WHERE event_at >= ? AND event_at < ? AND event_code = ? ORDER BY event_at, vehicle_id",
        [start_at, end_at, DOOR_EVENT],
    )
