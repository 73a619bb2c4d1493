"""Ao vivo: the vehicles of the live GTFS-RT feed (`pontual serve`), or the last stored ping
of each vehicle when the feed is not running.

Reads the feed server's JSON (VehiclePositions and TripUpdates, and its stop API: the stops
and a stop's next arrivals) over HTTP, and `vehicle_locations` from the snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import polars as pl

from core.instants import to_utc_instant
from core.store import Store

LIVE_POSITIONS_PATH = "/gtfs-rt/vehicle-positions.pb?format=json"


LIVE_TRIP_UPDATES_PATH = "/gtfs-rt/trip-updates.pb?format=json"


LIVE_HEALTH_PATH = "/health"


LIVE_STOPS_PATH = "/api/stops"
"""The feed server's stops (stop_id, stop_code, stop_name, n_arrivals); a stop's next arrivals
are at `LIVE_STOPS_PATH/{stop_id}/arrivals`."""


PASSENGER_PAGE_PATH = "/paradas"
"""The feed server's passenger stop page (`/paradas/{stop_id}`)."""


LIVE_SCHEMA: dict[str, Any] = {
    "vehicle_id": pl.String,
    "route_id": pl.String,
    "trip_id": pl.String,
    "direction_id": pl.Int32,
    "lat": pl.Float64,
    "lon": pl.Float64,
    "delay_s": pl.Float64,
    "occupancy_status": pl.String,
    "occupancy_percentage": pl.Float64,
    "timestamp_at": pl.Datetime("us", "UTC"),
}
"""Columns of `build_live_vehicles`."""


def _json_path(frame: pl.DataFrame, column: str, *fields: str) -> pl.Expr:
    """The nested field `column.fields...` of a frame of JSON objects; null where the payload
    never carries it (protobuf JSON omits default and absent fields)."""
    if column not in frame.columns:
        return pl.lit(None)
    expr, dtype = pl.col(column), frame.schema[column]
    dtype_any: Any = dtype
    for name in fields:
        if not isinstance(dtype_any, pl.Struct) or name not in {f.name for f in dtype_any.fields}:
            return pl.lit(None)
        dtype_any = next(f.dtype for f in dtype_any.fields if f.name == name)
        expr = expr.struct.field(name)
    return expr


def build_live_vehicles(
    positions: Mapping[str, Any], trip_updates: Mapping[str, Any]
) -> pl.DataFrame:
    """The vehicles of the live feed (`pontual serve`'s GTFS-RT JSON, `?format=json`): one row
    per VehiclePosition with a position, its trip's delay from the TripUpdates feed.

    Columns: `vehicle_id`, `route_id`, `trip_id`, `direction_id` (null when not sent), `lat`, `lon` (WGS84), `delay_s` (the trip
    update's delay, seconds, + late; null when the vehicle has no predicted trip),
    `occupancy_status` (GTFS-RT enum name; null when not sent: EMPTY is protobuf's default),
    `occupancy_percentage` (0-100+), `timestamp_at` (UTC instant of the position).
    """
    entities = [e for e in positions.get("entity", []) if isinstance(e.get("vehicle"), dict)]
    if not entities:
        return pl.DataFrame(schema=LIVE_SCHEMA)
    vp = pl.from_dicts([e["vehicle"] for e in entities], infer_schema_length=None)
    vehicles = vp.select(
        _json_path(vp, "vehicle", "id").alias("vehicle_id"),
        _json_path(vp, "trip", "routeId").alias("route_id"),
        _json_path(vp, "trip", "tripId").alias("trip_id"),
        _json_path(vp, "trip", "directionId").alias("direction_id"),
        _json_path(vp, "position", "latitude").alias("lat"),
        _json_path(vp, "position", "longitude").alias("lon"),
        _json_path(vp, "occupancyStatus").alias("occupancy_status"),
        _json_path(vp, "occupancyPercentage").alias("occupancy_percentage"),
        # int64 fields are strings in protobuf JSON
        _json_path(vp, "timestamp").cast(pl.Int64).alias("timestamp_s"),
    ).with_columns(to_utc_instant("timestamp_s").alias("timestamp_at"))
    updates = [e["tripUpdate"] for e in trip_updates.get("entity", []) if "tripUpdate" in e]
    delays = pl.DataFrame(schema={"trip_id": pl.String, "delay_s": pl.Float64})
    if updates:
        tu = pl.from_dicts(updates, infer_schema_length=None)
        delays = (
            tu.select(
                _json_path(tu, "trip", "tripId").cast(pl.String).alias("trip_id"),
                _json_path(tu, "delay").cast(pl.Float64).alias("delay_s"),
            )
            .drop_nulls("trip_id")
            .unique("trip_id", keep="first")
        )
    out = vehicles.with_columns(pl.col("trip_id").cast(pl.String)).join(
        delays, on="trip_id", how="left"
    )
    return (
        out.select([pl.col(c).cast(t) for c, t in LIVE_SCHEMA.items()])
        .drop_nulls(["lat", "lon"])
        .sort("vehicle_id")
    )


def read_live_feed(base_url: str, timeout_s: float) -> pl.DataFrame | None:
    """Fetch the live vehicles from `pontual serve` at `base_url` (`build_live_vehicles`);
    None when the server does not answer or answers with an error."""
    import requests  # a dependency of streamlit; imported here so the module stays light

    base = base_url.rstrip("/")
    try:
        bodies = []
        for path in (LIVE_POSITIONS_PATH, LIVE_TRIP_UPDATES_PATH):
            reply = requests.get(base + path, timeout=timeout_s)
            reply.raise_for_status()
            bodies.append(reply.json())
    except (requests.RequestException, ValueError):
        return None
    return build_live_vehicles(bodies[0], bodies[1])


def build_live_selection(
    vehicles: pl.DataFrame, route_ids: Sequence[str] | None, direction: int | None
) -> pl.DataFrame:
    """The vehicles (live or stored: `route_id`, `direction_id`) on the sidebar's lines
    (`route_ids`; None: every vehicle, with a line or not) and `direction` (None: both). A
    vehicle whose line or direction is unknown is left out as soon as that filter is set."""
    if route_ids is not None:
        vehicles = vehicles.filter(pl.col("route_id").is_in(list(route_ids)))
    if direction is not None:
        vehicles = vehicles.filter(pl.col("direction_id") == direction)
    return vehicles


def read_last_positions(store: Store) -> pl.DataFrame:
    """The last stored ping of every vehicle: `vehicle_id`, `event_at`, `lat`, `lon`,
    `reported_occupancy`, and the line and direction of the last trip it started by then
    (`route_id`, `direction_id`; null when none: `trip_outcomes`), what the Ao vivo page shows
    when the live feed is not running."""
    return store.query(
        "WITH last AS (SELECT vehicle_id, max(event_at) AS event_at, "
        "arg_max(lat, event_at) AS lat, arg_max(lon, event_at) AS lon, "
        "arg_max(reported_occupancy, event_at) AS reported_occupancy "
        "FROM vehicle_locations GROUP BY vehicle_id), "
        "started AS (SELECT vehicle_id, actual_start_at, route_id, direction_id "
        "FROM trip_outcomes WHERE actual_start_at IS NOT NULL AND vehicle_id IS NOT NULL) "
        "SELECT l.vehicle_id, l.event_at, l.lat, l.lon, l.reported_occupancy, s.route_id, "
        "s.direction_id::INTEGER AS direction_id FROM last l ASOF LEFT JOIN started s "
        "ON s.vehicle_id = l.vehicle_id AND l.event_at >= s.actual_start_at "
        "ORDER BY l.vehicle_id"
    )


STOPS_SCHEMA: dict[str, Any] = {
    "stop_id": pl.String,
    "stop_code": pl.String,
    "stop_name": pl.String,
    "n_arrivals": pl.Int64,
}
"""Columns of `read_live_stops`."""


ARRIVALS_SCHEMA: dict[str, Any] = {
    "trip_id": pl.String,
    "route_short_name": pl.String,
    "headsign": pl.String,
    "vehicle_id": pl.String,
    "planned_at": pl.Datetime("us", "UTC"),
    "predicted_at": pl.Datetime("us", "UTC"),
    "delay_s": pl.Float64,
    "seconds": pl.Int64,
    "status": pl.String,
}
"""Columns of `build_stop_arrivals`."""


def _get_json(url: str, timeout_s: float) -> Any:
    """The JSON at `url`; None when the server does not answer or answers with an error."""
    import requests  # a dependency of streamlit; imported here so the module stays light

    try:
        reply = requests.get(url, timeout=timeout_s)
        reply.raise_for_status()
        return reply.json()
    except (requests.RequestException, ValueError):
        return None


def read_live_stops(base_url: str, timeout_s: float) -> pl.DataFrame | None:
    """The stops `pontual serve` at `base_url` knows (`STOPS_SCHEMA`: n_arrivals, its predicted
    arrivals to come), by name; None when it does not answer (or has no stop API)."""
    body = _get_json(base_url.rstrip("/") + LIVE_STOPS_PATH, timeout_s)
    if not isinstance(body, dict) or not isinstance(body.get("stops"), list):
        return None
    if not body["stops"]:
        return pl.DataFrame(schema=STOPS_SCHEMA)
    stops = pl.from_dicts(body["stops"], infer_schema_length=None)
    return stops.select(
        [
            (pl.col(c) if c in stops.columns else pl.lit(None)).cast(t).alias(c)
            for c, t in STOPS_SCHEMA.items()
        ]
    ).sort("stop_name", "stop_id", nulls_last=True)


def read_stop_arrivals(base_url: str, stop_id: str, timeout_s: float) -> dict[str, Any] | None:
    """`pontual serve`'s JSON answer for a stop's next arrivals (stop_name, generated_at,
    arrivals); None when it does not answer."""
    url = f"{base_url.rstrip('/')}{LIVE_STOPS_PATH}/{quote(stop_id, safe='')}/arrivals"
    body = _get_json(url, timeout_s)
    return body if isinstance(body, dict) and isinstance(body.get("arrivals"), list) else None


def to_passenger_page_url(base_url: str, stop_id: str) -> str:
    """The address of a stop's passenger page on the feed server at `base_url`."""
    return f"{base_url.rstrip('/')}{PASSENGER_PAGE_PATH}/{quote(stop_id, safe='')}"


def build_stop_arrivals(body: Mapping[str, Any]) -> pl.DataFrame:
    """The arrivals of the stop API's answer (`read_stop_arrivals`) as a frame
    (`ARRIVALS_SCHEMA`): instants in UTC, `seconds` to go from the feed's clock, `status`
    'previsto' or 'cancelado'; soonest first, as the server sends them."""
    rows = body.get("arrivals") or []
    if not rows:
        return pl.DataFrame(schema=ARRIVALS_SCHEMA)
    raw = pl.from_dicts(rows, infer_schema_length=None)

    def col(name: str) -> pl.Expr:
        return pl.col(name) if name in raw.columns else pl.lit(None)

    def instant(name: str) -> pl.Expr:
        return (
            col(name)
            .cast(pl.String)
            .str.to_datetime("%Y-%m-%dT%H:%M:%SZ", time_zone="UTC", strict=False)
            .dt.cast_time_unit("us")
        )

    return raw.select(
        col("trip_id").cast(pl.String).alias("trip_id"),
        pl.coalesce(col("route_short_name"), col("route_id"))
        .cast(pl.String)
        .alias("route_short_name"),
        col("headsign").cast(pl.String).alias("headsign"),
        col("vehicle_id").cast(pl.String).alias("vehicle_id"),
        instant("planned_arrival").alias("planned_at"),
        instant("predicted_arrival").alias("predicted_at"),
        col("delay_s").cast(pl.Float64).alias("delay_s"),
        col("seconds").cast(pl.Int64).alias("seconds"),
        col("status").cast(pl.String).alias("status"),
    )
