"""Where a feed's points lie: plausibility checks of its geography and its robust extent.

A misplaced stop (latitude and longitude swapped, a point at 0,0 or near a pole, a stop typed
in another town) used to load without a word and stretch the network's box, which switched the
AVL position check off for the whole city. The checks here are the canonical GTFS validator's
where it has one (`point_near_origin`, `point_near_pole`, `stop_too_far_from_shape`, same
thresholds) plus three of a city network: a stop far from every other stop, a stop whose
coordinates read right once swapped, and a network wider than a city.

The robust extent is the box of the stops that belong to the network: stops are linked when
they lie within `network_link_m` of each other, and the linked groups holding a share of the
stops (the largest always) make the network; a lone stop far from the rest is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from gtfs.errors import ERROR, WARNING, GtfsIssue
from gtfs.read import LINE, Feed, rows_issues

# Mean radius of the Earth (IUGG), metres: distances here decide warnings, not planned km.
_EARTH_RADIUS_M = 6_371_008.8
# Cells (x, y) of the stop groups are keyed x * _CELL_KEY + y (|y| far below half of it).
_CELL_KEY = 1 << 32
# Nearest-neighbour search: first cube side, metres, and its growth between passes (a pass
# looks for the nearest other stop in the 27 cubes around each stop not yet settled).
_NEAREST_FIRST_CUBE_M = 250.0
_NEAREST_CUBE_GROWTH = 2.0


@dataclass(frozen=True)
class GeographyLimits:
    """Thresholds of the geography checks (operational defaults, not law; metres and degrees)."""

    stop_shape_max_m: float = 100.0
    """A stop farther than this from its trip's shape is reported (the canonical GTFS
    validator's `stop_too_far_from_shape` threshold)."""
    stop_isolated_min_m: float = 10_000.0
    """A stop with no other stop of the feed within this distance is reported when the schedule
    cannot explain it either (reaching it from the previous stop, or the next stop from it, needs
    more than `reach_max_speed_m_s`). Bus stops lie a few hundred metres apart, rural ones a few
    km; an intercity hop of 58 km in an hour (the GTFS demo feed) is not reported."""
    reach_max_speed_m_s: float = 33.0
    """Straight-line speed between consecutive timed stops above which a stop is unreachable in
    its schedule (about 120 km/h), with `reach_slack_m` for times rounded to the minute."""
    reach_slack_m: float = 2_000.0
    network_link_m: float = 100_000.0
    """Stops within this distance of each other belong to one group of the network's extent: a
    stop with latitude and longitude swapped lies thousands of km away, a typo of one degree
    111 km, an intercity line's stops tens of km apart."""
    network_group_min_share: float = 0.01
    """A group of linked stops is part of the network (and of its extent) when it holds at least
    this share of the stops (and two stops); the largest group always is."""
    city_extent_max_m: float = 200_000.0
    """A network whose stops span more than this (either side of its box) is reported: a city,
    even a metropolitan region, is smaller."""
    origin_max_deg: float = 1.0
    """A point within this many degrees of both the equator and the prime meridian is 'near
    (0,0)': a device or export that wrote zeros (canonical validator: point_near_origin)."""
    pole_min_abs_lat: float = 89.0
    """A point at or beyond this latitude is 'near a pole' (canonical validator: point_near_pole)."""


def compute_ground_xy(
    lat: np.ndarray, lon: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points on the unit sphere scaled to metres (x, y, z): straight-line distances between
    them are chord lengths, within 0.1 % of the ground distance below 100 km — enough to judge
    distances of kilometres anywhere, without choosing a projection."""
    la, lo = np.radians(lat), np.radians(lon)
    c = np.cos(la)
    return (
        _EARTH_RADIUS_M * c * np.cos(lo),
        _EARTH_RADIUS_M * c * np.sin(lo),
        _EARTH_RADIUS_M * np.sin(la),
    )


def compute_stop_groups(
    lat: np.ndarray, lon: np.ndarray, limits: GeographyLimits = GeographyLimits()
) -> pl.DataFrame:
    """One row per point (in input order): `nearest_other_m` (metres to the nearest other point;
    null when alone), `group_n` (how many points its linked group holds) and `is_network` (the
    group belongs to the network: the largest group, or one holding at least
    `network_group_min_share` of the points and two of them)."""
    n = lat.size
    if n == 0:
        return pl.DataFrame(
            schema={"nearest_other_m": pl.Float64, "group_n": pl.Int64, "is_network": pl.Boolean}
        )
    nearest = compute_nearest_other_m(np.c_[compute_ground_xy(lat, lon)])
    # groups: stops bucketed in square cells of the link distance, neighbouring cells linked (a
    # city's stops are millions of pairs within 10 km, but a few hundred cells); two stops
    # within the link distance always share a group, two in one group may be up to 2.9 times
    # farther apart
    r = limits.network_link_m
    per_deg = math.radians(1.0) * _EARTH_RADIUS_M
    lat0, lon0 = float(np.median(lat)), float(np.median(lon))
    cx = np.floor((lon - lon0) * per_deg * math.cos(math.radians(lat0)) / r).astype(np.int64)
    cy = np.floor((lat - lat0) * per_deg / r).astype(np.int64)
    keys, cell = np.unique(cx * _CELL_KEY + cy, return_inverse=True)
    ky = keys % _CELL_KEY
    ky = np.where(ky > _CELL_KEY // 2, ky - _CELL_KEY, ky)
    kx = (keys - ky) // _CELL_KEY
    src, dst = [], []
    for ox in (-1, 0, 1):
        for oy in (-1, 0, 1):
            probe = (kx + ox) * _CELL_KEY + (ky + oy)
            at = np.clip(np.searchsorted(keys, probe), 0, keys.size - 1)
            hit = keys[at] == probe
            src.append(np.flatnonzero(hit))
            dst.append(at[hit])
    a, b = np.concatenate(src), np.concatenate(dst)
    label = compute_components(keys.size, a, b)[cell]
    size = np.bincount(label)
    group_n = size[label]
    keep = (size >= max(2.0, limits.network_group_min_share * n)) | (size == size.max())
    return pl.DataFrame(
        {
            "nearest_other_m": pl.Series(np.where(np.isinf(nearest), np.nan, nearest)).fill_nan(
                None
            ),
            "group_n": group_n.astype(np.int64),
            "is_network": keep[label],
        }
    )


def compute_nearest_other_m(xyz: np.ndarray) -> np.ndarray:
    """For each point (rows of x, y, z metres), the straight-line distance to the nearest other
    point; inf for a lone point. Exact, like a k-d tree query.

    A pass buckets the points in cubes and looks for the nearest other point of each unsettled
    point in the 27 cubes around it: one found within the cube side is the nearest (any closer
    point lies in those cubes); the others go to the next pass, with cubes
    `_NEAREST_CUBE_GROWTH` times larger, until a cube is wider than the Earth. (This replaced
    scipy's cKDTree: importing scipy cost a whole `pontual gtfs load` of a city feed as much as
    the load itself.)
    """
    n = len(xyz)
    best = np.full(n, np.inf)
    if n < 2:
        return best
    offsets = pl.DataFrame(
        [(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)],
        schema=["ox", "oy", "oz"],
        orient="row",
    )
    todo = np.arange(n)
    side = _NEAREST_FIRST_CUBE_M
    while todo.size:
        cube = np.floor(xyz / side).astype(np.int64)
        points = pl.DataFrame(
            {"j": np.arange(n), "cx": cube[:, 0], "cy": cube[:, 1], "cz": cube[:, 2]}
        )
        pairs = (
            points[todo]
            .rename({"j": "i"})
            .join(offsets, how="cross")
            .select(
                "i",
                pl.col("cx") + pl.col("ox"),
                pl.col("cy") + pl.col("oy"),
                pl.col("cz") + pl.col("oz"),
            )
            .join(points, on=["cx", "cy", "cz"])
            .filter(pl.col("i") != pl.col("j"))
        )
        i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
        diff = xyz[i] - xyz[j]
        found = (
            pl.DataFrame({"i": i, "d": np.sqrt((diff * diff).sum(axis=1))})
            .group_by("i")
            .agg(pl.col("d").min())
        )
        # beyond the Earth's diameter the cubes around a point hold every point
        if side < 2 * _EARTH_RADIUS_M:
            found = found.filter(pl.col("d") <= side)
        settled = found["i"].to_numpy()
        best[settled] = found["d"].to_numpy()
        todo = np.setdiff1d(todo, settled, assume_unique=True)
        side *= _NEAREST_CUBE_GROWTH
    return best


def compute_components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The connected component of each of `n` nodes linked by the undirected edges a[k]-b[k],
    as labels 0..k-1: the smallest node id reachable, spread along the edges (each round also
    jumps to the label's own label) until nothing changes."""
    label = np.arange(n)
    while True:
        low = np.minimum(label[a], label[b])
        new = label.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        new = new[new]
        if np.array_equal(new, label):
            return np.unique(label, return_inverse=True)[1].reshape(-1)
        label = new


def compute_robust_extent(
    lat: np.ndarray, lon: np.ndarray, limits: GeographyLimits = GeographyLimits()
) -> tuple[float, float, float, float] | None:
    """The box (min lat, min lon, max lat, max lon, degrees) of the points that make the network
    (`compute_stop_groups`), or None without points. Points at (0,0) or out of range are not
    points."""
    lat, lon = np.asarray(lat, float), np.asarray(lon, float)
    ok = (
        np.isfinite(lat)
        & np.isfinite(lon)
        & (np.abs(lat) <= 90)
        & (np.abs(lon) <= 180)
        & ~_near_origin(lat, lon, limits)
    )
    lat, lon = lat[ok], lon[ok]
    if lat.size == 0:
        return None
    net = compute_stop_groups(lat, lon, limits)["is_network"].to_numpy()
    return (
        float(lat[net].min()),
        float(lon[net].min()),
        float(lat[net].max()),
        float(lon[net].max()),
    )


def _near_origin(lat: np.ndarray, lon: np.ndarray, limits: GeographyLimits) -> np.ndarray:
    return (np.abs(lat) < limits.origin_max_deg) & (np.abs(lon) < limits.origin_max_deg)


def _span_m(min_lat: float, min_lon: float, max_lat: float, max_lon: float) -> tuple[float, float]:
    """Width (east-west, at the box's middle latitude) and height of a box, metres."""
    per_deg = math.radians(1.0) * _EARTH_RADIUS_M
    mid = math.radians((min_lat + max_lat) / 2)
    return (max_lon - min_lon) * per_deg * math.cos(mid), (max_lat - min_lat) * per_deg


def check_geography(feed: Feed, limits: GeographyLimits = GeographyLimits()) -> list[GtfsIssue]:
    """Points near (0,0) or a pole (errors for used stops and shape points, as the canonical
    validator; warnings for unused stops), stops far from every other stop, stops whose
    coordinates look swapped, and a network wider than a city (warnings)."""
    out: list[GtfsIssue] = []
    stops = feed.get("stops")
    if stops is None or not {"stop_id", "stop_lat", "stop_lon"} <= set(stops.columns):
        return out
    st = feed.get("stop_times")
    used_ids = (
        st["stop_id"].unique() if st is not None and "stop_id" in st.columns else stops["stop_id"]
    )
    s = stops.filter(
        pl.col("stop_lat").is_between(-90, 90) & pl.col("stop_lon").is_between(-180, 180)
    ).with_columns(pl.col("stop_id").is_in(used_ids.implode()).alias("_used"))
    origin = (pl.col("stop_lat").abs() < limits.origin_max_deg) & (
        pl.col("stop_lon").abs() < limits.origin_max_deg
    )
    exactly_zero = (pl.col("stop_lat") == 0) & (pl.col("stop_lon") == 0)  # refused elsewhere
    pole = pl.col("stop_lat").abs() >= limits.pole_min_abs_lat
    for flag, what in ((origin & ~exactly_zero, "near (0,0)"), (pole, "near a pole")):
        msg = f"stop '{{value}}' is {what}: coordinates a device or export wrote by mistake"
        out += rows_issues(
            s.filter(flag & pl.col("_used")), ERROR, "stops.txt", "stop_lat", msg, "stop_id"
        )
        out += rows_issues(
            s.filter(flag & ~pl.col("_used")), WARNING, "stops.txt", "stop_lat", msg, "stop_id"
        )
    out += _check_shape_points(feed, limits)
    placed = s.filter(pl.col("_used") & ~origin & ~pole).sort(LINE)
    if placed.height < 2:
        return out
    lat, lon = placed["stop_lat"].to_numpy(), placed["stop_lon"].to_numpy()
    groups = compute_stop_groups(lat, lon, limits)
    placed = pl.concat([placed, groups], how="horizontal")
    net = placed.filter(pl.col("is_network"))
    extent = (
        float(net["stop_lat"].min()),  # type: ignore[arg-type]
        float(net["stop_lon"].min()),  # type: ignore[arg-type]
        float(net["stop_lat"].max()),  # type: ignore[arg-type]
        float(net["stop_lon"].max()),  # type: ignore[arg-type]
    )
    # a lone stop that lands inside the network once its latitude and longitude are swapped
    margin = limits.network_link_m / (math.radians(1.0) * _EARTH_RADIUS_M)
    swapped = (
        ~pl.col("is_network")
        & pl.col("stop_lon").is_between(extent[0] - margin, extent[2] + margin)
        & pl.col("stop_lat").is_between(extent[1] - margin, extent[3] + margin)
    )
    out += rows_issues(
        placed.filter(swapped),
        WARNING,
        "stops.txt",
        "stop_lat",
        "stop '{value}' lies far from the network, and inside it once stop_lat and stop_lon are "
        "swapped: latitude and longitude look swapped",
        "stop_id",
    )
    lone = placed.filter(~swapped & (pl.col("nearest_other_m") > limits.stop_isolated_min_m))
    far = lone.filter(
        pl.col("stop_id").is_in(_unreachable_stops(feed, lone["stop_id"], limits).implode())
    ).with_columns(
        pl.format(
            "stop '{}' is {} km from the nearest other stop of the feed (more than {} km), "
            "too far to reach in its trips' times: misplaced?",
            "stop_id",
            (pl.col("nearest_other_m") / 1000).round(1),
            pl.lit(round(limits.stop_isolated_min_m / 1000, 1)),
        ).alias("_msg")
    )
    out += rows_issues(far, WARNING, "stops.txt", "stop_lat", "{value}", "_msg")
    width, height = _span_m(
        float(placed["stop_lat"].min()),  # type: ignore[arg-type]
        float(placed["stop_lon"].min()),  # type: ignore[arg-type]
        float(placed["stop_lat"].max()),  # type: ignore[arg-type]
        float(placed["stop_lon"].max()),  # type: ignore[arg-type]
    )
    if max(width, height) > limits.city_extent_max_m:
        out.append(
            GtfsIssue(
                WARNING,
                "stops.txt",
                None,
                "stop_lat",
                f"the used stops span {width / 1000:.0f} km × {height / 1000:.0f} km (more than "
                f"{limits.city_extent_max_m / 1000:.0f} km): not one city's network; the "
                f"network's extent (AVL position check) leaves out "
                f"{placed.height - net.height} stop(s) far from the rest",
            )
        )
    return out


def _unreachable_stops(feed: Feed, stop_ids: pl.Series, limits: GeographyLimits) -> pl.Series:
    """Those of `stop_ids` that some trip reaches from its previous timed stop, or leaves for
    its next one, faster than `reach_max_speed_m_s` (plus `reach_slack_m`) in a straight line."""
    st, stops = feed.get("stop_times"), feed["stops"]
    need = {"trip_id", "stop_sequence", "stop_id", "arrival_time", "departure_time"}
    if stop_ids.len() == 0 or st is None or not need <= set(st.columns):
        return stop_ids.head(0)
    # only the trips that call at the lone stops
    trips = st.filter(pl.col("stop_id").is_in(stop_ids.implode()))["trip_id"].unique()
    calls = (
        st.filter(pl.col("trip_id").is_in(trips.implode()))
        .filter(pl.col("arrival_time").is_not_null() | pl.col("departure_time").is_not_null())
        .join(stops.select("stop_id", "stop_lat", "stop_lon"), on="stop_id", how="left")
        .sort("trip_id", "stop_sequence")
    )
    x, y, z = compute_ground_xy(calls["stop_lat"].to_numpy(), calls["stop_lon"].to_numpy())
    prev = pl.col("_x").shift(1).over("trip_id")
    hop = (
        (pl.col("_x") - prev).pow(2)
        + (pl.col("_y") - pl.col("_y").shift(1).over("trip_id")).pow(2)
        + (pl.col("_z") - pl.col("_z").shift(1).over("trip_id")).pow(2)
    ).sqrt()
    left = pl.coalesce("departure_time", "arrival_time").shift(1).over("trip_id")
    took = (pl.coalesce("arrival_time", "departure_time") - left).cast(pl.Float64).clip(0)
    fast = calls.with_columns(pl.Series("_x", x), pl.Series("_y", y), pl.Series("_z", z)).select(
        "stop_id",
        pl.col("stop_id").shift(1).over("trip_id").alias("_from"),
        (hop > took * limits.reach_max_speed_m_s + limits.reach_slack_m).alias("_fast"),
    )
    fast = fast.filter(pl.col("_fast"))
    ends = pl.concat([fast["stop_id"], fast["_from"].cast(pl.String)])
    return stop_ids.filter(stop_ids.is_in(ends.implode()))


def _check_shape_points(feed: Feed, limits: GeographyLimits) -> list[GtfsIssue]:
    shapes = feed.get("shapes")
    if shapes is None or not {"shape_pt_lat", "shape_pt_lon"} <= set(shapes.columns):
        return []
    lat, lon = pl.col("shape_pt_lat"), pl.col("shape_pt_lon")
    out: list[GtfsIssue] = []
    origin = (lat.abs() < limits.origin_max_deg) & (lon.abs() < limits.origin_max_deg)
    for flag, what in (
        (origin, "near (0,0)"),
        (lat.abs() >= limits.pole_min_abs_lat, "near a pole"),
    ):
        bad = shapes.filter(flag & lat.is_not_null() & lon.is_not_null()).sort(LINE)
        first = bad.unique("shape_id", keep="first", maintain_order=True)
        out += rows_issues(
            first,
            ERROR,
            "shapes.txt",
            "shape_pt_lat",
            f"a point of shape '{{value}}' is {what}: coordinates written by mistake",
            "shape_id",
        )
    return out


def check_stops_on_shapes(
    stop_times_m: pl.DataFrame, feed: Feed, limits: GeographyLimits = GeographyLimits()
) -> list[GtfsIssue]:
    """Stops farther than `stop_shape_max_m` from their trip's shape (warnings, one per stop and
    shape, at the first stop_times line that calls there). `stop_times_m`: a feed geometry's
    stop times (`shape_id`, `stop_shape_gap_m`; `gtfs.schedule.build_geometry`); shapes built
    from the stops themselves are not judged."""
    if "stop_shape_gap_m" not in stop_times_m.columns:
        return []
    far = (
        stop_times_m.filter(
            (pl.col("stop_shape_gap_m") > limits.stop_shape_max_m)
            & ~pl.col("shape_id").str.starts_with("stops:")
        )
        .sort(LINE)
        .unique(["stop_id", "shape_id"], keep="first", maintain_order=True)
    )
    msg = pl.format(
        "stop '{}' is {} m from shape '{}' of trip '{}' (more than {} m): the stop or the shape "
        "is misplaced",
        "stop_id",
        pl.col("stop_shape_gap_m").round(0).cast(pl.Int64),
        "shape_id",
        "trip_id",
        pl.lit(f"{limits.stop_shape_max_m:g}"),
    )
    return rows_issues(
        far.with_columns(msg.alias("_msg")), WARNING, "stop_times.txt", "stop_id", "{value}", "_msg"
    )
