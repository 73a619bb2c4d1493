"""`pontual match --workers 2`'s process pool: killing the matcher (even with SIGKILL) ends its
workers (they used to stay alive)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PARENT = """
import multiprocessing, os, time
from concurrent.futures import ProcessPoolExecutor
from analytics.matching.batches import init_worker

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")  # as analytics.matching.day
    with ProcessPoolExecutor(2, mp_context=ctx, initializer=init_worker,
                             initargs=(None, None, 0.0, 0)) as pool:
        futures = [pool.submit(time.sleep, 60) for _ in range(2)]
        time.sleep(1.0)
        print(" ".join(str(p) for p in pool._processes), flush=True)
        time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_killing_the_matcher_ends_its_workers(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert parent.stdout is not None
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(p) for p in workers)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in workers if _alive(p)]
    for pid in left:  # never leave them behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert left == []
