"""Geometry in metres: the feed's projected CRS, shapes, stops along shapes, planned distances.

The CRS is the UTM zone of the feed's stop centroid: SIRGAS 2000 / UTM (EPSG:31978-31985,
zones 18S-25S) inside Brazil, WGS 84 / UTM (EPSG:326xx north, 327xx south) elsewhere.

Stops are placed on their trip's shape once per *pattern* (shape_id + ordered stop ids), not per
trip: every trip of a pattern shares the distances. When a trip has no usable shape (shapes.txt
missing, no shape_id, a shape of fewer than two points) its shape is the polyline through its
stops, with id ``stops:<pattern hash>`` and `is_from_stops` true.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import polars as pl
import pyproj
import shapely
import shapely.ops

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


def choose_crs(lat: float, lon: float) -> int:
    """EPSG code of the metric CRS for a network centred at (lat, lon) degrees."""
    zone = int((lon + 180.0) // 6.0) + 1
    zone = min(max(zone, 1), 60)
    in_brazil = _BRAZIL_LON[0] <= lon <= _BRAZIL_LON[1] and _BRAZIL_LAT[0] <= lat <= _BRAZIL_LAT[1]
    if in_brazil and lat < 0 and zone in _SIRGAS_ZONES:
        return _SIRGAS_UTM_SOUTH_BASE + zone
    return (32700 if lat < 0 else 32600) + zone


def choose_feed_crs(feed: Feed) -> int:
    """The metric CRS of a feed, from the centroid of its stops that have coordinates."""
    stops = feed["stops"].filter(
        pl.col("stop_lat").is_between(-90, 90) & pl.col("stop_lon").is_between(-180, 180)
    )
    st = feed.get("stop_times")
    if st is not None:
        used = stops.filter(pl.col("stop_id").is_in(st["stop_id"].unique().implode()))
        stops = used if used.height else stops
    if stops.height == 0:
        return choose_crs(0.0, 0.0)
    return choose_crs(float(stops["stop_lat"].mean()), float(stops["stop_lon"].mean()))  # type: ignore[arg-type]


@cache
def _transformer(epsg: int) -> pyproj.Transformer:
    return pyproj.Transformer.from_crs(4326, epsg, always_xy=True)


def to_metres(
    lon: pl.Series | np.ndarray, lat: pl.Series | np.ndarray, epsg: int
) -> tuple[np.ndarray, np.ndarray]:
    """Project WGS 84 degrees to (x, y) metres in `epsg`."""
    x, y = _transformer(epsg).transform(np.asarray(lon, dtype=float), np.asarray(lat, dtype=float))
    return np.asarray(x), np.asarray(y)


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


def compute_stop_distances(
    stop_times: pl.DataFrame, patterns: pl.DataFrame, stops_xy: pl.DataFrame, shapes_m: pl.DataFrame
) -> pl.DataFrame:
    """`stop_times` with `shape_dist_m`: the stop's distance along its trip's shape, metres.

    Computed once per pattern with shapely's vectorised `line_locate_point`, then made
    monotone along the stop sequence: a stop that projects before the previous one (loops,
    a terminal at both ends) is located again on the rest of the shape after the previous stop.
    """
    st = stop_times.join(patterns, on="trip_id", how="left").sort("trip_id", "stop_sequence")
    st = st.with_columns(pl.int_range(pl.len()).over("trip_id").alias("_pos"))
    rep = st.group_by("pattern_id").agg(pl.col("trip_id").first())
    ps = (
        st.join(rep, on=["pattern_id", "trip_id"])
        .select("pattern_id", "shape_id", "_pos", "stop_id")
        .join(stops_xy.select("stop_id", "stop_x_m", "stop_y_m"), on="stop_id", how="left")
        .sort("pattern_id", "_pos")
    )
    names, lines = _lines(shapes_m)
    line_of = pl.DataFrame({"shape_id": names, "_li": np.arange(len(names))})
    ps = ps.join(line_of, on="shape_id", how="left")
    ok = ps["_li"].is_not_null() & ps["stop_x_m"].is_not_null()
    li = ps["_li"].fill_null(0).to_numpy()
    pts = shapely.points(
        ps["stop_x_m"].fill_null(0.0).to_numpy(), ps["stop_y_m"].fill_null(0.0).to_numpy()
    )
    geom = lines[li]
    d = shapely.line_locate_point(geom, pts)
    d = np.where(ok.to_numpy(), d, np.nan)
    d = _make_monotone(ps["pattern_id"].to_numpy(), d, geom, pts)
    ps = ps.with_columns(pl.Series("shape_dist_m", d).fill_nan(None))
    return st.join(
        ps.select("pattern_id", "_pos", "shape_dist_m"), on=["pattern_id", "_pos"], how="left"
    ).drop("_pos")


def _make_monotone(
    pattern: np.ndarray, d: np.ndarray, geom: np.ndarray, pts: np.ndarray
) -> np.ndarray:
    """Relocate the (rare) stops that fall behind the previous stop of their pattern.

    Each offender is located on the part of the shape after the previous stop; this touches only
    the offending rows, one vectorised pass per round (a few rounds for long loops).
    """
    d = d.copy()
    for _ in range(8):
        same = np.r_[False, pattern[1:] == pattern[:-1]]
        prev = np.r_[np.nan, d[:-1]]
        bad = np.flatnonzero(same & (d < prev - 1e-6))
        if not bad.size:
            break
        for i in bad:
            start = prev[i]
            rest = shapely.ops.substring(geom[i], start, shapely.length(geom[i]))
            d[i] = start + shapely.line_locate_point(rest, pts[i]) if rest.length > 0 else start
    # anything still behind (e.g. a stop far off the shape) keeps order by taking the running max
    out = pl.DataFrame({"p": pattern, "d": d}).select(
        pl.col("d").fill_nan(None).cum_max().over("p")
    )
    return out["d"].fill_null(np.nan).to_numpy()


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
