"""Stretches: the distance a vehicle ran on its itinerary, across a detour, computed by hand."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analytics.matching.network import build_network
from analytics.matching.options import GapCredit, MatchOptions
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


# the profile's rules (bento-goncalves-2021 [evidence]): silences up to 1 800 s, 0.5-22 m/s
GAP = GapCredit(1800.0, 0.5, 22.0)


def _east_run(
    x: np.ndarray, y: np.ndarray, t: np.ndarray, gap_credit: GapCredit = GAP
) -> dict[str, float]:
    """The one stretch of pings at (x, y, t) along S1 (x = 0 .. 5 000 m)."""
    options = MatchOptions()
    trips, stop_times = sy.schedule([("A1", "S1", "B1", 8 * 3600)])
    network = build_network(sy.shapes(), trips, stop_times, sy.stops(), options)
    k = np.arange(x.size)
    cand = project_pings(x, y, t, np.zeros(k.size, np.int64), network, options)
    pings = pl.DataFrame({"row": k, "vehicle_rank": 0, "t_s": t, "x_m": x, "y_m": y}).with_columns(
        pl.col("t_s").diff().alias("dt_prev_s"), (-pl.col("t_s").diff(-1)).alias("dt_next_s")
    )
    stretches, _ = cut_stretches(cand, pings, network, options, gap_credit)
    assert stretches.height == 1
    return stretches.row(0, named=True)


# along S1 at 240 m per 30 s (8 m/s), departing at x = 0 and arriving at 5 000 m
K = np.arange(23)
X = np.minimum(240.0 * K, 5000.0)
T = 30.0 * K
# the unit is silent from the fix at 1 200 m (k = 5, 150 s) to the one at 2 880 m (k = 12,
# 360 s): 210 s (over `gap_s`, 180 s) and 1 680 m
SILENT = (K <= 5) | (K >= 12)


def test_a_silence_between_fixes_on_the_itinerary_is_credited() -> None:
    got = _east_run(X[SILENT], np.zeros(SILENT.sum()), T[SILENT])
    assert (got["is_departed"], got["is_arrived"]) == (True, True)
    assert got["distance_run_m"] == pytest.approx(5000.0)
    assert (got["gps_gap_s"], got["gps_gap_m"]) == pytest.approx((210.0, 1680.0))
    # nothing of it was seen: observed progress leaves the silence out
    assert got["observed_progress_m"] == pytest.approx(5000.0 - 1680.0)


def test_a_silence_with_a_faded_fix_beside_it_is_credited() -> None:
    # the last fix before the silence (k = 5) is 150 m off the street (the unit losing its
    # fix): the silence after it is still bounded by fixes on the itinerary, 30 s away
    y = np.where(K[SILENT] == 5, 150.0, 0.0)
    got = _east_run(X[SILENT], y, T[SILENT])
    # credited from the fix at 960 m (k = 4) to the one at 2 880 m: 240 s, 1 920 m
    assert (got["gps_gap_s"], got["gps_gap_m"]) == pytest.approx((240.0, 1920.0))
    assert got["distance_run_m"] == pytest.approx(5000.0)


@pytest.mark.parametrize(
    "rules",
    [
        pytest.param(GapCredit(200.0, 0.5, 22.0), id="longer_than_the_longest_credited"),
        pytest.param(GapCredit(1800.0, 0.5, 7.5), id="faster_than_plausible"),
        pytest.param(GapCredit(1800.0, 8.5, 22.0), id="slower_than_plausible"),
    ],
)
def test_a_silence_outside_the_profile_rules_is_not_credited(rules: GapCredit) -> None:
    got = _east_run(X[SILENT], np.zeros(SILENT.sum()), T[SILENT], rules)
    assert (got["gps_gap_s"], got["gps_gap_m"]) == (0.0, 0.0)
    assert got["distance_run_m"] == pytest.approx(5000.0 - 1680.0)


def test_a_silence_that_jumps_off_the_itinerary_is_not_credited() -> None:
    # after the silence the bus reappears 400 m off the street for three fixes (k = 12..14,
    # 360-420 s) and rejoins at 3 600 m (k = 15): an excursion, whose silence counts nothing
    y = np.where((K[SILENT] >= 12) & (K[SILENT] <= 14), 400.0, 0.0)
    got = _east_run(X[SILENT], y, T[SILENT])
    assert (got["gps_gap_s"], got["gps_gap_m"]) == (0.0, 0.0)
    assert (got["n_off_route"], got["off_route_s"]) == (1, 300.0)
    # on the shape: 1 200 m before (150 s) and 1 400 m after (five steps of 240 m and the last
    # 200 m into the terminal, 180 s): 2 600 m in 330 s; across the excursion only half of the
    # 30 s after it rejoined, at that speed (the side before it is a silence: nothing)
    assert got["distance_run_m"] == pytest.approx(2600.0 + 2600.0 / 330.0 * 15.0)


def test_a_silence_that_jumps_backwards_ends_the_stretch() -> None:
    options = MatchOptions()
    trips, stop_times = sy.schedule([("A1", "S1", "B1", 8 * 3600)])
    network = build_network(sy.shapes(), trips, stop_times, sy.stops(), options)
    # after the silence the bus is back at 700 m (500 m behind the last fix) and runs on
    x = np.r_[X[K <= 5], 700.0 + 240.0 * np.arange(18)]
    x = np.minimum(x, 5000.0)
    t = np.r_[T[K <= 5], 360.0 + 30.0 * np.arange(18)]
    k = np.arange(x.size)
    y = np.zeros(x.size)
    cand = project_pings(x, y, t, np.zeros(k.size, np.int64), network, options)
    pings = pl.DataFrame({"row": k, "vehicle_rank": 0, "t_s": t, "x_m": x, "y_m": y}).with_columns(
        pl.col("t_s").diff().alias("dt_prev_s"), (-pl.col("t_s").diff(-1)).alias("dt_next_s")
    )
    stretches, _ = cut_stretches(cand, pings, network, options, GAP)
    # two stretches: the jump backwards is no step of either. Each is credited at its end
    # towards its terminal, as any stretch ending into or starting out of a silence, at its
    # own speed (8 m/s) for the 210 s: the first from 1 200 m, the second up to 700 m
    assert stretches.height == 2
    first, second = stretches.sort("first_s").iter_rows(named=True)
    assert (first["gps_gap_s"], first["gps_gap_m"]) == pytest.approx((210.0, 1680.0))
    assert first["distance_run_m"] == pytest.approx(1200.0 + 1680.0)
    assert (second["gps_gap_s"], second["gps_gap_m"]) == pytest.approx((87.5, 700.0))
    # then from 700 m to its last fix at 4 780 m (no terminal fix after it, no silence)
    assert second["distance_run_m"] == pytest.approx(700.0 + 4780.0 - 700.0)
