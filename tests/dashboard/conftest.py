"""Fixtures of the dashboard tests: a small store with hand-known values, published."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboard.store_builder import build_store


@pytest.fixture(scope="session")
def dashboard_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("dash") / "pontual.duckdb")
