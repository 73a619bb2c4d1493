"""Matching on Apache Spark: the local engine's functions, scheduled over the lake.

`match_days_on_spark` reads the pings of the lake (`core.lake`) with Spark and runs two grouped
stages, each handing Arrow tables to the functions `analytics.matching.day.match_day` calls:

1. pings grouped by (service_date, vehicle batch) -> `match_vehicles` (clean, reference on the
   shapes, cut into runs, breakdown stands) and `compute_ping_activity`: the partition step.
   A vehicle batch is a hash of the vehicle (Spark's `xxhash64`, in the JVM) modulo the day's
   batch count: a vehicle is never split and a group holds ~`batch_pings` pings at most, so one
   busy day is many bounded groups, not one huge one (the count is rounded up to a multiple
   of the executor cores);
2. the batches' frames grouped by service_date -> `assemble_day` (assignment, stop visits,
   outcomes, breakdowns, headways, coverage), concatenated in batch order as the local engine
   does; each derived table's day is then written to the lake by the executor
   (`core.lake.write_day_partitions`: atomic per partition, so a retried task rewrites the
   same files).

The schedule, network, incidents and evidence of a day are read from the lake and built once
per Python worker process (`_day_inputs`, a small cache keyed by job and day; Spark reuses its
Python workers across tasks), never per group. A day's service window (`day_window`) and batch
count are planned on the driver from the lake, so the pings of a window that spans two local
dates are found in both event-day partitions, exactly the rows the local engine reads.

Between the stages a batch's frames travel as Arrow IPC (lz4) in one binary cell per frame:
the three frames have different schemas and a grouped-map stage returns one.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from analytics.matching.batches import STORED_PING_COLUMNS, match_vehicles
from analytics.matching.coverage import compute_ping_activity
from analytics.matching.day import (
    DERIVED_TABLES,
    Schedule,
    assemble_day,
    day_window,
    read_day_evidence,
    read_incidents,
    read_schedule,
)
from analytics.matching.network import Network, build_network
from analytics.matching.options import GapCredit, MatchOptions
from analytics.matching.trip_context import DayEvidence
from core.lake import open_lake, write_day_partitions
from core.profile import Profile
from core.schema import table
from core.store import Store

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PINGS = "vehicle_locations"
STAGE_SCHEMA = "service_date date, batch int, kind string, payload binary"
"""what the partition stage returns: one row per frame of a batch (`kind`: runs, track, stands,
activity) holding the frame as Arrow IPC; a `day` row with an empty payload marks every planned
day, so a day without pings is still assembled (all its trips then judged without GPS)"""
SUMMARY_SCHEMA = "service_date date, table_name string, n_rows long, n_partitions long"
"""what the day stage returns: rows and lake partitions written per derived table"""
FRAME_KINDS = ("runs", "track", "stands", "activity")
DAY_CACHE_SIZE = 4
"""days whose inputs a Python worker keeps (a task of another day evicts the oldest)"""
TIMINGS_ENV = "PONTUAL_SPARK_TIMINGS"
"""a file the Python workers append their step times to (JSON lines; unset: none kept),
read by benchmarks/bench_spark.py to say where a task's time goes"""


@contextmanager
def timed(step: str) -> Iterator[None]:
    """Append `{"step", "s", "pid", "at"}` (seconds, process, start as a Unix time) to the file
    named by PONTUAL_SPARK_TIMINGS, if set."""
    path = os.environ.get(TIMINGS_ENV)
    if not path:
        yield
        return
    at, t0 = time.time(), time.perf_counter()
    try:
        yield
    finally:
        line = {"step": step, "s": time.perf_counter() - t0, "pid": os.getpid(), "at": at}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


@dataclass(frozen=True)
class DayPlan:
    """A service day to match: its ping window (UTC) and number of vehicle batches."""

    service_date: date
    window_lo: datetime
    window_hi: datetime
    n_batches: int


@dataclass(frozen=True)
class SparkJob:
    """What every task of one run needs (shipped to the executors with the functions).

    `job_id` keys the per-worker caches: a later run over a rewritten lake never reuses them.
    """

    lake: str
    profile: Profile
    options: MatchOptions
    job_id: str


def start_session(
    master: str,
    *,
    app_name: str = "pontual-match",
    executor_memory: str = "512m",
    driver_memory: str = "512m",
    extra: dict[str, str] | None = None,
) -> SparkSession:
    """A Spark session whose Python workers run this interpreter with this project importable.

    Small JVM heaps by default: the work is in the Python workers (Polars, numba), which Spark
    does not count in the executor memory. Times are UTC on both sides of Arrow.
    """
    from pyspark.sql import SparkSession

    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", driver_memory)
        .config("spark.executor.memory", executor_memory)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.python.worker.reuse", "true")
        .config("spark.executorEnv.PYTHONPATH", path)
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
    )
    for name in ("NUMBA_CACHE_DIR", "PONTUAL_CACHE_DIR", TIMINGS_ENV):
        if os.environ.get(name):
            builder = builder.config(f"spark.executorEnv.{name}", os.environ[name])
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def plan_days(
    lake: str | Path, days: Sequence[date], batch_pings: int, cores: int = 1
) -> list[DayPlan]:
    """Each day's ping window (`day_window` of its scheduled trips) and its vehicle batches,
    from the lake: `ceil(pings in the window / batch_pings)` as the local engine cuts them,
    rounded up to a multiple of `cores` (the executor cores), so that a day's last round of
    groups does not leave cores idle (3 groups on 2 cores take two rounds of a full batch;
    4 take two rounds of three quarters of one).

    Only the scheduled trips' first start and last end are read (`day_trip_bounds`), not the
    day's schedule: the workers read that, and the driver reading it too cost as much as a
    tenth of the local engine's whole day (300-bus day, measured 2026-12-01)."""
    plans = []
    for day in days:
        with open_lake(lake, day_span(day)) as store:
            lo, hi = day_window(day_trip_bounds(store, day))
            n = store.query(
                f"SELECT count(*) AS n FROM {PINGS} WHERE event_at BETWEEN ? AND ?", [lo, hi]
            )["n"][0]
            n_batches = max(1, math.ceil(int(n) / batch_pings))
            n_batches = cores * math.ceil(n_batches / cores)
            plans.append(DayPlan(day, lo, hi, n_batches))  # type: ignore[arg-type]
    return plans


def event_day_folders(lake: str | Path, name: str, lo: datetime, hi: datetime) -> list[str]:
    """The event-day partitions of a raw table (`vehicle_locations`, `fare_transactions`) that
    can hold instants in [lo, hi] (their UTC dates, a day either side for any time zone)."""
    folder = Path(lake) / name
    first = lo.date() - timedelta(days=1)
    last = hi.date() + timedelta(days=1)
    found = []
    for i in range((last - first).days + 1):
        part = folder / f"service_date={(first + timedelta(days=i)).isoformat()}"
        if part.is_dir() and any(part.rglob("*.parquet")):
            found.append(str(part))
    return found


def day_span(day: date) -> tuple[date, date]:
    """The partitions a one-day job reads (`open_lake(lake, day_span(day))`): the day before
    (crowding's late runs, a window's local evening), the day and the day after (runs and
    pings past midnight)."""
    return day - timedelta(days=1), day + timedelta(days=1)


def day_trip_bounds(store: Store, day: date) -> pl.DataFrame:
    """The first planned start and the last planned end of the day's scheduled trips, of the
    feed in force that day (the trips `read_schedule` reads), as a one-row trips frame for
    `day_window`."""
    from ingest.gtfs_feed import compute_feeds_in_force

    in_force = compute_feeds_in_force(store, day, day)
    if in_force.height == 0:  # the error the local engine gives for that day
        read_schedule(store, day)
    return store.query(
        "SELECT min(planned_start_at) AS planned_start_at, max(planned_end_at) AS planned_end_at "
        "FROM scheduled_trips WHERE service_date = ? AND feed_id = ?",
        [day, str(in_force["feed_id"][0])],
    )


def _ping_folders(lake: str | Path, plans: Sequence[DayPlan]) -> list[str]:
    """The event-day partitions of the pings that can fall in the planned windows."""
    lo = min(p.window_lo for p in plans)
    hi = max(p.window_hi for p in plans)
    return event_day_folders(lake, PINGS, lo, hi)


# --- the two stages (run in the Python workers) ----------------------------------------------


@dataclass
class _DayInputs:
    schedule: Schedule
    network: Network
    incidents: pl.DataFrame
    evidence: DayEvidence | None = None


_DAY_CACHE: dict[tuple[str, date], _DayInputs] = {}


def _day_inputs(job: SparkJob, day: date, *, with_evidence: bool = False) -> _DayInputs:
    """The day's schedule, network and incidents (evidence when asked), read from the lake
    once per worker process and kept for the next tasks of the same day."""
    key = (job.job_id, day)
    inputs = _DAY_CACHE.get(key)
    if inputs is None:
        while len(_DAY_CACHE) >= DAY_CACHE_SIZE:
            _DAY_CACHE.pop(next(iter(_DAY_CACHE)))
        with timed("read schedule"), open_lake(job.lake, day_span(day)) as store:
            schedule = read_schedule(store, day)
            incidents = read_incidents(store, schedule.trips)
        with timed("build network"):
            network = build_network(
                schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, job.options
            )
        inputs = _DAY_CACHE[key] = _DayInputs(schedule, network, incidents)
    if with_evidence and inputs.evidence is None:
        with timed("read evidence"), open_lake(job.lake, day_span(day)) as store:
            inputs.evidence = read_day_evidence(store, day, inputs.schedule.trips)
    return inputs


def to_ipc(frame: pl.DataFrame) -> bytes:
    """A frame as Arrow IPC bytes (lz4): how a batch's frames cross the shuffle."""
    buf = io.BytesIO()
    frame.write_ipc(buf, compression="lz4")
    return buf.getvalue()


def _empty_pings() -> pl.DataFrame:
    return table(PINGS).empty().select(STORED_PING_COLUMNS)


def match_batch(job: SparkJob, key: tuple[Any, ...], pings: pa.Table) -> pa.Table:
    """Stage 1, one (service_date, batch) group: `match_vehicles` and the batch's ping activity,
    each frame returned as an IPC cell."""
    day, batch = key[0].as_py(), int(key[1].as_py())
    inputs = _day_inputs(job, day)
    with timed("pings from arrow"):
        frame = pl.from_arrow(pings.select(list(STORED_PING_COLUMNS)))
        assert isinstance(frame, pl.DataFrame)
        frame = frame.cast(_empty_pings().schema)
    min_s = float(job.profile.trips.breakdown_stop_min_s.value)
    with timed("match_vehicles"):
        runs, track, stands = match_vehicles(
            frame,
            inputs.network,
            job.options,
            min_s,
            inputs.schedule.crs_epsg,
            GapCredit.from_profile(job.profile),
        )
        activity = compute_ping_activity(frame)
    frames = dict(zip(FRAME_KINDS, (runs, track, stands, activity), strict=True))
    with timed("frames to ipc"):
        return pa.table(
            {
                "service_date": pa.array([day] * len(frames), pa.date32()),
                "batch": pa.array([batch] * len(frames), pa.int32()),
                "kind": pa.array(list(frames), pa.string()),
                "payload": pa.array([to_ipc(f) for f in frames.values()], pa.binary()),
            }
        )


def assemble_and_write(job: SparkJob, key: tuple[Any, ...], cells: pa.Table) -> pa.Table:
    """Stage 2, one service day: the batches' frames concatenated in batch order, then the
    local engine's `assemble_day`; each derived table's day replaces its lake partitions."""
    day = key[0].as_py()
    inputs = _day_inputs(job, day, with_evidence=True)
    rows = pl.from_arrow(cells.select(["batch", "kind", "payload"]))
    assert isinstance(rows, pl.DataFrame)
    rows = rows.filter(pl.col("kind") != "day").sort("batch", "kind")
    if rows.height == 0:  # a day without pings is one empty batch, as in the local engine
        min_s = float(job.profile.trips.breakdown_stop_min_s.value)
        empty = _empty_pings()
        runs, track, stands = match_vehicles(
            empty,
            inputs.network,
            job.options,
            min_s,
            inputs.schedule.crs_epsg,
            GapCredit.from_profile(job.profile),
        )
        frames = {
            "runs": [runs],
            "track": [track],
            "stands": [stands],
            "activity": [compute_ping_activity(empty)],
        }
    else:
        with timed("frames from ipc"):
            frames = {
                kind: [
                    pl.read_ipc(io.BytesIO(p))
                    for p in rows.filter(pl.col("kind") == kind)["payload"].to_list()
                ]
                for kind in FRAME_KINDS
            }
    with timed("assemble_day"):
        result = assemble_day(
            pl.concat(frames["runs"], how="diagonal_relaxed"),
            pl.concat(frames["track"]),
            pl.concat(frames["stands"], how="diagonal_relaxed"),
            inputs.schedule,
            inputs.network,
            inputs.incidents,
            job.profile,
            job.options,
            pl.concat(frames["activity"]),
            inputs.evidence,
        )
    names, counts, parts = [], [], []
    with timed("lake writes"):
        for name in DERIVED_TABLES:
            frame = getattr(result, name)
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


# --- the driver ------------------------------------------------------------------------------


def bind(step: Any, job: object) -> Any:
    """`step` with the job bound, as a plain two-argument function: PySpark infers a grouped
    UDF's kind from its signature and fails on a `functools.partial`."""

    def grouped(key, table):  # no hints: PySpark infers the UDF kind from them
        return step(job, key, table)

    return grouped


SPARK_TYPES = {
    "String": "string",
    "Int32": "int",
    "Int64": "bigint",
    "Float64": "double",
    "Boolean": "boolean",
    "Date": "date",
    "Datetime": "timestamp",
}
"""Polars dtype -> Spark SQL type of the columns the engine reads from the lake (instants are
UTC: Spark's `timestamp`, with the session in UTC)"""


def spark_ddl(name: str, columns: Sequence[str]) -> str:
    """The Spark schema (DDL) of `columns` of table `name`, from its one declaration in `core`:
    the lake is read with it, so Spark does not run a job to infer it from the files' footers."""
    decl = table(name)
    parts = []
    for column in columns:
        dtype = decl.column(column).dtype
        parts.append(f"`{column}` {SPARK_TYPES[type(dtype).__name__]}")
    return ", ".join(parts)


def windows_frame(spark: SparkSession, plans: Sequence[DayPlan]) -> DataFrame:
    """The planned days (service_date, window_lo, window_hi, n_batches) as an inline table:
    a local relation in the plan, so its broadcast to the pings' join and its markers need no
    job (a `createDataFrame` of the same rows is an RDD that Spark scans in tasks)."""

    def instant(t: datetime) -> str:  # UTC, the offset written out (whatever the session's zone)
        utc = t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
        return f"TIMESTAMP '{utc.strftime('%Y-%m-%d %H:%M:%S.%f')}+00:00'"

    values = ", ".join(
        f"(DATE '{p.service_date.isoformat()}', {instant(p.window_lo)}, "
        f"{instant(p.window_hi)}, {int(p.n_batches)})"
        for p in plans
    )
    return spark.sql(
        f"SELECT * FROM VALUES {values} AS windows(service_date, window_lo, window_hi, n_batches)"
    )


def build_match_job(spark: SparkSession, job: SparkJob, plans: Sequence[DayPlan]) -> DataFrame:
    """The Spark plan of a run (lazy): pings -> batches -> days; one summary row per day and
    derived table once collected."""
    from pyspark.sql import functions as F

    windows = windows_frame(spark, plans)
    folders = _ping_folders(job.lake, plans)
    markers = windows.select(
        "service_date",
        F.lit(-1).cast("int").alias("batch"),
        F.lit("day").alias("kind"),
        F.lit(b"").cast("binary").alias("payload"),
    )
    cells = markers
    if folders:
        pings = (
            spark.read.schema(spark_ddl(PINGS, STORED_PING_COLUMNS))
            .option("recursiveFileLookup", "true")
            .parquet(*folders)
        )
        in_window = pings.join(
            F.broadcast(windows),
            (pings["event_at"] >= windows["window_lo"])
            & (pings["event_at"] <= windows["window_hi"]),
        )
        # the vehicle batch in the JVM (a hash of the vehicle modulo the day's batch count),
        # not in a Python pass over every ping: a vehicle is never split, and the frames do
        # not depend on how the vehicles are grouped (tests/analytics/engines/test_spark.py)
        batched = in_window.select(
            *STORED_PING_COLUMNS,
            "service_date",
            F.pmod(F.xxhash64("vehicle_id"), F.col("n_batches")).cast("int").alias("batch"),
        )
        matched = batched.groupBy("service_date", "batch").applyInArrow(
            bind(match_batch, job), STAGE_SCHEMA
        )
        cells = matched.unionByName(markers)
    return cells.groupBy("service_date").applyInArrow(bind(assemble_and_write, job), SUMMARY_SCHEMA)


def match_days_on_spark(
    spark: SparkSession,
    lake: str | Path,
    days: Sequence[date],
    profile: Profile,
    options: MatchOptions,
    *,
    batch_pings: int = 150_000,
) -> pl.DataFrame:
    """Match `days` of the lake on `spark`, writing the derived tables' day partitions.

    Returns service_date, table_name, n_rows (rows written), n_partitions (lake partitions
    written), one row per day and derived table, sorted.
    """
    lake = str(Path(lake).resolve())
    plans = plan_days(lake, days, batch_pings, spark.sparkContext.defaultParallelism)
    job = SparkJob(lake, profile, options, uuid.uuid4().hex)
    # a shuffle partition per batch (up to a bound): the groups are the unit of work; Spark's
    # adaptive execution coalesces the small ones
    n_groups = sum(p.n_batches for p in plans)
    parallelism = spark.sparkContext.defaultParallelism
    spark.conf.set("spark.sql.shuffle.partitions", str(max(parallelism, min(n_groups, 512))))
    return summary_frame(build_match_job(spark, job, plans).collect())


def summary_frame(rows: Sequence[Any]) -> pl.DataFrame:
    """The collected summary rows of a job (service_date, table_name, n_rows, n_partitions),
    sorted."""
    summary = pl.DataFrame(
        [r.asDict() for r in rows],
        schema={
            "service_date": pl.Date,
            "table_name": pl.String,
            "n_rows": pl.Int64,
            "n_partitions": pl.Int64,
        },
        orient="row",
    )
    return summary.sort("service_date", "table_name")
