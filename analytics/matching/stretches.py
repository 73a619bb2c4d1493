"""Cut each vehicle's pings on each shape into stretches between terminals, with the distance
each stretch ran on its itinerary (see `analytics.matching.runs` for the rules).

The candidates come sorted by shape, then by ping (pings are numbered by vehicle, then time),
so each (shape, vehicle) is one contiguous group whose rows are in time order. Every rule here
looks only at a row's neighbours in its group or at the rows of one stretch: one sequential
pass per group, compiled with numba, replaces some forty whole-frame Polars steps (shifts masked
at group starts, group-bys and joins on stretch numbers) that each re-read the (ping x shape)
frame.
"""

from __future__ import annotations

import numba
import numpy as np
import polars as pl

from analytics.matching.frames import STRETCH_POINTS, STRETCHES
from analytics.matching.kernel_arrays import to_kernel_array
from analytics.matching.network import Network
from analytics.matching.options import MatchOptions


def cut_stretches(
    cand: pl.DataFrame, pings: pl.DataFrame, network: Network, options: MatchOptions
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Stretches of forward progress along a shape between terminals, and their pings.

    `cand`: `PING_CANDIDATES` (see `project_pings`). `pings`: by `row`, with `vehicle_rank`
    (Int64), t_s, x_m, y_m, `dt_prev_s` / `dt_next_s` (seconds to the vehicle's previous /
    next ping).

    Returns (stretches, points): `STRETCHES`, one row per stretch that made at least
    `run_min_progress_m` of observed progress, and `STRETCH_POINTS`, per stretch (all of them,
    also those left out of `stretches`) its departure anchor, pings and arrival anchor.
    """
    shapes = network.shapes
    c_row = to_kernel_array(cand["row"], pl.Int64)
    c_shape = to_kernel_array(cand["shape_idx"], pl.Int64)
    c_dist = to_kernel_array(cand["dist_m"], pl.Float64)
    # (shape, row) order: the candidates come by row, so a stable sort by shape (a radix sort
    # on 16-bit keys) does it
    narrow = np.int16 if len(network.shapes) < 2**15 else np.int32
    order = np.argsort(c_shape.astype(narrow), kind="stable")
    c_row, c_shape, c_dist = c_row[order], c_shape[order], c_dist[order]

    def col(frame: pl.DataFrame, name: str) -> np.ndarray:
        return to_kernel_array(frame[name])

    t_s = col(pings, "t_s")
    n = len(c_row)
    seg = np.full(n, -1, np.int64)
    dep = np.full(n, -1, np.int64)
    arr = np.full(n, -1, np.int64)
    noff = np.full(n, -1, np.int64)
    n_segs = _cut(
        c_row,
        c_shape,
        c_dist,
        to_kernel_array(pings["vehicle_rank"], pl.Int64),
        t_s,
        col(pings, "x_m"),
        col(pings, "y_m"),
        col(shapes, "start_x_m"),
        col(shapes, "start_y_m"),
        col(shapes, "end_x_m"),
        col(shapes, "end_y_m"),
        options.gap_s,
        options.run_min_progress_m,
        options.terminal_radius_m,
        options.detour_max_s,
        options.backward_break_m,
        seg,
        dep,
        arr,
        noff,
    )
    st = _stretch_stats(
        n_segs,
        c_row,
        c_shape,
        c_dist,
        seg,
        dep,
        arr,
        noff,
        t_s,
        col(pings, "dt_prev_s"),
        col(pings, "dt_next_s"),
        col(shapes, "origin_dist_m"),
        col(shapes, "destination_dist_m"),
        options.gap_s,
        options.run_min_progress_m,
    )
    stats = pl.DataFrame(
        {
            "stretch_index": np.arange(n_segs, dtype=np.int64),
            "first_row": st[0],
            "shape_idx": st[1].astype(np.int32),
            "n_mid_pings": st[2],
            "first_dist_m": st[3],
            "max_dist_m": st[4],
            "first_s": st[5],
            "last_s": st[6],
            "n_off_route": st[7],
            "off_route_s": st[8],
            "is_departed": st[9],
            "is_arrived": st[10],
            "distance_run_m": st[11],
            "observed_progress_m": st[12],
        }
    )
    ends = shapes.select("origin_dist_m", "destination_dist_m", "length_m")[stats["shape_idx"]]
    stats = pl.concat([stats, ends], how="horizontal").with_columns(
        pl.when(pl.col("is_departed"))
        .then(pl.col("origin_dist_m"))
        .otherwise(pl.max_horizontal(pl.col("first_dist_m"), pl.col("origin_dist_m")))
        .alias("start_dist_m"),
        pl.when(pl.col("is_arrived"))
        .then(pl.col("destination_dist_m"))
        .otherwise(pl.min_horizontal(pl.col("max_dist_m"), pl.col("destination_dist_m")))
        .alias("end_dist_m"),
    )
    # each row in its roles, in (stretch, kind, time) order: a terminal row closes the stretch
    # before it (arrival anchor) and opens the next (departure anchor); stretches are numbered
    # in frame order and their rows are consecutive
    roles = np.stack([arr, dep, seg], axis=1).ravel()
    at = np.flatnonzero(roles >= 0)
    j, role = at // 3, at % 3
    row = c_row[j]
    dist = c_dist[j]
    for r, ends_m in ((0, shapes["destination_dist_m"]), (1, shapes["origin_dist_m"])):
        anchor = role == r
        dist[anchor] = ends_m.to_numpy()[c_shape[j[anchor]]]
    points = pl.DataFrame(
        {
            "stretch_index": roles[at],
            "point_kind": np.array([2, 0, 1], np.int8)[role],
            "row": row,
            "t_s": t_s[row],
            "dist_m": dist,
        }
    )
    kept = stats.filter(pl.col("observed_progress_m") >= options.run_min_progress_m)
    return STRETCHES.conform(kept), STRETCH_POINTS.conform(points)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _cut(  # pragma: no cover - compiled; tested through build_runs
    c_row,
    c_shape,
    c_dist,
    p_v,
    p_t,
    p_x,
    p_y,
    sx,
    sy,
    ex,
    ey,
    gap_s,
    min_progress_m,
    radius_m,
    detour_max_s,
    backward_m,
    seg,
    dep,
    arr,
    noff,
):
    """Cut each (shape, vehicle) group into stretches; returns their number.

    A shape is cut for a vehicle only when the vehicle made at least `min_progress_m` of
    forward progress along it between consecutive pings (at most `gap_s` apart) both on it: the
    least any of its runs must show. In a grid city a vehicle crosses dozens of shapes; those
    crossings never chain two on-shape pings moving along them, so they drop out first.

    Fills, per row: `seg`, its stretch number (-1 at a terminal, within `radius_m` of the
    shape's first or last point); `dep` / `arr`, the stretch a terminal row departs / arrives
    as its anchor (the row just before / after it, within `detour_max_s`); `noff`, the pings
    skipped since the group's previous row (off this shape; -1 at the group's first row).
    A stretch breaks after a terminal row, across a silence or excursion longer than
    `detour_max_s`, and at a step backwards longer than `backward_m`.
    """
    n = c_row.shape[0]
    r2 = radius_m * radius_m
    n_segs = 0
    a = 0
    while a < n:
        b = a + 1
        while b < n and c_shape[b] == c_shape[a] and p_v[c_row[b]] == p_v[c_row[a]]:
            b += 1
        # a crossing of another line never chains two on-shape pings moving along it
        fwd = 0.0
        for j in range(a + 1, b):
            step = c_dist[j] - c_dist[j - 1]
            if (
                c_row[j] - c_row[j - 1] == 1
                and p_t[c_row[j]] - p_t[c_row[j - 1]] <= gap_s
                and step > 0
            ):
                fwd += step
        if fwd >= min_progress_m:
            s = c_shape[a]
            prev_term = False
            for j in range(a, b):
                p = c_row[j]
                dxs, dys = p_x[p] - sx[s], p_y[p] - sy[s]
                dxe, dye = p_x[p] - ex[s], p_y[p] - ey[s]
                at_start = dxs * dxs + dys * dys <= r2
                at_end = dxe * dxe + dye * dye <= r2
                term = at_start or at_end
                if j == a:
                    brk = True
                else:
                    noff[j] = p - c_row[j - 1] - 1
                    brk = (
                        prev_term
                        or p_t[p] - p_t[c_row[j - 1]] > detour_max_s
                        or c_dist[j] - c_dist[j - 1] < -backward_m
                    )
                if not term:
                    if brk:
                        n_segs += 1
                    seg[j] = n_segs - 1
                else:
                    # anchors: a terminal ping right before or after a stretch, in time
                    if at_start and j + 1 < b and p_t[c_row[j + 1]] - p_t[p] <= detour_max_s:
                        dep[j] = -2  # resolved below, once the next row has its stretch
                    if (
                        at_end
                        and j > a
                        and seg[j - 1] >= 0
                        and p_t[p] - p_t[c_row[j - 1]] <= detour_max_s
                    ):
                        arr[j] = seg[j - 1]
                prev_term = term
            for j in range(a, b - 1):
                if dep[j] == -2:
                    dep[j] = seg[j + 1]
        a = b
    return n_segs


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _stretch_stats(  # pragma: no cover - compiled; tested through build_runs
    n_segs,
    c_row,
    c_shape,
    c_dist,
    seg,
    dep,
    arr,
    noff,
    p_t,
    p_dt_in,
    p_dt_out,
    origin,
    destination,
    gap_s,
    min_progress_m,
):
    """Per stretch: first row, shape, pings, first/max position, first/last time, off-route
    excursions, anchors, distance run on the itinerary and observed progress.

    The distance runs over the departure anchor, the stretch's pings and the arrival anchor,
    on the running maximum of the position clipped to the itinerary (compared in whole
    millimetres, so GPS noise at a standstill never moves it back). Progress between two
    consecutive points counts when no off-shape ping lies between them. Across an off-shape
    excursion only the progress the vehicle likely made on the shape before leaving it and
    after rejoining it counts: half of the time to the first off-shape ping and half of the
    time from the last one, at the stretch's mean on-shape speed. So a detour skips the
    itinerary it bypasses (the law's km run and partial rule count the itinerary actually
    served), and a vehicle of another line that touches a shape at a few points (shared
    terminals, crossings) covers almost none of it.

    Silence is not evidence of a partial trip: a stretch that ends into a GPS gap (no ping at
    all for more than `gap_s`) is credited towards the destination, one that starts out of a
    gap from the origin, as far as the stretch's mean speed carries it in the silence. The
    observed progress counts only steps between pings at most `gap_s` apart, with no silence
    credit: a run must show that much real progress to exist at all.
    """
    row0 = np.zeros(n_segs, np.int64)
    shape = np.zeros(n_segs, np.int64)
    n_mid = np.zeros(n_segs, np.int64)
    first_d = np.zeros(n_segs)
    max_d = np.zeros(n_segs)
    first_s = np.zeros(n_segs)
    last_s = np.zeros(n_segs)
    n_off = np.zeros(n_segs, np.int64)
    off_s = np.zeros(n_segs)
    departed = np.zeros(n_segs, np.bool_)
    arrived = np.zeros(n_segs, np.bool_)
    distance = np.zeros(n_segs)
    observed = np.zeros(n_segs)
    first_j = np.full(n_segs, -1, np.int64)
    last_j = np.full(n_segs, -1, np.int64)
    dep_j = np.full(n_segs, -1, np.int64)
    arr_j = np.full(n_segs, -1, np.int64)
    n = c_row.shape[0]
    # a stretch's steps (m), their times (s) and whether each is on the shape (1/0): one
    # scratch for all stretches
    steps = np.empty((3, n + 1))
    for j in range(n):
        k = seg[j]
        if k >= 0:
            if first_j[k] < 0:
                first_j[k] = j
                row0[k] = c_row[j]
                shape[k] = c_shape[j]
                first_d[k] = c_dist[j]
                max_d[k] = c_dist[j]
                first_s[k] = p_t[c_row[j]]
            else:
                max_d[k] = max(max_d[k], c_dist[j])
                if noff[j] > 0:
                    n_off[k] += 1
                    off_s[k] += p_t[c_row[j]] - p_t[c_row[j - 1]]
            n_mid[k] += 1
            last_s[k] = p_t[c_row[j]]
            last_j[k] = j
        if dep[j] >= 0:
            departed[dep[j]] = True
            dep_j[dep[j]] = j
        if arr[j] >= 0:
            arrived[arr[j]] = True
            arr_j[arr[j]] = j
    for k in range(n_segs):
        s = shape[k]
        o, e = origin[s], destination[s]
        start = o if departed[k] else max(first_d[k], o)
        end = e if arrived[k] else min(max_d[k], e)
        # progress never exceeds end less start: stretches that cannot reach the minimum
        # (touches of other lines' shapes) skip the distance (1 m spares rounding)
        if end - start < min_progress_m - 1.0:
            continue
        # the points: departure anchor, the stretch's rows (consecutive in the group, the
        # terminal rows between them excluded), arrival anchor
        lo = dep_j[k] if dep_j[k] >= 0 else first_j[k]
        hi = arr_j[k] if arr_j[k] >= 0 else last_j[k]
        # its steps along the running maximum, then its mean speed over the steps with no
        # off-shape ping between
        m = hi - lo + 1
        held = _steps(lo, hi, dep_j[k], arr_j[k], noff, c_row, c_dist, p_t, o, e, steps)
        sum_step = 0.0
        sum_dt = 0.0
        for i in range(m):
            if steps[2, i] > 0:
                sum_step += steps[0, i]
                sum_dt += steps[1, i]
        speed = sum_step / max(sum_dt, 1.0)
        # credit the steps: on-shape, or the likely share across an excursion
        total = 0.0
        seen = 0.0
        for i in range(m):
            step, dt = steps[0, i], steps[1, i]
            if steps[2, i] > 0:
                total += step
                if dt <= gap_s:
                    seen += step
            else:
                leave = 0.0 if i == 0 else p_dt_out[c_row[lo + i - 1]]
                leave = 0.0 if leave != leave else leave
                into = p_dt_in[c_row[lo + i]]
                into = 0.0 if into != into else into
                total += min(speed * (leave + into) / 2, step)
        # silence is not evidence of a partial trip: credit it towards the terminal
        dt_in0 = p_dt_in[c_row[lo]]
        if lo != dep_j[k] and dt_in0 > gap_s:
            total += min(_clipped(lo, dep_j[k], arr_j[k], c_dist, o, e) - o, dt_in0 * speed)
        dt_out1 = p_dt_out[c_row[hi]]
        if hi != arr_j[k] and dt_out1 > gap_s:
            total += min(e - held, dt_out1 * speed)
        distance[k] = total
        observed[k] = seen
    return (
        row0,
        shape,
        n_mid,
        first_d,
        max_d,
        first_s,
        last_s,
        n_off,
        off_s,
        departed,
        arrived,
        distance,
        observed,
    )


@numba.njit(cache=True, nogil=True)
def _steps(lo, hi, dj, aj, noff, c_row, c_dist, p_t, o, e, out):  # pragma: no cover
    """The points of a stretch (rows lo .. hi of its group: departure anchor `dj` if any, its
    pings, arrival anchor `aj` if any) as steps along the running maximum of their position
    clipped to the itinerary, compared in whole millimetres (GPS noise at a standstill never
    moves it back): into `out` (see `_stretch_stats`). Returns the final running maximum."""
    held = 0.0
    held_mm = 0.0
    for i in range(hi - lo + 1):
        j = lo + i
        prog = _clipped(j, dj, aj, c_dist, o, e)
        mm = np.rint(prog * 1000.0)
        step = 0.0
        if i == 0 or mm >= held_mm:
            step = 0.0 if i == 0 else prog - held
            held, held_mm = prog, mm
        out[0, i] = step
        out[1, i] = 0.0 if i == 0 else p_t[c_row[j]] - p_t[c_row[j - 1]]
        # no off-shape ping before it (an anchor departs at once)
        out[2, i] = 1.0 if j == dj or noff[j] == 0 else 0.0
    return held


@numba.njit(cache=True, inline="always")
def _clipped(j, dj, aj, c_dist, o, e):  # pragma: no cover - compiled
    """Position of row `j` of a stretch clipped to its itinerary [o, e]: the origin for its
    departure anchor `dj`, the destination for its arrival anchor `aj`."""
    prog = o if j == dj else (e if j == aj else c_dist[j])
    return max(min(prog, e), o)
