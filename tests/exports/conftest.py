"""A store filled by the real pipeline (`pontual demo --days 2 --no-serve`), shared by the
export tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DAYS = 2


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("export") / "pontual.duckdb"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pontual", "--quiet", "--store", str(store)),
            *("demo", "--days", str(DAYS), "--no-serve", "--into-store"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return store
