"""The lake (`core.lake`, `pontual export parquet`): Hive partitions by service day and
operator, a read-only store over them that gives the same tables and the same indices as the
file, and re-runs that replace partitions whole."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from analytics.indices.job import compute_index_results, read_index_inputs
from core.lake import PART_FILE, export_lake, lake_tables, open_lake
from core.periods import parse_period
from core.profile import load_profile
from core.store import Store

TZ = "America/Sao_Paulo"


@pytest.fixture(scope="module")
def lake(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lake")
    with Store.open(demo_store, read_only=True) as store:
        export_lake(store, root, TZ)
    return root


def test_partitions_follow_service_day_and_operator(lake: Path) -> None:
    pings = sorted(
        p.relative_to(lake).as_posix() for p in lake.glob("vehicle_locations/**/*.parquet")
    )
    assert pings, "no ping partitions"
    assert all(p.split("/")[1].startswith("service_date=2026-03-0") for p in pings)
    assert all(p.split("/")[2].startswith("operator_id=") for p in pings)
    outcomes = sorted(p.parent.name for p in lake.glob("trip_outcomes/*/" + PART_FILE))
    assert outcomes == ["service_date=2026-03-02", "service_date=2026-03-03"]
    assert (lake / "gtfs_stops" / PART_FILE).exists()
    assert (lake / "trip_outcomes" / "_schema.json").exists()
    assert not list(lake.rglob(".tmp-*")) and not list(lake.rglob(".old-*"))


def test_every_table_reads_back_equal(lake: Path, demo_store: Path) -> None:
    with Store.open(demo_store, read_only=True) as file, open_lake(lake) as parquet:
        for decl in lake_tables():
            a, b = file.read(decl.name), parquet.read(decl.name)
            assert a.schema == b.schema, decl.name
            key = decl.column_names
            assert a.sort(key, nulls_last=True).equals(b.sort(key, nulls_last=True)), decl.name


def test_indices_on_the_lake_equal_indices_on_the_file(lake: Path, demo_store: Path) -> None:
    profile = load_profile("bento-goncalves-2021")
    period = parse_period("2026-03")
    results = []
    for opener in (lambda: Store.open(demo_store, read_only=True), lambda: open_lake(lake)):
        with opener() as store:
            inputs = read_index_inputs(store, period, profile)
        results.append(compute_index_results(inputs, profile, period).indicators)
    key = ["scope", "scope_id", "period", "indicator"]
    a, b = (r.sort(key) for r in results)
    assert a.height > 100
    assert a.select(key).equals(b.select(key))
    # equal up to the order of float sums (DuckDB and Polars add in parallel)
    for col in ("numerator", "denominator", "value"):
        gap = ((a[col] - b[col]).abs() / a[col].abs().clip(lower_bound=1.0)).max()
        assert gap is None or gap < 1e-12, col  # type: ignore[operator]


def test_a_rerun_replaces_a_partition_whole_with_the_same_rows(
    lake: Path, demo_store: Path
) -> None:
    part = next(iter(lake.glob("trip_outcomes/service_date=2026-03-02")))
    stray = part / "stray.parquet"
    pl.DataFrame({"x": [1]}).write_parquet(stray)
    before = pl.read_parquet(part / PART_FILE)
    with Store.open(demo_store, read_only=True) as store:
        written = export_lake(store, lake, TZ, names=["trip_outcomes"])
    assert written == {"trip_outcomes": 2}
    assert not stray.exists()
    # idempotent: the same rows (DuckDB's parallel writer may lay row groups out differently)
    assert pl.read_parquet(part / PART_FILE).equals(before)


def test_a_lake_opened_for_some_days_reads_those_days_as_the_whole_lake(lake: Path) -> None:
    day = date(2026, 3, 2)
    with open_lake(lake) as whole, open_lake(lake, (day, day)) as one:
        for name, where in (
            ("scheduled_trips", "service_date = ?"),
            ("trip_outcomes", "service_date = ?"),
            ("vehicle_locations", "CAST(timezone('America/Sao_Paulo', event_at) AS DATE) = ?"),
        ):
            a, b = whole.read(name, where, [day]), one.read(name)
            assert a.height > 0, name
            key = a.columns
            assert a.sort(key, nulls_last=True).equals(b.sort(key, nulls_last=True)), name
        assert one.count("gtfs_stops") == whole.count("gtfs_stops")  # not day-partitioned
    with open_lake(lake, (date(2020, 1, 1), date(2020, 1, 2))) as none:
        assert none.count("trip_outcomes") == 0  # no partition of those days: empty


def test_a_day_written_before_the_placements_carried_the_operator(tmp_path: Path) -> None:
    # A lake whose tap_placements day was written by a release before ADR 0103's migration
    # 16: one file for the day, without operator_id. It reads with the operator null (as in
    # the migrated store); the day written again is filed by operator, the old file gone.
    from datetime import UTC, datetime

    from core.lake import write_day_partitions
    from core.schema import table

    day = date(2026, 3, 2)
    at = datetime(2026, 3, 2, 12, tzinfo=UTC)
    rows = table("tap_placements").conform(
        pl.DataFrame(
            {
                "transaction_id": ["T1", "T1", "T2"],
                "operator_id": ["A", "B", None],
                "service_date": [day] * 3,
                "event_at": [at] * 3,
                "placement": ["no_vehicle"] * 3,
                "pontual_version": ["test"] * 3,
                "profile_id": ["bento-goncalves-2021"] * 3,
            }
        )
    )
    old_day = tmp_path / "tap_placements" / f"service_date={day}"
    old_day.mkdir(parents=True)
    rows.filter(pl.col("transaction_id") == "T2").drop("operator_id").write_parquet(
        old_day / PART_FILE
    )
    with open_lake(tmp_path) as old, open_lake(tmp_path, (day, day)) as old_one:
        for store in (old, old_one):
            read = store.read("tap_placements")
            assert read.schema == table("tap_placements").polars_schema
            assert read.equals(rows.filter(pl.col("transaction_id") == "T2"))
    assert write_day_partitions(tmp_path, "tap_placements", day, rows) == 3
    assert sorted(p.relative_to(old_day).as_posix() for p in old_day.rglob("*.parquet")) == [
        f"operator_id=A/{PART_FILE}",
        f"operator_id=B/{PART_FILE}",
        f"operator_id=__null__/{PART_FILE}",
    ]
    with open_lake(tmp_path) as lake:
        key = ["operator_id", "transaction_id"]
        assert (
            lake.read("tap_placements")
            .sort(key, nulls_last=True)
            .equals(rows.sort(key, nulls_last=True))
        )
    schema = (tmp_path / "tap_placements" / "_schema.json").read_text(encoding="utf-8")
    assert '"primary_key": [\n    "operator_id",' in schema
