"""The readers' snapshot published without a whole copy (ADR 0104): big tables as one file per
(table, month), only the changed months written again, the same rows as the store, atomic."""

from __future__ import annotations

import os
import stat
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from core.store import (
    SNAPSHOT_MODE_ENV,
    Store,
    open_snapshot,
    snapshot_mode,
    snapshot_parts_dir,
    snapshot_path,
)

# part every table that can be parted, however small: the tests' stores are tiny
PART_ALL = 1


@pytest.fixture(autouse=True)
def months_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests publish by month files (ADR 0104), the opt-in mode; the default copies."""
    monkeypatch.setenv(SNAPSHOT_MODE_ENV, "months")


def pings(day: date, vehicles: tuple[str, ...] = ("1001", "1002"), n: int = 3) -> pl.DataFrame:
    """`n` pings 30 s apart per vehicle on `day` (UTC), 09:00 onwards."""
    start = datetime(day.year, day.month, day.day, 9, tzinfo=UTC)
    rows = [
        (v, start + timedelta(seconds=30 * i), -29.17 - i / 1e4, -51.52 + i / 1e4)
        for v in vehicles
        for i in range(n)
    ]
    frame = pl.DataFrame(rows, schema=["vehicle_id", "event_at", "lat", "lon"], orient="row")
    return frame.with_columns(
        source=pl.lit("pings.csv"), ingested_at=pl.lit(datetime(2026, 3, 2, tzinfo=UTC))
    )


def coverage(day: date, n_pings: int) -> pl.DataFrame:
    """Two vehicles' `avl_coverage` rows of `day` (a derived table replaced per day)."""
    return pl.DataFrame(
        {
            "service_date": [day, day],
            "operator_id": ["O1", "O1"],
            "vehicle_id": ["1001", "1002"],
            "is_reporting": [True, True],
            "n_pings": [n_pings, n_pings + 1],
            "n_minutes_with_fix": [10, 11],
            "n_trips_run": [2, 3],
            "pontual_version": ["test", "test"],
            "profile_id": ["bento-goncalves-2021"] * 2,
        }
    )


def replace_day(store: Store, day: date, n_pings: int) -> None:
    store.replace("avl_coverage", coverage(day, n_pings), "service_date = ?", [day])


def every_table(store: Store) -> dict[str, pl.DataFrame]:
    """Every store table's rows in one order (the snapshot's own catalogue tables aside)."""
    names = store.query(
        "SELECT table_name FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND table_name NOT IN ('_snapshot_parts', '_snapshot_copied') "
        "GROUP BY table_name"
    )["table_name"]
    return {n: store.query(f'SELECT * FROM "{n}" ORDER BY ALL') for n in sorted(names)}


def assert_same_rows(store_path: Path) -> None:
    with Store.open(store_path, read_only=True) as store:
        expected = every_table(store)
    with open_snapshot(store_path) as snap:
        got = every_table(snap)
    assert sorted(got) == sorted(expected)
    for name, frame in expected.items():
        assert got[name].schema == frame.schema, name
        assert got[name].equals(frame), name


def part_files(store_path: Path) -> dict[str, str]:
    """'table.month' -> the file now holding it."""
    folder = snapshot_parts_dir(store_path)
    return {".".join(p.name.split(".")[:2]): p.name for p in folder.iterdir() if p.is_file()}


def token(file: str) -> str:
    """The publication (or write ahead) that wrote a month file: `table.month.token.duckdb`."""
    return file.split(".")[2]


def test_big_tables_are_published_per_month_with_the_stores_rows(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
        store.append("vehicle_locations", pings(date(2026, 2, 2)))
        replace_day(store, date(2026, 1, 30), 40)
        store.publish_snapshot(part_min_rows=PART_ALL)
    assert {"vehicle_locations.2026-01", "vehicle_locations.2026-02"} <= set(part_files(store_path))
    assert "avl_coverage.2026-01" in part_files(store_path)
    assert_same_rows(store_path)
    with open_snapshot(store_path) as snap:
        # a view over the month files, read as the table was: columns, dtypes, the filter
        march = snap.read("vehicle_locations", "event_at >= ?", [datetime(2026, 2, 1, tzinfo=UTC)])
        assert march.height == 6 and march["ping_id"].min() == 7


def test_only_the_months_written_since_are_written_again(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
        store.append("vehicle_locations", pings(date(2026, 2, 2)))
        replace_day(store, date(2026, 1, 30), 40)
        replace_day(store, date(2026, 2, 2), 50)
        store.publish_snapshot(part_min_rows=PART_ALL)
        before = part_files(store_path)
        store.append("vehicle_locations", pings(date(2026, 2, 3)))
        # same row count, other values: found by what the store wrote, not by counting
        replace_day(store, date(2026, 1, 30), 41)
        store.publish_snapshot(part_min_rows=PART_ALL)
        after = part_files(store_path)
    unchanged = ("vehicle_locations.2026-01", "avl_coverage.2026-02")
    assert all(after[k] == before[k] for k in unchanged)
    rewritten = ("vehicle_locations.2026-02", "avl_coverage.2026-01")
    assert all(after[k] != before[k] for k in rewritten)
    assert len(after) == len(before)  # the replaced files are gone
    assert_same_rows(store_path)


def test_what_a_failed_command_wrote_is_published_by_the_next(store_path: Path) -> None:
    with Store.open(store_path) as store:
        replace_day(store, date(2026, 1, 30), 40)
        store.publish_snapshot(part_min_rows=PART_ALL)
    # a command writes, commits, then fails before publishing (Context.store publishes only
    # on success); the journal beside the store remembers the month
    with Store.open(store_path) as store:
        replace_day(store, date(2026, 1, 30), 99)
    with Store.open(store_path) as store:
        store.publish_snapshot(part_min_rows=PART_ALL)
    with open_snapshot(store_path) as snap:
        assert snap.read("avl_coverage")["n_pings"].to_list() == [99, 100]
    assert_same_rows(store_path)


def test_a_delete_outside_append_and_replace_is_found(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
        store.publish_snapshot(part_min_rows=PART_ALL)
        # what `ingest.files.delete_file_run` does: plain SQL, the row count moves
        store.con.execute("DELETE FROM vehicle_locations WHERE vehicle_id = '1002'").fetchall()
        store.publish_snapshot(part_min_rows=PART_ALL)
    with open_snapshot(store_path) as snap:
        assert snap.count("vehicle_locations") == 3
    assert_same_rows(store_path)


def test_a_finished_months_files_written_ahead_are_the_ones_published(store_path: Path) -> None:
    with Store.open(store_path) as store:
        replace_day(store, date(2026, 1, 30), 40)
        replace_day(store, date(2026, 1, 31), 41)
        # January is finished (a year's match goes on with February): its file is written
        # on a thread beside the command
        assert store.write_parts_ahead({"2026-01"}, part_min_rows=PART_ALL) == 1
        replace_day(store, date(2026, 2, 1), 50)
        store.publish_snapshot(part_min_rows=PART_ALL)
        files = part_files(store_path)
    # taken, not written again: its name is not the publication's (`table.month.token`)
    assert token(files["avl_coverage.2026-01"]) != token(files["avl_coverage.2026-02"])
    assert_same_rows(store_path)


def test_a_month_written_after_its_file_went_ahead_is_written_again(store_path: Path) -> None:
    with Store.open(store_path) as store:
        replace_day(store, date(2026, 1, 30), 40)
        store.write_parts_ahead({"2026-01"}, part_min_rows=PART_ALL)
        # the same row count, other values: the file written ahead is stale
        replace_day(store, date(2026, 1, 30), 77)
        replace_day(store, date(2026, 2, 1), 50)
        store.publish_snapshot(part_min_rows=PART_ALL)
        files = part_files(store_path)
    assert token(files["avl_coverage.2026-01"]) == token(files["avl_coverage.2026-02"])
    assert len(files) == 2  # the stale file is removed
    with open_snapshot(store_path) as snap:
        assert sorted(snap.read("avl_coverage")["n_pings"]) == [50, 51, 77, 78]
    assert_same_rows(store_path)


def test_nothing_goes_ahead_inside_a_transaction_or_by_whole_copy(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store.open(store_path) as store:
        replace_day(store, date(2026, 1, 30), 40)
        with store.transaction():  # uncommitted rows are not the month's rows yet
            replace_day(store, date(2026, 1, 31), 41)
            assert store.write_parts_ahead({"2026-01"}, part_min_rows=PART_ALL) == 0
        monkeypatch.setenv(SNAPSHOT_MODE_ENV, "copy")
        assert store.write_parts_ahead({"2026-01"}, part_min_rows=PART_ALL) == 0


def test_a_reader_keeps_the_snapshot_it_opened(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
        store.publish_snapshot(part_min_rows=PART_ALL)
        with open_snapshot(store_path) as old:
            store.append("vehicle_locations", pings(date(2026, 1, 31)))
            store.publish_snapshot(part_min_rows=PART_ALL)
            # its January file was replaced and removed: still the rows it opened, no mix
            assert old.count("vehicle_locations") == 6
            with open_snapshot(store_path) as new:
                assert new.count("vehicle_locations") == 12


def test_small_tables_are_copied_and_a_table_that_grows_is_parted(store_path: Path) -> None:
    with Store.open(store_path) as store:
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
        store.publish_snapshot(part_min_rows=7)
        assert not part_files(store_path)
        store.append("vehicle_locations", pings(date(2026, 1, 31)))
        store.publish_snapshot(part_min_rows=7)
        assert set(part_files(store_path)) == {"vehicle_locations.2026-01"}
    assert_same_rows(store_path)


def routes(n: int) -> pl.DataFrame:
    """`n` routes of one feed (a table with no month: published whole, ADR 0114)."""
    return pl.DataFrame(
        {
            "feed_id": ["f1"] * n,
            "route_id": [f"R{i}" for i in range(n)],
            "agency_id": ["A"] * n,
            "route_short_name": [str(i) for i in range(n)],
            "route_long_name": [f"Linha {i}" for i in range(n)],
            "route_type": [3] * n,
            "route_color": ["FF0000"] * n,
            "route_text_color": ["FFFFFF"] * n,
        }
    )


def test_a_table_without_month_is_one_file_written_again_when_its_rows_change(
    store_path: Path,
) -> None:
    def publish(whole_min_rows: int = 3) -> str | None:
        with Store.open(store_path) as store:
            store.publish_snapshot(part_min_rows=PART_ALL, whole_min_rows=whole_min_rows)
        assert_same_rows(store_path)
        return part_files(store_path).get("gtfs_routes.all")

    with Store.open(store_path) as store:
        store.append("gtfs_routes", routes(3))
    first = publish()
    assert first is not None
    with Store.open(store_path) as store:  # another table written: the routes keep their file
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
    assert publish() == first
    with Store.open(store_path) as store:
        # an UPDATE that keeps the row count, outside append/replace: the rows' digest moved
        sql = "UPDATE gtfs_routes SET route_color = '00FF00' WHERE route_id = 'R1'"
        store.con.execute(sql).fetchall()
    second = publish()
    assert second not in (None, first)
    with open_snapshot(store_path) as snap:
        assert snap.read("gtfs_routes", "route_id = 'R1'")["route_color"][0] == "00FF00"
    with Store.open(store_path) as store:
        assert store.append("gtfs_routes", routes(4)).n_inserted == 1
    assert publish() not in (None, first, second)
    # under the threshold: copied into the catalogue, and its file removed
    assert publish(whole_min_rows=5) is None


def test_each_catalogue_starts_from_the_last_and_copies_what_changed(store_path: Path) -> None:
    """Small tables are copied into the catalogue; a new catalogue starts as a copy of the last
    one and copies again the tables whose rows moved, an UPDATE included (ADR 0114)."""
    sizes = []
    for i in range(12):
        with Store.open(store_path) as store:
            if i == 0:
                store.append("gtfs_routes", routes(3))
                store.append("vehicle_locations", pings(date(2026, 1, 30)))
            elif i % 3 == 0:  # the same row count, other values
                sql = f"UPDATE gtfs_routes SET route_color = '{i:06d}' WHERE route_id = 'R1'"
                store.con.execute(sql).fetchall()
            elif i % 3 == 1:  # a month file replaced, the same months
                replace_day(store, date(2026, 1, 30), 40 + i)
            store.publish_snapshot(part_min_rows=4, whole_min_rows=1_000)
        assert_same_rows(store_path)
        sizes.append(snapshot_path(store_path).resolve().stat().st_size)
    with open_snapshot(store_path) as snap:
        assert snap.read("gtfs_routes", "route_id = 'R1'")["route_color"][0] == "000009"
        assert snap.read("avl_coverage")["n_pings"].to_list() == [50, 51]
    assert "gtfs_routes.all" not in part_files(store_path)  # copied, under 1 000 rows
    assert max(sizes[4:]) <= max(sizes[:4])  # freed blocks are used again: no growth


def test_month_files_are_as_private_as_the_snapshot(store_path: Path) -> None:
    def mode(p: Path) -> int:
        return stat.S_IMODE(p.stat().st_mode)

    with Store.open(store_path) as store:
        store.append("vehicle_locations", pings(date(2026, 1, 30)))
        store.publish_snapshot(part_min_rows=PART_ALL)
        folder = snapshot_parts_dir(store_path)
        files = [p for p in folder.rglob("*") if p.is_file()]
        folders = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
        assert len(files) == 2 and len(folders) == 2  # a month file; the catalogue, its folder
        assert {mode(p) for p in files} == {0o600}
        assert {mode(p) for p in folders} == {0o700}
        store_path.chmod(0o640)
        store.append("vehicle_locations", pings(date(2026, 1, 31)))
        store.publish_snapshot(part_min_rows=PART_ALL)
        files = [p for p in folder.rglob("*") if p.is_file()]
        folders = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
        assert len(files) == 2 and len(folders) == 2  # the old ones are gone
        assert {mode(p) for p in files} == {0o640}
        assert {mode(p) for p in folders} == {0o750}
        assert mode(snapshot_path(store_path)) == 0o640
    # nothing is left beside the store but the store, the snapshot and its folder
    assert sorted(os.listdir(store_path.parent)) == sorted(
        [store_path.name, snapshot_path(store_path).name, folder.name]
    )


def test_the_default_mode_copies_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the setting the snapshot is a plain copy, as before ADR 0104; a later month
    publication after a copy writes every month (the copy names no month file)."""
    monkeypatch.delenv(SNAPSHOT_MODE_ENV)
    assert snapshot_mode() == "copy"
    path = tmp_path / "s.duckdb"
    with Store.open(path) as store:
        store.append("vehicle_locations", pings(date(2026, 3, 2)))
        store.publish_snapshot()
    snap = snapshot_path(path)
    assert snap.is_file() and not snap.is_symlink()
    assert not snapshot_parts_dir(path).exists()
    with open_snapshot(path) as reader:
        assert reader.count("vehicle_locations") == 6
    with Store.open(path) as store:
        store.publish_snapshot(part_min_rows=PART_ALL, mode="months")
    assert snap.is_symlink()
    with open_snapshot(path) as reader:
        assert reader.count("vehicle_locations") == 6
    monkeypatch.setenv(SNAPSHOT_MODE_ENV, "nope")
    with pytest.raises(Exception, match="unknown snapshot mode"):
        snapshot_mode()
