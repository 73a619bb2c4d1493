"""A year end to end: a simulated 300-bus city through ingest -> match -> crowding -> indices
-> annual dossier, each stage as the CLI runs it (one `python -m pontual` process per command),
with each stage's wall time, share of the total and peak RSS, then the store's bytes per ping
and per tap and the time of publishing the readers' snapshot.

Targets (issue 21): the year (365 days) in <= 15 min on 2 cores with peak memory <= 6 GB;
indices for the year (per month and for the year, every scope) <= 30 s; <= 20 B per stored
ping. A month is what fits a session on the shared machine: `--days 31` runs January and prints
the per-day costs and their linear extrapolation to 365 days (an extrapolation, not a run).

    .venv/bin/python -m benchmarks.bench_year [--days 365] [--vehicles 300] [--cache DIR]

The simulated days are generated once, a week per `pontual simulate` run (a simulation holds
its days in memory: about 1.9 GB for a week), and kept under `bench-output/year-cache/`
(or `--cache`); a longer run reuses the weeks a shorter one made. The store is built afresh in
a temporary folder (or `--store`) on every run.

Measured 2026-12-02 (session 31), the whole year (365 days: 135.8 M pings, 27.4 M taps, 66
commands: each month's raw files in one ingest command per kind, crowding a month per
command, the indices in one `--months` command; publishing by month files), on the shared
2-core machine while it was quiet (one-minute load 1.8-2.9, nothing else running):
**984 s wall, 1 553 s of CPU**; target 900 s: NOT met (9 % over). By stage, wall s (share,
CPU s): ingest registers 19.0 (1.9 %, 21.9), ingest avl 175.1 (17.8 %, 276.7), ingest fares
99.9 (10.2 %, 144.2), match 369.5 (37.5 %, 596.6: 1.01 s a day, 1.6 cores busy), crowding
266.6 (27.1 %, 434.8: 22 s a month), indices 18.0 (1.8 %, 25.1: the 30 s target met), annual
dossier 29.7 (3.0 %, 46.0: 57 % of it the fingerprint scan that checks every raw day's
recorded digest), gtfs load and init 6.4. Peak RSS 4.68 GB (match; target 6 GB: met). The
same run under load (the test suite beside it, load 5-8): 1 346 s wall, 1 517 s CPU.
Before (session 29, weekly ingest commands and a command per month of indices, at a load of
6-28): 2 424 s of CPU, 0.64x of it now. The store: 6.26 GB, 49.5 B per ping over the whole
file; the pings' own table 13.5 B/ping (target 20: met), the taps' 46.8 B/tap. The snapshot
(6.22 GB): published after a command that changed no big table in 0.40 s; every month
written again (a first publication) 157 s (318 s under load); a whole-file copy 7.05 s.

Session 32 (2026-12-02, main 46686c4: the day's assembly as its own pipeline stage, packed
sorts, crowding's inserts in whole row groups, the ingest's digests beside the next file, the
fingerprint scan by quarter hour), the same 365 days and plan, quiet machine (one-minute load
1.7-3.7): **931 s wall, 1 506 s of CPU**; target 900 s: NOT met (3.4 % over). By stage, wall s
(share, CPU s): ingest registers 21.4 (2.3 %, 24.3), ingest avl 171.9 (18.5 %, 291.4), ingest
fares 102.6 (11.0 %, 158.0), match 343.8 (36.9 %, 576.2: 0.94 s a day, 1.7 cores busy),
crowding 245.9 (26.4 %, 392.9: 20.5 s a month), indices 17.5 (1.9 %, 24.7), annual dossier
21.0 (2.3 %, 29.7), gtfs load and init 7.4. Peak RSS 4.83 GB (match). Store 6.13 GB, the
pings' table 13.4 B/ping, the taps' 46.8 B/tap. Snapshot: 0.30 s after a command that changed
no big table; every month written 158.6 s; a whole-file copy 6.42 s. The months-mode
publication is now the largest cost common to the stages: about a third of an `ingest avl`
command's CPU (the month's pings compressed again into its month file), 7 CPU-s of a
crowding month. A second run right after (main 00c5ec6, load ~2): 924 s wall, 1 494 s of
CPU (ingest avl 168.0, fares 98.7, match 339.7, crowding 250.1, indices 18.9, dossier 22.1).

Session 33 (2026-12-02, main e4c5274: a finished month's snapshot files written during the
match, a service pattern's stop times read once per match, the key check of derived writes by
hash, cheaper matching and crowding steps, a command's start), the same 365 days and plan,
quiet machine (one-minute load ~2): **824 s wall, 1 336 s of CPU; target 900 s: met** (8.4 %
under). By stage, wall s (share, CPU s): ingest registers 19.1 (2.3 %, 21.9), ingest avl 162.0
(19.7 %, 275.7), ingest fares 92.6 (11.2 %, 143.8), match 290.5 (35.3 %, 488.8: 0.80 s a day),
crowding 215.9 (26.2 %, 346.0: 18 s a month), indices 16.7 (2.0 %, 23.5), annual dossier 19.9
(2.4 %, 28.4), gtfs load and init 7.0. Peak RSS 4.75 GB (match). Store 6.13 GB, the pings'
table 13.5 B/ping. Snapshot: 0.28 s after a command that changed no big table; every month
written 149.4 s; a whole-file copy 5.44 s. A second run right after (load ~1.9): 821 s wall,
1 338 s of CPU (ingest avl 159.5, fares 91.0, match 293.0, crowding 215.2, indices 17.3,
dossier 20.9), peak 4.90 GB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path

import duckdb

from benchmarks.bench_gtfs import compile_checkout
from core.periods import months_in, range_period
from core.store import SNAPSHOT_MODE_ENV

YEAR = 2025
"""The simulated year: a past one, since ingest quarantines pings stamped in the future."""
CHUNK_DAYS = 7
CACHE = Path(__file__).resolve().parent.parent / "bench-output" / "year-cache"
SEED = 1
TARGET_YEAR_S = 15 * 60
TARGET_PEAK_GB = 6.0
TARGET_INDICES_S = 30.0
TARGET_B_PER_PING = 20.0


@dataclass
class Stage:
    """One stage of the pipeline: its commands' wall seconds and the largest peak RSS."""

    name: str
    seconds: float = 0.0
    cpu_s: float = 0.0
    peak_gb: float = 0.0
    commands: int = 0


def chunk_ranges(first: date, days: int) -> list[tuple[date, date]]:
    """The simulated chunks: CHUNK_DAYS-day ranges from `first` (the last may be shorter),
    never across a year's end."""
    out = []
    day, last = first, first + timedelta(days=days - 1)
    while day <= last:
        end = min(day + timedelta(days=CHUNK_DAYS - 1), last)
        out.append((day, end))
        day = end + timedelta(days=1)
    return out


def simulate_chunks(
    ranges: list[tuple[date, date]], vehicles: int, cache: Path
) -> tuple[list[Path], float]:
    """The folder of each chunk, simulated now when not cached; the seconds spent simulating.

    Each chunk is simulated in its own process: this one stays small, so the peak RSS that
    each pipeline command reports is its own (a forked child starts from its parent's)."""
    spent = 0.0
    folders = []
    for start, end in ranges:
        folder = cache / f"v{vehicles}-s{SEED}" / f"{start}_{end}"
        if not (folder / ".complete").exists():
            t0 = time.perf_counter()
            shutil.rmtree(folder, ignore_errors=True)
            cmd = [sys.executable, "-m", "benchmarks.bench_year", "--simulate-chunk"]
            cmd += [str(start), str(end), str(vehicles), str(folder)]
            subprocess.run(cmd, check=True)
            spent += time.perf_counter() - t0
            print(f"  simulated {start} .. {end} in {time.perf_counter() - t0:.0f} s", flush=True)
        folders.append(folder)
    return folders, spent


def simulate_chunk(start: date, end: date, vehicles: int, folder: Path) -> None:
    """Simulate the days `start`..`end` into `folder`, keeping only what the pipeline reads."""
    from sample_data.options import SimulationOptions
    from sample_data.simulate import simulate

    opts = replace(
        SimulationOptions(),
        start=start,
        days=(end - start).days + 1,
        seed=SEED,
        n_vehicles=vehicles,
        write_text_avl=False,
        text_days=1,
    )
    simulate(opts, folder)
    for name in ("avl_mqtt.jsonl", "fares_mqtt.jsonl", "avl.csv"):
        (folder / name).unlink(missing_ok=True)
    (folder / ".complete").touch()


def run_command(argv: list[str], store: Path) -> tuple[float, float, float]:
    """Run `pontual ARGV` as its own process; its wall seconds, CPU seconds (user + system,
    every thread: on a shared machine the wall clock also measures the wait for a core) and
    peak RSS (GB)."""
    cmd = [sys.executable, "-m", "pontual", "--quiet", "--store", str(store), *argv]
    # a year's store publishes its readers' snapshot by month files (ADR 0104), unless the
    # caller chose otherwise
    env = dict(os.environ)
    env.setdefault(SNAPSHOT_MODE_ENV, "months")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.stderr.write(err.decode(errors="replace"))
        raise SystemExit(f"pontual {' '.join(argv)} failed with exit code {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024**2


def group_folders(folders: list[Path], per: str) -> list[list[Path]]:
    """The chunks' folders grouped as the ingest commands take them: one group per chunk
    ("week"), or per calendar month of the chunk's first day ("month": the month's files in
    one `pontual ingest KIND FILE...`, as a city re-processing a year hands them over)."""
    if per == "week":
        return [[f] for f in folders]
    groups: dict[str, list[Path]] = {}
    for folder in folders:
        groups.setdefault(folder.name[:7], []).append(folder)  # "YYYY-MM" of the chunk's start
    return list(groups.values())


def build_plan(
    folders: list[Path], first: date, last: date, ingest_per: str = "month"
) -> list[tuple[str, list[str]]]:
    """(stage, argv) of every command, in the order `pontual demo` runs them; the raw files are
    ingested a group of chunks per command (`group_folders`)."""
    head = folders[0]
    plan: list[tuple[str, list[str]]] = [
        ("init", ["init"]),
        (
            "gtfs load",
            ["gtfs", "load", str(head / "gtfs.zip"), "--from", str(first), "--to", str(last)],
        ),
        ("ingest registers", ["ingest", "vehicles", str(head / "vehicles.csv")]),
    ]
    groups = group_folders(folders, ingest_per)
    for group in groups:
        for kind, name in (("incidents", "incidents.csv"), ("surveys", "iqs_surveys.csv")):
            plan.append(("ingest registers", ["ingest", kind, *(str(f / name) for f in group)]))
    for group in groups:
        plan.append(("ingest avl", ["ingest", "avl", *(str(f / "avl.parquet") for f in group)]))
        plan.append(("ingest fares", ["ingest", "fares", *(str(f / "fares.csv") for f in group)]))
    plan.append(("match", ["match", "--from", str(first), "--to", str(last)]))
    months = months_in(range_period(first, last))
    # Crowding a month at a time, as a city closes each month: its origin-destination shares
    # are pooled over the range a command is given, and one command over a whole year holds
    # every tap of it at once (ADR 0103).
    for month in months:
        lo, hi = max(first, month.start), min(last, month.end)
        plan.append(("crowding", ["crowding", "--from", str(lo), "--to", str(hi)]))
    extra = ["--costs", str(head / "cost_per_km.csv"), "--population", str(head / "population.csv")]
    # each month's indices, then the year's, in one command (`--months`: the same rows as a
    # command per month then the year's, ADR 0110), over the days there are (all 365 in the
    # full run)
    year = ["indices", "--period", str(YEAR), "--months", "--format", "csv", *extra]
    plan.append(("indices", year))
    plan.append(("annual dossier", ["report", "annual", "--year", str(YEAR)]))
    return plan


def measure_store(store: Path) -> dict[str, float]:
    """Store file size, rows of pings and taps, their bytes per row (whole file / rows, and
    each table's own blocks / rows), after a checkpoint."""
    con = duckdb.connect(str(store))
    try:
        con.execute("CHECKPOINT").fetchall()
        block = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]

        def table_bytes(name: str) -> int:
            sql = (
                f"SELECT count(DISTINCT block_id) FROM pragma_storage_info('{name}') "
                "WHERE persistent"
            )
            return int(con.execute(sql).fetchall()[0][0]) * int(block)

        pings = con.execute("SELECT count(*) FROM vehicle_locations").fetchall()[0][0]
        taps = con.execute("SELECT count(*) FROM fare_transactions").fetchall()[0][0]
        out = {
            "file_bytes": float(store.stat().st_size),
            "pings": float(pings),
            "taps": float(taps),
            "ping_table_bytes": float(table_bytes("vehicle_locations")),
            "tap_table_bytes": float(table_bytes("fare_transactions")),
        }
    finally:
        con.close()
    return out


def measure_publish(store: Path) -> dict[str, float]:
    """Seconds to publish the snapshot by month files (`Store.publish_snapshot`, mode
    "months", ADR 0104) when nothing changed since
    the last one (what a command that writes only small tables pays: indices, a report), when
    every month is written (a first publication, or a re-match of the whole period), and to
    copy the whole store file (what every command paid before ADR 0104)."""
    from core.store import Store, snapshot_parts_dir, snapshot_path

    out: dict[str, float] = {}
    with Store.open(store) as s:
        s.publish_snapshot(mode="months")  # the bench's commands ran in the default mode
        t0 = time.perf_counter()
        s.publish_snapshot(mode="months")
        out["unchanged_s"] = time.perf_counter() - t0
        snapshot_path(store).unlink()
        t0 = time.perf_counter()
        s.publish_snapshot(mode="months")
        out["every_month_s"] = time.perf_counter() - t0
    parts = snapshot_parts_dir(store)
    out["snapshot_bytes"] = float(sum(p.stat().st_size for p in parts.rglob("*") if p.is_file()))
    tmp = store.with_name("copy-check.duckdb")
    t0 = time.perf_counter()
    shutil.copyfile(store, tmp)
    out["copy_s"] = time.perf_counter() - t0
    tmp.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="days from 1 January (365: a year)")
    parser.add_argument("--vehicles", type=int, default=300, help="vehicles at the peak")
    parser.add_argument("--cache", type=Path, default=CACHE, help="simulated days kept here")
    parser.add_argument("--store", type=Path, help="build the store here (default: a temp dir)")
    parser.add_argument(
        "--ingest-per",
        choices=("month", "week"),
        default="month",
        help="raw files per ingest command: a month's (default) or a week's",
    )
    parser.add_argument("--simulate-chunk", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.simulate_chunk:
        start, end, vehicles, folder = args.simulate_chunk
        simulate_chunk(
            date.fromisoformat(start), date.fromisoformat(end), int(vehicles), Path(folder)
        )
        return 0
    if not 1 <= args.days <= 365:
        parser.error("--days must be 1 to 365")
    first = date(YEAR, 1, 1)
    last = first + timedelta(days=args.days - 1)
    ranges = chunk_ranges(first, args.days)
    folders, simulated_s = simulate_chunks(ranges, args.vehicles, args.cache)
    if simulated_s:
        print(f"simulated {len(ranges)} chunk(s) in {simulated_s:.0f} s (once; cached)")
    # byte-compiled as an installed Pontual is, and the matching kernels compiled once, as
    # `make warm` does at set-up (neither timed)
    compile_checkout(Path(__file__).resolve().parent.parent)
    subprocess.run([sys.executable, "-m", "pontual", "--quiet", "warm"], check=True)

    root = Path(tempfile.mkdtemp(prefix="pontual-bench-year-")) if args.store is None else None
    store = args.store or (root / "pontual.duckdb")  # type: ignore[operator]
    stages: dict[str, Stage] = {}
    try:
        for name, command in build_plan(folders, first, last, args.ingest_per):
            wall, cpu, peak = run_command(command, store)
            stage = stages.setdefault(name, Stage(name))
            stage.seconds += wall
            stage.cpu_s += cpu
            stage.peak_gb = max(stage.peak_gb, peak)
            stage.commands += 1
            print(
                f"  [{time.strftime('%H:%M:%S')}] {name}: {' '.join(command[:2])} "
                f"{wall:.1f} s wall, {cpu:.1f} s cpu, {peak:.2f} GB",
                flush=True,
            )
        total = sum(s.seconds for s in stages.values())
        days = args.days
        print(
            f"year bench: {days} day(s) {first} .. {last}, {args.vehicles} buses at the peak, "
            f"{sum(s.commands for s in stages.values())} commands"
        )
        print(
            f"  {'stage':<18} {'wall s':>8} {'share':>6} {'cpu s':>8} {'peak GB':>8} "
            f"{'cmds':>5} {'s/day':>7}"
        )
        for s in stages.values():
            print(
                f"  {s.name:<18} {s.seconds:8.1f} {100 * s.seconds / total:5.1f}% "
                f"{s.cpu_s:8.1f} {s.peak_gb:8.2f} {s.commands:5d} {s.seconds / days:7.2f}"
            )
        peak = max(s.peak_gb for s in stages.values())
        cpu = sum(s.cpu_s for s in stages.values())
        print(
            f"  total {total:.0f} s ({total / days:.2f} s/day; cpu {cpu:.0f} s, one-minute load "
            f"{os.getloadavg()[0]:.1f}), peak RSS {peak:.2f} GB "
            f"(target <= {TARGET_PEAK_GB:g} GB: {'ok' if peak <= TARGET_PEAK_GB else 'OVER'})"
        )
        if days < 365:
            year_s = total / days * 365
            print(
                f"  extrapolated (linear in days, NOT measured) to 365 days: {year_s:.0f} s "
                f"(target <= {TARGET_YEAR_S} s: {'ok' if year_s <= TARGET_YEAR_S else 'OVER'}); "
                f"from the CPU time, on 2 idle cores at best {cpu / days * 365 / 2:.0f} s"
            )
        indices = stages["indices"]
        scaled = TARGET_INDICES_S * days / 365
        print(
            f"  indices: {len(months_in(range_period(first, last)))} month(s) + the year, every "
            f"scope, one command, {indices.seconds:.1f} s "
            f"(target scaled to {days} days: <= {scaled:.1f} s; "
            f"{'ok' if indices.seconds <= scaled else 'OVER'})"
        )
        m = measure_store(store)
        # The issue's measure is per stored ping and per tap: the pings' own blocks per ping
        # (the whole file over the pings also counts the taps, measured per tap, and every
        # derived table)
        b_ping = m["ping_table_bytes"] / m["pings"]
        print(
            f"store: {m['file_bytes'] / 1024**3:.2f} GB, {m['pings']:,.0f} pings, "
            f"{m['taps']:,.0f} taps; {b_ping:.1f} B per stored ping (the pings' table; target "
            f"<= {TARGET_B_PER_PING:g}: {'ok' if b_ping <= TARGET_B_PER_PING else 'OVER'}), the "
            f"taps' {m['tap_table_bytes'] / m['taps']:.1f} B/tap; the whole file "
            f"{m['file_bytes'] / m['pings']:.1f} B per ping"
        )
        pub = measure_publish(store)
        print(
            f"snapshot ({pub['snapshot_bytes'] / 1024**3:.2f} GB): publish after a command that "
            f"changed no big table {pub['unchanged_s']:.2f} s, with every month written "
            f"{pub['every_month_s']:.2f} s; a whole-file copy (before ADR 0104) "
            f"{pub['copy_s']:.2f} s"
        )
    finally:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
