"""`python benchmarks/dashboard_timed.py run APP ...`: `dashboard.launch` (whichever checkout
is on PYTHONPATH) with every script run timed, for `bench_dashboard`'s server-side figures.

Each script run appends one line to the file named by $PONTUAL_BENCH_TIMINGS: its wall time
in seconds (from the rerun request being taken up to the end of the run, queries and page
building included), the bytes of the messages it sent to the browser (what the front end
must parse and draw) and its session's id. With $PONTUAL_BENCH_PROFILE naming a folder, each run's cProfile
statistics are written there as well. Benchmark-only: it wraps two private Streamlit methods, and the project
itself never imports this file.
"""

from __future__ import annotations

import cProfile
import itertools
import os
import threading
import time
from typing import Any

TIMINGS_ENV = "PONTUAL_BENCH_TIMINGS"
PROFILE_ENV = "PONTUAL_BENCH_PROFILE"
"""A folder: each script run's cProfile statistics go there too (run-NNN.prof)."""

_sent = threading.local()


def _install(path: str) -> None:
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    run_script = ScriptRunner._run_script
    enqueue = ScriptRunner._enqueue_forward_msg
    lock = threading.Lock()

    profiles = os.environ.get(PROFILE_ENV, "")
    count = itertools.count()

    def timed_run(self: Any, rerun_data: Any) -> None:
        _sent.bytes = 0
        profiler = cProfile.Profile() if profiles else None
        started = time.perf_counter()
        try:
            if profiler is not None:
                profiler.enable()
            run_script(self, rerun_data)
        finally:
            elapsed = time.perf_counter() - started
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(os.path.join(profiles, f"run-{next(count):03d}.prof"))
            with lock, open(path, "a", encoding="utf-8") as out:
                out.write(f"{elapsed:.4f}\t{getattr(_sent, 'bytes', 0)}\t{self._session_id}\n")

    def counted_enqueue(self: Any, msg: Any) -> None:
        if hasattr(_sent, "bytes"):  # messages of a script run (its own thread)
            _sent.bytes += msg.ByteSize()
        enqueue(self, msg)

    ScriptRunner._run_script = timed_run  # type: ignore[method-assign]
    ScriptRunner._enqueue_forward_msg = counted_enqueue  # type: ignore[method-assign]


if __name__ == "__main__":
    target = os.environ.get(TIMINGS_ENV)
    if target:
        _install(target)
    from dashboard.launch import run

    run()
