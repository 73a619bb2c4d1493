"""`pontual export tides`: every table validates against the TIDES schemas (offline), holds the
store's rows, keeps card ids hashed, and the pings load back into a fresh store unchanged."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from exports.tides import TIDES_TABLES
from exports.validate import validate_tides_package
from tests.conftest import shared_data
from tests.exports.conftest import ROOT

FIRST, LAST = date(2026, 3, 2), date(2026, 3, 3)
LOCAL_DAYS = "CAST(timezone('America/Sao_Paulo', event_at) AS DATE) BETWEEN ? AND ?"
"""the pings of the exported days: their local date (a bus running past midnight reports on
the next calendar day, which the next day's export holds)"""


def _pontual(store: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pontual", "--store", str(store), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def tides(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tides")
    schemas = shared_data("tides_schema_spec")
    done = _pontual(
        demo_store,
        *("export", "tides", "--from", FIRST.isoformat(), "--to", LAST.isoformat()),
        *("--out", str(out), "--schemas", str(schemas)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "válido segundo os esquemas TIDES" in done.stdout
    return out


def test_every_table_validates_against_the_tides_schemas(tides: Path) -> None:
    errors = validate_tides_package(tides, shared_data("tides_schema_spec"))
    assert sorted(errors) == sorted(TIDES_TABLES)
    assert all(not e for e in errors.values()), errors
    assert (tides / "datapackage.json").exists()


def test_tables_hold_the_stores_rows(tides: Path, demo_store: Path) -> None:
    with Store.open(demo_store, read_only=True) as store:
        runs = store.count("trips_performed")
        visits = store.count("stop_visits")
        taps = store.count("fare_transactions")
        pings = store.query(
            f"SELECT count(*) AS n FROM vehicle_locations WHERE {LOCAL_DAYS}", [FIRST, LAST]
        )["n"][0]
        hashes = set(store.read("fare_transactions")["card_hash"].drop_nulls())
    assert pl.read_csv(tides / "trips_performed.csv").height == runs
    assert pl.read_csv(tides / "stop_visits.csv").height == visits
    fares = pl.read_csv(tides / "fare_transactions.csv", infer_schema_length=0)
    assert fares.height == taps
    # card ids stay hashed: the TIDES token is the store's keyed hash, never anything else
    assert set(fares["token_id"].drop_nulls()) == hashes
    assert pl.read_csv(tides / "vehicle_locations.csv").height == pings
    # one boarding per placed tap
    events = pl.read_csv(tides / "passenger_events.csv", infer_schema_length=0)
    boarded = events.filter(pl.col("event_type") == "Passenger boarded")
    assert boarded.height == fares.filter(pl.col("stop_id").is_not_null()).height


def test_exported_pings_load_back_unchanged(tides: Path, demo_store: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.duckdb"
    assert _pontual(fresh, "init").returncode == 0
    done = _pontual(fresh, "ingest", "avl", str(tides / "vehicle_locations.csv"))
    assert done.returncode == 0, done.stdout + done.stderr
    cols = ["vehicle_id", "event_at", "lat", "lon", "speed_m_s", "heading_deg"]
    with Store.open(demo_store, read_only=True) as a, Store.open(fresh, read_only=True) as b:
        before = a.read("vehicle_locations", LOCAL_DAYS, [FIRST, LAST], columns=cols).sort(
            "vehicle_id", "event_at"
        )
        after = b.read("vehicle_locations", columns=cols).sort("vehicle_id", "event_at")
    assert after.height == before.height
    assert after.equals(before)


def test_two_operators_taps_with_one_id_stay_two_transactions(
    demo_store: Path, tmp_path: Path
) -> None:
    """Two operators' vendors number their taps alike (ADR 0040): the same vendor id at the
    same instant is two taps, and TIDES, whose `transaction_id` must be unique, gets two ids
    (OPERATOR:ID:EPOCH_MS) and a package that still validates."""
    import shutil

    import duckdb

    store = tmp_path / "pontual.duckdb"
    shutil.copy(demo_store, store)
    shutil.copy(demo_store.with_suffix(".hashkey"), store.with_suffix(".hashkey"))
    with duckdb.connect(str(store)) as con:
        tap = con.sql(
            "SELECT * FROM fare_transactions WHERE operator_id IS NOT NULL "
            "ORDER BY event_at, transaction_id LIMIT 1"
        ).pl()
        other = tap.with_columns(pl.lit("OUTRA").alias("operator_id"))
        con.register("other", other.to_arrow())
        con.execute("INSERT INTO fare_transactions BY NAME SELECT * FROM other")
    out = tmp_path / "tides"
    schemas = shared_data("tides_schema_spec")
    done = _pontual(
        store,
        *("export", "tides", "--from", FIRST.isoformat(), "--to", LAST.isoformat()),
        *("--out", str(out), "--schemas", str(schemas)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not any(validate_tides_package(out, schemas).values())
    fares = pl.read_csv(out / "fare_transactions.csv", infer_schema_length=0)
    assert fares["transaction_id"].n_unique() == fares.height
    vendor_id, instant = tap["transaction_id"][0], tap["event_at"][0]
    epoch_ms = str(int(instant.timestamp() * 1000))
    both = fares.filter(pl.col("transaction_id").str.contains(f":{vendor_id}:", literal=True))
    assert sorted(both["transaction_id"]) == sorted(
        [f"{tap['operator_id'][0]}:{vendor_id}:{epoch_ms}", f"OUTRA:{vendor_id}:{epoch_ms}"]
    )
    events = pl.read_csv(out / "passenger_events.csv", infer_schema_length=0)
    assert events["passenger_event_id"].n_unique() == events.height
    boarded = events.filter(pl.col("event_type") == "Passenger boarded")
    # a boarding's id is its tap's id: the placed taps' ids are fare_transactions' ids
    assert set(boarded["passenger_event_id"].str.strip_suffix(":b")) <= set(fares["transaction_id"])
