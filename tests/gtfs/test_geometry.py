"""CRS choice, shapes in metres, stops along shapes, planned distances."""

from __future__ import annotations

import polars as pl
import pytest

from gtfs.geometry import choose_crs, to_metres, utm_of
from gtfs.read import read_feed
from gtfs.schedule import build_geometry
from tests.conftest import FIXTURES, shared_data

# Three stops 0.01 degree of longitude apart at 29.17 S: 972.8 m on the ellipsoid, times the
# UTM scale 0.99963 half a degree from zone 22's central meridian = 972.4 m; A->C = 1944.9 m.
SEGMENT_M = 972.4


@pytest.mark.parametrize(
    ("lat", "lon", "epsg"),
    [
        (-29.17, -51.52, 31982),  # Bento Goncalves: SIRGAS 2000 / UTM 22S
        (-30.03, -51.23, 31982),  # Porto Alegre
        (-23.55, -46.63, 31983),  # Sao Paulo 23S
        (-3.73, -38.52, 31984),  # Fortaleza 24S
        (38.90, -77.03, 32618),  # Washington: WGS 84 / UTM 18N
        (36.9, -116.8, 32611),
        (-34.6, -58.4, 32721),  # Buenos Aires: outside Brazil, WGS 84 / UTM 21S
    ],
)
def test_choose_crs(lat: float, lon: float, epsg: int) -> None:
    assert choose_crs(lat, lon) == epsg


def test_tiny_feed_distances() -> None:
    feed = read_feed(FIXTURES / "gtfs" / "tiny_feed")
    g = build_geometry(feed)
    assert g.epsg == 31982
    s1 = g.shapes.filter(pl.col("shape_id") == "S1").sort("shape_pt_sequence")
    assert s1["shape_dist_m"].to_list() == pytest.approx([0, SEGMENT_M, 2 * SEGMENT_M], abs=1.0)
    st = g.stop_times.filter(pl.col("trip_id") == "T3").sort("stop_sequence")
    assert st["shape_dist_m"].to_list() == pytest.approx([0, SEGMENT_M, 2 * SEGMENT_M], abs=1.0)
    trips = {r["trip_id"]: r for r in g.trips.iter_rows(named=True)}
    # T1 gives shape_dist_traveled in km (1.94) that agrees with the measured 1944.9 m
    assert trips["T1"]["distance_source"] == "shape_dist_traveled"
    assert trips["T1"]["planned_distance_m"] == pytest.approx(1940.0)
    assert trips["T2"]["distance_source"] == "measured"
    assert trips["T2"]["planned_distance_m"] == pytest.approx(2 * SEGMENT_M, abs=1.0)


def test_loop_route_last_stop_is_at_the_end_of_the_shape() -> None:
    # A loop whose last stop is the first: projection alone would put it at 0 m.
    feed = read_feed(FIXTURES / "gtfs" / "tiny_feed")
    tables = dict(feed.tables)
    tables["shapes"] = pl.DataFrame(
        {
            "shape_id": ["S1"] * 5,
            "shape_pt_lat": [-29.17, -29.17, -29.17, -29.16, -29.17],
            "shape_pt_lon": [-51.52, -51.51, -51.50, -51.51, -51.52],
            "shape_pt_sequence": [1, 2, 3, 4, 5],
            "_line": [2, 3, 4, 5, 6],
        },
        schema_overrides={"shape_pt_sequence": pl.Int32},
    )
    st = tables["stop_times"]
    loop = st.filter(pl.col("trip_id") == "T1").with_columns(
        pl.lit(None, pl.Float64).alias("shape_dist_traveled")
    )
    back = loop.filter(pl.col("stop_sequence") == 1).with_columns(
        pl.lit(4, pl.Int32).alias("stop_sequence"), pl.lit(30000, pl.Int32).alias("arrival_time"),
        pl.lit(30000, pl.Int32).alias("departure_time"),
    )  # fmt: skip
    tables["stop_times"] = pl.concat([st.filter(pl.col("trip_id") != "T1"), loop, back])
    g = build_geometry(type(feed)(source="loop", tables=tables))
    d = g.stop_times.filter(pl.col("trip_id") == "T1").sort("stop_sequence")["shape_dist_m"]
    total = g.shapes.filter(pl.col("shape_id") == "S1")["shape_dist_m"].max()
    assert d[-1] == pytest.approx(total, abs=1.0)
    assert d.is_sorted()


def test_wmata_planned_km_are_plausible() -> None:
    feed = read_feed(shared_data("avl_wmata_transittraj", "gtfs"))
    g = build_geometry(feed)
    assert g.epsg == 32618
    assert g.trips.height == 4167
    shortest_m = g.trips["planned_distance_m"].min()
    assert isinstance(shortest_m, float) and shortest_m > 1000
    # every trip's distance is its shape's length within 10 % (stops sit near the ends)
    lengths = g.shapes.group_by("shape_id").agg(pl.col("shape_dist_m").max().alias("len_m"))
    both = g.trips.join(lengths, on="shape_id")
    assert (both["planned_distance_m"] / both["len_m"]).is_between(0.9, 1.0001).all()


@pytest.mark.parametrize(
    "epsg", [*range(31978, 31986), 32601, 32611, 32618, 32630, 32660, 32701, 32723, 32760]
)
def test_to_metres_agrees_with_pyproj(epsg: int) -> None:
    """The local transverse Mercator (no pyproj at load) agrees with PROJ's `utm` within a few
    nanometres (the last bits of a 10^7 m coordinate) over the zone and 0.5 degree beyond."""
    import numpy as np
    from pyproj import Transformer

    zone, south, _ = utm_of(epsg)
    rng = np.random.default_rng(epsg)
    lon = (zone - 1) * 6 - 180 + 3 + rng.uniform(-3.5, 3.5, 5_000)
    lat = rng.uniform(-80, 0, 5_000) if south else rng.uniform(0, 84, 5_000)
    want_x, want_y = Transformer.from_crs(4326, epsg, always_xy=True).transform(lon, lat)
    x, y = to_metres(lon, lat, epsg)
    assert np.abs(x - want_x).max() < 1e-8
    assert np.abs(y - want_y).max() < 1e-8
    nan_x, nan_y = to_metres(np.array([np.nan, -45.0]), np.array([-23.5, np.nan]), 31983)
    assert np.isnan(nan_x).all() and np.isnan(nan_y).all()


def test_to_metres_refuses_other_crs() -> None:
    import numpy as np

    with pytest.raises(ValueError, match="EPSG:4326"):
        to_metres(np.array([0.0]), np.array([0.0]), 4326)


def test_u_turn_spur_stop_takes_the_first_leg_whatever_the_rounding() -> None:
    """A shape that runs out along a spur and back over the same points puts a stop beside
    the spur at the same gap on both legs: the stop is placed on the first leg (the earliest
    pass), and a change in the last bits of the coordinates does not move it to the other."""
    from gtfs.geometry import compute_stop_positions

    # east 0 -> 1000 m, out and back a 40 m spur north at x = 500, then east to 1000
    pts = [(0.0, 0.0), (500.0, 0.0), (500.0, 40.0), (500.0, 0.0), (1000.0, 0.0)]
    for wobble in (0.0, 1e-9, -1e-9):
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        ys[2] += wobble
        xs[3] += wobble
        steps = [0.0] + [
            ((xs[i] - xs[i - 1]) ** 2 + (ys[i] - ys[i - 1]) ** 2) ** 0.5 for i in range(1, 5)
        ]
        shapes = pl.DataFrame(
            {
                "shape_id": ["s"] * 5,
                "shape_pt_sequence": list(range(5)),
                "shape_x_m": xs,
                "shape_y_m": ys,
                "shape_dist_m": [sum(steps[: i + 1]) for i in range(5)],
            }
        )
        calls = pl.DataFrame(
            {
                "trip": ["t"] * 3,
                "shape_id": ["s"] * 3,
                "stop_x_m": [0.0, 505.0, 1000.0],
                "stop_y_m": [0.0, 20.0, 0.0],
            }
        )
        got = compute_stop_positions(calls, shapes, by="trip")["shape_dist_m"].to_list()
        assert got[1] == pytest.approx(520.0, abs=1e-6), wobble
