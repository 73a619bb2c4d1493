"""Stops placed on shapes that double back: exact, in stop order, the agency's distance first.

Hand-checked shapes in metres: an out-and-back corridor whose legs run 10 m apart, so every stop
is near both legs and nearest to the wrong one at the terminal.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from gtfs.geometry import compute_stop_positions

# (0,0) -> (1000,0) -> U-turn to (1000,10) -> back to (0,10): 2010 m.
CORRIDOR = pl.DataFrame(
    {
        "shape_id": ["C"] * 4,
        "shape_pt_sequence": [1, 2, 3, 4],
        "shape_x_m": [0.0, 1000.0, 1000.0, 0.0],
        "shape_y_m": [0.0, 0.0, 10.0, 10.0],
        "shape_dist_m": [0.0, 1000.0, 1010.0, 2010.0],
    }
)


def _calls(points: list[tuple[float, float]], shape_id: str = "C") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "pattern_id": ["p"] * len(points),
            "shape_id": [shape_id] * len(points),
            "stop_x_m": [float(x) for x, _ in points],
            "stop_y_m": [float(y) for _, y in points],
        }
    )


def test_terminal_nearest_the_return_leg_is_placed_on_the_first_pass() -> None:
    # The terminal (0, 7) is 3 m from the return leg and 7 m from the outbound one: a nearest
    # projection puts the trip's first stop at 2010 m and leaves the trip 0 m long.
    calls = _calls([(0, 7), (500, -3), (1000, 5), (500, 13), (0, 7)])
    out = compute_stop_positions(calls, CORRIDOR, by="pattern_id")
    assert out["shape_dist_m"].to_list() == pytest.approx([0.0, 500.0, 1005.0, 1510.0, 2010.0])
    assert out["stop_shape_gap_m"].to_list() == pytest.approx([7.0, 3.0, 0.0, 3.0, 3.0])


def test_a_stop_served_on_the_return_leg_is_not_pulled_onto_the_outbound_leg() -> None:
    # Only the return leg is served: the stop at (300, 2) is 2 m from the outbound leg but the
    # trip's earlier stop is past the U-turn, so it sits on the return leg (1010 + 700 m).
    calls = _calls([(1000, 5), (300, 2), (0, 10)])
    out = compute_stop_positions(calls, CORRIDOR, by="pattern_id")
    assert out["shape_dist_m"].to_list() == pytest.approx([1005.0, 1710.0, 2010.0])
    assert out["stop_shape_gap_m"].to_list() == pytest.approx([0.0, 8.0, 0.0])


def test_groups_are_placed_independently_and_stops_without_a_shape_stay_null() -> None:
    calls = pl.concat(
        [
            _calls([(0, 7), (1000, 5), (0, 7)]),
            _calls([(1000, 5), (0, 10)]).with_columns(pl.lit("q").alias("pattern_id")),
            _calls([(5, 5)], shape_id="missing").with_columns(pl.lit("r").alias("pattern_id")),
        ]
    )
    out = compute_stop_positions(calls, CORRIDOR, by="pattern_id")
    assert out["shape_dist_m"].to_list()[:5] == pytest.approx([0.0, 1005.0, 2010.0, 1005.0, 2010.0])
    assert out["shape_dist_m"][5] is None
    assert out["stop_shape_gap_m"][5] is None


def test_agency_shape_dist_traveled_decides_where_both_give_it() -> None:
    # The shape and the calls give shape_dist_traveled in km; the call at 1.2 km is placed at
    # 1200 m although its coordinates (1000, 5) are at the U-turn.
    shape = CORRIDOR.with_columns(pl.Series("shape_dist_traveled", [0.0, 1.0, 1.01, 2.01]))
    calls = _calls([(0, 7), (1000, 5), (0, 7)]).with_columns(
        pl.Series("shape_dist_traveled", [0.0, 1.2, None])
    )
    out = compute_stop_positions(calls, shape, by="pattern_id")
    assert out["shape_dist_m"].to_list() == pytest.approx([0.0, 1200.0, 2010.0])
    # 1200 m along is (810, 10) on the return leg, hypot(190, 5) from the stop
    assert out["stop_shape_gap_m"][1] == pytest.approx(math.hypot(190.0, 5.0))


def test_a_stop_behind_every_pass_keeps_order_by_the_running_maximum() -> None:
    # the trip's second stop is only near the start of a one-way shape: it cannot be behind the
    # first, so it sits with it
    shape = CORRIDOR.head(2)
    out = compute_stop_positions(_calls([(600, 1), (100, 1), (900, 1)]), shape, by="pattern_id")
    assert out["shape_dist_m"].to_list() == pytest.approx([600.0, 600.0, 900.0])


def test_a_one_point_shape_puts_every_stop_at_zero_and_no_calls_give_no_rows() -> None:
    out = compute_stop_positions(_calls([(1, 2), (3, 4)]), CORRIDOR.head(1), by="pattern_id")
    assert out["shape_dist_m"].to_list() == [0.0, 0.0]
    assert out["stop_shape_gap_m"].to_list() == pytest.approx([math.hypot(1, 2), 5.0])
    empty = _calls([(0, 0)]).head(0)
    assert compute_stop_positions(empty, CORRIDOR, by="pattern_id").height == 0
