"""The matched days as a GTFS-Realtime archive: one VehiclePositions FeedMessage per minute,
zipped, written with the same protobuf bindings as the live feed (`gtfs.realtime`).

Reads (store): vehicle_locations, trips_performed, scheduled_trips. The archive replays what a
GTFS-RT VehiclePositions feed polled once a minute would have published, with the trip each
vehicle was matched to afterwards (which a live feed could only guess): tools that consume
GTFS-RT archives (e.g. accuracy studies) read it as they read a recorded feed.

Layout of the zip: `vehicle_positions/YYYYMMDDTHHMMZ.pb` (the UTC minute the message covers;
header timestamp = its latest fix) and `manifest.json` (service days, number of messages and
entities, time zone).
"""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from core.lake import local_day_sql
from core.store import Store
from gtfs.realtime import build_vehicle_positions, encode_feed

ARCHIVE_FOLDER = "vehicle_positions"
MANIFEST = "manifest.json"


def read_archive_positions(store: Store, start: date, end: date, timezone: str) -> pl.DataFrame:
    """The last fix of each vehicle in each UTC minute of the local days `start`..`end`.

    Columns: minute_s (epoch seconds of the minute's start), entity_id (the vehicle),
    vehicle_id, lat, lon, bearing_deg, speed_m_s, timestamp_s (the fix), trip_id, route_id,
    direction_id, start_date (YYYYMMDD, the matched trip's service day), start_time (its
    planned departure HH:MM:SS) -- the trip fields null when the fix is outside a matched run;
    sorted by minute, then vehicle.
    """
    day = local_day_sql("p.event_at", timezone)
    return store.query(
        f"""
        WITH fixes AS (
            SELECT p.ping_id, p.vehicle_id, p.event_at, p.lat, p.lon,
                   p.heading_deg, p.speed_m_s,
                   CAST(floor(epoch(p.event_at) / 60) * 60 AS BIGINT) AS minute_s
            FROM vehicle_locations p
            WHERE {day} BETWEEN ? AND ?
            QUALIFY row_number() OVER (
                PARTITION BY p.vehicle_id, minute_s ORDER BY p.event_at DESC, p.ping_id DESC
            ) = 1
        ),
        runs AS (
            SELECT r.vehicle_id, r.started_at, r.ended_at, r.trip_id, r.route_id,
                   r.direction_id, s.service_date, s.planned_start_s
            FROM trips_performed r
            LEFT JOIN scheduled_trips s USING (service_date, trip_id)
            WHERE r.trip_id IS NOT NULL
        )
        SELECT f.minute_s, f.vehicle_id AS entity_id, f.vehicle_id, f.lat, f.lon,
               CAST(f.heading_deg AS DOUBLE) AS bearing_deg,
               CAST(f.speed_m_s AS DOUBLE) AS speed_m_s,
               CAST(epoch(f.event_at) AS BIGINT) AS timestamp_s,
               r.trip_id, r.route_id, r.direction_id,
               strftime(r.service_date, '%Y%m%d') AS start_date,
               CASE WHEN r.planned_start_s IS NULL THEN NULL ELSE
                   printf('%02d:%02d:%02d', CAST(r.planned_start_s // 3600 AS INT),
                          CAST(r.planned_start_s % 3600 // 60 AS INT),
                          CAST(r.planned_start_s % 60 AS INT)) END AS start_time
        FROM fixes f
        LEFT JOIN runs r
          ON r.vehicle_id = f.vehicle_id AND f.event_at BETWEEN r.started_at AND r.ended_at
        QUALIFY row_number() OVER (
            PARTITION BY f.vehicle_id, f.minute_s ORDER BY r.started_at DESC NULLS LAST
        ) = 1
        ORDER BY f.minute_s, f.vehicle_id
        """,
        [start, end],
    )


def minute_name(minute_s: int) -> str:
    """The archive member of a minute: vehicle_positions/YYYYMMDDTHHMMZ.pb (UTC)."""
    stamp = datetime.fromtimestamp(minute_s, tz=UTC).strftime("%Y%m%dT%H%MZ")
    return f"{ARCHIVE_FOLDER}/{stamp}.pb"


def write_gtfs_rt_archive(
    positions: pl.DataFrame, out: str | Path, *, start: date, end: date, timezone: str
) -> dict[str, int]:
    """Write `positions` (`read_archive_positions`) as one FeedMessage per minute in a zip,
    replacing `out` atomically. Returns n_messages and n_entities."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".tmp-{target.name}")
    n_messages = 0
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for (minute_s,), group in positions.group_by("minute_s", maintain_order=True):
            newest = int(group["timestamp_s"].max())  # type: ignore[arg-type]
            feed = build_vehicle_positions(group.drop("minute_s"), newest)
            archive.writestr(minute_name(int(minute_s)), encode_feed(feed))
            n_messages += 1
        manifest = {
            "service_days": [start.isoformat(), end.isoformat()],
            "timezone": timezone,
            "feed": "VehiclePositions, one FeedMessage per UTC minute (last fix per vehicle)",
            "n_messages": n_messages,
            "n_entities": positions.height,
        }
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2) + "\n")
    tmp.replace(target)
    return {"n_messages": n_messages, "n_entities": positions.height}
