"""The day's network in metres: shapes densified into a grid of points, terminals,
and each trip's stops located along its shape.

Built once per service day and shared (read-only) by every vehicle partition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.spatial import cKDTree

from analytics.options import MatchOptions
from analytics.shape_grid import PointGrid, build_point_grid


@dataclass
class Network:
    """State of one day's geometry (classes only hold state; functions do the work).

    `points` holds the densified shapes: one row per point with `shape_idx`, `x_m`, `y_m`,
    `dist_m` (distance along its shape, metres); `grid` buckets those points in cells of the
    search reach (`on_route_buffer_m` + `densify_step_m`). `shapes` has one
    row per shape: `shape_idx`, `shape_id`, `length_m`, start/end coordinates, `origin_dist_m`
    and `destination_dist_m` (where the trips of that shape start and end, metres along it),
    `route_id` and `direction_id`.
    """

    shapes: pl.DataFrame
    points_x: np.ndarray
    points_y: np.ndarray
    points_dist: np.ndarray
    points_shape: np.ndarray
    grid: PointGrid
    stop_tree: cKDTree | None
    trip_stops: pl.DataFrame


def build_network(
    shapes: pl.DataFrame,
    trips: pl.DataFrame,
    stop_times: pl.DataFrame,
    stops: pl.DataFrame,
    options: MatchOptions,
) -> Network:
    """Densify the shapes used by `trips` and index them.

    `shapes`: gtfs_shapes rows (shape_id, shape_pt_sequence, shape_x_m, shape_y_m, shape_dist_m).
    `trips`: scheduled_trips of the day. `stop_times`: gtfs_stop_times of their template trips.
    `stops`: gtfs_stops (stop_id, stop_x_m, stop_y_m).
    `trip_stops` (result) has per template trip and stop: `stop_dist_m` (along the shape) and
    the planned offsets `arrival_offset_s` / `departure_offset_s` from the trip's first departure.
    """
    used = trips.select("shape_id").unique().drop_nulls()
    shp = (
        shapes.join(used, on="shape_id")
        .sort("shape_id", "shape_pt_sequence")
        .with_columns(pl.col("shape_id").rank("dense").cast(pl.Int32).sub(1).alias("shape_idx"))
    )
    # distance along from the geometry itself, so projections and stops share one measure
    shp = shp.with_columns(
        (pl.col("shape_x_m").diff().pow(2) + pl.col("shape_y_m").diff().pow(2))
        .sqrt()
        .fill_null(0.0)
        .cum_sum()
        .over("shape_idx")
        .alias("dist_m")
    )
    sid = shp["shape_idx"].to_numpy()
    d = shp["dist_m"].to_numpy()
    x = shp["shape_x_m"].to_numpy()
    y = shp["shape_y_m"].to_numpy()
    # densify: for each shape, points every `densify_step_m` plus its own vertices
    step = options.densify_step_m
    bounds = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1], True])
    lengths = d[bounds[1:] - 1]
    n_per = np.floor(lengths / step).astype(np.int64) + 2
    p_shape = np.repeat(np.arange(len(lengths), dtype=np.int32), n_per)
    first = np.repeat(np.cumsum(n_per) - n_per, n_per)
    k = np.arange(p_shape.size) - first
    p_dist = np.minimum(k * step, lengths[p_shape])
    # global interpolation: offset each shape's distances so they increase across shapes
    offset = np.r_[0.0, np.cumsum(lengths + 1.0)[:-1]]
    gd = d + offset[sid]
    gp = p_dist + offset[p_shape]
    p_x = np.interp(gp, gd, x)
    p_y = np.interp(gp, gd, y)

    start = shp.group_by("shape_idx").agg(
        pl.col("shape_id").first(),
        pl.col("dist_m").max().alias("length_m"),
        pl.col("shape_x_m").first().alias("start_x_m"),
        pl.col("shape_y_m").first().alias("start_y_m"),
        pl.col("shape_x_m").last().alias("end_x_m"),
        pl.col("shape_y_m").last().alias("end_y_m"),
    )
    points = pl.DataFrame(
        {
            "shape_id": shp["shape_id"].unique(maintain_order=True).gather(p_shape),
            "dist_m": p_dist,
            "x_m": p_x,
            "y_m": p_y,
        }
    )
    trip_stops = locate_trip_stops(points, trips, stop_times, stops)
    ends = (
        trip_stops.group_by("template_trip_id")
        .agg(
            pl.col("stop_dist_m").min().alias("o"),
            pl.col("stop_dist_m").max().alias("e"),
        )
        .join(
            trips.select("template_trip_id", "shape_id", "route_id", "direction_id").unique(
                "template_trip_id"
            ),
            on="template_trip_id",
        )
        .group_by("shape_id")
        .agg(
            pl.col("o").median().alias("origin_dist_m"),
            pl.col("e").median().alias("destination_dist_m"),
            pl.col("route_id").first(),
            pl.col("direction_id").first(),
        )
    )
    shape_table = (
        start.join(ends, on="shape_id", how="left")
        .with_columns(
            pl.col("origin_dist_m").fill_null(0.0),
            pl.col("destination_dist_m").fill_null(pl.col("length_m")),
        )
        .sort("shape_idx")
    )
    stop_xy = stops.select("stop_x_m", "stop_y_m").drop_nulls().to_numpy()
    return Network(
        shapes=shape_table,
        points_x=p_x,
        points_y=p_y,
        points_dist=p_dist,
        points_shape=p_shape,
        grid=build_point_grid(p_x, p_y, options.on_route_buffer_m + options.densify_step_m),
        stop_tree=cKDTree(stop_xy) if len(stop_xy) else None,
        trip_stops=trip_stops,
    )


def locate_trip_stops(
    points: pl.DataFrame, trips: pl.DataFrame, stop_times: pl.DataFrame, stops: pl.DataFrame
) -> pl.DataFrame:
    """Each template trip's stops with their distance along its shape (metres).

    `points`: the densified shapes (shape_id, dist_m, x_m, y_m). A stop sits at the nearest
    densified point; when a shape passes near it twice (loops, out-and-back corridors) the
    earliest pass not behind the previous stop is taken, so stop order is kept.
    Output: template_trip_id, stop_sequence, stop_id, stop_dist_m, arrival_offset_s and
    departure_offset_s (planned seconds after the trip's first departure).
    """
    tmpl = trips.select("template_trip_id", "shape_id").unique("template_trip_id")
    key = ["template_trip_id", "stop_sequence"]
    st = (
        stop_times.rename({"trip_id": "template_trip_id"})
        .join(tmpl, on="template_trip_id")
        .sort(key)
    )
    # trips of one shape calling at the same stops share their positions: locate each stop
    # pattern once (a feed may have one template per trip: millions of stop times)
    pattern = (
        st.group_by("template_trip_id", maintain_order=True)
        .agg(pl.col("shape_id").first(), pl.col("stop_id").str.join("|").alias("_stops"))
        .with_columns(pl.col("template_trip_id").min().over("shape_id", "_stops").alias("_rep"))
        .select("template_trip_id", "_rep")
    )
    reps = pattern.filter(pl.col("template_trip_id") == pl.col("_rep")).select("template_trip_id")
    located = _locate_patterns(
        points,
        st.join(reps, on="template_trip_id").join(
            stops.select("stop_id", "stop_x_m", "stop_y_m"), on="stop_id", how="left"
        ),
    ).rename({"template_trip_id": "_rep"})
    dep = pl.coalesce("departure_time_s", "arrival_time_s")
    arr = pl.coalesce("arrival_time_s", "departure_time_s")
    first_dep = dep.first().over("template_trip_id", order_by="stop_sequence")
    return (
        st.join(pattern, on="template_trip_id")
        .join(located, on=["_rep", "stop_sequence"], how="left")
        .select(
            *key,
            "stop_id",
            pl.col("stop_dist_m").fill_null(0.0),
            (arr - first_dep).alias("arrival_offset_s"),
            (dep - first_dep).alias("departure_offset_s"),
        )
        .sort(key)
    )


def _locate_patterns(points: pl.DataFrame, st: pl.DataFrame) -> pl.DataFrame:
    """Stop positions along the shape (`stop_dist_m`) for the given templates' stop times
    (template_trip_id, stop_sequence, shape_id, stop_x_m, stop_y_m, sorted)."""
    key = ["template_trip_id", "stop_sequence"]
    pairs = _stop_passes(points, st.select(*key, "shape_id", "stop_x_m", "stop_y_m"))
    nearest = pairs.join(pairs.group_by(key).agg(pl.col("dist_m").min().alias("first_m")), on=key)
    nearest = nearest.group_by(key).agg(pl.col("first_m").first().alias("nearest_m"))
    st = st.join(nearest, on=key, how="left").sort(key)
    # floor: the previous stops' positions (a stop never lies behind them)
    st = st.with_columns(
        pl.col("nearest_m")
        .shift(1)
        .cum_max()
        .over("template_trip_id")
        .fill_null(0.0)
        .alias("floor_m")
    )
    ahead = (
        pairs.join(st.select(*key, "floor_m"), on=key)
        .filter(pl.col("dist_m") >= pl.col("floor_m") - 1.0)
        .group_by(key)
        .agg(pl.col("dist_m").min().alias("ahead_m"))
    )
    st = st.join(ahead, on=key, how="left")
    return st.select(*key, pl.coalesce("ahead_m", "nearest_m", pl.lit(0.0)).alias("stop_dist_m"))


def _stop_passes(points: pl.DataFrame, st: pl.DataFrame) -> pl.DataFrame:
    """The passes of each stop's own shape near it: key columns, `_pass`, `dist_m` (metres).

    Candidates are the densified points of the stop's shape nearly as close as the best one
    (1.5x + 30 m), grouped into passes (runs of points along the shape). One k-d tree over
    every shape, each shifted far apart along x, finds them without pairing a stop with every
    point of its shape (that cross join held gigabytes on a large city).
    """
    key = ["template_trip_id", "stop_sequence"]
    ids = points.select("shape_id").unique(maintain_order=True).with_row_index("_sid")
    pts = points.join(ids, on="shape_id", maintain_order="left")
    # shapes are shifted apart by more than any city's extent, so neighbours share a shape
    shift = 1e7 * pts["_sid"].cast(pl.Float64).to_numpy()
    px, py, pd = pts["x_m"].to_numpy(), pts["y_m"].to_numpy(), pts["dist_m"].to_numpy()
    tree = cKDTree(np.c_[px + shift, py])
    # one query per (shape, stop place): every trip of a shape shares its stops' passes
    place = ["_sid", "stop_x_m", "stop_y_m"]
    q = (
        st.join(ids, on="shape_id", how="left")
        .filter(pl.col("_sid").is_not_null() & pl.col("stop_x_m").is_not_null())
        .select(place)
        .unique(maintain_order=True)
    )
    empty = pl.DataFrame(
        schema={
            "template_trip_id": pl.String,
            "stop_sequence": pl.Int32,
            "_pass": pl.Int64,
            "dist_m": pl.Float64,
        }
    )
    if q.height == 0:
        return empty.cast({"stop_sequence": st.schema["stop_sequence"]})
    qx = q["stop_x_m"].to_numpy() + 1e7 * q["_sid"].cast(pl.Float64).to_numpy()
    qy = q["stop_y_m"].to_numpy()
    d0, _ = tree.query(np.c_[qx, qy], k=1)
    hits = tree.query_ball_point(np.c_[qx, qy], r=d0 * 1.5 + 30.0, return_sorted=True)
    n_hit = np.fromiter((len(h) for h in hits), dtype=np.int64, count=len(hits))
    idx = np.concatenate([np.asarray(h, dtype=np.int64) for h in hits])
    qrow = np.repeat(np.arange(q.height), n_hit)
    cand = pl.DataFrame(
        {
            "_qi": qrow,
            "dist_m": pd[idx],
            "gap_m": np.hypot(px[idx] + shift[idx] - qx[qrow], py[idx] - qy[qrow]),
        }
    )
    # passes: points of one stop more than 200 m apart along the shape are separate passes
    passes = (
        cand.sort("_qi", "dist_m")
        .with_columns(
            (pl.col("dist_m").diff().over("_qi") > 200.0)
            .fill_null(False)
            .cum_sum()
            .over("_qi")
            .alias("_pass")
        )
        .sort("gap_m")
        .group_by("_qi", "_pass")
        .agg(pl.col("dist_m").first())
    )
    places = q.with_row_index("_qi").cast({"_qi": pl.Int64})
    return (
        st.join(ids, on="shape_id")
        .join(places, on=place)
        .select(*key, "_qi")
        .join(passes, on="_qi")
        .select(*key, "_pass", "dist_m")
    )
