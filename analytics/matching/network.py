"""The day's network in metres: shapes densified into a grid of points, terminals,
and each trip's stops located along its shape.

Built once per service day and shared (read-only) by every vehicle partition.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.spatial import cKDTree

from analytics.matching.options import MatchOptions
from analytics.matching.shape_grid import PointGrid, build_point_grid


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
    trip_times: pl.DataFrame | None = None
    """The day's trips per shape: `shape_idx` (Int64), `planned_start_s`, `planned_end_s` and
    `latest_end_s` (the latest planned end of the shape's trips starting no later; epoch
    seconds), sorted by shape_idx and planned start, trips without planned instants left out;
    which shapes have trips planned when (built once per day: every batch asks it)."""


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
    # densify: for each shape, points every `densify_step_m` along it and at its end (not its
    # own vertices: a sharp corner is cut by at most half a step, well inside the buffer)
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
            pl.col("stop_dist_m").min().alias("first_stop_dist_m"),
            pl.col("stop_dist_m").max().alias("last_stop_dist_m"),
        )
        .join(
            trips.select("template_trip_id", "shape_id", "route_id", "direction_id").unique(
                "template_trip_id"
            ),
            on="template_trip_id",
        )
        .group_by("shape_id")
        .agg(
            pl.col("first_stop_dist_m").median().alias("origin_dist_m"),
            pl.col("last_stop_dist_m").median().alias("destination_dist_m"),
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
        trip_times=build_trip_times(trips, shape_table),
    )


def build_trip_times(trips: pl.DataFrame, shapes: pl.DataFrame) -> pl.DataFrame | None:
    """`Network.trip_times` of the day's `trips` over the network's `shapes` (None when the
    trips carry no planned instants)."""
    if not {"planned_start_at", "planned_end_at"} <= set(trips.columns):
        return None
    return (
        trips.join(shapes.select("shape_idx", "shape_id"), on="shape_id")
        .select(
            pl.col("shape_idx").cast(pl.Int64),
            (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("planned_start_s"),
            (pl.col("planned_end_at").dt.epoch("us") / 1e6).alias("planned_end_s"),
        )
        .drop_nulls()
        .sort("shape_idx", "planned_start_s")
        .with_columns(pl.col("planned_end_s").cum_max().over("shape_idx").alias("latest_end_s"))
    )


def locate_trip_stops(
    points: pl.DataFrame, trips: pl.DataFrame, stop_times: pl.DataFrame, stops: pl.DataFrame
) -> pl.DataFrame:
    """Each template trip's stops with their distance along its shape (metres).

    `points`: the densified shapes (shape_id, dist_m, x_m, y_m). A stop sits at its own
    projection onto the shape's segments around its nearest densified point (not at the point:
    the grid is `densify_step_m` coarse); when a shape passes near it twice (loops, out-and-back corridors) the
    earliest pass not behind the previous stop is taken, so stop order is kept.
    Output: template_trip_id, stop_sequence, stop_id, stop_dist_m, arrival_offset_s and
    departure_offset_s (planned seconds after the trip's first departure), sorted by
    template_trip_id and stop_sequence.
    """
    # templates numbered in id order (`template_number`): the day's stop times (millions on a
    # large city) are then cut out, ordered, grouped and gathered on integers and positions
    tmpl = (
        trips.select("template_trip_id", "shape_id")
        .unique("template_trip_id")
        .sort("template_trip_id")
        .with_row_index("template_number")
    )
    st = _template_stop_times(stop_times, tmpl)
    tk = st["template_number"].to_numpy().astype(np.int64)
    starts = np.flatnonzero(np.r_[True, tk[1:] != tk[:-1]])[: tk.size]
    sizes = np.diff(np.r_[starts, tk.size])
    row_start = np.repeat(starts, sizes)  # each row's template's first row
    # trips of one shape calling at the same stops share their positions: locate each stop
    # pattern once (a feed may have one template per trip: millions of stop times); the
    # pattern's template is its first in id order
    rep = (
        st.select(pl.col("template_number").set_sorted(), "stop_id")
        .group_by("template_number", maintain_order=True)
        .agg(pl.col("stop_id").str.join("|").alias("stop_pattern"))
        .join(
            tmpl.select("template_number", "shape_id"),
            on="template_number",
            how="left",
            maintain_order="left",
        )
        .select(pl.col("template_number").min().over("shape_id", "stop_pattern"))
        .to_series()
        .to_numpy()
        .astype(np.int64)
    )
    # each row's counterpart in its pattern's template: same place in the stop list
    template_of = np.zeros(len(tmpl), np.int64)
    template_of[tk[starts]] = np.arange(starts.size)
    rep_t = template_of[rep]
    mirror = np.repeat(starts[rep_t], sizes) + np.arange(tk.size) - row_start
    is_rep = np.repeat(rep_t == np.arange(starts.size), sizes)
    reps = st.filter(pl.Series(is_rep)).join(
        tmpl.select("template_number", "shape_id"),
        on="template_number",
        how="left",
        maintain_order="left",
    )
    reps = reps.join(
        stops.select("stop_id", "stop_x_m", "stop_y_m"),
        on="stop_id",
        how="left",
        maintain_order="left",
    )
    dist = np.full(tk.size, np.nan)
    dist[is_rep] = _locate_patterns(points, reps)
    # a pattern's templates call at the same stops in the same order: a stop sits where it
    # sits in the pattern's template, however each template numbers its stop_sequence
    stop_dist = pl.Series("stop_dist_m", dist[mirror])
    dep = pl.coalesce("departure_time_s", "arrival_time_s")
    arr = pl.coalesce("arrival_time_s", "departure_time_s")
    first_dep = pl.col("first_departure_s")
    return st.with_columns(
        st.select(dep).to_series().gather(row_start).alias("first_departure_s")
    ).select(
        tmpl["template_trip_id"].gather(st["template_number"]).alias("template_trip_id"),
        "stop_sequence",
        "stop_id",
        stop_dist,
        (arr - first_dep).alias("arrival_offset_s"),
        (dep - first_dep).alias("departure_offset_s"),
    )


def _template_stop_times(stop_times: pl.DataFrame, tmpl: pl.DataFrame) -> pl.DataFrame:
    """The stop times of the day's templates: `template_number` (the template's number in
    `tmpl`), stop_sequence, stop_id, arrival_time_s, departure_time_s; sorted by
    `template_number`, stop_sequence.

    A feed lists each trip's stop times together, so each stretch of one trip id is looked up
    once in `tmpl` (not every row), and rows already in order are not sorted again."""
    sel = stop_times.select(
        "trip_id", "stop_sequence", "stop_id", "arrival_time_s", "departure_time_s"
    )
    stretch = sel["trip_id"].rle_id()
    firsts = np.flatnonzero(np.r_[True, np.diff(stretch.to_numpy()) != 0])[: sel.height]
    number = (
        sel["trip_id"]
        .gather(firsts)
        .to_frame("template_trip_id")
        .join(tmpl.select("template_trip_id", "template_number"), on="template_trip_id", how="left")
    )
    # a left join on a unique right key keeps the left rows in order
    tk = number["template_number"].gather(stretch)
    st = sel.drop("trip_id").with_columns(tk).filter(tk.is_not_null())
    k = st["template_number"].to_numpy()
    q = st["stop_sequence"].to_numpy()
    if not np.all((k[1:] > k[:-1]) | ((k[1:] == k[:-1]) & (q[1:] > q[:-1]))):
        st = st.sort("template_number", "stop_sequence")
    return st


def _locate_patterns(points: pl.DataFrame, st: pl.DataFrame) -> np.ndarray:
    """Stop positions along the shape (metres, one per row of `st`) for the given templates'
    stop times (`template_number`, stop_sequence, shape_id, stop_x_m, stop_y_m; sorted by
    `template_number`, stop_sequence)."""
    n = st.height
    pair_row, pair_dist = _stop_passes(points, st)
    # nearest: the earliest pass
    nearest = np.full(n, np.inf)
    np.minimum.at(nearest, pair_row, pair_dist)
    has = np.zeros(n, bool)
    has[pair_row] = True
    # floor: the previous stops' positions (a stop never lies behind them)
    floor = (
        pl.DataFrame(
            {
                "template_number": st["template_number"],
                "nearest_m": pl.Series(nearest).set(~pl.Series(has), None),
            }
        )
        .select(pl.col("nearest_m").shift(1).cum_max().over("template_number").fill_null(0.0))
        .to_series()
        .to_numpy()
    )
    ok = pair_dist >= floor[pair_row] - 1.0
    ahead = np.full(n, np.inf)
    np.minimum.at(ahead, pair_row[ok], pair_dist[ok])
    has_ahead = np.zeros(n, bool)
    has_ahead[pair_row[ok]] = True
    return np.where(has_ahead, ahead, np.where(has, nearest, 0.0))


def _stop_passes(points: pl.DataFrame, st: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The passes of each stop's own shape near it: (row of `st`, `dist_m` of the pass along
    the shape, metres), one pair per pass.

    Candidates are the densified points of the stop's shape nearly as close as the best one
    (1.5x + 30 m), grouped into passes (runs of points along the shape); a pass sits at its
    point closest to the stop. One k-d tree over every shape, each shifted far apart along x,
    finds them without pairing a stop with every point of its shape (that cross join held
    gigabytes on a large city).
    """
    none = (np.zeros(0, np.int64), np.zeros(0, np.float64))
    # shapes numbered in order of first appearance, each stretch of one shape looked up once
    stretch = points["shape_id"].rle_id()
    firsts = np.flatnonzero(np.r_[True, np.diff(stretch.to_numpy()) != 0])[: points.height]
    first_ids = points["shape_id"].gather(firsts)
    ids = first_ids.unique(maintain_order=True).to_frame().with_row_index("shape_number")
    sid = (
        first_ids.to_frame()
        .join(ids, on="shape_id", how="left", maintain_order="left")["shape_number"]
        .gather(stretch)
    )
    # shapes are shifted apart by more than any city's extent, so neighbours share a shape
    shift = 1e7 * sid.cast(pl.Float64).to_numpy()
    px, py, pd = points["x_m"].to_numpy(), points["y_m"].to_numpy(), points["dist_m"].to_numpy()
    # one query per (shape, stop place): every trip of a shape shares its stops' passes
    place = ["shape_number", "stop_x_m", "stop_y_m"]
    at = (
        st.select("shape_id", "stop_x_m", "stop_y_m")
        .join(ids, on="shape_id", how="left", maintain_order="left")
        .with_row_index("stop_time_row")
        .filter(pl.col("shape_number").is_not_null() & pl.col("stop_x_m").is_not_null())
    )
    q = at.select(place).unique(maintain_order=True)
    if q.height == 0:
        return none
    tree = cKDTree(np.c_[px + shift, py])
    qx = q["stop_x_m"].to_numpy() + 1e7 * q["shape_number"].cast(pl.Float64).to_numpy()
    qy = q["stop_y_m"].to_numpy()
    d0, _ = tree.query(np.c_[qx, qy], k=1, workers=-1)
    hits = tree.query_ball_point(np.c_[qx, qy], r=d0 * 1.5 + 30.0, return_sorted=True, workers=-1)
    n_hit = np.fromiter((len(h) for h in hits), dtype=np.int64, count=len(hits))
    idx = np.fromiter(itertools.chain.from_iterable(hits), dtype=np.int64, count=int(n_hit.sum()))
    qrow = np.repeat(np.arange(q.height), n_hit)
    dist = pd[idx]
    gap = np.hypot(px[idx] + shift[idx] - qx[qrow], py[idx] - qy[qrow])
    # passes: points of one stop more than 200 m apart along the shape are separate passes
    by_dist = np.lexsort((dist, qrow))
    qrow, dist, gap = qrow[by_dist], dist[by_dist], gap[by_dist]
    new_q = np.r_[True, qrow[1:] != qrow[:-1]][: qrow.size]
    jump = np.r_[False, np.diff(dist) > 200.0][: qrow.size] & ~new_q
    # pass numbers restart at each place; they only need to differ within one
    npass = np.cumsum(jump)
    # a pass sits at its closest point (on a tie, the earliest along the shape)
    best = np.lexsort((np.arange(qrow.size), gap, npass, qrow))
    first = best[
        np.r_[True, (qrow[best][1:] != qrow[best][:-1]) | (npass[best][1:] != npass[best][:-1])][
            : best.size
        ]
    ]
    pass_q = qrow[first]
    # a pass's position is the stop's own projection onto the shape's segments on either side
    # of that point, not the point itself (the densify grid is `densify_step_m` coarse)
    pass_dist = _project_near(px, py, pd, shift, idx[by_dist][first], qx[pass_q], qy[pass_q])
    # every stop time at a place gets that place's passes
    place_of = at.join(
        q.with_row_index("place_number"), on=place, how="left", maintain_order="left"
    ).select("stop_time_row", pl.col("place_number").cast(pl.Int64))
    lo = np.searchsorted(pass_q, np.arange(q.height), side="left")
    n_pass = np.searchsorted(pass_q, np.arange(q.height), side="right") - lo
    qi = place_of["place_number"].to_numpy()
    rows = place_of["stop_time_row"].to_numpy().astype(np.int64)
    k = n_pass[qi]
    pair_row = np.repeat(rows, k)
    pos = np.repeat(lo[qi] - np.cumsum(k) + k, k) + np.arange(int(k.sum()))
    return pair_row, pass_dist[pos]


def _project_near(
    px: np.ndarray,
    py: np.ndarray,
    pd: np.ndarray,
    shift: np.ndarray,
    at: np.ndarray,
    qx: np.ndarray,
    qy: np.ndarray,
) -> np.ndarray:
    """Distance along the shape (metres) of each query point (`qx` shifted like its shape,
    `qy`) projected onto the segments before and after its nearest densified point `at` (rows
    of the points `px`, `py`, `pd`, each shape's rows together in order, x shifted by
    `shift`); the closer of the two projections wins."""
    n = px.size
    x = px + shift

    def along(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # projection of the queries onto segment a -> b (a == b: the point a)
        dx, dy = x[b] - x[a], py[b] - py[a]
        length2 = dx * dx + dy * dy
        t = np.where(
            length2 > 0,
            ((qx - x[a]) * dx + (qy - py[a]) * dy) / np.where(length2 > 0, length2, 1.0),
            0.0,
        )
        t = np.clip(t, 0.0, 1.0)
        off = np.hypot(x[a] + t * dx - qx, py[a] + t * dy - qy)
        return pd[a] + t * (pd[b] - pd[a]), off

    # a neighbour of another shape lies 1e7 m away along x: not one of this shape's segments
    before = np.maximum(at - 1, 0)
    before = np.where(np.abs(shift[before] - shift[at]) > 0, at, before)
    after = np.minimum(at + 1, n - 1)
    after = np.where(np.abs(shift[after] - shift[at]) > 0, at, after)
    d0, off0 = along(before, at)
    d1, off1 = along(at, after)
    return np.where(off0 <= off1, d0, d1)
