"""The fleet register's history: migration 10 keeps an older store's register, and the
version in force on a day is the only one read (core.register)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from core.register import in_force_sql, read_register, to_register_on, to_vehicle_days
from core.store import Store

OLD_VEHICLES = (
    "CREATE TABLE vehicles (vehicle_id VARCHAR NOT NULL, plate VARCHAR, operator_id VARCHAR "
    "NOT NULL, lot_id VARCHAR, service_area VARCHAR NOT NULL, service_class VARCHAR NOT NULL, "
    "vehicle_type VARCHAR NOT NULL, manufacture_year INTEGER NOT NULL, n_seats INTEGER, "
    "standing_area_m2 DOUBLE, in_service_since DATE, last_inspection_on DATE, is_reserve "
    "BOOLEAN, source VARCHAR NOT NULL, ingested_at TIMESTAMPTZ NOT NULL, PRIMARY KEY "
    "(vehicle_id))"
)


def test_migration_10_keeps_the_register_and_seeds_the_inspection_history(
    store_path: Path,
) -> None:
    # A store of the release before migration 10: one row per vehicle, keyed by vehicle_id.
    with Store.open(store_path, target_version=9) as old:
        old.con.execute("DROP TABLE vehicles").fetchall()
        old.con.execute(OLD_VEHICLES).fetchall()
        old.con.execute(
            "INSERT INTO vehicles VALUES ('101', 'IXA1A01', 'OP1', 'L1', 'urban', "
            "'conventional', 'convencional', 2018, 38, 6.0, '2018-05-01', '2026-01-10', false, "
            "'v.csv', '2026-02-01 12:00:00+00'), ('102', 'IXA1A02', 'OP1', 'L1', 'district', "
            "'selective', 'micro', 2015, 21, 2.5, '2015-03-01', NULL, true, 'v.csv', "
            "'2026-02-01 12:00:00+00')"
        ).fetchall()
    with Store.open(store_path) as store:
        assert store.schema_version >= 10
        rows = store.query(
            "SELECT vehicle_id, valid_from, valid_to, retired_on FROM vehicles ORDER BY 1"
        ).rows()
        inspections = store.query(
            "SELECT vehicle_id, inspected_on FROM vehicle_inspections ORDER BY 1"
        ).rows()
        # every old row is one version in force since registered; 102 was never inspected
        assert rows == [("101", None, None, None), ("102", None, None, None)]
        assert inspections == [("101", date(2026, 1, 10))]
        # before its inspection, 101 shows none; after, the inspection
        before = read_register(store, date(2025, 12, 31)).sort("vehicle_id")
        after = read_register(store, date(2026, 3, 1)).sort("vehicle_id")
    assert before["last_inspection_on"].to_list() == [None, None]
    assert after["last_inspection_on"].to_list() == [date(2026, 1, 10), None]


def _versions() -> pl.DataFrame:
    # V1 with OP1 until 1 Mar, then OP2; V2 enters on 5 Mar; V3 retires on 3 Mar
    return pl.DataFrame(
        {
            "vehicle_id": ["V1", "V1", "V2", "V3"],
            "operator_id": ["OP1", "OP2", "OP1", "OP1"],
            "in_service_since": [None, None, date(2026, 3, 5), None],
            "retired_on": [None, None, None, date(2026, 3, 3)],
            "valid_from": [None, date(2026, 3, 1), None, None],
            "valid_to": [date(2026, 3, 1), None, None, None],
        },
        schema_overrides={"in_service_since": pl.Date, "retired_on": pl.Date},
    )


def test_the_version_in_force_and_the_fleet_of_each_day() -> None:
    assert to_register_on(_versions(), date(2026, 2, 28))["operator_id"].to_list() == [
        "OP1",
        "OP1",
        "OP1",
    ]
    # valid_to is exclusive: on 1 March V1 is OP2's
    on_first = to_register_on(_versions(), date(2026, 3, 1))
    assert on_first.filter(pl.col("vehicle_id") == "V1")["operator_id"].to_list() == ["OP2"]
    days = pl.DataFrame({"service_date": [date(2026, 3, 2), date(2026, 3, 3), date(2026, 3, 5)]})
    fleet = to_vehicle_days(_versions(), days).sort("service_date", "vehicle_id")
    assert fleet.select("service_date", "vehicle_id").rows() == [
        (date(2026, 3, 2), "V1"),
        (date(2026, 3, 2), "V3"),  # retired on the 3rd: still in the fleet on the 2nd
        (date(2026, 3, 3), "V1"),
        (date(2026, 3, 5), "V1"),
        (date(2026, 3, 5), "V2"),  # entered on the 5th
    ]


def test_the_sql_condition_is_the_same_rule(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.con.register("v", _versions().to_arrow())
        condition = in_force_sql("v", "DATE '2026-03-01'")
        got = store.query(
            f"SELECT vehicle_id, operator_id FROM v WHERE {condition} ORDER BY 1"
        ).rows()
    assert got == [("V1", "OP2"), ("V2", "OP1"), ("V3", "OP1")]
