"""Matching throughput on a simulated day, beside the floor of the work.

Prints pings/s of `match_day` (clean, reference on shapes, runs, assignment, stop visits,
outcomes, breakdowns, headways), the floor (sorting the same pings by vehicle and time and
projecting them to metres), their ratio, and the peak memory of the matching process. Targets
(issue 5): >= 500 k pings/s, <= 5x the floor, peak memory <= 4 GB, on a day of >= 10 M pings
(`--vehicles 7000`, the default, simulates about 10.4 M).

The day is simulated in a child process into `--data` and its matching inputs (the schedule's
frames and the pings, as `pontual match` reads them from the store) written there as Parquet
once; both are reused when present. The measurement runs in another child process that reads
those inputs, so its memory is the matcher's plus the inputs it holds, not the simulator's or
the feed parser's.

Measured on the 2 shared cores, quiet machine, 2026-11-30 (session 3):
- 11.2 M pings (7000 vehicles, 88.5 k scheduled trips, 1400 shapes), 1 process (two batch
  threads): 17.6-19.6 s = 571-636 k pings/s, 3.7-4.3x the floor (4.3-5.3 s), peak
  3.5-3.6 GB of which 1.7 GB is the inputs held. With 2 processes: 22 s = 509 k pings/s, 5.1x, 4.1 GB:
  on two cores the threads of one process beat two processes.
- Before this session: 69 s = 162 k pings/s, 10.8x, 3.5 GB; at the start of session 2:
  127 s = 88 k pings/s, 25.6x, 5.7 GB.
- 300 vehicles (499 k pings): 0.97 s = 512 k pings/s, 5.5x the floor (0.18 s; a small day
  is dominated by building the day's network), 657 MB.
Where the time went (issue 5's closing notes): the shape passes near each ping come from a grid
of the densified points scanned by a compiled kernel (`analytics.matching.shape_grid`), the stretches
and their distances from one compiled pass per (shape, vehicle) (`analytics.matching.stretches`), the
runs' ends, evidence and silences from compiled per-run passes; batches are gathered by
position, projected in their thread, and run two at a time in threads.

Issue 16 (session 27), interleaved against `bad00c4` on the 2 shared cores under a load of
10-20 (wall figures several times the quiet ones, so the CPU ratio is the steadier): large
day CPU 1.01x, wall 1.07x (3 rounds); 300 vehicles CPU 1.03x, wall 1.04x (5 rounds); outputs
identical to the commit before. The extra time of the zone arrivals and look-alike shapes
had gone to stop visits (a composite-key search whose ties, every arrival at a first fix in
the zone, were bisected again) and to re-sorting the day's planned trips in every batch.

Against a base commit (issue 16: matching speed within 10 % of `bad00c4`'s on the large day):
``--base-ref REF`` (or ``BENCH_BASE_REF=REF`` in the environment, so ``make bench ONLY=matching
BENCH_BASE_REF=bad00c4`` shows it) extracts that commit's sources beside the day's data
(``git archive``, kept for the next run, with their own compiled kernels warmed by
``pontual warm``) and times the same inputs with both trees in turn, `--rounds` times
(interleaved, so both see the same load), then prints each round, the medians, their ratio and
the load average.

Run: ``.venv/bin/python -m benchmarks.bench_matching [--vehicles N] [--workers N] [--data DIR]
[--base-ref REF] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import polars as pl

from analytics.matching.batches import STORED_PING_COLUMNS, to_metres
from analytics.matching.day import Schedule, build_schedule, match_day
from analytics.matching.options import MatchOptions
from core.profile import load_profile
from core.tables.observed import INCIDENTS
from gtfs.read import read_feed

SIMULATE = (
    "import sys; from pathlib import Path; "
    "from sample_data.simulate import default_options, simulate; "
    "simulate(default_options(days=1, n_vehicles=int(sys.argv[1]), write_text_avl=False), "
    "Path(sys.argv[2]))"
)


PREPARE = (
    "import sys; from pathlib import Path; "
    "from benchmarks.bench_matching import write_inputs; "
    "write_inputs(Path(sys.argv[1]), Path(sys.argv[2]))"
)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class RssSampler:
    """Peak resident memory while a block runs, of this process and its descendants (the
    matching workers), sampled every 20 ms from /proc (state: a thread)."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        page_mb = os.sysconf("SC_PAGE_SIZE") / 2**20
        pids = [os.getpid()]
        last_scan = 0.0
        while not self._stop.is_set():
            if time.monotonic() - last_scan > 0.5:  # workers come and go: rescan twice a second
                pids = [os.getpid(), *_descendants(os.getpid())]
                last_scan = time.monotonic()
            total = 0.0
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/statm") as f:
                        total += int(f.read().split()[1]) * page_mb
                except OSError:
                    continue  # a worker that just ended
            self.peak_mb = max(self.peak_mb, total)
            self._stop.wait(0.02)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _descendants(root: int) -> list[int]:
    """Process ids below `root`, from the parent ids in /proc/*/stat."""
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    # the command name may hold spaces; fields resume after its ')'
                    parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [root]
    while frontier:
        kids = [pid for pid, ppid in parent.items() if ppid in frontier]
        found += kids
        frontier = kids
    return found


def read_day(folder: Path) -> tuple[Schedule, pl.DataFrame]:
    """The simulated day's schedule and pings (ping_id added), as `pontual match` reads them."""
    pings = (
        pl.read_parquet(folder / "avl.parquet")
        .with_row_index("ping_id")
        .with_columns(pl.col("ping_id").cast(pl.Int64))
    )
    day = pings["event_at"].min().date()  # type: ignore[union-attr]
    return build_schedule(read_feed(folder / "gtfs"), day), pings


SCHEDULE_PARTS = ("trips", "stop_times", "shapes", "stops")


def write_inputs(folder: Path, inputs: Path) -> None:
    """Write the day's matching inputs as Parquet (what `pontual match` reads from the store):
    the schedule's frames, its date and CRS, and the pings with their ids."""
    schedule, pings = read_day(folder)
    inputs.mkdir(parents=True, exist_ok=True)
    for part in SCHEDULE_PARTS:
        getattr(schedule, part).write_parquet(inputs / f"{part}.parquet")
    (inputs / "day.txt").write_text(f"{schedule.service_date.isoformat()} {schedule.crs_epsg}")
    pings.write_parquet(inputs / "pings.parquet")


def read_inputs(inputs: Path) -> tuple[Schedule, pl.DataFrame]:
    day, epsg = (inputs / "day.txt").read_text().split()
    frames = {part: pl.read_parquet(inputs / f"{part}.parquet") for part in SCHEDULE_PARTS}
    schedule = Schedule(
        date.fromisoformat(day),
        frames["trips"],
        frames["stop_times"],
        frames["shapes"],
        frames["stops"],
        int(epsg),
    )
    # the columns `read_day` reads from the store (the simulator writes no reported trip)
    path = inputs / "pings.parquet"
    stored = pl.read_parquet_schema(path)
    return schedule, pl.read_parquet(path, columns=[c for c in STORED_PING_COLUMNS if c in stored])


def measure(inputs: Path, workers: int) -> None:
    """Read the inputs, match the day, then time the floor; print the figures (child process,
    so its memory is the matcher's and the inputs', not the simulator's or the feed parser's)."""
    schedule, pings = read_inputs(inputs)
    gc.collect()
    n = pings.height
    before_mb = _peak_mb()
    t = time.perf_counter()
    cpu = time.process_time()
    with RssSampler() as rss:
        result = match_day(
            pings,
            schedule,
            INCIDENTS.empty(),
            load_profile("bento-goncalves-2021"),
            MatchOptions(),
            workers=workers,
        )
    match_s = time.perf_counter() - t
    match_cpu_s = time.process_time() - cpu
    # the floor after the matching, so its copies are not in the matcher's memory peak
    t = time.perf_counter()
    to_metres(pings.sort("vehicle_id", "event_at"), schedule.crs_epsg)
    floor_s = time.perf_counter() - t
    print(
        f"pings: {n:,}  scheduled trips: {schedule.trips.height:,}  "
        f"runs: {result.trips_performed.height:,}  stop visits: {result.stop_visits.height:,}  "
        f"workers: {workers}"
    )
    print(f"floor (sort + project): {floor_s:.2f} s = {n / floor_s:,.0f} pings/s")
    print(
        f"matching:               {match_s:.2f} s = {n / match_s:,.0f} pings/s (target >= 500,000)"
    )
    print(f"ratio matching / floor: {match_s / floor_s:.1f}x (target <= 5x)")
    # CPU seconds of this process's threads (workers' not counted): steadier than the wall
    # clock on a shared machine
    print(f"matching CPU time:      {match_cpu_s:.2f} s (this process, all its threads)")
    print(
        f"peak memory while matching (all processes): {rss.peak_mb:,.0f} MB (target <= 4,096 MB), of which "
        f"{before_mb:,.0f} MB held before it starts (the day's schedule and pings)"
    )


REPO = Path(__file__).resolve().parents[1]
BASE_REF_ENV = "BENCH_BASE_REF"
FIGURES = {
    "wall": re.compile(r"^matching:\s+([0-9.]+) s", re.MULTILINE),
    "CPU": re.compile(r"^matching CPU time:\s+([0-9.]+) s", re.MULTILINE),
    "peak memory": re.compile(r"^peak memory while matching \(all processes\): ([0-9,]+) MB", re.M),
}
UNITS = {"wall": "s", "CPU": "s", "peak memory": "MB"}


def _measure_in(tree: Path, inputs: Path, workers: int) -> tuple[dict[str, float], str]:
    """Seconds `match_day` took on `inputs` with the sources of `tree` (this file's `measure`,
    run in a child process whose imports resolve to `tree`), wall and CPU, and what the child
    printed."""
    script = str(Path(__file__).resolve())
    out = subprocess.run(
        [sys.executable, script, "--measure", str(inputs), "--workers", str(workers)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures = {}
    for name, pattern in FIGURES.items():
        found = pattern.search(out)
        if found is None:
            raise RuntimeError(f"no matching {name} time in the measurement of {tree}:\n{out}")
        figures[name] = float(found.group(1).replace(",", ""))
    return figures, out


def base_tree(ref: str, folder: Path) -> Path:
    """The sources of commit `ref` of this repository, extracted under `folder` once (kept:
    their compiled kernels are cached by path) with their kernels compiled (`pontual warm`)."""
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{ref}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tree = folder / f"base-{sha[:12]}"
    if not (tree / "analytics").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", sha],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def compare_with_base(ref: str, folder: Path, inputs: Path, workers: int, rounds: int) -> None:
    """Time `match_day` on `inputs` with commit `ref`'s sources and with this tree's, in turn,
    `rounds` times; print each round, the medians and their ratio (this / base)."""
    trees = {ref: base_tree(ref, folder), "this tree": REPO}
    for tree in trees.values():  # compile each tree's kernels outside the timed runs
        subprocess.run(
            [sys.executable, "-m", "pontual", "--quiet", "warm"],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
            check=True,
            capture_output=True,
        )
    times: dict[tuple[str, str], list[float]] = {}
    last = ""
    for r in range(rounds):
        for name, tree in trees.items():
            figures, last = _measure_in(tree, inputs, workers)
            for kind, seconds in figures.items():
                times.setdefault((name, kind), []).append(seconds)
            print(
                f"round {r + 1}: {name:>12}: {figures['wall']:.2f} s, CPU {figures['CPU']:.2f} s, "
                f"peak {figures['peak memory']:,.0f} MB  (load {os.getloadavg()[0]:.1f})"
            )
    print(last.rstrip())  # this tree's full figures, from its last round
    for kind, unit in UNITS.items():
        base, this = (statistics.median(times[name, kind]) for name in trees)
        target = " (target <= 1.10x, issue 16)" if kind == "wall" else ""
        print(
            f"matching {kind} median: {ref} {base:,.2f} {unit}, this tree {this:,.2f} {unit}; "
            f"ratio {this / base:.2f}x{target}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--vehicles", type=int, default=7000, help="peak vehicles of the grid city")
    ap.add_argument("--workers", type=int, default=1, help="matching processes")
    ap.add_argument("--data", type=Path, default=None, help="simulated day folder (reused)")
    ap.add_argument(
        "--base-ref",
        default=os.environ.get(BASE_REF_ENV) or None,
        help=f"a commit to time against, interleaved (default: ${BASE_REF_ENV}; none)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds with --base-ref")
    ap.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.measure:
        measure(args.measure, args.workers)
        return 0
    folder = args.data or Path(tempfile.mkdtemp(prefix="bench_matching_"))
    if not (folder / "avl.parquet").exists():
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", SIMULATE, str(args.vehicles), str(folder)], check=True
        )
        print(f"simulated {args.vehicles} vehicles in {time.perf_counter() - t:.1f} s")
    inputs = folder / "match_inputs"
    if not (inputs / "pings.parquet").exists():
        subprocess.run([sys.executable, "-c", PREPARE, str(folder), str(inputs)], check=True)
    if args.base_ref:
        compare_with_base(args.base_ref, folder, inputs, args.workers, args.rounds)
        return 0
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_matching",
            "--measure",
            str(inputs),
            "--workers",
            str(args.workers),
        ],
        check=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
