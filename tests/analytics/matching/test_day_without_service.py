"""A day without scheduled trips (a holiday without service) is matched as an empty day: the
command goes on to the next day, and the day's derived rows are cleared (none are left from an
earlier timetable)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from core.store import Store
from pontual.cli import main

TINY = Path(__file__).parents[2] / "fixtures" / "gtfs" / "tiny_feed"


def test_a_range_with_a_day_without_service_is_matched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    feed = tmp_path / "feed"
    shutil.copytree(TINY, feed)
    with open(feed / "calendar_dates.txt", "a", encoding="utf-8") as dates:
        dates.write("WE,20240106,2\n")  # Saturday 6 January: the weekend service removed
    base = ["--store", str(tmp_path / "s.duckdb")]
    assert (
        main([*base, "gtfs", "load", str(feed), "--from", "2024-01-05", "--to", "2024-01-08"]) == 0
    )
    assert main([*base, "match", "--from", "2024-01-05", "--to", "2024-01-08"]) == 0
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        per_day = dict(
            store.query(
                "SELECT service_date, count(*) AS n FROM trip_outcomes GROUP BY service_date"
            ).iter_rows()
        )
        scheduled = dict(
            store.query(
                "SELECT service_date, count(*) AS n FROM scheduled_trips GROUP BY service_date"
            ).iter_rows()
        )
    assert date(2024, 1, 6) not in scheduled
    assert date(2024, 1, 6) not in per_day
    # every scheduled trip of the other days has its outcome (no pings: not evaluated)
    assert per_day == scheduled
    capsys.readouterr()
