"""Crowding on Spark (`analytics.engines.spark_crowding`, `pontual crowding --engine spark`)
against the local engine on a simulated week (12 vehicles at the peak): every crowding table of
every day equal to `pontual crowding --from D` on the file (same schema, same rows, written to
the lake's day partitions).

Equal means `assert_same_rows`: every column exactly, floats to 1e-12 relative (the local
engine itself is not bit-reproducible in its float sums)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from analytics.crowding.job import CROWDING_TABLES
from core.lake import open_lake
from core.profile import load_profile
from core.store import Store
from tests.analytics.engines.conftest import WEEK, MatchedWeek, assert_same_rows

pytestmark = pytest.mark.slow


def test_spark_crowding_gives_the_local_engines_tables_day_by_day(
    matched_week: MatchedWeek, spark_session: object, tmp_path: Path
) -> None:
    from analytics.engines.spark_crowding import crowd_days_on_spark

    lake = tmp_path / "lake"
    shutil.copytree(matched_week.lake, lake)
    summary = crowd_days_on_spark(
        spark_session,  # type: ignore[arg-type]
        lake,
        WEEK,
        load_profile("bento-goncalves-2021"),
    )
    heights = {}
    with Store.open(matched_week.store, read_only=True) as file, open_lake(lake) as parquet:
        for name in CROWDING_TABLES:
            local, spark = file.read(name), parquet.read(name)
            assert_same_rows(local, spark, name)
            heights[name] = local.height
        days = parquet.query("SELECT DISTINCT service_date FROM trip_loads ORDER BY 1")
    assert days["service_date"].to_list() == WEEK  # every day computed
    assert heights["tap_placements"] > 10_000  # the week's taps, placed or explained
    assert heights["trip_loads"] > 30_000  # one row per stop of every run
    written = summary.group_by("table_name").agg(pl.col("n_rows").sum())
    assert dict(written.iter_rows()) == heights
    assert not list(lake.rglob(".tmp-*")) and not list(lake.rglob(".old-*"))
