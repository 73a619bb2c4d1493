"""Simulate on a given GTFS feed (`--gtfs FEED`) instead of the built-in city.

The feed is read and measured with `gtfs` (read_feed, build_geometry, compute_service_dates).
Lines are taken in route_id order until their blocks fill `n_vehicles`; the GTFS written to the
output keeps only those lines (same ids and formats as the feed), with block ids the
simulator made when the feed had none. Frequency-based trips are not simulated.

Each shape's stop pattern is the one of its first trip; planned stop times along a trip are
proportional to the distance (the truth does not depend on them).
"""

from __future__ import annotations

import io
import zipfile
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from core.errors import InputError
from gtfs.calendar import compute_service_dates
from gtfs.read import read_feed, read_feed_files
from gtfs.schedule import build_geometry, build_trip_summary, feed_timezone
from sample_data.network import LineSpec, from_wgs84
from sample_data.timetable import Timetable

_LINK_M = 400.0
_LAYOVER_S = 180
_REPOSITION_M_S = 9.0


def build_feed_network(
    path: Path, start: date, days: int, n_vehicles: int, min_layover_s: int
) -> tuple[Timetable, pl.DataFrame, pl.DataFrame, str, dict[str, bytes]]:
    """(timetable, stops, day_services (service_date, service_id), timezone, GTFS files to write)."""
    feed = read_feed(path)
    if not feed.has("stop_times") or not feed.has("trips"):
        raise InputError(
            "the feed has no trips or stop times",
            where=str(path),
            hint="give a GTFS zip or folder with trips.txt and stop_times.txt",
        )
    geom = build_geometry(feed)
    summary = build_trip_summary(feed, geom).filter(
        pl.col("shape_id").is_not_null() & (pl.col("planned_distance_m") > 0)
    )
    if feed.has("frequencies") and feed["frequencies"].height:
        summary = summary.filter(~pl.col("trip_id").is_in(feed["frequencies"]["trip_id"].implode()))
    end = start + timedelta(days=days - 1)
    day_services = compute_service_dates(feed, start, end)
    summary = summary.join(day_services.select("service_id").unique(), on="service_id", how="semi")
    if summary.height == 0:
        raise InputError(
            f"no trips of the feed run between {start} and {end}",
            where=str(path),
            hint="choose --start inside the feed's calendar",
        )
    stops_xy = geom.stops.select("stop_id", "stop_lat", "stop_lon")
    x, y = from_wgs84(stops_xy["stop_lat"].to_numpy(), stops_xy["stop_lon"].to_numpy())
    stops = stops_xy.select("stop_id", x_m=pl.Series(x), y_m=pl.Series(y), area=pl.lit("urban"))
    trips = _blocks(summary, stops, min_layover_s)
    # lines in route order until their weekday-like (busiest service) blocks fill the fleet
    per_route = (
        trips.group_by("route_id", "service_id")
        .agg(n=pl.col("block_id").n_unique())
        .group_by("route_id")
        .agg(pl.col("n").max())
        .sort("route_id")
    )
    keep = per_route.filter(pl.col("n").cum_sum() <= max(n_vehicles, int(per_route["n"][0])))[
        "route_id"
    ]
    trips = trips.filter(pl.col("route_id").is_in(keep.implode()))
    # stop pattern of each shape: its first trip's stops, distances along the shape in metres
    first_trip = trips.sort("trip_id").group_by("shape_id").agg(pl.col("trip_id").first())
    patterns = (
        geom.stop_times.join(first_trip, on=["shape_id", "trip_id"], how="semi")
        .sort("shape_id", "stop_sequence")
        .select(
            "shape_id",
            stop_sequence=pl.int_range(1, pl.len() + 1).over("shape_id").cast(pl.Int32),
            stop_id="stop_id",
            dist_m="shape_dist_m",
        )
        .filter(pl.col("dist_m").is_not_null())
    )
    shapes_pts = geom.shapes.filter(
        pl.col("shape_id").is_in(first_trip["shape_id"].implode())
    ).sort("shape_id", "shape_pt_sequence")
    sx, sy = from_wgs84(
        shapes_pts["shape_pt_lat"].to_numpy(), shapes_pts["shape_pt_lon"].to_numpy()
    )
    shapes_pts = shapes_pts.with_columns(x=pl.Series(sx), y=pl.Series(sy))
    shapes = {
        sid: np.column_stack([g["x"].to_numpy(), g["y"].to_numpy()])
        for (sid,), g in shapes_pts.group_by("shape_id", maintain_order=True)
    }
    agency = feed.get("routes")
    route_agency = (
        dict(agency.select("route_id", pl.col("agency_id").fill_null("O1")).iter_rows())
        if agency is not None and "agency_id" in agency.columns
        else {}
    )
    routes = sorted(keep.to_list())
    lines = [
        LineSpec(r, r, r, ((0.0, 0.0), (1.0, 0.0)), 600, route_agency.get(r) or "O1", "L1")
        for r in routes
    ]
    tt_trips = trips.select(
        "trip_id",
        template_trip_id="trip_id",
        route_id="route_id",
        service_id="service_id",
        direction_id=pl.col("direction_id").fill_null(0).cast(pl.Int32),
        block_id="block_id",
        shape_id="shape_id",
        start_s=pl.col("first_s").cast(pl.Int32),
        run_s=(pl.col("last_s") - pl.col("first_s")).clip(lower_bound=60).cast(pl.Int32),
        planned_distance_m="planned_distance_m",
        headway_s=pl.lit(None, pl.Int32),
        is_exact_times=pl.lit(True),
    ).sort("service_id", "route_id", "block_id", "start_s")
    empty_freq = pl.DataFrame(
        schema={
            "trip_id": pl.String,
            "start_time_s": pl.Int64,
            "end_time_s": pl.Int64,
            "headway_s": pl.Int64,
            "exact_times": pl.Int64,
        }
    )
    tt = Timetable(tt_trips, patterns, shapes, empty_freq, lines)
    files = _filtered_files(path, tt_trips)
    return (
        tt,
        stops.join(patterns.select("stop_id").unique(), on="stop_id", how="semi"),
        day_services,
        feed_timezone(feed),
        files,
    )


def _blocks(summary: pl.DataFrame, stops: pl.DataFrame, min_layover_s: int) -> pl.DataFrame:
    """The feed's block_id, or blocks chained per (service, route): a trip follows the earliest
    free vehicle whose last trip ended within _LINK_M of its first stop."""
    if "block_id" in summary.columns and summary["block_id"].null_count() == 0:
        return summary
    xy = {k: (a, b) for k, a, b in stops.select("stop_id", "x_m", "y_m").iter_rows()}
    out: list[str] = []
    ordered = summary.sort("service_id", "route_id", "first_s", "trip_id")
    free: list[tuple[int, str, str]] = []  # (free from s, last stop, block id)
    key = None
    n = 0
    # a scheduling heuristic over the trips of the chosen lines: a loop, not a hot path
    for service, route, first_s, last_s, a, b in ordered.select(
        "service_id", "route_id", "first_s", "last_s", "first_stop_id", "last_stop_id"
    ).iter_rows():
        if (service, route) != key:
            key, free, n = (service, route), [], 0
        ax, ay = xy.get(a, (0.0, 0.0))
        # a free vehicle at this terminal, else one that can reposition in time
        far = [
            np.hypot(xy.get(s, (1e9, 1e9))[0] - ax, xy.get(s, (1e9, 1e9))[1] - ay)
            for _, s, _ in free
        ]
        pick = next(
            (i for i, (t, _, _) in enumerate(free) if t <= first_s and far[i] <= _LINK_M), None
        )
        if pick is None:
            pick = next(
                (
                    i
                    for i, (t, _, _) in enumerate(free)
                    if t + far[i] / _REPOSITION_M_S + 60 <= first_s
                ),
                None,
            )
        if pick is None:
            n += 1
            block = f"{route}-{service}-{n:03d}"
        else:
            block = free.pop(pick)[2]
        out.append(block)
        free.append((last_s + max(min_layover_s, _LAYOVER_S), b, block))
        free.sort()
    return ordered.with_columns(block_id=pl.Series(out))


def _filtered_files(path: Path, trips: pl.DataFrame) -> dict[str, bytes]:
    """The feed's files restricted to the simulated lines, with the simulator's block ids."""
    raw = read_feed_files(path)
    keep_trips = trips.select("trip_id", "block_id")
    frames = {
        name: pl.read_csv(io.BytesIO(data), infer_schema=False)
        for name, data in raw.items()
        if name.endswith(".txt")
    }
    routes = trips["route_id"].unique().implode()
    shapes = trips["shape_id"].unique().implode()
    services = trips["service_id"].unique().implode()
    out: dict[str, bytes] = {}
    for name, df in frames.items():
        if name == "trips.txt":
            df = (
                df.join(keep_trips.rename({"block_id": "_b"}), on="trip_id", how="inner")
                .with_columns(block_id=pl.col("_b"))
                .drop("_b")
            )
        elif name in ("stop_times.txt", "frequencies.txt"):
            df = df.filter(pl.col("trip_id").is_in(trips["trip_id"].implode()))
        elif name == "routes.txt":
            df = df.filter(pl.col("route_id").is_in(routes))
        elif name == "shapes.txt":
            df = df.filter(pl.col("shape_id").is_in(shapes))
        elif name in ("calendar.txt", "calendar_dates.txt"):
            df = df.filter(pl.col("service_id").is_in(services))
        buf = io.BytesIO()
        df.write_csv(buf)
        out[name] = buf.getvalue()
    return out


def write_feed_files(files: dict[str, bytes], folder: Path, zip_path: Path) -> None:
    """Write the filtered feed as a folder and a byte-stable zip."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(files):
            (folder / name).write_bytes(files[name])
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[name], compresslevel=1)
