"""The lake's raw days one at a time (`core.lake`): a day exported by its UTC bounds holds the
local day's rows (a ping at 02:30 UTC is the evening before in Bento Gonçalves), kept days are
neither written nor removed by an export, a day reads back alone with its declared types (a
column declared later reads as null), a day is deleted whole, and a period with archived days
is refused on the store."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from core.errors import ConfigError
from core.lake import (
    check_not_archived,
    delete_day_partitions,
    export_lake,
    lake_raw_days,
    open_lake_day,
    raw_day_files,
)
from core.store import Store

TZ = "America/Sao_Paulo"
MAR1, MAR2, MAR3 = date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)


@pytest.fixture
def store(store_path: Path) -> Store:
    """Pings of O1 and O2: 2 Mar 11:00 and 2 Mar 23:30 local (3 Mar 02:30 UTC), 3 Mar 08:00."""
    s = Store.open(store_path)
    pings = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V2", "V1"],
            "event_at": [
                datetime(2026, 3, 2, 14, 0, tzinfo=UTC),
                datetime(2026, 3, 3, 2, 30, tzinfo=UTC),
                datetime(2026, 3, 3, 11, 0, tzinfo=UTC),
            ],
            "lat": [-29.17, -29.18, -29.19],
            "lon": [-51.52, -51.53, -51.54],
            "operator_id": ["O1", "O2", "O1"],
        }
    )
    s.append("vehicle_locations", pings, fill={"source": "t.csv", "ingested_at": datetime.now(UTC)})
    return s


def _day_rows(lake: Path, day: date) -> list[tuple[str, str]]:
    day_store = open_lake_day(lake, "vehicle_locations", day)
    assert day_store is not None
    with day_store:
        return day_store.query(
            "SELECT vehicle_id, operator_id FROM vehicle_locations ORDER BY event_at"
        ).rows()


def test_a_day_exported_by_its_bounds_holds_the_local_day(store: Store, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with store:
        export_lake(store, lake, TZ, days=(MAR2, MAR2), names=["vehicle_locations"])
    assert lake_raw_days(lake, "vehicle_locations") == [MAR2]
    assert _day_rows(lake, MAR2) == [("V1", "O1"), ("V2", "O2")]
    assert [p.parent.name for p in raw_day_files(lake, "vehicle_locations", MAR2)] == [
        "operator_id=O1",
        "operator_id=O2",
    ]
    assert open_lake_day(lake, "vehicle_locations", MAR3) is None


def test_kept_days_are_neither_written_nor_removed(store: Store, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with store:
        export_lake(store, lake, TZ, names=["vehicle_locations"])
        # 2 Mar is archived: the store loses its rows, its lake partition must survive as it is
        before = {p: p.read_bytes() for p in raw_day_files(lake, "vehicle_locations", MAR2)}
        store.con.execute(
            "INSERT INTO archived_days VALUES (?, 'vehicle_locations', 2, 'x', ?, now(), NULL, "
            "'t')",
            [MAR2, str(lake)],
        )
        store.con.execute(
            "DELETE FROM vehicle_locations WHERE event_at < ?",
            [datetime(2026, 3, 3, 3, tzinfo=UTC)],
        )
        # a late ping of 2 Mar arrives after the archival: not written over the archived copy
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT 99, 'V9', ?, -29.0, -51.0, NULL, NULL, NULL, "
            "NULL, NULL, NULL, NULL, 'O1', 'late.csv', now()",
            [datetime(2026, 3, 2, 20, tzinfo=UTC)],
        )
        export_lake(store, lake, TZ, names=["vehicle_locations"])
    assert {p: p.read_bytes() for p in raw_day_files(lake, "vehicle_locations", MAR2)} == before
    assert lake_raw_days(lake, "vehicle_locations") == [MAR2, MAR3]


def test_a_day_reads_back_with_a_later_column_as_null(store: Store, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with store:
        export_lake(store, lake, TZ, names=["vehicle_locations"])
    (one,) = raw_day_files(lake, "vehicle_locations", MAR3)
    pl.read_parquet(one).drop("reported_occupancy").write_parquet(one)  # as an older Pontual
    day_store = open_lake_day(lake, "vehicle_locations", MAR3)
    assert day_store is not None
    with day_store:
        got = day_store.read("vehicle_locations")
    assert got["reported_occupancy"].to_list() == [None]
    assert got.schema["event_at"] == pl.Datetime("us", "UTC")


def test_a_day_is_deleted_whole(store: Store, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with store:
        export_lake(store, lake, TZ, names=["vehicle_locations"])
    assert delete_day_partitions(lake, "vehicle_locations", MAR2)
    assert not delete_day_partitions(lake, "vehicle_locations", MAR1)
    assert lake_raw_days(lake, "vehicle_locations") == [MAR3]
    assert not list((lake / "vehicle_locations").glob(".old-*"))


def test_a_period_with_archived_days_is_refused(store: Store) -> None:
    with store:
        check_not_archived(store, MAR1, MAR3)  # nothing archived yet
        store.con.execute(
            "INSERT INTO archived_days VALUES (?, 'fare_transactions', 1, 'x', '/l', now(), "
            "NULL, 't')",
            [MAR2],
        )
        check_not_archived(store, MAR3, MAR3)
        with pytest.raises(ConfigError, match=r"1 day\(s\) of the period \(2026-03-02 to 2026"):
            check_not_archived(store, MAR1, MAR3)
