"""GTFS benchmark: load + validate + planned km of a feed, each contender a WHOLE PROCESS.

Each contender runs as its own child process, back to back on the same feed, so that import
time and peak memory count as a user sees them:
- Pontual: ``python -m pontual --store TMP gtfs load FEED`` (read, validate, project, place
  stops, measure planned km, write every gtfs_* table and the scheduled trips of the store);
- gtfs_kit: ``read_feed`` then ``compute_trip_stats`` (per-trip distances and durations);
- partridge: ``load_feed`` and every table touched (reading and typing only; no distances).

Wall time, CPU time (user + system) and peak RSS of each child come from
``resource.getrusage(RUSAGE_CHILDREN)`` read in a small probe process that starts only that
child, so the figures are the child's own. On a loaded machine the wall time mostly measures
the wait for a core; the CPU seconds say what each contender costs, and are printed beside it.
Each Pontual checkout is byte-compiled first (``compileall``, as ``pip install`` does): without
``.pyc`` files, or under ``PYTHONDONTWRITEBYTECODE``, every run would compile Pontual's sources
again (0.4 s), which no installed Pontual does; the libraries are installed, compiled. The
contenders run in interleaved rounds (`--repeat` of them, 3 by default); the median time and
the largest peak are kept. The ratios say how many times faster Pontual is, and how its memory
compares to gtfs_kit's. The size of the store file after the load is printed too (a
frequency-based feed keeps one row per template and day, ADR 0102). `--baseline PATH` runs the
Pontual of another checkout (e.g. a worktree of main) as one more contender, interleaved, to
compare two versions. The load average is printed beside them: on a shared machine only ratios
measured back to back mean anything.

Targets (#21): >= 3x gtfs_kit, > 1x partridge, peak memory <= 2x gtfs_kit's.

Run: ``.venv/bin/python -m benchmarks.bench_gtfs [--feed PATH ...] [--repeat N] [--baseline
PATH]``; by default the feeds of ``../shared/data`` that the target names, largest first:
- WMATA (10.8 MB unpacked, 253 k rows, 232 k stop times): the largest feed of the folder;
- Fortaleza's gtfs2gps sample (2.19 MB unpacked, 49 k rows: 44.6 k stop times, 2,292 trips):
  the largest of the other loadable feeds by bytes, rows, stop times and trips, the work
  every contender does;
- São Paulo's gtfs2gps sample (2.03 MB unpacked, 44 k rows of which 36 k shape points; 3.6 k
  stop times, 92 trips, frequency-based): the largest zip (shapes compress less), measured
  until now as "the largest" and kept for comparison.
The SPTrans 2026 folder (4.4 MB) has no stop_times.txt and is refused at validation.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
DEFAULT_FEEDS = (
    DATA / "avl_wmata_transittraj" / "gtfs",
    DATA / "gtfs_brazil_gtfs2gps" / "fortaleza.zip",
    DATA / "gtfs_brazil_gtfs2gps" / "saopaulo.zip",
)

GTFS_KIT = """
import sys, gtfs_kit
feed = gtfs_kit.read_feed(sys.argv[1], dist_units="m")
stats = gtfs_kit.compute_trip_stats(feed)
print(len(stats))
"""

PARTRIDGE = """
import sys, partridge
feed = partridge.load_feed(sys.argv[1])
# partridge reads lazily: touch every table the others read
for name in ("agency", "stops", "routes", "trips", "stop_times", "shapes", "calendar"):
    getattr(feed, name).shape
"""

# A child that measures one command's wall time and peak RSS (its own children only), so that
# the benchmark process's own memory never counts.
PROBE = """
import resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


@dataclass(frozen=True)
class Measure:
    """One child run: wall time (s), peak resident memory (MB), CPU time user + system (s)."""

    wall_s: float
    peak_mb: float
    cpu_s: float


def measure(cmd: list[str], root: Path | None = None) -> Measure:
    """Run `cmd` through the probe process (in checkout `root`, importing its packages, when
    given); raise when it fails."""
    env = None
    if root is not None:
        env = {
            **os.environ,
            "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
    # `python -m` puts the working folder first on the path: run a checkout's Pontual inside it
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *cmd],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=root,
    )
    rc, wall, rss_kb, cpu = out.stdout.split()
    if int(rc) != 0:
        raise RuntimeError(f"{cmd[:4]} exited {rc}")
    return Measure(float(wall), int(rss_kb) / 1024, float(cpu))


def compile_checkout(root: Path) -> None:
    """Byte-compile a checkout's packages, as an installed Pontual is (see the module doc)."""
    packages = [str(d) for d in sorted(root.iterdir()) if (d / "__init__.py").exists()]
    packages = [p for p in packages if Path(p).name not in ("tests", "benchmarks")]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *packages], check=True, stdout=subprocess.DEVNULL
    )


def pontual_cmd(feed: Path, store_dir: Path) -> list[str]:
    """A fresh store each run: a second load of the same feed would be a no-op."""
    store = store_dir / f"s{time.monotonic_ns()}.duckdb"
    return [
        sys.executable,
        "-m",
        "pontual",
        "--quiet",
        "--store",
        str(store),
        "gtfs",
        "load",
        str(feed),
    ]


def has(module: str) -> bool:
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def bench_feed(feed: Path, repeat: int, baseline: Path | None = None) -> None:
    print(f"feed {feed}  (load average {os.getloadavg()[0]:.1f} at start)")
    rows: dict[str, Measure] = {}
    store_mb: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # interleaved rounds: each runs every contender once, so load drifts hit all alike
        per: dict[str, list[Measure]] = {}
        roots = {"pontual": ROOT}
        if baseline is not None:
            roots["pontual@baseline"] = baseline.resolve()
        contenders: dict[str, list[str]] = {}
        if has("gtfs_kit"):
            contenders["gtfs_kit"] = [sys.executable, "-c", GTFS_KIT, str(feed)]
        if has("partridge"):
            contenders["partridge"] = [sys.executable, "-c", PARTRIDGE, str(feed)]
        for root in roots.values():
            compile_checkout(root)
        for _ in range(repeat):
            for name, root in roots.items():
                cmd = pontual_cmd(feed, Path(tmp))
                per.setdefault(name, []).append(measure(cmd, root))
                store_mb[name] = Path(cmd[cmd.index("--store") + 1]).stat().st_size / 2**20
            for name, cmd in contenders.items():
                per.setdefault(name, []).append(measure(cmd))
        for name, runs in per.items():
            rows[name] = Measure(
                statistics.median(r.wall_s for r in runs),
                max(r.peak_mb for r in runs),
                statistics.median(r.cpu_s for r in runs),
            )
    ours = rows["pontual"]
    print(
        f"  pontual gtfs load (whole process)   {ours.wall_s:7.2f} s  {ours.peak_mb:7.0f} MB"
        f"  cpu {ours.cpu_s:5.2f} s   store file {store_mb['pontual']:.1f} MB"
    )
    if "pontual@baseline" in rows:
        m = rows["pontual@baseline"]
        print(
            f"  pontual of {str(baseline)[-24:]:24s}  {m.wall_s:7.2f} s  {m.peak_mb:7.0f} MB"
            f"  cpu {m.cpu_s:5.2f} s   store file {store_mb['pontual@baseline']:.1f} MB   "
            f"speed ratio {m.wall_s / ours.wall_s:4.2f}x (cpu {m.cpu_s / ours.cpu_s:4.2f}x)   "
            f"memory ratio {ours.peak_mb / m.peak_mb:4.2f}"
        )
    for name, label in (
        ("gtfs_kit", "gtfs_kit read_feed+trip_stats"),
        ("partridge", "partridge load_feed"),
    ):
        if name not in rows:
            print(f"  {name} not installed (pip install '.[bench]'): skipped")
            continue
        m = rows[name]
        print(
            f"  {label:34s}  {m.wall_s:7.2f} s  {m.peak_mb:7.0f} MB  cpu {m.cpu_s:5.2f} s   "
            f"speed ratio {m.wall_s / ours.wall_s:4.2f}x (cpu {m.cpu_s / ours.cpu_s:4.2f}x)   "
            f"memory ratio {ours.peak_mb / m.peak_mb:4.2f}"
        )
    print(f"  (load average {os.getloadavg()[0]:.1f} at end)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--feed", type=Path, action="append", help="feed(s) to run on")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose Pontual runs as a contender too"
    )
    args = parser.parse_args(argv)
    for feed in args.feed or DEFAULT_FEEDS:
        if not feed.exists():
            print(f"bench_gtfs: feed not found: {feed} (skipped)")
            continue
        bench_feed(feed, args.repeat, args.baseline)


if __name__ == "__main__":
    main()
