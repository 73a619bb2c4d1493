"""The `scheduled_trips` view gives every frequency instance the row the load used to expand.

A load stores a frequency template once per service day (`scheduled_frequency_trips`, ADR 0102)
and the view expands it. The reference here is the expansion as `build_scheduled_trips` wrote it
before (each frequencies.txt window expanded into starts, every start joined to its template's
summary, instants counted from the GTFS "noon minus 12 h" of the date): the view's rows of a
service day, and the in-memory `build_scheduled_trips`, must equal it column for column, on the
sample city (its C20 line runs from frequencies.txt) and on the São Paulo feed (every line).
"""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from core.migrations import latest_version
from core.store import Store
from core.tables.reference import SCHEDULED_TRIPS
from gtfs.calendar import compute_service_dates
from gtfs.frequencies import expand_frequencies
from gtfs.read import Feed, read_feed
from gtfs.schedule import (
    build_geometry,
    build_scheduled_trips,
    build_trip_summary,
    feed_timezone,
    service_instant,
)
from ingest.gtfs_feed import load_gtfs, materialise_schedule, read_schedule_from_store
from sample_data.gtfs_out import build_gtfs, write_gtfs
from sample_data.simulate import build_network, default_options
from tests.conftest import FIXTURES, shared_data

KEY = ["service_date", "trip_id"]


def expand_as_before(feed: Feed, day: date, feed_id: str) -> pl.DataFrame:
    """The scheduled trips of `day` as the load expanded them before ADR 0102."""
    summary = build_trip_summary(feed, build_geometry(feed))
    expanded = expand_frequencies(feed["frequencies"])
    plain = summary.filter(
        ~pl.col("trip_id").is_in(expanded["template_trip_id"].unique().implode())
    ).with_columns(
        pl.col("trip_id").alias("template_trip_id"),
        pl.col("first_s").alias("planned_start_s"),
        pl.col("last_s").alias("planned_end_s"),
        pl.lit(None, pl.Int32).alias("headway_s"),
        pl.lit(True).alias("is_exact_times"),
    )
    instances = (
        expanded.join(
            summary.rename({"trip_id": "template_trip_id"}), on="template_trip_id", how="inner"
        )
        .with_columns(
            pl.col("start_s").alias("planned_start_s"),
            (pl.col("start_s") + pl.col("last_s") - pl.col("first_s")).alias("planned_end_s"),
        )
        .drop("start_s")
    )
    tz = feed_timezone(feed)
    out = (
        pl.concat([plain, instances], how="diagonal_relaxed")
        .join(compute_service_dates(feed, day, day), on="service_id")
        .with_columns(
            service_instant(pl.col("service_date"), pl.col("planned_start_s"), tz).alias(
                "planned_start_at"
            ),
            service_instant(pl.col("service_date"), pl.col("planned_end_s"), tz).alias(
                "planned_end_at"
            ),
            pl.lit(feed_id).alias("feed_id"),
            pl.col("planned_distance_m").fill_null(0.0),
        )
    )
    return SCHEDULED_TRIPS.conform(out).sort("service_date", "planned_start_s", "trip_id")


def check_days(
    feed_path: Path, store_path: Path, days: tuple[date, date], checked: list[date]
) -> int:
    """Load the feed for `days`; on each `checked` date compare the view, the matcher's read
    and the in-memory build with the old expansion. Returns the frequency instances seen."""
    feed = read_feed(feed_path)
    n_instances = 0
    with Store.open(store_path) as store:
        result = load_gtfs(store, feed_path, materialise_days=days)
        n_view = store.query(
            "SELECT count(*) AS n FROM scheduled_trips WHERE service_date BETWEEN ? AND ?",
            list(days),
        )["n"][0]
        assert result.n_scheduled_trips == n_view
        # compact: one stored row per template and day, never one per instance
        stored = store.query("SELECT count(*) AS n FROM scheduled_timetable_trips")["n"][0]
        templates = store.query("SELECT count(*) AS n FROM scheduled_frequency_trips")["n"][0]
        assert stored + templates < n_view
        for day in checked:
            before = expand_as_before(feed, day, result.feed_id)
            view = store.read("scheduled_trips", "service_date = ?", [day])
            assert_frame_equal(view.sort(KEY), before.sort(KEY))
            trips, _, _ = read_schedule_from_store(store, day)
            assert_frame_equal(trips.sort(KEY), before.sort(KEY))
            # the in-memory build (the matcher of a simulated day): same rows, same order
            built = build_scheduled_trips(feed, day, day, feed_id=result.feed_id)
            assert_frame_equal(built, before)
            n_instances += before.filter(pl.col("trip_id").str.contains("@")).height
        # materialising the dates again (from the stored feed) gives the same view
        first = store.read("scheduled_trips", "service_date = ?", [checked[0]]).sort(KEY)
        materialise_schedule(store, checked[0], checked[0])
        again = store.read("scheduled_trips", "service_date = ?", [checked[0]]).sort(KEY)
        assert_frame_equal(again, first)
    return n_instances


def test_sample_city_frequency_line(tmp_path: Path, store_path: Path) -> None:
    tt, stops = build_network(default_options())
    write_gtfs(build_gtfs(tt, stops, range(2026, 2027)), tmp_path / "gtfs", tmp_path / "g.zip")
    # Mon 20 - Sun 26 April 2026, with the Tiradentes holiday (Tue 21) in it
    checked = [date(2026, 4, 20), date(2026, 4, 21), date(2026, 4, 25)]
    n = check_days(tmp_path / "gtfs", store_path, (date(2026, 4, 20), date(2026, 4, 26)), checked)
    assert n > 0  # C20 instances were compared


def test_sao_paulo_feed(store_path: Path) -> None:
    feed = shared_data("gtfs_brazil_gtfs2gps", "saopaulo.zip")
    # Mon 4 - Sun 10 February 2019: weekday, Saturday and Sunday services
    checked = [date(2019, 2, 4), date(2019, 2, 9), date(2019, 2, 10)]
    n = check_days(feed, store_path, (date(2019, 2, 4), date(2019, 2, 10)), checked)
    # the weekday alone runs 6057 trips (hand count in tests/ingest/test_gtfs_feed.py)
    assert n >= 6057


def test_windows_past_midnight(tmp_path: Path, store_path: Path) -> None:
    """Instances after 24:00 keep GTFS hours in their ids ('F0@24:10:00') and land on the next
    calendar day's instants, in the view as in the expansion."""
    feed = tmp_path / "tiny"
    shutil.copytree(FIXTURES / "gtfs" / "tiny_feed", feed)
    with (feed / "frequencies.txt").open("a") as f:
        f.write("F0,24:10:00,25:00:00,1500,0\n")
    day = date(2024, 1, 2)
    check_days(feed, store_path, (day, day + timedelta(days=1)), [day])
    with Store.open(store_path) as store:
        late = store.read("scheduled_trips", "service_date = ? AND planned_start_s >= 86400", [day])
    assert late["trip_id"].sort().to_list() == ["F0@24:10:00", "F0@24:35:00"]
    # 00:10 on the 3rd in São Paulo (UTC-3)
    assert late["planned_start_at"].min() == datetime(2024, 1, 3, 3, 10, tzinfo=UTC)


def test_a_store_with_expanded_trips_migrates_into_the_view(store_path: Path) -> None:
    """Migration 13 on a store whose `scheduled_trips` table holds expanded instances (as loads
    wrote them before): they move into `scheduled_timetable_trips` and read back unchanged."""
    feed = read_feed(FIXTURES / "gtfs" / "tiny_feed")
    day = date(2024, 1, 2)
    before = expand_as_before(feed, day, "f-old")
    with Store.open(store_path, target_version=12) as old:
        old.append("scheduled_trips", before)  # still a table at version 12
    with Store.open(store_path) as store:
        assert store.schema_version == latest_version()
        view = store.read("scheduled_trips", "service_date = ?", [day])
        stored = store.read("scheduled_timetable_trips")
        templates = store.count("scheduled_frequency_trips")
    assert_frame_equal(view.sort(KEY), before.sort(KEY))
    assert stored.height == before.height == 7 and templates == 0
