"""Crowding throughput: one simulated day of a 300-bus city's taps through boarding placement,
alighting inference and load profiles (truth stop visits as input). Prints taps per second.

    .venv/bin/python -m benchmarks.bench_crowding [--vehicles 300] [--riders 3300]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from analytics.crowding.job import compute_crowding
from core.profile import load_profile
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=300)
    parser.add_argument(
        "--riders", type=float, default=3300.0, help="riders per vehicle-day (1 M taps at 300)"
    )
    args = parser.parse_args(argv)
    # the simulated-folder reader lives with the accuracy tests
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.analytics.crowding.test_crowding_simulated import read_simulated

    profile = load_profile("bento-goncalves-2021")
    with tempfile.TemporaryDirectory() as tmp:
        opts = SimulationOptions(
            days=1,
            n_vehicles=args.vehicles,
            riders_per_vehicle_day=args.riders,
            write_text_avl=False,
        )
        began = time.perf_counter()
        simulate(opts, Path(tmp))
        sim_s = time.perf_counter() - began
        inputs, _, _ = read_simulated(Path(tmp))
        began = time.perf_counter()
        result = compute_crowding(inputs, profile)
        elapsed = time.perf_counter() - began
    n = inputs.taps.height
    print(f"simulated {n:,} taps on {args.vehicles} buses in {sim_s:.1f} s")
    print(
        f"crowding: {n:,} taps, {result.trip_loads.height:,} stop rows, "
        f"{result.trip_crowding.height:,} runs in {elapsed:.1f} s = {n / elapsed:,.0f} taps/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
