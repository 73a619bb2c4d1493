"""A raw day's digest is reused while the day is unchanged (ADR 0113): a day changed through
Pontual (a late ping ingested) or behind its back (direct SQL on the store) is hashed again,
so the period's digests always equal the day digests recomputed in full."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from cases.digests import (
    BINARY_METHOD,
    DIGEST_METHOD,
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


# -- arrow-binary-v1 (ADR 0113, addendum) --------------------------------------------------
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PING_KINDS = "qstddddssisssst"  # ping_id, vehicle_id, event_at, lat, lon, speed, heading, ...
TAP_KINDS = "stssssdsst"  # transaction_id, event_at, vehicle_id, route_id, card_hash, ...


def _spelled_out(rows: Sequence[tuple[object, ...]], kinds: str) -> str:
    """arrow-binary-v1 of `rows` (already in digest order) written out byte by byte with
    struct and hashlib alone. kinds: a letter per column, s string, q int64, i int32,
    d float64, t instant (int64 microseconds since 1970-01-01 UTC)."""
    assert all(len(row) == len(kinds) for row in rows)
    digest = hashlib.sha256()
    for j, kind in enumerate(kinds):
        cells = [row[j] for row in rows]
        validity = bytes(0 if v is None else 1 for v in cells)
        digest.update(hashlib.sha256(validity).digest())
        if kind == "s":
            texts = [b"" if v is None else str(v).encode("utf-8") for v in cells]
            lengths = b"".join(struct.pack("<I", len(t)) for t in texts)
            digest.update(hashlib.sha256(lengths).digest())
            digest.update(hashlib.sha256(b"".join(texts)).digest())
            continue
        fmt = {"q": "<q", "i": "<i", "d": "<d", "t": "<q"}[kind]
        values = b""
        for v in cells:
            if v is None:
                values += b"\x00" * struct.calcsize(fmt)
            elif kind == "t":
                assert isinstance(v, datetime)
                values += struct.pack(fmt, (v - EPOCH) // timedelta(microseconds=1))
            else:
                values += struct.pack(fmt, v)
        digest.update(hashlib.sha256(values).digest())
    return digest.hexdigest()


def test_binary_digest_of_a_tiny_day_is_its_bytes_spelled_out(filled: Path) -> None:
    """The day's digest by arrow-binary-v1 equals SHA-256 over bytes written out by hand
    from the rows `fill_store` wrote (one ping of 3 Mar with nulls, three taps of 2 Mar)."""
    t0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
    ping: tuple[object, ...] = (6, "V12", datetime(2026, 3, 3, 11, 0, tzinfo=UTC), -29.19)
    ping += (-51.52, 2.0, None, None, None, None, None, None, "O1", "test.csv", t0)
    taps = [
        (tid, t0 + gap, "V12", "R1", card * 64, "full", 4.5, "O1", "test.csv", t0)
        for tid, gap, card in [
            ("t1", timedelta(minutes=1), "a"),
            ("t2", timedelta(minutes=2), "b"),
            ("t3", timedelta(hours=5), "c"),
        ]
    ]
    with Store.open(filled) as store:
        pings = compute_day_digest(store, "vehicle_locations", MAR3, TZ)
        fares = compute_day_digest(store, "fare_transactions", MAR2, TZ)
        empty = compute_day_digest(store, "fare_transactions", date(2026, 3, 9), TZ)
    assert DIGEST_METHOD == BINARY_METHOD == "arrow-binary-v1"
    assert pings[:2] == (1, _spelled_out([ping], PING_KINDS))
    assert fares[:2] == (3, _spelled_out(taps, TAP_KINDS))
    # a day without rows: each of its streams is empty
    assert empty[:2] == (0, _spelled_out([], TAP_KINDS))
    # the same values pinned, so that the spelling above cannot drift with the code
    assert pings[1] == "76a353579a724ea8cb92acc88085f935ec487df0bf0a727c54806340d5d5943c"
    assert fares[1] == "a4dcca7ae8288bd1ab77383dd243f4ca16c50a9b7fa0b523f2dd2ae1ea1ba2d5"


def _by_every_column(store: Store, name: str, day: date, kinds: str) -> str:
    """arrow-binary-v1 of the day as an auditor would write it: every row read back, sorted
    in Python by every column (ascending, nulls last), spelled out (`_spelled_out`)."""
    from core.periods import local_bounds, range_period

    rows = store.query(
        f'SELECT * FROM "{name}" WHERE event_at >= ? AND event_at < ?',
        list(local_bounds(range_period(day, day), TZ)),
    ).rows()
    ordered = sorted(rows, key=lambda r: tuple((v is None, v) for v in r))
    return _spelled_out(ordered, kinds)


def test_binary_digest_orders_the_rows_by_every_column(filled: Path) -> None:
    """Rows stored out of order, sharing their first column, or repeated, digest as the day's
    rows sorted by every column: the stored order, the order of the first column and the
    order of every column give the same bytes whenever each applies."""
    with Store.open(filled) as store:
        assert compute_day_digest(store, "vehicle_locations", MAR2, TZ)[1] == _by_every_column(
            store, "vehicle_locations", MAR2, PING_KINDS
        )
        # taps stored in reverse order, one id shared by two operators, a tap repeated
        store.con.execute(
            "INSERT INTO fare_transactions SELECT * REPLACE ('t0' AS transaction_id, "
            "'O2' AS operator_id) FROM fare_transactions WHERE transaction_id = 't3'"
        )
        assert compute_day_digest(store, "fare_transactions", MAR2, TZ)[:2] == (
            4,
            _by_every_column(store, "fare_transactions", MAR2, TAP_KINDS),
        )
        store.con.execute(
            "INSERT INTO fare_transactions SELECT * REPLACE ('O0' AS operator_id) "
            "FROM fare_transactions WHERE transaction_id = 't1'"
        )
        store.con.execute(
            "INSERT INTO fare_transactions SELECT * FROM fare_transactions "
            "WHERE transaction_id = 't2'"
        )
        assert compute_day_digest(store, "fare_transactions", MAR2, TZ)[:2] == (
            6,
            _by_every_column(store, "fare_transactions", MAR2, TAP_KINDS),
        )
        # a ping repeated by hand with another latitude: the same ping_id twice
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT * REPLACE (lat - 1 AS lat) "
            "FROM vehicle_locations WHERE event_at = '2026-03-02 11:02Z'"
        )
        assert compute_day_digest(store, "vehicle_locations", MAR2, TZ)[:2] == (
            6,
            _by_every_column(store, "vehicle_locations", MAR2, PING_KINDS),
        )


def _auditor(frame: pa.Table) -> str:
    """arrow-binary-v1 of a whole day at once with pyarrow and numpy (what the ADR says an
    auditor can write): sort by every column, then each column's streams."""
    frame = frame.sort_by([(c, "ascending") for c in frame.column_names])
    digest = hashlib.sha256()
    for column in frame.columns:
        values = column.combine_chunks()
        valid = pc.is_valid(values).to_numpy(zero_copy_only=False)
        digest.update(hashlib.sha256(valid.astype(np.uint8).tobytes()).digest())
        if pa.types.is_string(values.type):
            texts = [b"" if v is None else v.encode() for v in values.to_pylist()]
            lengths = np.array([len(t) for t in texts], dtype="<u4")
            digest.update(hashlib.sha256(lengths.tobytes()).digest())
            digest.update(hashlib.sha256(b"".join(texts)).digest())
        else:
            if pa.types.is_timestamp(values.type):
                values = values.cast(pa.int64())
            numbers = values.fill_null(0).to_numpy(zero_copy_only=False)
            digest.update(
                hashlib.sha256(numbers.astype(numbers.dtype.newbyteorder("<")).tobytes()).digest()
            )
    return digest.hexdigest()


def test_binary_digest_of_a_big_day_is_the_auditors_whole_table_one(filled: Path) -> None:
    """300 000 pings (several Arrow batches), stored in ping_id order then with one id
    repeated: the streamed digest equals the auditor's over the whole day sorted at once."""
    from core.periods import local_bounds, range_period

    bounds = list(local_bounds(range_period(MAR2, MAR2), TZ))
    with Store.open(filled) as store:
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT 100 + i, 'V' || (i % 300), "
            "TIMESTAMPTZ '2026-03-02 12:00Z' + to_microseconds(i * 1000), -29.1 - i / 1e7, "
            "-51.5, CASE WHEN i % 7 = 0 THEN NULL ELSE i % 20 END, NULL, "
            "CASE WHEN i % 3 = 0 THEN 'T' || (i % 50) END, 'R1', CAST(i % 2 AS INTEGER), "
            "NULL, NULL, 'O1', 'big.csv', TIMESTAMPTZ '2026-03-02 11:00Z' FROM range(300000) t(i)"
        )
        day = "SELECT * FROM vehicle_locations WHERE event_at >= ? AND event_at < ?"
        stored = compute_day_digest(store, "vehicle_locations", MAR2, TZ)
        assert stored[:2] == (300005, _auditor(store.con.sql(day, params=bounds).to_arrow_table()))
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT * REPLACE ('V999' AS vehicle_id) "
            "FROM vehicle_locations WHERE ping_id = 150000"
        )
        repeated = compute_day_digest(store, "vehicle_locations", MAR2, TZ)
        assert repeated[:2] == (
            300006,
            _auditor(store.con.sql(day, params=bounds).to_arrow_table()),
        )


# -- stores holding digests of both methods ----------------------------------------------------
def as_text_v1(store: Store, name: str, day: date) -> str:
    """What the release before arrow-binary-v1 recorded for the day: its duckdb-text-v1
    digest, in raw_day_digests and raw_day_fingerprints (where the day has a row)."""
    _, sha, cols = compute_day_digest(store, name, day, TZ, method=TEXT_METHOD)
    method = f"{TEXT_METHOD}:{','.join(cols)}"
    for recorded in ("raw_day_digests", "raw_day_fingerprints"):
        store.con.execute(
            f"UPDATE {recorded} SET sha256 = ?, digest_method = ? "
            "WHERE table_name = ? AND service_date = ?",
            [sha, method, name, day],
        )
    return sha


def test_a_store_of_both_methods_checks_each_day_by_its_own(filled: Path) -> None:
    """2 Mar recorded by duckdb-text-v1 (before this release), 3 Mar by arrow-binary-v1:
    verify recomputes each by its recorded method; the current digest of an unchanged v1 day
    is reused, and a changed one is hashed again by v1, so that it compares to its
    reference; a day with no reference yet keeps a v1 current digest while unchanged and is
    hashed by arrow-binary-v1 once it changes."""
    from cases.evidence import record_verified_fingerprints, verify_day_digests

    with Store.open(filled) as store:
        recorded = record_day_digests(store, PROFILE)
        assert recorded["digest_method"].str.starts_with("arrow-binary-v1:").all()
        text_pings = as_text_v1(store, "vehicle_locations", MAR2)
        text_taps = as_text_v1(store, "fare_transactions", MAR2)
        assert text_pings != recorded.filter(pl.col("table_name") == "vehicle_locations")[
            "sha256"
        ].item(0)
        report = verify_day_digests(store)
        written = record_verified_fingerprints(store, report)
        pings = compute_raw_day_digests(store, "vehicle_locations", *MARCH, TZ)
        period = compute_period_day_digests(store, *MARCH, TZ)
        # a ping of 2 Mar (a v1 day) edited behind Pontual's back
        store.con.execute(
            "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE event_at = '2026-03-02 11:01Z'"
        )
        edited = compute_period_day_digests(store, *MARCH, TZ)
        text_now = compute_day_digest(store, "vehicle_locations", MAR2, TZ, method=TEXT_METHOD)
        changed = verify_day_digests(store)
        # 3 Mar without a reference, its current digest by v1: kept while the day is unchanged
        store.con.execute(
            "DELETE FROM raw_day_digests WHERE service_date = ? AND table_name = ?",
            [MAR3, "vehicle_locations"],
        )
        as_text_v1(store, "vehicle_locations", MAR3)
        kept = compute_raw_day_digests(store, "vehicle_locations", MAR3, MAR3, TZ)
        store.con.execute(
            "UPDATE vehicle_locations SET speed_m_s = 1.0 WHERE event_at = '2026-03-03 11:00Z'"
        )
        moved = compute_raw_day_digests(store, "vehicle_locations", MAR3, MAR3, TZ)
        binary_now = compute_day_digest(store, "vehicle_locations", MAR3, TZ)
        new = record_day_digests(store, PROFILE)
    assert report["is_ok"].all() and report.height == 3
    assert report.filter(pl.col("service_date") == MAR2)["sha256_now"].sort().to_list() == sorted(
        [text_taps, text_pings]
    )
    assert sorted(written.select("table_name", "service_date", "sha256").rows()) == [
        ("fare_transactions", MAR2, text_taps),
        ("vehicle_locations", MAR2, text_pings),
        ("vehicle_locations", MAR3, recorded["sha256"][2]),
    ]
    assert pings.select("service_date", "is_reused").rows() == [(MAR2, True), (MAR3, True)]
    assert pings["digest_method"].str.split(":").list.first().to_list() == [
        TEXT_METHOD,
        BINARY_METHOD,
    ]
    assert period["is_as_recorded"].all()
    assert edited["is_as_recorded"].to_list() == [True, False, True]
    assert edited["sha256"][1] == text_now[1]  # by v1, its reference's method
    assert changed.filter(~pl.col("is_ok")).select("service_date", "table_name").rows() == [
        (MAR2, "vehicle_locations")
    ]
    assert kept.select("is_reused", "digest_method").row(0)[0] is True
    assert kept["digest_method"][0].startswith(TEXT_METHOD + ":")
    assert moved.select("n_rows", "sha256", "is_reused").row(0) == (1, binary_now[1], False)
    assert moved["digest_method"][0].startswith(BINARY_METHOD + ":")
    assert new.select("service_date", "table_name", "sha256").rows() == [
        (MAR3, "vehicle_locations", binary_now[1])
    ]
    assert new["digest_method"][0].startswith(BINARY_METHOD + ":")


def test_an_unknown_recorded_method_is_refused(filled: Path) -> None:
    from cases.errors import CaseError
    from cases.evidence import verify_day_digests

    with Store.open(filled) as store:
        record_day_digests(store, PROFILE)
        store.con.execute("UPDATE raw_day_digests SET digest_method = 'sha3-v9:ping_id'")
        with pytest.raises(CaseError, match="unknown digest method 'sha3-v9'"):
            verify_day_digests(store)
        # a report's current digests go on by the method of this version
        assert _period(store) == _full(store)


def test_an_ingest_digests_the_local_days_of_its_rows_on_either_side_of_midnight(
    filled: Path,
) -> None:
    """The days an ingest touched are found from its rows' quarter hours: a row a microsecond
    before local midnight (03:00 UTC in Bento Gonçalves) and one at midnight touch two days,
    and only those."""
    since = datetime(2026, 3, 5, tzinfo=UTC)
    late = pl.DataFrame(
        {
            "vehicle_id": ["V13", "V13"],
            "event_at": [
                datetime(2026, 3, 4, 2, 59, 59, 999999, tzinfo=UTC),  # 3 Mar, 23:59:59.999999
                datetime(2026, 3, 4, 3, 0, tzinfo=UTC),  # 4 Mar, 00:00
            ],
            "lat": [-29.2, -29.2],
            "lon": [-51.5, -51.5],
        }
    )
    with Store.open(filled) as store:
        store.append("vehicle_locations", late, fill={"source": "late.csv", "ingested_at": since})
        written = record_ingested_day_fingerprints(store, TZ, since)
        truth = _full(store)
        # the fingerprints read beside the rows are those of the scan: a report reuses them
        again = compute_raw_day_digests(store, "vehicle_locations", MAR3, date(2026, 3, 4), TZ)
    assert again["is_reused"].all() and again.drop("is_reused").equals(written.drop("is_reused"))
    assert written.select("table_name", "service_date", "n_rows").rows() == [
        ("vehicle_locations", MAR3, 2),
        ("vehicle_locations", date(2026, 3, 4), 1),
    ]
    assert [t for t in truth if t[1] >= MAR3] == list(
        written.select("table_name", "service_date", "n_rows", "sha256").iter_rows()
    )


def test_an_ingest_into_a_day_of_a_v1_reference_digests_it_by_v1(filled: Path) -> None:
    """A late ping of a day whose reference digest is duckdb-text-v1: the ingest hashes the
    day again by v1 (so that a report compares it to its reference), fingerprinted apart."""
    since = datetime(2026, 3, 5, tzinfo=UTC)
    late = pl.DataFrame(
        {
            "vehicle_id": ["V13"],
            "event_at": [datetime(2026, 3, 2, 15, 0, tzinfo=UTC)],
            "lat": [-29.2],
            "lon": [-51.5],
        }
    )
    with Store.open(filled) as store:
        record_day_digests(store, PROFILE)
        as_text_v1(store, "vehicle_locations", MAR2)
        store.append("vehicle_locations", late, fill={"source": "late.csv", "ingested_at": since})
        written = record_ingested_day_fingerprints(store, TZ, since)
        text_now = compute_day_digest(store, "vehicle_locations", MAR2, TZ, method=TEXT_METHOD)
        again = compute_raw_day_digests(store, "vehicle_locations", MAR2, MAR2, TZ)
        period = compute_period_day_digests(store, *MARCH, TZ)
    assert written.select("service_date", "n_rows", "sha256").rows() == [(MAR2, 6, text_now[1])]
    assert written["digest_method"][0].startswith(TEXT_METHOD + ":")
    assert again["is_reused"].all() and again.drop("is_reused").equals(written.drop("is_reused"))
    assert period["is_as_recorded"].to_list() == [True, False, True]  # 2 Mar's pings changed


def test_fingerprints_summed_by_quarter_hour_equal_those_by_row(filled: Path) -> None:
    """The fingerprint scan sums its row hashes per UTC quarter hour and puts those in their
    local day (a time zone conversion per quarter hour, not per row): the same sums as a
    conversion per row, rows a microsecond either side of local midnight included; the raw
    days present are found the same way (`read_local_days`)."""
    from cases.digests import _fingerprint_sql, compute_day_fingerprints, read_local_days
    from core.periods import local_bounds, range_period
    from core.schema import table

    edges = pl.DataFrame(
        {
            "vehicle_id": ["V13", "V13", "V13"],
            "event_at": [
                datetime(2026, 3, 4, 2, 59, 59, 999999, tzinfo=UTC),  # 3 Mar, 23:59:59.999999
                datetime(2026, 3, 4, 3, 0, tzinfo=UTC),  # 4 Mar, 00:00
                datetime(2026, 3, 4, 3, 14, 59, tzinfo=UTC),
            ],
            "lat": [-29.2, -29.2, -29.21],
            "lon": [-51.5, -51.5, -51.51],
        }
    )
    decl = table("vehicle_locations")
    dtypes = [c.dtype for c in decl.columns]
    lo, _ = local_bounds(range_period(MARCH[0], MARCH[0]), TZ)
    _, hi = local_bounds(range_period(MARCH[1], MARCH[1]), TZ)
    with Store.open(filled) as store:
        store.append(
            "vehicle_locations",
            edges,
            fill={"source": "edges.csv", "ingested_at": datetime(2026, 3, 5, tzinfo=UTC)},
        )
        by_row = store.query(
            _fingerprint_sql("vehicle_locations", decl.column_names, dtypes, by_quarter_hour=False),
            [TZ, lo, hi],
        ).sort("service_date")
        by_quarter = compute_day_fingerprints(store, "vehicle_locations", *MARCH, TZ)
        days = read_local_days(store, "vehicle_locations", TZ)
        days_by_row = store.query(
            "SELECT DISTINCT CAST(timezone(?, event_at) AS DATE) AS d FROM vehicle_locations "
            "ORDER BY d",
            [TZ],
        )["d"].to_list()
    assert days == days_by_row and date(2026, 3, 4) in days
    assert by_row["n_rows"].sum() == by_quarter["n_rows"].sum() > 3
    assert by_quarter.filter(pl.col("service_date") == date(2026, 3, 4))["n_rows"][0] >= 2
    assert by_quarter.equals(
        by_row.with_columns(pl.col("service_date").cast(pl.Date), pl.col("n_rows").cast(pl.Int64))
    )


def test_a_zone_whose_midnight_is_off_the_quarter_hour_is_fingerprinted_by_row() -> None:
    """Every zone in use today starts its days on a UTC quarter hour (Nepal's +05:45 too);
    São Paulo's local mean time of 1900 (-03:06:28) did not, and there a quarter hour can hold
    two local days: the scan then converts each row."""
    from cases.digests import is_quarter_hour_aligned

    assert is_quarter_hour_aligned("America/Sao_Paulo", date(2025, 1, 1), date(2025, 12, 31))
    assert is_quarter_hour_aligned("Asia/Kathmandu", date(2025, 1, 1), date(2025, 1, 31))
    assert not is_quarter_hour_aligned("America/Sao_Paulo", date(1900, 1, 1), date(1900, 1, 2))
