"""GPX tracks (an inspector's in-loco trace) as raw AVL records, read with gpxpy.

One track is one vehicle's trace: the vehicle id comes from the `--vehicle` option or, without
it, from the track's name (a nameless track without `--vehicle` is refused with a hint).
record_key = "trk[i].seg[j].pt[k]". Routes (planned paths) and waypoints (places) are not a
vehicle's trace: they are counted and said, not loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gpxpy
import gpxpy.gpx
import polars as pl

from core.errors import InputError
from ingest.parsing import RECORD_KEY


@dataclass(frozen=True)
class GpxTrack:
    """The track points of a GPX file as raw AVL records (`records`: vehicle_id, event_at,
    lat, lon, speed_m_s, heading_deg), `notes` on what was not loaded (routes, waypoints) and
    `why_empty` when it holds no track point."""

    records: pl.DataFrame
    notes: tuple[str, ...] = ()
    why_empty: str | None = None


def read_gpx(path: Path, vehicle_id: str | None = None) -> GpxTrack:
    """Track points as raw AVL records (see `GpxTrack`)."""
    try:
        doc = gpxpy.parse(path.read_text(encoding="utf-8"))
    except (gpxpy.gpx.GPXException, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"not a readable GPX file: {exc}", where=str(path)) from exc
    if vehicle_id is None:
        nameless = [i for i, t in enumerate(doc.tracks) if not (t.name or "").strip()]
        if nameless and any(s.points for s in doc.tracks[nameless[0]].segments):
            raise InputError(
                f"GPX track {nameless[0] + 1} has no name, so its vehicle is unknown",
                where=str(path),
                hint="give the vehicle's fleet number: pontual ingest avl FILE.gpx --vehicle N",
            )
    # gpxpy hands out Python objects; a trace has thousands of points, not millions.
    rows = [
        (
            f"trk[{i}].seg[{j}].pt[{k}]",
            vehicle_id if vehicle_id is not None else (track.name or "").strip(),
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
    records = pl.DataFrame(
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
    n_route_points = sum(len(r.points) for r in doc.routes)
    notes: list[str] = []
    if doc.routes:
        notes.append(
            f"GPX: {len(doc.routes)} route(s) ({n_route_points} points) not loaded: "
            "a route is a planned path, not a vehicle's trace"
        )
    if doc.waypoints:
        notes.append(
            f"GPX: {len(doc.waypoints)} waypoint(s) not loaded: a waypoint is a place, not "
            "a vehicle's trace (record inspections with `pontual ingest inspections`)"
        )
    why_empty = None
    if records.height == 0:
        why_empty = (
            f"the GPX file holds no track point ({len(doc.tracks)} track(s), "
            f"{len(doc.routes)} route(s), {len(doc.waypoints)} waypoint(s))"
        )
    return GpxTrack(records, tuple(notes), why_empty)
