"""Start-up benchmark: whole-process time and peak memory of the commands a user types first.

Each case is a fresh ``python -m pontual ...`` process, run `--repeat` times (default 5); the
median wall time and the median peak resident memory (the child's ru_maxrss) are printed
against the targets: ``--help`` and ``VERB --help`` <= 0.3 s and <= 80 MB, ``profiles list``
<= 0.5 s. The interpreter's own start (``python -c pass``) is shown for reference, and the CPU time
(user + system) of each: on a busy machine the wall time moves with the load, the CPU time much
less.

Then the small verbs a city's pipeline runs once a week as their own processes (issue 21: the
year benchmark runs 106 of them), `ingest incidents` and `ingest surveys` of a week's file, on a
store with the readers' snapshot published by month files (``PONTUAL_SNAPSHOT=months``, ADR
0104): the command's whole CPU time (start-up, the store's opening, the ingest, the
publication of the snapshot, the interpreter's exit). `--store` gives the store (copied first,
never written: e.g. a simulated January), and `--files` the folder of `incidents.csv` and
`iqs_surveys.csv`; without them a two-day simulated city is built in a temporary folder (init,
GTFS, fleet, pings, taps). `--base TREE` (a checkout of the code to compare with, e.g.
``git worktree add /tmp/base main``) runs the same commands with that tree's code, interleaved
with this tree's, each on its own copy of the store, and prints the ratio of the medians.

Run: ``.venv/bin/python -m benchmarks.bench_startup [--repeat N] [--store S --files DIR]
[--base TREE]`` (part of ``make bench``).

Measured 2026-12-01 on the shared 2-core machine (load 20-27: CPU seconds are the figure),
median CPU s of 5 interleaved runs against the tree before issue 21's start-up work (ratio
new/base): on the year benchmark's store as it is when the weekly registers are ingested (a
year's GTFS and the fleet, 0.11 GB) `ingest incidents` 1.12 -> 0.84 (0.75), `ingest surveys`
1.10 -> 0.79 (0.72); on a simulated January (0.55 GB, 11.7 M pings) `ingest incidents`
1.15 -> 0.82 (0.71), `ingest surveys` 1.11 -> 0.77 (0.69). `pontual ingest avl --help`
0.12 -> 0.08 CPU s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (label, arguments, target seconds, target MB or None)
CASES: tuple[tuple[str, tuple[str, ...], float | None, float | None], ...] = (
    ("python -c pass", ("-c", "pass"), None, None),
    ("pontual --help", ("-m", "pontual", "--help"), 0.3, 80.0),
    ("pontual match --help", ("-m", "pontual", "match", "--help"), 0.3, 80.0),
    ("pontual ingest avl --help", ("-m", "pontual", "ingest", "avl", "--help"), 0.3, 80.0),
    ("pontual profiles list", ("-m", "pontual", "profiles", "list"), 0.5, None),
)


# A small Python process spawns the command and reports its figures. Spawned straight from this
# (possibly large) process, a child's ru_maxrss starts at this process's peak: Linux carries the
# memory high-water mark of the address space it was cloned from across exec.
_PROBE = """
import json, os, sys, time
t0 = time.perf_counter()
devnull = os.open(os.devnull, os.O_WRONLY)
pid = os.posix_spawn(sys.executable, [sys.executable, *sys.argv[1:]], dict(os.environ),
                     file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                  os.waitstatus_to_exitcode(status)]))
"""


def measure_once(
    args: tuple[str, ...], env: dict[str, str], cwd: Path | None = None
) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one child process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    elapsed, cpu_s, maxrss_kib, code = json.loads(out.stdout)
    if code != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {code}")
    return elapsed, cpu_s, maxrss_kib / 1024  # Linux: KiB


# The small verbs measured on a store (label, arguments after the store, file name).
SMALL_VERBS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("ingest incidents", ("ingest", "incidents"), "incidents.csv"),
    ("ingest surveys", ("ingest", "surveys"), "iqs_surveys.csv"),
)


def pontual(tree: Path, store: Path, *argv: str) -> None:
    """Run `pontual ARGV` on `store` with the code of `tree` (unmeasured: set-up)."""
    env = _tree_env(tree)
    cmd = [sys.executable, "-m", "pontual", "--quiet", "--store", str(store), *argv]
    subprocess.run(cmd, env=env, cwd=tree, check=True, capture_output=True)


def _tree_env(tree: Path) -> dict[str, str]:
    """The environment that runs `tree`'s code (its folder first on the path; `python -m`
    also puts the working folder first, so commands run from the tree's root)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), env.get("PYTHONPATH")) if p)
    env["PONTUAL_SNAPSHOT"] = "months"
    return env


def build_small_store(folder: Path) -> tuple[Path, Path]:
    """A two-day simulated city's store (init, GTFS, fleet, pings, taps) and the folder of
    its files (`incidents.csv`, `iqs_surveys.csv`...)."""
    sim, store = folder / "sim", folder / "small.duckdb"
    env = _tree_env(ROOT)
    subprocess.run(
        [sys.executable, "-m", "pontual", "simulate", "--out", str(sim), "--days", "2"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    pontual(ROOT, store, "init")
    pontual(ROOT, store, "gtfs", "load", str(sim / "gtfs.zip"))
    for kind, name in (
        ("vehicles", "vehicles.csv"),
        ("avl", "avl.parquet"),
        ("fares", "fares.csv"),
    ):
        pontual(ROOT, store, "ingest", kind, str(sim / name))
    return store, sim


def measure_small_verbs(
    store: Path, files: Path, trees: dict[str, Path], repeat: int, tmp: Path
) -> None:
    """CPU seconds of each small verb, per tree, interleaved; the ratio to the first tree."""
    copies = {}
    for label, tree in trees.items():
        copy = tmp / f"{label}.duckdb"
        shutil.copyfile(store, copy)
        key = store.with_suffix(".hashkey")
        if key.exists():
            shutil.copyfile(key, copy.with_suffix(".hashkey"))
        # once unmeasured: migrates a store of an older schema, publishes every month once
        _, argv, name = SMALL_VERBS[0]
        pontual(tree, copy, *argv, str(files / name))
        copies[label] = copy
    print(f"small verbs on {store} ({store.stat().st_size / 1e9:.2f} GB), PONTUAL_SNAPSHOT=months")
    print(f"{'command':<28}" + "".join(f"{label + ' CPU s':>16}" for label in trees) + "   ratio")
    for label, argv, name in SMALL_VERBS:
        args = ("-m", "pontual", "--quiet", "--store")
        cpu: dict[str, list[float]] = {t: [] for t in trees}
        for _ in range(repeat):
            for tree_label, tree in trees.items():
                run = (*args, str(copies[tree_label]), *argv, str(files / name))
                cpu[tree_label].append(measure_once(run, _tree_env(tree), cwd=tree)[1])
        medians = [statistics.median(cpu[t]) for t in trees]
        ratio = f"{medians[-1] / medians[0]:8.2f}" if len(medians) > 1 else ""
        print(f"{label:<28}" + "".join(f"{m:>16.3f}" for m in medians) + ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--store", type=Path, help="store for the small verbs (copied first)")
    parser.add_argument("--files", type=Path, help="folder of incidents.csv and iqs_surveys.csv")
    parser.add_argument("--base", type=Path, help="a checkout of the code to compare with")
    opts = parser.parse_args()
    if (opts.store is None) != (opts.files is None):
        parser.error("--store and --files go together")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory() as tmp:
        env["PONTUAL_STORE"] = str(Path(tmp) / "unused.duckdb")  # nothing here opens it
        print(
            f"{'command':<28}{'median s':>10}{'target':>8}{'CPU s':>8}{'peak MB':>9}{'target':>8}"
        )
        failed = []
        for label, args, target_s, target_mb in CASES:
            runs = [measure_once(args, env) for _ in range(opts.repeat)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = statistics.median(r[2] for r in runs)
            ok = (target_s is None or wall <= target_s) and (target_mb is None or rss <= target_mb)
            if not ok:
                failed.append(label)
            print(
                f"{label:<28}{wall:>10.3f}{'' if target_s is None else f'{target_s:g}':>8}"
                f"{cpu:>8.3f}"
                f"{rss:>9.1f}{'' if target_mb is None else f'{target_mb:g}':>8}"
                f"{'' if ok else '  over target'}"
            )
        store, files = opts.store, opts.files
        if store is None:
            store, files = build_small_store(Path(tmp))
        trees = {"this": ROOT} if opts.base is None else {"base": opts.base, "this": ROOT}
        measure_small_verbs(store, files, trees, opts.repeat, Path(tmp))
    load = os.getloadavg()[0]
    print(f"load average (1 min) during the run: {load:.2f} on {os.cpu_count()} cores")
    if failed:
        print("over target: " + ", ".join(failed))


if __name__ == "__main__":
    main()
