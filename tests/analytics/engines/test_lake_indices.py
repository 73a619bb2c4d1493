"""`pontual indices --engine spark --lake PATH` (analytics/engines/lake_indices.py) against the
local engine on the simulated week: the period roll-up over the lake files the same
indicators, fleet days and suggested infractions in the lake as the local engine writes in the
file (`assert_same_rows`; no Spark job: indices have no per-day step, see docs/adr/0080)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from core.lake import open_lake
from core.store import Store
from pontual.cli import main
from tests.analytics.engines.conftest import WEEK, MatchedWeek, assert_same_rows

pytestmark = pytest.mark.slow
WRITTEN = ("indicators", "fleet_days", "suggested_infractions")


def test_indices_on_the_lake_equal_the_local_engines(
    matched_week: MatchedWeek, tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    shutil.copytree(matched_week.lake, lake)
    period = ["--from", str(WEEK[0]), "--to", str(WEEK[-1])]
    store = ["--quiet", "--store", str(matched_week.store)]
    assert main([*store, "indices", *period, "--format", "csv"]) == 0
    assert main([*store, "indices", *period, "--engine", "spark", "--lake", str(lake)]) == 0
    heights = {}
    with Store.open(matched_week.store, read_only=True) as file, open_lake(lake) as parquet:
        for name in WRITTEN:
            local = file.read(name)
            assert_same_rows(local, parquet.read(name), name)
            heights[name] = local.height
    assert heights["indicators"] > 100
    assert heights["fleet_days"] > 0
    # a re-run replaces the period's rows, it does not add to them
    assert main([*store, "indices", *period, "--engine", "spark", "--lake", str(lake)]) == 0
    with open_lake(lake) as parquet:
        assert parquet.count("indicators") == heights["indicators"]
        days = parquet.read("fleet_days").select(pl.col("service_date").unique().sort())
    assert days["service_date"].to_list() == WEEK


def test_indices_with_the_spark_engine_need_a_lake(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["indices", "--period", "2026-03", "--engine", "spark"]) == 2
    assert "--lake" in capsys.readouterr().err
