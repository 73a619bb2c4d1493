"""Crowding results pinned on a small simulated day, so that speed work keeps them identical.

The figures were computed by the code before the speed work of issue 21 (commit e939a1f, the
row-by-row join version of the alighting search) on the same simulated day: boarding
placement and alightings must match exactly (a digest of every tap's placement), loads to
nine decimals (their sums add floats in parallel, whose order may change the last bits).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics.crowding.job import CrowdingResult, compute_crowding
from core.profile import load_profile
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from tests.analytics.crowding.test_crowding_simulated import read_simulated

BG = load_profile("bento-goncalves-2021")

PLACEMENT_COLUMNS = [
    "transaction_id",
    "service_date",
    "placement",
    "run_index",
    "trip_id",
    "stop_sequence",
    "stop_id",
    "alighting_stop_sequence",
    "alighting_stop_id",
    "walk_m",
    "alighting_method",
    "reason",
    "route_id",
]


def digest(result: CrowdingResult) -> dict[str, object]:
    """Counts, sums and an exact digest of the tap placements; rounded sums of the loads."""
    taps = result.tap_placements.sort("transaction_id").select(PLACEMENT_COLUMNS)
    loads = result.trip_loads
    methods = taps.group_by("alighting_method").len().sort("alighting_method")
    return {
        "n_taps": taps.height,
        "methods": dict(
            zip(methods["alighting_method"].to_list(), methods["len"].to_list(), strict=True)
        ),
        "placements_hash": int(taps.hash_rows(seed=0).sum()),
        "n_stop_rows": loads.height,
        "sum_alightings": round(float(loads["n_alightings"].sum()), 6),
        "sum_load_after": round(float(loads["load_after"].sum()), 6),
        "n_over_limit_stops": int(loads["is_over_limit"].fill_null(False).sum()),
        "n_runs": result.trip_crowding.height,
        "sum_max_load": round(float(result.trip_crowding["max_load"].sum()), 6),
        "n_hours": result.crowding_summary.height,
        "sum_extra_trips": int(result.crowding_summary["extra_trips_needed"].sum()),
    }


@pytest.fixture(scope="module")
def small_day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out: Path = tmp_path_factory.mktemp("sim")
    simulate(
        SimulationOptions(
            days=1, n_vehicles=12, riders_per_vehicle_day=600.0, seed=7, write_text_avl=False
        ),
        out,
    )
    inputs, _, _ = read_simulated(out)
    return digest(compute_crowding(inputs, BG))


PINNED: dict[str, object] = {
    "n_taps": 9032,
    "methods": {"chained": 4985, "chained_home": 3786, "unlinked": 261},
    "placements_hash": 1373133948791579646,
    "n_stop_rows": 6449,
    "sum_alightings": 9032.0,
    "sum_load_after": 49400.746181,
    "n_over_limit_stops": 44,
    "n_runs": 428,
    "sum_max_load": 4462.096737,
    "n_hours": 324,
    "sum_extra_trips": 2,
}
"""measured on e939a1f (before the issue 21 speed work of this branch)"""


def test_crowding_results_match_those_before_the_speed_work(small_day: dict[str, object]) -> None:
    assert small_day == PINNED
