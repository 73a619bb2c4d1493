"""Fleet compliance: reserve (BG Anexo I XXXV, CGS 23), grave cut (BG art. 72), age and
inspections (BG art. 18-19, 23), fees (Lei 221/2017)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

from analytics.indices.fleet import (
    compute_cut_runs,
    compute_fleet_day_indicators,
    compute_fleet_days,
    compute_fleet_register,
    compute_register_indicators,
    compute_vehicles_required,
    reserve_max_expr,
    reserve_min_expr,
)
from core.periods import Period
from core.profile import load_fee_table, load_profile
from tests.analytics.indices.test_icv import fixture_frames

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def test_reserve_for_a_fleet_of_9_and_of_40() -> None:
    required = pl.DataFrame({"r": [9, 10, 40, 41]})
    out = required.select(
        reserve_min_expr(pl.col("r"), BG).alias("min"),
        reserve_max_expr(pl.col("r"), CGS).alias("max"),
    )
    # below 10 buses one reserve vehicle; else at least 10 % rounded up (41 -> 4.1 -> 5)
    assert out["min"].to_list() == [1, 1, 4, 5]
    # CGS caps the reserve at 15 %, rounded down (40 -> 6)
    assert out["max"].to_list() == [1, 1, 6, 6]
    # BG has no cap
    assert required.select(reserve_max_expr(pl.col("r"), BG).alias("m"))["m"].null_count() >= 1


def test_grave_cut_only_after_more_than_three_consecutive_days() -> None:
    start = date(2026, 3, 2)
    over = [True, True, True, True, False, True, True, True, True, True]
    days = pl.DataFrame(
        {
            "service_date": [start + timedelta(days=i) for i in range(len(over))],
            "operator_id": "O1",
            "route_id": "T10",
            "is_cut_over_limit": over,
        }
    )
    out = compute_cut_runs(days, ["operator_id", "route_id"], BG).sort("service_date")
    assert out["n_cut_days_consecutive"].to_list() == [1, 2, 3, 4, 0, 1, 2, 3, 4, 5]
    assert out["is_grave_cut"].to_list() == [False] * 3 + [True, False] + [False] * 3 + [True] * 2


def test_thu_to_sat_and_mon_tue_over_the_limit_is_a_grave_cut() -> None:
    # BG art. 72 p.ú. I: Sunday has no service on the line (no row) and does not reset the run
    thu = date(2026, 3, 5)
    dates = [thu, thu + timedelta(days=1), thu + timedelta(days=2)]
    dates += [thu + timedelta(days=4), thu + timedelta(days=5)]
    days = pl.DataFrame(
        {
            "service_date": dates,
            "operator_id": "O1",
            "route_id": "T10",
            "is_cut_over_limit": [True] * 5,
        }
    )
    out = compute_cut_runs(days, ["operator_id", "route_id"], BG).sort("service_date")
    assert out["n_cut_days_consecutive"].to_list() == [1, 2, 3, 4, 5]
    assert out["is_grave_cut"].to_list() == [False, False, False, True, True]


def _t(h: int, m: int = 0) -> datetime:
    return datetime(2026, 3, 2, h, m, tzinfo=UTC)


def test_required_vehicles_from_blocks_and_peak() -> None:
    sched = pl.DataFrame(
        {
            "service_date": [date(2026, 3, 2)] * 5,
            "route_id": ["A"] * 5,
            "block_id": ["b1", "b1", "b2", None, None],
            "planned_start_at": [_t(8), _t(9), _t(8), _t(8), _t(8, 30)],
            "planned_end_at": [_t(9), _t(10), _t(9), _t(9), _t(9, 30)],
        }
    )
    out = compute_vehicles_required(sched, ["service_date", "route_id"])
    # 2 blocks + 2 block-less trips overlapping 8:30-9:00
    assert out["n_vehicles_required"].to_list() == [4]


def test_fleet_days_with_reserve_from_the_fixture() -> None:
    f = fixture_frames()
    outcomes = f["outcomes"].filter(pl.col("service_date") == date(2026, 3, 2))
    scheduled = outcomes.select(
        "service_date",
        "route_id",
        "planned_start_at",
        (pl.col("planned_start_at") + pl.duration(minutes=50)).alias("planned_end_at"),
        # one block per vehicle that should run it: T10 two (V11, V12), U41 two, D50 none
        pl.when(pl.col("route_id") == "T10")
        .then(pl.when(pl.col("trip_id") <= "t06").then(pl.lit("T-1")).otherwise(pl.lit("T-2")))
        .otherwise(pl.when(pl.col("trip_id") <= "u03").then(pl.lit("U-1")).otherwise(pl.lit("U-2")))
        .alias("block_id"),
    )
    scopes = pl.DataFrame(
        {
            "route_id": ["T10", "U41", "D50"],
            "operator_id": ["O1", "O2", "O2"],
            "lot_id": ["L1", "L2", "L2"],
        }
    )
    days = compute_fleet_days(scheduled, outcomes, f["vehicles"], scopes, BG)
    o1 = days.filter((pl.col("operator_id") == "O1") & (pl.col("route_id") == "*")).row(
        0, named=True
    )
    # O1 needs 2 (blocks T-1, T-2), ran 2 (V11, V12), has 3 registered: reserve 1 >= 1
    assert (o1["n_vehicles_required"], o1["n_vehicles_operated"]) == (2, 2)
    assert (o1["n_vehicles_registered"], o1["n_reserve"], o1["n_reserve_min"]) == (3, 1, 1)
    assert o1["is_reserve_ok"] and o1["cut_ratio"] == 0.0
    o2 = days.filter((pl.col("operator_id") == "O2") & (pl.col("route_id") == "*")).row(
        0, named=True
    )
    # O2 needs 2, ran V21 and V22, has exactly 2: no reserve
    assert (o2["n_reserve"], o2["n_reserve_min"], o2["is_reserve_ok"]) == (0, 1, False)
    line = days.filter(pl.col("route_id") == "T10").row(0, named=True)
    assert line["n_reserve"] is None  # reserve only on the operator total


def test_age_inspections_and_fees_of_the_register() -> None:
    vehicles = fixture_frames()["vehicles"]
    reg = compute_fleet_register(vehicles, BG, date(2026, 3, 31), load_fee_table("lei-221-2017"))
    r = {row["vehicle_id"]: row for row in reg.iter_rows(named=True)}
    # V12 urban 2013: 13 years > 12 (art. 18-I-a); band III (> 9 years): every 6 months
    assert r["V12"]["age_years"] == 13 and r["V12"]["is_over_max_age"]
    assert r["V12"]["inspection_band"] == 3
    assert r["V12"]["inspection_due_on"] == date(2026, 3, 1)
    assert r["V12"]["is_inspection_overdue"]
    # V11 2020: 6 years, band II (5-9): 18 months after 2025-01-10; entered at 1 year old
    assert (r["V11"]["inspection_band"], r["V11"]["inspection_due_on"]) == (2, date(2026, 7, 10))
    assert not r["V11"]["is_inspection_overdue"] and r["V11"]["entry_age_years"] == 1
    # V22 district 2012: 14 years <= 16 (art. 18-II-a); never inspected: overdue
    assert not r["V22"]["is_over_max_age"] and r["V22"]["is_inspection_overdue"]
    # V21 entered in 2018 at age 0; micro with 21 seats + 2.5 m2 × 4 = 31 places > 20
    assert r["V21"]["capacity"] == 31
    assert r["V21"]["fee_yearly"] == pytest.approx(945.0)
    assert r["V21"]["fee_per_inspection"] == pytest.approx(60.0)
    # item 12: at a place or time the taxpayer chooses, the inspection fee doubles
    assert r["V21"]["fee_per_inspection_chosen_place"] == pytest.approx(120.0)


def test_small_vehicle_pays_the_small_fee() -> None:
    v = (
        fixture_frames()["vehicles"]
        .head(1)
        .with_columns(
            pl.lit(18, dtype=pl.Int32).alias("n_seats"), pl.lit(0.0).alias("standing_area_m2")
        )
    )
    reg = compute_fleet_register(v, BG, date(2026, 3, 31), load_fee_table("lei-221-2017"))
    assert (reg["fee_yearly"][0], reg["fee_per_inspection"][0]) == (700.0, 45.0)


def test_nine_year_old_micro_is_past_its_useful_life_under_cgs() -> None:
    # CGS art. 10-III-a, 24, 25: micro-ônibus 8 years (the bus limit of 10 does not apply)
    v = (
        fixture_frames()["vehicles"]
        .head(2)
        .with_columns(
            pl.Series("vehicle_type", ["micro", "convencional"]),
            pl.lit(2017, dtype=pl.Int32).alias("manufacture_year"),
        )
    )
    reg = compute_fleet_register(v, CGS, date(2026, 3, 31))
    assert reg["age_years"].to_list() == [9, 9]
    assert reg["max_age_limit_years"].to_list() == [8.0, 10.0]
    assert reg["is_over_max_age"].to_list() == [True, False]
    # BG has no per-type life: a 9-year-old urban micro is within the 12 years of art. 18-I-a
    assert not compute_fleet_register(v, BG, date(2026, 3, 31))["is_over_max_age"].any()


def test_reserve_above_the_cgs_cap_is_counted_over_every_day() -> None:
    # CGS art. 23: reserve 10 %-15 % of the operational fleet; judged on every day
    days = pl.DataFrame(
        {
            "service_date": [date(2026, 3, 7), date(2026, 3, 8)],  # Sat, Sun
            "operator_id": ["O1", "O1"],
            "route_id": ["*", "*"],
            "n_vehicles_required": [20, 10],
            "n_vehicles_operated": [20, 10],
            "n_reserve": [3, 13],
            "n_reserve_max": [3, 1],
            "is_reserve_ok": [True, True],
            "is_grave_cut": [False, False],
            "is_cut_over_limit": [False, False],
        }
    )
    period = Period("2026-03", date(2026, 3, 1), date(2026, 3, 31), "month")
    rows = compute_fleet_day_indicators(days, period)
    above = rows.filter(pl.col("indicator") == "days_reserve_above_max").row(0, named=True)
    assert (above["numerator"], above["denominator"]) == (1, 2)
    assert above["source"] == "CGS art. 23"


def test_entry_age_applies_to_replacements_only_and_mean_age_is_flagged() -> None:
    # BG art. 19: entry age "na substituição da frota"; art. 18-I-b: urban mean age <= 8
    v = (
        fixture_frames()["vehicles"]
        .filter(pl.col("operator_id") == "O1")
        .head(2)
        .with_columns(
            pl.Series("in_service_since", [date(2018, 1, 1), date(2022, 1, 1)]),
            pl.Series("manufacture_year", [2010, 2014], dtype=pl.Int32),
            pl.lit("urban").alias("service_area"),
        )
    )
    reg = compute_fleet_register(v, BG, date(2022, 6, 30)).sort("in_service_since")
    # the first entered at 8 (initial fleet: art. 18 only); the second at 8 > 6 replaces one
    assert reg["entry_age_years"].to_list() == [8, 8]
    assert reg["is_replacement"].to_list() == [False, True]
    assert reg["is_entry_over_age"].to_list() == [False, True]
    period = Period("2022", date(2022, 1, 1), date(2022, 12, 31), "year")
    rows = compute_register_indicators(reg, BG, period)
    flag = rows.filter(
        (pl.col("indicator") == "fleet_mean_age_over_limit_urban") & (pl.col("scope") == "operator")
    )
    # ages 12 and 8: mean 10 > 8
    assert flag["value"].to_list() == [1.0]
    assert flag["source"].to_list() == ["BG art. 18-I-b"]
