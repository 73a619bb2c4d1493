"""Start-up benchmark: whole-process time and peak memory of the commands a user types first.

Each case is a fresh ``python -m pontual ...`` process, run `--repeat` times (default 5); the
median wall time and the median peak resident memory (the child's ru_maxrss) are printed
against the targets: ``--help`` and ``VERB --help`` <= 0.3 s and <= 80 MB, ``profiles list``
<= 0.5 s. The interpreter's own start (``python -c pass``) is shown for reference, and the CPU time
(user + system) of each: on a busy machine the wall time moves with the load, the CPU time much
less.

Run: ``.venv/bin/python -m benchmarks.bench_startup [--repeat N]`` (part of ``make bench``).
"""

from __future__ import annotations

import argparse
import json
import os
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


def measure_once(args: tuple[str, ...], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one child process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], env=env, capture_output=True, text=True, check=True
    )
    elapsed, cpu_s, maxrss_kib, code = json.loads(out.stdout)
    if code != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {code}")
    return elapsed, cpu_s, maxrss_kib / 1024  # Linux: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
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
    load = os.getloadavg()[0]
    print(f"load average (1 min) during the run: {load:.2f} on {os.cpu_count()} cores")
    if failed:
        print("over target: " + ", ".join(failed))


if __name__ == "__main__":
    main()
