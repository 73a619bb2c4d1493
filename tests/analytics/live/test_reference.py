"""Trips of the previous service day that run past midnight join the live day's reference."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl

from analytics.live.feeds import trip_descriptor_columns
from analytics.live.reference import build_overnight_trips

UTC_US = pl.Datetime("us", "UTC")


def _previous_day() -> pl.DataFrame:
    """Monday 2026-03-02 in Bento Gonçalves (UTC-3): A runs 23:00-23:40 local, B 23:50-00:35
    (GTFS 23:50:00-24:35:00)."""
    return pl.DataFrame(
        {
            "service_date": [date(2026, 3, 2)] * 2,
            "trip_id": ["A", "B"],
            "template_trip_id": ["A", "B"],
            "route_id": ["T10", "T10"],
            "direction_id": [0, 1],
            "planned_start_s": [82800, 85800],
            "planned_start_at": [
                datetime(2026, 3, 3, 2, 0, tzinfo=UTC),
                datetime(2026, 3, 3, 2, 50, tzinfo=UTC),
            ],
            "planned_end_at": [
                datetime(2026, 3, 3, 2, 40, tzinfo=UTC),
                datetime(2026, 3, 3, 3, 35, tzinfo=UTC),
            ],
        },
        schema_overrides={
            "direction_id": pl.Int32,
            "planned_start_s": pl.Int32,
            "planned_start_at": UTC_US,
            "planned_end_at": UTC_US,
        },
    )


def test_only_trips_ending_after_midnight_are_kept_under_a_day_qualified_id() -> None:
    kept = build_overnight_trips(_previous_day(), date(2026, 3, 3), "America/Sao_Paulo")
    assert kept["trip_id"].to_list() == ["B~20260302"]
    assert kept["template_trip_id"].to_list() == ["B"]


def test_an_overnight_trip_is_described_by_its_own_service_day() -> None:
    kept = build_overnight_trips(_previous_day(), date(2026, 3, 3), "America/Sao_Paulo")
    row = trip_descriptor_columns(kept, date(2026, 3, 3)).row(0, named=True)
    assert (row["feed_trip_id"], row["start_date"], row["start_time"]) == (
        "B",
        "20260302",
        "23:50:00",
    )
