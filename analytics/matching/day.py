"""Match one service day: pings -> runs -> trips -> stop visits, outcomes, breakdowns, headways.

Partitions are service day x vehicle. Vehicles are processed in batches (`analytics.matching.
batches`: every function works per vehicle, so a batch is many partitions in one vectorised
pass), in threads or a process pool. Assignment of runs to trips needs every vehicle of the day
(exclusivity), so it runs after the batches, followed by the cheap per-run steps. `write_day`
replaces the day's derived rows (idempotent re-runs).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from analytics.matching.assign import match_runs_to_trips
from analytics.matching.batches import (
    BATCH_THREADS,
    STORED_PING_COLUMNS,
    cut_batches,
    init_worker,
    map_bounded,
    match_vehicles,
    to_network_file,
    work_batch,
)
from analytics.matching.breakdowns import find_breakdowns
from analytics.matching.coverage import compute_avl_coverage, compute_ping_activity
from analytics.matching.headways import compute_headways
from analytics.matching.network import Network, build_network, build_trip_times
from analytics.matching.options import GapCredit, MatchOptions
from analytics.matching.outcomes import compute_trip_outcomes
from analytics.matching.stop_visits import compute_stop_visits
from analytics.matching.trip_context import DayEvidence, compute_trip_context
from core import __version__
from core.errors import PontualError
from core.instants import to_utc_instant
from core.profile import Profile
from core.register import read_register
from core.schema import table
from core.store import Store
from gtfs.read import Feed
from gtfs.schedule import build_geometry, build_scheduled_trips

if TYPE_CHECKING:
    from ingest.gtfs_feed import ScheduleCache


@dataclass
class Schedule:
    """The planned service of one day, in the feed's metric CRS (state shared by partitions).

    `trips`: scheduled_trips rows; `stop_times`: gtfs_stop_times of their template trips;
    `shapes`: gtfs_shapes; `stops`: gtfs_stops; `crs_epsg`: the feed's projected CRS.
    """

    service_date: date
    trips: pl.DataFrame
    stop_times: pl.DataFrame
    shapes: pl.DataFrame
    stops: pl.DataFrame
    crs_epsg: int


def build_schedule(feed: Feed, service_date: date) -> Schedule:
    """The schedule of one day straight from a GTFS feed (no store): simulator days, real
    traces and benchmarks read this way; `read_day` reads the same from the store."""
    geometry = build_geometry(feed)
    trips = build_scheduled_trips(feed, service_date, service_date, geometry=geometry)
    stop_times = geometry.stop_times.rename(
        {"arrival_time": "arrival_time_s", "departure_time": "departure_time_s"}
    )
    return Schedule(service_date, trips, stop_times, geometry.shapes, geometry.stops, geometry.epsg)


@dataclass
class DayResult:
    """The derived frames of one day, conformed to their tables, plus the run tracks."""

    trips_performed: pl.DataFrame
    stop_visits: pl.DataFrame
    trip_outcomes: pl.DataFrame
    breakdowns: pl.DataFrame
    headway_observations: pl.DataFrame
    avl_coverage: pl.DataFrame
    feed_outages: pl.DataFrame
    track: pl.DataFrame


NETWORK_INPUT_TRIP_COLUMNS = ("template_trip_id", "shape_id", "route_id", "direction_id")
"""the columns of a day's trips its network's geometry and trip stops are built from (the
planned instants only make `Network.trip_times`, rebuilt every day)"""


@dataclass
class NetworkCache:
    """The networks built so far in a run over several days, with the inputs each was built
    from (state only: `build_day_network` uses it). A feed repeats a few service patterns
    (weekday, Saturday, Sunday) for months: a day whose inputs equal an earlier day's takes
    that day's network instead of building it again. At most `size` networks are kept, the
    most recently used first."""

    size: int = 4
    entries: list[tuple[tuple[object, ...], Network]] = field(default_factory=list)


def _network_inputs(schedule: Schedule, options: MatchOptions) -> tuple[object, ...]:
    """What `build_network` reads of a day besides the trips' planned instants: the day's
    distinct template trips (with shape, route and direction), the stop times, shapes and stops
    of the feed, and the options."""
    templates = (
        schedule.trips.select(NETWORK_INPUT_TRIP_COLUMNS)
        .unique()
        .sort(NETWORK_INPUT_TRIP_COLUMNS, nulls_last=True)
    )
    return (options, templates, schedule.stop_times, schedule.shapes, schedule.stops)


def _same_inputs(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Whether two `_network_inputs` are equal: frames by their values (nulls equal)."""
    return all(
        x.equals(y) if isinstance(x, pl.DataFrame) and isinstance(y, pl.DataFrame) else x == y
        for x, y in zip(a, b, strict=True)
    )


def build_day_network(
    schedule: Schedule, options: MatchOptions, cache: NetworkCache | None = None
) -> Network:
    """The day's network (`build_network`), taken from `cache` when an earlier day had the same
    inputs (`_network_inputs`, compared by value, not by a hash: equal frames or a new build).
    A cached network gets the day's own `trip_times` (its planned instants)."""
    if cache is None:
        return build_network(
            schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, options
        )
    inputs = _network_inputs(schedule, options)
    for i, (known, network) in enumerate(cache.entries):
        if _same_inputs(known, inputs):
            cache.entries.insert(0, cache.entries.pop(i))
            return replace(network, trip_times=build_trip_times(schedule.trips, network.shapes))
    network = build_network(
        schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, options
    )
    cache.entries.insert(0, (inputs, network))
    del cache.entries[cache.size :]
    return network


def count_batches(n_pings: int, batch_pings: int, workers: int) -> int:
    """How many vehicle batches a day of `n_pings` is cut into: at most `batch_pings` pings
    each, and a whole number of rounds of the batches matched at once (`workers` processes, or
    `BATCH_THREADS` threads in one): 3 batches on 2 threads left one core idle for the third
    (a third of the batches' time on a 300-bus day of ~440 k pings), 4 smaller ones do not."""
    at_once = workers if workers > 1 else BATCH_THREADS
    n = max(1, int(np.ceil(n_pings / batch_pings)), workers)
    return int(np.ceil(n / at_once)) * at_once


@dataclass
class DayPartitions:
    """A day after its partition step (`match_partitions`), before `assemble_day`: the runs,
    track and breakdown stands of all its vehicle batches, the network they were matched on and
    the day's `compute_ping_activity` (the pings themselves are no longer needed)."""

    runs: pl.DataFrame
    track: pl.DataFrame
    stands: pl.DataFrame
    network: Network
    activity: pl.DataFrame


def match_partitions(
    pings: pl.DataFrame,
    schedule: Schedule,
    profile: Profile,
    options: MatchOptions,
    *,
    workers: int = 1,
    batch_pings: int = 150_000,
    networks: NetworkCache | None = None,
) -> DayPartitions:
    """The partition step of a day (`match_day` before `assemble_day`): the network, then the
    vehicle batches in threads or processes. `run_match_days` runs it for one day while the day
    before is assembled."""
    epsg = schedule.crs_epsg
    # the day's coverage needs every fix, so it is summarised before the pings are cut up
    activity = compute_ping_activity(pings)
    network = build_day_network(schedule, options, networks)
    min_s = float(profile.trips.breakdown_stop_min_s.value)
    gap_credit = GapCredit.from_profile(profile)
    n_batches = count_batches(pings.height, batch_pings, workers)
    batches = cut_batches(pings, n_batches)
    if workers > 1 and n_batches > 1:
        # "spawn", not "fork": forking a process whose Polars/DuckDB thread pools hold locks
        # deadlocks the children (seen with `pontual demo`).
        ctx = multiprocessing.get_context("spawn")
        with TemporaryDirectory(prefix="pontual-match-") as folder:
            # the partition steps need the network's geometry, not its stop table
            geometry = replace(network, trip_stops=network.trip_stops.clear())
            initargs = (to_network_file(geometry, Path(folder)), options, min_s, epsg, gap_credit)
            try:
                with ProcessPoolExecutor(
                    workers, mp_context=ctx, initializer=init_worker, initargs=initargs
                ) as pool:
                    # at most two batches per worker in flight: each is cut out only when
                    # submitted, so the batches never exist all at once beside the day's pings
                    results = map_bounded(pool, work_batch, batches, 2 * workers)
            except BrokenProcessPool as error:
                raise PontualError(
                    "a matching worker process ended before finishing its work",
                    hint="the machine may have run out of memory: run again with --workers 1"
                    " or a smaller --batch-pings",
                ) from error
    else:
        # batches stream through threads: each is cut out, matched and released, so memory
        # holds `BATCH_THREADS` batches' working frames (plus the small runs, tracks and stands
        # kept). Polars and the compiled kernels release the GIL: while one batch is in a
        # single-threaded step, another runs on the other core. A day without pings is one
        # empty batch
        with ThreadPoolExecutor(BATCH_THREADS) as threads:
            results = map_bounded(
                threads,
                partial(
                    match_vehicles,
                    network=network,
                    options=options,
                    breakdown_stop_min_s=min_s,
                    crs_epsg=epsg,
                    gap_credit=gap_credit,
                ),
                batches,
                BATCH_THREADS,
            )
    return DayPartitions(
        runs=pl.concat([r[0] for r in results], how="diagonal_relaxed"),
        track=pl.concat([r[1] for r in results]),
        stands=pl.concat([r[2] for r in results], how="diagonal_relaxed"),
        network=network,
        activity=activity,
    )


def match_day(
    pings: pl.DataFrame,
    schedule: Schedule,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
    *,
    workers: int = 1,
    batch_pings: int = 150_000,
    evidence: DayEvidence | None = None,
    networks: NetworkCache | None = None,
) -> DayResult:
    """Match a day. `pings` has ping_id, vehicle_id, event_at and x_m/y_m or lat/lon (then
    projected a batch at a time: the day never holds a projected copy). `evidence`: the
    register, taps, inspections and routes the trips without a GPS run are judged with (None:
    none of them; the feed's coverage still comes from the pings). `networks`: the networks of
    the days matched before (`build_day_network`; None: the network is built).
    `match_partitions` then `assemble_day`."""
    parts = match_partitions(
        pings,
        schedule,
        profile,
        options,
        workers=workers,
        batch_pings=batch_pings,
        networks=networks,
    )
    # the batch order is not needed past the partitions
    del pings
    return assemble_partitions(parts, schedule, incidents, profile, options, evidence)


def assemble_partitions(
    parts: DayPartitions,
    schedule: Schedule,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
    evidence: DayEvidence | None = None,
) -> DayResult:
    """`assemble_day` of a day's `match_partitions`."""
    return assemble_day(
        parts.runs,
        parts.track,
        parts.stands,
        schedule,
        parts.network,
        incidents,
        profile,
        options,
        parts.activity,
        evidence,
    )


def assemble_day(
    runs: pl.DataFrame,
    track: pl.DataFrame,
    stands: pl.DataFrame,
    schedule: Schedule,
    network: Network,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
    activity: pl.DataFrame | None = None,
    evidence: DayEvidence | None = None,
) -> DayResult:
    """The day-level steps after the partitions: assignment, stop visits, outcomes, ...
    `activity`: `compute_ping_activity` of the day's pings (None: taken from `track`, the
    fixes inside runs only)."""
    trips = schedule.trips
    if activity is None:
        activity = compute_ping_activity(
            track.select("vehicle_id", "event_at")
            if "event_at" in track.columns
            else pl.DataFrame(
                schema={"vehicle_id": pl.String, "event_at": pl.Datetime("us", "UTC")}
            )
        )
    runs = match_runs_to_trips(runs, trips, options)
    runs = _mark_counted(runs, float(profile.trips.late_departure_s.value))
    # one pass over the day: the crossings are searched on arrays, no (stop x ping) frame
    visits = compute_stop_visits(runs, track, trips, network.trip_stops, options)
    bds = find_breakdowns(stands, runs, incidents, options)
    # outages are sought over the day's planned service, from its first departure to its
    # last arrival: a silence before the units power on is no outage
    window_s = (
        (
            trips["planned_start_at"].min().timestamp(),  # type: ignore[union-attr]
            trips["planned_end_at"].max().timestamp(),  # type: ignore[union-attr]
        )
        if trips.height
        else (0.0, 0.0)
    )
    trip_stops = trips.select("trip_id", "template_trip_id").join(
        schedule.stop_times.select(pl.col("trip_id").alias("template_trip_id"), "stop_id"),
        on="template_trip_id",
    )
    context = compute_trip_context(
        trips, runs, activity, evidence or DayEvidence(), trip_stops, profile, window_s
    )
    outcomes = compute_trip_outcomes(trips, runs, bds, incidents, profile, options, context)
    avl = compute_avl_coverage(
        activity,
        context.avl.select("vehicle_id", "operator_id", "is_reserve"),
        outcomes,
    )
    dark_trips = outcomes.filter(pl.col("outcome") == "not_evaluated").select(
        "trip_id",
        (pl.col("planned_start_at").dt.epoch("ms") / 1000.0).alias("_p0"),
    )
    outages = (
        context.outages.join(
            context.trips.select("trip_id", "operator_id").join(dark_trips, on="trip_id"),
            on="operator_id",
            how="left",
        )
        .group_by("operator_id", "start_s", "end_s")
        .agg(
            (pl.col("_p0").is_between(pl.col("start_s"), pl.col("end_s")).fill_null(False))
            .sum()
            .cast(pl.Int32)
            .alias("n_trips_not_evaluated")
        )
    )
    heads = compute_headways(trips, runs, float(profile.trips.frequent_headway_max_s.value))
    fill = {
        "service_date": schedule.service_date,
        "pontual_version": __version__,
        "profile_id": profile.id,
    }

    at = to_utc_instant

    performed = runs.with_columns(
        at("started_s").alias("started_at"),
        at("ended_s").alias("ended_at"),
        pl.col("length_m").alias("shape_length_m"),
    )
    bd = bds.with_columns(
        at("started_s").alias("started_at"),
        at("ended_s").alias("ended_at"),
        (pl.col("ended_s") - pl.col("started_s")).round().cast(pl.Int32).alias("duration_s"),
    )
    return DayResult(
        trips_performed=table("trips_performed").conform(performed, fill=fill),
        stop_visits=table("stop_visits").conform(visits, fill=fill),
        trip_outcomes=table("trip_outcomes").conform(outcomes, fill=fill),
        breakdowns=table("breakdowns").conform(bd, fill=fill),
        headway_observations=table("headway_observations").conform(heads, fill=fill),
        avl_coverage=table("avl_coverage").conform(avl, fill=fill),
        feed_outages=table("feed_outages").conform(
            outages.sort("operator_id", "start_s").with_columns(
                at("start_s").alias("started_at"),
                at("end_s").alias("ended_at"),
                (pl.col("end_s") - pl.col("start_s")).round().cast(pl.Int32).alias("duration_s"),
            ),
            fill=fill,
        ),
        track=track,
    )


def _mark_counted(runs: pl.DataFrame, near_s: float) -> pl.DataFrame:
    """A run not matched to any trip that shadows a matched run of the same shape (another
    vehicle departing within `near_s`) is a duplicate: it does not count."""
    matched = runs.filter(pl.col("trip_id").is_not_null()).select(
        "shape_id",
        pl.col("started_s").alias("matched_started_s"),
        pl.col("vehicle_id").alias("matched_vehicle_id"),
    )
    dup = (
        runs.filter(pl.col("trip_id").is_null())
        .select("vehicle_id", "run_index", "shape_id", "started_s")
        .join(matched, on="shape_id")
        .filter(
            ((pl.col("started_s") - pl.col("matched_started_s")).abs() <= near_s)
            & (pl.col("matched_vehicle_id") != pl.col("vehicle_id"))
        )
        .select("vehicle_id", "run_index")
        .unique()
        .with_columns(pl.lit(False).alias("is_counted"))
    )
    return runs.join(dup, on=["vehicle_id", "run_index"], how="left").with_columns(
        pl.col("is_counted").fill_null(True)
    )


DERIVED_TABLES = (
    "trips_performed",
    "stop_visits",
    "trip_outcomes",
    "breakdowns",
    "headway_observations",
    "avl_coverage",
    "feed_outages",
)


def write_day(store: Store, service_date: date, result: DayResult) -> dict[str, int]:
    """Replace the day's rows of every derived table, in one transaction. Returns rows written."""
    written: dict[str, int] = {}
    with store.transaction():
        for name in DERIVED_TABLES:
            written[name] = store.replace(
                name, getattr(result, name), "service_date = ?", [service_date]
            )
    return written


def day_window(trips: pl.DataFrame, margin_s: float = 7200.0) -> tuple[object, object]:
    """The UTC window of pings that can belong to a day's trips (first start, last end ± margin)."""
    lo = trips["planned_start_at"].min()
    hi = trips["planned_end_at"].max()
    return lo - timedelta(seconds=margin_s), hi + timedelta(seconds=margin_s)  # type: ignore[operator]


def has_scheduled_trips(store: Store, service_date: date) -> bool:
    """Whether the feed in force on `service_date` schedules any trip that day (True when no
    feed covers the day: `read_schedule` then says so)."""
    from ingest.gtfs_feed import compute_feeds_in_force

    in_force = compute_feeds_in_force(store, service_date, service_date)
    if in_force.height == 0:
        return True
    found = store.query(
        "SELECT count(*) AS n FROM scheduled_trips WHERE service_date = ? AND feed_id = ?",
        [service_date, str(in_force["feed_id"][0])],
    )
    return int(found["n"][0]) > 0


def read_schedule(store: Store, service_date: date, cache: ScheduleCache | None = None) -> Schedule:
    """The schedule of one service day, read from the store (or a lake opened as one);
    `cache`: a run's `ScheduleCache` (stop times and shapes read once per service pattern)."""
    # matching's only import of ingest (the schedule reader); analytics.live has its own
    from ingest.gtfs_feed import read_schedule_from_store

    trips, stop_times, shapes = read_schedule_from_store(store, service_date, cache)
    feed_id = str(trips["feed_id"][0])
    stops = store.read("gtfs_stops", "feed_id = ?", [feed_id])
    crs = store.query("SELECT crs_epsg FROM feed_versions WHERE feed_id = ?", [feed_id])
    return Schedule(service_date, trips, stop_times, shapes, stops, int(crs["crs_epsg"][0]))


def read_incidents(store: Store, trips: pl.DataFrame) -> pl.DataFrame:
    """The incidents that overlap the window of a day's trips (`day_window`)."""
    lo, hi = day_window(trips)
    return store.read("incidents", "ends_at >= ? AND starts_at <= ?", [lo, hi])


def read_day(
    store: Store, service_date: date, cache: ScheduleCache | None = None
) -> tuple[Schedule, pl.DataFrame, pl.DataFrame]:
    """The schedule, pings and incidents of one service day, read from the store (`cache`:
    as `read_schedule`)."""
    schedule = read_schedule(store, service_date, cache)
    lo, hi = day_window(schedule.trips)
    pings = store.read(
        "vehicle_locations", "event_at BETWEEN ? AND ?", [lo, hi], columns=STORED_PING_COLUMNS
    )
    return schedule, pings, read_incidents(store, schedule.trips)


def read_day_evidence(store: Store, service_date: date, trips: pl.DataFrame) -> DayEvidence:
    """The register, taps, inspections and routes a day's trips without GPS are judged with."""
    lo, hi = day_window(trips)
    feed_id = str(trips["feed_id"][0])
    return DayEvidence(
        vehicles=read_register(store, service_date),
        taps=store.read(
            "fare_transactions",
            "event_at BETWEEN ? AND ?",
            [lo, hi],
            columns=["event_at", "vehicle_id", "route_id"],
        ),
        inspections=store.read("inspections", "observed_at BETWEEN ? AND ?", [lo, hi]),
        routes=store.read("gtfs_routes", "feed_id = ?", [feed_id]),
    )


@dataclass
class DayInputs:
    """What `match_day` reads of one service day from the store (`read_day_inputs`)."""

    service_date: date
    schedule: Schedule
    pings: pl.DataFrame
    incidents: pl.DataFrame
    evidence: DayEvidence


def read_day_inputs(
    store: Store, service_date: date, cache: ScheduleCache | None = None
) -> DayInputs | None:
    """The schedule, pings, incidents and evidence of one service day; None when the feed in
    force schedules no trip that day (a holiday without service). `cache`: as `read_schedule`."""
    if not has_scheduled_trips(store, service_date):
        return None
    schedule, pings, incidents = read_day(store, service_date, cache)
    evidence = read_day_evidence(store, service_date, schedule.trips)
    return DayInputs(service_date, schedule, pings, incidents, evidence)


def write_no_service(store: Store, service_date: date) -> dict[str, int]:
    """Clear a day without scheduled trips: it has nothing to match, and a re-match of a day
    whose timetable lost its trips must not leave the old rows. Rows written per table (0)."""
    with store.transaction():
        return {
            name: store.replace(name, table(name).empty(), "service_date = ?", [service_date])
            for name in DERIVED_TABLES
        }


WRITE_GROUP_ROWS = 1_000_000
"""derived rows a multi-day run writes per transaction: days are committed together until
their rows reach this (about 8 days of a 300-bus city; a large city's day is a group of its
own). A commit costs a flush to disk and often a checkpoint whatever it holds: on January of
the 300-bus city a week in one transaction took 1.3 CPU-s and 2.9 s against 2.0 CPU-s and
5.9-8.6 s committed day by day (ADR 0005, addendum)"""


def run_match_days(
    store: Store,
    days: list[date],
    profile: Profile,
    options: MatchOptions,
    *,
    workers: int = 1,
    group_rows: int = WRITE_GROUP_ROWS,
) -> Iterator[tuple[date, dict[str, int]]]:
    """Read, match and write each service day in order (replacing its derived rows), yielding
    (day, rows written per table) for each day once it is committed.

    The days go through a pipeline of four stages, each on a thread of its own: this thread
    reads a day from the store; the matcher thread runs its partition step
    (`match_partitions`: its vehicle batches in `BATCH_THREADS` more threads); the assembler
    thread assembles it (`assemble_day`: assignment, stop visits, outcomes, ..., mostly
    single-threaded) while the matcher runs the next day's batches; this thread writes it. The
    store is only used from this thread. The store's reads and writes and the single-threaded
    stretches of matching (the assembly, the start of the partition step, the batches' uneven
    ends) thus keep the second core busy. A day is read once the day two before it is written,
    so at most three days are held at once, as with one matching stage (one read or waiting
    for the matcher, one in its batches or assembly, one written). Days are
    written in order, each replaced whole, and committed together until their rows reach
    `group_rows` (`WRITE_GROUP_ROWS`). An error reading or matching a day commits every day
    before it and is raised, as a day-by-day run would; an error writing a day (a repeated
    key: a bug) rolls back that day's group. Days of one service pattern share their network
    (`NetworkCache`)."""
    from ingest.gtfs_feed import ScheduleCache  # as `read_schedule`: matching's one reader

    networks = NetworkCache()
    schedules = ScheduleCache()
    # the assembler is shut down after the matcher (`with` exits in reverse): a day whose
    # partitions are running when an error stops the run still hands them over
    with (
        ThreadPoolExecutor(1, thread_name_prefix="pontual-match-assemble") as assembler,
        ThreadPoolExecutor(1, thread_name_prefix="pontual-match-day") as matcher,
    ):

        def partition(inputs: DayInputs) -> Future[DayResult]:
            parts = _partition_inputs(inputs, profile, options, workers, networks)
            # the pings are not needed past the partitions (the caller's reference to them
            # is dropped as this returns)
            inputs = replace(inputs, pings=inputs.pings.clear())
            return assembler.submit(_assemble_inputs, inputs, parts, profile, options)

        def start(day: date) -> tuple[date, Future[Future[DayResult]] | None]:
            inputs = read_day_inputs(store, day, schedules)
            if inputs is None:
                return day, None
            return day, matcher.submit(partition, inputs)

        queue = list(days)
        queue.reverse()
        pending: tuple[date, Future[Future[DayResult]] | None] | None = None
        error: Exception | None = None
        while pending is not None or (queue and error is None):
            committed: list[tuple[date, dict[str, int]]] = []
            rows = 0
            with store.transaction():
                while rows < group_rows:
                    following = None
                    if queue and error is None:
                        try:
                            following = start(queue.pop())
                        except Exception as exc:  # the day before is still written
                            error = exc
                    if pending is not None:
                        day, future = pending
                        pending = None
                        try:
                            result = None if future is None else future.result().result()
                        except Exception as exc:  # as a day-by-day run, which stops at it
                            if following is not None and following[1] is not None:
                                following[1].cancel()
                            error, following = exc, None
                        else:
                            written = (
                                write_no_service(store, day)
                                if result is None
                                else write_day(store, day, result)
                            )
                            committed.append((day, written))
                            rows += sum(written.values())
                    pending = following
                    if pending is None:
                        break
            yield from committed
        if error is not None:
            raise error


def _partition_inputs(
    inputs: DayInputs,
    profile: Profile,
    options: MatchOptions,
    workers: int,
    networks: NetworkCache | None = None,
) -> DayPartitions:
    """`match_partitions` of what `read_day_inputs` read (`networks`: the run's
    `NetworkCache`, None for a day alone)."""
    return match_partitions(
        inputs.pings, inputs.schedule, profile, options, workers=workers, networks=networks
    )


def _assemble_inputs(
    inputs: DayInputs, parts: DayPartitions, profile: Profile, options: MatchOptions
) -> DayResult:
    """`assemble_partitions` of a day's partitions, without its track (not written)."""
    result = assemble_partitions(
        parts, inputs.schedule, inputs.incidents, profile, options, inputs.evidence
    )
    # the track is not written (`write_day`): no day's pings are held past its matching
    return replace(result, track=result.track.clear())


def _match_inputs(
    inputs: DayInputs,
    profile: Profile,
    options: MatchOptions,
    workers: int,
) -> DayResult:
    """A day's matching step alone (`run_match_day`): its partitions, then its assembly."""
    return _assemble_inputs(
        inputs, _partition_inputs(inputs, profile, options, workers), profile, options
    )


def run_match_day(
    store: Store, service_date: date, profile: Profile, options: MatchOptions, *, workers: int = 1
) -> dict[str, int]:
    """Read, match and write one service day (replacing its derived rows). Rows written per table.
    A day without scheduled trips (a holiday without service) has nothing to match: its derived
    rows are cleared, as a re-match of a day whose timetable lost its trips must."""
    inputs = read_day_inputs(store, service_date)
    if inputs is None:
        return write_no_service(store, service_date)
    return write_day(store, service_date, _match_inputs(inputs, profile, options, workers))
