"""Crowding throughput: one simulated day of a city's taps through boarding placement,
alighting inference and load profiles (truth stop visits as input). Prints the time of each
stage and taps per second.

    .venv/bin/python -m benchmarks.bench_crowding [--vehicles 300] [--riders 3300]
    .venv/bin/python -m benchmarks.bench_crowding --size sao-paulo   # >= 9 M taps

The simulated inputs are generated once per size and kept as Parquet under
`bench-output/crowding-cache/` (or `--cache`), so re-runs time only the crowding; a run that
simulates hands the timing to a fresh process reading the cache, so that the peak memory it
prints (the process's maximum resident set: inputs read, crowding computed) leaves the
simulation out. Targets (issue 21): >= 500 k taps/s on the default day; the São Paulo day in
<= 30 s with peak memory <= 2 GB.

Session 28 (ADR 0103; fresh processes, load average 4-6 on 2 cores): the default day 1.9 s of
CPU, about 520 k taps per CPU-second (2.3 s before); the São Paulo day (9.7 M taps) 22 s of
CPU, 20 s wall, peak 4.5 GiB (the placements alone are 1.2 GB). CPU seconds grow with the
machine's load: compare versions back to back. Session 29: the default day peaks at 0.89-1.00
GiB (the issue's 2 GB holds there); a range of days is computed a day at a time by
`pontual crowding` (ADR 0103), not timed here. Session 30: a month's command spends most of
its CPU outside what this benchmark times (work per stop visit, DuckDB's inserts, the month
files' republication; ADR 0103's addendum "where a month's command goes" has the split): time
a month with `pontual crowding --from --to` on a year store, not by multiplying this day.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from analytics.crowding.alightings import compute_alightings
from analytics.crowding.boardings import compute_boardings
from analytics.crowding.job import (
    CrowdingInputs,
    compute_crowding_summary,
    to_routed_placements,
)
from analytics.crowding.loads import compute_loads, compute_trip_crowding
from core.profile import load_profile
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate

SIZES = {
    "default": (300, 3300.0),  # 1 M taps
    "sao-paulo": (2700, 3400.0),  # >= 9 M taps: a São Paulo weekday
}
"""named sizes: (vehicles, riders per vehicle-day)"""

FRAMES = ("taps", "stop_visits", "trips", "vehicles", "stops")
CACHE = Path(__file__).resolve().parent.parent / "bench-output" / "crowding-cache"


def read_or_simulate(vehicles: int, riders: float, cache: Path) -> tuple[CrowdingInputs, bool]:
    """The crowding inputs of one simulated day, from `cache` when generated before; returns
    them and whether they were simulated now."""
    folder = cache / f"v{vehicles}-r{riders:g}"
    if all((folder / f"{name}.parquet").exists() for name in FRAMES):
        frames = {name: pl.read_parquet(folder / f"{name}.parquet") for name in FRAMES}
        return CrowdingInputs(**frames), False
    # the simulated-folder reader lives with the accuracy tests
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.analytics.crowding.test_crowding_simulated import read_simulated

    with tempfile.TemporaryDirectory() as tmp:
        opts = SimulationOptions(
            days=1, n_vehicles=vehicles, riders_per_vehicle_day=riders, write_text_avl=False
        )
        simulate(opts, Path(tmp))
        inputs, _, _ = read_simulated(Path(tmp))
    folder.mkdir(parents=True, exist_ok=True)
    for name in FRAMES:
        getattr(inputs, name).write_parquet(folder / f"{name}.parquet")
    return inputs, True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default=None)
    parser.add_argument("--vehicles", type=int, default=None)
    parser.add_argument(
        "--riders", type=float, default=None, help="riders per vehicle-day (1 M taps at 300)"
    )
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    vehicles, riders = SIZES[args.size or "default"]
    vehicles = args.vehicles or vehicles
    riders = args.riders or riders

    profile = load_profile("bento-goncalves-2021")
    began = time.perf_counter()
    inputs, simulated = read_or_simulate(vehicles, riders, args.cache)
    how = "simulated" if simulated else "read from cache"
    print(
        f"{how}: {inputs.taps.height:,} taps on {vehicles} buses in "
        f"{time.perf_counter() - began:.1f} s"
    )
    if simulated:
        del inputs
        args_now = sys.argv[1:] if argv is None else argv
        return subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_crowding", *args_now], check=False
        ).returncode

    # CPU seconds (all threads) beside the wall clock: on a shared, loaded machine the wall
    # clock mostly measures the wait for a core
    stages: list[tuple[str, float, float]] = []
    began = last = time.perf_counter()
    began_cpu = last_cpu = time.process_time()

    def lap(name: str) -> None:
        nonlocal last, last_cpu
        now, now_cpu = time.perf_counter(), time.process_time()
        stages.append((name, now - last, now_cpu - last_cpu))
        last, last_cpu = now, now_cpu

    # the same chain as compute_crowding, stage by stage
    tz = profile.general.timezone.value
    boardings = compute_boardings(inputs.taps, inputs.stop_visits, timezone=tz)
    lap("boardings")
    placements = compute_alightings(boardings, inputs.stop_visits, inputs.stops)
    del boardings  # as compute_crowding does: the placements share its columns
    lap("alightings")
    loads = compute_loads(placements, inputs.stop_visits, inputs.trips, inputs.vehicles, profile)
    lap("loads")
    trips = compute_trip_crowding(loads)
    summary = compute_crowding_summary(trips, loads, profile)
    to_routed_placements(placements, inputs.trips)
    lap("runs + summary")
    elapsed = time.perf_counter() - began
    cpu = time.process_time() - began_cpu
    n = inputs.taps.height
    for name, s, c in stages:
        print(f"  {name:<16} {s:6.2f} s  {100 * s / elapsed:4.0f} %   cpu {c:6.2f} s")
    print(
        f"crowding: {n:,} taps, {loads.height:,} stop rows, {trips.height:,} runs, "
        f"{summary.height:,} hours in {elapsed:.1f} s = {n / elapsed:,.0f} taps/s "
        f"(cpu {cpu:.1f} s = {n / cpu:,.0f} taps per cpu-second)"
    )
    # Linux reports the maximum resident set in KiB
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak memory (max RSS of this process, inputs included): {peak_gib:.2f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
