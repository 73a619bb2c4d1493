"""Benchmark: one day of a São Paulo-sized system (14 000 vehicles, 30 s pings).

Target (issue 3): <= 10 min and <= 8 GB peak memory on 2 cores. Prints the figures.
Run: `.venv/bin/python -m benchmarks.bench_simulator [--vehicles N] [--out DIR]`.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from sample_data.options import SimulationOptions
from sample_data.simulate import simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vehicles", type=int, default=14_000)
    parser.add_argument("--days", type=int, default=1)
    parser.add_argument(
        "--out", type=Path, help="keep the output here (default: a temporary folder)"
    )
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="pontual-bench-sim-"))
    opts = replace(
        SimulationOptions(),
        n_vehicles=args.vehicles,
        days=args.days,
        text_days=None,
        vehicle_chunk=1000,
    )
    t0 = time.perf_counter()
    summary = simulate(opts, out)
    wall = time.perf_counter() - t0
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    size_gb = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1024**3
    print(
        f"simulator: {args.vehicles} vehicles target, {summary.n_vehicles_register} registered, "
        f"{summary.n_days} day(s), {summary.n_scheduled_trips} trips, {summary.n_pings:,} pings, "
        f"{summary.n_fare_taps:,} fare taps"
    )
    print(
        f"  wall {wall:.0f} s (target <= 600 s: {'ok' if wall <= 600 else 'OVER'}), "
        f"peak RSS {peak_gb:.2f} GB (target <= 8 GB: {'ok' if peak_gb <= 8 else 'OVER'}), "
        f"{summary.n_pings / wall / 1e3:.0f} k pings/s, output {size_gb:.2f} GB"
    )
    if args.out is None:
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
