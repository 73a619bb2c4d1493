"""Fixtures of the engine tests: one Spark `local[2]` session for the whole run (a JVM start is
the slowest step), and a simulated week matched and crowded by the local engine on the file,
beside a lake of its inputs for the Spark engine."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analytics.crowding.job import CROWDING_TABLES
from core.lake import export_lake, lake_tables
from core.store import Store
from pontual.cli import main

TZ = "America/Sao_Paulo"
WEEK_START = date(2026, 3, 2)
WEEK = [WEEK_START + timedelta(days=i) for i in range(7)]
INDEX_TABLES = ("indicators", "fleet_days", "annual_grades", "suggested_infractions")
FLOAT_REL_TOL = 1e-12
"""relative tolerance of float columns between two runs of the same functions: the local
engine itself is not bit-reproducible in its float sums (the same inputs computed twice in one
process give `trip_loads.n_alightings` differing by up to ~2e-15, Polars group-by output order
feeding later sums, even with one Polars thread; indicator sums over another row order by
~4e-12 on values near 1e4; measured 2026-12-01)"""


def assert_same_rows(local: pl.DataFrame, other: pl.DataFrame, name: str) -> None:
    """Same schema and rows: sorted on the columns that are not floats, those exactly equal,
    floats to `FLOAT_REL_TOL` (`computed_at`, a stamp of the run, is left out)."""
    assert local.schema == other.schema, name
    local, other = local.drop("computed_at", strict=False), other.drop("computed_at", strict=False)
    key = [c for c, t in local.schema.items() if not t.is_float()]
    assert local.select(key).n_unique() == local.height, f"{name}: rows not told apart"
    assert_frame_equal(
        local.sort(key, nulls_last=True),
        other.sort(key, nulls_last=True),
        rel_tol=FLOAT_REL_TOL,
        abs_tol=FLOAT_REL_TOL,
    )


@pytest.fixture(scope="session")
def spark_session() -> Iterator[object]:
    """Spark `local[2]`, shared by every engine test (skipped without PySpark or Java)."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:  # pragma: no cover - make test installs it (SYSTEM_DEPS)
        pytest.skip("java is not installed")
    from analytics.engines.spark import start_session

    spark = start_session("local[2]")
    yield spark
    spark.stop()


@dataclass(frozen=True)
class MatchedWeek:
    """A simulated week: `store` matched and crowded (one `pontual crowding` per day) by the
    local engine; `lake` holds its raw and matched tables, without crowding or indices."""

    store: Path
    lake: Path


@pytest.fixture(scope="session")
def matched_week(tmp_path_factory: pytest.TempPathFactory) -> MatchedWeek:
    root = tmp_path_factory.mktemp("week")
    sim, store, lake = root / "sim", root / "pontual.duckdb", root / "lake"
    glob = ["--quiet", "--store", str(store)]
    first, last = str(WEEK[0]), str(WEEK[-1])
    steps = [
        ["simulate", "--out", str(sim), "--days", "7", "--vehicles", "12", "--start", first],
        [*glob, "init"],
        [*glob, "gtfs", "load", str(sim / "gtfs.zip")],
        [*glob, "ingest", "vehicles", str(sim / "vehicles.csv")],
        [*glob, "ingest", "incidents", str(sim / "incidents.csv")],
        [*glob, "ingest", "avl", str(sim / "avl.parquet")],
        [*glob, "ingest", "fares", str(sim / "fares.csv")],
        [*glob, "match", "--from", first, "--to", last, "--workers", "1"],
    ]
    for argv in steps:
        assert main(argv) == 0, argv
    skipped = {*CROWDING_TABLES, *INDEX_TABLES}
    with Store.open(store, read_only=True) as s:
        export_lake(s, lake, TZ, names=[t.name for t in lake_tables() if t.name not in skipped])
    for day in WEEK:  # the Spark engine's unit: one service day
        assert main([*glob, "crowding", "--from", str(day)]) == 0, day
    return MatchedWeek(store, lake)
