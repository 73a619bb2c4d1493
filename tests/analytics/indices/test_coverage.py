"""Stop coverage (CGS art. 4): 400 m urban, 1 500 m rural, × the walking factor."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from pyproj import Transformer

from analytics.indices.coverage import (
    compute_coverage_indicators,
    compute_region_coverage,
    match_nearest_stop,
    read_population,
)
from core.errors import InputError
from core.periods import parse_period
from core.profile import load_profile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "indices"
CGS = load_profile("campina-grande-do-sul-2003")
EPSG = 31982


def test_coverage_with_the_walking_factor() -> None:
    to_m = Transformer.from_crs(4326, EPSG, always_xy=True)
    to_ll = Transformer.from_crs(EPSG, 4326, always_xy=True)
    x0, y0 = to_m.transform(-51.52, -29.17)
    # straight line × 1.3: 300 m -> 390 (in), 310 m -> 403 (out); rural 1 100 -> 1 430 (in),
    # 1 200 -> 1 560 (out)
    pts = [(300, "urban", 10.0), (310, "urban", 5.0), (1100, "rural", 7.0), (1200, "rural", 3.0)]
    lon, lat = to_ll.transform([x0 + d for d, _, _ in pts], [y0] * len(pts))
    pop = pl.DataFrame(
        {"lat": lat, "lon": lon, "people": [p for *_, p in pts], "area": [a for _, a, _ in pts]}
    )
    stops = pl.DataFrame({"stop_x_m": [x0], "stop_y_m": [y0]})
    covered = match_nearest_stop(pop, stops, EPSG, CGS)
    assert covered["is_covered"].to_list() == [True, False, True, False]
    ind = compute_coverage_indicators(covered, CGS, parse_period("2026"))
    v = {r["indicator"]: r["value"] for r in ind.iter_rows(named=True)}
    assert v["coverage_urban"] == pytest.approx(10 / 15)
    assert v["coverage_rural"] == pytest.approx(7 / 10)
    assert v["coverage_total"] == pytest.approx(17 / 25)


def test_population_without_area_column_is_refused() -> None:
    with pytest.raises(InputError) as err:
        read_population(FIXTURES / "population_missing_area.csv")
    assert "area" in err.value.what


def test_population_with_a_bad_area_names_the_line() -> None:
    with pytest.raises(InputError) as err:
        read_population(FIXTURES / "population_bad_area_line_3.csv")
    assert "'suburban'" in err.value.what
    assert err.value.where is not None and "line 3, field area" in err.value.where


def test_a_region_is_served_by_its_mean_walk_from_home_and_work() -> None:
    # CGS art. 4: "deslocamento médio" of the region's population, from home or workplace.
    # Region N (urban): 10 people at 390 m and 10 at 403 m -> mean 396.5 <= 400: served,
    # although half of them are beyond 400 m (the share metric would say 50 %).
    # Region S (urban): homes at 390 m, but its workplaces at 520 m: not served.
    to_m = Transformer.from_crs(4326, EPSG, always_xy=True)
    to_ll = Transformer.from_crs(EPSG, 4326, always_xy=True)
    x0, y0 = to_m.transform(-49.05, -25.30)
    pts = [
        (300, "N", "home", 10.0),
        (310, "N", "home", 10.0),
        (300, "S", "home", 10.0),
        (400, "S", "work", 10.0),
    ]
    lon, lat = to_ll.transform([x0 + d for d, *_ in pts], [y0] * len(pts))
    pop = pl.DataFrame(
        {
            "lat": lat,
            "lon": lon,
            "people": [p for *_, p in pts],
            "area": "urban",
            "region": [r for _, r, _, _ in pts],
            "kind": [k for _, _, k, _ in pts],
        }
    )
    covered = match_nearest_stop(pop, pl.DataFrame({"stop_x_m": [x0], "stop_y_m": [y0]}), EPSG, CGS)
    regions = compute_region_coverage(covered, CGS)
    n = regions.filter(pl.col("region") == "N").row(0, named=True)
    assert n["mean_walk_m"] == pytest.approx((390 + 403) / 2, abs=0.5)
    assert n["is_served"] and n["is_region_served"]
    s = {r["kind"]: r for r in regions.filter(pl.col("region") == "S").iter_rows(named=True)}
    assert s["home"]["is_served"] and not s["work"]["is_served"]
    assert not s["home"]["is_region_served"]
    ind = compute_coverage_indicators(covered, CGS, parse_period("2026"))
    v = {r["indicator"]: r for r in ind.iter_rows(named=True)}
    assert (v["regions_served_urban"]["numerator"], v["regions_served_urban"]["denominator"]) == (
        1,
        2,
    )
    # mean walk from home over the three home points: (390 + 403 + 390) / 3
    assert v["mean_walk_m_urban"]["value"] == pytest.approx((390 + 403 + 390) / 3, abs=0.5)
    assert "CGS art. 4" in v["regions_served_urban"]["source"]
