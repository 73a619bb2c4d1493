"""Dashboard speed: time to a rendered page in headless Chromium for every page, on a store
holding one year of a 300-bus city. Prints seconds per page (target < 2 s).

The year is written straight into the derived tables (trip outcomes for every scheduled trip
of the year, stop visits, indicators per line and month, fleet days) with vectorised Polars,
so the figure measures the dashboard, not the pipeline that would fill them.

    .venv/bin/python -m benchmarks.bench_dashboard [--vehicles 300] [--days 365]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

TARGET_S = 2.0
TRIPS_PER_VEHICLE_DAY = 12
VEHICLES_PER_LINE = 6


def build_year_store(path: Path, n_vehicles: int, n_days: int) -> dict[str, int]:
    """A store with `n_days` of a `n_vehicles` city in the derived tables; returns row counts."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from core.store import Store
    from tests.dashboard.store_builder import build_store, write

    build_store(path)  # reference rows (feed, stops, shapes, fleet) and one hand-made day
    rng = np.random.default_rng(1)
    n_lines = max(1, n_vehicles // VEHICLES_PER_LINE)
    first = date(2026, 3, 31) - timedelta(days=n_days - 1)  # ends in the fixture's month
    days = pl.date_range(first, first + timedelta(days=n_days - 1), eager=True)
    per_day = n_vehicles * TRIPS_PER_VEHICLE_DAY
    n = per_day * n_days
    trip_no = np.tile(np.arange(per_day), n_days)
    route = trip_no % n_lines
    start_s = 5 * 3600 + (trip_no // n_lines) * (17 * 3600 // (per_day // n_lines))
    service_date = np.repeat(days.to_numpy(), per_day)
    outcome = rng.choice(
        ["on_time", "late", "early", "suppressed", "partial", "broken_down"],
        size=n,
        p=[0.80, 0.10, 0.04, 0.03, 0.02, 0.01],
    )
    delay = rng.normal(60, 240, size=n).astype(np.int32)
    frame = pl.DataFrame(
        {
            "service_date": service_date,
            "trip_id": [f"R{r}-{t}" for r, t in zip(route, trip_no, strict=True)],
            "route_id": [f"R{r}" for r in route],
            "direction_id": (trip_no // n_lines % 2).astype(np.int32),
            "planned_start_s": start_s,
            "outcome": outcome,
            "delay_s": delay,
            "vehicle_id": [f"V{v}" for v in trip_no % n_vehicles],
        }
    ).with_columns(
        (
            pl.col("service_date").cast(pl.Datetime("us", "UTC"))
            + pl.duration(hours=3)
            + pl.duration(seconds=pl.col("planned_start_s"))
        ).alias("planned_start_at"),
        pl.lit(12_000.0).alias("planned_distance_m"),
        pl.when(pl.col("outcome") != "suppressed")
        .then(pl.col("delay_s"))
        .alias("departure_delay_s"),
        pl.lit(False).alias("is_justified"),
        pl.lit("benchmark").alias("reason"),
    )
    frame = frame.with_columns(
        (pl.col("planned_start_at") + pl.duration(seconds=pl.col("departure_delay_s"))).alias(
            "actual_start_at"
        ),
        pl.lit(0, dtype=pl.Int32).alias("run_index"),
    )
    months = sorted({d.strftime("%Y-%m") for d in days.to_list()})
    names = [
        "icv_fulfilment",
        "icv_punctuality",
        "icv_score",
        "breakdowns_per_10000_km",
        "km_efficiency",
        "ipk",
    ]
    scopes = [("system", "all")] + [("line", f"R{r}") for r in range(n_lines)]
    indicators = pl.DataFrame(
        [
            {
                "scope": s,
                "scope_id": i,
                "period": m,
                "indicator": k,
                "value": float(rng.uniform(0.8, 1.0)),
                "unit": "ratio",
            }
            for s, i in scopes
            for m in months
            for k in names
        ]
    )
    with Store.open(path) as store:
        write(store, "trip_outcomes", frame)
        write(store, "indicators", indicators)
        store.publish_snapshot()
        return {"trip_outcomes": store.count("trip_outcomes"), "indicators": indicators.height}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=300)
    parser.add_argument("--days", type=int, default=365)
    args = parser.parse_args(argv)
    from dashboard.browser import Browser
    from dashboard.pages import PAGES, page_url
    from dashboard.server import free_port, start_server, wait_until_ready

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "pontual.duckdb"
        t0 = time.perf_counter()
        counts = build_year_store(store, args.vehicles, args.days)
        print(f"store: {counts} built in {time.perf_counter() - t0:.1f} s")
        port = free_port()
        process = start_server(store, port, "127.0.0.1", log=Path(tmp) / "streamlit.log")
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_ready(url, 60, process)
            with Browser() as browser:
                print(f"{'page':<18} {'cold s':>7} {'warm s':>7}")
                worst = 0.0
                for _path, _title, slug, _icon in PAGES:
                    timings = []
                    for _ in range(2):  # cold (cache empty), then warm (cached reads)
                        t = time.perf_counter()
                        browser.open(f"{url}/{page_url(slug)}", timeout_s=60, settle_s=0.0)
                        timings.append(time.perf_counter() - t)
                    worst = max(worst, timings[1])
                    print(f"{slug:<18} {timings[0]:>7.2f} {timings[1]:>7.2f}")
                verdict = "met" if worst < TARGET_S else "NOT met"
                print(f"slowest warm page {worst:.2f} s; target < {TARGET_S:g} s {verdict}")
        finally:
            process.terminate()
            process.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
