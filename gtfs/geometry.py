"""Geometry in metres: the feed's projected CRS, shapes, stops along shapes, planned distances.

The CRS is the UTM zone of the feed's stop centroid: SIRGAS 2000 / UTM (EPSG:31978-31985,
zones 18S-25S) inside Brazil, WGS 84 / UTM (EPSG:326xx north, 327xx south) elsewhere.

Stops are placed on their trip's shape once per *pattern* (shape_id + ordered stop ids), not per
trip: every trip of a pattern shares the distances. When a trip has no usable shape (shapes.txt
missing, no shape_id, a shape of fewer than two points) its shape is the polyline through its
stops, with id ``stops:<pattern hash>`` and `is_from_stops` true.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import shapely

from gtfs.read import Feed

# Brazil's bounding box (degrees) for choosing SIRGAS 2000 over WGS 84.
_BRAZIL_LON = (-74.0, -34.0)
_BRAZIL_LAT = (-34.0, 5.5)
_SIRGAS_UTM_SOUTH_BASE = 31960  # + zone: EPSG:31978 = zone 18S ... 31985 = zone 25S
_SIRGAS_ZONES = range(18, 26)

# shape_dist_traveled is in the feed's own unit. A unit is accepted when the median ratio of
# measured metres to feed units is within this relative tolerance of a known unit...
_UNIT_TOLERANCE = 0.05
_KNOWN_UNITS_M = (1.0, 1000.0, 1609.344, 0.3048)
# ...and a trip's own distance is used when it agrees with the measured one within this.
_TRIP_AGREEMENT = 0.10
# Shapes are shifted this far apart along x in one spatial index (more than any city spans).
_SHAPE_SHIFT_M = 1e8


def choose_crs(lat: float, lon: float) -> int:
    """EPSG code of the metric CRS for a network centred at (lat, lon) degrees."""
    zone = int((lon + 180.0) // 6.0) + 1
    zone = min(max(zone, 1), 60)
    in_brazil = _BRAZIL_LON[0] <= lon <= _BRAZIL_LON[1] and _BRAZIL_LAT[0] <= lat <= _BRAZIL_LAT[1]
    if in_brazil and lat < 0 and zone in _SIRGAS_ZONES:
        return _SIRGAS_UTM_SOUTH_BASE + zone
    return (32700 if lat < 0 else 32600) + zone


def choose_feed_crs(feed: Feed) -> int:
    """The metric CRS of a feed, from the median of its used stops that have coordinates."""
    stops = feed["stops"].filter(
        pl.col("stop_lat").is_between(-90, 90) & pl.col("stop_lon").is_between(-180, 180)
    )
    st = feed.get("stop_times")
    if st is not None:
        used = stops.filter(pl.col("stop_id").is_in(st["stop_id"].unique().implode()))
        stops = used if used.height else stops
    if stops.height == 0:
        return choose_crs(0.0, 0.0)
    # the median, not the mean: one misplaced stop (latitude and longitude swapped) must not
    # move the network to another UTM zone
    return choose_crs(float(stops["stop_lat"].median()), float(stops["stop_lon"].median()))  # type: ignore[arg-type]


# The ellipsoids of the CRSs `choose_crs` picks: (semi-major axis m, inverse flattening).
_GRS80 = (6378137.0, 298.257222101)  # SIRGAS 2000
_WGS84 = (6378137.0, 298.257223563)
_UTM_K0 = 0.9996
_UTM_FALSE_EASTING_M = 500_000.0
_UTM_FALSE_NORTHING_SOUTH_M = 10_000_000.0
# Past this transverse-Mercator easting (radians of the sphere, 150 degrees) PROJ refuses a
# point (infinite coordinates): so does `to_metres`.
_TM_DOMAIN = 2.623395162778


def utm_of(epsg: int) -> tuple[int, bool, tuple[float, float]]:
    """(zone, south, ellipsoid) of a UTM EPSG code `choose_crs` gives; ValueError otherwise."""
    if 32601 <= epsg <= 32660 or 32701 <= epsg <= 32760:
        return epsg % 100, epsg >= 32700, _WGS84
    if (
        _SIRGAS_UTM_SOUTH_BASE + _SIRGAS_ZONES.start
        <= epsg
        < _SIRGAS_UTM_SOUTH_BASE + _SIRGAS_ZONES.stop
    ):
        return epsg - _SIRGAS_UTM_SOUTH_BASE, True, _GRS80
    raise ValueError(f"EPSG:{epsg} is not a UTM CRS of WGS 84 or SIRGAS 2000")


def _series_coefficients(n: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Krüger's series to sixth order in the third flattening `n` (the coefficients PROJ's
    `utm` uses, Poder/Engsager): geodetic to conformal latitude, conformal sphere to
    transverse Mercator, and the rectifying radius over the semi-major axis."""
    n2, n3, n4, n5, n6 = n**2, n**3, n**4, n**5, n**6
    to_conformal = np.array([
        n * (-2 + n * (2 / 3 + n * (4 / 3 + n * (-82 / 45 + n * (32 / 45 + n * (4642 / 4725)))))),
        n2 * (5 / 3 + n * (-16 / 15 + n * (-13 / 9 + n * (904 / 315 + n * (-1522 / 945))))),
        n3 * (-26 / 15 + n * (34 / 21 + n * (8 / 5 + n * (-12686 / 2835)))),
        n4 * (1237 / 630 + n * (-12 / 5 + n * (-24832 / 14175))),
        n5 * (-734 / 315 + n * (109598 / 31185)),
        n6 * (444337 / 155925),
    ])  # fmt: skip
    alpha = np.array([
        n * (0.5 + n * (-2 / 3 + n * (5 / 16 + n * (41 / 180 + n * (-127 / 288 + n * (7891 / 37800)))))),
        n2 * (13 / 48 + n * (-3 / 5 + n * (557 / 1440 + n * (281 / 630 + n * (-1983433 / 1935360))))),
        n3 * (61 / 240 + n * (-103 / 140 + n * (15061 / 26880 + n * (167603 / 181440)))),
        n4 * (49561 / 161280 + n * (-179 / 168 + n * (6601661 / 7257600))),
        n5 * (34729 / 80640 + n * (-3418889 / 1995840)),
        n6 * (212378941 / 319334400),
    ])  # fmt: skip
    radius = (1 + n2 * (1 / 4 + n2 * (1 / 64 + n2 / 256))) / (1 + n)
    return to_conformal, alpha, radius


def _sine_series(coefficients: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum over k of coefficients[k-1] * sin(k x), by Clenshaw's recurrence (x real or
    complex)."""
    two_cos = 2 * np.cos(x)
    b1 = b2 = np.zeros_like(x)
    for c in coefficients[::-1]:
        b1, b2 = c + two_cos * b1 - b2, b1
    return b1 * np.sin(x)


def to_metres(
    lon: pl.Series | np.ndarray, lat: pl.Series | np.ndarray, epsg: int
) -> tuple[np.ndarray, np.ndarray]:
    """Project WGS 84 degrees to (x, y) metres in `epsg` (a UTM CRS `choose_crs` gives).

    The transverse Mercator of PROJ's `utm` (Krüger's series to sixth order, as Poder and
    Engsager), vectorised here: importing pyproj and building its transformer cost a `gtfs
    load` ~0.1 s of its ~1 s, for a formula of a few lines. It agrees with pyproj within a
    few nanometres across each zone (tests/gtfs/test_geometry.py); no datum shift is involved,
    as in PROJ (WGS 84 to SIRGAS 2000 is a null transformation). Null (NaN) in, NaN out; a
    point too far from the zone's meridian, or past a pole, gets infinite coordinates, as PROJ
    gives it.
    """
    zone, south, (a, rf) = utm_of(epsg)
    f = 1 / rf
    es = f * (2 - f)
    n = (es / (1 + np.sqrt(1 - es))) / (2 - es / (1 + np.sqrt(1 - es)))
    to_conformal, alpha, radius = _series_coefficients(n)
    lam0 = np.deg2rad((zone - 1) * 6.0 - 180.0 + 3.0)
    lon_d = np.asarray(lon, dtype=float)
    lat_d = np.asarray(lat, dtype=float)
    phi = np.deg2rad(lat_d)
    # the longitude from the central meridian, in [-pi, pi]
    lam = np.deg2rad(lon_d) - lam0
    lam = np.where(np.abs(lam) > np.pi, lam - 2 * np.pi * np.round(lam / (2 * np.pi)), lam)
    chi = phi + _sine_series(to_conformal, 2 * phi)
    sin_chi, cos_chi = np.sin(chi), np.cos(chi)
    cos_lam = np.cos(lam)
    xi = np.arctan2(sin_chi, cos_chi * cos_lam)
    eta = np.arcsinh(np.sin(lam) * cos_chi / np.hypot(sin_chi, cos_chi * cos_lam))
    # the series in the complex variable xi + i eta: its real part is the northing, its
    # imaginary part the easting (one complex sine per point instead of 24 real functions)
    zeta = xi + 1j * eta
    zeta = zeta + _sine_series(alpha, 2 * zeta)
    northing, easting = zeta.real, zeta.imag
    scale = a * _UTM_K0 * radius
    x = scale * easting + _UTM_FALSE_EASTING_M
    y = scale * northing + (_UTM_FALSE_NORTHING_SOUTH_M if south else 0.0)
    outside = (np.abs(easting) > _TM_DOMAIN) | (np.abs(lat_d) > 90.0)
    if outside.any():
        x, y = np.where(outside, np.inf, x), np.where(outside, np.inf, y)
    return x, y


def build_stops_xy(stops: pl.DataFrame, epsg: int) -> pl.DataFrame:
    """stops with `stop_x_m`, `stop_y_m` (metres in `epsg`; null without coordinates)."""
    x, y = to_metres(stops["stop_lon"].fill_null(np.nan), stops["stop_lat"].fill_null(np.nan), epsg)
    return stops.with_columns(
        pl.Series("stop_x_m", x).fill_nan(None), pl.Series("stop_y_m", y).fill_nan(None)
    )


def build_patterns(
    stop_times: pl.DataFrame, trips: pl.DataFrame, shape_ids: pl.Series | None
) -> pl.DataFrame:
    """One row per trip: `trip_id`, `pattern_id` and `shape_id` (the one its geometry uses).

    `pattern_id` identifies (shape_id from trips.txt, ordered stop ids). `shape_id` is the
    trip's own when it is in `shape_ids` (usable shapes), else ``stops:<hash of the stops>``.
    """
    seqs = (
        stop_times.sort("trip_id", "stop_sequence")
        .group_by("trip_id", maintain_order=True)
        .agg(pl.col("stop_id").str.join("\x1f").alias("_stops"))
    )
    trip_shape = trips.select(
        "trip_id",
        pl.col("shape_id")
        if "shape_id" in trips.columns
        else pl.lit(None, pl.String).alias("shape_id"),
    )
    out = seqs.join(trip_shape, on="trip_id", how="left")
    usable = (
        pl.col("shape_id").is_in(shape_ids.implode()) if shape_ids is not None else pl.lit(False)
    )
    stops_hash = pl.col("_stops").hash().cast(pl.String)
    out = out.with_columns(
        pl.when(usable)
        .then(pl.col("shape_id"))
        .otherwise(pl.lit("stops:") + stops_hash.str.slice(0, 16))
        .alias("shape_id")
    )
    return out.with_columns(
        (pl.col("shape_id") + pl.lit("|") + stops_hash).alias("pattern_id")
    ).select("trip_id", "pattern_id", "shape_id")


def build_shapes(
    feed: Feed, patterns: pl.DataFrame, stops_xy: pl.DataFrame, epsg: int
) -> pl.DataFrame:
    """Shape points in metres, one row per point, conforming to `gtfs_shapes` (without feed_id).

    Columns: shape_id, shape_pt_sequence, shape_pt_lat/lon (degrees), shape_x_m/shape_y_m
    (metres), shape_dist_m (measured distance along the shape, metres), is_from_stops;
    plus `shape_dist_traveled` (feed units, when shapes.txt gives it).
    """
    parts = []
    shapes = feed.get("shapes")
    used = patterns["shape_id"].unique()
    if shapes is not None and shapes.height:
        sdt = (
            pl.col("shape_dist_traveled")
            if "shape_dist_traveled" in shapes.columns
            else pl.lit(None, pl.Float64)
        )
        s = shapes.filter(pl.col("shape_id").is_in(used.implode())).select(
            "shape_id",
            "shape_pt_sequence",
            "shape_pt_lat",
            "shape_pt_lon",
            sdt.alias("shape_dist_traveled"),
            pl.lit(False).alias("is_from_stops"),
        )
        parts.append(s)
    from_stops = patterns.filter(pl.col("shape_id").str.starts_with("stops:")).unique("shape_id")
    if from_stops.height:
        st = feed["stop_times"].join(from_stops.select("trip_id", "shape_id"), on="trip_id")
        st = st.join(stops_xy.select("stop_id", "stop_lat", "stop_lon"), on="stop_id", how="left")
        parts.append(
            st.sort("shape_id", "stop_sequence").select(
                "shape_id",
                pl.int_range(pl.len()).over("shape_id").cast(pl.Int32).alias("shape_pt_sequence"),
                pl.col("stop_lat").alias("shape_pt_lat"),
                pl.col("stop_lon").alias("shape_pt_lon"),
                pl.lit(None, pl.Float64).alias("shape_dist_traveled"),
                pl.lit(True).alias("is_from_stops"),
            )
        )
    if not parts:
        return pl.DataFrame(
            schema={
                "shape_id": pl.String(), "shape_pt_sequence": pl.Int32(), "shape_pt_lat": pl.Float64(),
                "shape_pt_lon": pl.Float64(), "shape_dist_traveled": pl.Float64(), "is_from_stops": pl.Boolean(),
                "shape_x_m": pl.Float64(), "shape_y_m": pl.Float64(), "shape_dist_m": pl.Float64(),
            }
        )  # fmt: skip
    pts = (
        pl.concat(parts, how="vertical_relaxed")
        .filter(pl.col("shape_pt_lat").is_not_null() & pl.col("shape_pt_lon").is_not_null())
        .sort("shape_id", "shape_pt_sequence")
    )
    x, y = to_metres(pts["shape_pt_lon"], pts["shape_pt_lat"], epsg)
    pts = pts.with_columns(pl.Series("shape_x_m", x), pl.Series("shape_y_m", y))
    step = ((pl.col("shape_x_m").diff() ** 2 + pl.col("shape_y_m").diff() ** 2).sqrt()).over(
        "shape_id"
    )
    return pts.with_columns(step.fill_null(0.0).cum_sum().over("shape_id").alias("shape_dist_m"))


def _lines(shapes_m: pl.DataFrame) -> tuple[list[str], np.ndarray]:
    """Shape ids and their LineStrings (metres), built in one vectorised call."""
    order = shapes_m.with_columns(
        pl.col("shape_id").rank("dense").cast(pl.Int64).sub(1).alias("_k")
    )
    names = order.group_by("_k").agg(pl.col("shape_id").first()).sort("_k")["shape_id"].to_list()
    counts = order.group_by("_k").len().sort("_k")["len"].to_numpy()
    # a one-point shape gets its point repeated so it is still a (degenerate) line
    coords = order.select("shape_x_m", "shape_y_m").to_numpy()
    idx = order["_k"].to_numpy()
    single = np.flatnonzero(counts < 2)
    if single.size:
        extra = order.filter(pl.col("_k").is_in(single))
        coords = np.vstack([coords, extra.select("shape_x_m", "shape_y_m").to_numpy()])
        idx = np.concatenate([idx, extra["_k"].to_numpy()])
        sort = np.argsort(idx, kind="stable")
        coords, idx = coords[sort], idx[sort]
    lines = shapely.linestrings(coords, indices=idx)
    return names, np.asarray(lines)


# Candidate passes: every shape segment within this reach of a stop is a candidate position for
# it; the reach is the stop's distance to its nearest segment times this factor plus this slack,
# so a stop a few metres from the return leg still sees the outbound leg it is served on.
_PASS_REACH_FACTOR = 2.0
_PASS_REACH_SLACK_M = 50.0
# A stop sequence that cannot be placed in order (a stop far behind on every pass) pays this per
# out-of-order stop, so an ordered placement always wins when one exists.
_OUT_OF_ORDER_COST_M = 1e7
# Passes closer to a stop than this are equally good: stop coordinates and digitised shapes are
# off by metres, so 4 m against 6 m says nothing. Among them the first call takes the earliest
# pass and every later call the earliest that keeps order, the last call the latest (a
# terminal at both ends of a loop: the trip runs the whole loop).
_GAP_NOISE_M = 15.0
_TIE_BREAK_PER_M = 1e-6
# Stop-to-shape gaps closer than this are the same gap (rounding of the projected coordinates
# is ~1e-9 m): a micrometre, far below any survey's precision.
_GAP_EQUAL_M = 1e-6


def compute_stop_positions(calls: pl.DataFrame, shapes_m: pl.DataFrame, by: str) -> pl.DataFrame:
    """`calls` with each stop's exact position along its shape, monotone in stop order.

    `calls`: one row per stop call, sorted by `by` (a trip or pattern key) and then in visiting
    order, with `shape_id`, `stop_x_m`, `stop_y_m` (metres) and optionally
    `shape_dist_traveled` (the feed's own distance, in the feed's unit).
    `shapes_m`: shape points (shape_id, shape_pt_sequence, shape_x_m, shape_y_m, shape_dist_m and
    optionally shape_dist_traveled), as `build_shapes` gives them.

    Added columns:
    - `shape_dist_m`: the stop's distance along its shape, metres; non-decreasing within each
      `by` group; null when the stop has no coordinates or the shape no points;
    - `stop_shape_gap_m`: the distance from the stop to that point of the shape, metres (what the
      GTFS validator's `stop_too_far_from_shape` measures, on the pass the stop is served on).

    When a call and its shape both give shape_dist_traveled, the position is that distance
    interpolated along the shape's own shape_dist_traveled (the agency's word). Otherwise every
    pass of the shape near the stop (each segment within reach, projected exactly, not onto a
    grid) is a candidate, and the placement is the one in stop order whose summed stop-to-shape
    distance is least (dynamic programming over each group's calls, vectorised across groups):
    a shape that passes a stop twice puts it on the pass that keeps the order, so a terminal at
    both ends of a loop, or a corridor run out and back, puts the first stop on the first pass.
    """
    n = calls.height
    seg = _segments(shapes_m)
    ids = seg["ids"]
    sid = _shape_numbers(calls["shape_id"], ids)
    ok = sid.is_not_null() & calls["stop_x_m"].is_not_null() & calls["stop_y_m"].is_not_null()
    okn = ok.to_numpy()
    sidn = sid.fill_null(0).to_numpy()
    px = calls["stop_x_m"].fill_null(0.0).to_numpy()
    py = calls["stop_y_m"].fill_null(0.0).to_numpy()
    row, along, gap = _candidates(seg, np.flatnonzero(okn), sidn, px, py)
    row, along, gap = _agency_positions(calls, shapes_m, seg, sidn, okn, row, along, gap)
    pos = np.full(n, np.nan)
    if row.size:
        group = calls[by].rle_id().to_numpy()
        chosen = _ordered_choice(group, row, along, gap, n)
        has = chosen >= 0
        pos[has] = along[chosen[has]]
    # a placement that could not keep order (a stop off every pass ahead) keeps it by the
    # running maximum, as the last resort
    d = (
        pl.DataFrame({"g": calls[by], "d": pos})
        .select(pl.col("d").fill_nan(None).cum_max().over("g"))
        .to_series()
    )
    gap_out = np.full(n, np.nan)
    dn = d.fill_null(np.nan).to_numpy()
    have = np.flatnonzero(~np.isnan(dn))
    if have.size:
        at = shapely.line_interpolate_point(seg["lines"][sidn[have]], dn[have])
        gap_out[have] = shapely.distance(at, shapely.points(px[have], py[have]))
    return calls.with_columns(
        d.alias("shape_dist_m"), pl.Series("stop_shape_gap_m", gap_out).fill_nan(None)
    )


def _shape_numbers(shape_id: pl.Series, ids: list[str]) -> pl.Series:
    """Each shape id's index in `ids` (Int64; null when absent)."""
    table = pl.DataFrame(
        {
            "shape_id": pl.Series(ids, dtype=pl.String),
            "_n": pl.Series(range(len(ids)), dtype=pl.Int64),
        }
    )
    return (
        shape_id.cast(pl.String)
        .to_frame("shape_id")
        .join(table, on="shape_id", how="left", maintain_order="left")["_n"]
    )


def _segments(shapes_m: pl.DataFrame) -> dict:
    """The shapes cut into segments (metres), each shape shifted far apart along x and indexed in
    one STRtree, so a stop's query only meets its own shape's segments.

    Keys: ids (shape ids, index = shape number), lines (their LineStrings), shape, ax, ay, bx,
    by (segment ends), d0 (shape_dist_m at the segment's start), tree."""
    pts = shapes_m.sort("shape_id", "shape_pt_sequence")
    ids, lines = _lines(pts) if pts.height else ([], np.zeros(0, dtype=object))
    num = pts.select(pl.col("shape_id").rank("dense").cast(pl.Int64).sub(1)).to_series().to_numpy()
    x, y = pts["shape_x_m"].to_numpy(), pts["shape_y_m"].to_numpy()
    dist = pts["shape_dist_m"].to_numpy()
    last = np.r_[num[1:] != num[:-1], True] if num.size else np.zeros(0, bool)
    first = np.r_[True, num[1:] != num[:-1]] if num.size else np.zeros(0, bool)
    a = np.flatnonzero(~last)  # a segment from each point to the next of its shape
    single = np.flatnonzero(first & last)  # a one-point shape is a segment of length 0
    a_all = np.r_[a, single]
    b_all = np.r_[a + 1, single]
    shift = _SHAPE_SHIFT_M * num[a_all]
    coords = (
        np.c_[np.r_[x[a_all] + shift, x[b_all] + shift], np.r_[y[a_all], y[b_all]]]
        .reshape(2, -1, 2)
        .transpose(1, 0, 2)
    )
    segs = shapely.linestrings(coords) if a_all.size else np.zeros(0, dtype=object)
    return {
        "ids": ids, "lines": lines, "shape": num[a_all], "ax": x[a_all], "ay": y[a_all],
        "bx": x[b_all], "by": y[b_all], "d0": dist[a_all], "tree": shapely.STRtree(segs),
    }  # fmt: skip


def _candidates(
    seg: dict, rows: np.ndarray, sid: np.ndarray, px: np.ndarray, py: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pass of each call's shape within reach of its stop, at the stop's exact projection
    (the local minima of the distance over consecutive segments): (row, along_m, gap_m) per
    candidate, sorted by row then along_m. Each distinct (shape, stop place) is queried once."""
    empty = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    if rows.size == 0 or seg["shape"].size == 0:
        return empty
    at = pl.DataFrame({"row": rows, "s": sid[rows], "x": px[rows], "y": py[rows]})
    places = at.select("s", "x", "y").unique(maintain_order=True).with_row_index("place")
    q_s, q_x, q_y = places["s"].to_numpy(), places["x"].to_numpy(), places["y"].to_numpy()
    q = shapely.points(q_x + _SHAPE_SHIFT_M * q_s, q_y)
    tree = seg["tree"]
    (qi, _), d0 = tree.query_nearest(q, return_distance=True, all_matches=False)
    reach = np.zeros(len(q))
    reach[qi] = d0 * _PASS_REACH_FACTOR + _PASS_REACH_SLACK_M
    hq, hs = tree.query(q, predicate="dwithin", distance=reach)
    keep = seg["shape"][hs] == q_s[hq]
    hq, hs = hq[keep], hs[keep]
    ax, ay = seg["ax"][hs], seg["ay"][hs]
    vx, vy = seg["bx"][hs] - ax, seg["by"][hs] - ay
    wx, wy = q_x[hq] - ax, q_y[hq] - ay
    length2 = vx * vx + vy * vy
    t = np.clip(
        np.divide(wx * vx + wy * vy, length2, out=np.zeros_like(vx), where=length2 > 0), 0, 1
    )
    h_along = seg["d0"][hs] + t * np.sqrt(length2)
    h_gap = np.hypot(wx - t * vx, wy - t * vy)
    order = np.lexsort((hs, hq))
    hq, hs, h_along, h_gap = hq[order], hs[order], h_along[order], h_gap[order]
    # a pass is a run of consecutive segments near the stop; within one, only the nearest
    # points (local minima of the gap) are candidates: the stop's own projection. Gaps equal
    # within _GAP_EQUAL_M are equal: a shape that runs out and back over the same points (a
    # U-turn spur) puts a stop at the same gap on both legs, and rounding in the last bits
    # of the coordinates must not keep one leg and drop the other.
    same = np.r_[False, (hq[1:] == hq[:-1]) & (hs[1:] == hs[:-1] + 1)]
    after = np.r_[same[1:], False]
    prev_gap = np.where(same, np.r_[np.inf, h_gap[:-1]], np.inf)
    next_gap = np.where(after, np.r_[h_gap[1:], np.inf], np.inf)
    local = (h_gap <= prev_gap + _GAP_EQUAL_M) & (h_gap <= next_gap + _GAP_EQUAL_M)
    hq, h_along, h_gap = hq[local], h_along[local], h_gap[local]
    # every call at a place gets that place's candidates
    place_of = at.join(places, on=["s", "x", "y"], how="left", maintain_order="left")
    p = place_of["place"].to_numpy().astype(np.int64)
    lo = np.searchsorted(hq, np.arange(len(q)), side="left")
    cnt = np.searchsorted(hq, np.arange(len(q)), side="right") - lo
    k = cnt[p]
    c_row = np.repeat(place_of["row"].to_numpy().astype(np.int64), k)
    pos = np.repeat(lo[p] - np.cumsum(k) + k, k) + np.arange(int(k.sum()))
    return c_row, h_along[pos], h_gap[pos]


def _agency_positions(
    calls: pl.DataFrame,
    shapes_m: pl.DataFrame,
    seg: dict,
    sid: np.ndarray,
    ok: np.ndarray,
    row: np.ndarray,
    along: np.ndarray,
    gap: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidates with each call that gives shape_dist_traveled on a shape that gives it too
    (non-decreasing) placed where the agency says: its only candidate, at no cost."""
    if "shape_dist_traveled" not in calls.columns or "shape_dist_traveled" not in shapes_m.columns:
        return row, along, gap
    pts = (
        shapes_m.filter(pl.col("shape_dist_traveled").is_not_null())
        .sort("shape_id", "shape_pt_sequence")
        .filter(
            (pl.col("shape_dist_traveled").diff().over("shape_id").fill_null(0) >= 0)
            .all()
            .over("shape_id")
            & (pl.len().over("shape_id") >= 2)
        )
    )
    if pts.height == 0:
        return row, along, gap
    num = _shape_numbers(pts["shape_id"], seg["ids"]).to_numpy().astype(np.int64)
    sdt = pts["shape_dist_traveled"].to_numpy().astype(float)
    # one global interpolation: each shape's feed distances offset past the previous shape's
    span = (
        pl.DataFrame({"s": num, "v": sdt})
        .group_by("s")
        .agg(pl.col("v").min().alias("lo"), pl.col("v").max().alias("hi"))
    )
    offset = np.zeros(len(seg["ids"]))
    lo = np.full(len(seg["ids"]), np.nan)
    hi = np.full(len(seg["ids"]), np.nan)
    s_n = span["s"].to_numpy()
    lo[s_n], hi[s_n] = span["lo"].to_numpy(), span["hi"].to_numpy()
    width = np.nan_to_num(hi - lo) + 1.0
    offset = np.r_[0.0, np.cumsum(width)[:-1]] - np.nan_to_num(lo)
    call_sdt = calls["shape_dist_traveled"].cast(pl.Float64).to_numpy()
    use = np.flatnonzero(ok & ~np.isnan(call_sdt) & ~np.isnan(lo[sid]))
    if use.size == 0:
        return row, along, gap
    v = np.clip(call_sdt[use], lo[sid[use]], hi[sid[use]]) + offset[sid[use]]
    agency = np.interp(v, sdt + offset[num], pts["shape_dist_m"].to_numpy())
    drop = np.isin(row, use)
    row = np.r_[row[~drop], use]
    along = np.r_[along[~drop], agency]
    gap = np.r_[gap[~drop], np.zeros(use.size)]
    order = np.lexsort((along, row))
    return row[order], along[order], gap[order]


def _ordered_choice(
    group: np.ndarray, row: np.ndarray, along: np.ndarray, gap: np.ndarray, n: int
) -> np.ndarray:
    """Index of the chosen candidate per call (-1 without candidates): per group, the sequence
    non-decreasing along the shape with the least summed gap.

    Candidates come sorted by row, then along. The dynamic programme walks the k-th call of
    every group at once (a few hundred numpy steps at most, not one per call)."""
    rows_u = np.unique(row)
    g = group[rows_u]
    new = np.r_[True, g[1:] != g[:-1]]
    start = np.maximum.accumulate(np.where(new, np.arange(rows_u.size), 0))
    rank_u = np.arange(rows_u.size) - start
    rank = np.zeros(n, np.int64)
    rank[rows_u] = rank_u
    prev = np.full(n, -1, np.int64)
    prev[rows_u[~new]] = rows_u[np.flatnonzero(~new) - 1]
    is_last = np.zeros(n, bool)
    is_last[rows_u] = np.r_[new[1:], True]
    nxt = np.full(n, -1, np.int64)
    nxt[rows_u[:-1][~new[1:]]] = rows_u[1:][~new[1:]]
    # candidates by (rank, row, along): each rank is one contiguous slice
    order = np.lexsort((along, row, rank[row]))
    c_row, c_along, c_gap = row[order], along[order], gap[order]
    c_rank = rank[c_row]
    bounds = np.searchsorted(c_rank, np.arange(int(c_rank.max()) + 2))
    # along the shape, earlier is cheaper by a hair; for a group's last call, later is
    cost = np.maximum(c_gap, _GAP_NOISE_M) + _TIE_BREAK_PER_M * np.where(
        is_last[c_row], -c_along, c_along
    )
    parent = np.full(order.size, -1, np.int64)
    scale = float(c_along.max()) + 10.0 if c_along.size else 1.0
    for k in range(1, bounds.size - 1):
        a0, a1 = bounds[k - 1], bounds[k]
        b0, b1 = bounds[k], bounds[k + 1]
        if b0 == b1:
            break
        # previous calls' candidates: prefix minimum of cost (and where it is) within each call
        p_rows = c_row[a0:a1]
        u_rows, u_first = np.unique(p_rows, return_index=True)
        pmin, parg = _prefix_min(cost[a0:a1], u_first, a0)
        u_last = np.r_[u_first[1:], p_rows.size] - 1
        dense_prev = np.searchsorted(u_rows, prev[c_row[b0:b1]])
        keys = np.searchsorted(u_rows, p_rows) * scale + c_along[a0:a1]
        j = np.searchsorted(keys, dense_prev * scale + c_along[b0:b1] + 1e-6, side="right") - 1
        ordered = j >= u_first[dense_prev]
        jj = np.where(ordered, j, u_last[dense_prev])
        cost[b0:b1] += pmin[jj] + np.where(ordered, 0.0, _OUT_OF_ORDER_COST_M)
        parent[b0:b1] = parg[jj]
    # back from each group's last call: its cheapest candidate, then the parents
    best = np.full(n, -1, np.int64)
    by_cost = np.lexsort((cost, c_row))
    firsts = by_cost[np.r_[True, c_row[by_cost][1:] != c_row[by_cost][:-1]]]
    best[c_row[firsts]] = firsts
    chosen = np.full(n, -1, np.int64)
    for k in range(bounds.size - 2, -1, -1):
        r = np.unique(c_row[bounds[k] : bounds[k + 1]])
        last = is_last[r]
        chosen[r[last]] = best[r[last]]
        follow = r[~last]
        chosen[follow] = parent[chosen[nxt[follow]]]
    has = chosen >= 0
    out = np.full(n, -1, np.int64)
    out[has] = order[chosen[has]]
    return out


def _prefix_min(cost: np.ndarray, first: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """Running minimum of `cost` within each run of candidates (runs start at `first`), and
    where it is (index + `offset`; on a tie, the later candidate).

    Runs are a call's candidates, a handful each: laid out as rows of a table padded with
    +inf, two accumulations along the rows do every run at once."""
    n = cost.size
    if n == 0:
        return cost, np.zeros(0, np.int64)
    run = np.repeat(np.arange(first.size), np.diff(np.r_[first, n]))
    pos = np.arange(n) - first[run]
    table = np.full((first.size, int(pos.max()) + 1), np.inf)
    table[run, pos] = cost
    low = np.minimum.accumulate(table, axis=1)
    at = np.full(table.shape, -1, np.int64)
    at[run, pos] = np.arange(offset, offset + n)
    at = np.maximum.accumulate(np.where(table == low, at, -1), axis=1)
    return low[run, pos], at[run, pos]


def compute_stop_distances(
    stop_times: pl.DataFrame, patterns: pl.DataFrame, stops_xy: pl.DataFrame, shapes_m: pl.DataFrame
) -> pl.DataFrame:
    """`stop_times` with `shape_dist_m` (the stop's distance along its trip's shape, metres) and
    `stop_shape_gap_m` (the stop's distance from that point of the shape, metres).

    Located once per pattern (its first trip's calls) by `compute_stop_positions`: exact,
    monotone in stop order, the agency's shape_dist_traveled when the feed gives it.
    """
    st = stop_times.join(patterns, on="trip_id", how="left").sort("trip_id", "stop_sequence")
    st = st.with_columns(pl.int_range(pl.len()).over("trip_id").alias("_pos"))
    rep = st.group_by("pattern_id").agg(pl.col("trip_id").first())
    own = ["shape_dist_traveled"] if "shape_dist_traveled" in st.columns else []
    ps = (
        st.join(rep, on=["pattern_id", "trip_id"])
        .select("pattern_id", "shape_id", "_pos", "stop_id", *own)
        .join(stops_xy.select("stop_id", "stop_x_m", "stop_y_m"), on="stop_id", how="left")
        .sort("pattern_id", "_pos")
    )
    ps = compute_stop_positions(ps, shapes_m, by="pattern_id")
    return st.join(
        ps.select("pattern_id", "_pos", "shape_dist_m", "stop_shape_gap_m"),
        on=["pattern_id", "_pos"],
        how="left",
    ).drop("_pos")


def compute_trip_distances(stop_times_m: pl.DataFrame, shapes_m: pl.DataFrame) -> pl.DataFrame:
    """One row per trip: `trip_id`, `planned_distance_m` (metres), `distance_source`.

    The agency's own shape_dist_traveled (last minus first stop) is used when the feed's unit is
    recognised and the trip's value agrees with the measured one within 10 %; else the measured
    distance along the shape between the first and last stops. `distance_source` says which:
    'shape_dist_traveled' or 'measured'.
    """
    has_sdt = "shape_dist_traveled" in stop_times_m.columns
    sdt = pl.col("shape_dist_traveled") if has_sdt else pl.lit(None, pl.Float64)
    trips = (
        stop_times_m.sort("trip_id", "stop_sequence")
        .group_by("trip_id", maintain_order=True)
        .agg(
            (pl.col("shape_dist_m").last() - pl.col("shape_dist_m").first()).alias("_measured"),
            (sdt.last() - sdt.first()).alias("_sdt"),
        )
    )
    unit = _feed_unit_m(trips)
    measured = pl.col("_measured").fill_null(0.0)
    if unit is None:
        return trips.select(
            "trip_id",
            measured.alias("planned_distance_m"),
            pl.lit("measured").alias("distance_source"),
        )
    agency = pl.col("_sdt") * unit
    agrees = (agency - measured).abs() <= _TRIP_AGREEMENT * measured
    return trips.select(
        "trip_id",
        pl.when(agrees).then(agency).otherwise(measured).alias("planned_distance_m"),
        pl.when(agrees)
        .then(pl.lit("shape_dist_traveled"))
        .otherwise(pl.lit("measured"))
        .alias("distance_source"),
    )


def _feed_unit_m(trips: pl.DataFrame) -> float | None:
    """Metres per unit of the feed's shape_dist_traveled, when it is a recognisable unit."""
    ratios = trips.filter((pl.col("_sdt") > 0) & (pl.col("_measured") > 0)).select(
        pl.col("_measured") / pl.col("_sdt")
    )
    if ratios.height == 0:
        return None
    median = float(ratios.to_series().median())  # type: ignore[arg-type]
    for unit in _KNOWN_UNITS_M:
        if abs(median - unit) <= _UNIT_TOLERANCE * unit:
            return unit
    return None
