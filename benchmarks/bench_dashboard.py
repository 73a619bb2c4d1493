"""Dashboard speed: time to a rendered page in headless Chromium for every page, on a store
holding one year of a 300-bus city (issue 20's targets): the first page after a cold start
(a fresh server process; target <= 2 s from the browser's request, also shown from the
process' start), the first visit of each page (empty caches), a page loaded by its address (a
new session: the whole front end boots; target <= 1 s) and a page switch through the sidebar
menu (what a planner does; target <= 0.5 s). Medians of `--repeat` runs.

The year is written straight into the derived tables (trip outcomes for every scheduled trip
of the year, stop visits, indicators per line and month, fleet days) with vectorised Polars,
so the figure measures the dashboard, not the pipeline that would fill them.

    .venv/bin/python -m benchmarks.bench_dashboard [--vehicles 300] [--days 365]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

COLD_TARGET_S = 2.0
LOAD_TARGET_S = 1.0
SWITCH_TARGET_S = 0.5
SETTLE_S = 0.5
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
    crowding = build_crowding(frame, rng)
    fleet_days = build_fleet_days(days, n_vehicles)
    with Store.open(path) as store:
        write(store, "trip_outcomes", frame)
        write(store, "indicators", indicators)
        for name, table in (*crowding.items(), ("fleet_days", fleet_days)):
            write(store, name, table)
        store.publish_snapshot()
        tables = ("trip_outcomes", "trip_crowding", "crowding_summary", "trip_loads", "fleet_days")
        return {t: store.count(t) for t in tables} | {"indicators": indicators.height}


def build_crowding(outcomes: pl.DataFrame, rng: np.random.Generator) -> dict[str, pl.DataFrame]:
    """`trip_crowding` for every run trip, `crowding_summary` per line, direction and hour,
    and `trip_loads` (20 stops a run) for the last day: the crowding job's tables at the size a
    year of the city gives them."""
    run = outcomes.filter(pl.col("outcome") != "suppressed")
    n = run.height
    max_load = rng.gamma(4.0, 12.0, size=n)
    standees = np.maximum(0.0, max_load - 38.0) / 6.0
    trips = run.select(
        "service_date",
        "vehicle_id",
        "run_index",
        "trip_id",
        "route_id",
        "direction_id",
        pl.col("actual_start_at").fill_null(pl.col("planned_start_at")).alias("departure_at"),
    ).with_columns(
        pl.col("departure_at").dt.truncate("1h").alias("hour_at"),
        pl.Series("max_load", max_load),
        pl.Series("max_standees_per_m2", standees),
        pl.Series("is_over_limit", standees > 4.0),
        pl.lit(2, dtype=pl.Int32).alias("max_load_stop_sequence"),
        pl.lit("S2").alias("max_load_stop_id"),
        pl.lit(38, dtype=pl.Int32).alias("n_seats"),
        pl.lit(6.0).alias("standing_area_m2"),
        pl.lit("register").alias("capacity_source"),
        pl.lit("taps").alias("count_source"),
    )
    # Runs of one vehicle are numbered in departure order (the trip_crowding key).
    trips = trips.sort("service_date", "vehicle_id", "departure_at").with_columns(
        pl.int_range(pl.len(), dtype=pl.Int32).over("service_date", "vehicle_id").alias("run_index")
    )
    summary = (
        trips.group_by("service_date", "route_id", "direction_id", "hour_at")
        .agg(
            pl.len().cast(pl.Int32).alias("n_trips"),
            pl.col("is_over_limit").sum().cast(pl.Int32).alias("n_over_limit"),
            pl.col("max_load").max(),
            pl.col("max_standees_per_m2").max(),
            pl.col("max_load").sum().alias("peak_segment_load"),
        )
        .with_columns(
            (pl.col("n_over_limit") / pl.col("n_trips")).alias("over_limit_share"),
            pl.lit(62.0).alias("capacity_at_limit"),
            pl.lit("S2").alias("worst_from_stop_id"),
            pl.lit("S3").alias("worst_to_stop_id"),
        )
        .with_columns(
            (pl.col("n_over_limit") > 0).alias("is_action_required"),
            (pl.col("peak_segment_load") / 62.0).ceil().cast(pl.Int32).alias("n_trips_needed"),
        )
        .with_columns(
            (pl.col("n_trips_needed") - pl.col("n_trips"))
            .clip(0)
            .cast(pl.Int32)
            .alias("extra_trips_needed")
        )
    )
    last = trips.filter(pl.col("service_date") == pl.col("service_date").max())
    loads = (
        last.select("service_date", "vehicle_id", "run_index", "trip_id", "route_id", "max_load")
        .join(pl.DataFrame({"stop_sequence": np.arange(1, 21, dtype=np.int32)}), how="cross")
        .with_columns(
            pl.format("S{}", pl.col("stop_sequence")).alias("stop_id"),
            (pl.col("max_load") * (1 - ((pl.col("stop_sequence") - 10).abs() / 10.0))).alias(
                "load_after"
            ),
            pl.lit(0.0).alias("n_boardings"),
            pl.lit(0.0).alias("n_alightings"),
            pl.lit(38, dtype=pl.Int32).alias("n_seats"),
            pl.lit(6.0).alias("standing_area_m2"),
            pl.lit("taps").alias("count_source"),
        )
        .with_columns(
            ((pl.col("load_after") - 38).clip(0) / 6.0).alias("standees_per_m2"),
        )
        .with_columns((pl.col("standees_per_m2") > 4.0).alias("is_over_limit"))
        .drop("max_load")
    )
    return {"trip_crowding": trips, "crowding_summary": summary, "trip_loads": loads}


def build_fleet_days(days: pl.Series, n_vehicles: int) -> pl.DataFrame:
    """Operator totals of `fleet_days`: two operators sharing the fleet, every day."""
    required = int(n_vehicles * 0.45)
    return (
        pl.DataFrame({"service_date": days})
        .join(pl.DataFrame({"operator_id": ["OP1", "OP2"]}), how="cross")
        .with_columns(
            pl.lit("*").alias("route_id"),
            pl.lit(required, dtype=pl.Int32).alias("n_vehicles_required"),
            pl.lit(required - 1, dtype=pl.Int32).alias("n_vehicles_operated"),
            pl.lit(1 / required).alias("cut_ratio"),
            pl.lit(False).alias("is_cut_over_limit"),
            pl.lit(0, dtype=pl.Int32).alias("n_cut_days_consecutive"),
            pl.lit(False).alias("is_grave_cut"),
            pl.lit(n_vehicles // 2, dtype=pl.Int32).alias("n_vehicles_registered"),
            pl.lit(n_vehicles // 2 - required, dtype=pl.Int32).alias("n_reserve"),
            pl.lit(-(-required // 10), dtype=pl.Int32).alias("n_reserve_min"),
            pl.lit((n_vehicles // 2 - required) / required).alias("reserve_ratio"),
            pl.lit(True).alias("is_reserve_ok"),
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=300)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=3, help="cached visits per page (median)")
    args = parser.parse_args(argv)
    from core.texts import gettext
    from dashboard.browser import Browser
    from dashboard.pages import PAGES, page_url
    from dashboard.server import free_port, start_server, wait_until_ready

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "pontual.duckdb"
        t0 = time.perf_counter()
        counts = build_year_store(store, args.vehicles, args.days)
        print(f"store: {counts} built in {time.perf_counter() - t0:.1f} s")
        port = free_port()
        started = time.perf_counter()
        process = start_server(store, port, "127.0.0.1", log=Path(tmp) / "streamlit.log")
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_ready(url, 60, process)
            health_s = time.perf_counter() - started
            # A page is drawn when its title is up and no script runs, and stays so for
            # SETTLE_S (the time counted is until it was first so).
            wait = {"timeout_s": 60.0, "settle_s": SETTLE_S}
            with Browser() as browser:
                cold_first = browser.open(url, **wait)["ready_after_s"]
                cold_total = time.perf_counter() - started - SETTLE_S
                first: dict[str, float] = {}
                reload: dict[str, list[float]] = {slug: [] for _p, _t, slug, _i in PAGES}
                click: dict[str, list[float]] = {slug: [] for _p, _t, slug, _i in PAGES}
                for _path, _title, slug, _icon in PAGES[1:]:  # first visits: nothing cached
                    state = browser.open(f"{url}/{page_url(slug)}", **wait)
                    first[slug] = state["ready_after_s"]
                first[PAGES[0][2]] = cold_first
                for _ in range(args.repeat):
                    for _path, _title, slug, _icon in PAGES:  # a page opened by its address
                        state = browser.open(f"{url}/{page_url(slug)}", **wait)
                        reload[slug].append(state["ready_after_s"])
                    for _path, title, slug, _icon in [*PAGES[1:], PAGES[0]]:  # menu clicks
                        state = browser.click_page(page_url(slug), gettext(title), **wait)
                        click[slug].append(state["ready_after_s"])
                print(f"load average (1 min) during the run: {os.getloadavg()[0]:.1f}")
                print(
                    f"cold start: server healthy after {health_s:.2f} s; first page drawn "
                    f"{cold_first:.2f} s after the browser asked ({cold_total:.2f} s from the "
                    f"process' start); target <= {COLD_TARGET_S:g} s "
                    + ("met" if cold_first <= COLD_TARGET_S else "NOT met")
                )
                print(f"{'page':<18} {'first s':>8} {'load s':>7} {'switch s':>9}")
                worst_load = worst_switch = 0.0
                for _path, _title, slug, _icon in PAGES:
                    r, c = statistics.median(reload[slug]), statistics.median(click[slug])
                    worst_load, worst_switch = max(worst_load, r), max(worst_switch, c)
                    print(f"{slug:<18} {first[slug]:>8.2f} {r:>7.2f} {c:>9.2f}")
                for what, worst, target in (
                    ("page load", worst_load, LOAD_TARGET_S),
                    ("page switch", worst_switch, SWITCH_TARGET_S),
                ):
                    verdict = "met" if worst <= target else "NOT met"
                    print(
                        f"slowest {what} (median of {args.repeat}) {worst:.2f} s; "
                        f"target <= {target:g} s {verdict}"
                    )
        finally:
            process.terminate()
            process.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
