"""A load writes its scheduled trips a few dates at a time: the same rows as one build."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import ingest.gtfs_feed
from core.store import Store
from gtfs.read import read_feed
from gtfs.schedule import build_scheduled_trips
from ingest.gtfs_feed import load_gtfs
from tests.conftest import FIXTURES

TINY = FIXTURES / "gtfs" / "tiny_feed"


@pytest.mark.parametrize("trip_days", [0, 5])
def test_chunked_schedule_equals_one_build(
    store_path: Path, monkeypatch: pytest.MonkeyPatch, trip_days: int
) -> None:
    # 3-date chunks over January 2024: 11 chunks, the last one short (31 = 10 x 3 + 1); or,
    # with a row budget of 5 days of the feed's trips, 5-date chunks (31 = 6 x 5 + 1)
    n_trips = read_feed(TINY).tables["trips"].height
    monkeypatch.setattr(ingest.gtfs_feed, "SCHEDULE_CHUNK_DAYS", 3)
    monkeypatch.setattr(ingest.gtfs_feed, "SCHEDULE_CHUNK_ROWS", trip_days * n_trips)
    with Store.open(store_path) as store:
        result = load_gtfs(store, TINY)
        stored = store.read("scheduled_trips")
    once = build_scheduled_trips(
        read_feed(TINY), date(2024, 1, 1), date(2024, 1, 31), feed_id=result.feed_id
    )
    # 22 weekdays x 7 trips + 9 weekend days x 1 trip (hand count in tests/gtfs/test_schedule)
    assert result.n_scheduled_trips == stored.height == once.height == 22 * 7 + 9
    key = ["service_date", "trip_id"]
    assert_frame_equal(stored.sort(key), once.sort(key))
    assert stored["service_date"].n_unique() == 31
    assert stored.filter(pl.col("service_date") == date(2024, 1, 31)).height == 7
