"""Linear referencing: on a shape that passes a spot twice, each ping keeps the pass the
vehicle is progressing on."""

from __future__ import annotations

import numpy as np
import polars as pl

from analytics.matching.frames import PING_CANDIDATES
from analytics.matching.network import build_network
from analytics.matching.options import MatchOptions
from analytics.matching.project import project_pings


def test_out_and_back_shape_keeps_the_pass_being_run() -> None:
    # shape LB runs east along y = 0 from x = 0 to 1 000 m, up to y = 30 m and back west
    # along y = 30 to x = 0 (2 030 m): every spot but the turn lies within the buffer of both
    # legs. Near the turn both legs are one pass (unambiguous); elsewhere the pass kept is the
    # one ahead of the turn's fixes at a typical bus speed
    xy = [(0.0, 0.0), (1000.0, 0.0), (1000.0, 30.0), (0.0, 30.0)]
    shapes = pl.DataFrame(
        {
            "shape_id": "LB",
            "shape_pt_sequence": [1, 2, 3, 4],
            "shape_x_m": [p[0] for p in xy],
            "shape_y_m": [p[1] for p in xy],
            "shape_dist_m": [0.0, 1000.0, 1030.0, 2030.0],
        }
    )
    trips = pl.DataFrame(
        {"template_trip_id": "T", "shape_id": "LB", "route_id": "R", "direction_id": 0}
    )
    stop_times = pl.DataFrame(
        {
            "trip_id": ["T", "T"],
            "stop_sequence": [1, 2],
            "stop_id": ["A", "B"],
            "arrival_time_s": [0, 300],
            "departure_time_s": [0, 300],
        }
    )
    stops = pl.DataFrame({"stop_id": ["A", "B"], "stop_x_m": [0.0, 0.0], "stop_y_m": [0.0, 30.0]})
    options = MatchOptions()
    network = build_network(shapes, trips, stop_times, stops, options)
    # out at 10 m/s (x = 100 .. 1 000 m, 10 .. 100 s), back from x = 900 to 100 m
    out_x = np.arange(100.0, 1001.0, 100.0)
    back_x = np.arange(900.0, 99.0, -100.0)
    x = np.r_[out_x, back_x]
    y = np.r_[np.zeros(out_x.size), np.full(back_x.size, 30.0)]
    t = 10.0 * np.arange(1, x.size + 1)
    got = project_pings(x, y, t, np.zeros(x.size, np.int64), network, options)
    assert got.schema == PING_CANDIDATES.polars_schema
    # one position per ping, along the leg it was on
    assert got["row"].to_list() == list(range(x.size))
    want = np.r_[out_x, 1030.0 + (1000.0 - back_x)]
    np.testing.assert_allclose(got["dist_m"].to_numpy(), want, atol=1.0)
    np.testing.assert_allclose(got["offset_m"].to_numpy(), 0.0, atol=1e-6)
