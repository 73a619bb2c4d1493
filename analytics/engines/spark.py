"""Matching on Apache Spark: the local engine's functions, scheduled over the lake.

`match_days_on_spark` runs two grouped stages, each handing Arrow tables to the functions
`analytics.matching.day.match_day` calls:

1. the days' vehicle batches grouped by (service_date, batch) -> `match_batch`: the batch's
   pings read from the lake's `vehicle_locations` by its task (`read_batch_pings`), then
   `match_vehicles` (clean, reference on the shapes, cut into runs, breakdown stands) and
   `compute_ping_activity`: the partition step. A batch is a range of vehicle ids holding
   about `batch_pings` pings (`cut_vehicle_ranges`, planned on the driver from the day's
   pings per vehicle): a vehicle is never split, one busy day is many bounded groups, not one
   huge one (the count is rounded up to a multiple of the executor cores), and the lake keeps
   each partition's pings sorted by vehicle in small row groups, so a task reads little more
   than its own vehicles (`core.lake.LAKE_ORDER`). The groups are dealt out evenly over
   the tasks, up to `GROUPS_PER_TASK` each (`group_partitions`, `spread_groups`);
2. the batches' frames grouped by service_date -> `assemble_day` (assignment, stop visits,
   outcomes, breakdowns, headways, coverage), concatenated in batch order as the local engine
   does; each derived table's day is then written to the lake by the executor
   (`core.lake.write_day_partitions`: atomic per partition, so a retried task rewrites the
   same files).

The pings do not cross Spark: Spark's scan, shuffle and Arrow hand-off of every ping cost
more than the matching on a day of a 300-bus city (ADR 0080, session 34), and reading a
vehicle range straight from the lake is the same read the scan made, in the process that
matches it.

The driver plans each day's service window (`day_window` of its trips) and vehicle batches
(`plan_days`) before the job; the schedule, incidents and network of a day are read
and built once per job, also on the driver but in a thread beside the job
(`write_day_inputs`), and written once as two pickles into the job's folder in the lake
(`.spark-jobs/<job id>/`, removed when the job ends): the network's geometry, all a partition
task needs, and the day's schedule, incidents and trip stops, which only the day's
assembly needs. A Python worker waits for a file the first time one of its tasks needs it,
loads it and keeps a few (`_load_inputs`; Spark reuses its Python workers across tasks),
never per group; the evidence (register, taps, inspections) is read from the lake by the one
task that assembles the day. The pings of a window that spans two local dates are found in
both event-day partitions, exactly the rows the local engine reads.

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
from core.lake import open_lake, raw_day_files, write_day_partitions
from core.profile import Profile
from core.schema import table
from core.store import Store

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PINGS = "vehicle_locations"
STAGE_SCHEMA = "service_date date, batch int, kind string, payload binary"
"""what the partition stage returns: one row per frame of a batch (`kind`: runs, track, stands,
activity) holding the frame as Arrow IPC (a day without pings is one batch of no vehicles, so
it is still assembled, all its trips then judged without GPS)"""
BATCHES_COLUMNS = ("service_date", "batch", "slot")
"""the batch descriptors the partition stage is grouped from (`spread_groups` for `slot`)"""
PLAN_TABLES = ("feed_versions", "scheduled_trips", PINGS)
"""the lake tables `plan_days` reads (`day_trip_bounds` and the pings per vehicle)"""
EVIDENCE_TABLES = (
    "vehicles",
    "vehicle_inspections",
    "fare_transactions",
    "inspections",
    "gtfs_routes",
)
"""the lake tables `read_day_evidence` reads (a day's task opens only these)"""
GROUPS_PER_TASK = 8
"""the most vehicle batches one task of the partition stage matches, one after the other, once
there are more batches than cores (`group_partitions`)"""
SUMMARY_SCHEMA = "service_date date, table_name string, n_rows long, n_partitions long"
"""what the day stage returns: rows and lake partitions written per derived table"""
FRAME_KINDS = ("runs", "track", "stands", "activity")
INPUTS_CACHE_SIZE = 4
"""day input files a Python worker keeps loaded (a task of another day evicts the oldest)"""
DRIVER_JAVA_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
"""the driver JVM's garbage collector and compilers (it runs the tasks in local mode): the
serial collector, as the JVM itself picks for a small heap (512 MB) on few cores (G1, its pick
on this 2-core machine, spent 0.15-0.4 CPU-s of a 300-bus day's job in its own threads against
0.02-0.05: ADR 0080, session 32); and only the quick compiler (C1). Since no ping crosses the
JVM (session 34) its task threads spend ~0.2 CPU-s on that day with either compiler, while the
optimising one (C2) spent 0.55-0.66 CPU-s a run compiling in a session's first runs: 300-bus
day 1.55 s against 1.88 s; crowding's job the same with both (1.52 s and 1.51 s)"""
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
class VehicleRange:
    """A vehicle batch: the vehicles `vehicle_lo` .. `vehicle_hi` (ids in byte order, both
    included) and the pings they have in the day's window; no vehicles (`None`) for a day
    without pings."""

    vehicle_lo: str | None
    vehicle_hi: str | None
    n_pings: int


@dataclass(frozen=True)
class DayPlan:
    """A service day to match: its ping window (UTC), vehicle batches and, once `prepare_days`
    wrote them, the files of its inputs (`DayFiles`)."""

    service_date: date
    window_lo: datetime
    window_hi: datetime
    batches: tuple[VehicleRange, ...]
    files: DayFiles | None = None

    @property
    def n_batches(self) -> int:
        return len(self.batches)


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

    `plans`: each day's window, vehicle batches and where the driver writes its inputs
    (`plan_days`).
    """

    lake: str
    profile: Profile
    options: MatchOptions
    plans: dict[date, DayPlan]

    def files(self, day: date) -> DayFiles:
        files = self.plans[day].files
        assert files is not None, "a day planned without its files"
        return files


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
    JVM (which runs the tasks in local mode) runs with `DRIVER_JAVA_OPTIONS` (collector, compiler).
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
    from the lake: `ceil(pings in the window / batch_pings)` as the local engine counts them,
    rounded up to a multiple of `cores` (the executor cores), so that a day's last round of
    groups does not leave cores idle (3 groups on 2 cores take two rounds of a full batch;
    4 take two rounds of three quarters of one), cut into vehicle ranges by
    `cut_vehicle_ranges` from the day's pings per vehicle.

    Only the scheduled trips' first start and last end are read (`day_trip_bounds`), not the
    day's schedule: the driver reads that beside the job (`write_day_inputs`). `folder`: the
    job's inputs folder, where each plan's `files` are to be written (`day_files`)."""
    plans = []
    for day in days:
        with open_lake(lake, day_span(day), PLAN_TABLES) as store:
            plan = _plan_day(store, day, day_trip_bounds(store, day), batch_pings, cores)
        plans.append(plan if folder is None else replace(plan, files=day_files(folder, day)))
    return plans


def _plan_day(
    store: Store, day: date, trips: pl.DataFrame, batch_pings: int, cores: int
) -> DayPlan:
    """The day's window from its trips (`day_window`) and its vehicle batches (`plan_days`)."""
    lo, hi = day_window(trips)
    counts = store.query(
        f"SELECT vehicle_id, count(*) AS n_pings FROM {PINGS} "
        "WHERE event_at BETWEEN ? AND ? GROUP BY vehicle_id",
        [lo, hi],
    )
    n_batches = max(1, math.ceil(int(counts["n_pings"].sum()) / batch_pings))
    n_batches = cores * math.ceil(n_batches / cores)
    return DayPlan(day, lo, hi, cut_vehicle_ranges(counts, n_batches))  # type: ignore[arg-type]


def cut_vehicle_ranges(counts: pl.DataFrame, n_batches: int) -> tuple[VehicleRange, ...]:
    """`counts` (vehicle_id, n_pings: a day's pings per vehicle) cut into at most `n_batches`
    ranges of consecutive vehicle ids (byte order, as Parquet's statistics and Polars compare
    them) holding about as many pings each: a vehicle goes to the batch where its first ping
    falls in the day's running count, so no vehicle is split, no range is empty, and a range
    holds its share of the day but for less than one vehicle's pings. A day without pings is
    one range of no vehicles."""
    if counts.height == 0:
        return (VehicleRange(None, None, 0),)
    total = int(counts["n_pings"].sum())
    ranges = (
        counts.sort("vehicle_id")
        .with_columns(
            ((pl.col("n_pings").cum_sum() - pl.col("n_pings")) * n_batches // total).alias(
                "__batch"
            )
        )
        .group_by("__batch", maintain_order=True)
        .agg(
            pl.col("vehicle_id").first().alias("vehicle_lo"),
            pl.col("vehicle_id").last().alias("vehicle_hi"),
            pl.col("n_pings").sum(),
        )
    )
    return tuple(
        VehicleRange(str(lo), str(hi), int(n))
        for lo, hi, n in ranges.select("vehicle_lo", "vehicle_hi", "n_pings").iter_rows()
    )


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
    the two steps apart, the second beside the planning and the job (`write_day_inputs` in a
    driver thread)."""
    plans = plan_days(lake, days, batch_pings, cores, folder)
    write_day_inputs(lake, days, folder, options)
    return plans


def day_files(folder: Path, day: date) -> DayFiles:
    """Where a job whose inputs folder is `folder` keeps `day`'s inputs (`write_day_inputs`)."""
    return DayFiles(
        str(folder / day.isoformat() / "partition.pkl"), str(folder / day.isoformat() / "day.pkl")
    )


def write_day_inputs(
    lake: str | Path,
    days: Sequence[date],
    folder: Path,
    options: MatchOptions,
    stop: threading.Event | None = None,
) -> None:
    """Each day's inputs, read and built once for the whole job and written to its files in
    the job's inputs `folder` (`day_files`): the schedule and incidents from the lake (the
    local engine's `read_schedule`, `read_incidents`) and the network (`build_network`); the
    network's geometry first, which the day's partition tasks wait for, then what only the
    day's assembly reads.

    One read per job instead of one per Python worker: every worker read the day's schedule
    and built its network again (the 300-bus day: 0.45 s and 0.08 s in each of two workers,
    more than the local engine's whole read). The evidence stays with the day's task (the
    driver's reads are a long job's serial share, ADR 0080 session 32). The driver holds one
    day at a time; `stop` set (the job failed) ends it before the next day."""
    for day in days:
        if stop is not None and stop.is_set():
            return
        files = day_files(folder, day)
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


def event_days(lo: datetime, hi: datetime) -> list[date]:
    """The local event days of a raw table's partitions that can hold instants in [lo, hi]
    (their UTC dates, a day either side for any time zone)."""
    first = lo.date() - timedelta(days=1)
    return [
        first + timedelta(days=i) for i in range((hi.date() + timedelta(days=1) - first).days + 1)
    ]


def event_day_folders(lake: str | Path, name: str, lo: datetime, hi: datetime) -> list[str]:
    """The event-day partitions of a raw table (`vehicle_locations`, `fare_transactions`) that
    can hold instants in [lo, hi] (`event_days`) and have files."""
    folder = Path(lake) / name
    found = []
    for day in event_days(lo, hi):
        part = folder / f"service_date={day.isoformat()}"
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
    network, crs_epsg = _load_inputs(job.files(day).partition)
    return network, int(crs_epsg)


def to_ipc(frame: pl.DataFrame) -> bytes:
    """A frame as Arrow IPC bytes (lz4): how a batch's frames cross the shuffle."""
    buf = io.BytesIO()
    frame.write_ipc(buf, compression="lz4")
    return buf.getvalue()


def _empty_pings() -> pl.DataFrame:
    return table(PINGS).empty().select(STORED_PING_COLUMNS)


def read_batch_pings(lake: str | Path, plan: DayPlan, batch: VehicleRange) -> pl.DataFrame:
    """The pings of `batch`'s vehicles in `plan`'s window (both bounds included, as the local
    engine reads a day), from the event-day partitions of the lake's `vehicle_locations`: the
    columns matching reads (`STORED_PING_COLUMNS`), in the table's types. The lake keeps each
    partition sorted by vehicle in small row groups (`core.lake.LAKE_ORDER`): the range's
    filter skips the other vehicles' row groups by their statistics."""
    empty = _empty_pings()
    days = event_days(plan.window_lo, plan.window_hi)
    files = [str(f) for day in days for f in raw_day_files(lake, PINGS, day)]
    if batch.vehicle_lo is None or not files:
        return empty
    frame = (
        pl.scan_parquet(files, hive_partitioning=False, missing_columns="insert")
        .filter(
            # literals: a bare string would name a column
            pl.col("vehicle_id").is_between(pl.lit(batch.vehicle_lo), pl.lit(batch.vehicle_hi)),
            pl.col("event_at").is_between(pl.lit(plan.window_lo), pl.lit(plan.window_hi)),
        )
        .select(STORED_PING_COLUMNS)
        .collect()
    )
    return frame.cast(empty.schema)


def match_batch(job: SparkJob, key: tuple[Any, ...], _: pa.Table) -> pa.Table:
    """Stage 1, one (service_date, batch) group: the batch's pings (`read_batch_pings`), then
    `match_vehicles` and the batch's ping activity, each frame returned as an IPC cell."""
    day, batch = key[0].as_py(), int(key[1].as_py())
    plan = job.plans[day]
    network, crs_epsg = _partition_inputs(job, day)
    with timed("read pings"):
        frame = read_batch_pings(job.lake, plan, plan.batches[batch])
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
    geometry, _ = _partition_inputs(job, day)
    inputs: DayInputs = _load_inputs(job.files(day).day)
    network = replace(geometry, trip_stops=inputs.trip_stops)
    with timed("read evidence"), open_lake(job.lake, day_span(day), EVIDENCE_TABLES) as store:
        evidence = read_day_evidence(store, day, inputs.schedule.trips)
    rows = pl.from_arrow(cells.select(["batch", "kind", "payload"]))
    assert isinstance(rows, pl.DataFrame)
    rows = rows.sort("batch", "kind")
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
    its broadcast to a join needs no job (a `createDataFrame` of the same rows is an RDD that
    Spark scans in tasks). Instants are written with their UTC offset, whatever the session's
    zone."""

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


def spark_hash_int(value: int, seed: int = 42) -> int:
    """Spark's hash of an int column (`hash(col)`, the `Murmur3Hash` its hash partitioning
    takes modulo the partition count): Murmur3 x86 32-bit of the value's 4 bytes, signed."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    k1 = rotl((value & mask) * 0xCC9E2D51 & mask, 15) * 0x1B873593 & mask
    h1 = (rotl(seed ^ k1, 13) * 5 + 0xE6546B64) & mask
    h1 ^= 4
    h1 = (h1 ^ (h1 >> 16)) * 0x85EBCA6B & mask
    h1 = (h1 ^ (h1 >> 13)) * 0xC2B2AE35 & mask
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def group_partitions(n_groups: int, cores: int) -> int:
    """How many partitions (tasks) the partition stage's `n_groups` batches are spread over: a
    whole number of rounds of `cores` tasks, each of `GROUPS_PER_TASK` batches at most, and no
    more tasks than batches. Fewer, longer tasks spread Spark's cost per task (its launch and
    the Python worker's hand-off, ~0.1 s on 2 cores: the 300-bus day's 4 batches ran 0.14 s
    faster as 2 tasks than as 4); more keep cores busy when the days' batches differ."""
    rounds = max(1, math.ceil(n_groups / (cores * GROUPS_PER_TASK)))
    return max(1, min(n_groups, cores * rounds))


def spread_groups(n_groups: int, n_partitions: int) -> list[int]:
    """A `slot` per group such that Spark's hash partitioning of the slots over `n_partitions`
    (`repartition(n_partitions, "slot")`) puts group i in partition i modulo `n_partitions`:
    one group per task while there are partitions enough, in order. Hashing the groups' keys
    instead left some partitions with two batches and others empty (4 batches of the 300-bus
    day: tasks of 2, 2, 0 and 0 groups), a whole batch's time of one core idle."""
    first: dict[int, int] = {}
    value = 0
    while len(first) < n_partitions:
        first.setdefault(spark_hash_int(value) % n_partitions, value)
        value += 1
    return [first[i % n_partitions] for i in range(n_groups)]


def build_match_job(spark: SparkSession, job: SparkJob, plans: Sequence[DayPlan]) -> DataFrame:
    """The Spark plan of a run (lazy): the days' batches -> days; one summary row per day and
    derived table once collected. The batches are an inline table (`values_frame`) dealt out
    over `group_partitions` partitions (`spread_groups`); the grouping by (service_date, batch,
    slot) needs no other shuffle, its partitioning by slot already keeps each group in one
    partition."""
    keys = [(p.service_date, i) for p in plans for i in range(p.n_batches)]
    n_partitions = group_partitions(len(keys), spark.sparkContext.defaultParallelism)
    slots = spread_groups(len(keys), n_partitions)
    batches = values_frame(
        spark, "batches", BATCHES_COLUMNS, [(*k, s) for k, s in zip(keys, slots, strict=True)]
    )
    matched = (
        batches.repartition(n_partitions, "slot")
        .groupBy(*BATCHES_COLUMNS)
        .applyInArrow(bind(match_batch, job), STAGE_SCHEMA)
    )
    return matched.groupBy("service_date").applyInArrow(
        bind(assemble_and_write, job), SUMMARY_SCHEMA
    )


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
    stop = threading.Event()
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="pontual-day-inputs") as pool:
            # the days' inputs are read and written beside the planning and the job: neither
            # waits for them, the tasks that need a day's file wait for it
            writing = pool.submit(_write_or_mark, lake, days, options, folder, stop)
            try:
                with timed("driver: plan days"):
                    plans = plan_days(lake, days, batch_pings, parallelism, folder)
                job = SparkJob(lake, profile, options, {p.service_date: p for p in plans})
                with job_conf(spark, _match_conf(spark, plans)):
                    with timed("driver: build job"):
                        planned = build_match_job(spark, job, plans)
                    with timed("driver: collect"):
                        rows = planned.collect()
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


def day_shuffle_conf(spark: SparkSession, n_days: int) -> dict[str, str]:
    """A shuffle partition per day for a job's stage grouped by service day: at least one per
    core, at most 512 (Spark's adaptive execution, where on, coalesces the small ones)."""
    n = max(spark.sparkContext.defaultParallelism, min(n_days, 512))
    return {"spark.sql.shuffle.partitions": str(n)}


def _match_conf(spark: SparkSession, plans: Sequence[DayPlan]) -> dict[str, str]:
    """The session settings of a match job: a shuffle partition per day for the days'
    assembly (`day_shuffle_conf`), and no adaptive execution. The batches are already dealt
    out over the tasks (`spread_groups`), and the adaptive planner ran each stage as a job of
    its own, with a new plan between them (~0.03 s each on the 300-bus day)."""
    return {**day_shuffle_conf(spark, len(plans)), "spark.sql.adaptive.enabled": "false"}


@contextmanager
def job_conf(spark: SparkSession, conf: dict[str, str]) -> Iterator[None]:
    """`conf` set on the session for the block, then what was there before restored (a
    session serves other jobs: crowding, the tests' shared session)."""
    before = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def _write_or_mark(
    lake: str,
    days: Sequence[date],
    options: MatchOptions,
    folder: Path,
    stop: threading.Event | None = None,
) -> None:
    """`write_day_inputs`; on failure the job's folder is marked (`FAILED_MARK`) so that the
    tasks waiting for a day's file fail instead of waiting."""
    try:
        write_day_inputs(lake, days, folder, options, stop)
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
