"""Loading GTFS feeds into the store: one transaction, idempotent, versions in force."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from gtfs.errors import GtfsError
from ingest.gtfs_feed import (
    GTFS_TABLES,
    ScheduleCache,
    load_gtfs,
    materialise_schedule,
    read_schedule_from_store,
)
from pontual.cli import main
from tests.conftest import FIXTURES, shared_data

TINY = FIXTURES / "gtfs" / "tiny_feed"
TABLES = (
    "feed_versions",
    *GTFS_TABLES,
    "scheduled_timetable_trips",
    "scheduled_frequency_trips",
    "scheduled_trips",
    "ingest_runs",
)


def _contents(store: Store) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table the loader writes, sorted: the store's state, to compare."""
    return {
        name: sorted(store.query(f'SELECT * FROM "{name}"').rows(), key=repr) for name in TABLES
    }


def test_load_tiny_feed(store_path: Path) -> None:
    with Store.open(store_path) as store:
        result = load_gtfs(store, TINY)
        assert result.is_new
        assert (result.valid_from, result.valid_to, result.crs_epsg) == (
            date(2024, 1, 1),
            date(2024, 1, 31),
            31982,
        )
        assert result.n_scheduled_trips == 22 * 7 + 9
        assert result.n_rows["gtfs_stop_times"] == 15
        version = store.read("feed_versions").row(0, named=True)
        assert (version["timezone"], version["n_warnings"]) == ("America/Sao_Paulo", 1)
        again = load_gtfs(store, TINY)
        assert not again.is_new and again.feed_id == result.feed_id
        assert store.count("scheduled_trips") == 163


def test_refused_feed_leaves_the_store_unchanged(store_path: Path) -> None:
    with Store.open(store_path) as store:
        load_gtfs(store, TINY, materialise_days=(date(2024, 1, 1), date(2024, 1, 3)))
        before = _contents(store)
        with pytest.raises(GtfsError, match=r"'S9' is not defined in shapes\.txt"):
            load_gtfs(store, FIXTURES / "gtfs" / "undefined_shape")
        assert _contents(store) == before


def test_failure_mid_write_rolls_everything_back(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store.open(store_path) as store:
        load_gtfs(store, TINY, materialise_days=(date(2024, 1, 1), date(2024, 1, 3)))
        before = _contents(store)
        real_append = Store.append

        def failing_append(self: Store, name: str, df: pl.DataFrame, **kw: object):
            # after feed_versions, every gtfs_* table and the first timetable trips
            if name == "scheduled_frequency_trips":
                raise OSError("disk full")
            return real_append(self, name, df, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(Store, "append", failing_append)
        with pytest.raises(OSError, match="disk full"):
            load_gtfs(store, FIXTURES / "gtfs" / "latin1_feed")  # valid, different content
        monkeypatch.undo()
        assert _contents(store) == before


def _second_version(tmp_path: Path) -> Path:
    """tiny_feed re-issued for 15 Jan - 15 Feb 2024 with T1 moved to 08:30."""
    v2 = tmp_path / "v2"
    shutil.copytree(TINY, v2)
    (v2 / "calendar_dates.txt").write_text("service_id,date,exception_type\nWK,20240201,2\n")
    cal = (v2 / "calendar.txt").read_text().replace("20240101,20240131", "20240115,20240215")
    (v2 / "calendar.txt").write_text(cal)
    st = (v2 / "stop_times.txt").read_text()
    st = st.replace("T1,08:00:00,08:00:00", "T1,08:30:00,08:30:00")
    (v2 / "stop_times.txt").write_text(
        st.replace("T1,08:05:00,08:05:00", "T1,08:35:00,08:35:00").replace(
            "T1,08:10:00,08:10:00", "T1,08:40:00,08:40:00"
        )
    )
    return v2


def test_each_date_uses_the_version_in_force(store_path: Path, tmp_path: Path) -> None:
    with Store.open(store_path) as store:
        v1 = load_gtfs(store, TINY)
        v2 = load_gtfs(store, _second_version(tmp_path))
        trips, stop_times, shapes = read_schedule_from_store(store, date(2024, 1, 10))
        assert set(trips["feed_id"]) == {v1.feed_id}
        assert trips.filter(pl.col("trip_id") == "T1")["planned_start_s"].item() == 8 * 3600
        trips, stop_times, shapes = read_schedule_from_store(store, date(2024, 1, 16))
        assert set(trips["feed_id"]) == {v2.feed_id}
        assert trips.filter(pl.col("trip_id") == "T1")["planned_start_s"].item() == 8 * 3600 + 1800
        assert set(stop_times["trip_id"]) == {"T1", "T2", "F0", "F1"}
        assert set(shapes["shape_id"]) == set(trips["shape_id"])
        # materialising again from the stored feeds gives the same trips
        written = materialise_schedule(store, date(2024, 1, 10), date(2024, 1, 16))
        # v1: Wed 10 - Sun 14 = 3 weekdays x 7 + 2 weekend days x 1; v2: Mon 15, Tue 16
        assert written == {v1.feed_id: 3 * 7 + 2, v2.feed_id: 2 * 7}
        again, _, _ = read_schedule_from_store(store, date(2024, 1, 16))
        assert again.equals(trips)


def test_a_run_reads_a_service_patterns_stop_times_once(store_path: Path, tmp_path: Path) -> None:
    with Store.open(store_path) as store:
        load_gtfs(store, TINY)
        load_gtfs(store, _second_version(tmp_path))
        cache = ScheduleCache()
        # Wed 10 and Thu 11: one weekday pattern; Sat 13: another; Tue 16: the next version
        days = [date(2024, 1, 10), date(2024, 1, 11), date(2024, 1, 13), date(2024, 1, 16)]
        for day in days:
            cached = read_schedule_from_store(store, day, cache)
            fresh = read_schedule_from_store(store, day)
            assert all(a.equals(b) for a, b in zip(cached, fresh, strict=True)), day
        assert len(cache.entries) == 3
        assert cached[1] is cache.entries[next(reversed(cache.entries))][0]


def test_sptrans_partial_feed_fails_on_missing_stop_times(store_path: Path) -> None:
    with Store.open(store_path) as store:
        with pytest.raises(
            GtfsError, match=r"stop_times\.txt: required file missing from the feed"
        ):
            load_gtfs(store, shared_data("gtfs_sptrans_20260131_partial"))
        assert store.count("feed_versions") == 0


@pytest.mark.parametrize(
    ("parts", "days", "epsg", "n_trips"),
    [
        (("gtfs_brazil_gtfs2gps", "poa.zip"), (date(2019, 2, 4), date(2019, 2, 4)), 31982, 194),
        (
            ("gtfs_brazil_gtfs2gps", "saopaulo.zip"),
            (date(2019, 2, 4), date(2019, 2, 4)),
            31983,
            6057,
        ),
        (
            ("gtfs_brazil_gtfs2gps", "fortaleza.zip"),
            (date(2019, 7, 1), date(2019, 7, 1)),
            31984,
            932,
        ),
        (("avl_wmata_transittraj", "gtfs"), (date(2026, 1, 7), date(2026, 1, 7)), 32618, 560),
    ],
)
def test_real_feeds_load(
    store_path: Path, parts: tuple[str, ...], days: tuple[date, date], epsg: int, n_trips: int
) -> None:
    with Store.open(store_path) as store:
        result = load_gtfs(store, shared_data(*parts), materialise_days=days)
        assert result.crs_epsg == epsg
        # n_trips: counted independently with the csv module (calendar, calendar_dates, and
        # range(start, end, headway) per frequency window)
        assert result.n_scheduled_trips == n_trips
        trips, stop_times, shapes = read_schedule_from_store(store, days[0])
        assert set(stop_times["trip_id"]) == set(trips["template_trip_id"])
        assert set(shapes["shape_id"]) == set(trips["shape_id"])
        assert (trips["planned_distance_m"] > 0).all()
        assert trips["planned_end_at"].ge(trips["planned_start_at"]).all()


def test_cli_load_validate_schedule(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--store", str(store_path)]
    assert main([*base, "gtfs", "validate", str(FIXTURES / "gtfs" / "undefined_route")]) == 2
    err = capsys.readouterr().err
    # the findings table folds long cells: compare its words, border characters dropped
    words = " ".join(err.replace("│", " ").split())
    assert "'R9' não está definido em routes.txt" in words, err
    assert main([*base, "gtfs", "load", str(FIXTURES / "gtfs" / "undefined_route")]) == 2
    assert "feed GTFS recusado" in capsys.readouterr().err
    assert (
        main([*base, "gtfs", "load", str(TINY), "--from", "2024-01-01", "--to", "2024-01-02"]) == 0
    )
    out = capsys.readouterr().out
    assert "viagens programadas de 2024-01-01 a 2024-01-02: 8" in out
    assert main([*base, "gtfs", "load", str(TINY)]) == 0
    assert "já está carregado" in capsys.readouterr().out
    assert main([*base, "gtfs", "schedule", "--from", "2024-01-03", "--to", "2024-01-04"]) == 0
    assert ": 14 viagens programadas" in capsys.readouterr().out
