"""Dashboard speed: time to a rendered page in headless Chromium for every page, on a store
holding one year of a 300-bus city (issue 20's targets): the first page after a cold start
(a fresh server process; target <= 2 s from the browser's request, also shown from the
process' start), the first visit of each page in that browser (the server's warm-up session,
ADR 0108, may have run the page already), a page loaded by its address (a new session: the
whole front end boots; target <= 1 s) and a page switch through the sidebar menu (what a
planner does; target <= 0.5 s). Medians of `--repeat` visits per round, over `--rounds`
fresh servers.

Beside each browser time: the server's script-run seconds and the kilobytes it sent for that
view (`benchmarks/dashboard_timed.py` wraps the server), which tell the server's share from
the browser's. On a busy machine only the server figures and the ratios of two checkouts
timed back to back mean much: `--base CHECKOUT` (e.g. a `git worktree` of main) times that
checkout's dashboard and this one in interleaved rounds and prints this/base per page and
phase.

The year is written straight into the derived tables (trip outcomes for every scheduled trip
of the year, stop visits, indicators per line and month, fleet days) with vectorised Polars,
so the figure measures the dashboard, not the pipeline that would fill them. `--store PATH`
keeps it there for the next run (built when absent).

    .venv/bin/python -m benchmarks.bench_dashboard [--vehicles 300] [--days 365]
        [--store PATH] [--pages linhas,lotacao] [--phases first,load,switch] [--repeat 3]
        [--base CHECKOUT] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
TIMED = Path(__file__).resolve().parent / "dashboard_timed.py"
TIMINGS_ENV = "PONTUAL_BENCH_TIMINGS"  # read by dashboard_timed.py
PHASES = ("cold", "first", "load", "switch")
COLD_TARGET_S = 2.0
LOAD_TARGET_S = 1.0
SWITCH_TARGET_S = 0.5
SETTLE_S = 0.5
TRIPS_PER_VEHICLE_DAY = 12
VEHICLES_PER_LINE = 6


def build_year_store(path: Path, n_vehicles: int, n_days: int) -> dict[str, int]:
    """A store with `n_days` of a `n_vehicles` city in the derived tables; returns row counts."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from core.schema import TABLES
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
        for name, table in (
            ("trip_outcomes", frame),
            ("indicators", indicators),
            *crowding.items(),
            ("fleet_days", fleet_days),
        ):
            # the fixture's hand-made rows stay; the year's rows of the same key are left out
            # (the store checks every write's key)
            key = list(TABLES[name].primary_key)
            kept = store.query(f'SELECT DISTINCT {", ".join(key)} FROM "{name}"')
            write(store, name, table.join(kept, on=key, how="anti") if kept.height else table)
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


def _start(tree: Path, store: Path, port: int, log: Path, timings: Path) -> subprocess.Popen[bytes]:
    """The dashboard of checkout `tree` on `store`, its script runs timed into `timings`
    (`benchmarks/dashboard_timed.py`); the same Streamlit options for every checkout."""
    from core.settings import STORE_ENV
    from dashboard.server import build_command

    options = build_command(port, "127.0.0.1", True)[5:]  # after `-m dashboard.launch run APP`
    env = {
        **os.environ,
        STORE_ENV: str(store.resolve()),
        "PYTHONPATH": str(tree),
        TIMINGS_ENV: str(timings),
    }
    return subprocess.Popen(
        [sys.executable, str(TIMED), "run", str(tree / "dashboard" / "app.py"), *options],
        cwd=tree,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


@dataclass
class Figures:
    """What some rounds measured, per (phase, page slug): seconds until the browser showed
    the page drawn, the server's script-run seconds and the bytes sent to the browser."""

    browser_s: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    server_s: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    sent_b: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    health_s: list[float] = field(default_factory=list)
    cold_total_s: list[float] = field(default_factory=list)
    warm_up_s: list[float] = field(default_factory=list)
    """Script-run seconds of the server's own warm-up session (0 without one)."""

    def add(self, phase: str, slug: str, seconds: float, runs: list[tuple[float, int]]) -> None:
        key = (phase, slug)
        self.browser_s.setdefault(key, []).append(seconds)
        self.server_s.setdefault(key, []).append(sum(s for s, _b in runs))
        self.sent_b.setdefault(key, []).append(float(sum(b for _s, b in runs)))


class _Runs:
    """The script runs a server recorded since the last look, less those of its own warm-up
    session (`dashboard.launch.prewarm`: the first session, opened as soon as the server
    answers, before Chromium has started)."""

    def __init__(self, path: Path, warms_up: bool) -> None:
        self.path, self.seen = path, 0
        self.warms_up = warms_up
        self.warm_up: str | None = None
        self.warm_up_s = 0.0

    def take(self) -> list[tuple[float, int]]:
        lines = self.path.read_text().splitlines() if self.path.exists() else []
        new, self.seen = lines[self.seen :], len(lines)
        runs = []
        for seconds, sent, session in (line.split("\t") for line in new):
            self.warm_up = self.warm_up or (session if self.warms_up else "")
            if session == self.warm_up:
                self.warm_up_s += float(seconds)
            else:
                runs.append((float(seconds), int(sent)))
        return runs


def measure_round(
    tree: Path,
    store: Path,
    slugs: list[str],
    phases: set[str],
    repeat: int,
    tmp: Path,
    figures: Figures,
) -> None:
    """One fresh server of checkout `tree` and one fresh browser, added to `figures`: the
    cold first page, the first visit of each page, then `repeat` times each page by its
    address and each through the menu."""
    from core.texts import gettext
    from dashboard.browser import Browser
    from dashboard.pages import PAGES, page_url
    from dashboard.server import free_port, wait_until_ready

    titles = {slug: gettext(title) for _p, title, slug, _i in PAGES}  # English ids
    home = PAGES[0][2]
    port = free_port()
    warms_up = "def prewarm" in (tree / "dashboard" / "launch.py").read_text()
    runs = _Runs(tmp / f"timings-{port}.tsv", warms_up)
    started = time.perf_counter()
    process = _start(tree, store, port, tmp / "streamlit.log", runs.path)
    url = f"http://127.0.0.1:{port}"
    # A page is drawn when its title is up and no script runs, and stays so for SETTLE_S
    # (the time counted is until it was first so).
    wait = {"timeout_s": 60.0, "settle_s": SETTLE_S}
    try:
        wait_until_ready(url, 60, process)
        figures.health_s.append(time.perf_counter() - started)
        with Browser() as browser:
            state = browser.open(url, **wait)
            figures.cold_total_s.append(time.perf_counter() - started - SETTLE_S)
            figures.add("cold", home, state["ready_after_s"], runs.take())
            current = home
            if "first" in phases:  # first visits: nothing of that page cached
                for slug in (s for s in slugs if s != home):
                    state = browser.open(f"{url}/{page_url(slug)}", **wait)
                    figures.add("first", slug, state["ready_after_s"], runs.take())
                    current = slug
            for _ in range(repeat):
                if "load" in phases:  # a page opened by its address: the front end boots
                    for slug in slugs:
                        state = browser.open(f"{url}/{page_url(slug)}", **wait)
                        figures.add("load", slug, state["ready_after_s"], runs.take())
                        current = slug
                if "switch" in phases:  # a menu click: the same session reruns
                    for slug in [*slugs[1:], slugs[0]]:
                        if slug == current:  # leave it first (not counted)
                            other = next(s for _p, _t, s, _i in PAGES if s != slug)
                            browser.click_page(page_url(other), titles[other], **wait)
                            runs.take()
                        state = browser.click_page(page_url(slug), titles[slug], **wait)
                        figures.add("switch", slug, state["ready_after_s"], runs.take())
                        current = slug
        runs.take()
        figures.warm_up_s.append(runs.warm_up_s)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _median(values: list[float] | None) -> float:
    return statistics.median(values) if values else float("nan")


def report(name: str, figures: Figures, slugs: list[str], phases: list[str]) -> None:
    """One checkout's medians: the cold start, then per page and phase the browser time, the
    server's script-run time and the kilobytes sent."""
    cold = _median(figures.browser_s.get(("cold", slugs[0])))
    print(
        f"[{name}] cold start: server healthy after {_median(figures.health_s):.2f} s; first "
        f"page drawn {cold:.2f} s after the browser asked (server "
        f"{_median(figures.server_s.get(('cold', slugs[0]))):.2f} s; "
        f"{_median(figures.cold_total_s):.2f} s from the process' start); "
        f"target <= {COLD_TARGET_S:g} s "
        + ("met" if cold <= COLD_TARGET_S else "NOT met")
        + f"; the server's warm-up session ran {_median(figures.warm_up_s):.2f} s of scripts"
    )
    shown = [p for p in PHASES if p in phases and p != "cold"]
    print(
        f"[{name}] {'page':<16}" + "".join(f" {p + ' s':>9} {'server':>6} {'kB':>5}" for p in shown)
    )
    for slug in slugs:
        cells = "".join(
            f" {_median(figures.browser_s.get((p, slug))):>9.2f}"
            f" {_median(figures.server_s.get((p, slug))):>6.2f}"
            f" {_median(figures.sent_b.get((p, slug))) / 1000:>5.0f}"
            for p in shown
        )
        print(f"[{name}] {slug:<16}{cells}")
    for phase, target in (("load", LOAD_TARGET_S), ("switch", SWITCH_TARGET_S)):
        medians = [_median(figures.browser_s.get((phase, s))) for s in slugs]
        if phase in phases and medians:
            worst = max(medians)
            print(
                f"[{name}] slowest page {phase} (median) {worst:.2f} s; target <= {target:g} s "
                + ("met" if worst <= target else "NOT met")
            )


def report_ratios(base: Figures, this: Figures, slugs: list[str], phases: list[str]) -> None:
    """This tree over the base, per page and phase (browser time and server time), and the
    median ratio of each phase over the pages."""
    shown = [p for p in PHASES if p in phases]
    print(f"[ratio this/base] {'page':<16}" + "".join(f" {p:>7} {'server':>6}" for p in shown))
    per_phase: dict[str, list[float]] = {}
    for slug in slugs:
        cells = ""
        for phase in shown:
            key = (phase, slug)
            if key not in this.browser_s:
                cells += f" {'':>7} {'':>6}"
                continue
            ratio = _median(this.browser_s[key]) / _median(base.browser_s.get(key))
            server = _median(this.server_s[key]) / _median(base.server_s.get(key))
            per_phase.setdefault(phase, []).append(ratio)
            cells += f" {ratio:>7.2f} {server:>6.2f}"
        print(f"[ratio this/base] {slug:<16}{cells}")
    print(
        "[ratio this/base] median over pages: "
        + ", ".join(f"{p} {_median(r):.2f}x" for p, r in per_phase.items())
    )


def main(argv: list[str] | None = None) -> int:
    from dashboard.pages import PAGES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=300)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=3, help="visits per page and round")
    parser.add_argument(
        "--store", type=Path, default=None, help="the year store: reused if it exists, else built"
    )
    parser.add_argument(
        "--pages", default="", help="comma-separated page slugs (default: every page)"
    )
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help=f"some of {','.join(PHASES)} (cold is always run)",
    )
    parser.add_argument(
        "--base", type=Path, default=None, help="another checkout to time, interleaved"
    )
    parser.add_argument("--rounds", type=int, default=None, help="fresh servers per checkout")
    args = parser.parse_args(argv)
    every = [slug for _p, _t, slug, _i in PAGES]
    slugs = [s for s in every if s in set(args.pages.split(","))] if args.pages else every
    if not slugs or slugs[0] != every[0]:
        slugs = [every[0], *slugs]  # the cold start opens the first page
    phases = [p for p in PHASES if p in set(args.phases.split(",")) | {"cold"}]
    rounds = args.rounds or (3 if args.base else 1)
    trees = ([("base", args.base.resolve())] if args.base else []) + [("this tree", ROOT)]

    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "pontual.duckdb"
        if not store.exists():
            t0 = time.perf_counter()
            counts = build_year_store(store, args.vehicles, args.days)
            print(f"store: {counts} built in {time.perf_counter() - t0:.1f} s", flush=True)
        figures = {name: Figures() for name, _tree in trees}
        for r in range(rounds):
            for name, tree in trees:
                measure_round(
                    tree, store, slugs, set(phases), args.repeat, Path(tmp), figures[name]
                )
                print(
                    f"round {r + 1} {name} done (load average {os.getloadavg()[0]:.1f})", flush=True
                )
        for name, _tree in trees:
            report(name, figures[name], slugs, phases)
        if args.base:
            report_ratios(figures["base"], figures["this tree"], slugs, phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
