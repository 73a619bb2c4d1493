"""Match one service day: pings -> runs -> trips -> stop visits, outcomes, breakdowns, headways.

Partitions are service day x vehicle. Vehicles are processed in batches (every function works
per vehicle with window expressions, so a batch is many partitions in one vectorised pass) in a
process pool; each worker builds the day's network once. Assignment of runs to trips needs
every vehicle of the day (exclusivity), so it runs after the pool, followed by the cheap
per-run steps. `write_day` replaces the day's derived rows (idempotent re-runs).
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import partial

import numpy as np
import polars as pl
from pyproj import Transformer

from analytics.assign import match_runs_to_trips
from analytics.breakdowns import find_breakdowns, find_stands
from analytics.clean import clean_pings
from analytics.headways import compute_headways
from analytics.network import Network, build_network
from analytics.options import MatchOptions
from analytics.outcomes import compute_trip_outcomes
from analytics.project import project_pings
from analytics.runs import build_runs
from analytics.stop_visits import compute_stop_visits
from core import __version__
from core.profile import Profile
from core.schema import table
from core.store import Store
from gtfs.read import Feed
from gtfs.schedule import build_geometry, build_scheduled_trips

PING_OPTIONAL: dict[str, pl.DataType] = {
    "event_code": pl.String(),
    "reported_trip_id": pl.String(),
    "lat": pl.Float64(),
    "lon": pl.Float64(),
}
"""ping columns the partition steps read when present (null when not)"""
STORED_PING_COLUMNS = ("ping_id", "vehicle_id", "event_at", *PING_OPTIONAL)
"""the columns of `vehicle_locations` matching reads (a day of a large city is ~10 M rows:
the others would be a third of its memory)"""
PING_COLUMNS = (*STORED_PING_COLUMNS, "x_m", "y_m")
"""the ping columns the partition steps read (positions projected, or projected by them)"""


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
    track: pl.DataFrame


def to_metres(pings: pl.DataFrame, crs_epsg: int) -> pl.DataFrame:
    """Add `x_m`, `y_m` (feed CRS, metres) from lat/lon, vectorised with pyproj."""
    tr = Transformer.from_crs(4326, crs_epsg, always_xy=True)
    x, y = tr.transform(pings["lon"].to_numpy(), pings["lat"].to_numpy())
    return pings.with_columns(pl.Series("x_m", x), pl.Series("y_m", y))


def match_vehicles(
    pings: pl.DataFrame,
    network: Network,
    options: MatchOptions,
    breakdown_stop_min_s: float | None = None,
    crs_epsg: int | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The partition step for a batch of vehicles: clean, reference on shapes, cut into runs.

    Returns (runs, track, stands): `stands` is the batch's breakdown evidence (`find_stands`;
    empty when `breakdown_stop_min_s` is None), so the batch's pings can be dropped after it.
    `pings` needs ping_id, vehicle_id, event_at, and x_m, y_m or lat, lon (projected here to
    `crs_epsg`).
    """
    if "x_m" not in pings.columns:
        assert crs_epsg is not None, "pings without x_m/y_m need the CRS to project them to"
        pings = to_metres(pings, crs_epsg)
    for name, dtype in PING_OPTIONAL.items():
        if name not in pings.columns:
            pings = pings.with_columns(pl.lit(None, dtype).alias(name))
    clean = clean_pings(pings, options).filter(~pl.col("is_outlier"))
    clean = clean.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    cand = project_pings(
        clean["x_m"].to_numpy(),
        clean["y_m"].to_numpy(),
        clean["t_s"].to_numpy(),
        clean["vehicle_rank"].to_numpy(),
        network,
        options,
    )
    runs, track = build_runs(clean, cand, network, options)
    keep = [
        "vehicle_id",
        "vehicle_rank",
        "ping_id",
        "t_s",
        "x_m",
        "y_m",
        "lat",
        "lon",
        "event_code",
    ]
    min_s = float("inf") if breakdown_stop_min_s is None else breakdown_stop_min_s
    stands = find_stands(clean.select(keep), network, options, min_s)
    return runs, track, stands


_WORKER: dict[str, object] = {}
BATCH_THREADS = 2
"""batches matched at once in a process (threads): the partition steps are single-threaded
for long stretches (small Polars steps, compiled kernels), so two keep two cores busy"""


def _init_worker(network: Network, options: MatchOptions, min_s: float, crs_epsg: int) -> None:
    _WORKER["network"] = network
    _WORKER["options"] = options
    _WORKER["min_s"] = min_s
    _WORKER["crs_epsg"] = crs_epsg


def _work(pings: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return match_vehicles(
        pings,
        _WORKER["network"],  # type: ignore[arg-type]
        _WORKER["options"],  # type: ignore[arg-type]
        _WORKER["min_s"],  # type: ignore[arg-type]
        _WORKER["crs_epsg"],  # type: ignore[arg-type]
    )


def _map_bounded(
    pool: Executor,
    work: Callable[[pl.DataFrame], tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]],
    batches: Iterator[pl.DataFrame],
    in_flight: int,
) -> list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]:
    """`work` over the batches in the pool, in order, with at most `in_flight` submitted."""
    pending: deque[Future[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]] = deque()
    results = []
    for batch in batches:
        pending.append(pool.submit(work, batch))
        if len(pending) >= in_flight:
            results.append(pending.popleft().result())
    results.extend(f.result() for f in pending)
    return results


def batch_codes(pings: pl.DataFrame, n_batches: int) -> pl.Series:
    """The batch (0 .. n_batches - 1) of each ping, by a hash of its vehicle (never split)."""
    return pings["vehicle_id"].hash() % max(n_batches, 1)


def cut_batches(pings: pl.DataFrame, n_batches: int) -> Iterator[pl.DataFrame]:
    """The pings of each batch (`batch_codes`), one at a time, rows in their input order.

    Each batch is gathered by its row positions (one stable radix sort of the codes for the
    day) and only the columns the partition steps read: a filter per batch scans the whole
    day's frame every time, about 7x the cost on a day of 11 M pings.
    """
    codes = batch_codes(pings, n_batches).to_numpy()
    narrow = np.uint16 if n_batches <= 2**16 else np.uint32
    order = np.argsort(codes.astype(narrow), kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_batches + 1))
    needed = pings.select(c for c in PING_COLUMNS if c in pings.columns)
    for b in range(n_batches):
        yield needed[order[bounds[b] : bounds[b + 1]]]


def match_day(
    pings: pl.DataFrame,
    schedule: Schedule,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
    *,
    workers: int = 1,
    batch_pings: int = 150_000,
) -> DayResult:
    """Match a day. `pings` has ping_id, vehicle_id, event_at and x_m/y_m or lat/lon (then
    projected a batch at a time: the day never holds a projected copy)."""
    epsg = schedule.crs_epsg
    network = build_network(
        schedule.shapes, schedule.trips, schedule.stop_times, schedule.stops, options
    )
    min_s = float(profile.trips.breakdown_stop_min_s.value)
    n_batches = max(1, int(np.ceil(pings.height / batch_pings)), workers)
    batches = cut_batches(pings, n_batches)
    if workers > 1 and n_batches > 1:
        # "spawn", not "fork": forking a process whose Polars/DuckDB thread pools hold locks
        # deadlocks the children (seen with `pontual demo`).
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            workers,
            mp_context=ctx,
            initializer=_init_worker,
            # the partition steps need the network's geometry, not its stop table
            initargs=(
                replace(network, trip_stops=network.trip_stops.clear()),
                options,
                min_s,
                epsg,
            ),
        ) as pool:
            # at most two batches per worker in flight: each is cut out only when submitted,
            # so the batches never exist all at once beside the day's pings
            results = _map_bounded(pool, _work, batches, 2 * workers)
    else:
        # batches stream through threads: each is cut out, matched and released, so memory
        # holds `BATCH_THREADS` batches' working frames (plus the small runs, tracks and stands
        # kept). Polars and the compiled kernels release the GIL: while one batch is in a
        # single-threaded step, another runs on the other core. A day without pings is one
        # empty batch
        with ThreadPoolExecutor(BATCH_THREADS) as threads:
            results = _map_bounded(
                threads,
                partial(
                    match_vehicles,
                    network=network,
                    options=options,
                    breakdown_stop_min_s=min_s,
                    crs_epsg=epsg,
                ),
                batches,
                BATCH_THREADS,
            )
    runs = pl.concat([r[0] for r in results], how="diagonal_relaxed")
    track = pl.concat([r[1] for r in results])
    stands = pl.concat([r[2] for r in results], how="diagonal_relaxed")
    # the batch order is not needed past the partitions
    del pings, batches, results
    return assemble_day(runs, track, stands, schedule, network, incidents, profile, options)


def assemble_day(
    runs: pl.DataFrame,
    track: pl.DataFrame,
    stands: pl.DataFrame,
    schedule: Schedule,
    network: Network,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
) -> DayResult:
    """The day-level steps after the partitions: assignment, stop visits, outcomes, ..."""
    trips = schedule.trips
    runs = match_runs_to_trips(runs, trips, options)
    runs = _mark_counted(runs, float(profile.trips.late_departure_s.value))
    # one pass over the day: the crossings are searched on arrays, no (stop x ping) frame
    visits = compute_stop_visits(runs, track, trips, network.trip_stops, options)
    bds = find_breakdowns(stands, runs, incidents, options)
    outcomes = compute_trip_outcomes(trips, runs, bds, incidents, profile, options)
    heads = compute_headways(trips, runs, float(profile.trips.frequent_headway_max_s.value))
    fill = {
        "service_date": schedule.service_date,
        "pontual_version": __version__,
        "profile_id": profile.id,
    }

    def at(c):
        return pl.from_epoch((pl.col(c) * 1e6).round().cast(pl.Int64), "us").dt.replace_time_zone(
            "UTC"
        )

    performed = runs.with_columns(
        pl.col("run_id").alias("run_index"),
        at("started_s").alias("started_at"),
        at("ended_s").alias("ended_at"),
        pl.col("length_m").alias("shape_length_m"),
    )
    bd = bds.with_columns(
        at("started_s").alias("started_at"),
        at("ended_s").alias("ended_at"),
        (pl.col("ended_s") - pl.col("started_s")).round().cast(pl.Int32).alias("duration_s"),
        pl.col("run_id").alias("run_index"),
    )
    return DayResult(
        trips_performed=table("trips_performed").conform(performed, fill=fill),
        stop_visits=table("stop_visits").conform(visits, fill=fill),
        trip_outcomes=table("trip_outcomes").conform(outcomes, fill=fill),
        breakdowns=table("breakdowns").conform(bd, fill=fill),
        headway_observations=table("headway_observations").conform(heads, fill=fill),
        track=track,
    )


def _mark_counted(runs: pl.DataFrame, near_s: float) -> pl.DataFrame:
    """A run not matched to any trip that shadows a matched run of the same shape (another
    vehicle departing within `near_s`) is a duplicate: it does not count."""
    matched = runs.filter(pl.col("trip_id").is_not_null()).select(
        "shape_id", pl.col("started_s").alias("_m"), pl.col("vehicle_id").alias("_v")
    )
    dup = (
        runs.filter(pl.col("trip_id").is_null())
        .select("vehicle_id", "run_id", "shape_id", "started_s")
        .join(matched, on="shape_id")
        .filter(
            ((pl.col("started_s") - pl.col("_m")).abs() <= near_s)
            & (pl.col("_v") != pl.col("vehicle_id"))
        )
        .select("vehicle_id", "run_id")
        .unique()
        .with_columns(pl.lit(False).alias("is_counted"))
    )
    return runs.join(dup, on=["vehicle_id", "run_id"], how="left").with_columns(
        pl.col("is_counted").fill_null(True)
    )


DERIVED_TABLES = (
    "trips_performed",
    "stop_visits",
    "trip_outcomes",
    "breakdowns",
    "headway_observations",
)


def write_day(store: Store, service_date: date, result: DayResult) -> dict[str, int]:
    """Replace the day's rows of every derived table, in one transaction. Returns rows written."""
    written: dict[str, int] = {}
    with store.transaction():  # type: ignore[attr-defined]
        for name in DERIVED_TABLES:
            written[name] = store.replace(
                name, getattr(result, name), "service_date = ?", [service_date]
            )  # type: ignore[attr-defined]
    return written


def day_window(trips: pl.DataFrame, margin_s: float = 7200.0) -> tuple[object, object]:
    """The UTC window of pings that can belong to a day's trips (first start, last end ± margin)."""
    lo = trips["planned_start_at"].min()
    hi = trips["planned_end_at"].max()
    return lo - timedelta(seconds=margin_s), hi + timedelta(seconds=margin_s)  # type: ignore[operator]


def read_day(store: Store, service_date: date) -> tuple[Schedule, pl.DataFrame, pl.DataFrame]:
    """The schedule, pings and incidents of one service day, read from the store."""
    from ingest.gtfs_feed import read_schedule_from_store  # the one place matching reads ingest

    trips, stop_times, shapes = read_schedule_from_store(store, service_date)  # type: ignore[arg-type]
    feed_id = str(trips["feed_id"][0])
    stops = store.read("gtfs_stops", "feed_id = ?", [feed_id])  # type: ignore[attr-defined]
    crs = store.query("SELECT crs_epsg FROM feed_versions WHERE feed_id = ?", [feed_id])  # type: ignore[attr-defined]
    schedule = Schedule(service_date, trips, stop_times, shapes, stops, int(crs["crs_epsg"][0]))
    lo, hi = day_window(trips)
    pings = store.read(  # type: ignore[attr-defined]
        "vehicle_locations", "event_at BETWEEN ? AND ?", [lo, hi], columns=STORED_PING_COLUMNS
    )
    incidents = store.read("incidents", "ends_at >= ? AND starts_at <= ?", [lo, hi])  # type: ignore[attr-defined]
    return schedule, pings, incidents


def run_match_day(
    store: Store, service_date: date, profile: Profile, options: MatchOptions, *, workers: int = 1
) -> dict[str, int]:
    """Read, match and write one service day (replacing its derived rows). Rows written per table."""
    schedule, pings, incidents = read_day(store, service_date)
    result = match_day(pings, schedule, incidents, profile, options, workers=workers)
    return write_day(store, service_date, result)
