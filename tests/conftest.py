"""Shared fixtures: the real data folder, temporary stores, the CLI runner."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; skips the test when it is absent (fails under CI=true)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        reason = f"real data not available: {path} (clone with ../shared/data beside the project)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " — under CI=true an absent data folder is a failure")
        pytest.skip(reason)
    return path


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "pontual.duckdb"
