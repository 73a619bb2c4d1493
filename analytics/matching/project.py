"""Linear referencing: each ping's position along every shape it lies on.

A grid over the densified shapes (`analytics.matching.shape_grid`) gives, per ping, every shape point
within reach, grouped into passes; the position is refined on the two densified segments beside
each pass's nearest point. No scan of every vertex per ping.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from analytics.matching.frames import PING_CANDIDATES
from analytics.matching.network import Network
from analytics.matching.options import MatchOptions
from analytics.matching.shape_grid import find_shape_passes


def project_pings(
    x_m: np.ndarray,
    y_m: np.ndarray,
    t_s: np.ndarray,
    group: np.ndarray,
    network: Network,
    options: MatchOptions,
) -> pl.DataFrame:
    """Candidates (ping, shape) for pings given in time order within each `group` (vehicle).

    Output: `PING_CANDIDATES`, one row per ping and shape within `on_route_buffer_m` (`row`:
    the index of the ping in the inputs). When a shape passes near the ping more than once
    (loops, out-and-back), the pass nearest to the position of the closest unambiguous ping in
    time is kept.
    """
    n = len(x_m)
    if n == 0:
        return PING_CANDIDATES.empty()
    reach = options.on_route_buffer_m + options.densify_step_m
    rows, shape, dist_m, offset_m = find_shape_passes(
        x_m,
        y_m,
        network.grid,
        network.points_x,
        network.points_y,
        network.points_dist,
        network.points_shape,
        reach,
        # a gap of more points than the reach spans twice is another pass of the shape
        2 + int(2 * reach / options.densify_step_m),
        options.on_route_buffer_m,
    )
    if rows.size == 0:
        return PING_CANDIDATES.empty()
    cand = pl.DataFrame(
        {
            "row": rows,
            "shape_idx": shape.astype(np.int32),
            "dist_m": dist_m,
            "offset_m": offset_m,
        }
    )
    return PING_CANDIDATES.conform(_choose_pass(cand, t_s, group, options.typical_speed_m_s))


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
    for strategy in ("backward", "forward"):
        parts.append(
            amb.join_asof(
                sure,
                left_on="t_s",
                right_on="t_ref",
                by=["group", "shape_idx"],
                strategy=strategy,
                # sorted by time within each group; Polars cannot check it with `by`
                check_sortedness=False,
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
