"""ICV and its parts from hand-checked trip outcomes (independent of matching).

The fixture `trip_outcomes_hand_checked.csv` holds 16 trips of three lines; the expected values
below were counted by hand from it (see the comments).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from analytics.indices.icv import (
    attach_breakdown_routes,
    band_score,
    compute_icv_indicators,
    compute_trip_flags,
)
from analytics.indices.scopes import attach_scopes, compute_line_scopes
from core.periods import parse_period
from core.profile import load_profile
from core.schema import table

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "indices"
PROFILE = load_profile("bento-goncalves-2021")
PERIOD = parse_period("2026-03")


def read_fixture(name: str, table_name: str) -> pl.DataFrame:
    """A fixture CSV conformed to a store table's declaration."""
    raw = pl.read_csv(FIXTURES / name, try_parse_dates=True, infer_schema_length=None)
    fill = {
        "source": name,
        "ingested_at": datetime(2026, 3, 1, tzinfo=UTC),
        "pontual_version": "test",
        "profile_id": PROFILE.id,
    }
    return table(table_name).conform(raw, fill=fill)


def fixture_frames() -> dict[str, pl.DataFrame]:
    outcomes = read_fixture("trip_outcomes_hand_checked.csv", "trip_outcomes")
    vehicles = read_fixture("vehicles_two_operators.csv", "vehicles")
    routes = read_fixture("gtfs_routes_agency.csv", "gtfs_routes").with_columns(
        pl.col("agency_id").fill_null("")
    )
    breakdowns = read_fixture("breakdowns_two.csv", "breakdowns")
    return {"outcomes": outcomes, "vehicles": vehicles, "routes": routes, "breakdowns": breakdowns}


def icv_of(frames: dict[str, pl.DataFrame]) -> pl.DataFrame:
    scopes = compute_line_scopes(frames["routes"], frames["outcomes"], frames["vehicles"])
    flags = attach_scopes(compute_trip_flags(frames["outcomes"]), scopes)
    bd = attach_scopes(attach_breakdown_routes(frames["breakdowns"], frames["outcomes"]), scopes)
    # the breakdown off any line is V11's, an O1 vehicle (the indices job does this lookup)
    bd = bd.with_columns(
        pl.when(pl.col("vehicle_id") == "V11")
        .then(pl.lit("O1"))
        .otherwise("operator_id")
        .alias("operator_id"),
        pl.when(pl.col("vehicle_id") == "V11")
        .then(pl.lit("L1"))
        .otherwise("lot_id")
        .alias("lot_id"),
    )
    return compute_icv_indicators(flags, bd, None, PROFILE, PERIOD)


def value(
    ind: pl.DataFrame, scope: str, scope_id: str, indicator: str
) -> tuple[float, float, float]:
    row = ind.filter(
        (pl.col("scope") == scope)
        & (pl.col("scope_id") == scope_id)
        & (pl.col("indicator") == indicator)
    )
    assert row.height == 1, (scope, scope_id, indicator)
    r = row.row(0, named=True)
    return r["numerator"], r["denominator"], r["value"]


def test_line_scopes_follow_agency_then_vehicles() -> None:
    f = fixture_frames()
    scopes = compute_line_scopes(f["routes"], f["outcomes"], f["vehicles"])
    assert scopes.rows() == [("D50", "O2", "L2"), ("T10", "O1", "L1"), ("U41", "O2", "L2")]


def test_fulfilment_and_punctuality_by_hand() -> None:
    ind = icv_of(fixture_frames())
    # T10: 10 programmed; t09 (late, incident INC2) is justified; t06 (suppressed under the
    # approved incident INC1) is NOT: BG art. 57 §1 excuses delays only, so it stays a
    # suppression; run and not justified: t01 t02 t03 t04 t07 t10
    assert value(ind, "line", "T10", "icv_fulfilment") == (6.0, 9.0, 6 / 9)
    assert value(ind, "line", "T10", "trips_justified")[2] == 1.0
    # on time among those 6: t01 t02 t07 t10; late t03; early t04
    assert value(ind, "line", "T10", "icv_punctuality")[:2] == (4.0, 6.0)
    assert value(ind, "line", "T10", "trips_late")[2] == 1.0
    assert value(ind, "line", "T10", "trips_early")[2] == 1.0
    assert value(ind, "line", "T10", "trips_suppressed")[2] == 2.0  # t06 counts (not a delay)
    # system: 16 programmed, 1 justified, 11 run, 8 on time
    assert value(ind, "system", "all", "icv_fulfilment")[:2] == (11.0, 15.0)
    assert value(ind, "system", "all", "icv_punctuality")[:2] == (8.0, 11.0)
    assert value(ind, "operator", "O2", "icv_fulfilment")[:2] == (5.0, 6.0)


def test_breakdown_index_and_mkbf_by_hand() -> None:
    ind = icv_of(fixture_frames())
    # km run, capped at the programmed km: T10 75 (t08 5 km, t09 10 km though justified),
    # U41 27 (u03 broke down at 3 km), D50 40 (d02's 21 km capped at 20)
    assert value(ind, "line", "T10", "km_run")[2] == pytest.approx(75.0)
    assert value(ind, "line", "D50", "km_run")[2] == pytest.approx(40.0)
    num, den, val = value(ind, "system", "all", "breakdowns_per_10000_km")
    assert (num, den) == (2.0, pytest.approx(142.0))
    assert val == pytest.approx(2 * 10_000 / 142)
    assert value(ind, "system", "all", "mkbf_km")[2] == pytest.approx(71.0)
    # the breakdown off any line counts in O1 but in no line
    assert value(ind, "operator", "O1", "breakdowns")[2] == 1.0
    assert value(ind, "line", "T10", "breakdowns")[2] == 0.0
    assert value(ind, "line", "D50", "mkbf_km")[2] is None  # no breakdown: MKBF undefined


def test_icv_score_from_profile_bands() -> None:
    ind = icv_of(fixture_frames())
    # D50: fulfilment 2/2 -> 100, punctuality 1/2 -> 0 (below 75 %), 0 breakdowns -> 100
    assert value(ind, "line", "D50", "icv_score")[2] == pytest.approx(0.5 * 100 + 0.2 * 100)
    # U41: fulfilment 3/4 -> 0, punctuality 3/3 -> 100, 1 breakdown in 27 km -> 0
    assert value(ind, "line", "U41", "icv_score")[2] == pytest.approx(30.0)
    # O2: punctuality 4/5 = 80 % -> (0.80 - 0.75) / 0.20 = 25 points, weight 0.3
    assert value(ind, "operator", "O2", "icv_score_punctuality")[2] == pytest.approx(25.0)
    assert value(ind, "operator", "O2", "icv_score")[2] == pytest.approx(7.5)


def test_band_score_is_linear_and_clipped_in_either_direction() -> None:
    df = pl.DataFrame({"x": [0.90, 0.94, 0.98, 1.0, 0.5]})
    up = df.select(band_score(pl.col("x"), [0.90, 0.98]))["x"].to_list()
    assert up == pytest.approx([0.0, 50.0, 100.0, 100.0, 0.0])
    down = pl.DataFrame({"x": [3.0, 1.75, 0.5, 0.0, 9.0]}).select(
        band_score(pl.col("x"), [3.0, 0.5])
    )["x"]
    assert down.to_list() == pytest.approx([0.0, 50.0, 100.0, 100.0, 0.0])


def test_headway_indices_for_frequent_lines_only() -> None:
    from analytics.indices.icv import compute_headway_indices

    hw = pl.DataFrame(
        {
            "route_id": ["T10", "T10", "U41"],
            "operator_id": ["O1", "O1", "O2"],
            "lot_id": ["L1", "L1", "L2"],
            "n_planned": [6, 4, 2],
            "planned_headway_mean_s": [600.0, 540.0, 1800.0],
            "scheduled_wait_s": [300.0, 270.0, 900.0],
            "actual_wait_s": [360.0, 300.0, 1200.0],
            "excess_wait_s": [60.0, 30.0, 300.0],
        }
    )
    out = compute_headway_indices(hw, PROFILE).filter(pl.col("scope") == "system")
    r = out.row(0, named=True)
    # U41 (30 min headway) is not frequent; T10 weighted by planned departures
    assert r["ewt_weighted"] / r["n_planned_frequent"] == pytest.approx((60 * 6 + 30 * 4) / 10)
    assert r["swt_weighted"] / r["awt_weighted"] == pytest.approx(
        (300 * 6 + 270 * 4) / (360 * 6 + 300 * 4)
    )
