"""The Frota page judges the reserve over every day of the period (issue #17), not on its last
day: a week ending on a Sunday with little service must not read as 200 % reserve."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

from core.store import Store
from dashboard.queries.fleet import read_reserve_over_period, read_vehicles
from dashboard.queries.snapshot import ALL

MONDAY = date(2026, 3, 2)


def _week() -> pl.DataFrame:
    # OP1: 10 vehicles registered; the timetable needs 9 on weekdays (reserve 1, minimum
    # ceil(0.1 × 9) = 1: ok), 9 on Thursday with one retired the day before (9 registered,
    # reserve 0: below), 5 on Saturday, 3 on Sunday (reserve 7 = 233 %: the old "last day")
    required = [9, 9, 9, 9, 9, 5, 3]
    registered = [10, 10, 10, 9, 9, 9, 9]
    days = [MONDAY + timedelta(days=i) for i in range(7)]
    reserve = [g - r for g, r in zip(registered, required, strict=True)]
    minimum = [1, 1, 1, 1, 1, 1, 1]
    return pl.DataFrame(
        {
            "service_date": days,
            "operator_id": "OP1",
            "route_id": "*",
            "n_vehicles_required": required,
            "n_vehicles_operated": required,
            "cut_ratio": 0.0,
            "is_cut_over_limit": False,
            "n_cut_days_consecutive": 0,
            "is_grave_cut": False,
            "n_vehicles_registered": registered,
            "n_reserve": reserve,
            "n_reserve_min": minimum,
            "n_reserve_max": [1, 1, 1, 1, 1, 0, 0],
            "reserve_ratio": [r / q for r, q in zip(reserve, required, strict=True)],
            "is_reserve_ok": [r >= m for r, m in zip(reserve, minimum, strict=True)],
        }
    )


def test_the_reserve_is_judged_on_every_day_not_the_sunday(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("fleet_days", _week(), fill={"pontual_version": "t", "profile_id": "bg"})
        got = read_reserve_over_period(store, MONDAY, MONDAY + timedelta(days=6), "OP1")
    row = got.row(0, named=True)
    assert row["n_days"] == 7
    # Thursday and Friday: 9 registered, 9 required -> reserve 0 < 1
    assert row["n_days_below_min"] == 2
    assert row["n_reserve_lowest"] == 0
    assert row["lowest_on"] == MONDAY + timedelta(days=3)
    assert row["reserve_ratio_lowest"] == 0.0
    # over the cap: Saturday (4 > 0) and Sunday (6 > 0); weekdays 1 > 1 is not
    assert row["n_days_above_max"] == 2
    assert (row["n_registered_min"], row["n_registered_max"]) == (9, 10)
    assert row["is_reserve_ok_every_day"] is False


def test_the_frota_page_reads_the_register_as_it_stood_on_the_day(store_path: Path) -> None:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    base = {
        "operator_id": "OP1",
        "service_area": "urban",
        "service_class": "conventional",
        "vehicle_type": "convencional",
        "manufacture_year": 2018,
        "source": "test",
        "ingested_at": at,
    }
    rows = pl.DataFrame(
        [
            {**base, "vehicle_id": "V1", "n_seats": 38, "valid_to": date(2026, 3, 1)},
            {**base, "vehicle_id": "V1", "n_seats": 40, "valid_from": date(2026, 3, 1)},
            {**base, "vehicle_id": "V2", "n_seats": 38, "retired_on": date(2026, 2, 20)},
        ]
    )
    with Store.open(store_path) as store:
        store.append("vehicles", rows)
        feb = read_vehicles(store, "OP1", ALL, date(2026, 2, 15))
        mar = read_vehicles(store, "OP1", ALL, date(2026, 3, 15))
    assert feb.select("vehicle_id", "n_seats").rows() == [("V1", 38), ("V2", 38)]
    # V1 refitted with 40 seats from 1 March; V2 retired on 20 February
    assert mar.select("vehicle_id", "n_seats").rows() == [("V1", 40)]
