"""Rules of in-loco inspection records (`pontual ingest inspections FILE`).

An inspector (BG art. 57 §2, art. 77) records at a time and a place (a stop id, or lat/lon)
a vehicle or a line seen in service (`is_vehicle_seen` yes), or a wait with none seen (no),
and what was seen in words. Matching uses the sightings as evidence for trips without GPS
(analytics.matching.evidence). Rows breaking a rule go to quarantine with the reason.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from ingest.checks import Check
from ingest.options import IngestOptions
from ingest.rules import future_check

KIND = "inspections"
TABLE = "inspections"


def compute_inspection_checks(options: IngestOptions) -> list[Check]:
    """A place (stop or both coordinates, within WGS 84 ranges), something seen (a vehicle or
    a line) and a time not in the future."""
    lat, lon = pl.col("lat"), pl.col("lon")
    return [
        Check(
            "stop_id",
            pl.col("stop_id").is_null() & (lat.is_null() | lon.is_null()),
            "no place: give stop_id, or lat and lon",
        ),
        Check("lat", (lat < -90) | (lat > 90), "lat outside -90..90"),
        Check("lon", (lon < -180) | (lon > 180), "lon outside -180..180"),
        Check(
            "vehicle_id",
            pl.col("vehicle_id").is_null() & pl.col("route_id").is_null(),
            "nothing seen: give vehicle_id or route_id",
        ),
        future_check("observed_at", datetime.now(UTC), options),
    ]
