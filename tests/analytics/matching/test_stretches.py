"""Stretches: the distance a vehicle ran on its itinerary, across a detour, computed by hand."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analytics.matching.network import build_network
from analytics.matching.options import MatchOptions
from analytics.matching.project import project_pings
from analytics.matching.stretches import cut_stretches
from tests.analytics import synthetic as sy


def test_a_detour_skips_the_itinerary_it_bypasses() -> None:
    options = MatchOptions()
    trips, stop_times = sy.schedule([("A1", "S1", "B1", 8 * 3600)])
    network = build_network(sy.shapes(), trips, stop_times, sy.stops(), options)
    # along S1 (y = 0, x = 0 .. 5 000 m) at 240 m per 30 s, but the four pings between
    # x = 2 000 and 3 000 m are 400 m off the street (a detour)
    k = np.arange(23)
    x = np.minimum(240.0 * k, 5000.0)
    y = np.where((x > 2000.0) & (x < 3000.0), 400.0, 0.0)
    t = 30.0 * k
    cand = project_pings(x, y, t, np.zeros(k.size, np.int64), network, options)
    pings = pl.DataFrame({"row": k, "vehicle_rank": 0, "t_s": t, "x_m": x, "y_m": y}).with_columns(
        pl.col("t_s").diff().alias("dt_prev_s"), (-pl.col("t_s").diff(-1)).alias("dt_next_s")
    )
    stretches, _ = cut_stretches(cand, pings, network, options)
    got = stretches.row(0, named=True)
    assert stretches.height == 1
    # departs with the ping at x = 0 and arrives with the one at 5 000 m; one excursion,
    # from the ping at 1 920 m (240 s) to the one at 3 120 m (390 s)
    assert (got["is_departed"], got["is_arrived"]) == (True, True)
    assert (got["n_off_route"], got["off_route_s"]) == (1, 150.0)
    # on the shape: 8 steps of 240 m before, 7 after and 200 m into the terminal, 3 800 m in
    # 480 s (7.917 m/s); across the detour only what that speed covers in half of the 30 s
    # before leaving and half of the 30 s after rejoining: 237.5 m of the 1 200 m bypassed
    assert got["distance_run_m"] == pytest.approx(3800.0 + 237.5)
    # observed progress: only steps on the shape between pings at most `gap_s` apart, with no
    # credit across the detour
    assert got["observed_progress_m"] == pytest.approx(3800.0)
