"""A raw day's digest is reused while the day is unchanged (ADR 0113): a day changed through
Pontual (a late ping ingested) or behind its back (direct SQL on the store) is hashed again,
so the period's digests always equal the day digests recomputed in full."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from cases.digests import (
    TEXT_METHOD,
    compute_day_digest,
    compute_raw_day_digests,
    record_day_fingerprints,
    record_ingested_day_fingerprints,
)
from cases.evidence import compute_period_day_digests, record_day_digests
from core.store import Store
from ingest.options import build_options
from ingest.writing import write_avl_records
from tests.cases.test_evidence import fill_store
from tests.cases.test_workflow import PROFILE

TZ = PROFILE.general.timezone.value
MARCH = (date(2026, 3, 1), date(2026, 3, 31))
MAR2, MAR3 = date(2026, 3, 2), date(2026, 3, 3)


@pytest.fixture
def filled(store_path: Path) -> Path:
    fill_store(store_path)
    return store_path


def _full(store: Store) -> list[tuple[str, date, int, str]]:
    """Every raw day's digest hashed in full now (no reuse): the ground truth."""
    got = []
    for name in ("fare_transactions", "vehicle_locations"):
        days = store.query(
            f'SELECT DISTINCT CAST(timezone(?, event_at) AS DATE) AS d FROM "{name}" ORDER BY d',
            [TZ],
        )["d"]
        for day in days.to_list():
            n, sha, _ = compute_day_digest(store, name, day, TZ)
            got.append((name, day, n, sha))
    return got


def _period(store: Store) -> list[tuple[str, date, int, str]]:
    frame = compute_period_day_digests(store, *MARCH, TZ)
    return list(frame.select("table_name", "service_date", "n_rows", "sha256").iter_rows())


def test_an_unchanged_day_reuses_its_digest(filled: Path) -> None:
    with Store.open(filled) as store:
        first = record_day_fingerprints(store, TZ)
        assert not first["is_reused"].any()  # nothing recorded yet: every day hashed
        assert store.count("raw_day_fingerprints") == 3
        again = record_day_fingerprints(store, TZ)
        truth = _full(store)
        assert _period(store) == truth
    assert again["is_reused"].all()
    assert again.drop("is_reused").equals(first.drop("is_reused"))
    assert sorted(
        again.select("table_name", "service_date", "n_rows", "sha256").iter_rows()
    ) == sorted(truth)


def test_reference_digests_are_the_full_digests_and_fill_the_fingerprints(filled: Path) -> None:
    with Store.open(filled) as store:
        recorded = record_day_digests(store, PROFILE)
        truth = _full(store)
        stored = store.query(
            "SELECT table_name, service_date, n_rows, sha256 FROM raw_day_fingerprints "
            "ORDER BY table_name, service_date"
        )
    assert sorted(recorded.select("table_name", "service_date", "n_rows", "sha256").rows()) == (
        truth
    )
    assert [tuple(r) for r in stored.with_columns(pl.col("service_date").cast(pl.Date)).rows()] == (
        truth
    )


@pytest.mark.parametrize(
    "edit",
    [
        # one latitude moved by a metre
        "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE event_at = '2026-03-03 11:00Z'",
        # a ping deleted, a ping repeated
        "DELETE FROM vehicle_locations WHERE event_at = '2026-03-02 11:01Z'",
        "INSERT INTO vehicle_locations SELECT * FROM vehicle_locations "
        "WHERE event_at = '2026-03-02 11:01Z'",
        # two values swapped between columns of one row; a null heading made zero
        "UPDATE vehicle_locations SET lat = lon, lon = lat WHERE event_at = '2026-03-02 11:02Z'",
        "UPDATE vehicle_locations SET heading_deg = 0 WHERE event_at = '2026-03-02 11:02Z'",
        # a tap's card, a null made empty
        "UPDATE fare_transactions SET card_hash = 'd' || card_hash[2:] WHERE transaction_id = 't1'",
        "UPDATE vehicle_locations SET reported_trip_id = '' WHERE event_at = '2026-03-02 11:03Z'",
    ],
)
def test_a_row_changed_behind_pontuals_back_is_hashed_again(filled: Path, edit: str) -> None:
    with Store.open(filled) as store:
        record_day_fingerprints(store, TZ)
        before = _period(store)
        store.con.execute(edit)  # direct SQL: nothing of Pontual notes it
        after = _period(store)
        truth = _full(store)
    assert after == truth
    changed = [a for a, b in zip(after, before, strict=True) if a != b]
    assert len(changed) == 1  # the edited day alone, its digest the full one


def test_a_late_ping_ingested_is_digested_again_for_its_day_only(filled: Path) -> None:
    with Store.open(filled) as store:
        record_day_fingerprints(store, TZ)
        before = _period(store)
        since = datetime.now(UTC)
        late = pl.DataFrame(
            {
                "vehicle_id": ["V12"],
                "event_at": ["2026-03-03T11:05:00Z"],
                "lat": ["-29.191"],
                "lon": ["-51.52"],
                "operator_id": ["O1"],
                "record_key": ["late-1"],
            }
        )
        counts = write_avl_records(
            store, late, source="late.csv", options=build_options(accept_unknown_vehicles=True)
        )
        assert counts.n_accepted == 1
        # what `pontual ingest` does at its end: the days it touched, and only those
        written = record_ingested_day_fingerprints(store, TZ, since)
        after = _period(store)
        truth = _full(store)
        reused = compute_raw_day_digests(store, "vehicle_locations", *MARCH, TZ)
    assert written.select("table_name", "service_date", "n_rows", "is_reused").rows() == [
        ("vehicle_locations", MAR3, 2, False)
    ]
    assert after == truth
    assert [a for a in after if a not in before] == [truth[-1]]  # 3 Mar's digest moved
    assert reused["is_reused"].all()  # the report then reuses it


def test_another_duckdb_version_or_time_zone_hashes_again(filled: Path) -> None:
    with Store.open(filled) as store:
        record_day_fingerprints(store, TZ)
        store.con.execute(
            "UPDATE raw_day_fingerprints SET duckdb_version = '0.9.2' WHERE service_date = ?",
            [MAR3],
        )
        store.con.execute(
            "UPDATE raw_day_fingerprints SET time_zone = 'UTC' WHERE table_name = "
            "'fare_transactions'"
        )
        pings = compute_raw_day_digests(store, "vehicle_locations", *MARCH, TZ)
        taps = compute_raw_day_digests(store, "fare_transactions", *MARCH, TZ)
        # a recorded sha256 that no longer matches its fingerprint is never used
        store.con.execute(
            "UPDATE raw_day_fingerprints SET n_rows = n_rows + 1, sha256 = repeat('0', 64) "
            "WHERE service_date = ? AND table_name = 'vehicle_locations'",
            [MAR2],
        )
        assert _period(store) == _full(store)
    assert pings.select("service_date", "is_reused").rows() == [(MAR2, True), (MAR3, False)]
    assert taps["is_reused"].to_list() == [False]


def test_a_store_without_the_table_hashes_every_day(filled: Path) -> None:
    """A lake, or a store opened read-only at an older schema, has no raw_day_fingerprints:
    every day is hashed, as before."""
    with Store.open(filled) as store:
        store.con.execute("DROP TABLE raw_day_fingerprints")
        got = compute_raw_day_digests(store, "vehicle_locations", *MARCH, TZ)
        assert _period(store) == _full(store)
    assert not got["is_reused"].any()


def test_verify_writes_the_digests_it_recomputed_over_an_edited_one(filled: Path) -> None:
    """A row of raw_day_fingerprints edited by direct SQL to a false digest whose fingerprint
    still holds (what no report could notice) is overwritten by `pontual verify`'s full
    recomputation; so is a day changed behind Pontual's back."""
    from cases.evidence import record_verified_fingerprints, verify_day_digests

    with Store.open(filled) as store:
        record_day_digests(store, PROFILE)
        store.con.execute(
            "UPDATE raw_day_fingerprints SET sha256 = repeat('0', 64) WHERE service_date = ? "
            "AND table_name = 'vehicle_locations'",
            [MAR2],
        )
        fooled = _period(store)
        store.con.execute(
            "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE event_at = '2026-03-03 11:00Z'"
        )
        report = verify_day_digests(store)
        written = record_verified_fingerprints(store, report)
        after = compute_raw_day_digests(store, "vehicle_locations", *MARCH, TZ)
        truth = _full(store)
    assert ("vehicle_locations", MAR2, 5, "0" * 64) in fooled
    assert report.filter(~pl.col("is_ok"))["service_date"].to_list() == [MAR3]
    assert sorted(written.select("table_name", "service_date", "n_rows", "sha256").rows()) == truth
    assert after["is_reused"].all()
    assert sorted(
        ("vehicle_locations", d, n, h)
        for d, n, h in after.select("service_date", "n_rows", "sha256").iter_rows()
    ) == [t for t in truth if t[0] == "vehicle_locations"]


def test_a_repeated_ping_id_is_digested_in_the_order_of_every_column(filled: Path) -> None:
    """duckdb-text-v1 sorts pings by ping_id alone while no two share it; a row repeated by
    hand (same ping_id) needs every column to order it: the digest is still the first
    definition's (DuckDB's own sha256 of the lines ordered by every column)."""
    from core.periods import local_bounds, range_period
    from core.schema import table

    cols = table("vehicle_locations").column_names
    cells = ", ".join(f'coalesce(CAST("{c}" AS VARCHAR), chr(0))' for c in cols)
    order = ", ".join(f'"{c}"' for c in cols)
    oracle = (
        "SELECT count(*), sha256(coalesce(string_agg(concat_ws(chr(31), "
        f"{cells}), chr(10) ORDER BY {order}), '')) FROM vehicle_locations "
        "WHERE event_at >= ? AND event_at < ?"
    )
    bounds = list(local_bounds(range_period(MAR2, MAR2), TZ))
    with Store.open(filled) as store:
        unique = compute_day_digest(store, "vehicle_locations", MAR2, TZ, method=TEXT_METHOD)[:2]
        assert unique == store.query(oracle, bounds).row(0)
        # the same ping_id twice, the copy with another latitude: sorted by lat within the id
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT * REPLACE (lat - 1 AS lat) "
            "FROM vehicle_locations WHERE event_at = '2026-03-02 11:02Z'"
        )
        repeated = compute_day_digest(store, "vehicle_locations", MAR2, TZ, method=TEXT_METHOD)[:2]
        assert repeated == store.query(oracle, bounds).row(0)
    assert repeated[0] == unique[0] + 1
