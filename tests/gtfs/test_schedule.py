"""Service days, frequencies, times past midnight and UTC instants, on the hand-made tiny feed.

tiny_feed (America/Sao_Paulo, UTC-3 in 2024): WK runs Mon-Fri in January 2024 except the
1st (removed), WE runs Sat-Sun plus the 1st (added). T1 08:00-08:10, T2 23:50-24:20 (WK),
T3 09:00-09:10 (WE); F0 every 20 min 06:00-07:00 (exact_times 0), F1 every 30 min 10:00-11:00
(exact_times 1), both 15-minute templates.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl
import pytest

from core.tables.reference import SCHEDULED_TRIPS
from gtfs.calendar import compute_service_dates, compute_validity
from gtfs.frequencies import expand_frequencies
from gtfs.read import read_feed
from gtfs.schedule import build_scheduled_trips, service_instant, to_store_frames
from tests.conftest import FIXTURES

TINY = FIXTURES / "gtfs" / "tiny_feed"


@pytest.fixture(scope="module")
def tiny():
    return read_feed(TINY)


def test_service_dates_apply_calendar_dates(tiny) -> None:
    days = compute_service_dates(tiny, date(2024, 1, 1), date(2024, 1, 7))
    by_day = days.group_by("service_date").agg(pl.col("service_id").sort()).sort("service_date")
    assert by_day.rows() == [
        (date(2024, 1, 1), ["WE"]),
        (date(2024, 1, 2), ["WK"]),
        (date(2024, 1, 3), ["WK"]),
        (date(2024, 1, 4), ["WK"]),
        (date(2024, 1, 5), ["WK"]),
        (date(2024, 1, 6), ["WE"]),
        (date(2024, 1, 7), ["WE"]),
    ]
    assert compute_validity(tiny) == (date(2024, 1, 1), date(2024, 1, 31))


def test_frequencies_expand_before_end_time(tiny) -> None:
    out = expand_frequencies(tiny["frequencies"])
    assert out.select("trip_id", "start_s", "headway_s", "is_exact_times").rows() == [
        ("F0@06:00:00", 21600, 1200, False),
        ("F0@06:20:00", 22800, 1200, False),
        ("F0@06:40:00", 24000, 1200, False),
        ("F1@10:00:00", 36000, 1800, True),
        ("F1@10:30:00", 37800, 1800, True),
    ]


def test_scheduled_trips_of_a_weekday(tiny) -> None:
    s = build_scheduled_trips(tiny, date(2024, 1, 2), date(2024, 1, 2), feed_id="f1")
    assert s.columns == SCHEDULED_TRIPS.column_names
    assert s["trip_id"].to_list() == [
        "F0@06:00:00", "F0@06:20:00", "F0@06:40:00", "T1", "F1@10:00:00", "F1@10:30:00", "T2",
    ]  # fmt: skip
    t1 = s.row(by_predicate=pl.col("trip_id") == "T1", named=True)
    assert t1["planned_start_at"] == datetime(2024, 1, 2, 11, 0, tzinfo=UTC)
    assert t1["planned_end_at"] == datetime(2024, 1, 2, 11, 10, tzinfo=UTC)
    assert (t1["first_stop_id"], t1["last_stop_id"], t1["n_stops"]) == ("A", "C", 3)
    t2 = s.row(by_predicate=pl.col("trip_id") == "T2", named=True)
    assert t2["planned_end_s"] == 24 * 3600 + 20 * 60
    assert t2["planned_end_at"] == datetime(2024, 1, 3, 3, 20, tzinfo=UTC)
    f0 = s.row(by_predicate=pl.col("trip_id") == "F0@06:20:00", named=True)
    assert (f0["template_trip_id"], f0["planned_start_s"], f0["planned_end_s"]) == (
        "F0",
        22800,
        23700,
    )
    assert (f0["headway_s"], f0["is_exact_times"]) == (1200, False)
    assert f0["planned_start_at"] == datetime(2024, 1, 2, 9, 20, tzinfo=UTC)


def test_scheduled_trips_of_january(tiny) -> None:
    s = build_scheduled_trips(tiny, date(2024, 1, 1), date(2024, 1, 31))
    # 22 weekdays (the 1st removed) x 7 trips + 9 weekend days (8 + the 1st) x 1 trip
    assert s.height == 22 * 7 + 9
    assert s.filter(pl.col("service_date") == date(2024, 1, 1))["trip_id"].to_list() == ["T3"]


def test_noon_minus_12h_on_a_dst_start_day() -> None:
    # Sao Paulo started DST at 00:00 on 2018-11-04 (clocks to 01:00): the service-day reference
    # is noon - 12 h = 23:00 of the 3rd in local time, i.e. 02:00 UTC; 06:00:00 is 08:00 UTC.
    out = pl.select(
        service_instant(pl.lit(date(2018, 11, 4)), pl.lit(6 * 3600), "America/Sao_Paulo")
    ).item()
    assert out == datetime(2018, 11, 4, 8, 0, tzinfo=UTC)
    normal = pl.select(
        service_instant(pl.lit(date(2018, 11, 5)), pl.lit(6 * 3600), "America/Sao_Paulo")
    ).item()
    assert normal == datetime(2018, 11, 5, 8, 0, tzinfo=UTC)  # 06:00 at UTC-2


def test_store_frames_conform_to_their_tables(tiny) -> None:
    frames = to_store_frames(tiny, "f1")
    assert {k: v.height for k, v in frames.items()} == {
        "gtfs_agency": 1, "gtfs_routes": 2, "gtfs_stops": 3, "gtfs_trips": 5, "gtfs_stop_times": 15,
        "gtfs_shapes": 3 + 3 + 3, "gtfs_calendar": 2, "gtfs_calendar_dates": 2, "gtfs_frequencies": 2,
    }  # fmt: skip
    trips = frames["gtfs_trips"].sort("trip_id")
    # T2 and T3 have no shape_id: each gets the shape of its own stop sequence
    assert (
        trips.filter(pl.col("trip_id").is_in(["F0", "F1", "T1"]))["shape_id"].to_list()
        == ["S1"] * 3
    )
    t2, t3 = trips.filter(pl.col("trip_id").is_in(["T2", "T3"]))["shape_id"].to_list()
    assert t2.startswith("stops:") and t3.startswith("stops:") and t2 != t3
    assert frames["gtfs_calendar"]["monday"].to_list() == [True, False]


def test_scheduled_instants_across_a_dst_start(tmp_path) -> None:
    # The time-zone arithmetic is done once per service date and shared by that date's trips:
    # each date keeps its own reference. The tiny feed moved to Nov 2018 (Sao Paulo DST began
    # at 00:00 on Sunday the 4th): T3 (WE) at 09:00 is 12:00 UTC on Saturday the 3rd (UTC-3),
    # but 11:00 UTC on the 4th (reference 23:00 of the 3rd = 02:00 UTC, + 9 h); T1 (WK) at
    # 08:00 on Monday the 5th (UTC-2) is 10:00 UTC.
    feed_dir = tmp_path / "feed"
    feed_dir.mkdir()
    for f in TINY.iterdir():
        text = f.read_text().replace("20240101", "20181101").replace("20240131", "20181130")
        (feed_dir / f.name).write_text(text)
    s = build_scheduled_trips(read_feed(feed_dir), date(2018, 11, 3), date(2018, 11, 5))
    at = {(r["service_date"], r["trip_id"]): r["planned_start_at"] for r in s.iter_rows(named=True)}
    assert at[(date(2018, 11, 3), "T3")] == datetime(2018, 11, 3, 12, 0, tzinfo=UTC)
    assert at[(date(2018, 11, 4), "T3")] == datetime(2018, 11, 4, 11, 0, tzinfo=UTC)
    assert at[(date(2018, 11, 5), "T1")] == datetime(2018, 11, 5, 10, 0, tzinfo=UTC)
    # and T2's end past midnight counts from its own date's reference: 24:20 of the 5th
    t2 = s.row(by_predicate=pl.col("trip_id") == "T2", named=True)
    assert t2["planned_end_at"] == datetime(2018, 11, 6, 2, 20, tzinfo=UTC)
