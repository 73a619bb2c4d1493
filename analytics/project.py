"""Linear referencing: each ping's position along every shape it lies on.

A nearest-neighbour index over the densified shapes (scipy cKDTree) gives, per ping, the few
shape points around it; the position is then refined on the two densified segments beside the
nearest point. No scan of every vertex per ping.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl

from analytics.network import Network
from analytics.options import MatchOptions

# distance bits of the packed sort key: centimetres up to 2**16 - 1 (655 m, beyond any reach)
_D_BITS = 16
_D_MASK = (1 << _D_BITS) - 1


def project_pings(
    x_m: np.ndarray,
    y_m: np.ndarray,
    t_s: np.ndarray,
    group: np.ndarray,
    network: Network,
    options: MatchOptions,
) -> pl.DataFrame:
    """Candidates (ping, shape) for pings given in time order within each `group` (vehicle).

    Output, one row per ping and shape within `on_route_buffer_m`: `row` (index of the ping in
    the inputs), `shape_idx`, `dist_m` (position along the shape, metres) and `offset_m`
    (distance from the shape, metres). When a shape passes near the ping more than once
    (loops, out-and-back), the pass nearest to the position of the closest unambiguous ping in
    time is kept.
    """
    n = len(x_m)
    empty = pl.DataFrame(
        schema={
            "row": pl.Int64,
            "shape_idx": pl.Int32,
            "dist_m": pl.Float64,
            "offset_m": pl.Float64,
        }
    )
    if n == 0:
        return empty
    buffer = options.on_route_buffer_m
    rows, pts, shape = _nearest_passes(x_m, y_m, network, options)
    if rows.size == 0:
        return empty
    dist_m, offset_m = _refine(x_m[rows], y_m[rows], pts, network)
    keep = offset_m <= buffer
    cand = pl.DataFrame(
        {
            "row": rows[keep].astype(np.int64),
            "shape_idx": shape[keep].astype(np.int32),
            "dist_m": dist_m[keep],
            "offset_m": offset_m[keep],
        }
    )
    return _choose_pass(cand, t_s, group, options.typical_speed_m_s)


def _nearest_passes(
    x_m: np.ndarray, y_m: np.ndarray, network: Network, options: MatchOptions
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, point, shape) of the nearest densified point of every shape pass within reach of
    each ping, by ping then along the shapes."""
    n = len(x_m)
    n_points = len(network.points_x)
    none = np.empty(0, np.int64)
    if n == 0:
        return none, none, none
    step = 1 << 20
    if n > step:  # bounded (n x k) lookup arrays: project in slices
        parts = [
            _nearest_passes(x_m[i : i + step], y_m[i : i + step], network, options)
            for i in range(0, n, step)
        ]
        return (
            np.concatenate([p[0] + i for p, i in zip(parts, range(0, n, step), strict=True)]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
        )
    k = options.index_neighbours
    reach = options.on_route_buffer_m + options.densify_step_m
    dist, idx = network.tree.query(
        np.c_[x_m, y_m], k=k, distance_upper_bound=reach, workers=options.index_workers
    )
    # each ping's neighbours ordered along the shapes (point indices run shape by shape, then
    # along each shape), so a pass is a run of close indices: one row-wise sort of the point
    # index packed with the distance in centimetres (cheaper than an argsort and two gathers;
    # a missing neighbour has index n_points and an infinite distance: it packs largest and
    # sorts last)
    np.multiply(dist, 100.0, out=dist)
    np.minimum(dist, _D_MASK, out=dist)
    packed = (idx.astype(np.int64) << _D_BITS) | np.rint(dist).astype(np.int64)
    packed.sort(axis=1)
    ok = packed < (n_points << _D_BITS)
    if not ok.any():
        return none, none, none
    valid = packed[ok]
    rows = np.repeat(np.arange(n, dtype=np.int64), ok.sum(axis=1))
    pair_d = valid & _D_MASK
    pts = valid >> _D_BITS
    shape = network.points_shape[pts]
    jump = 2 + int(2 * reach / options.densify_step_m)
    new = np.r_[
        True, (rows[1:] != rows[:-1]) | (shape[1:] != shape[:-1]) | (pts[1:] - pts[:-1] > jump)
    ]
    # nearest point of each pass, without sorting: the first point at its pass's minimum
    starts = np.flatnonzero(new)
    pass_id = np.cumsum(new) - 1
    best = np.minimum.reduceat(pair_d, starts)
    at_min = np.flatnonzero(pair_d == best[pass_id])
    sel = at_min[np.r_[True, pass_id[at_min][1:] != pass_id[at_min][:-1]]]
    rows, pts, shape = rows[sel], pts[sel], shape[sel]
    return rows, pts, shape


def _refine(
    px: np.ndarray, py: np.ndarray, pts: np.ndarray, network: Network
) -> tuple[np.ndarray, np.ndarray]:
    """Project points on the densified segments before and after their nearest shape point."""
    last = len(network.points_x) - 1
    shp = network.points_shape
    best_d = np.full(len(pts), np.nan)
    best_off = np.full(len(pts), np.inf)
    for a, b in ((np.maximum(pts - 1, 0), pts), (pts, np.minimum(pts + 1, last))):
        same = (shp[a] == shp[b]) & (a != b)
        a = np.where(same, a, pts)
        b = np.where(same, b, pts)
        ax, ay = network.points_x[a], network.points_y[a]
        vx, vy = network.points_x[b] - ax, network.points_y[b] - ay
        seg2 = vx * vx + vy * vy
        t = np.where(
            seg2 > 0, ((px - ax) * vx + (py - ay) * vy) / np.where(seg2 > 0, seg2, 1.0), 0.0
        )
        t = np.clip(t, 0.0, 1.0)
        off = np.hypot(px - (ax + t * vx), py - (ay + t * vy))
        d = network.points_dist[a] + t * (network.points_dist[b] - network.points_dist[a])
        better = off < best_off
        best_off = np.where(better, off, best_off)
        best_d = np.where(better, d, best_d)
    return best_d, best_off


def _choose_pass(
    cand: pl.DataFrame, t_s: np.ndarray, group: np.ndarray, speed_m_s: float
) -> pl.DataFrame:
    """Keep one candidate per (ping, shape): the pass nearest the closest unambiguous ping."""
    # candidates come by ping, then along the shapes: a (ping, shape)'s passes are adjacent
    row, shp = cand["row"].to_numpy(), cand["shape_idx"].to_numpy()
    starts = np.flatnonzero(np.r_[True, (row[1:] != row[:-1]) | (shp[1:] != shp[:-1])])
    if len(starts) == cand.height:
        return cand
    sizes = np.diff(np.r_[starts, cand.height])
    cand = cand.with_columns(pl.Series("n_pass", np.repeat(sizes, sizes)))
    cand = cand.with_columns(
        pl.Series("t_s", t_s).gather(cand["row"]),
        pl.Series("group", group).gather(cand["row"]),
    )
    sure = (
        cand.filter(pl.col("n_pass") == 1)
        .select("group", "shape_idx", pl.col("t_s").alias("t_ref"), pl.col("dist_m").alias("d_ref"))
        .sort("t_ref")
    )
    amb = cand.filter(pl.col("n_pass") > 1).sort("t_s")
    parts = []
    with warnings.catch_warnings():  # sorted by time within each group; Polars cannot check it
        warnings.filterwarnings("ignore", message="Sortedness of columns cannot be checked")
        for strategy in ("backward", "forward"):
            parts.append(
                amb.join_asof(
                    sure,
                    left_on="t_s",
                    right_on="t_ref",
                    by=["group", "shape_idx"],
                    strategy=strategy,
                ).select("row", "shape_idx", "dist_m", "offset_m", "t_s", "t_ref", "d_ref")
            )
    # expected position: the reference moved on at a typical bus speed (before or after it),
    # so an out-and-back street or a closed loop picks the pass the vehicle is progressing on
    expected = pl.col("d_ref") + speed_m_s * (pl.col("t_s") - pl.col("t_ref"))
    both = pl.concat(parts).with_columns(
        (pl.col("t_s") - pl.col("t_ref")).abs().fill_null(float("inf")).alias("dt"),
        (pl.col("dist_m") - expected).abs().fill_null(0.0).alias("dd"),
    )
    # per ambiguous (ping, shape): the reference nearest in time, then the pass nearest to it
    ref = both.sort("dt").group_by("row", "shape_idx").agg(pl.col("t_ref").first().alias("t_best"))
    pick = (
        both.join(ref, on=["row", "shape_idx"])
        .filter((pl.col("t_ref") == pl.col("t_best")) | pl.col("t_best").is_null())
        .sort("dd", "offset_m")
        .unique(["row", "shape_idx"], keep="first")
        .select("row", "shape_idx", "dist_m", "offset_m")
    )
    return pl.concat([cand.filter(pl.col("n_pass") == 1).select(pick.columns), pick]).sort(
        "row", "shape_idx"
    )
