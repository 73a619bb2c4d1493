"""A run over several days (`run_match_days`: the next day read and the day before written while
a day is matched, days committed together, networks shared by days of one service pattern)
writes exactly what matching the days one at a time writes; a day that fails keeps the days
before it written, as a day-by-day run does.

Three simulated weekdays (Monday 2 to Wednesday 4 March 2026, 12 buses) ingested through the
CLI, as a user does."""

from __future__ import annotations

import shutil
from dataclasses import fields
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analytics.matching.day import (
    BATCH_THREADS,
    DERIVED_TABLES,
    NetworkCache,
    build_day_network,
    count_batches,
    read_schedule,
    run_match_day,
    run_match_days,
)
from analytics.matching.network import Network, build_network
from analytics.matching.options import MatchOptions
from core.errors import InputError
from core.profile import load_profile
from core.schema import table
from core.store import Store
from pontual.cli import main
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate

FIRST = date(2026, 3, 2)
DAYS = [FIRST + timedelta(days=i) for i in range(3)]
PROFILE = "bento-goncalves-2021"


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the three days' feed, register, incidents, pings and taps, not matched."""
    folder = tmp_path_factory.mktemp("days")
    sim = folder / "sim"
    simulate(SimulationOptions(start=FIRST, days=3, n_vehicles=12, text_days=None, seed=5), sim)
    base = ["--quiet", "--store", str(folder / "pontual.duckdb")]
    gtfs = sim / "gtfs.zip" if (sim / "gtfs.zip").exists() else sim / "gtfs"
    commands = [
        ["gtfs", "load", str(gtfs), "--from", str(DAYS[0]), "--to", str(DAYS[-1])],
        ["ingest", "vehicles", str(sim / "vehicles.csv")],
        ["ingest", "incidents", str(sim / "incidents.csv")],
        ["ingest", "avl", str(sim / "avl.parquet")],
        ["ingest", "fares", str(sim / "fares.csv")],
    ]
    for command in commands:
        assert main([*base, *command]) == 0, command
    return folder / "pontual.duckdb"


def _copy(store: Path, to: Path) -> Path:
    to.mkdir()
    shutil.copy(store, to / store.name)
    key = store.with_suffix(".hashkey")
    if key.exists():
        shutil.copy(key, to / key.name)
    return to / store.name


def _derived(path: Path) -> dict[str, pl.DataFrame]:
    """Every derived table of matching, rows sorted by every column."""
    with Store.open(path, read_only=True) as store:
        frames = {name: store.read(name) for name in DERIVED_TABLES}
    return {name: f.sort(f.columns, nulls_last=True) for name, f in frames.items()}


def test_a_run_over_days_writes_what_a_day_at_a_time_writes(ingested: Path, tmp_path: Path) -> None:
    profile = load_profile(PROFILE)
    one = _copy(ingested, tmp_path / "one")
    with Store.open(one) as store:
        alone = {day: run_match_day(store, day, profile, MatchOptions()) for day in DAYS}
    expected = _derived(one)
    # every day its own transaction (1 row per group), and all three in one (the default)
    for name, group_rows in (("each", 1), ("grouped", 10**9)):
        path = _copy(ingested, tmp_path / name)
        with Store.open(path) as store:
            written = dict(
                run_match_days(store, DAYS, profile, MatchOptions(), group_rows=group_rows)
            )
        assert written == alone
        got = _derived(path)
        for t in DERIVED_TABLES:
            assert got[t].equals(expected[t]), (name, t)
    # the days were matched: every scheduled trip has an outcome, most of them run on GPS
    outcomes = expected["trip_outcomes"]
    assert sorted(outcomes["service_date"].unique().to_list()) == DAYS
    assert outcomes.height == sum(w["trip_outcomes"] for w in alone.values())
    assert expected["stop_visits"].height > 10 * outcomes.height
    assert (outcomes["outcome"] == "not_evaluated").mean() < 0.2  # type: ignore[operator]


def test_a_day_that_fails_keeps_the_days_before_it(ingested: Path, tmp_path: Path) -> None:
    path = _copy(ingested, tmp_path / "fail")
    with Store.open(path) as store:
        # the feed stops covering the third day: reading its schedule fails
        store.con.execute("UPDATE feed_versions SET valid_to = ?", [DAYS[1]])
        done = []
        with pytest.raises(InputError, match="no GTFS feed in force"):
            for day, _ in run_match_days(store, DAYS, load_profile(PROFILE), MatchOptions()):
                done.append(day)
        assert done == DAYS[:2]
        days = store.query("SELECT DISTINCT service_date FROM trip_outcomes ORDER BY 1")
    assert days["service_date"].to_list() == DAYS[:2]


def _same_network(a: Network, b: Network) -> None:
    for f in fields(Network):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, pl.DataFrame):
            assert x.equals(y), f.name
        elif isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
    assert a.grid.__dict__.keys() == b.grid.__dict__.keys()


def test_days_of_one_service_pattern_share_their_network(ingested: Path) -> None:
    options = MatchOptions()
    cache = NetworkCache()
    with Store.open(ingested, read_only=True) as store:
        schedules = [read_schedule(store, day) for day in DAYS]
    networks = [build_day_network(s, options, cache) for s in schedules]
    # three weekdays, one pattern: built once, its geometry shared, each day's own trip times
    assert len(cache.entries) == 1
    assert networks[1].grid is networks[0].grid
    for schedule, network in zip(schedules, networks, strict=True):
        fresh = build_network(
            schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, options
        )
        _same_network(network, fresh)
    assert networks[1].trip_times is not None and networks[0].trip_times is not None
    assert not networks[1].trip_times.equals(networks[0].trip_times)
    # another pattern (a day without one of its trips) is built anew, the first kept
    fewer = schedules[0]
    fewer.trips = fewer.trips.filter(
        pl.col("template_trip_id") != fewer.trips["template_trip_id"][0]
    )
    build_day_network(fewer, options, cache)
    assert len(cache.entries) == 2


def test_batches_come_in_whole_rounds() -> None:
    # a 300-bus day of ~440 k pings: 4 batches on 2 threads, not 3 (one core idle for the third)
    assert BATCH_THREADS == 2
    assert count_batches(440_000, 150_000, 1) == 4
    assert count_batches(0, 150_000, 1) == 2
    assert count_batches(11_000_000, 150_000, 1) == 74
    assert count_batches(440_000, 150_000, 3) == 3  # three processes: rounds of three
    assert count_batches(500_000, 150_000, 3) == 6
    assert count_batches(100, 150_000, 4) == 4


def test_the_derived_tables_are_declared() -> None:
    assert all(table(name).derived for name in DERIVED_TABLES)
