"""Indices for a year of a 300-bus city (issue 21: per month and for the year, every scope,
<= 30 s), and the annual dossiers that read them, each command as the CLI runs it (one
`python -m pontual` process per command, as `bench_year` does).

The year is a measured stretch of the simulated city copied forward: the pipeline
(`bench_year`: simulate, ingest, match, crowding) runs once for the first `--weeks` weeks of
2025, cached under `bench-output/indices-source/`, or `--source` names a store that already
holds them (e.g. `bench_year --days 31 --store X`); then every dated table of that stretch
(trip outcomes, scheduled trips, trips performed, breakdowns, headways, stop visits, crowding,
taps, pings...) is copied forward by whole multiples of the stretch's length (weekdays kept)
until 31 December, with the taps' and pings' ids made unique. The copies hold the same trips,
taps and card chains as the stretch, so every index has a year's rows to read.

Timed: `pontual indices --period 2025-MM` for each month, then `--period 2025` (one command
each, as `bench_year` runs them), then the same in one command (`--period 2025 --months`: the
figure against the target), then `pontual report annual --year 2025` (every graded operator).
CPU seconds are the figure to compare on the shared machine (the wall clock there also
measures the wait for a core). The snapshot is published once
before (untimed, as the pipeline's last command would have) and the commands publish by month
files (`PONTUAL_SNAPSHOT=months`, ADR 0104): indices write only small tables, so each command
pays the catalogue, not a copy of the whole year's file; `bench_year` measures publication.

    .venv/bin/python -m benchmarks.bench_indices [--source STORE] [--weeks 4] [--months 12]

Measured 2026-12-01 on the shared 2-core machine (one-minute load 14-23), `--months 3` on a
quarter copied forward from the simulated January (283 k trips, 6.8 M taps, 33 M pings): one
command per month 6.3-6.5 s of CPU each, the quarter as a year 16.1 s, 35.4 s in all; in one
`--months` command 28.6 s (0.81x). Before (ADR 0110) January alone took 50 s of CPU to
compute and its integration chains grew with the square of the period, so a year was out of
reach. The annual dossiers' time is the input hash of every raw day (SHA-256 of each ping and
tap as text, `cases.evidence.compute_period_day_digests`): most of January's 48 s of CPU.

Then (ADR 0110 addendum: the taps read once per run as hashed codes, each period chained from
one order, ridership from counts, the year's days read once), the same `--months` command on
the same quarter, base and new interleaved, 3 runs each (load 15-28): 28.3 / 28.8 / 30.2 s of
CPU before, 10.8 / 11.4 / 11.9 s after (median 0.40x), 10.4 s with the last changes; peak
4.8 GB before, 1.4-1.6 GB after; every table equal (up to the last bits of the parallel sums
that differ between two runs of the base itself). A whole year (the quarter's store copied
forward to 31 December by `replicate_year`: 1.15 M trips, 27.5 M taps, 136 M pings), measured
with `--no-write` (no writes nor publication, about 1 s on the quarter): 33.2 s of CPU, peak
5.9 GB, 56 s wall at load 7-11: 1.1x the 30 s target.

Then (ADR 0110, second addendum: the taps chained in one compiled pass in time order, no
sort; a few instants read by a filter on the scan; the stoppages', trip facts' and fleet
days' needless work dropped), on the simulated year (365 days of the city, 27.4 M taps,
1.15 M trips) the one-command figure (`--period 2025 --months`, `--costs` and
`--population`), base and new interleaved, 3 runs each (load 3-4): writing and publishing,
33.4 / 35.4 / 35.2 s of CPU before, 22.9 / 22.4 / 22.6 s after (median 0.64x); with
`--no-write` 32.7 s before, 21.2 s after (0.65x); peak 5.6 GB before, 4.4 GB after. The year
in one command: 22.6 s of CPU, 0.75x the 30 s target. Every table it writes compared with
`benchmarks/compare_indices_tables.py`: the same rows and values, up to the last bits of the
parallel sums that differ as much between two runs of the base.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb

from benchmarks.bench_year import CACHE as SIM_CACHE
from benchmarks.bench_year import (
    YEAR,
    build_plan,
    chunk_ranges,
    run_command,
    simulate_chunks,
)

TARGET_S = 30.0
"""Issue 21: the indices of a year of a 300-bus city, per month and for the year."""
SOURCE_CACHE = Path(__file__).resolve().parent.parent / "bench-output" / "indices-source"
PING_ID_STEP = 10**10
"""Added to the ping ids of each copy (times its number): ids stay unique across copies."""
DAY_TABLES = (
    "trip_outcomes",
    "scheduled_timetable_trips",
    "trips_performed",
    "breakdowns",
    "headway_observations",
    "avl_coverage",
    "feed_outages",
    "stop_visits",
    "trip_crowding",
    "crowding_summary",
    "tap_placements",
)
"""Tables with a service_date: the copies' rows are the stretch's, shifted."""
INSTANT_TABLES = ("fare_transactions", "vehicle_locations")
"""Tables keyed by an instant (event_at): the stretch's local days, shifted."""
DERIVED_BY_INDICES = ("indicators", "fleet_days", "annual_grades", "suggested_infractions")
"""What `pontual indices` writes: emptied, so the timed commands compute every row."""


def _shifted_select(con: duckdb.DuckDBPyConnection, table: str, days: int, k: int) -> str:
    """SELECT of `table`'s rows with every date and instant moved `days` days later (ids of
    taps and pings made unique for copy `k`)."""
    cols = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
        "ORDER BY column_index",
        [table],
    ).fetchall()
    out = []
    for name, dtype in cols:
        q = f'"{name}"'
        if name in ("ingested_at", "computed_at"):
            out.append(q)
        elif dtype == "DATE":
            out.append(f"{q} + {days} AS {q}")
        elif dtype.startswith("TIMESTAMP"):
            out.append(f"{q} + INTERVAL {days} DAY AS {q}")
        elif name == "transaction_id":
            out.append(f"{q} || '~{k}' AS {q}")
        elif name == "ping_id" or name.endswith("_ping_id"):
            out.append(f"{q} + {k * PING_ID_STEP} AS {q}")
        else:
            out.append(q)
    return ", ".join(out)


def replicate_year(store: Path, first: date, days: int, last: date, tz: str) -> dict[str, int]:
    """Copy the `days` days from `first` forward, `days` days at a time, until `last`; the
    copies overwrite nothing the stretch holds. Rows per table after."""
    # DuckDB 2 refuses enable_progress_bar in the connect config: a session setting
    con = duckdb.connect(str(store))
    try:
        con.execute("SET enable_progress_bar = false")
        end = first + timedelta(days=days - 1)
        # a source longer than the stretch (January's 31 days) keeps its own later days
        held = con.execute("SELECT max(service_date) FROM trip_outcomes").fetchall()[0][0]
        for table in DERIVED_BY_INDICES:
            con.execute(f"DELETE FROM {table}")
        k = 1
        while first + timedelta(days=k * days) <= last:
            shift = k * days
            lo = max(
                first + timedelta(days=shift), end + timedelta(days=1), held + timedelta(days=1)
            )
            for table in DAY_TABLES:
                cols = _shifted_select(con, table, shift, k)
                con.execute(
                    f"INSERT INTO {table} SELECT {cols} FROM {table} "
                    "WHERE service_date BETWEEN ? AND ? "
                    f"AND service_date + {shift} BETWEEN ? AND ?",
                    [first, end, lo, last],
                )
            for table in INSTANT_TABLES:
                local = f"CAST(timezone('{tz}', event_at) AS DATE)"
                cols = _shifted_select(con, table, shift, k)
                con.execute(
                    f"INSERT INTO {table} SELECT {cols} FROM {table} "
                    f"WHERE {local} BETWEEN ? AND ? AND {local} + {shift} BETWEEN ? AND ?",
                    [first, end, lo, last],
                )
            k += 1
        con.execute("CHECKPOINT")
        return {
            t: int(con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0])
            for t in (*DAY_TABLES, *INSTANT_TABLES)
        }
    finally:
        con.close()


def build_source(weeks: int, vehicles: int) -> Path:
    """The store of the first `weeks` weeks of YEAR through the pipeline up to crowding
    (`bench_year`'s commands), built once and kept under SOURCE_CACHE."""
    days = 7 * weeks
    folder = SOURCE_CACHE / f"v{vehicles}-w{weeks}"
    store = folder / "pontual.duckdb"
    if (folder / ".complete").exists():
        return store
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    first = date(YEAR, 1, 1)
    last = first + timedelta(days=days - 1)
    folders, _ = simulate_chunks(chunk_ranges(first, days), vehicles, SIM_CACHE)
    subprocess.run([sys.executable, "-m", "pontual", "--quiet", "warm"], check=True)
    for stage, argv in build_plan(folders, first, last):
        if stage in ("indices", "annual dossier"):
            continue
        wall, _cpu, _peak = run_command(argv, store)
        print(f"  source: {stage} {wall:.0f} s", flush=True)
    (folder / ".complete").touch()
    return store


def write_inputs(sim_folder: Path, out: Path) -> list[str]:
    """The CLI's cost and population files for the year: the simulated cost per km of each
    operator in January, repeated for every month (the simulation writes only its months)."""
    import polars as pl

    costs = pl.read_csv(sim_folder / "cost_per_km.csv")
    first = costs.group_by("operator_id").agg(pl.col("cost_per_km").first())
    months = pl.DataFrame({"month": [f"{YEAR}-{m:02d}" for m in range(1, 13)]})
    first.join(months, how="cross").select("operator_id", "month", "cost_per_km").write_csv(
        out / "cost_per_km.csv"
    )
    shutil.copyfile(sim_folder / "population.csv", out / "population.csv")
    return ["--costs", str(out / "cost_per_km.csv"), "--population", str(out / "population.csv")]


def build_year_store(source: Path, store: Path, first: date, days: int, last: date) -> None:
    """Copy the source store beside `store`, fill it to `last` (`replicate_year`) and publish
    its snapshot once (untimed: the pipeline's last command would have)."""
    from core.profile import load_profile
    from core.settings import DEFAULT_PROFILE
    from core.store import Store

    t0 = time.perf_counter()
    for name in ("pontual.duckdb", "pontual.hashkey"):
        if (source.parent / name).exists():
            shutil.copyfile(source.parent / name, store.parent / name)
    tz = load_profile(DEFAULT_PROFILE).general.timezone.value
    rows = replicate_year(store, first, days, last, tz)
    with Store.open(store) as s:
        s.publish_snapshot(mode="months")
    print(
        f"store: {first} .. {last} from {days} day(s) copied forward in "
        f"{time.perf_counter() - t0:.0f} s; {rows['trip_outcomes']:,} trips, "
        f"{rows['fare_transactions']:,} taps, {rows['vehicle_locations']:,} pings, "
        f"{store.stat().st_size / 1024**3:.1f} GB",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a store holding the first weeks of 2025")
    parser.add_argument("--weeks", type=int, default=4, help="weeks of the stretch copied forward")
    parser.add_argument("--months", type=int, default=12, help="months of the year (12: all)")
    parser.add_argument("--vehicles", type=int, default=300, help="vehicles at the peak")
    parser.add_argument("--keep", type=Path, help="build the year store here and keep it")
    parser.add_argument(
        "--store", type=Path, help="time the commands on this store as it is (made by --keep)"
    )
    parser.add_argument(
        "--inputs", type=Path, help="a simulated folder with cost_per_km.csv and population.csv"
    )
    parser.add_argument("--no-dossier", action="store_true", help="time the indices only")
    args = parser.parse_args(argv)
    if not 1 <= args.months <= 12:
        parser.error("--months must be 1 to 12")
    first = date(YEAR, 1, 1)
    last = (date(YEAR, args.months, 28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    source = args.source or (build_source(args.weeks, args.vehicles) if not args.store else None)
    # the cost and population files of the simulated city (any of its simulated days)
    sim = args.inputs or SIM_CACHE / f"v{args.vehicles}-s1" / f"{first}_{first}"
    week = SIM_CACHE / f"v{args.vehicles}-s1" / f"{first}_{first + timedelta(days=6)}"
    if args.inputs is None and week.exists():
        sim = week
    elif args.inputs is None and not sim.exists():
        simulate_chunks([(first, first)], args.vehicles, SIM_CACHE)

    root = args.keep or Path(tempfile.mkdtemp(prefix="pontual-bench-indices-"))
    if args.store is not None:
        root = args.store.parent
    root.mkdir(parents=True, exist_ok=True)
    store = root / "pontual.duckdb"
    os.environ["PONTUAL_SNAPSHOT"] = "months"
    try:
        if args.store is None:
            assert source is not None
            build_year_store(source, store, first, 7 * args.weeks, last)
        extra = write_inputs(sim, root)
        months = [f"{YEAR}-{m:02d}" for m in range(1, args.months + 1)]
        year = str(YEAR)
        plan = [(m, ["indices", "--period", m, "--format", "csv", *extra]) for m in months]
        plan.append((year, ["indices", "--period", year, "--format", "csv", *extra]))
        # the same rows again, in one command (`--months`: one import, one publication)
        together = ["indices", "--period", year, "--months", "--format", "csv", *extra]
        plan.append(("--months", together))
        if not args.no_dossier:
            plan.append(("dossier", ["report", "annual", "--year", year]))
        times: dict[str, tuple[float, float, float]] = {}
        for label, command in plan:
            times[label] = run_command(command, store)
            wall, cpu, peak = times[label]
            print(f"  {label:<8} wall {wall:6.1f} s  cpu {cpu:6.1f} s  peak {peak:.2f} GB")
        apart = [times[k] for k in (*months, year)]
        wall, cpu = sum(v[0] for v in apart), sum(v[1] for v in apart)
        share = 12 / args.months  # a shorter run's figures scaled to the year (NOT measured)
        print(
            f"indices, {len(months)} month(s) + the year, every scope, one command each: wall "
            f"{wall:.1f} s, cpu {cpu:.1f} s (a month's median cpu "
            f"{statistics.median(v[1] for v in apart[:-1]):.1f} s, the year's {apart[-1][1]:.1f} s)"
        )
        one_wall, one_cpu, _ = times["--months"]
        print(
            f"indices in one command (--months): wall {one_wall:.1f} s, cpu {one_cpu:.1f} s "
            f"(one-minute load {os.getloadavg()[0]:.1f}); target <= {TARGET_S:g} s"
            + (
                f": cpu/target {one_cpu / TARGET_S:.2f}"
                if args.months == 12
                else f" for 12 months: scaled linearly (NOT measured) cpu {one_cpu * share:.0f} s, "
                f"cpu/target {one_cpu * share / TARGET_S:.2f}"
            )
        )
        if "dossier" in times:
            print(
                f"annual dossiers: wall {times['dossier'][0]:.1f} s, cpu {times['dossier'][1]:.1f} s"
            )
    finally:
        if args.keep is None and args.store is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
