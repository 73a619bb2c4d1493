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

The driver plans each day's service window (`day_window` of its trips) and batch count
(`plan_days`) before the job; the schedule, incidents and network of a day are read and built
once per job, also on the driver but in a thread beside the job (`write_day_inputs`), and
written once as two pickles into the job's folder in the lake (`.spark-jobs/<job id>/`, removed
when the job ends): the network's geometry, all a partition task needs, and the day's schedule,
incidents and trip stops, which only the day's assembly needs. A Python worker waits for a
file the first time one of its tasks needs it (the pings' scan and shuffle run meanwhile),
loads it and keeps a few (`_load_inputs`; Spark reuses its Python workers across tasks), never
per group; the evidence (register, taps, inspections) is read from the lake by the one task
that assembles the day. The pings of a window that spans two local
dates are found in both event-day partitions, exactly the rows the local engine reads.

Between the stages a batch's frames travel as Arrow IPC (lz4) in one binary cell per frame:
the three frames have different schemas and a grouped-map stage returns one.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import pickle
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
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
INPUTS_CACHE_SIZE = 4
"""day input files a Python worker keeps loaded (a task of another day evicts the oldest)"""
DRIVER_JAVA_OPTIONS = "-XX:+UseSerialGC"
"""the driver JVM's garbage collector: the serial one, as the JVM itself picks for a small
heap (512 MB) on few cores; G1, its pick on this 2-core machine, spent 0.15-0.4 CPU-s of a
300-bus day's job in its own threads against 0.02-0.05 (ADR 0080, session 32)"""
INPUTS_POLL_S = 0.01
"""how often a task waiting for its day's inputs looks for the driver's file (seconds)"""
FAILED_MARK = "failed"
"""the file the driver leaves in a job's folder when it could not write the days' inputs"""
JOBS_FOLDER = ".spark-jobs"
"""the lake folder holding each running job's day inputs (`<job id>/<day>/`; a dot folder, which
no lake reader lists)"""
TIMINGS_ENV = "PONTUAL_SPARK_TIMINGS"
"""a file the Python workers append their step times to (JSON lines; unset: none kept),
read by benchmarks/bench_spark.py to say where a task's time goes"""


@contextmanager
def timed(step: str) -> Iterator[None]:
    """Append `{"step", "s", "cpu_s", "pid", "at"}` (wall seconds, the process's CPU seconds,
    process, start as a Unix time) to the file named by PONTUAL_SPARK_TIMINGS, if set."""
    path = os.environ.get(TIMINGS_ENV)
    if not path:
        yield
        return
    at, t0, c0 = time.time(), time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        line = {
            "step": step,
            "s": time.perf_counter() - t0,
            "cpu_s": time.process_time() - c0,
            "pid": os.getpid(),
            "at": at,
        }
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


@dataclass(frozen=True)
class DayPlan:
    """A service day to match: its ping window (UTC), number of vehicle batches and, once
    `prepare_days` wrote them, the files of its inputs (`DayFiles`)."""

    service_date: date
    window_lo: datetime
    window_hi: datetime
    n_batches: int
    files: DayFiles | None = None


@dataclass(frozen=True)
class DayFiles:
    """Where the driver wrote a day's inputs (pickles, in the job's folder of the lake):
    `partition`: (`Network` without its trip stops, CRS), what `match_vehicles` needs;
    `day`: `DayInputs`, what `assemble_day` needs beside the network's geometry."""

    partition: str
    day: str


@dataclass(frozen=True)
class DayInputs:
    """The part of a day's inputs that only its assembly reads."""

    schedule: Schedule
    incidents: pl.DataFrame
    trip_stops: pl.DataFrame


@dataclass(frozen=True)
class SparkJob:
    """What every task of one run needs (shipped to the executors with the functions).

    `files`: where the driver wrote each day's inputs (`prepare_days`).
    """

    lake: str
    profile: Profile
    options: MatchOptions
    files: dict[date, DayFiles]


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
    does not count in the executor memory. Times are UTC on both sides of Arrow. The driver's
    JVM (which runs the tasks in local mode) collects garbage with `DRIVER_JAVA_OPTIONS`.
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
        .config("spark.driver.extraJavaOptions", DRIVER_JAVA_OPTIONS)
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
    lake: str | Path,
    days: Sequence[date],
    batch_pings: int,
    cores: int = 1,
    folder: Path | None = None,
) -> list[DayPlan]:
    """Each day's ping window (`day_window` of its scheduled trips) and its vehicle batches,
    from the lake: `ceil(pings in the window / batch_pings)` as the local engine cuts them,
    rounded up to a multiple of `cores` (the executor cores), so that a day's last round of
    groups does not leave cores idle (3 groups on 2 cores take two rounds of a full batch;
    4 take two rounds of three quarters of one).

    Only the scheduled trips' first start and last end are read (`day_trip_bounds`), not the
    day's schedule: the workers read that, and the driver reading it too cost as much as a
    tenth of the local engine's whole day (300-bus day, measured 2026-12-01). `folder`: the
    job's inputs folder, where each plan's `files` are to be written (`day_files`)."""
    plans = []
    for day in days:
        with open_lake(lake, day_span(day)) as store:
            plan = _plan_day(store, day, day_trip_bounds(store, day), batch_pings, cores)
        plans.append(plan if folder is None else replace(plan, files=day_files(folder, day)))
    return plans


def _plan_day(
    store: Store, day: date, trips: pl.DataFrame, batch_pings: int, cores: int
) -> DayPlan:
    """The day's window from its trips (`day_window`) and its batch count (`plan_days`)."""
    lo, hi = day_window(trips)
    n = store.query(f"SELECT count(*) AS n FROM {PINGS} WHERE event_at BETWEEN ? AND ?", [lo, hi])
    n_batches = max(1, math.ceil(int(n["n"][0]) / batch_pings))
    n_batches = cores * math.ceil(n_batches / cores)
    return DayPlan(day, lo, hi, n_batches)  # type: ignore[arg-type]


def prepare_days(
    lake: str | Path,
    days: Sequence[date],
    options: MatchOptions,
    folder: Path,
    batch_pings: int,
    cores: int = 1,
) -> list[DayPlan]:
    """`plan_days`, then each day's inputs read, built and written under `folder` once for the
    whole job (`write_day_inputs`): the plans with their `files`. `match_days_on_spark` runs
    the two steps apart, the second beside the job (`write_day_inputs` in a driver thread)."""
    plans = plan_days(lake, days, batch_pings, cores, folder)
    write_day_inputs(lake, plans, options)
    return plans


def day_files(folder: Path, day: date) -> DayFiles:
    """Where a job whose inputs folder is `folder` keeps `day`'s inputs (`write_day_inputs`)."""
    return DayFiles(
        str(folder / day.isoformat() / "partition.pkl"), str(folder / day.isoformat() / "day.pkl")
    )


def write_day_inputs(
    lake: str | Path,
    plans: Sequence[DayPlan],
    options: MatchOptions,
    stop: threading.Event | None = None,
) -> None:
    """Each planned day's inputs, read and built once for the whole job and written to its
    `files`: the schedule and incidents from the lake (the local engine's `read_schedule`,
    `read_incidents`) and the network (`build_network`); the network's geometry first, which
    the day's partition tasks wait for, then what only the day's assembly reads.

    One read per job instead of one per Python worker: every worker read the day's schedule
    and built its network again (the 300-bus day: 0.45 s and 0.08 s in each of two workers,
    more than the local engine's whole read). The driver holds one day at a time; `stop`
    set (the job failed) ends it before the next day."""
    for plan in plans:
        if stop is not None and stop.is_set():
            return
        day, files = plan.service_date, plan.files
        assert files is not None, "a day planned without its files"
        with timed("driver: read schedule"), open_lake(lake, day_span(day)) as store:
            schedule = read_schedule(store, day)
            incidents = read_incidents(store, schedule.trips)
        with timed("driver: build network"):
            network = build_network(
                schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, options
            )
        with timed("driver: write inputs"):
            geometry = replace(network, trip_stops=network.trip_stops.clear())
            _dump(Path(files.partition), (geometry, schedule.crs_epsg))
            _dump(Path(files.day), DayInputs(schedule, incidents, network.trip_stops))


class _InputsPickler(pickle.Pickler):
    """Pickles a day's inputs with every Polars frame in it written beside the pickle as an
    uncompressed Arrow IPC file (`<name>.<n>.arrow`), which `_InputsUnpickler` reads back
    (mapped, not parsed): Polars' own pickling of a frame (its IPC in memory) cost 3-4x the
    file write and the read on the 300-bus day's stop times."""

    def __init__(self, out: Any, path: Path) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        self.path = path
        self.n_frames = 0

    def persistent_id(self, obj: Any) -> str | None:
        if not isinstance(obj, pl.DataFrame):
            return None
        name = f"{self.path.stem}.{self.n_frames}.arrow"
        self.n_frames += 1
        obj.write_ipc(self.path.with_name(name), compression="uncompressed")
        return name


class _InputsUnpickler(pickle.Unpickler):
    def __init__(self, src: Any, path: Path) -> None:
        super().__init__(src)
        self.path = path

    def persistent_load(self, pid: Any) -> pl.DataFrame:
        return pl.read_ipc(self.path.with_name(str(pid)))


def _dump(path: Path, value: object) -> str:
    """Write `value` to `path` (`_InputsPickler`; the pickle under a temporary name, then
    renamed, after its frames' files: a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "wb") as out:
        _InputsPickler(out, path).dump(value)
    tmp.replace(path)
    return str(path)


def _load(path: str) -> Any:
    """What `_dump` wrote to `path`."""
    with open(path, "rb") as src:
        return _InputsUnpickler(src, Path(path)).load()  # this job's driver wrote it


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


_INPUTS: dict[str, Any] = {}


def _load_inputs(path: str) -> Any:
    """A day input file the driver wrote (`DayFiles`), loaded once per Python worker process
    and kept for its next tasks (the `INPUTS_CACHE_SIZE` latest; a path is unique to its job,
    so a later run never reuses a file's value)."""
    value = _INPUTS.get(path)
    if value is None:
        while len(_INPUTS) >= INPUTS_CACHE_SIZE:
            _INPUTS.pop(next(iter(_INPUTS)))
        with timed("wait inputs"):
            _wait_for(Path(path))
        with timed("load inputs"):
            value = _INPUTS[path] = _load(path)
    return value


def _wait_for(path: Path) -> None:
    """Wait until the driver has written `path` (`write_day_inputs` runs beside the job: the
    pings' scan does not wait for it); fail if the driver's writing failed (`FAILED_MARK` in the
    job's folder)."""
    failed = path.parents[1] / FAILED_MARK
    while not path.exists():
        if failed.exists():
            raise RuntimeError(f"the driver could not prepare the day's inputs ({path.parent})")
        time.sleep(INPUTS_POLL_S)


def _partition_inputs(job: SparkJob, day: date) -> tuple[Network, int]:
    """The day's network geometry and CRS: what a partition task needs."""
    network, crs_epsg = _load_inputs(job.files[day].partition)
    return network, int(crs_epsg)


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
    network, crs_epsg = _partition_inputs(job, day)
    with timed("pings from arrow"):
        frame = pl.from_arrow(pings.select(list(STORED_PING_COLUMNS)))
        assert isinstance(frame, pl.DataFrame)
        frame = frame.cast(_empty_pings().schema)
    min_s = float(job.profile.trips.breakdown_stop_min_s.value)
    with timed("match_vehicles"):
        runs, track, stands = match_vehicles(
            frame, network, job.options, min_s, crs_epsg, GapCredit.from_profile(job.profile)
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
    geometry, crs_epsg = _partition_inputs(job, day)
    inputs: DayInputs = _load_inputs(job.files[day].day)
    network = replace(geometry, trip_stops=inputs.trip_stops)
    with timed("read evidence"), open_lake(job.lake, day_span(day)) as store:
        evidence = read_day_evidence(store, day, inputs.schedule.trips)
    rows = pl.from_arrow(cells.select(["batch", "kind", "payload"]))
    assert isinstance(rows, pl.DataFrame)
    rows = rows.filter(pl.col("kind") != "day").sort("batch", "kind")
    if rows.height == 0:  # a day without pings is one empty batch, as in the local engine
        min_s = float(job.profile.trips.breakdown_stop_min_s.value)
        empty = _empty_pings()
        runs, track, stands = match_vehicles(
            empty, network, job.options, min_s, crs_epsg, GapCredit.from_profile(job.profile)
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
            network,
            inputs.incidents,
            job.profile,
            job.options,
            pl.concat(frames["activity"]),
            evidence,
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


def values_frame(
    spark: SparkSession, name: str, columns: Sequence[str], rows: Sequence[Sequence[object]]
) -> DataFrame:
    """`rows` (dates, instants, integers) as an inline table: a local relation in the plan, so
    its broadcast to a join and the markers made of it need no job (a `createDataFrame` of the
    same rows is an RDD that Spark scans in tasks). Instants are written with their UTC offset,
    whatever the session's zone."""

    def literal(v: object) -> str:
        if isinstance(v, datetime):
            utc = v.replace(tzinfo=UTC) if v.tzinfo is None else v.astimezone(UTC)
            return f"TIMESTAMP '{utc.strftime('%Y-%m-%d %H:%M:%S.%f')}+00:00'"
        if isinstance(v, date):
            return f"DATE '{v.isoformat()}'"
        if isinstance(v, int):
            return str(int(v))
        raise TypeError(f"no Spark literal for {v!r}")

    values = ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)
    return spark.sql(f"SELECT * FROM VALUES {values} AS {name}({', '.join(columns)})")


def windows_frame(spark: SparkSession, plans: Sequence[DayPlan]) -> DataFrame:
    """The planned days (service_date, window_lo, window_hi, n_batches) as an inline table
    (`values_frame`)."""
    return values_frame(
        spark,
        "windows",
        ("service_date", "window_lo", "window_hi", "n_batches"),
        [(p.service_date, p.window_lo, p.window_hi, p.n_batches) for p in plans],
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
    parallelism = spark.sparkContext.defaultParallelism
    folder = Path(lake) / JOBS_FOLDER / uuid.uuid4().hex
    try:
        plans = plan_days(lake, days, batch_pings, parallelism, folder)
        files = {p.service_date: p.files for p in plans if p.files is not None}
        job = SparkJob(lake, profile, options, files)
        # a shuffle partition per batch (up to a bound): the groups are the unit of work;
        # Spark's adaptive execution coalesces the small ones
        n_groups = sum(p.n_batches for p in plans)
        spark.conf.set("spark.sql.shuffle.partitions", str(max(parallelism, min(n_groups, 512))))
        stop = threading.Event()
        with ThreadPoolExecutor(1, thread_name_prefix="pontual-day-inputs") as pool:
            # the days' inputs are read and written beside the job: the pings' scan and
            # shuffle do not wait for them, the tasks that need a day's file wait for it
            writing = pool.submit(_write_or_mark, lake, plans, options, folder, stop)
            try:
                rows = build_match_job(spark, job, plans).collect()
            except BaseException:
                stop.set()  # no more days to write for a job that failed
                error = writing.exception()
                if error is not None:  # the driver's own error, not the tasks' echo of it
                    raise error from None
                raise
            writing.result()
        return summary_frame(rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):  # the jobs folder, once no other job uses it
            folder.parent.rmdir()


def _write_or_mark(
    lake: str,
    plans: Sequence[DayPlan],
    options: MatchOptions,
    folder: Path,
    stop: threading.Event | None = None,
) -> None:
    """`write_day_inputs`; on failure the job's folder is marked (`FAILED_MARK`) so that the
    tasks waiting for a day's file fail instead of waiting."""
    try:
        write_day_inputs(lake, plans, options, stop)
    except BaseException:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / FAILED_MARK).touch()
        raise


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
