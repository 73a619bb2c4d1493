"""Cleaning a trace: duplicates, order, gaps and outliers on hand-built pings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from analytics.matching.clean import clean_pings
from analytics.matching.options import MatchOptions

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)


def _pings(rows: list[tuple[int, str, float, float, float]]) -> pl.DataFrame:
    """Pings as (ping_id, vehicle_id, seconds after T0, x_m, y_m)."""
    return pl.DataFrame(
        {
            "ping_id": [r[0] for r in rows],
            "vehicle_id": [r[1] for r in rows],
            "event_at": [T0 + timedelta(seconds=r[2]) for r in rows],
            "x_m": [r[3] for r in rows],
            "y_m": [r[4] for r in rows],
        }
    ).with_columns(pl.col("event_at").dt.cast_time_unit("us"))


def test_duplicates_keep_the_lowest_id_and_rows_come_by_vehicle_then_time() -> None:
    pings = _pings(
        [
            (7, "B", 30.0, 0.0, 0.0),
            (5, "A", 30.0, 100.0, 0.0),
            (3, "A", 0.0, 0.0, 0.0),
            (4, "A", 30.0, 100.0, 0.0),  # the same instant as ping 5: a duplicate
            (6, "B", 0.0, 0.0, 0.0),
        ]
    )
    got = clean_pings(pings, MatchOptions())
    assert got["ping_id"].to_list() == [3, 4, 6, 7]
    assert got["vehicle_rank"].to_list() == [0, 0, 1, 1]
    assert got["t_s"][0] == T0.timestamp()
    assert got["dt_s"].to_list() == [None, 30.0, None, 30.0]


def test_gaps_and_jumps_are_flagged() -> None:
    options = MatchOptions()
    # steady at 10 m/s along x, one fix 1 km off the line (a leap away and back), then a
    # silence of 200 s (> gap_s 180 s)
    pings = _pings(
        [
            (1, "A", 0.0, 0.0, 0.0),
            (2, "A", 10.0, 100.0, 0.0),
            (3, "A", 20.0, 200.0, 1000.0),
            (4, "A", 30.0, 300.0, 0.0),
            (5, "A", 230.0, 400.0, 0.0),
        ]
    )
    got = clean_pings(pings, options)
    assert got["is_outlier"].to_list() == [False, False, True, False, False]
    assert got["is_gap_before"].to_list() == [False, False, False, False, True]
