"""CRS choice, shapes in metres, stops along shapes, planned distances."""

from __future__ import annotations

import polars as pl
import pytest

from gtfs.geometry import choose_crs
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
