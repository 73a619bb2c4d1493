"""Geography of a feed: misplaced points refused or reported, and the network's robust extent.

Each bad feed under tests/fixtures/bad/gtfs is the tiny Bento Gonçalves feed (stops A, B, C
972 m apart on latitude 29.17 S) with one thing wrong, named after the finding it must produce.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gtfs.errors import GtfsIssue, errors_of
from gtfs.geography import (
    GeographyLimits,
    check_stops_on_shapes,
    compute_ground_xy,
    compute_nearest_other_m,
    compute_robust_extent,
    compute_stop_groups,
)
from gtfs.read import read_feed
from gtfs.schedule import build_geometry
from gtfs.validate import validate_feed
from pontual.cli import main
from tests.conftest import FIXTURES, shared_data

BAD = FIXTURES / "bad" / "gtfs"


def _issues(path: Path, limits: GeographyLimits | None = None) -> list[GtfsIssue]:
    limits = limits or GeographyLimits()
    feed = read_feed(path)
    issues = validate_feed(feed, limits)
    if not errors_of(issues):
        issues += check_stops_on_shapes(build_geometry(feed).stop_times, feed, limits)
    return issues


# failure -> (severity, file, line, column, text it must contain)
CASES = {
    # B moved 0.002075 degrees north: 230 m from shape S1 on the ellipsoid (canonical: 100 m)
    "stop_too_far_from_shape": ("warning", "stop_times.txt", 3, "stop_id", "stop 'B' is 230 m from shape 'S1' of trip 'T1' (more than 100 m)"),
    "stop_lat_lon_swapped": ("warning", "stops.txt", 4, "stop_lat", "stop 'C' lies far from the network, and inside it once stop_lat and stop_lon are swapped"),
    # C moved 0.46 degrees east: 45.6 km from B on the sphere
    "stop_far_from_other_stops": ("warning", "stops.txt", 4, "stop_lat", "stop 'C' is 45.6 km from the nearest other stop of the feed (more than 10.0 km)"),
    "stop_near_origin": ("error", "stops.txt", 4, "stop_lat", "stop 'C' is near (0,0)"),
    "stop_near_pole": ("error", "stops.txt", 4, "stop_lat", "stop 'C' is near a pole"),
    "shape_point_near_origin": ("error", "shapes.txt", 3, "shape_pt_lat", "a point of shape 'S1' is near (0,0)"),
    # two groups of two stops, Bento Gonçalves and São Paulo: 487 km east-west, 625 km north-south
    "network_wider_than_a_city": ("warning", "stops.txt", None, "stop_lat", "the used stops span 487 km × 625 km (more than 200 km)"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_geography_is_named(case: str) -> None:
    severity, file, line, column, text = CASES[case]
    found = [i for i in _issues(BAD / case) if text in i.message]
    assert [(i.severity, i.file, i.line, i.column) for i in found] == [
        (severity, file, line, column)
    ], _issues(BAD / case)


def test_the_tiny_feed_has_no_geography_finding() -> None:
    messages = [i.message for i in _issues(FIXTURES / "gtfs" / "tiny_feed")]
    assert messages == [
        "2 trip(s) without shape_id (first here); their shape is built from the stop sequence"
    ]


def test_stop_shape_distance_is_an_option() -> None:
    # 230 m is accepted under a 250 m limit
    found = _issues(BAD / "stop_too_far_from_shape", GeographyLimits(stop_shape_max_m=250.0))
    assert not [i for i in found if "from shape" in i.message]


def test_swapped_stop_is_left_out_of_the_extent_and_the_crs() -> None:
    feed = read_feed(BAD / "stop_lat_lon_swapped")
    assert build_geometry(feed).epsg == 31982  # UTM 22S, as the tiny feed: the median decides
    stops = feed["stops"]
    box = compute_robust_extent(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy())
    assert box == pytest.approx((-29.17, -51.52, -29.17, -51.51))


def test_stop_groups_on_a_city_with_a_satellite_town_and_a_stray_stop() -> None:
    # 400 stops on a 20 km city grid, 10 in a town 25 km away along a line whose stops are
    # 2 km apart (kept: linked), and one stop 300 km away (left out)
    city_lat, city_lon = np.meshgrid(
        np.linspace(-29.25, -29.07, 20), np.linspace(-51.62, -51.42, 20)
    )
    line_lat = np.full(6, -29.07) + np.arange(1, 7) * 0.018
    line_lon = np.full(6, -51.42)
    town_lat, town_lon = np.full(10, -28.95) + np.arange(10) * 0.002, np.full(10, -51.42)
    lat = np.r_[city_lat.ravel(), line_lat, town_lat, -26.5]
    lon = np.r_[city_lon.ravel(), line_lon, town_lon, -51.42]
    groups = compute_stop_groups(lat, lon)
    assert groups["is_network"].to_list() == [True] * 416 + [False]
    assert groups["nearest_other_m"][-1] == pytest.approx(270_000, rel=0.01)
    box = compute_robust_extent(lat, lon)
    assert box == pytest.approx((-29.25, -51.62, -28.932, -51.42))


def test_cli_validate_reports_a_stop_far_from_its_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the issues table on one line each
    base = ["--store", str(tmp_path / "s.duckdb"), "gtfs", "validate"]
    assert main([*base, str(BAD / "stop_too_far_from_shape")]) == 0
    assert "a parada 'B' está a 230 m do traçado 'S1'" in capsys.readouterr().err
    assert main([*base, str(BAD / "stop_too_far_from_shape"), "--stop-shape-max-m", "250"]) == 0
    assert "do traçado" not in capsys.readouterr().err
    assert main([*base, str(BAD / "stop_near_pole")]) == 2


def _kd_tree_nearest(xyz: np.ndarray) -> np.ndarray:
    from scipy.spatial import cKDTree

    return cKDTree(xyz).query(xyz, k=2)[0][:, 1]


def test_nearest_other_stop_equals_a_kd_tree() -> None:
    """The cube search settles every stop at the distance a k-d tree finds: a dense city with
    strays across the globe and repeated points, two antipodal-ish points, one point."""
    rng = np.random.default_rng(7)
    city = (rng.normal(-23.5, 0.05, 3000), rng.normal(-46.6, 0.05, 3000))
    strays = (rng.uniform(-60, 60, 40), rng.uniform(-180, 180, 40))
    cases = [
        (np.r_[city[0], strays[0], city[0][:5]], np.r_[city[1], strays[1], city[1][:5]]),
        (np.array([-29.17, 35.0]), np.array([-51.52, 139.0])),
    ]
    for lat, lon in cases:
        xyz = np.c_[compute_ground_xy(lat, lon)]
        assert np.array_equal(compute_nearest_other_m(xyz), _kd_tree_nearest(xyz))
    assert compute_nearest_other_m(np.zeros((1, 3))).tolist() == [np.inf]


def test_nearest_other_stop_on_the_sao_paulo_stops() -> None:
    stops = pl.read_csv(shared_data("gtfs_sptrans_20260131_partial", "stops.txt"))
    xyz = np.c_[compute_ground_xy(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy())]
    assert len(xyz) == 22_080
    assert np.array_equal(compute_nearest_other_m(xyz), _kd_tree_nearest(xyz))
