"""Crowding on Apache Spark: the local engine's crowding functions, one service day per group.

`crowd_days_on_spark` reads the fare taps of the lake with Spark, files each tap under the
service days whose tap window may hold it (planned on the driver: from the day's local midnight
less the terminal boarding lead to the later of the next midnight and the day's last arrival;
windows of neighbouring days overlap, so a tap near midnight travels to both), and hands each
day's taps as an Arrow table to a Python worker through `groupBy(service_date).applyInArrow`.
There the taps become the `fare_transactions` of a lake connection (`open_lake`), and the local
engine's own `read_crowding_inputs` (its exact tap window, the stop visits of the day and the
day before, trips, fleet register, stops, APC counts) and `compute_crowding` run unchanged; the
day's rows replace its partitions of `tap_placements`, `trip_loads`, `trip_crowding` and
`crowding_summary` (`core.lake.write_day_partitions`, atomic per partition).

A group is one day: the result equals `pontual crowding --from D --to D` on the file for each
day D. A multi-day local run pools the origin-destination shares and stop patterns of the
unlinked riders over its whole range (`analytics.crowding.loads`), so its loads can differ from
the day-by-day figures; see docs/adr/0080-engines-over-the-lake.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from analytics.crowding.job import (
    CROWDING_TABLES,
    DEFAULT_CROWDING_OPTIONS,
    CrowdingOptions,
    compute_crowding,
    read_crowding_inputs,
)
from analytics.engines.spark import (
    bind,
    day_shuffle_conf,
    day_span,
    event_day_folders,
    job_conf,
    spark_ddl,
    summary_frame,
    values_frame,
)
from core import __version__
from core.lake import open_lake, write_day_partitions
from core.profile import Profile
from core.schema import table
from core.store import Store

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TAPS = "fare_transactions"
SUMMARY_SCHEMA = "service_date date, table_name string, n_rows long, n_partitions long"
"""what the day stage returns: rows and lake partitions written per crowding table"""


@dataclass(frozen=True)
class CrowdingDay:
    """A service day to compute: the UTC window of the taps it reads."""

    service_date: date
    taps_from: datetime
    taps_to: datetime


@dataclass(frozen=True)
class CrowdingJob:
    """What every task of one run needs (shipped to the executors with the function)."""

    lake: str
    profile: Profile
    options: CrowdingOptions
    job_id: str


def plan_crowding_days(
    lake: str | Path,
    days: Sequence[date],
    profile: Profile,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> list[CrowdingDay]:
    """Each day's tap window on the driver: from the day's local midnight less the terminal
    boarding lead to the later of the next local midnight and the last arrival of the day's
    (and the day before's) runs. Only a pre-filter: the executor's `read_crowding_inputs`
    applies its own window to the taps it is handed, so the window may be wider, never
    narrower."""
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(profile.general.timezone.value)
    lead = timedelta(seconds=options.boarding.terminal_boarding_s)
    plans = []
    for day in days:
        with open_lake(lake, day_span(day)) as store:
            last = store.query(
                "SELECT max(arrival_at) AS last_at FROM stop_visits "
                "WHERE service_date BETWEEN ? AND ?",
                [day - timedelta(days=1), day],
            )["last_at"][0]
            lo = datetime.combine(day, time(0), tz) - lead
            hi = datetime.combine(day + timedelta(days=1), time(0), tz)
            plans.append(CrowdingDay(day, lo, max(hi, last) if last is not None else hi))
    return plans


# --- the day stage (runs in the Python workers) -----------------------------------------------


def crowd_day(job: CrowdingJob, key: tuple[Any, ...], cells: pa.Table) -> pa.Table:
    """One service day: `read_crowding_inputs` over the lake, whose fare taps are
    the ones Spark handed this group (the lake's `fare_transactions` view is replaced by them,
    so the local engine's own read applies its window to them), then `compute_crowding`; the
    day's rows replace its partitions of the four crowding tables."""
    day = key[0].as_py()
    decl = table(TAPS)
    rows = pl.from_arrow(cells.select(["is_marker", *decl.column_names]))
    assert isinstance(rows, pl.DataFrame)
    taps = decl.conform(rows.filter(~pl.col("is_marker")))
    with open_lake(job.lake, day_span(day)) as store:
        _replace_taps(store, taps)
        inputs = read_crowding_inputs(store, job.profile, day, day, job.options)
    result = compute_crowding(inputs, job.profile, job.options)
    fill: dict[str, object] = {"pontual_version": __version__, "profile_id": job.profile.id}
    in_day = pl.col("service_date") == day
    names, counts, parts = [], [], []
    for name in CROWDING_TABLES:
        frame = table(name).conform(getattr(result, name).filter(in_day), fill=fill)
        names.append(name)
        counts.append(frame.height)
        parts.append(write_day_partitions(job.lake, name, day, frame))
    return pa.table(
        {
            "service_date": pa.array([day] * len(names), pa.date32()),
            "table_name": pa.array(names, pa.string()),
            "n_rows": pa.array(counts, pa.int64()),
            "n_partitions": pa.array(parts, pa.int64()),
        }
    )


def _replace_taps(store: Store, taps: pl.DataFrame) -> None:
    """Make `taps` the `fare_transactions` of this (in-memory, read-only) lake connection."""
    kind = store.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [TAPS]
    ).fetchall()
    if kind[0][0]:  # a lake without taps: an empty declared table, not a view
        store.con.execute(f'DROP TABLE "{TAPS}"')
    store.con.register("spark_taps", taps.to_arrow())
    store.con.execute(f'CREATE OR REPLACE VIEW "{TAPS}" AS SELECT * FROM spark_taps')


# --- the driver --------------------------------------------------------------------------------


def build_crowding_job(
    spark: SparkSession, job: CrowdingJob, plans: Sequence[CrowdingDay]
) -> DataFrame:
    """The Spark plan of a run (lazy): taps -> days; one summary row per day and table."""
    from pyspark.sql import functions as F

    decl = table(TAPS)
    windows = values_frame(
        spark,
        "windows",
        ("service_date", "taps_from", "taps_to"),
        [(p.service_date, p.taps_from, p.taps_to) for p in plans],
    )
    folders = event_day_folders(
        job.lake, TAPS, min(p.taps_from for p in plans), max(p.taps_to for p in plans)
    )
    # one marker row per day, so that a day without taps is still computed (its loads are
    # those of the unlinked-free runs: all zero)
    marker_cols = [F.lit(None).alias(c) for c in decl.column_names]
    cells = windows.select("service_date", F.lit(True).alias("is_marker"), *marker_cols)
    if folders:
        taps = (  # the schema from the declaration: no job reading the files' footers
            spark.read.schema(spark_ddl(TAPS, decl.column_names))
            .option("recursiveFileLookup", "true")
            .parquet(*folders)
        )
        in_window = taps.join(
            F.broadcast(windows),
            (taps["event_at"] >= windows["taps_from"]) & (taps["event_at"] < windows["taps_to"]),
        ).select("service_date", F.lit(False).alias("is_marker"), *decl.column_names)
        typed = [F.col(c).cast(in_window.schema[c].dataType) for c in decl.column_names]
        cells = in_window.unionByName(cells.select("service_date", "is_marker", *typed))
    return cells.groupBy("service_date").applyInArrow(bind(crowd_day, job), SUMMARY_SCHEMA)


def crowd_days_on_spark(
    spark: SparkSession,
    lake: str | Path,
    days: Sequence[date],
    profile: Profile,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> pl.DataFrame:
    """Compute the crowding tables of `days` of the lake on `spark`, one group per day,
    writing the days' partitions. Returns service_date, table_name, n_rows, n_partitions per
    day and table, sorted."""
    lake = str(Path(lake).resolve())
    plans = plan_crowding_days(lake, days, profile, options)
    job = CrowdingJob(lake, profile, options, uuid.uuid4().hex)
    with job_conf(spark, day_shuffle_conf(spark, len(plans))):
        return summary_frame(build_crowding_job(spark, job, plans).collect())
