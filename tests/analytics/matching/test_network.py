"""The day's network: each template trip's stops located along its shape."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from analytics.matching.network import locate_trip_stops


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


def test_stops_are_projected_onto_the_shape_not_snapped_to_its_grid() -> None:
    # an L-shaped shape densified every 20 m: east 0 .. 600 m, then north 400 m. Stops between
    # grid points (7 m off the street): at 233 m and 491 m along the first leg, and 130 m up
    # the second (730 m along); a 20 m grid put them at 240, 500 and 740 m
    east = np.arange(0.0, 600.0, 20.0)
    north = np.arange(0.0, 401.0, 20.0)
    x = np.r_[east, np.full(north.size, 600.0)]
    y = np.r_[np.zeros(east.size), north]
    d = np.r_[east, 600.0 + north]
    points = pl.DataFrame({"shape_id": ["SH"] * d.size, "dist_m": d, "x_m": x, "y_m": y})
    trips = pl.DataFrame({"template_trip_id": ["T"], "shape_id": ["SH"]})
    stops = pl.DataFrame(
        {
            "stop_id": ["A", "B", "C"],
            "stop_x_m": [233.0, 491.0, 607.0],
            "stop_y_m": [7.0, -7.0, 130.0],
        }
    )
    stop_times = pl.DataFrame(
        {
            "trip_id": ["T"] * 3,
            "stop_sequence": pl.Series([1, 2, 3], dtype=pl.Int32),
            "stop_id": ["A", "B", "C"],
            "arrival_time_s": pl.Series([0, 60, 120], dtype=pl.Int32),
            "departure_time_s": pl.Series([0, 60, 120], dtype=pl.Int32),
        }
    )
    got = locate_trip_stops(points, trips, stop_times, stops)
    assert got["stop_dist_m"].to_list() == [233.0, 491.0, 730.0]
