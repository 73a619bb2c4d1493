"""The Spark engine (`analytics.engines.spark`, `pontual match --engine spark`) against the local
engine, on one short simulated day (12 vehicles at the peak, ~25 k pings, 441 trips):

- Spark `local[2]`, the day cut into several vehicle batches, gives every derived table equal
  to the local engine's (sorted rows, exact equality, same schema); the batches' vehicle ranges
  read back exactly the day's pings, and each batch has a partition of its own;
- a real standalone cluster on localhost (a master and two workers from PySpark's own launch
  classes) runs `pontual match --engine spark`, and killing one worker mid-job still completes
  with the same rows (Spark reschedules the lost tasks).

Both are slow (a JVM per Spark process): marked `slow`. JVM heaps are kept small (the work is in
the Python workers).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from analytics.engines.spark import JOBS_FOLDER
from analytics.matching.day import (
    DERIVED_TABLES,
    day_window,
    read_day_evidence,
    read_incidents,
    read_schedule,
)
from analytics.matching.network import build_network
from analytics.matching.options import MatchOptions
from core.errors import StoreError
from core.lake import export_lake, lake_tables, open_lake
from core.profile import load_profile
from core.store import Store
from pontual.cli import main

pytestmark = pytest.mark.slow
pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - make test installs it (SYSTEM_DEPS)
    pytest.skip("java is not installed", allow_module_level=True)

DAY = date(2026, 3, 2)
TZ = "America/Sao_Paulo"
ROOT = Path(__file__).resolve().parents[3]
SMALL_BATCH = 6_000
"""pings per batch in the Spark runs: the day (~25 k pings) is cut into several groups, while
the local engine matches it as one batch"""


@pytest.fixture(scope="module")
def matched_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one simulated day, matched by the local engine (`pontual match`)."""
    root = tmp_path_factory.mktemp("spark")
    sim = root / "sim"
    store = root / "pontual.duckdb"
    glob = ["--quiet", "--store", str(store)]
    steps = [
        ["simulate", "--out", str(sim), "--days", "1", "--vehicles", "12", "--start", str(DAY)],
        [*glob, "init"],
        [*glob, "gtfs", "load", str(sim / "gtfs.zip")],
        [*glob, "ingest", "vehicles", str(sim / "vehicles.csv")],
        [*glob, "ingest", "incidents", str(sim / "incidents.csv")],
        [*glob, "ingest", "avl", str(sim / "avl.parquet")],
        [*glob, "ingest", "fares", str(sim / "fares.csv")],
        [*glob, "match", "--from", str(DAY), "--workers", "1"],
    ]
    for argv in steps:
        assert main(argv) == 0, argv
    return store


def _raw_lake(store: Path, lake: Path) -> Path:
    """The store's tables as a lake, without the derived tables matching writes."""
    names = [t.name for t in lake_tables() if t.name not in DERIVED_TABLES]
    with Store.open(store, read_only=True) as s:
        export_lake(s, lake, TZ, names=names)
    return lake


def _assert_same_derived_tables(store: Path, lake: Path) -> dict[str, int]:
    heights = {}
    with Store.open(store, read_only=True) as file, open_lake(lake) as parquet:
        for name in DERIVED_TABLES:
            local, spark = file.read(name), parquet.read(name)
            assert local.schema == spark.schema, name
            key = local.columns
            assert local.sort(key, nulls_last=True).equals(spark.sort(key, nulls_last=True)), name
            heights[name] = local.height
    return heights


def test_spark_local_gives_the_local_engines_tables(
    matched_store: Path, spark_session: object, tmp_path: Path
) -> None:
    from analytics.engines.spark import match_days_on_spark, plan_days

    lake = _raw_lake(matched_store, tmp_path / "lake")
    plans = plan_days(lake, [DAY], SMALL_BATCH)
    assert plans[0].n_batches >= 4  # several bounded groups for the one day
    summary = match_days_on_spark(
        spark_session,  # type: ignore[arg-type]
        lake,
        [DAY],
        load_profile("bento-goncalves-2021"),
        MatchOptions(),
        batch_pings=SMALL_BATCH,
    )
    heights = _assert_same_derived_tables(matched_store, lake)
    assert heights["trip_outcomes"] == 441  # every scheduled trip of the simulated day
    assert heights["trips_performed"] > 300
    written = dict(zip(summary["table_name"], summary["n_rows"], strict=True))
    assert written == heights
    assert not list(lake.rglob(".tmp-*")) and not list(lake.rglob(".old-*"))
    assert not (lake / JOBS_FOLDER).exists()  # the job's day inputs removed with it


def test_the_batches_read_back_exactly_the_days_pings(matched_store: Path, tmp_path: Path) -> None:
    """The vehicle ranges of a day's batches (`plan_days`) are disjoint, hold the day's pings
    between them, each its share of the day but for one vehicle's pings, and each batch's
    task reads exactly its vehicles' pings in the window (`read_batch_pings`): together, the
    pings the local engine reads for the day."""
    from analytics.engines.spark import plan_days, read_batch_pings

    lake = _raw_lake(matched_store, tmp_path / "lake")
    (plan,) = plan_days(lake, [DAY], SMALL_BATCH, 2)
    assert plan.n_batches % 2 == 0 and plan.n_batches >= 4
    his = [b.vehicle_hi for b in plan.batches]
    los = [b.vehicle_lo for b in plan.batches]
    assert all(lo <= hi for lo, hi in zip(los, his, strict=True))  # type: ignore[operator]
    assert all(h < lo for h, lo in zip(his, los[1:], strict=False))  # type: ignore[operator]
    parts = [read_batch_pings(lake, plan, b) for b in plan.batches]
    assert [p.height for p in parts] == [b.n_pings for b in plan.batches]
    together = pl.concat(parts)
    share = together.height / plan.n_batches
    most = int(together["vehicle_id"].value_counts()["count"].to_numpy().max())
    assert max(p.height for p in parts) < share + most
    with Store.open(matched_store, read_only=True) as store:
        day = store.read(
            "vehicle_locations",
            "event_at BETWEEN ? AND ?",
            [plan.window_lo, plan.window_hi],
            columns=list(parts[0].columns),
        )
    assert together.schema == day.schema
    assert together.sort("ping_id").equals(day.sort("ping_id"))


def test_vehicle_ranges_never_split_a_vehicle() -> None:
    """`cut_vehicle_ranges`: consecutive ids in byte order ("10" before "9"), about as many
    pings each, a vehicle in one range, no empty range; a day without pings is one range of
    no vehicles."""
    from analytics.engines.spark import VehicleRange, cut_vehicle_ranges

    counts = pl.DataFrame(
        {"vehicle_id": ["9", "10", "11", "12", "8"], "n_pings": [10, 40, 10, 10, 30]}
    )
    assert cut_vehicle_ranges(counts, 2) == (
        VehicleRange("10", "11", 50),
        VehicleRange("12", "9", 50),
    )
    assert cut_vehicle_ranges(counts, 4) == (
        VehicleRange("10", "10", 40),
        VehicleRange("11", "11", 10),
        VehicleRange("12", "8", 40),
        VehicleRange("9", "9", 10),
    )
    assert len(cut_vehicle_ranges(counts, 9)) == 5  # one vehicle each at most
    empty = counts.clear()
    assert cut_vehicle_ranges(empty, 4) == (VehicleRange(None, None, 0),)


def test_each_batch_has_a_partition_of_its_own(spark_session: object) -> None:
    """`spark_hash_int` is Spark's `hash` of an int, and the slots of `spread_groups` put group
    i in partition i modulo the partition count under Spark's own hash partitioning."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from analytics.engines.spark import group_partitions, spark_hash_int, spread_groups

    spark = spark_session
    assert isinstance(spark, SparkSession)
    values = [0, 1, 2, 7, 42, -1, 123_456, -(2**31), 2**31 - 1]
    hashed = spark.createDataFrame([(v,) for v in values], "v int").select(F.hash("v").alias("h"))
    assert [r.h for r in hashed.collect()] == [spark_hash_int(v) for v in values]
    assert [group_partitions(n, 2) for n in (1, 2, 3, 4, 16, 17, 76)] == [1, 2, 2, 2, 2, 4, 10]
    for n_groups, n_parts in ((4, 4), (4, 2), (7, 3)):
        slots = spread_groups(n_groups, n_parts)
        frame = spark.createDataFrame(list(enumerate(slots)), "group int, slot int")
        placed = frame.repartition(n_parts, "slot").select(
            "group", F.spark_partition_id().alias("p")
        )
        assert sorted((r.group, r.p) for r in placed.collect()) == [
            (i, i % n_parts) for i in range(n_groups)
        ]


def test_the_driver_writes_the_local_engines_day_inputs_once(
    matched_store: Path, tmp_path: Path
) -> None:
    """`prepare_days` reads a day's schedule and incidents from the lake and builds its network
    once, on the driver; what the workers load back is what the local engine reads from the
    file and builds (the network's geometry for a partition task, the rest for the day's
    assembly)."""
    from analytics.engines.spark import (
        EVIDENCE_TABLES,
        DayInputs,
        _load,
        day_span,
        plan_days,
        prepare_days,
    )

    lake = _raw_lake(matched_store, tmp_path / "lake")
    options = MatchOptions()
    plans = prepare_days(lake, [DAY], options, tmp_path / "job", SMALL_BATCH, 2)
    with Store.open(matched_store, read_only=True) as store:
        schedule = read_schedule(store, DAY)
        incidents = read_incidents(store, schedule.trips)
    network = build_network(
        schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, options
    )
    (plan,) = plans
    assert plan.files is not None
    assert (plan.window_lo, plan.window_hi) == day_window(schedule.trips)
    assert plan.n_batches == plan_days(lake, [DAY], SMALL_BATCH, 2)[0].n_batches
    geometry, crs_epsg = _load(plan.files.partition)
    assert crs_epsg == schedule.crs_epsg
    assert geometry.trip_stops.height == 0  # a partition task never reads the trip stops
    assert geometry.shapes.equals(network.shapes)
    for name in ("points_x", "points_y", "points_dist", "points_shape"):
        assert np.array_equal(getattr(geometry, name), getattr(network, name)), name
    assert np.array_equal(geometry.grid.points, network.grid.points)
    day = _load(plan.files.day)
    assert isinstance(day, DayInputs)
    assert day.trip_stops.equals(network.trip_stops)
    assert day.incidents.equals(incidents)
    # the day's task reads the evidence from a lake opened on `EVIDENCE_TABLES` only
    with Store.open(matched_store, read_only=True) as store:
        evidence = read_day_evidence(store, DAY, schedule.trips)
    with open_lake(lake, day_span(DAY), EVIDENCE_TABLES) as parquet:
        read = read_day_evidence(parquet, DAY, schedule.trips)
    for name in ("vehicles", "taps", "inspections", "routes"):  # the lake's rows in its order
        got, want = getattr(read, name), getattr(evidence, name)
        assert want.height > 0 or name == "inspections", name
        assert got.sort(got.columns).equals(want.sort(want.columns)), name
    for name in ("trips", "stop_times", "shapes", "stops"):
        assert getattr(day.schedule, name).equals(getattr(schedule, name)), name
    assert day.schedule.trips.height == 441


def test_a_task_waits_for_its_days_inputs_and_fails_with_the_driver(tmp_path: Path) -> None:
    """The driver writes the days' inputs beside the job (`write_day_inputs` in a thread of
    `match_days_on_spark`): a task that needs a day's file waits until it is there, and fails
    instead of waiting for ever when the driver's writing failed (the job's folder marked)."""
    from analytics.engines.spark import FAILED_MARK, _wait_for, _write_or_mark, day_files

    path = Path(day_files(tmp_path / "job", DAY).partition)

    def write_later() -> None:
        time.sleep(0.3)
        path.parent.mkdir(parents=True)
        path.write_bytes(b"written")

    writer = threading.Thread(target=write_later)
    writer.start()
    _wait_for(path)
    assert path.read_bytes() == b"written"
    writer.join()

    folder = tmp_path / "failed-job"
    with pytest.raises(StoreError):  # no lake there: the driver cannot read the schedule
        _write_or_mark(str(tmp_path / "no-lake"), [DAY], MatchOptions(), folder)
    assert (folder / FAILED_MARK).exists()
    with pytest.raises(RuntimeError, match="could not prepare"):
        _wait_for(Path(day_files(folder, DAY).partition))


# --- a real standalone cluster ------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_class() -> Path:
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        p, pp = (int(v) for v in line.split())
        children.setdefault(pp, []).append(p)
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class Cluster:
    """A Spark master and two workers on localhost, each in its own process group."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(work / "logs"),
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": str(ROOT),
        }
        self.env = env
        self.procs: list[subprocess.Popen[bytes]] = []
        self._start(
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--webui-port",
            str(_free_port()),
        )
        for i in range(2):
            self._start(
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                "1g",
                "--webui-port",
                str(_free_port()),
                "--work-dir",
                str(work / f"worker{i}"),
                self.url,
            )

    def _start(self, *argv: str) -> None:
        log = open(self.work / f"proc{len(self.procs)}.log", "wb")  # noqa: SIM115
        self.procs.append(
            subprocess.Popen(
                [str(_spark_class()), *argv],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    @property
    def workers(self) -> list[subprocess.Popen[bytes]]:
        return self.procs[1:]

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL a process and everything it started (its executor, Python workers)."""
        pids = [proc.pid, *_descendants(proc.pid)]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                self.kill(proc)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    (tmp_path / "logs").mkdir()
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()


def test_a_standalone_cluster_survives_a_killed_worker(
    matched_store: Path, cluster: Cluster, tmp_path: Path
) -> None:
    lake = _raw_lake(matched_store, tmp_path / "lake")
    job = subprocess.Popen(
        [
            *(sys.executable, "-m", "pontual", "--quiet", "--lake", str(lake)),
            *("match", "--engine", "spark", "--master", cluster.url, "--from", str(DAY)),
            *("--batch-pings", str(SMALL_BATCH), "--executor-memory", "512m"),
        ],
        cwd=ROOT,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        # kill the first worker once its executor runs Python tasks (the partition stage)
        victim = cluster.workers[0]
        deadline = time.monotonic() + 900
        killed = False
        while job.poll() is None and time.monotonic() < deadline:
            if any("pyspark" in _cmdline(p) for p in _descendants(victim.pid)):
                cluster.kill(victim)
                killed = True
                break
            time.sleep(0.5)
        out, _ = job.communicate(timeout=max(60.0, deadline - time.monotonic()))
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode == 0, out.decode()[-4000:]
    assert killed, "the job finished before a worker ran a task"
    assert victim.poll() is not None
    _assert_same_derived_tables(matched_store, lake)


def test_spark_engine_without_a_lake_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--engine", "spark", "--from", str(DAY)]) == 2
    assert "--lake" in capsys.readouterr().err
