"""GTFS-Realtime decode and encode with gtfs-realtime-bindings, frames in and out.

The same code reads feeds (the AVL ingest of VehiclePositions `.pb` files and URLs) and writes
them (Pontual's live feed), so what one side drops the other cannot miss: the MBTA files
round-trip through `read_*` and `build_*` without loss of the fields below.

VehiclePositions frame (one row per entity with a vehicle), `VEHICLE_POSITION_COLUMNS`:
entity_id, vehicle_id, vehicle_label, trip_id, route_id, direction_id, start_date (YYYYMMDD),
start_time (HH:MM:SS), schedule_relationship (enum name), lat, lon (degrees), bearing_deg,
speed_m_s, current_stop_sequence, stop_id, current_status (enum name), timestamp_s (epoch
seconds of the fix), occupancy_status (enum name), occupancy_percentage.

TripUpdates: a trips frame (entity_id, trip_id, route_id, direction_id, start_date,
start_time, schedule_relationship, vehicle_id, vehicle_label, timestamp_s, delay_s) and a
stop-time-updates frame (entity_id, stop_sequence, stop_id, arrival_time_s, arrival_delay_s,
departure_time_s, departure_delay_s, schedule_relationship), in feed order.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from google.protobuf.message import DecodeError
from google.transit import gtfs_realtime_pb2 as rt

from core.errors import InputError

GTFS_RT_VERSION = "2.0"

VEHICLE_POSITION_COLUMNS: dict[str, pl.DataType] = {
    "entity_id": pl.String(),
    "vehicle_id": pl.String(),
    "vehicle_label": pl.String(),
    "trip_id": pl.String(),
    "route_id": pl.String(),
    "direction_id": pl.Int32(),
    "start_date": pl.String(),
    "start_time": pl.String(),
    "schedule_relationship": pl.String(),
    "lat": pl.Float64(),
    "lon": pl.Float64(),
    "bearing_deg": pl.Float64(),
    "speed_m_s": pl.Float64(),
    "current_stop_sequence": pl.Int64(),
    "stop_id": pl.String(),
    "current_status": pl.String(),
    "timestamp_s": pl.Int64(),
    "occupancy_status": pl.String(),
    "occupancy_percentage": pl.Int32(),
}

TRIP_UPDATE_COLUMNS: dict[str, pl.DataType] = {
    "entity_id": pl.String(),
    "trip_id": pl.String(),
    "route_id": pl.String(),
    "direction_id": pl.Int32(),
    "start_date": pl.String(),
    "start_time": pl.String(),
    "schedule_relationship": pl.String(),
    "vehicle_id": pl.String(),
    "vehicle_label": pl.String(),
    "timestamp_s": pl.Int64(),
    "delay_s": pl.Int32(),
}

STOP_TIME_UPDATE_COLUMNS: dict[str, pl.DataType] = {
    "entity_id": pl.String(),
    "stop_sequence": pl.Int64(),
    "stop_id": pl.String(),
    "arrival_time_s": pl.Int64(),
    "arrival_delay_s": pl.Int32(),
    "departure_time_s": pl.Int64(),
    "departure_delay_s": pl.Int32(),
    "schedule_relationship": pl.String(),
}

_TRIP = rt.TripDescriptor
_VP = rt.VehiclePosition
_STU = rt.TripUpdate.StopTimeUpdate


def decode_feed(data: bytes, *, source: str = "") -> rt.FeedMessage:
    """Parse GTFS-RT protobuf bytes; InputError when they are not a FeedMessage."""
    feed = rt.FeedMessage()
    try:
        feed.ParseFromString(data)
    except DecodeError as exc:
        raise InputError(
            f"not a GTFS-Realtime FeedMessage: {exc}",
            where=source or None,
            hint="expected protobuf bytes of a GTFS-RT feed (VehiclePositions, TripUpdates)",
        ) from exc
    if not feed.HasField("header"):
        raise InputError(
            "GTFS-Realtime feed without a header",
            where=source or None,
            hint="is this a GTFS-RT feed?",
        )
    return feed


def encode_feed(feed: rt.FeedMessage) -> bytes:
    return feed.SerializeToString()


def new_feed(timestamp_s: int, *, incrementality: str = "FULL_DATASET") -> rt.FeedMessage:
    """An empty FeedMessage with its header."""
    feed = rt.FeedMessage()
    feed.header.gtfs_realtime_version = GTFS_RT_VERSION
    feed.header.incrementality = rt.FeedHeader.Incrementality.Value(incrementality)
    feed.header.timestamp = int(timestamp_s)
    return feed


def _opt(msg: Any, name: str) -> Any:
    return getattr(msg, name) if msg.HasField(name) else None


def _enum(msg: Any, name: str, enum: Any) -> str | None:
    return enum.Name(getattr(msg, name)) if msg.HasField(name) else None


def _trip_fields(trip: Any) -> dict[str, Any]:
    return {
        "trip_id": _opt(trip, "trip_id"),
        "route_id": _opt(trip, "route_id"),
        "direction_id": _opt(trip, "direction_id"),
        "start_date": _opt(trip, "start_date"),
        "start_time": _opt(trip, "start_time"),
        "schedule_relationship": _enum(trip, "schedule_relationship", _TRIP.ScheduleRelationship),
    }


def read_vehicle_positions(feed: rt.FeedMessage) -> pl.DataFrame:
    """One row per VehiclePosition entity (see the module docstring for the columns)."""
    rows = []
    for entity in feed.entity:
        if not entity.HasField("vehicle"):
            continue
        vp = entity.vehicle
        pos = vp.position if vp.HasField("position") else None
        rows.append(
            {
                "entity_id": entity.id,
                "vehicle_id": _opt(vp.vehicle, "id") if vp.HasField("vehicle") else None,
                "vehicle_label": _opt(vp.vehicle, "label") if vp.HasField("vehicle") else None,
                **(_trip_fields(vp.trip) if vp.HasField("trip") else {}),
                "lat": pos.latitude if pos is not None else None,
                "lon": pos.longitude if pos is not None else None,
                "bearing_deg": _opt(pos, "bearing") if pos is not None else None,
                "speed_m_s": _opt(pos, "speed") if pos is not None else None,
                "current_stop_sequence": _opt(vp, "current_stop_sequence"),
                "stop_id": _opt(vp, "stop_id"),
                "current_status": _enum(vp, "current_status", _VP.VehicleStopStatus),
                "timestamp_s": _opt(vp, "timestamp"),
                "occupancy_status": _enum(vp, "occupancy_status", _VP.OccupancyStatus),
                "occupancy_percentage": _opt(vp, "occupancy_percentage"),
            }
        )
    return pl.DataFrame(rows, schema=VEHICLE_POSITION_COLUMNS, orient="row" if not rows else None)


def _set_trip(trip: Any, row: dict[str, Any]) -> None:
    for name in ("trip_id", "route_id", "direction_id", "start_date", "start_time"):
        if row.get(name) is not None:
            setattr(trip, name, row[name])
    if row.get("schedule_relationship") is not None:
        trip.schedule_relationship = _TRIP.ScheduleRelationship.Value(row["schedule_relationship"])


def build_vehicle_positions(df: pl.DataFrame, timestamp_s: int) -> rt.FeedMessage:
    """A VehiclePositions feed from a frame with (a subset of) `VEHICLE_POSITION_COLUMNS`."""
    feed = new_feed(timestamp_s)
    for i, row in enumerate(df.iter_rows(named=True)):
        entity = feed.entity.add()
        entity.id = str(row.get("entity_id") or row.get("vehicle_id") or i)
        vp = entity.vehicle
        if any(row.get(k) is not None for k in ("trip_id", "route_id", "start_date")):
            _set_trip(vp.trip, row)
        if row.get("vehicle_id") is not None:
            vp.vehicle.id = row["vehicle_id"]
        if row.get("vehicle_label") is not None:
            vp.vehicle.label = row["vehicle_label"]
        if row.get("lat") is not None and row.get("lon") is not None:
            vp.position.latitude = row["lat"]
            vp.position.longitude = row["lon"]
            if row.get("bearing_deg") is not None:
                vp.position.bearing = row["bearing_deg"]
            if row.get("speed_m_s") is not None:
                vp.position.speed = row["speed_m_s"]
        for name in ("current_stop_sequence", "stop_id", "occupancy_percentage"):
            if row.get(name) is not None:
                setattr(vp, name, row[name])
        if row.get("timestamp_s") is not None:
            vp.timestamp = row["timestamp_s"]
        if row.get("current_status") is not None:
            vp.current_status = _VP.VehicleStopStatus.Value(row["current_status"])
        if row.get("occupancy_status") is not None:
            vp.occupancy_status = _VP.OccupancyStatus.Value(row["occupancy_status"])
    return feed


def read_trip_updates(feed: rt.FeedMessage) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The trips and stop-time-updates frames of the TripUpdate entities."""
    trips, stops = [], []
    for entity in feed.entity:
        if not entity.HasField("trip_update"):
            continue
        tu = entity.trip_update
        vehicle = tu.vehicle if tu.HasField("vehicle") else None
        trips.append(
            {
                "entity_id": entity.id,
                **_trip_fields(tu.trip),
                "vehicle_id": _opt(vehicle, "id") if vehicle is not None else None,
                "vehicle_label": _opt(vehicle, "label") if vehicle is not None else None,
                "timestamp_s": _opt(tu, "timestamp"),
                "delay_s": _opt(tu, "delay"),
            }
        )
        for stu in tu.stop_time_update:
            arr = stu.arrival if stu.HasField("arrival") else None
            dep = stu.departure if stu.HasField("departure") else None
            stops.append(
                {
                    "entity_id": entity.id,
                    "stop_sequence": _opt(stu, "stop_sequence"),
                    "stop_id": _opt(stu, "stop_id"),
                    "arrival_time_s": _opt(arr, "time") if arr is not None else None,
                    "arrival_delay_s": _opt(arr, "delay") if arr is not None else None,
                    "departure_time_s": _opt(dep, "time") if dep is not None else None,
                    "departure_delay_s": _opt(dep, "delay") if dep is not None else None,
                    "schedule_relationship": _enum(
                        stu, "schedule_relationship", _STU.ScheduleRelationship
                    ),
                }
            )
    return (
        pl.DataFrame(trips, schema=TRIP_UPDATE_COLUMNS, orient="row" if not trips else None),
        pl.DataFrame(stops, schema=STOP_TIME_UPDATE_COLUMNS, orient="row" if not stops else None),
    )


def build_trip_updates(
    trips: pl.DataFrame, stops: pl.DataFrame, timestamp_s: int
) -> rt.FeedMessage:
    """A TripUpdates feed from the two frames of `read_trip_updates` (stops joined by entity)."""
    feed = new_feed(timestamp_s)
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for row in stops.iter_rows(named=True):
        by_entity.setdefault(row["entity_id"], []).append(row)
    for row in trips.iter_rows(named=True):
        entity = feed.entity.add()
        entity.id = row["entity_id"]
        tu = entity.trip_update
        _set_trip(tu.trip, row)
        if row.get("vehicle_id") is not None:
            tu.vehicle.id = row["vehicle_id"]
        if row.get("vehicle_label") is not None:
            tu.vehicle.label = row["vehicle_label"]
        if row.get("timestamp_s") is not None:
            tu.timestamp = row["timestamp_s"]
        if row.get("delay_s") is not None:
            tu.delay = row["delay_s"]
        for s in by_entity.get(row["entity_id"], []):
            stu = tu.stop_time_update.add()
            if s["stop_sequence"] is not None:
                stu.stop_sequence = s["stop_sequence"]
            if s["stop_id"] is not None:
                stu.stop_id = s["stop_id"]
            for event in ("arrival", "departure"):
                t, d = s[f"{event}_time_s"], s[f"{event}_delay_s"]
                if t is not None:
                    getattr(stu, event).time = t
                if d is not None:
                    getattr(stu, event).delay = d
                u = s.get(f"{event}_uncertainty_s")  # optional column: absent = unknown
                if u is not None and (t is not None or d is not None):
                    getattr(stu, event).uncertainty = u
            if s["schedule_relationship"] is not None:
                stu.schedule_relationship = _STU.ScheduleRelationship.Value(
                    s["schedule_relationship"]
                )
    return feed
