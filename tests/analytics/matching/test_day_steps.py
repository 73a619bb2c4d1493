"""The day-level steps on hand-built frames: stop visits (crossings searched on arrays),
assignment ties, trip stops located by pattern; each checked against hand-computed values and
against the same input in another row order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from analytics.matching.assign import match_runs_to_trips
from analytics.matching.crossings import build_track, compute_crossings
from analytics.matching.network import locate_trip_stops
from analytics.matching.options import MatchOptions
from analytics.matching.stop_visits import (
    RUN_POSITION,
    build_track_slices,
    compute_run_crossings,
    compute_stop_visits,
)

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
T0_S = T0.timestamp()


def _track() -> pl.DataFrame:
    """Run V1/0 stands at 200 m from 20 s to 40 s; run V2/0 moves steadily at 10 m/s."""
    v1 = [(0, 0.0), (10, 100.0), (20, 200.0), (30, 200.0), (40, 200.0), (50, 300.0)]
    rows = [("V1", 0, t, p) for t, p in v1] + [("V2", 0, t, 10.0 * t) for t in range(0, 60, 10)]
    raw = pl.DataFrame(
        {
            "vehicle_id": [r[0] for r in rows],
            "run_id": pl.Series([r[1] for r in rows], dtype=pl.Int32),
            "t_s": [T0_S + r[2] for r in rows],
            "prog_m": [float(r[3]) for r in rows],
        }
    )
    return build_track(raw, ["vehicle_id", "run_id"])


def _visits_inputs() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    runs = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V2", "V3"],
            "run_id": pl.Series([0, 0, 0], dtype=pl.Int32),
            "trip_id": ["A", "B", None],
            "start_dist_m": [0.0, 0.0, 0.0],
            "end_dist_m": [300.0, 500.0, 300.0],
        }
    )
    trips = pl.DataFrame(
        {"trip_id": ["A", "B"], "template_trip_id": ["TA", "TA"], "planned_start_at": [T0, T0]}
    )
    trip_stops = pl.DataFrame(
        {
            "template_trip_id": ["TA"] * 4,
            "stop_sequence": pl.Series([1, 2, 3, 4], dtype=pl.Int32),
            "stop_id": ["S0", "S150", "S200", "S350"],
            "stop_dist_m": [0.0, 150.0, 200.0, 350.0],
            "arrival_offset_s": pl.Series([0, 15, 20, 35], dtype=pl.Int32),
            "departure_offset_s": pl.Series([0, 15, 30, 35], dtype=pl.Int32),
        }
    )
    return runs, trips, trip_stops


def test_stop_visits_by_hand() -> None:
    runs, trips, trip_stops = _visits_inputs()
    got = compute_stop_visits(runs, _track(), trips, trip_stops, MatchOptions())
    v1 = got.filter(pl.col("vehicle_id") == "V1")
    secs = [None if a is None else (a - T0).total_seconds() for a in v1["arrival_at"].to_list()]
    leave = [None if d is None else (d - T0).total_seconds() for d in v1["departure_at"].to_list()]
    # 0 m: first ping on it, left as the next ping (100 m at 10 m/s) says: at 0 s.
    # 150 m: between 100 m (10 s) and the stand at 200 m; left when clear by 25 m, which the
    # standing pings only show at 300 m (50 s): extrapolated back at 1 m/s, clipped at 10 s.
    # 200 m: reached at 20 s (100 m at 10 m/s), left at 40 s (300 m at 50 s, back at 10 m/s).
    # 350 m: never reached (the run ends at 300 m)
    assert secs == [0.0, 10.0, 20.0, None]
    assert leave == [0.0, 10.0, 40.0, None]
    assert v1["nearest_ping_m"].to_list() == [0.0, 50.0, 0.0, 50.0]
    assert v1["is_interpolated"].to_list() == [False, False, False, False]
    # V2 at a steady 10 m/s: each stop at its distance / 10 (350 m at 35 s, 15 s late)
    v2 = got.filter(pl.col("vehicle_id") == "V2")
    assert v2["arrival_delay_s"].to_list() == [0, 0, 0, 0]
    assert [(a - T0).total_seconds() for a in v2["arrival_at"].to_list()] == [0, 15, 20, 35]
    # V3 has no trip: no visits; rows ordered by vehicle, run, stop
    assert got["vehicle_id"].to_list() == ["V1"] * 4 + ["V2"] * 4


def test_stop_visits_do_not_depend_on_row_order() -> None:
    runs, trips, trip_stops = _visits_inputs()
    track = _track()
    want = compute_stop_visits(runs, track, trips, trip_stops, MatchOptions())
    rng = np.random.default_rng(1)
    # runs interleaved, each still in time order (pings standing at one place keep theirs)
    nth = pl.int_range(pl.len()).over("vehicle_id", "run_id")
    mixed = track.with_columns(nth.alias("_k")).sort("_k", "vehicle_id").drop("_k")
    for tr, ts in [
        (mixed, trip_stops),
        (track, trip_stops.reverse()),
        (mixed, trip_stops[rng.permutation(trip_stops.height)]),
    ]:
        assert_frame_equal(compute_stop_visits(runs.reverse(), tr, trips, ts, MatchOptions()), want)


def test_crossings_follow_the_rule_of_analytics_crossings() -> None:
    # any row order, pings standing at one place included: the same instants as the
    # frame-based rule, which takes such pings in the order the track lists them
    track = _track()
    track = track[np.random.default_rng(3).permutation(track.height)]
    key = ["vehicle_id", "run_id"]
    targets = pl.DataFrame(
        {
            "vehicle_id": ["V1"] * 6 + ["V2"] * 3 + ["V9"],
            "run_id": pl.Series([0] * 10, dtype=pl.Int32),
            "target_m": [0.0, 99.0, 150.0, 200.0, 275.0, 350.0, 0.0, 250.0, 600.0, 10.0],
        }
    )
    want = compute_crossings(track, targets, key, 25.0)
    index = targets.select(key).unique(maintain_order=True).with_row_index(RUN_POSITION)
    run = targets.join(index, on=key, maintain_order="left")[RUN_POSITION].to_numpy()
    got = compute_run_crossings(
        build_track_slices(track, index), run, targets["target_m"].to_numpy(), 25.0
    ).with_columns(pl.min_horizontal("arrive_s", "leave_s").alias("arrive_s"))
    assert_frame_equal(got, want.select("arrive_s", "leave_s", "nearest_ping_m"))


def _runs(starts_s: list[float]) -> pl.DataFrame:
    n = len(starts_s)
    return pl.DataFrame(
        {
            "vehicle_id": [f"V{i}" for i in range(n)],
            "run_id": pl.Series([0] * n, dtype=pl.Int32),
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


def test_trip_stops_located_once_per_pattern_in_any_order() -> None:
    # a straight shape along x, densified every 20 m; stops 5 m off it at 0, 400 and 800 m
    d = np.arange(0.0, 1001.0, 20.0)
    points = pl.DataFrame({"shape_id": ["SH"] * d.size, "dist_m": d, "x_m": d, "y_m": 0.0 * d})
    trips = pl.DataFrame({"template_trip_id": ["TB", "TA", "TC"], "shape_id": ["SH", "SH", "SH"]})
    stops = pl.DataFrame(
        {"stop_id": ["S1", "S2", "S3"], "stop_x_m": [0.0, 400.0, 800.0], "stop_y_m": [5.0] * 3}
    )
    times = [0, 60, 120]
    stop_times = pl.DataFrame(
        {
            # TA and TB call at the same stops (one pattern); TC skips S2
            "trip_id": ["TB"] * 3 + ["TA"] * 3 + ["TC"] * 2,
            "stop_sequence": pl.Series([1, 2, 3, 1, 2, 3, 1, 2], dtype=pl.Int32),
            "stop_id": ["S1", "S2", "S3", "S1", "S2", "S3", "S1", "S3"],
            "arrival_time_s": pl.Series(
                [t + 100 for t in times] + [t + 50 for t in times] + [7, 97], dtype=pl.Int32
            ),
            "departure_time_s": pl.Series(
                [t + 100 for t in times] + [t + 50 for t in times] + [10, 97], dtype=pl.Int32
            ),
        }
    )
    got = locate_trip_stops(points, trips, stop_times, stops)
    assert got["template_trip_id"].to_list() == ["TA"] * 3 + ["TB"] * 3 + ["TC"] * 2
    assert got["stop_dist_m"].to_list() == [0.0, 400.0, 800.0] * 2 + [0.0, 800.0]
    assert got["arrival_offset_s"].to_list() == [0, 60, 120] * 2 + [-3, 87]
    assert got["departure_offset_s"].to_list() == [0, 60, 120] * 2 + [0, 87]
    shuffled = stop_times[np.random.default_rng(2).permutation(stop_times.height)]
    assert_frame_equal(locate_trip_stops(points, trips, shuffled, stops), got)
    # TB numbers the same stops 10, 20, 30: same pattern, same positions (they used to be
    # looked up by TA's numbers and fall back to 0 m)
    renumbered = stop_times.with_columns(
        pl.when(pl.col("trip_id") == "TB")
        .then(pl.col("stop_sequence") * 10)
        .otherwise(pl.col("stop_sequence"))
        .alias("stop_sequence")
    )
    again = locate_trip_stops(points, trips, renumbered, stops)
    assert again["stop_sequence"].to_list() == [1, 2, 3, 10, 20, 30, 1, 2]
    assert again["stop_dist_m"].to_list() == got["stop_dist_m"].to_list()
