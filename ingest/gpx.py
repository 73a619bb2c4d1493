"""GPX tracks (an inspector's in-loco trace) as raw AVL records, read with gpxpy.

One track is one vehicle's trace: the vehicle id comes from the `--vehicle` option or, without
it, from the track's name. record_key = "trk[i].seg[j].pt[k]".
"""

from __future__ import annotations

from pathlib import Path

import gpxpy
import gpxpy.gpx
import polars as pl

from core.errors import InputError
from ingest.parsing import RECORD_KEY


def read_gpx(path: Path, vehicle_id: str | None = None) -> pl.DataFrame:
    """Track points as raw AVL records: vehicle_id, event_at, lat, lon, speed_m_s, heading_deg."""
    try:
        doc = gpxpy.parse(path.read_text(encoding="utf-8"))
    except (gpxpy.gpx.GPXException, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not a readable GPX file: {exc}", where=str(path)) from exc
    # gpxpy hands out Python objects; a trace has thousands of points, not millions.
    rows = [
        (
            f"trk[{i}].seg[{j}].pt[{k}]",
            vehicle_id if vehicle_id is not None else track.name,
            point.time.isoformat() if point.time is not None else None,
            point.latitude,
            point.longitude,
            point.speed,
            point.course,
        )
        for i, track in enumerate(doc.tracks)
        for j, segment in enumerate(track.segments)
        for k, point in enumerate(segment.points)
    ]
    return pl.DataFrame(
        rows,
        schema={
            RECORD_KEY: pl.String(),
            "vehicle_id": pl.String(),
            "event_at": pl.String(),
            "lat": pl.Float64(),
            "lon": pl.Float64(),
            "speed_m_s": pl.Float64(),
            "heading_deg": pl.Float64(),
        },
        orient="row",
    )
