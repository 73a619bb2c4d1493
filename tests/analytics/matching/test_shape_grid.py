"""The grid search of the shape passes near each ping (analytics/matching/shape_grid.py), against exact
distances computed by shapely."""

from __future__ import annotations

import numpy as np
import shapely

from analytics.matching.shape_grid import build_point_grid, find_shape_passes

STEP_M = 20.0
BUFFER_M = 60.0
REACH_M = BUFFER_M + STEP_M
JUMP = 2 + int(2 * REACH_M / STEP_M)


def densify(lines: list[shapely.LineString]) -> tuple[np.ndarray, ...]:
    """Points every STEP_M along each line, shape by shape: x, y, dist_m, shape_idx."""
    xs, ys, ds, ss = [], [], [], []
    for k, line in enumerate(lines):
        d = np.r_[np.arange(0.0, line.length, STEP_M), line.length]
        pts = shapely.get_coordinates(shapely.line_interpolate_point(line, d))
        xs.append(pts[:, 0])
        ys.append(pts[:, 1])
        ds.append(d)
        ss.append(np.full(len(d), k, np.int32))
    return tuple(np.concatenate(a) for a in (xs, ys, ds, ss))


def passes(lines: list[shapely.LineString], px: np.ndarray, py: np.ndarray):
    x, y, d, s = densify(lines)
    grid = build_point_grid(x, y, REACH_M)
    return find_shape_passes(px, py, grid, x, y, d, s, REACH_M, JUMP, BUFFER_M)


def test_every_shape_of_a_crowded_corridor_is_found() -> None:
    # 40 lines along one avenue, 1.5 m apart: a k-nearest lookup of 24 points saw about three
    # of them; the grid sees all, and a ping's 40 passes overflow the first output sizing
    lines = [shapely.LineString([(0, 1.5 * k), (2000, 1.5 * k)]) for k in range(40)]
    px = np.array([500.0, 1234.5, 1999.0])
    py = np.array([10.0, 30.0, 59.0])
    rows, shape, dist, off = passes(lines, px, py)
    assert np.bincount(rows).tolist() == [40, 40, 40]
    for r in range(3):
        got = shape[rows == r]
        assert sorted(got.tolist()) == list(range(40))
        np.testing.assert_allclose(dist[rows == r], px[r], atol=1e-9)
        np.testing.assert_allclose(off[rows == r], np.abs(py[r] - 1.5 * got), atol=1e-9)


def test_out_and_back_street_gives_two_passes() -> None:
    # a line out 1 km and back on the same street: a ping on it lies on both passes
    line = shapely.LineString([(0, 0), (1000, 0), (1000, 8), (0, 8)])
    rows, _, dist, off = passes([line], np.array([300.0]), np.array([4.0]))
    assert rows.tolist() == [0, 0]
    np.testing.assert_allclose(np.sort(dist), [300.0, 1008.0 + 700.0])
    np.testing.assert_allclose(off, [4.0, 4.0])


def test_matches_exact_distances_on_random_lines() -> None:
    rng = np.random.default_rng(7)
    lines = [
        shapely.LineString(np.cumsum(rng.uniform(-300, 300, size=(12, 2)), axis=0) + 2000)
        for _ in range(30)
    ]
    px, py = rng.uniform(0, 4000, 3000), rng.uniform(0, 4000, 3000)
    rows, shape, dist, off = passes(lines, px, py)
    # the lines as the search sees them: their densified points joined (a corner is cut by up
    # to half a step; that is the network's geometry, not the search's error)
    x, y, _, s = densify(lines)
    seen = [shapely.LineString(np.c_[x[s == k], y[s == k]]) for k in range(len(lines))]
    points = shapely.points(px, py)
    exact = np.array([shapely.distance(points, line) for line in seen]).T  # (ping, shape)
    found = np.zeros_like(exact, dtype=bool)
    found[rows, shape] = True
    # clearly inside the buffer: found, at its exact distance; clearly outside: never
    assert found[exact < BUFFER_M - 1.0].all()
    assert not found[exact > BUFFER_M].any()
    nearest = np.full_like(exact, np.inf)
    np.minimum.at(nearest, (rows, shape), off)
    inside = exact < BUFFER_M - 1.0
    # the position is refined on the two segments beside the pass's nearest point: exact but
    # where the line folds back within a step (the nearest segment is then one further on;
    # 4 of 1257 here, off by less than 0.5 m), never nearer than the line
    assert (nearest[inside] >= exact[inside] - 1e-6).all()
    assert (nearest[inside] <= exact[inside] + 0.5).all()
    on_point = np.isclose(nearest, exact, rtol=0.0, atol=1e-6) & inside
    assert on_point.sum() >= 0.99 * inside.sum()
    # positions along the line: where the ping projects (pings with a single pass of a line)
    single = np.bincount(rows * len(lines) + shape, minlength=exact.size) == 1
    one = single[rows * len(lines) + shape] & on_point[rows, shape]
    x, y, d, s = densify(lines)

    def measure(k: int, along_m: float) -> float:
        """A length along the densified line as the line's own measure (distance along it)."""
        xk, yk = x[s == k], y[s == k]
        lengths = np.r_[0.0, np.cumsum(np.hypot(np.diff(xk), np.diff(yk)))]
        return float(np.interp(along_m, lengths, d[s == k]))

    expected = [
        measure(k, seen[k].project(shapely.Point(px[r], py[r])))
        for r, k in zip(rows[one], shape[one], strict=True)
    ]
    np.testing.assert_allclose(dist[one], expected, atol=1e-6)


def test_no_pings_and_no_points() -> None:
    rows, *_ = passes([shapely.LineString([(0, 0), (100, 0)])], np.empty(0), np.empty(0))
    assert rows.size == 0
    grid = build_point_grid(np.empty(0), np.empty(0), REACH_M)
    empty = np.empty(0)
    out = find_shape_passes(
        np.array([1.0]),
        np.array([1.0]),
        grid,
        empty,
        empty,
        empty,
        np.empty(0, np.int32),
        REACH_M,
        JUMP,
        BUFFER_M,
    )
    assert out[0].size == 0


def refine_with_two_offsets(x, y, point, px, py, pd, ps):
    """The refinement as it was before one offset a pass: both sides' `np.hypot`, the smaller
    kept (the side before on a tie)."""
    d_best, off_best = np.nan, np.inf
    last = len(px) - 1
    for side in range(2):
        sa = max(point - 1, 0) if side == 0 else point
        sb = point if side == 0 else min(point + 1, last)
        if ps[sa] != ps[sb] or sa == sb:
            sa = sb = point
        ax, ay = px[sa], py[sa]
        vx, vy = px[sb] - ax, py[sb] - ay
        seg2 = vx * vx + vy * vy
        t = ((x - ax) * vx + (y - ay) * vy) / seg2 if seg2 > 0 else 0.0
        t = min(max(t, 0.0), 1.0)
        off = np.hypot(x - (ax + t * vx), y - (ay + t * vy))
        if off < off_best:
            off_best = off
            d_best = pd[sa] + t * (pd[sb] - pd[sa])
    return d_best, off_best


def test_refine_takes_one_offset_with_the_same_values() -> None:
    # a zigzag line and a straight one; pings anywhere near, and pings on the bisectors of
    # the zigzag's corners and on its points (both sides at the same offset: ties)
    from analytics.matching.shape_grid import _refine

    rng = np.random.default_rng(11)
    zig = np.cumsum(rng.uniform(-20, 20, size=(40, 2)), axis=0)
    line = np.c_[np.linspace(0, 780, 40), np.zeros(40)]
    xy = np.r_[zig, line]
    px, py = xy[:, 0].copy(), xy[:, 1].copy()
    ps = np.r_[np.zeros(40, np.int32), np.ones(40, np.int32)]
    pd = np.r_[np.r_[0.0, np.cumsum(np.hypot(*np.diff(zig, axis=0).T))], line[:, 0]]
    cases = [(x, y, int(k)) for k in range(80) for x, y in px[k] + rng.normal(0, 15, (6, 2))]
    for k in range(1, 79):
        cases.append((px[k], py[k], k))  # on the point: both sides clamp to it
        if ps[k - 1] == ps[k] == ps[k + 1]:  # on the corner's bisector, both sides alike
            a = np.array([px[k - 1] - px[k], py[k - 1] - py[k]])
            b = np.array([px[k + 1] - px[k], py[k + 1] - py[k]])
            bis = a / np.hypot(*a) + b / np.hypot(*b)
            if np.hypot(*bis) > 1e-9:
                x, y = np.array([px[k], py[k]]) + 3.0 * bis / np.hypot(*bis)
                cases.append((x, y, k))
    for x, y, k in cases:
        got = _refine(x, y, k, px, py, pd, ps, len(px) - 1)
        want = refine_with_two_offsets(x, y, k, px, py, pd, ps)
        assert got[1] == want[1] and (got[0] == want[0] or (np.isnan(got[0]) and np.isnan(want[0])))
