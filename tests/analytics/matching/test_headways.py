"""Headways of frequent lines: waiting times computed by hand (TfL EWT)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from analytics.matching.headways import (
    compute_bunching,
    compute_bunching_by_hour,
    compute_headways,
)

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


def test_bunching_at_stops_by_hand() -> None:
    # Line R planned every 600 s in the 11:00 hour (and 1 200 s at 12:00). Four trips pass
    # stops A and B; a visit is bunched when it leaves less than 0.25 x 600 = 150 s after the
    # previous vehicle. At A: 0, 600, 700 (100 s: bunched), 1 300 (600 s). At B, 300 s later,
    # except t3 which caught up: 300, 900, 1 000 (100 s: bunched), 1 050 (50 s: bunched).
    # t5 starts at 12:00 (planned 1 200 s, limit 300 s) 200 s after t4 at A: bunched; a
    # visit of direction 1 at the same stop and time is not t5's leader.
    day = T0.date()
    trips = ["t1", "t2", "t3", "t4", "t5"]
    starts = [0, 600, 1200, 1800, 3600]
    at_a = [0, 600, 700, 1300, 1500]
    at_b = [300, 900, 1000, 1050, None]
    rows = []
    for trip, start, a, b in zip(trips, starts, at_a, at_b, strict=True):
        for stop, t, dist in (("A", a, 0.0), ("B", b, 1500.0)):
            if t is not None:
                rows.append((trip, f"V-{trip}", 0, stop, start, t, dist))
    rows.append(("x1", "V-x1", 1, "A", 1400, 1450, 0.0))
    visits = pl.DataFrame(
        rows,
        schema=["trip_id", "vehicle_id", "direction_id", "stop_id", "start", "t", "stop_dist_m"],
        orient="row",
    ).select(
        pl.lit(day).alias("service_date"),
        pl.lit("R").alias("route_id"),
        pl.col("direction_id").cast(pl.Int32),
        "stop_id",
        "trip_id",
        "vehicle_id",
        (pl.lit(T0) + pl.duration(seconds=pl.col("start"))).alias("planned_start_at"),
        (pl.lit(T0) + pl.duration(seconds=pl.col("t"))).alias("at"),
        "stop_dist_m",
    )
    planned = pl.DataFrame(
        {
            "service_date": [day, day, day],
            "route_id": ["R", "R", "R"],
            "direction_id": pl.Series([0, 0, 1], dtype=pl.Int32),
            "hour_at": [T0, T0 + timedelta(hours=1), T0],
            "planned_headway_mean_s": [600.0, 1200.0, 600.0],
        }
    )
    got = compute_bunching(visits, planned, max_ratio=0.25)
    # the first visit at each stop has no leader (t1 twice); x1 has none in its direction
    assert got.height == 7
    bunched = got.filter("is_bunched").select("stop_id", "trip_id", "leader_trip_id", "headway_s")
    assert bunched.rows() == [
        ("A", "t3", "t2", 100.0),
        ("A", "t5", "t4", 200.0),
        ("B", "t3", "t2", 100.0),
        ("B", "t4", "t3", 50.0),
    ]
    assert got.filter(~pl.col("is_bunched"))["trip_id"].to_list() == ["t2", "t4", "t2"]
    by_hour = compute_bunching_by_hour(got)
    assert by_hour.select("hour_at", "n_headways", "n_bunched").rows() == [
        (T0, 6, 3),
        (T0 + timedelta(hours=1), 1, 1),
    ]
    assert by_hour["bunched_share"].to_list() == pytest.approx([0.5, 1.0])
