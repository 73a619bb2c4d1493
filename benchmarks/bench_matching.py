"""Matching throughput on a simulated day, beside the floor of the work.

Prints pings/s of `match_day` (clean, reference on shapes, runs, assignment, stop visits,
outcomes, breakdowns, headways), the floor (sorting the same pings by vehicle and time and
projecting them to metres), their ratio, and peak memory. Targets (issue 5): >= 500 k pings/s,
<= 5x the floor, peak memory <= 4 GB, on a day of >= 10 M pings (`--vehicles 8000`).

Run: ``.venv/bin/python -m benchmarks.bench_matching [--vehicles N] [--workers N]``.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import polars as pl

from analytics.match_day import Schedule, match_day, to_metres
from analytics.options import MatchOptions
from core.profile import load_profile
from core.tables.observed import INCIDENTS
from gtfs.read import read_feed
from gtfs.schedule import build_geometry, build_scheduled_trips
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--vehicles", type=int, default=300, help="peak vehicles of the simulated city")
    ap.add_argument(
        "--workers", type=int, default=1, help="2 runs out of memory at 300 vehicles (see report)"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t = time.perf_counter()
        simulate(SimulationOptions(days=1, n_vehicles=args.vehicles, write_text_avl=False), out)
        print(f"simulated {args.vehicles} vehicles in {time.perf_counter() - t:.1f} s")
        feed = read_feed(out / "gtfs")
        geometry = build_geometry(feed)
        pings = pl.read_parquet(out / "avl.parquet").with_row_index("ping_id")
        day = pings["event_at"].min().date()  # type: ignore[union-attr]
        trips = build_scheduled_trips(feed, day, day, geometry=geometry)
    stop_times = geometry.stop_times.rename(
        {"arrival_time": "arrival_time_s", "departure_time": "departure_time_s"}
    )
    schedule = Schedule(day, trips, stop_times, geometry.shapes, geometry.stops, geometry.epsg)
    pings = pings.with_columns(pl.col("ping_id").cast(pl.Int64))
    n = pings.height
    t = time.perf_counter()
    to_metres(pings.sort("vehicle_id", "event_at"), geometry.epsg)
    floor_s = time.perf_counter() - t
    t = time.perf_counter()
    result = match_day(
        pings,
        schedule,
        INCIDENTS.empty(),
        load_profile("bento-goncalves-2021"),
        MatchOptions(),
        workers=args.workers,
    )
    match_s = time.perf_counter() - t
    print(
        f"pings: {n:,}  scheduled trips: {trips.height:,}  runs: {result.trips_performed.height:,}"
    )
    print(f"floor (sort + project): {floor_s:.2f} s = {n / floor_s:,.0f} pings/s")
    print(
        f"matching:               {match_s:.2f} s = {n / match_s:,.0f} pings/s (target >= 500,000)"
    )
    print(f"ratio matching / floor: {match_s / floor_s:.1f}x (target <= 5x)")
    print(f"peak memory: {_peak_mb():,.0f} MB (target <= 4,096 MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
