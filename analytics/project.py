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
    k = options.index_neighbours
    buffer = options.on_route_buffer_m
    reach = buffer + options.densify_step_m
    dist, idx = network.tree.query(np.c_[x_m, y_m], k=k, distance_upper_bound=reach)
    # order each ping's neighbours along the shapes (point indices run shape by shape, then
    # along each shape), so passes are runs of close indices; missing neighbours sort last
    by_point = np.argsort(idx, axis=1, kind="stable")
    idx = np.take_along_axis(idx, by_point, axis=1)
    dist = np.take_along_axis(dist, by_point, axis=1)
    ok = np.isfinite(dist)
    rows = np.broadcast_to(np.arange(n)[:, None], dist.shape)[ok]
    pts = idx[ok]
    pair_d = dist[ok]
    if rows.size == 0:
        return empty
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
    cand = cand.with_columns(pl.len().over("row", "shape_idx").alias("n_pass"))
    if cand["n_pass"].max() == 1:
        return cand.drop("n_pass")
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
