"""File ingest throughput: Parquet and CSV pings through `pontual ingest avl`'s code path,
side by side with DuckDB reading the same file bare, and the per-call rate of
`write_avl_records` on 5 000-record batches (what the MQTT listener calls).

Targets (issue 4): Parquet >= 2 M rows/s, CSV >= 500 k rows/s, >= 10 k records/s per batch.
Each figure is the best of `REPEATS` runs (the machine is shared; the best run is the one
least disturbed), each ingest into a fresh store. The stage lines split one ingest's CPU time
(all threads) by stage: read the file, parse to the declared dtypes, validate (rules and
quarantine split), key check (batch and stored keys), insert into DuckDB, hash the file.
Run: ``.venv/bin/python -m benchmarks.bench_ingest_files [N_ROWS]`` (default 1 000 000).

A simulated week through the CLI (issue 21), as `bench_year` runs it, one `python -m pontual`
process per file: ``... --week DIR [--baseline BASE] [--runs 3] [--keep DIR]`` with DIR a week
of bench_year's cache (e.g. ``bench-output/year-cache/v300-s1/2025-01-01_2025-01-07``) and BASE
a checkout to compare with (``git worktree add /tmp/base main``). It prints the median CPU
seconds (user + system, all threads) of the registers (vehicles, incidents, surveys), the
week's AVL Parquet and fares CSV, and "dirty" files made from the week's own records
(`build_dirty_week`: out-of-range and unreadable values, unknown vehicles, clocks never set,
records already stored, tap keys stored with another amount), per tree, interleaved, with the
ratios and pings per CPU-second of `ingest avl`; then compares the two trees' stores exactly
(`compare_stores`: every ingested table and the quarantine, less the columns that say when a
run ran) and exits 1 if they differ.

Measured 2026-12-01, `--week` on January's first week (2.62 M pings read, 2.61 M stored; 0.53 M
taps; the dirty files 0.2 M pings and 50 k taps, 190 k quarantined), 3 runs interleaved with
main at 2fa443d, one-minute load 17-24, median CPU s (per day): registers 3.07 -> 2.88 (0.94),
avl 5.44 -> 4.18 (0.77), fares 4.71 -> 2.87 (0.61), dirty 4.48 -> 4.35 (0.97); registers + avl
+ fares 1.89 -> 1.42 CPU s per day (0.75); `ingest avl` 479 k -> 623 k pings per CPU-second;
stores identical. Five weeks in a row as bench_year runs them (35 days, one run each): 1.79 ->
1.35 CPU s per day, each week's command costing the same from the first week to the fifth.
What is left of an `ingest avl` of 2.6 M pings (4.2 CPU s): the process start (~0.8: importing
Polars, DuckDB, PyArrow, NumPy, pydantic), DuckDB's insert (~1.7, ~0.65 per million rows
whatever the columns hold: leaving the constant `source` and `ingested_at` or the all-null
columns out of the insert was measured and changes nothing), reading, parsing, judging and the
key check (~1.2). A registers command is ~0.95 CPU s, ~0.8 of it the process start.

Measured 2026-11-30 on the 2-core shared machine (1 M pings; each line's 1-minute load beside
it; another engineer's jobs kept one core busy most of the time):

- load 1.1-1.5 (second core mostly free): Parquet 2.15-2.28 M rows/s (0.44-0.47 s; target
  met), re-ingest 2.9-3.5 M/s; CSV 1.0-1.5 M/s; the typed-rows append alone 3.4 M/s.
- load 2.0-3.0 (about one core for us): Parquet 1.23-1.43 M/s, CSV 0.78-1.5 M/s; the
  typed-rows append alone 1.83-1.93 M/s, so on one core the target cannot be met whatever the
  reading and parsing cost.
- CPU s by stage (Parquet): read 0.07, parse 0.12, validate 0.01, key check 0.04, insert
  0.45 (two threads), file hash 0.02 (on its own thread, beside the rest).
- write_avl_records, 5 000-record batches: 140-185 k records/s (was 95-104 k: the time parse
  and the card hash opened a new DuckDB database per call, ~15 ms; now a cursor).

Before (1.28-1.35 M/s at any load) the insert ran on one thread: the identity column's
`DEFAULT nextval(...)` serialises DuckDB's insert; the store now reserves the ids as one block.
Measured and not kept: DuckDB reading the Parquet file itself in one INSERT ... SELECT (0.51-
0.57 s vs 0.45-0.48 s from Arrow: the insert is the cost, not the read), one 1 M-row Arrow batch
(0.51 s vs 0.45 s), preserve_insertion_order=false, threads=1, disabling compression methods
and an older storage version (all within noise). DuckDB's storage write costs ~25 ms of CPU per
million values even for an all-null column, so the six columns a plain AVL file leaves empty
cost about a third of the insert.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from core.profile import load_profile
from core.store import Store
from ingest.files import compute_file_sha256, ingest_file
from ingest.options import IngestOptions
from ingest.rules import read_network_context
from ingest.writing import write_avl_records


def build_pings(n: int, seed: int = 0) -> pl.DataFrame:
    """`n` pings of 300 buses around Bento Gonçalves, one every 100 ms overall."""
    rng = np.random.default_rng(seed)
    start = datetime(2026, 3, 2, 9, tzinfo=UTC)
    return pl.DataFrame(
        {
            "vehicle_id": (rng.integers(0, 300, n)).astype(str),
            "event_at": pl.datetime_range(
                start, start + (n - 1) * timedelta(milliseconds=100), "100ms", eager=True
            ).dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"),
            "lat": -29.17 + rng.random(n) * 0.05,
            "lon": -51.52 + rng.random(n) * 0.05,
            "speed_m_s": rng.random(n) * 15,
            "heading_deg": rng.random(n) * 360,
        }
    )


REPEATS = 3

# Stage name -> the function whose cumulative CPU time is that stage.
STAGES = {
    "read": ("ingest/tabular.py", "read_parquet_chunks"),
    "read csv": ("ingest/tabular.py", "read_csv_chunks"),
    "parse": ("ingest/parsing.py", "compute_typed"),
    "validate": ("ingest/checks.py", "compute_rejections"),
    "key check": ("core/store.py", "compute_new_keys"),
    "insert": ("core/store.py", "_run"),
}


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _best(fn, repeats: int = REPEATS) -> float:  # type: ignore[no-untyped-def]
    return min(_timed(fn) for _ in range(repeats))


def _ingest(store: Store, path: Path) -> None:
    profile = load_profile("bento-goncalves-2021")
    ingest_file(store, path, "avl", options=IngestOptions(), profile=profile)


def compute_stage_cpu_s(path: Path, store_path: Path) -> dict[str, float]:
    """CPU seconds (process time, all threads) of each stage of one ingest of `path`."""
    profiler = cProfile.Profile(time.process_time)
    with Store.open(store_path) as store:
        profiler.runcall(_ingest, store, path)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    out = dict.fromkeys(STAGES, 0.0)
    for (file, _, func), (_, _, _, cumulative, _) in stats.items():
        for stage, (suffix, name) in STAGES.items():
            if func == name and file.endswith(suffix):
                out[stage] += cumulative
    out["read"] += out.pop("read csv")  # the readers are generators: their own frames' time
    # The digest runs on a thread beside the ingest, which the profiler does not follow.
    start = time.process_time()
    compute_file_sha256(path)
    out["file hash (beside)"] = time.process_time() - start
    return out


def _load() -> str:
    """The 1-minute load average, to read a figure against (the machine is shared)."""
    return f"load {os.getloadavg()[0]:.2f}"


def compute_insert_floor_s(pings: pl.DataFrame, folder: Path) -> float:
    """Best time of `Store.append` alone for the pings already typed: DuckDB's share, which
    no change to the reading, parsing or validation can remove."""
    typed = pings.with_columns(
        pl.col("event_at").str.to_datetime(time_unit="us", time_zone="UTC"),
        pl.lit("avl.parquet").alias("source"),
        pl.lit(datetime.now(UTC)).alias("ingested_at"),
    )
    runs = []
    for i in range(REPEATS):
        with Store.open(folder / f"floor-{i}.duckdb") as store:
            runs.append(_timed(lambda: store.append("vehicle_locations", typed)))
    return min(runs)


def main(n: int = 1_000_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pings = build_pings(n)
        pings.write_parquet(folder / "avl.parquet")
        pings.write_csv(folder / "avl.csv")
        print(
            f"file ingest of {n:,} pings (rows/s, best of {REPEATS}; "
            "ratio = Pontual ingest time / DuckDB bare read time)"
        )
        for fmt, target in (("parquet", 2_000_000), ("csv", 500_000)):
            path = folder / f"avl.{fmt}"
            reader = "read_parquet" if fmt == "parquet" else "read_csv"
            con = duckdb.connect()
            bare = _best(lambda: con.sql(f"SELECT * FROM {reader}('{path}')").to_arrow_table())  # noqa: B023
            con.close()
            runs = []
            for i in range(REPEATS):
                with Store.open(folder / f"{fmt}-{i}.duckdb") as store:
                    runs.append(_timed(lambda: _ingest(store, path)))  # noqa: B023
                    assert store.count("vehicle_locations") == n
                    if i == REPEATS - 1:
                        again = _timed(lambda: _ingest(store, path))  # noqa: B023
                        assert store.count("vehicle_locations") == n
            ours = min(runs)
            rate = n / ours
            print(
                f"  {fmt:8s} ingest {rate:12,.0f}/s  re-ingest {n / again:12,.0f}/s  "
                f"duckdb bare {n / bare:12,.0f}/s  ratio {ours / bare:5.1f}x  "
                f"target {target:,}/s {'met' if rate >= target else 'NOT met'}  ({_load()})"
            )
            stages = compute_stage_cpu_s(path, folder / f"{fmt}-stages.duckdb")
            print(
                "           CPU s by stage: "
                + ", ".join(f"{name} {seconds:.2f}" for name, seconds in stages.items())
            )
        floor = compute_insert_floor_s(pings, folder)
        print(
            f"  store append alone (typed rows, the DuckDB floor): {n / floor:,.0f}/s ({_load()})"
        )
        batch = pings.head(5_000).with_columns(
            pl.int_range(pl.len()).cast(pl.String).alias("record_key")
        )
        with Store.open(folder / "batch.duckdb") as store:
            ctx = read_network_context(store)
            calls = 20
            elapsed = _timed(
                lambda: [
                    write_avl_records(
                        store,
                        batch.with_columns(pl.col("vehicle_id") + f"-{i}"),
                        source="bench",
                        context=ctx,
                    )
                    for i in range(calls)
                ]
            )
        print(f"  write_avl_records, 5 000-record batches: {calls * 5000 / elapsed:,.0f} records/s")


# -- a simulated week through `pontual ingest`, as bench_year runs it -------------------------
WEEK_KINDS = ("registers", "avl", "fares", "dirty")
# Columns that differ between two identical runs: when they ran, and the runs' own ids.
_RUN_COLUMNS = {
    "ingested_at",
    "quarantined_at",
    "started_at",
    "finished_at",
    "run_id",
    "recorded_at",
}
_COMPARED = (
    "vehicle_locations",
    "fare_transactions",
    "quarantine",
    "ingest_runs",
    "vehicles",
    "vehicle_inspections",
    "incidents",
    "iqs_surveys",
    "hash_key_fingerprints",
)
_HASH_KEY = "5e" * 32  # a fixed card-hashing key: both trees' card hashes must be equal


def build_dirty_week(week: Path, out: Path) -> tuple[Path, Path]:
    """Files that exercise the quarantine, the duplicates and the conflicts, made from the
    week's own records (fixed seed): AVL as text (CSV) with readings out of range, unreadable
    values, unknown vehicles, a clock never set, and records already stored; fares with an
    unknown class, negative amounts, missing cards and transaction ids, unreadable times,
    records already stored and stored keys with another amount (conflicts)."""
    rng = np.random.default_rng(7)
    avl = pl.read_parquet(week / "avl.parquet").sample(200_000, seed=7)
    avl = avl.with_columns(pl.col("event_at").dt.strftime("%Y-%m-%dT%H:%M:%S%.fZ")).cast(pl.String)
    n = avl.height
    pick = pl.Series(rng.integers(0, 9, n))
    avl = avl.with_columns(
        pl.when(pick == 1).then(pl.lit("0")).otherwise(pl.col("lat")).alias("lat"),
        pl.when(pick == 1)
        .then(pl.lit("0"))
        .when(pick == 2)
        .then(pl.lit("abc"))
        .otherwise(pl.col("lon"))
        .alias("lon"),
        pl.when(pick == 3).then(pl.lit("99")).otherwise(pl.col("speed_m_s")).alias("speed_m_s"),
        pl.when(pick == 4)
        .then(pl.lit("X-404"))
        .otherwise(pl.col("vehicle_id"))
        .alias("vehicle_id"),
        pl.when(pick == 5)
        .then(pl.lit("1970-01-01T00:00:05Z"))
        .when(pick == 6)
        .then(pl.lit("not a time"))
        .otherwise(pl.col("event_at"))
        .alias("event_at"),
        pl.when(pick == 7)
        .then(pl.lit("400"))
        .otherwise(pl.col("heading_deg"))
        .alias("heading_deg"),
    )
    avl_path = out / "avl_dirty.csv"
    pl.concat([avl, avl.head(1_000)]).write_csv(avl_path)
    fares = pl.read_csv(week / "fares.csv", infer_schema=False).sample(50_000, seed=7)
    pick = pl.Series(rng.integers(0, 9, fares.height))
    fares = fares.with_columns(
        pl.when(pick == 1).then(pl.lit("GOLD")).otherwise(pl.col("fare_class")).alias("fare_class"),
        pl.when(pick == 2)
        .then(pl.lit("-1"))
        .when(pick == 3)
        .then(pl.lit("9.99"))
        .otherwise(pl.col("amount"))
        .alias("amount"),
        pl.when(pick == 4).then(None).otherwise(pl.col("card_id")).alias("card_id"),
        pl.when(pick == 5).then(None).otherwise(pl.col("transaction_id")).alias("transaction_id"),
        pl.when(pick == 6)
        .then(pl.lit("yesterday"))
        .otherwise(pl.col("event_at"))
        .alias("event_at"),
        pl.when(pick == 7)
        .then(pl.lit("X-404"))
        .otherwise(pl.col("vehicle_id"))
        .alias("vehicle_id"),
    )
    conflicting = fares.head(500).with_columns(pl.lit("7.77").alias("amount"))
    fares_path = out / "fares_dirty.csv"
    pl.concat([fares, conflicting]).write_csv(fares_path)
    return avl_path, fares_path


def week_plan(week: Path, dirty: tuple[Path, Path]) -> list[tuple[str, list[str]]]:
    """(kind, argv) of the week's commands: set-up, then the registers and the week's files
    as bench_year runs them, then the dirty files."""
    first, last = (date.fromisoformat(d) for d in week.name.split("_"))
    return [
        ("setup", ["init"]),
        (
            "setup",
            ["gtfs", "load", str(week / "gtfs.zip"), "--from", str(first), "--to", str(last)],
        ),
        ("registers", ["ingest", "vehicles", str(week / "vehicles.csv")]),
        ("registers", ["ingest", "incidents", str(week / "incidents.csv")]),
        ("registers", ["ingest", "surveys", str(week / "iqs_surveys.csv")]),
        ("avl", ["ingest", "avl", str(week / "avl.parquet")]),
        ("fares", ["ingest", "fares", str(week / "fares.csv")]),
        ("dirty", ["ingest", "avl", str(dirty[0])]),
        ("dirty", ["ingest", "fares", str(dirty[1])]),
    ]


def run_week(tree: Path, plan: list[tuple[str, list[str]]], store: Path) -> dict[str, float]:
    """Run `plan` with the code of `tree` (PYTHONPATH), one `python -m pontual` process per
    command as bench_year does; the CPU seconds (user + system, every thread) of each kind."""
    env = dict(os.environ, PYTHONPATH=str(tree), PONTUAL_HASH_KEY=_HASH_KEY)
    out = dict.fromkeys(WEEK_KINDS, 0.0)
    for kind, argv in plan:
        cmd = [sys.executable, "-m", "pontual", "--quiet", "--store", str(store), *argv]
        proc = subprocess.Popen(
            cmd, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.stderr.write(err.decode(errors="replace"))
            raise SystemExit(f"pontual {' '.join(argv)} failed ({tree})")
        if kind != "setup":
            out[kind] += usage.ru_utime + usage.ru_stime
    return out


def read_comparable(store: Path) -> dict[str, pl.DataFrame]:
    """Every table an ingest writes, less the columns that say when it ran, sorted by all
    its columns (so that two runs compare row for row)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        con.execute("SET enable_progress_bar = false").fetchall()
        out = {}
        for name in _COMPARED:
            frame = con.sql(f'SELECT * FROM "{name}"').pl()
            frame = frame.drop([c for c in frame.columns if c in _RUN_COLUMNS])
            if name == "quarantine":  # a conflict's record holds the stored row's ingest time
                frame = frame.with_columns(
                    pl.col("raw_record").str.replace(r'"ingested_at":"[^"]*"', '"ingested_at":"-"')
                )
            out[name] = frame.sort(frame.columns, nulls_last=True)
        return out
    finally:
        con.close()


def compare_stores(a: Path, b: Path) -> list[str]:
    """The differences between the ingested tables of two stores (empty: identical, frame
    for frame, every value exact)."""
    left, right = read_comparable(a), read_comparable(b)
    diffs = []
    for name in _COMPARED:
        try:
            assert_frame_equal(left[name], right[name], check_exact=True)
        except AssertionError as exc:
            only_a = left[name].join(
                right[name], on=left[name].columns, how="anti", nulls_equal=True
            )
            only_b = right[name].join(
                left[name], on=left[name].columns, how="anti", nulls_equal=True
            )
            diffs.append(
                f"{name}: {str(exc).splitlines()[0]}; {only_a.height} rows only in the first, "
                f"{only_b.height} only in the second, e.g.\n{only_a.head(3)}\n{only_b.head(3)}"
            )
    return diffs


def main_week(week: Path, baseline: Path | None, runs: int, keep: Path | None = None) -> int:
    """Ingest the simulated week `week` with this tree (and `baseline`, interleaved), print
    the median CPU seconds by kind, the ratios and pings per CPU-second, and compare the
    stores of both trees exactly."""
    trees = {"new": Path(__file__).resolve().parent.parent}
    if baseline is not None:
        trees = {"base": baseline.resolve(), **trees}
    with tempfile.TemporaryDirectory(prefix="bench-ingest-week-") as tmp:
        folder = Path(tmp) if keep is None else keep
        folder.mkdir(parents=True, exist_ok=True)
        plan = week_plan(week, build_dirty_week(week, folder))
        cpu: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for i in range(runs):
            for name, tree in trees.items():
                store = folder / f"{name}-{i}" / "pontual.duckdb"
                cpu[name].append(run_week(tree, plan, store))
                if i < runs - 1 and keep is None:
                    shutil.rmtree(store.parent)
        con = duckdb.connect(str(folder / f"new-{runs - 1}" / "pontual.duckdb"), read_only=True)
        n_pings = con.sql("SELECT count(*) FROM vehicle_locations").fetchall()[0][0]
        n_quarantined = con.sql("SELECT count(*) FROM quarantine").fetchall()[0][0]
        con.close()
        first, last = (date.fromisoformat(d) for d in week.name.split("_"))
        days = (last - first).days + 1
        print(
            f"ingest of {week.name} ({days} days, {n_pings:,} pings stored, {n_quarantined:,} "
            f"quarantined), median CPU s of {runs} run(s), interleaved ({_load()}):"
        )
        medians = {
            name: {k: statistics.median(r[k] for r in cpu[name]) for k in WEEK_KINDS}
            for name in trees
        }
        for kind in WEEK_KINDS:
            line = "  ".join(f"{name} {medians[name][kind]:6.2f}" for name in trees)
            ratio = (
                f"  ratio new/base {medians['new'][kind] / medians['base'][kind]:.2f}"
                if baseline is not None
                else ""
            )
            print(
                f"  {kind:10s} {line}{ratio}   per day: "
                + "  ".join(f"{medians[name][kind] / days:5.2f}" for name in trees)
            )
        for name in trees:
            clean = sum(medians[name][k] for k in ("registers", "avl", "fares"))
            print(
                f"  {name}: {clean / days:.2f} CPU s per day (registers + avl + fares); "
                f"`ingest avl` {n_pings / medians[name]['avl']:,.0f} pings per CPU-second"
            )
        if baseline is not None:
            diffs = compare_stores(
                folder / f"base-{runs - 1}" / "pontual.duckdb",
                folder / f"new-{runs - 1}" / "pontual.duckdb",
            )
            print(
                "  stores: identical"
                if not diffs
                else "  stores DIFFER:\n    " + "\n    ".join(diffs)
            )
            return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n_rows", nargs="?", type=int, default=1_000_000)
    parser.add_argument("--week", type=Path, help="a simulated week folder (bench_year's cache)")
    parser.add_argument("--baseline", type=Path, help="a checkout of the base to compare with")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tree (median)")
    parser.add_argument("--keep", type=Path, help="build the stores here and keep them")
    args = parser.parse_args()
    if args.week is not None:
        raise SystemExit(main_week(args.week, args.baseline, args.runs, args.keep))
    main(args.n_rows)
