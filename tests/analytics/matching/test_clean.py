"""Cleaning a trace: duplicates, order, gaps and outliers on hand-built pings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

from analytics.matching.clean import _sort_by_vehicle_time, clean_pings
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


def test_the_packed_sort_is_the_three_column_sort() -> None:
    """`_sort_by_vehicle_time` packs vehicle rank and time into one integer key: on random
    traces with repeated instants (ping ids in order, as the store gives them, and shuffled),
    with null instants, and with a span too long to pack, it gives the rows of the plain sort
    by vehicle_rank, event_at, ping_id."""
    rng = np.random.default_rng(7)
    n = 2_000
    for case in ("stored order", "shuffled", "null instant", "long span"):
        seconds = rng.integers(0, 400, n).astype(float)  # many repeated instants
        if case == "long span":
            seconds[0] = 20 * 86_400.0  # past the 40 bits of microseconds
        frame = _pings(
            [
                (i, f"V{rng.integers(0, 30)}", s, 0.0, 0.0)
                for i, s in zip(range(n), seconds, strict=True)
            ]
        )
        if case == "shuffled":
            frame = frame.sample(fraction=1.0, shuffle=True, seed=3)
        if case == "null instant":
            frame = frame.with_columns(
                pl.when(pl.col("ping_id") % 97 == 0)
                .then(None)
                .otherwise("event_at")
                .alias("event_at")
            )
        vehicles = frame["vehicle_id"].unique().sort()
        ranked = frame.with_columns(
            pl.col("vehicle_id").cast(pl.Enum(vehicles)).to_physical().alias("vehicle_rank")
        )
        expected = ranked.sort("vehicle_rank", "event_at", "ping_id")
        assert _sort_by_vehicle_time(ranked, vehicles.len()).equals(expected), case
