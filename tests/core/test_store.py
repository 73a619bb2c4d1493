"""The DuckDB store: schema, idempotent appends, transactions, migrations, snapshots."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from core import store as store_module
from core.errors import SchemaVersionError, StoreError
from core.migrations import all_migrations, latest_version
from core.schema import TABLES, table
from core.store import Store, _first_repeated_key, open_snapshot, snapshot_path

PINGS = pl.DataFrame(
    {
        "vehicle_id": ["1001", "1001", "1002"],
        "event_at": [
            datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC),
            datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC),
            datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC),
        ],
        "lat": [-29.17, -29.171, -29.18],
        "lon": [-51.52, -51.521, -51.53],
        "source": ["pings.csv"] * 3,
        "ingested_at": [datetime(2026, 3, 2, 10, 0, tzinfo=UTC)] * 3,
    }
)


def test_new_store_has_every_table_at_the_latest_version(store_path: Path) -> None:
    with Store.open(store_path) as store:
        assert store.schema_version == latest_version()
        tables = set(store.query("SELECT table_name FROM information_schema.tables")["table_name"])
    expected = {name for m in all_migrations() for name in m.tables} | {"schema_version"}
    assert expected <= tables
    assert {"vehicle_locations", "fare_transactions", "quarantine", "scheduled_trips"} <= tables


def _catalogue(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every part of a store's schema a reader or writer can see."""

    def rows(sql: str) -> list[tuple[object, ...]]:
        return sorted(store.con.execute(sql).fetchall(), key=repr)

    return {
        "tables": rows(
            "SELECT table_name, table_type FROM information_schema.tables "
            "WHERE table_schema = 'main'"
        ),
        "columns": rows(
            "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, "
            "column_default FROM information_schema.columns WHERE table_schema = 'main'"
        ),
        "keys": rows(
            "SELECT table_name, constraint_type, constraint_column_names::VARCHAR "
            "FROM duckdb_constraints() WHERE schema_name = 'main'"
        ),
        "views": rows("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal"),
        "sequences": rows(
            "SELECT sequence_name, start_value, increment_by FROM duckdb_sequences()"
        ),
        "indexes": rows("SELECT index_name, table_name, sql FROM duckdb_indexes()"),
        "versions": rows("SELECT version, description FROM schema_version"),
    }


def test_fresh_store_has_the_migrated_catalogue(tmp_path: Path) -> None:
    # A new store is created at the latest schema in one batch (ADR 0107); a store migrated
    # from version 1 through every migration must end with exactly the same catalogue.
    with Store.open(tmp_path / "fresh.duckdb") as fresh:
        created = _catalogue(fresh)
    migrated_path = tmp_path / "migrated.duckdb"
    Store.open(migrated_path, target_version=1).close()
    with Store.open(migrated_path) as migrated:
        walked = _catalogue(migrated)
    assert created == walked
    assert sorted(int(str(v)) for v, _ in created["versions"]) == list(
        range(1, latest_version() + 1)
    )
    assert ("scheduled_trips", "VIEW") in created["tables"]
    assert ("scheduled_timetable_trips", "BASE TABLE") in created["tables"]
    assert len(created["columns"]) > 500  # every declared table, not an empty catalogue


def test_append_is_idempotent_and_assigns_ping_ids(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = store.append("vehicle_locations", PINGS)
        again = store.append("vehicle_locations", PINGS)
        assert (first.n_inserted, first.n_duplicate) == (3, 0)
        assert (again.n_inserted, again.n_duplicate) == (0, 3)
        stored = store.read("vehicle_locations")
    assert stored.height == 3
    assert stored["ping_id"].n_unique() == 3
    assert stored.schema["event_at"] == pl.Datetime("us", "UTC")


def test_read_only_some_columns_keeps_their_order_and_dtypes(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS)
        some = store.read(
            "vehicle_locations", "lat IS NOT NULL", [], columns=["vehicle_id", "event_at", "lat"]
        )
        full = store.read("vehicle_locations", "lat IS NOT NULL", [])
    assert some.columns == ["vehicle_id", "event_at", "lat"]
    assert some.schema["event_at"] == pl.Datetime("us", "UTC")
    assert some.sort("event_at").equals(full.select(some.columns).sort("event_at"))


def test_ping_ids_follow_row_order_and_are_never_reused(store_path: Path) -> None:
    later = PINGS.with_columns(pl.col("event_at").dt.offset_by("1h"))
    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS)
        with pytest.raises(RuntimeError), store.transaction():
            store.append("vehicle_locations", later.head(2))  # ids 4, 5 drawn, then undone
            raise RuntimeError("crash mid-ingest")
        # A repeated key within the batch: one row, one id.
        store.append("vehicle_locations", pl.concat([later, later.head(1)]))
    with Store.open(store_path) as store:  # the sequence survives a reopen
        store.append("vehicle_locations", PINGS.with_columns(vehicle_id=pl.lit("1003")).tail(2))
        rows = store.query(
            "SELECT ping_id, vehicle_id, hour(event_at) AS h FROM vehicle_locations ORDER BY 1"
        ).rows()
    assert rows == [
        (1, "1001", 9),
        (2, "1001", 9),
        (3, "1002", 9),
        (6, "1001", 10),
        (7, "1001", 10),
        (8, "1002", 10),
        (9, "1003", 9),
        (10, "1003", 9),
    ]


def test_failed_transaction_leaves_the_store_unchanged(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS.head(1))
        with pytest.raises(RuntimeError), store.transaction():
            store.append("vehicle_locations", PINGS)
            raise RuntimeError("crash mid-ingest")
        assert store.count("vehicle_locations") == 1


def test_replace_swaps_a_partition(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS)
        store.replace("vehicle_locations", PINGS.head(1), "vehicle_id = ?", ["1001"])
        counts = store.query(
            "SELECT vehicle_id, count(*) AS n FROM vehicle_locations GROUP BY 1 ORDER BY 1"
        )
    assert counts.rows() == [("1001", 1), ("1002", 1)]


def test_older_store_is_migrated_and_keeps_its_rows(store_path: Path) -> None:
    # A store written at schema version 1 (the first release), with data in it.
    with Store.open(store_path, target_version=1) as old:
        assert old.schema_version == 1
        old.append("vehicle_locations", PINGS)
    with Store.open(store_path) as store:
        assert store.schema_version == latest_version()
        assert store.count("vehicle_locations") == 3
        applied = store.query("SELECT version FROM schema_version ORDER BY version")[
            "version"
        ].to_list()
    assert applied == list(range(1, latest_version() + 1))


def test_newer_store_is_refused(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.con.execute(
            "INSERT INTO schema_version VALUES (999, 'from the future', now(), '99.0')"
        ).fetchall()
    with pytest.raises(SchemaVersionError) as err:
        Store.open(store_path)
    assert "newer" in err.value.what and err.value.where == str(store_path)


def test_readers_use_the_snapshot_while_the_writer_holds_the_file(store_path: Path) -> None:
    writer = Store.open(store_path)
    writer.append("vehicle_locations", PINGS)
    writer.publish_snapshot()
    # DuckDB refuses a second process on a file open for writing; the snapshot is separate.
    with open_snapshot(store_path) as reader:
        assert reader.count("vehicle_locations") == 3
        with pytest.raises(StoreError):
            reader.append("vehicle_locations", PINGS)
    writer.append("vehicle_locations", PINGS.with_columns(pl.lit("1003").alias("vehicle_id")))
    writer.publish_snapshot()
    writer.close()
    with open_snapshot(store_path) as reader:
        # 1003 at 09:00:00 twice in that frame: one of them is a duplicate
        assert reader.count("vehicle_locations") == 5
    assert snapshot_path(store_path).name == "pontual.snapshot.duckdb"


def test_read_only_open_of_a_missing_store_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as err:
        Store.open(tmp_path / "none.duckdb", read_only=True)
    assert err.value.hint is not None and "pontual" in err.value.hint


def test_schema_rejects_nulls_in_required_columns(store_path: Path) -> None:
    bad = PINGS.with_columns(pl.lit(None, pl.Float64).alias("lat"))
    with (
        Store.open(store_path) as store,
        pytest.raises(Exception, match="nulls in required columns"),
    ):
        store.append("vehicle_locations", bad)


def test_store_file_is_a_real_duckdb_file(store_path: Path) -> None:
    Store.open(store_path).close()
    con = duckdb.connect(str(store_path), read_only=True)
    assert con.execute("SELECT max(version) FROM schema_version").fetchone() == (latest_version(),)
    con.close()


@pytest.mark.parametrize("in_memory", [True, False])
def test_append_skips_stored_and_repeated_keys_in_a_partly_new_batch(
    store_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    if not in_memory:  # as if the stored keys in the batch's range were too many to read
        monkeypatch.setattr(store_module, "_MAX_STORED_KEYS_PER_ROW", 0)
        monkeypatch.setattr(store_module, "_MIN_KEYS_IN_MEMORY", 0)
    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS.head(2))
        # Row 0 and 1 are stored, row 2 is new, row 3 repeats row 2's key with another position.
        batch = pl.concat([PINGS, PINGS.tail(1).with_columns(pl.lit(-29.2).alias("lat"))])
        result = store.append("vehicle_locations", batch)
        assert (result.n_inserted, result.n_duplicate) == (1, 3)
        rows = store.query(
            "SELECT vehicle_id, lat FROM vehicle_locations ORDER BY vehicle_id, event_at"
        ).rows()
        # The first of repeated rows is kept.
        assert rows == [("1001", -29.17), ("1001", -29.171), ("1002", -29.18)]
        ids = store.query("SELECT ping_id FROM vehicle_locations ORDER BY ping_id")["ping_id"]
        assert ids.to_list()[:2] == [1, 2] and ids.n_unique() == 3


def test_fares_key_migration_keeps_the_taps_and_drops_the_id_only_key(store_path: Path) -> None:
    # A store of the release before migration 6: fare_transactions keyed by transaction_id.
    with Store.open(store_path, target_version=4) as old:
        old.con.execute("DROP TABLE fare_transactions").fetchall()
        old.con.execute(
            "CREATE TABLE fare_transactions (transaction_id VARCHAR NOT NULL, "
            "event_at TIMESTAMPTZ NOT NULL, vehicle_id VARCHAR, route_id VARCHAR, "
            "card_hash VARCHAR, fare_class VARCHAR NOT NULL, amount DOUBLE, operator_id VARCHAR, "
            "source VARCHAR NOT NULL, ingested_at TIMESTAMPTZ NOT NULL, "
            "PRIMARY KEY (transaction_id))"
        ).fetchall()
        old.con.execute(
            "INSERT INTO fare_transactions VALUES ('T1', '2026-03-02 12:00:00+00', '101', 'L1', "
            "'h1', 'full', 4.5, 'O1', 'f.csv', '2026-03-02 13:00:00+00')"
        ).fetchall()
    other = pl.DataFrame(
        {
            "transaction_id": ["T1", "T1"],
            "event_at": [datetime(2026, 3, 2, 12, 0, tzinfo=UTC)] * 2,
            "fare_class": ["full"] * 2,
            "operator_id": ["O2", "O1"],
            "source": ["g.csv"] * 2,
            "ingested_at": [datetime(2026, 3, 2, 14, 0, tzinfo=UTC)] * 2,
        }
    )
    with Store.open(store_path) as store:
        assert store.schema_version >= 6
        kept = store.read("fare_transactions")
        # O2's T1 is another tap; O1's T1 at the same instant is the stored one.
        result = store.append("fare_transactions", other)
        keys = store.query(
            "SELECT operator_id, transaction_id, source FROM fare_transactions ORDER BY 1"
        ).rows()
    assert kept.select("transaction_id", "card_hash", "amount").rows() == [("T1", "h1", 4.5)]
    assert (result.n_inserted, result.n_duplicate) == (1, 1)
    assert keys == [("O1", "T1", "f.csv"), ("O2", "T1", "g.csv")]


@pytest.mark.parametrize("in_memory", [True, False])
def test_a_null_key_value_matches_a_null_one(
    store_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    # Taps of a file without operators (and no fleet register): a re-run adds nothing.
    if not in_memory:
        monkeypatch.setattr(store_module, "_MAX_STORED_KEYS_PER_ROW", 0)
        monkeypatch.setattr(store_module, "_MIN_KEYS_IN_MEMORY", 0)
    taps = pl.DataFrame(
        {
            "transaction_id": ["T1", "T2"],
            "event_at": [datetime(2026, 3, 2, 12, 0, tzinfo=UTC)] * 2,
            "fare_class": ["full"] * 2,
            "source": ["f.csv"] * 2,
            "ingested_at": [datetime(2026, 3, 2, 14, 0, tzinfo=UTC)] * 2,
        }
    )
    with Store.open(store_path) as store:
        store.append("fare_transactions", taps)
        again = store.append("fare_transactions", taps)
        assert store.count("fare_transactions") == 2
    assert again.n_inserted == 0


def test_store_and_snapshot_files_are_not_readable_by_others(store_path: Path) -> None:
    import stat

    def mode(p: Path) -> int:
        return stat.S_IMODE(p.stat().st_mode)

    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS)
        snap = store.publish_snapshot()
        assert (mode(store_path), mode(snap)) == (0o600, 0o600)
        assert mode(store_path.parent) & 0o077 == 0
        # A store shared with its group (readers under another account) shares its snapshot.
        store_path.chmod(0o640)
        assert mode(store.publish_snapshot()) == 0o640


def test_an_open_failure_says_why(tmp_path: Path) -> None:
    import subprocess
    import sys

    damaged = tmp_path / "damaged.duckdb"
    damaged.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError) as err:
        Store.open(damaged)
    assert "damaged or is not a Pontual store" in err.value.what
    assert err.value.hint is not None and "backup" in err.value.hint
    with pytest.raises(StoreError) as err:
        Store.open(tmp_path / "missing.duckdb", read_only=True)
    assert err.value.what == "store not found"
    with pytest.raises(StoreError) as err:
        Store.open(tmp_path)
    assert "is a folder" in err.value.what
    locked = tmp_path / "locked.duckdb"
    Store.open(locked).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb,sys,time; c=duckdb.connect(sys.argv[1]); "
         "print('held', flush=True); time.sleep(30)", str(locked)],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        for read_only in (False, True):
            with pytest.raises(StoreError) as err:
                Store.open(locked, read_only=read_only)
            assert err.value.what == (
                f"the store is open for writing by another process (PID {holder.pid})"
            )
    finally:
        holder.kill()
        holder.wait()


def test_append_of_new_keys_inserts_them_and_a_repeated_key_still_raises(
    store_path: Path,
) -> None:
    """`new_keys` skips INSERT OR IGNORE's conflict handling (a new feed's tables), not the
    key: a repeated one is refused and the transaction leaves nothing."""
    routes = pl.DataFrame(
        {"feed_id": ["f1"] * 3, "route_id": ["a", "b", "c"], "route_type": [3, 3, 3]}
    )
    with Store.open(store_path) as s:
        assert s.append("gtfs_routes", routes, new_keys=True).n_inserted == 3
        with pytest.raises(duckdb.ConstraintException), s.transaction():
            s.append("gtfs_routes", routes.head(1).with_columns(route_id=pl.lit("d")))
            s.append("gtfs_routes", routes.head(1), new_keys=True)
        assert sorted(s.read("gtfs_routes")["route_id"].to_list()) == ["a", "b", "c"]
        # without it, the stored key is skipped as before
        assert s.append("gtfs_routes", routes).n_inserted == 0


def _coverage(day: date, vehicles: list[str]) -> pl.DataFrame:
    """`avl_coverage` rows of `day` (a derived table, its key without an index)."""
    n = len(vehicles)
    return pl.DataFrame(
        {
            "service_date": [day] * n,
            "operator_id": ["O1"] * n,
            "vehicle_id": vehicles,
            "is_reporting": [True] * n,
            "n_pings": list(range(10, 10 + n)),
            "n_minutes_with_fix": [5] * n,
            "n_trips_run": [2] * n,
            "pontual_version": ["test"] * n,
            "profile_id": ["bento-goncalves-2021"] * n,
        }
    )


def test_derived_tables_have_no_key_index_but_annual_grades(store_path: Path) -> None:
    # ADR 0111: a derived table's key is checked on each write, not held by an ART index.
    with Store.open(store_path) as store:
        keyed = set(
            store.query(
                "SELECT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
            )["table_name"]
        )
    derived = {name for name, decl in TABLES.items() if decl.derived}
    assert derived & keyed == {"annual_grades"}
    assert {"stop_visits", "trip_loads", "tap_placements"} <= {
        name for name in derived if table(name).is_key_checked
    }
    # raw and reference tables keep the index that makes re-loading idempotent
    assert {"gtfs_stop_times", "passenger_counts", "incidents"} <= keyed


def test_a_batchs_repeated_key_is_found_by_hash_then_compared_exactly() -> None:
    keys = pl.DataFrame(
        {"vehicle_id": ["a", "b", "a", "c", None, None], "run_index": [1, 1, 1, 2, None, None]}
    )
    # the first repeated key, with its count; a null equals a null (as SQL's GROUP BY)
    assert _first_repeated_key(keys) == (("a", 1), 2)
    assert _first_repeated_key(keys[3:]) == ((None, None), 2)
    assert _first_repeated_key(keys[:2]) is None


def test_a_repeated_key_in_a_derived_write_raises_and_writes_nothing(store_path: Path) -> None:
    day = date(2026, 3, 2)
    with Store.open(store_path) as store:
        store.replace("avl_coverage", _coverage(day, ["1001", "1002"]), "service_date = ?", [day])
        # the same day replaced again: its rows deleted first, so the keys are free
        n = store.replace(
            "avl_coverage", _coverage(day, ["1001", "1003"]), "service_date = ?", [day]
        )
        assert n == 2
        with pytest.raises(StoreError) as err:  # the batch repeats a key
            store.replace(
                "avl_coverage", _coverage(day, ["1004", "1004"]), "service_date = ?", [day]
            )
        assert "2 rows for table avl_coverage have the same key" in err.value.what
        assert "vehicle_id=1004" in err.value.what and err.value.hint is not None
        with pytest.raises(StoreError, match="have the same key"):  # a stored row has it
            store.append("avl_coverage", _coverage(day, ["1005", "1003"]))
        # tap ids repeat (ADR 0040): the same id at another instant is another tap
        at = datetime(2026, 3, 2, 12, tzinfo=UTC)
        taps = pl.DataFrame(
            {
                "transaction_id": ["T0", "T0"],
                "service_date": [day, day + timedelta(days=7)],
                "event_at": [at, at + timedelta(days=7)],
                "placement": ["no_vehicle"] * 2,
                "pontual_version": ["test"] * 2,
                "profile_id": ["bento-goncalves-2021"] * 2,
            }
        )
        assert store.append("tap_placements", taps).n_inserted == 2
        with pytest.raises(StoreError, match="have the same key"):  # one tap on two days
            store.append(
                "tap_placements",
                pl.DataFrame(
                    {
                        "transaction_id": ["T1", "T1"],
                        "service_date": [day, day + timedelta(days=1)],
                        "event_at": [datetime(2026, 3, 2, 12, tzinfo=UTC)] * 2,
                        "placement": ["no_vehicle"] * 2,
                        "pontual_version": ["test"] * 2,
                        "profile_id": ["bento-goncalves-2021"] * 2,
                    }
                ),
            )
        rows = store.query("SELECT vehicle_id FROM avl_coverage ORDER BY 1")["vehicle_id"]
        assert store.count("tap_placements") == 2
    assert rows.to_list() == ["1001", "1003"]


def test_migration_14_drops_the_derived_keys_and_keeps_the_rows(store_path: Path) -> None:
    # A store of the release before migration 14: stop_visits and avl_coverage with their
    # primary keys (the declarations of then, with the key written in).
    day = date(2026, 3, 2)
    with Store.open(store_path, target_version=13) as old:
        for name in ("stop_visits", "avl_coverage"):
            decl = table(name)
            keyed = (
                decl.create_sql().rstrip(")").rstrip()
                + ",\n  PRIMARY KEY ("
                + ", ".join(f'"{k}"' for k in decl.primary_key)
                + "))"
            )
            old.con.execute(f'DROP TABLE "{name}"').fetchall()
            old.con.execute(keyed).fetchall()
        old.append("avl_coverage", _coverage(day, ["1001", "1002", "1003"]))
        before = old.read("avl_coverage")
        n_keys = old.query(
            "SELECT count(*) AS n FROM duckdb_constraints() WHERE constraint_type "
            "= 'PRIMARY KEY' AND table_name IN ('stop_visits', 'avl_coverage')"
        )
        assert n_keys["n"][0] == 2
    with Store.open(store_path) as store:
        assert store.schema_version == latest_version() >= 14
        after = store.read("avl_coverage")
        constraints = store.query(
            "SELECT table_name, constraint_type FROM duckdb_constraints() "
            "WHERE table_name IN ('stop_visits', 'avl_coverage')"
        )
        nullable = store.query(
            "SELECT column_name, is_nullable FROM information_schema.columns "
            "WHERE table_name = 'avl_coverage' AND column_name IN ('vehicle_id', 'is_reserve') "
            "ORDER BY 1"
        ).rows()
        tables = set(store.query("SELECT table_name FROM duckdb_tables()")["table_name"])
    assert after.equals(before)  # the rows, in their stored order
    assert "PRIMARY KEY" not in constraints["constraint_type"].to_list()
    assert "NOT NULL" in constraints["constraint_type"].to_list()
    assert nullable == [("is_reserve", "YES"), ("vehicle_id", "NO")]
    assert not any("_before_" in name for name in tables)


def test_migration_15_adds_raw_day_fingerprints_and_keeps_the_digests(store_path: Path) -> None:
    # A store of the release before migration 15: pings and the reference digest of their day.
    digest = pl.DataFrame(
        {
            "service_date": [date(2026, 3, 2)],
            "table_name": ["vehicle_locations"],
            "n_rows": [3],
            "sha256": ["ab" * 32],
            "digest_method": ["duckdb-text-v1:ping_id,vehicle_id"],
            "time_zone": ["America/Sao_Paulo"],
            "digested_at": [datetime(2026, 3, 3, tzinfo=UTC)],
            "pontual_version": ["0.1.0"],
        }
    )
    with Store.open(store_path, target_version=14) as old:
        old.append("vehicle_locations", PINGS)
        old.append("raw_day_digests", digest)
        had = set(old.query("SELECT table_name FROM duckdb_tables()")["table_name"])
    assert "raw_day_fingerprints" not in had
    with Store.open(store_path) as store:
        assert store.schema_version == latest_version() >= 15
        columns = store.query(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'raw_day_fingerprints' ORDER BY ordinal_position"
        ).rows()
        n_fingerprints = store.count("raw_day_fingerprints")
        kept = store.read("raw_day_digests")
        n_pings = store.count("vehicle_locations")
    assert columns == [
        ("service_date", "DATE"),
        ("table_name", "VARCHAR"),
        ("time_zone", "VARCHAR"),
        ("n_rows", "BIGINT"),
        ("row_hash_sum_a", "UBIGINT"),
        ("row_hash_sum_b", "UBIGINT"),
        ("duckdb_version", "VARCHAR"),
        ("sha256", "VARCHAR"),
        ("digest_method", "VARCHAR"),
        ("digested_at", "TIMESTAMP WITH TIME ZONE"),
        ("pontual_version", "VARCHAR"),
    ]
    # empty until a day is digested again (an ingest touching it, `pontual verify`): until
    # then a report hashes each day in full, as before
    assert n_fingerprints == 0
    assert kept.equals(digest) and n_pings == 3


def test_migration_16_gives_tap_placements_their_taps_operator(store_path: Path) -> None:
    # A store of the release before migration 16: tap_placements keyed (transaction_id,
    # event_at), without the operator (ADR 0103), and the taps of its placements.
    at = datetime(2026, 3, 2, 12, tzinfo=UTC)
    taps = pl.DataFrame(
        {
            "transaction_id": ["T1", "T2", "T3", "T3"],
            "event_at": [at, at, at + timedelta(minutes=1), at + timedelta(minutes=1)],
            "fare_class": ["full"] * 4,
            # T2 has no operator; T3's second tap (B's) came in after the placements
            "operator_id": ["A", None, "A", "B"],
            "source": ["taps.csv"] * 4,
            "ingested_at": [at] * 4,
        }
    )
    placements = pl.DataFrame(
        {
            # T4's tap is not in the store (its raw day archived to the lake)
            "transaction_id": ["T1", "T2", "T3", "T4"],
            "service_date": [date(2026, 3, 2)] * 4,
            "event_at": [at, at, at + timedelta(minutes=1), at + timedelta(minutes=2)],
            "vehicle_id": ["1001"] * 4,
            "placement": ["outside_trips"] * 4,
            "pontual_version": ["0.1.0"] * 4,
            "profile_id": ["bento-goncalves-2021"] * 4,
        }
    )
    with Store.open(store_path, target_version=15) as old:
        old.con.execute("ALTER TABLE tap_placements DROP COLUMN operator_id").fetchall()
        old.con.register("old_placements", placements.to_arrow())
        old.con.execute(
            "INSERT INTO tap_placements BY NAME SELECT * FROM old_placements"
        ).fetchall()
        old.append("fare_transactions", taps)
        assert old.count("fare_transactions") == 4
    with Store.open(store_path) as store:
        assert store.schema_version == latest_version() >= 16
        columns = store.query(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'tap_placements' ORDER BY ordinal_position"
        )["column_name"].to_list()
        after = store.read("tap_placements")
        # the key is now the taps' own: B's T3 is another placement (T1's twin too)
        twins = placements.filter(pl.col("transaction_id").is_in(["T1", "T3"])).with_columns(
            pl.lit("B").alias("operator_id")
        )
        assert store.append("tap_placements", twins).n_inserted == 2
        with pytest.raises(StoreError, match="have the same key"):  # T2's, null matching null
            store.append("tap_placements", placements.filter(pl.col("transaction_id") == "T2"))
        tables = set(store.query("SELECT table_name FROM duckdb_tables()")["table_name"])
    assert columns == table("tap_placements").column_names
    assert columns[:2] == ["transaction_id", "operator_id"]
    # each placement takes the operator of its one tap; none when the id and instant have no
    # tap, or two (the days' crowding, computed again, places both)
    assert after.select("transaction_id", "operator_id").rows() == [
        ("T1", "A"),
        ("T2", None),
        ("T3", None),
        ("T4", None),
    ]
    assert after.drop("operator_id").equals(
        table("tap_placements").conform(placements).drop("operator_id")
    )
    assert not any("_before_" in name for name in tables)


def test_a_reader_sees_what_is_committed_while_another_thread_writes(store_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    more = PINGS.with_columns(pl.col("vehicle_id") + "9")
    with Store.open(store_path) as store:
        store.append("vehicle_locations", PINGS)
        reader = store.reader()
        try:
            with store.transaction(), ThreadPoolExecutor(max_workers=1) as writing:
                # the writer's connection on a thread of its own, the reader on this one
                n = writing.submit(lambda: store.append("vehicle_locations", more)).result()
                assert n.n_inserted == 3
                seen = reader.read("vehicle_locations")
                # the open transaction's rows are not there yet; the instants read in UTC
                assert seen.height == 3
                assert (
                    seen.schema["event_at"] == table("vehicle_locations").polars_schema["event_at"]
                )
                assert seen["event_at"].min() == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
            assert reader.count("vehicle_locations") == 6
        finally:
            reader.close()
        assert store.count("vehicle_locations") == 6


def test_a_writer_beside_commits_its_own_transaction(store_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    more = PINGS.with_columns(pl.col("vehicle_id") + "9")
    with Store.open(store_path) as store:
        beside = store.writer_beside()
        try:
            with beside.transaction():
                # its view of the store starts here: rows committed later are not seen
                assert beside.count("vehicle_locations") == 0
                store.append("vehicle_locations", PINGS)
                assert beside.count("vehicle_locations") == 0
                with ThreadPoolExecutor(max_workers=1) as worker:
                    done = worker.submit(lambda: beside.append("vehicle_locations", more))
                    assert done.result().n_inserted == 3
                assert store.count("vehicle_locations") == 3  # not committed yet
            assert store.count("vehicle_locations") == 6
            # instants read in UTC, as on the store's own handle
            assert beside.read("vehicle_locations")["event_at"].min() == datetime(
                2026, 3, 2, 9, 0, tzinfo=UTC
            )
        finally:
            beside.close()
    with Store.open(store_path, read_only=True) as reader, pytest.raises(StoreError):
        reader.writer_beside()
