"""Stop visits: the crossings searched on arrays, checked against hand-computed instants and
against the same input in another row order."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analytics.matching.options import MatchOptions
from analytics.matching.stop_visits import compute_stop_visits
from tests.analytics.matching.hand_track import T0, hand_track


def _visits_inputs() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    runs = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V2", "V3"],
            "run_index": pl.Series([0, 0, 0], dtype=pl.Int32),
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
    got = compute_stop_visits(runs, hand_track(), trips, trip_stops, MatchOptions())
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
    # V2 at a steady 10 m/s, a fix every 100 m: it arrives at a stop when it reached its first
    # fix in the stop's zone (50 m before and after it, and at most half the way to the next
    # stop), here 50 m short of the stops at 150 and 350 m: 5 s before the point (issue 16,
    # item 4: a bus that halts short of the point arrives there, not when it passes it)
    v2 = got.filter(pl.col("vehicle_id") == "V2")
    assert v2["arrival_delay_s"].to_list() == [0, -5, 0, -5]
    assert [(a - T0).total_seconds() for a in v2["arrival_at"].to_list()] == [0, 10, 20, 30]
    # V3 has no trip: no visits; rows ordered by vehicle, run, stop
    assert got["vehicle_id"].to_list() == ["V1"] * 4 + ["V2"] * 4


def test_stop_visits_do_not_depend_on_row_order() -> None:
    runs, trips, trip_stops = _visits_inputs()
    track = hand_track()
    want = compute_stop_visits(runs, track, trips, trip_stops, MatchOptions())
    rng = np.random.default_rng(1)
    # runs interleaved, each still in time order (pings standing at one place keep theirs)
    nth = pl.int_range(pl.len()).over("vehicle_id", "run_index")
    mixed = track.with_columns(nth.alias("_k")).sort("_k", "vehicle_id").drop("_k")
    for tr, ts in [
        (mixed, trip_stops),
        (track, trip_stops.reverse()),
        (mixed, trip_stops[rng.permutation(trip_stops.height)]),
    ]:
        assert_frame_equal(compute_stop_visits(runs.reverse(), tr, trips, ts, MatchOptions()), want)


@pytest.mark.parametrize(
    ("stop_m", "arrive_s", "leave_s"),
    [
        # the bus stands at 200 m from 20 s to 40 s (V1 of `hand_track`), 15 m short of a
        # stop at 215 m: it arrived when it reached 200 m (20 s), not when it passed 215 m as
        # it left (41.5 s at 10 m/s); it left 215 m + 25 m clear at 300 m (50 s), back at 10 m/s
        pytest.param(215.0, 20.0, 41.5, id="halt_short_of_the_stop"),
        # ... and 15 m past a stop at 185 m: it arrived there on its way in (18.5 s at 10 m/s)
        # and left when it left 200 m (40 s, back from 300 m at 10 m/s), not as it passed the
        # stop's point (before its halt)
        pytest.param(185.0, 18.5, 40.0, id="halt_past_the_stop"),
    ],
)
def test_a_halt_off_the_stop_point_keeps_its_dwell(
    stop_m: float, arrive_s: float, leave_s: float
) -> None:
    runs, trips, _ = _visits_inputs()
    trip_stops = pl.DataFrame(
        {
            "template_trip_id": ["TA"] * 2,
            "stop_sequence": pl.Series([1, 2], dtype=pl.Int32),
            "stop_id": ["S0", "S"],
            "stop_dist_m": [0.0, stop_m],
            "arrival_offset_s": pl.Series([0, 20], dtype=pl.Int32),
            "departure_offset_s": pl.Series([0, 40], dtype=pl.Int32),
        }
    )
    got = compute_stop_visits(runs, hand_track(), trips, trip_stops, MatchOptions())
    halt = got.filter((pl.col("vehicle_id") == "V1") & (pl.col("stop_id") == "S")).row(
        0, named=True
    )
    assert (halt["arrival_at"] - T0).total_seconds() == pytest.approx(arrive_s)
    assert (halt["departure_at"] - T0).total_seconds() == pytest.approx(leave_s)
    assert halt["stop_dist_m"] == stop_m
    assert halt["nearest_ping_m"] == pytest.approx(15.0)
    assert not halt["is_interpolated"]
