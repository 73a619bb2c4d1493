"""Headways of frequent lines: waiting times computed by hand (TfL EWT)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from analytics.matching.headways import compute_headways

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)


def test_excess_wait_of_a_frequent_line_by_hand() -> None:
    # planned every 600 s in the 11:00 hour: SWT = 5 x 600² / (2 x 3 000) = 300 s;
    # observed departures at 0, 900, 1 200 and 2 400 s (headways 900, 300, 1 200 s):
    # AWT = (900² + 300² + 1 200²) / (2 x 2 400) = 487.5 s, EWT = 187.5 s
    planned = [0, 600, 1200, 1800, 2400, 3000]
    trips = pl.DataFrame(
        {
            "route_id": "R",
            "direction_id": pl.Series([0] * 6, dtype=pl.Int32),
            "planned_start_at": [T0 + timedelta(seconds=s) for s in planned],
        }
    )
    observed = [0, 900, 1200, 2400]
    runs = pl.DataFrame(
        {
            "route_id": ["R"] * 5,
            "direction_id": pl.Series([0] * 5, dtype=pl.Int32),
            "is_departed": [True] * 4 + [False],
            "is_counted": [True] * 5,
            "started_s": [T0.timestamp() + s for s in [*observed, 1500]],
        }
    )
    got = compute_headways(trips, runs, frequent_headway_max_s=900.0).row(0, named=True)
    assert (got["n_planned"], got["n_observed"]) == (6, 4)
    assert got["hour_at"] == T0
    assert got["scheduled_wait_s"] == pytest.approx(300.0)
    assert got["actual_wait_s"] == pytest.approx(487.5)
    assert got["excess_wait_s"] == pytest.approx(187.5)
    assert got["observed_headway_max_s"] == pytest.approx(1200.0)
    # the same line planned every 20 min is not frequent under a 15 min threshold
    sparse = trips.filter(pl.col("planned_start_at").dt.minute().is_in([0, 20, 40]))
    assert compute_headways(sparse, runs, frequent_headway_max_s=900.0).height == 0
