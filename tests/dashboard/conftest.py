"""Fixtures of the dashboard tests: a small store with hand-known values, and a store built
by the real pipeline (`pontual demo --days 1 --no-serve` on the simulated city)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import MAP_TILES_ENV
from tests.dashboard.store_builder import build_store

ROOT = Path(__file__).resolve().parents[2]
PIPELINE_DAYS = 1
PIPELINE_TIMEOUT_S = 240


@pytest.fixture(scope="session", autouse=True)
def no_tile_downloads() -> Iterator[None]:
    """No test downloads map tiles (ADR 0105): the dashboards the tests run, in process or as
    servers, have no basemap unless a test points it at its own tile server."""
    before = os.environ.get(MAP_TILES_ENV)
    os.environ[MAP_TILES_ENV] = ""
    yield
    if before is None:
        os.environ.pop(MAP_TILES_ENV, None)
    else:
        os.environ[MAP_TILES_ENV] = before


@pytest.fixture(scope="session")
def dashboard_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("dash") / "pontual.duckdb")


@pytest.fixture(scope="session")
def pipeline_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store filled by every pipeline stage, exactly as a user runs them (about 40 s)."""
    store = tmp_path_factory.mktemp("pipeline") / "pontual.duckdb"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pontual", "--quiet", "--store", str(store)),
            *("demo", "--days", str(PIPELINE_DAYS), "--no-serve", "--into-store"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PIPELINE_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return store
