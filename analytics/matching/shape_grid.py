"""A uniform grid over the densified shape points, and the search of the shape passes near
each ping on it.

The cell side is the search reach (buffer plus densify step), so every point within reach of a
ping lies in the 3 x 3 cells around the ping's cell. Each cell keeps that neighbourhood's points
as one list sorted along the shapes (built once per day), so a ping costs one cell lookup and
one scan of a sorted list: its passes (runs of one shape's points within reach) come out of the
scan in order, with no per-ping sort. The search finds *all* passes, however many lines share a
corridor (a k-nearest lookup with a fixed k silently drops passes where more shapes meet than k
covers).

The scans are compiled with numba (releasing the GIL, so batches of pings run in threads):
there is no vectorised form of "group this ping's few neighbours into passes" that does not
first materialise every (ping x point) pair, about 60 per ping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np

# distance resolution of the nearest-point choice: centimetres, capped (beyond any reach), so
# ties between points at the same distance break the same way on every machine
_CM_CAP = 65535.0
# the eight neighbours of a cell and itself
_NEIGHBOURS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]


class ShapePasses(NamedTuple):
    """The passes `find_shape_passes` found, one entry per pass (the columns of
    `PING_CANDIDATES` before one pass per (ping, shape) is chosen)."""

    row: np.ndarray
    """the ping's index in the inputs"""
    shape_idx: np.ndarray
    dist_m: np.ndarray
    """position along the shape, metres"""
    offset_m: np.ndarray
    """distance from the shape, metres"""


@dataclass(frozen=True)
class PointGrid:
    """Densified shape points bucketed in square cells of `cell_m` (state shared by workers).

    Cells are counted from (`x0_m`, `y0_m`) and keyed `cx * n_rows + cy`. `keys`: the keys of
    the cells within one cell of a point, sorted; `starts`: each one's first position in
    `points` (one extra, closing entry); `points`: per cell, the indices of the points of its
    3 x 3 neighbourhood, sorted (along the shapes). `slots`: an open-addressing hash table of
    `keys` (position in `keys`, -1 when free; a power of two long, at least twice the keys): a
    lookup costs a multiply and a probe or two, where a binary search costs about 80 ns and a
    dense table of a metropolitan area's cells hundreds of MB.
    """

    x0_m: float
    y0_m: float
    cell_m: float
    n_rows: int
    keys: np.ndarray
    starts: np.ndarray
    points: np.ndarray
    slots: np.ndarray


def build_point_grid(x_m: np.ndarray, y_m: np.ndarray, cell_m: float) -> PointGrid:
    """Bucket points (metres) in cells of `cell_m`, with each cell's neighbourhood list."""
    if len(x_m) == 0:
        empty = np.empty(0, np.int64)
        return PointGrid(
            0.0, 0.0, cell_m, 1, empty, np.zeros(1, np.int64), empty, np.full(1, -1, np.int64)
        )
    # one cell of margin on every side, so no neighbourhood wraps a row
    x0, y0 = float(x_m.min()) - cell_m, float(y_m.min()) - cell_m
    cx = np.floor((x_m - x0) / cell_m).astype(np.int64)
    cy = np.floor((y_m - y0) / cell_m).astype(np.int64)
    n_rows = int(cy.max()) + 2
    own = cx * n_rows + cy
    order = np.argsort(own, kind="stable")  # by cell, then by point index
    own_sorted = own[order]
    first = np.flatnonzero(np.r_[True, own_sorted[1:] != own_sorted[:-1]])
    own_keys = own_sorted[first]
    own_starts = np.r_[first, len(order)].astype(np.int64)
    keys = np.unique(np.concatenate([own_keys + dx * n_rows + dy for dx, dy in _NEIGHBOURS]))
    own_slots = _hash_table(own_keys)
    sizes = np.zeros(len(keys), np.int64)
    _near_lists(keys, n_rows, own_keys, own_slots, own_starts, order, sizes, np.empty(0, np.int64))
    starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    points = np.empty(int(starts[-1]), np.int32)  # about nine entries a point: half the bytes
    _near_lists(keys, n_rows, own_keys, own_slots, own_starts, order, starts, points)
    return PointGrid(x0, y0, cell_m, n_rows, keys, starts, points, _hash_table(keys))


def _hash_table(keys: np.ndarray) -> np.ndarray:
    slots = np.full(1 << int(np.ceil(np.log2(max(2 * len(keys), 2)))), -1, np.int64)
    _fill_slots(keys, slots)
    return slots


def find_shape_passes(
    px: np.ndarray,
    py: np.ndarray,
    grid: PointGrid,
    points_x: np.ndarray,
    points_y: np.ndarray,
    points_dist: np.ndarray,
    points_shape: np.ndarray,
    reach_m: float,
    jump: int,
    buffer_m: float,
) -> ShapePasses:
    """Every pass of a shape within `buffer_m` of each ping (`ShapePasses`), by ping, then
    along the shapes.

    A pass is a run of the shape's points within `reach_m` of the ping whose indices are at most
    `jump` apart (a loop or an out-and-back street passes the same spot twice: two passes). Its
    position is the ping projected on the two densified segments beside the pass's nearest
    point (`dist_m`, metres along the shape; `offset_m`, metres from it).
    """
    n = len(px)
    px = np.ascontiguousarray(px, dtype=np.float64)
    py = np.ascontiguousarray(py, dtype=np.float64)
    geometry = {
        "x0_m": grid.x0_m,
        "y0_m": grid.y0_m,
        "cell_m": grid.cell_m,
        "n_rows": grid.n_rows,
        "cell_keys": grid.keys,
        "cell_slots": grid.slots,
        "cell_starts": grid.starts,
        "cell_points": grid.points,
        "points_x": points_x,
        "points_y": points_y,
        "points_dist": points_dist,
        "points_shape": points_shape,  # int32 in the network: no per-batch copy
        "reach_m": reach_m,
        "max_point_gap": jump,
        "buffer_m": buffer_m,
    }
    counts = np.zeros(n, np.int64)
    room = 8 * n + 16  # a grid city averages about 4 passes a ping
    while True:
        shape = np.empty(room, np.int64)
        dist = np.empty(room)
        off = np.empty(room)
        total = _passes(
            ping_x_m=px,
            ping_y_m=py,
            **geometry,
            n_passes=counts,
            out_shape=shape,
            out_dist_m=dist,
            out_offset_m=off,
        )
        if total <= room:
            break
        room = total  # a very busy corridor: once more, with room for all
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    return ShapePasses(rows, shape[:total].copy(), dist[:total].copy(), off[:total].copy())


@numba.njit(cache=True)
def _slot(key, n_slots):  # pragma: no cover - compiled
    """Home slot of a cell key: Fibonacci hashing (multiply, keep the high bits)."""
    return ((key * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF) % n_slots


@numba.njit(cache=True)
def _fill_slots(keys, slots):  # pragma: no cover - compiled
    """Insert each key's position in `slots` (linear probing)."""
    n_slots = slots.shape[0]
    for c in range(keys.shape[0]):
        h = _slot(keys[c], n_slots)
        while slots[h] >= 0:
            h = (h + 1) % n_slots
        slots[h] = c


@numba.njit(cache=True)
def _cell(key, keys, slots):  # pragma: no cover - compiled
    """Position of a cell key in `keys`, or -1 when the cell is not there."""
    n_slots = slots.shape[0]
    h = _slot(key, n_slots)
    while slots[h] >= 0:
        if keys[slots[h]] == key:
            return slots[h]
        h = (h + 1) % n_slots
    return -1


@numba.njit(cache=True)
def _near_lists(
    keys, n_rows, own_keys, own_slots, own_starts, own_points, starts, out
):  # pragma: no cover - compiled
    """Per cell of `keys`, the sorted points of the cells around it: their number into `starts`
    (when `out` is empty), else the points into `out` from `starts`."""
    fill = out.shape[0] > 0
    for c in range(keys.shape[0]):
        gx, gy = keys[c] // n_rows, keys[c] % n_rows
        m = starts[c] if fill else 0
        lo = m
        for dx in range(-1, 2):
            for dy in range(-1, 2):
                o = _cell((gx + dx) * n_rows + gy + dy, own_keys, own_slots)
                if o < 0:
                    continue
                for s in range(own_starts[o], own_starts[o + 1]):
                    if fill:
                        out[m] = own_points[s]
                    m += 1
        if fill:
            out[lo:m].sort()
        else:
            starts[c] = m


@numba.njit(cache=True, nogil=True)
def _passes(  # pragma: no cover - compiled; tested through find_shape_passes
    ping_x_m,
    ping_y_m,
    x0_m,
    y0_m,
    cell_m,
    n_rows,
    cell_keys,
    cell_slots,
    cell_starts,
    cell_points,
    points_x,
    points_y,
    points_dist,
    points_shape,
    reach_m,
    max_point_gap,
    buffer_m,
    n_passes,
    out_shape,
    out_dist_m,
    out_offset_m,
):
    """The passes of each ping (see `find_shape_passes`; the grid's fields and the points'
    columns as `PointGrid` and `Network` name them): their number into `n_passes`, and their
    shape, position and offset, by ping, into the outputs as far as they have room (the
    outputs are never reallocated here: numba then keeps them in registers, 3x faster).
    Returns the number of passes. Sequential: batches of pings run in threads, and the kernel
    releases the GIL."""
    last = points_x.shape[0] - 1
    reach2 = reach_m * reach_m
    room = out_shape.shape[0]
    w = 0
    for i in range(ping_x_m.shape[0]):
        x, y = ping_x_m[i], ping_y_m[i]
        c = _cell(
            int(np.floor((x - x0_m) / cell_m)) * n_rows + int(np.floor((y - y0_m) / cell_m)),
            cell_keys,
            cell_slots,
        )
        k = 0
        if c >= 0:
            # the neighbourhood's points come sorted along the shapes: a pass is a run of one
            # shape's points within reach, at most `max_point_gap` apart; keep its first nearest
            best = -1
            best_cm = 0.0
            best_d2 = 0.0
            prev = -1
            d2 = 0.0
            for s in range(cell_starts[c], cell_starts[c + 1] + 1):
                p = cell_points[s] if s < cell_starts[c + 1] else -1
                if p >= 0:
                    dx, dy = points_x[p] - x, points_y[p] - y
                    d2 = dx * dx + dy * dy
                    if d2 > reach2:
                        continue
                    if (
                        best >= 0
                        and points_shape[p] == points_shape[prev]
                        and p - prev <= max_point_gap
                    ):
                        # centimetres grow with the squared distance: only a nearer point
                        # can round to fewer (ties keep the first)
                        if d2 < best_d2:
                            cm = _centimetres(d2)
                            if cm < best_cm:
                                best, best_cm, best_d2 = p, cm, d2
                        prev = p
                        continue
                if best >= 0:  # the pass of `best` ended: refine and write it
                    d_pass, off_pass = _refine(
                        x, y, best, points_x, points_y, points_dist, points_shape, last
                    )
                    if off_pass <= buffer_m:
                        if w < room:
                            out_shape[w] = points_shape[best]
                            out_dist_m[w] = d_pass
                            out_offset_m[w] = off_pass
                        w += 1
                        k += 1
                best, best_d2, prev = p, d2, p
                if p >= 0:
                    best_cm = _centimetres(d2)
        n_passes[i] = k
    return w


@numba.njit(cache=True, inline="always")
def _centimetres(d2):  # pragma: no cover - compiled
    """A squared distance (m²) as whole centimetres, capped."""
    return np.rint(min(np.sqrt(d2) * 100.0, _CM_CAP))


_CLEARLY_NEARER = 1.0 - 1e-9
"""a squared offset below this share of the other side's is nearer whatever the rounding: both
are within a few units in the last place (2e-16) of their exact values, and `np.hypot` within
one of its exact root"""


@numba.njit(cache=True, inline="always")
def _refine(
    x, y, point, points_x, points_y, points_dist, points_shape, last_point
):  # pragma: no cover - compiled
    """(dist_m, offset_m) of (x, y) projected on the densified segments before and after
    `point` of its shape (`last_point`: the last index of the points): the nearer of the two
    projections (the one before on a tie).

    The offset is `np.hypot` of the projection's residual, taken only for the side kept when
    the squared residuals tell the nearer side apart with room (`_CLEARLY_NEARER`): one
    `hypot` a pass instead of two (a fifth of the kernel), the same values. Too close to
    call, both offsets are taken and compared as they are."""
    d_before = d_after = np.nan
    ex_before = ey_before = ex_after = ey_after = 0.0
    for side in range(2):
        sa = max(point - 1, 0) if side == 0 else point
        sb = point if side == 0 else min(point + 1, last_point)
        if points_shape[sa] != points_shape[sb] or sa == sb:
            sa = point
            sb = point
        ax, ay = points_x[sa], points_y[sa]
        vx, vy = points_x[sb] - ax, points_y[sb] - ay
        seg2 = vx * vx + vy * vy
        t = ((x - ax) * vx + (y - ay) * vy) / seg2 if seg2 > 0 else 0.0
        t = min(max(t, 0.0), 1.0)
        ex, ey = x - (ax + t * vx), y - (ay + t * vy)
        d = points_dist[sa] + t * (points_dist[sb] - points_dist[sa])
        if side == 0:
            d_before, ex_before, ey_before = d, ex, ey
        else:
            d_after, ex_after, ey_after = d, ex, ey
    q_before = ex_before * ex_before + ey_before * ey_before
    q_after = ex_after * ex_after + ey_after * ey_after
    if q_before < q_after * _CLEARLY_NEARER:
        return d_before, np.hypot(ex_before, ey_before)
    if q_after < q_before * _CLEARLY_NEARER:
        return d_after, np.hypot(ex_after, ey_after)
    off_before = np.hypot(ex_before, ey_before)
    off_after = np.hypot(ex_after, ey_after)
    if off_after < off_before:
        return d_after, off_after
    return d_before, off_before
