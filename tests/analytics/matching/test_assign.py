"""Assignment of runs to trips on hand-built runs: ties, exclusivity, alternative shapes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from analytics.matching.assign import match_runs_to_trips
from analytics.matching.frames import MATCHED_RUN_COLUMNS
from analytics.matching.options import MatchOptions

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
T0_S = T0.timestamp()


def _runs(starts_s: list[float]) -> pl.DataFrame:
    n = len(starts_s)
    return pl.DataFrame(
        {
            "vehicle_id": [f"V{i}" for i in range(n)],
            "run_index": pl.Series([0] * n, dtype=pl.Int32),
            "shape_idx": pl.Series([0] * n, dtype=pl.Int32),
            "shape_id": ["SH"] * n,
            "alt_shapes": pl.Series([[]] * n, dtype=pl.List(pl.Int32)),
            "started_s": [T0_S + s for s in starts_s],
            "ended_s": [T0_S + s + 1800 for s in starts_s],
            "start_dist_m": [0.0] * n,
            "end_dist_m": [5000.0] * n,
            "origin_dist_m": [0.0] * n,
            "destination_dist_m": [5000.0] * n,
            "reported_trip_id": pl.Series([None] * n, dtype=pl.String),
            "coverage_ratio": [1.0] * n,
            "route_id": ["R"] * n,
            "direction_id": pl.Series([0] * n, dtype=pl.Int32),
        }
    )


def test_assignment_ties_go_to_the_first_trip_and_stay_exclusive() -> None:
    # two trips planned at the same instant (a duplicated departure): the same cost for a run
    trips = pl.DataFrame(
        {
            "trip_id": ["T2", "T1"],
            "shape_id": ["SH", "SH"],
            "block_id": ["B2", "B1"],
            "route_id": ["R", "R"],
            "direction_id": pl.Series([0, 0], dtype=pl.Int32),
            "planned_start_at": [T0, T0],
            "planned_end_at": [T0 + timedelta(minutes=30)] * 2,
        }
    )
    one = match_runs_to_trips(_runs([120.0]), trips, MatchOptions())
    assert one["trip_id"].to_list() == ["T1"]
    assert one["departure_delay_s"].to_list() == [120]
    two = match_runs_to_trips(_runs([120.0, 60.0]), trips, MatchOptions())
    assert sorted(two["trip_id"].to_list()) == ["T1", "T2"]
    assert two["departure_delay_s"].to_list() == [120, 60]
    # the columns the assignment adds to the runs, as declared
    added = {c.name: c.dtype for c in MATCHED_RUN_COLUMNS if c.name in two.columns}
    assert added == {
        "trip_id": pl.String(),
        "departure_delay_s": pl.Int32(),
        "match_method": pl.String(),
    }
    assert {name: two.schema[name] for name in added} == added
