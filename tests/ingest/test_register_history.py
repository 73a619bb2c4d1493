"""The fleet register keeps its history (issue #17): a changed attribute closes the version in
force and opens a new one; a past day is read on the version and inspections then in force."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from analytics.indices.fleet import compute_registered_per_day
from core.register import read_register, to_register_latest
from core.store import Store
from tests.ingest.conftest import ingest_fixture


def _versions(store: Store) -> list[tuple]:
    return store.query(
        "SELECT vehicle_id, operator_id, valid_from::VARCHAR, valid_to::VARCHAR, "
        "retired_on::VARCHAR FROM vehicles ORDER BY vehicle_id, valid_from NULLS FIRST"
    ).rows()


def test_a_changed_operator_closes_the_old_version_and_opens_a_new_one(store_path: Path) -> None:
    with Store.open(store_path) as store:
        ingest_fixture(store, "vehicles.csv", "vehicles")  # 101, 102 in force since registered
        march = ingest_fixture(store, "vehicles_history_march.csv", "vehicles")
        # 101 changed operator, 102 was retired: two new versions
        assert (march.n_accepted, march.n_duplicate, march.n_quarantined) == (2, 0, 0)
        assert _versions(store) == [
            ("101", "OP1", None, "2026-03-01", None),
            ("101", "OP2", "2026-03-01", None, None),
            ("102", "OP1", None, "2026-03-01", None),
            ("102", "OP1", "2026-03-01", None, "2026-03-10"),
        ]
        # the same file again changes nothing
        again = ingest_fixture(store, "vehicles_history_march.csv", "vehicles")
        assert (again.n_accepted, again.n_duplicate) == (0, 2)
        assert len(_versions(store)) == 4

        # a February day is judged on February's register and inspections
        feb = read_register(store, date(2026, 2, 10)).sort("vehicle_id")
        assert feb.select("vehicle_id", "operator_id", "lot_id").rows() == [
            ("101", "OP1", "L1"),
            ("102", "OP1", "L1"),
        ]
        assert feb["last_inspection_on"].to_list() == [date(2026, 1, 10), date(2025, 11, 20)]
        mar = read_register(store, date(2026, 3, 5)).sort("vehicle_id")
        assert mar["operator_id"].to_list() == ["OP2", "OP1"]
        assert mar["last_inspection_on"].to_list() == [date(2026, 3, 1), date(2025, 11, 20)]
        # over both months: both versions of each vehicle; the latest is March's
        both = read_register(store, date(2026, 2, 1), date(2026, 3, 31))
        assert both.height == 4
        assert to_register_latest(both).sort("vehicle_id")["operator_id"].to_list() == [
            "OP2",
            "OP1",
        ]
        inspections = store.query(
            "SELECT vehicle_id, inspected_on::VARCHAR FROM vehicle_inspections ORDER BY 1, 2"
        ).rows()
        assert inspections == [("101", "2026-01-10"), ("101", "2026-03-01"), ("102", "2025-11-20")]


def test_retired_and_transferred_vehicles_leave_the_reserve_count_of_their_days(
    store_path: Path,
) -> None:
    with Store.open(store_path) as store:
        ingest_fixture(store, "vehicles.csv", "vehicles")
        ingest_fixture(store, "vehicles_history_march.csv", "vehicles")
        versions = read_register(store, date(2026, 2, 27), date(2026, 3, 12))
    dates = pl.DataFrame(
        {"service_date": [date(2026, 2, 27), date(2026, 3, 2), date(2026, 3, 9), date(2026, 3, 10)]}
    )
    per_day = compute_registered_per_day(versions, dates).sort("service_date", "operator_id")
    # 27 Feb: both with OP1; from 1 Mar 101 is OP2's; 102 retired on 10 Mar counts no more
    assert per_day.rows() == [
        (date(2026, 2, 27), "OP1", 2),
        (date(2026, 3, 2), "OP1", 1),
        (date(2026, 3, 2), "OP2", 1),
        (date(2026, 3, 9), "OP1", 1),
        (date(2026, 3, 9), "OP2", 1),
        (date(2026, 3, 10), "OP2", 1),
    ]


def test_valid_from_before_the_version_in_force_is_quarantined(store_path: Path) -> None:
    with Store.open(store_path) as store:
        ingest_fixture(store, "vehicles.csv", "vehicles")
        ingest_fixture(store, "vehicles_history_march.csv", "vehicles")
        late = ingest_fixture(store, "vehicles_valid_from_before_version_in_force.csv", "vehicles")
        assert (late.n_accepted, late.n_quarantined) == (0, 1)
        reason = store.query(
            "SELECT field, reason FROM quarantine WHERE target_table = 'vehicles' "
            "AND field = 'valid_from'"
        ).rows()
        assert reason == [
            (
                "valid_from",
                "valid_from before the version in force since 2026-03-01: the register's "
                "history is only extended forward (correct the newer version instead)",
            )
        ]
        assert len(_versions(store)) == 4
