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

from typing import NamedTuple

import numba
import numpy as np
import polars as pl

from analytics.matching.frames import STRETCH_POINTS, STRETCHES
from analytics.matching.kernel_arrays import to_kernel_array
from analytics.matching.network import Network
from analytics.matching.options import ANY_GAP, GapCredit, MatchOptions


class StretchStats(NamedTuple):
    """What `_stretch_stats` returns: one array per stretch column of `STRETCHES` it computes
    (same names and meanings), indexed by stretch number."""

    first_row: np.ndarray
    shape_idx: np.ndarray
    n_mid_pings: np.ndarray
    first_dist_m: np.ndarray
    max_dist_m: np.ndarray
    first_s: np.ndarray
    last_s: np.ndarray
    n_off_route: np.ndarray
    off_route_s: np.ndarray
    is_departed: np.ndarray
    is_arrived: np.ndarray
    distance_run_m: np.ndarray
    observed_progress_m: np.ndarray
    gps_gap_s: np.ndarray
    gps_gap_m: np.ndarray


class StretchPoints(NamedTuple):
    """What `_stretch_points` returns: the columns of `STRETCH_POINTS`, one entry per point."""

    stretch_index: np.ndarray
    point_kind: np.ndarray
    row: np.ndarray
    t_s: np.ndarray
    dist_m: np.ndarray


def cut_stretches(
    cand: pl.DataFrame,
    pings: pl.DataFrame,
    network: Network,
    options: MatchOptions,
    gap_credit: GapCredit = ANY_GAP,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Stretches of forward progress along a shape between terminals, and their pings.

    `cand`: `PING_CANDIDATES` (see `project_pings`). `pings`: by `row`, with `vehicle_rank`
    (Int64), t_s, x_m, y_m, `dt_prev_s` / `dt_next_s` (seconds to the vehicle's previous /
    next ping). `gap_credit`: which GPS silences inside a stretch are credited (the profile's).

    Returns (stretches, points): `STRETCHES`, one row per stretch that made at least
    `run_min_progress_m` of observed progress, and `STRETCH_POINTS`, per stretch (all of them,
    also those left out of `stretches`) its departure anchor, pings and arrival anchor.
    """
    shapes = network.shapes
    cand_row = to_kernel_array(cand["row"], pl.Int64)
    cand_shape = to_kernel_array(cand["shape_idx"], pl.Int64)
    cand_dist_m = to_kernel_array(cand["dist_m"], pl.Float64)
    # (shape, row) order: the candidates come by row, so a stable sort by shape (a radix sort
    # on 16-bit keys) does it
    narrow = np.int16 if len(network.shapes) < 2**15 else np.int32
    order = np.argsort(cand_shape.astype(narrow), kind="stable")
    cand_row, cand_shape, cand_dist_m = cand_row[order], cand_shape[order], cand_dist_m[order]

    def col(frame: pl.DataFrame, name: str) -> np.ndarray:
        return to_kernel_array(frame[name])

    t_s = col(pings, "t_s")
    n = len(cand_row)
    row_stretch = np.full(n, -1, np.int64)
    row_departs = np.full(n, -1, np.int64)
    row_arrives = np.full(n, -1, np.int64)
    row_n_off_before = np.full(n, -1, np.int64)
    n_stretches = _cut(
        cand_row=cand_row,
        cand_shape=cand_shape,
        cand_dist_m=cand_dist_m,
        ping_vehicle=to_kernel_array(pings["vehicle_rank"], pl.Int64),
        ping_t_s=t_s,
        ping_x_m=col(pings, "x_m"),
        ping_y_m=col(pings, "y_m"),
        start_x_m=col(shapes, "start_x_m"),
        start_y_m=col(shapes, "start_y_m"),
        end_x_m=col(shapes, "end_x_m"),
        end_y_m=col(shapes, "end_y_m"),
        gap_s=options.gap_s,
        min_progress_m=options.run_min_progress_m,
        terminal_radius_m=options.terminal_radius_m,
        detour_max_s=options.detour_max_s,
        backward_break_m=options.backward_break_m,
        row_stretch=row_stretch,
        row_departs=row_departs,
        row_arrives=row_arrives,
        row_n_off_before=row_n_off_before,
    )
    st = _stretch_stats(
        n_stretches=n_stretches,
        cand_row=cand_row,
        cand_shape=cand_shape,
        cand_dist_m=cand_dist_m,
        row_stretch=row_stretch,
        row_departs=row_departs,
        row_arrives=row_arrives,
        row_n_off_before=row_n_off_before,
        ping_t_s=t_s,
        ping_dt_prev_s=col(pings, "dt_prev_s"),
        ping_dt_next_s=col(pings, "dt_next_s"),
        origin_dist_m=col(shapes, "origin_dist_m"),
        destination_dist_m=col(shapes, "destination_dist_m"),
        gap_s=options.gap_s,
        min_progress_m=options.run_min_progress_m,
        gap_max_s=gap_credit.max_s,
        gap_min_speed_m_s=gap_credit.min_speed_m_s,
        gap_max_speed_m_s=gap_credit.max_speed_m_s,
    )
    stats = pl.DataFrame(
        {
            "stretch_index": np.arange(n_stretches, dtype=np.int64),
            **st._asdict(),
            "shape_idx": st.shape_idx.astype(np.int32),
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
    points = pl.DataFrame(
        _stretch_points(
            row_arrives=row_arrives,
            row_departs=row_departs,
            row_stretch=row_stretch,
            cand_row=cand_row,
            cand_shape=cand_shape,
            cand_dist_m=cand_dist_m,
            ping_t_s=t_s,
            origin_dist_m=col(shapes, "origin_dist_m"),
            destination_dist_m=col(shapes, "destination_dist_m"),
        )._asdict()
    )
    kept = stats.filter(pl.col("observed_progress_m") >= options.run_min_progress_m)
    return STRETCHES.conform(kept), STRETCH_POINTS.conform(points)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _cut(  # pragma: no cover - compiled; tested through build_runs
    cand_row,
    cand_shape,
    cand_dist_m,
    ping_vehicle,
    ping_t_s,
    ping_x_m,
    ping_y_m,
    start_x_m,
    start_y_m,
    end_x_m,
    end_y_m,
    gap_s,
    min_progress_m,
    terminal_radius_m,
    detour_max_s,
    backward_break_m,
    row_stretch,
    row_departs,
    row_arrives,
    row_n_off_before,
):
    """Cut each (shape, vehicle) group into stretches; returns their number.

    A shape is cut for a vehicle only when the vehicle made at least `min_progress_m` of
    forward progress along it between consecutive pings (at most `gap_s` apart) both on it: the
    least any of its runs must show. In a grid city a vehicle crosses dozens of shapes; those
    crossings never chain two on-shape pings moving along them, so they drop out first.

    The candidates (`cand_row`: the ping's row, `cand_shape`, `cand_dist_m`) come in (shape,
    row) order; the pings' columns (`ping_*`) are by row, the shapes' (`start_*`, `end_*`) by
    shape. Fills, per candidate: `row_stretch`, its stretch number (-1 at a terminal, within
    `terminal_radius_m` of the shape's first or last point); `row_departs` / `row_arrives`, the
    stretch a terminal candidate departs / arrives as its anchor (the one just before / after
    it, within `detour_max_s`); `row_n_off_before`, the pings skipped since the group's
    previous candidate (off this shape; -1 at the group's first one).
    A stretch breaks after a terminal candidate, across a silence or excursion longer than
    `detour_max_s`, and at a step backwards longer than `backward_break_m`.
    """
    n = cand_row.shape[0]
    r2 = terminal_radius_m * terminal_radius_m
    n_stretches = 0
    a = 0
    while a < n:
        b = a + 1
        while (
            b < n
            and cand_shape[b] == cand_shape[a]
            and ping_vehicle[cand_row[b]] == ping_vehicle[cand_row[a]]
        ):
            b += 1
        # a crossing of another line never chains two on-shape pings moving along it
        fwd = 0.0
        for j in range(a + 1, b):
            step = cand_dist_m[j] - cand_dist_m[j - 1]
            if (
                cand_row[j] - cand_row[j - 1] == 1
                and ping_t_s[cand_row[j]] - ping_t_s[cand_row[j - 1]] <= gap_s
                and step > 0
            ):
                fwd += step
        if fwd >= min_progress_m:
            s = cand_shape[a]
            prev_term = False
            for j in range(a, b):
                p = cand_row[j]
                dxs, dys = ping_x_m[p] - start_x_m[s], ping_y_m[p] - start_y_m[s]
                dxe, dye = ping_x_m[p] - end_x_m[s], ping_y_m[p] - end_y_m[s]
                at_start = dxs * dxs + dys * dys <= r2
                at_end = dxe * dxe + dye * dye <= r2
                term = at_start or at_end
                if j == a:
                    brk = True
                else:
                    row_n_off_before[j] = p - cand_row[j - 1] - 1
                    brk = (
                        prev_term
                        or ping_t_s[p] - ping_t_s[cand_row[j - 1]] > detour_max_s
                        or cand_dist_m[j] - cand_dist_m[j - 1] < -backward_break_m
                    )
                if not term:
                    if brk:
                        n_stretches += 1
                    row_stretch[j] = n_stretches - 1
                else:
                    # anchors: a terminal ping right before or after a stretch, in time
                    if (
                        at_start
                        and j + 1 < b
                        and ping_t_s[cand_row[j + 1]] - ping_t_s[p] <= detour_max_s
                    ):
                        row_departs[j] = -2  # resolved below, once the next row has its stretch
                    if (
                        at_end
                        and j > a
                        and row_stretch[j - 1] >= 0
                        and ping_t_s[p] - ping_t_s[cand_row[j - 1]] <= detour_max_s
                    ):
                        row_arrives[j] = row_stretch[j - 1]
                prev_term = term
            for j in range(a, b - 1):
                if row_departs[j] == -2:
                    row_departs[j] = row_stretch[j + 1]
        a = b
    return n_stretches


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _stretch_stats(  # pragma: no cover - compiled; tested through build_runs
    n_stretches,
    cand_row,
    cand_shape,
    cand_dist_m,
    row_stretch,
    row_departs,
    row_arrives,
    row_n_off_before,
    ping_t_s,
    ping_dt_prev_s,
    ping_dt_next_s,
    origin_dist_m,
    destination_dist_m,
    gap_s,
    min_progress_m,
    gap_max_s,
    gap_min_speed_m_s,
    gap_max_speed_m_s,
):
    """Per stretch (`StretchStats`): first row, shape, pings, first/max position, first/last
    time, off-route excursions, anchors, distance run on the itinerary, observed progress and
    the silences credited. The arguments are `_cut`'s and what it filled, the pings' seconds
    to their previous / next ping, the shapes' origin and destination (metres along them) and
    the `GapCredit` rules (`gap_max_s`, `gap_min_speed_m_s`, `gap_max_speed_m_s`).

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

    Silence is not evidence of a partial trip. Inside a stretch, a step across a GPS gap (no
    ping of the vehicle for more than `gap_s`, at most a fringe of off-shape fixes under
    `gap_s` beside it: the unit losing its fix as it fades) between two points on the shape is
    credited whole when it lasts at most `gap_max_s` and its implied speed along the shape
    lies between `gap_min_speed_m_s` and `gap_max_speed_m_s`; otherwise it is credited nothing
    (a silence too long, or a jump no bus makes, is no evidence of the route run). A gap that
    jumps off the shape is an excursion: only the `gap_s` on either side of it count there,
    never the silence; a gap that jumps backwards more than `backward_break_m` ends the
    stretch (`_cut`). A stretch that ends into a gap is credited towards the destination, one
    that starts out of a gap from the origin, as far as the stretch's mean speed carries it
    in the silence (at most `gap_max_s` of it). `gps_gap_s` / `gps_gap_m` add up what was
    credited across silences: their seconds (at an end, the time that speed takes over the
    credited metres) and metres. The observed progress counts only steps between pings at
    most `gap_s` apart, with no silence credit: a run must show that much real progress to
    exist at all.
    """
    first_row = np.zeros(n_stretches, np.int64)
    shape = np.zeros(n_stretches, np.int64)
    n_mid_pings = np.zeros(n_stretches, np.int64)
    first_dist_m = np.zeros(n_stretches)
    max_dist_m = np.zeros(n_stretches)
    first_s = np.zeros(n_stretches)
    last_s = np.zeros(n_stretches)
    n_off_route = np.zeros(n_stretches, np.int64)
    off_route_s = np.zeros(n_stretches)
    is_departed = np.zeros(n_stretches, np.bool_)
    is_arrived = np.zeros(n_stretches, np.bool_)
    distance_run_m = np.zeros(n_stretches)
    observed_progress_m = np.zeros(n_stretches)
    gps_gap_s = np.zeros(n_stretches)
    gps_gap_m = np.zeros(n_stretches)
    first_cand = np.full(n_stretches, -1, np.int64)
    last_cand = np.full(n_stretches, -1, np.int64)
    departure_cand = np.full(n_stretches, -1, np.int64)
    arrival_cand = np.full(n_stretches, -1, np.int64)
    n = cand_row.shape[0]
    # a stretch's steps (m), their times (s) and whether each is on the shape (1/0): one
    # scratch for all stretches
    steps = np.empty((3, n + 1))
    for j in range(n):
        k = row_stretch[j]
        if k >= 0:
            if first_cand[k] < 0:
                first_cand[k] = j
                first_row[k] = cand_row[j]
                shape[k] = cand_shape[j]
                first_dist_m[k] = cand_dist_m[j]
                max_dist_m[k] = cand_dist_m[j]
                first_s[k] = ping_t_s[cand_row[j]]
            else:
                max_dist_m[k] = max(max_dist_m[k], cand_dist_m[j])
                if row_n_off_before[j] > 0:
                    n_off_route[k] += 1
                    off_route_s[k] += ping_t_s[cand_row[j]] - ping_t_s[cand_row[j - 1]]
            n_mid_pings[k] += 1
            last_s[k] = ping_t_s[cand_row[j]]
            last_cand[k] = j
        if row_departs[j] >= 0:
            is_departed[row_departs[j]] = True
            departure_cand[row_departs[j]] = j
        if row_arrives[j] >= 0:
            is_arrived[row_arrives[j]] = True
            arrival_cand[row_arrives[j]] = j
    for k in range(n_stretches):
        s = shape[k]
        origin_m, destination_m = origin_dist_m[s], destination_dist_m[s]
        start = origin_m if is_departed[k] else max(first_dist_m[k], origin_m)
        end = destination_m if is_arrived[k] else min(max_dist_m[k], destination_m)
        # progress never exceeds end less start: stretches that cannot reach the minimum
        # (touches of other lines' shapes) skip the distance (1 m spares rounding)
        if end - start < min_progress_m - 1.0:
            continue
        # the points: departure anchor, the stretch's rows (consecutive in the group, the
        # terminal rows between them excluded), arrival anchor
        lo = departure_cand[k] if departure_cand[k] >= 0 else first_cand[k]
        hi = arrival_cand[k] if arrival_cand[k] >= 0 else last_cand[k]
        # its steps along the running maximum, then its mean speed over the steps with no
        # off-shape ping between
        m = hi - lo + 1
        held = _steps(
            lo,
            hi,
            departure_cand[k],
            arrival_cand[k],
            row_n_off_before,
            cand_row,
            cand_dist_m,
            ping_t_s,
            origin_m,
            destination_m,
            steps,
        )
        sum_step = 0.0
        sum_dt = 0.0
        for i in range(m):
            if steps[2, i] > 0:
                sum_step += steps[0, i]
                sum_dt += steps[1, i]
        speed = sum_step / max(sum_dt, 1.0)
        # credit the steps: on-shape, across a silence, or the likely share across an excursion
        total = 0.0
        seen = 0.0
        gap_t = 0.0
        gap_d = 0.0
        for i in range(m):
            step, dt = steps[0, i], steps[1, i]
            leave = 0.0 if i == 0 else ping_dt_next_s[cand_row[lo + i - 1]]
            leave = 0.0 if leave != leave else leave
            into = ping_dt_prev_s[cand_row[lo + i]]
            into = 0.0 if into != into else into
            # an anchor's own neighbours are not the stretch's: its step is on the shape
            if steps[2, i] > 0:
                leave = into = dt
            silence = max(leave, into)
            # at most one fix off the shape beside the silence: the unit losing its fix
            fringe = steps[2, i] > 0 or row_n_off_before[lo + i] <= 1
            if i > 0 and silence > gap_s and dt - silence <= gap_s and fringe:
                v = step / max(dt, 1.0)
                if dt <= gap_max_s and step > 0 and gap_min_speed_m_s <= v <= gap_max_speed_m_s:
                    total += step
                    gap_t += dt
                    gap_d += step
            elif steps[2, i] > 0:
                total += step
                if dt <= gap_s:
                    seen += step
            else:
                # a side that is a silence says nothing of when the vehicle left the shape
                leave = leave if leave <= gap_s else 0.0
                into = into if into <= gap_s else 0.0
                total += min(speed * (leave + into) / 2, step)
        # a silence at an end: credit it towards the terminal (the fix across it, if any, may
        # be the other direction's pass on a two-way street: it says nothing of this run)
        dt_in0 = ping_dt_prev_s[cand_row[lo]]
        if lo != departure_cand[k] and dt_in0 > gap_s:
            credit = min(
                _clipped(
                    lo, departure_cand[k], arrival_cand[k], cand_dist_m, origin_m, destination_m
                )
                - origin_m,
                min(dt_in0, gap_max_s) * speed,
            )
            total += credit
            gap_d += credit
            gap_t += credit / max(speed, 1e-9)
        dt_out1 = ping_dt_next_s[cand_row[hi]]
        if hi != arrival_cand[k] and dt_out1 > gap_s:
            credit = min(destination_m - held, min(dt_out1, gap_max_s) * speed)
            total += credit
            gap_d += credit
            gap_t += credit / max(speed, 1e-9)
        distance_run_m[k] = total
        observed_progress_m[k] = seen
        gps_gap_s[k] = gap_t
        gps_gap_m[k] = gap_d
    return StretchStats(
        first_row,
        shape,
        n_mid_pings,
        first_dist_m,
        max_dist_m,
        first_s,
        last_s,
        n_off_route,
        off_route_s,
        is_departed,
        is_arrived,
        distance_run_m,
        observed_progress_m,
        gps_gap_s,
        gps_gap_m,
    )


@numba.njit(cache=True, nogil=True)
def _steps(
    first_cand,
    last_cand,
    departure_cand,
    arrival_cand,
    row_n_off_before,
    cand_row,
    cand_dist_m,
    ping_t_s,
    origin_m,
    destination_m,
    out,
):  # pragma: no cover
    """The points of a stretch (candidates `first_cand` .. `last_cand` of its group: departure
    anchor `departure_cand` if any, its pings, arrival anchor `arrival_cand` if any) as steps
    along the running maximum of their position clipped to the itinerary, compared in whole
    millimetres (GPS noise at a standstill never moves it back): into `out` (see
    `_stretch_stats`). Returns the final running maximum."""
    held = 0.0
    held_mm = 0.0
    for i in range(last_cand - first_cand + 1):
        j = first_cand + i
        prog = _clipped(j, departure_cand, arrival_cand, cand_dist_m, origin_m, destination_m)
        mm = np.rint(prog * 1000.0)
        step = 0.0
        if i == 0 or mm >= held_mm:
            step = 0.0 if i == 0 else prog - held
            held, held_mm = prog, mm
        out[0, i] = step
        out[1, i] = 0.0 if i == 0 else ping_t_s[cand_row[j]] - ping_t_s[cand_row[j - 1]]
        # no off-shape ping before it (an anchor departs at once)
        out[2, i] = 1.0 if j == departure_cand or row_n_off_before[j] == 0 else 0.0
    return held


@numba.njit(cache=True, inline="always")
def _clipped(
    j, departure_cand, arrival_cand, cand_dist_m, origin_m, destination_m
):  # pragma: no cover - compiled
    """Position of candidate `j` of a stretch clipped to its itinerary [`origin_m`,
    `destination_m`]: the origin for its departure anchor `departure_cand`, the destination for
    its arrival anchor `arrival_cand`."""
    prog = (
        origin_m
        if j == departure_cand
        else (destination_m if j == arrival_cand else cand_dist_m[j])
    )
    return max(min(prog, destination_m), origin_m)


@numba.njit(cache=True, nogil=True)
def _stretch_points(  # pragma: no cover - compiled; tested through build_runs
    row_arrives,
    row_departs,
    row_stretch,
    cand_row,
    cand_shape,
    cand_dist_m,
    ping_t_s,
    origin_dist_m,
    destination_dist_m,
):
    """The stretches' points (`StretchPoints`) from what `_cut` filled: each candidate in its
    roles, in candidate order and within one as arrival anchor (kind 2, at its shape's
    destination), departure anchor (kind 0, at its origin), ping of a stretch (kind 1, at its
    position). One pass to count and one to fill, where whole-array steps interleaved the
    three role columns, searched and gathered them (a third of `cut_stretches`)."""
    n = cand_row.shape[0]
    m = 0
    for j in range(n):
        m += (row_arrives[j] >= 0) + (row_departs[j] >= 0) + (row_stretch[j] >= 0)
    stretch = np.empty(m, np.int64)
    kind = np.empty(m, np.int8)
    row = np.empty(m, np.int64)
    t_s = np.empty(m)
    dist_m = np.empty(m)
    w = 0
    for j in range(n):
        for role in range(3):
            k = row_arrives[j] if role == 0 else (row_departs[j] if role == 1 else row_stretch[j])
            if k < 0:
                continue
            stretch[w] = k
            row[w] = cand_row[j]
            t_s[w] = ping_t_s[cand_row[j]]
            if role == 0:
                kind[w] = 2
                dist_m[w] = destination_dist_m[cand_shape[j]]
            elif role == 1:
                kind[w] = 0
                dist_m[w] = origin_dist_m[cand_shape[j]]
            else:
                kind[w] = 1
                dist_m[w] = cand_dist_m[j]
            w += 1
    return StretchPoints(stretch, kind, row, t_s, dist_m)
