"""Crowding: where and when the limit of standees per m² is broken, and what it takes to fix it.

`compute_crowding` chains the pure steps — boarding placement (`analytics.crowding.boardings`),
alighting inference (`analytics.crowding.alightings`), load profiles (`analytics.crowding.loads`) — and adds the
line × direction × hour summary. `run_crowding` reads a service-date range from the store and
replaces those days' rows of `tap_placements`, `trip_loads`, `trip_crowding` and
`crowding_summary`, a day at a time (`compute_crowding_by_day`: the same rows as
`compute_crowding` over the whole range, in memory for the range's stop visits and about a
day of taps; ADR 0103).

Extra trips follow the TCQSM maximum-load-point method: the hour's passengers through its
busiest segment, divided by a run's capacity at the limit (seats + limit × standing area), is
the number of runs that carry them within the limit (BG art. 59 §1 orders more trips or larger
vehicles whenever the limit is exceeded on more than the profile's share of trips).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import polars as pl

from analytics.crowding.alightings import (
    DEFAULT_ALIGHTING_OPTIONS,
    AlightingOptions,
    compute_alightings,
)
from analytics.crowding.boardings import (
    DEFAULT_BOARDING_OPTIONS,
    BoardingOptions,
    build_stop_windows,
    compute_boardings,
    match_to_trace,
    place_taps,
    sort_by_run,
    windows_between,
)
from analytics.crowding.loads import (
    DEFAULT_LOAD_OPTIONS,
    LoadOptions,
    VisitTally,
    build_load_visits,
    compute_apc_counts,
    compute_loads,
    compute_loads_from_counts,
    compute_trip_crowding,
)
from core import __version__
from core.profile import Profile
from core.register import read_register, to_register_latest
from core.schema import table
from core.store import INSERT_BATCH_ROWS, Store

GROUP = ["service_date", "route_id", "direction_id", "hour_at"]
TAP_COLUMNS = ("transaction_id", "operator_id", "event_at", "vehicle_id", "card_hash")
"""the `fare_transactions` columns the crowding reads"""
VISIT_COLUMNS = (
    "service_date",
    "vehicle_id",
    "run_index",
    "trip_id",
    "stop_sequence",
    "stop_id",
    "arrival_at",
    "departure_at",
)
"""the `stop_visits` columns the crowding reads"""
CROWDING_TABLES = ("tap_placements", "trip_loads", "trip_crowding", "crowding_summary")


@dataclass(frozen=True)
class CrowdingOptions:
    """Method parameters of the crowding jobs (regulatory limits come from the profile)."""

    boarding: BoardingOptions = field(default_factory=lambda: DEFAULT_BOARDING_OPTIONS)
    alighting: AlightingOptions = field(default_factory=lambda: DEFAULT_ALIGHTING_OPTIONS)
    load: LoadOptions = field(default_factory=lambda: DEFAULT_LOAD_OPTIONS)


DEFAULT_CROWDING_OPTIONS = CrowdingOptions()


@dataclass(frozen=True)
class CrowdingInputs:
    """What the crowding jobs read: taps, stop visits, trips, register, stops, APC counts."""

    taps: pl.DataFrame
    stop_visits: pl.DataFrame
    trips: pl.DataFrame
    vehicles: pl.DataFrame
    stops: pl.DataFrame
    passenger_counts: pl.DataFrame | None = None


@dataclass(frozen=True)
class CrowdingResult:
    """The four derived frames, each with its table's columns (before conforming)."""

    tap_placements: pl.DataFrame
    trip_loads: pl.DataFrame
    trip_crowding: pl.DataFrame
    crowding_summary: pl.DataFrame
    trace_placements: pl.DataFrame | None = None
    """taps whose vehicle ran no recognised trip, located on its GPS trace
    (`analytics.crowding.boardings.match_to_trace`); None when every vehicle had runs"""


def _vehicle_types(profile: Profile) -> pl.DataFrame:
    """Profile vehicle types with their capacity at the limit (passengers), smallest first."""
    limit = profile.crowding.standees_max_per_m2.value
    types = profile.crowding.vehicle_types
    return pl.DataFrame(
        {
            "vehicle_type": list(types),
            "type_capacity": [
                t.n_seats.value + limit * t.standing_area_m2.value for t in types.values()
            ],
        },
        schema={"vehicle_type": pl.String, "type_capacity": pl.Float64},
    ).sort("type_capacity")


RANK_DECIMALS = 9
"""Decimals at which the worst segment's means are compared (standees per m², passengers):
far below any difference that matters, far above a float sum's last bits."""


def compute_crowding_summary(
    trip_crowding: pl.DataFrame, trip_loads: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """Line × direction × hour of departure: share of runs over the limit, the worst segment,
    and the extra trips or larger vehicle that bring the peak under the limit.

    `trip_crowding`, `trip_loads`: `compute_trip_crowding` and `compute_loads` outputs.
    Returns the `crowding_summary` columns. The worst segment has the highest mean standees
    per m² (then the highest mean load, then the first stop id; the means compared at
    `RANK_DECIMALS` decimals) over the hour's runs that ride it; the peak segment, the highest
    sum of loads (the hour's maximum load point).
    """
    limit = profile.crowding.standees_max_per_m2.value
    share_max = profile.crowding.over_limit_trip_share_max.value
    run_key = ["service_date", "vehicle_id", "run_index"]
    # `trips` and `segments` are read by several branches: collected once rather than
    # computed for each
    trips = (
        trip_crowding.with_columns(
            (pl.col("n_seats") + limit * pl.col("standing_area_m2")).alias("capacity")
        )
    ).lazy()
    per_hour = trips.group_by(GROUP).agg(
        pl.len().cast(pl.Int32).alias("n_trips"),
        pl.col("is_over_limit").fill_null(False).sum().cast(pl.Int32).alias("n_over_limit"),
        pl.col("max_load").max().alias("max_load"),
        pl.col("max_standees_per_m2").max().alias("max_standees_per_m2"),
        pl.col("capacity").mean().alias("capacity_at_limit"),
    )
    segments = (
        trip_loads.lazy()
        .filter(pl.col("next_stop_id").is_not_null())
        .join(trips.select(*run_key, "hour_at"), on=run_key, how="inner")
        .group_by(*GROUP, "stop_id", "next_stop_id")
        .agg(
            pl.col("load_after").mean().alias("mean_load"),
            pl.col("load_after").sum().alias("sum_load"),
            pl.col("standees_per_m2").mean().alias("mean_standees"),
        )
        .collect()
        .lazy()
    )
    worst = (
        # ties (common: many segments of an empty hour share 0 standees) go to the first
        # segment in stop id order, so that a re-run names the same segment; the means are
        # ranked at RANK_DECIMALS, since a parallel mean's last bits follow its summing order
        # and would break a true tie differently from run to run
        segments.sort(
            pl.col("mean_standees").fill_null(-1.0).round(RANK_DECIMALS),
            pl.col("mean_load").round(RANK_DECIMALS),
            "stop_id",
            "next_stop_id",
            descending=[True, True, False, False],
        )
        .group_by(GROUP)
        .agg(
            pl.col("stop_id").first().alias("worst_from_stop_id"),
            pl.col("next_stop_id").first().alias("worst_to_stop_id"),
            pl.col("mean_load").first().alias("worst_mean_load"),
            pl.col("mean_standees").first().alias("worst_mean_standees_per_m2"),
        )
    )
    peak = segments.group_by(GROUP).agg(pl.col("sum_load").max().alias("peak_segment_load"))
    types = _vehicle_types(profile)
    share = pl.col("n_over_limit") / pl.col("n_trips")
    action = share > share_max
    needed = (pl.col("peak_segment_load") / pl.col("capacity_at_limit")).ceil().cast(pl.Int32)
    out = (
        per_hour.join(worst, on=GROUP, how="left")
        .join(peak, on=GROUP, how="left")
        .with_columns(
            pl.col("peak_segment_load").fill_null(0.0),
            share.alias("over_limit_share"),
            action.alias("is_action_required"),
        )
        .with_columns(needed.alias("n_trips_needed"))
        .with_columns(
            pl.when("is_action_required")
            .then((pl.col("n_trips_needed") - pl.col("n_trips")).clip(lower_bound=0))
            .otherwise(0)
            .cast(pl.Int32)
            .alias("extra_trips_needed"),
        )
        .collect()
    )
    # Smallest profile type whose capacity at the limit carries the hour's highest run load.
    fits = (
        out.select(*GROUP, "max_load", "capacity_at_limit", "is_action_required")
        .filter("is_action_required")
        .join(types, how="cross")
        .filter(
            (pl.col("type_capacity") >= pl.col("max_load"))
            & (pl.col("type_capacity") > pl.col("capacity_at_limit").fill_null(0.0))
        )
        .sort("type_capacity")
        .group_by(GROUP)
        .agg(pl.col("vehicle_type").first().alias("larger_vehicle_type"))
    )
    return out.join(fits, on=GROUP, how="left").sort(GROUP)


def compute_crowding(
    inputs: CrowdingInputs,
    profile: Profile,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> CrowdingResult:
    """Boardings, alightings, load profiles, per-run peaks and the hourly summary."""
    boardings = compute_boardings(
        inputs.taps,
        inputs.stop_visits,
        timezone=profile.general.timezone.value,
        options=options.boarding,
    )
    placements = compute_alightings(boardings, inputs.stop_visits, inputs.stops, options.alighting)
    del boardings  # the placements share its columns but for the reasons
    apc = None
    if inputs.passenger_counts is not None and inputs.passenger_counts.height:
        apc = compute_apc_counts(inputs.passenger_counts, inputs.stop_visits, options.boarding)
    loads = compute_loads(
        placements,
        inputs.stop_visits,
        inputs.trips,
        inputs.vehicles,
        profile,
        apc_counts=apc,
        options=options.load,
    )
    trips = compute_trip_crowding(loads)
    summary = compute_crowding_summary(trips, loads, profile)
    return CrowdingResult(to_routed_placements(placements, inputs.trips), loads, trips, summary)


def to_routed_placements(placements: pl.DataFrame, trips: pl.DataFrame) -> pl.DataFrame:
    """`placements` with the `route_id` of each tap's trip (`trips`: `scheduled_trips`), in
    the same row order."""
    # the trips of the taps' days only (a day's taps, in `compute_crowding_by_day`: the
    # join's table is then a day's trips, not the period's, built once a day)
    days = placements["service_date"].unique()
    routes = (
        trips.filter(pl.col("service_date").is_in(days.implode()))
        .select("service_date", "trip_id", "route_id")
        .unique(["service_date", "trip_id"])
    )
    # the route column alone is joined (a join of the whole frame copies every column), a
    # slice of taps at a time: the join's copies of the keys are then those of one slice (on
    # a big city's day, the whole join peaked 0.4 GB above its result)
    keys = placements.select("service_date", "trip_id")
    route_id = pl.concat(
        [
            keys.slice(lo, _ROUTED_PER_SLICE)
            .join(routes, on=["service_date", "trip_id"], how="left", maintain_order="left")
            .get_column("route_id")
            for lo in range(0, max(keys.height, 1), _ROUTED_PER_SLICE)
        ]
    )
    return placements.with_columns(route_id)


_ROUTED_PER_SLICE = 1_000_000
"""taps given their route at a time by `to_routed_placements` (bounds its memory only)"""


# -- store ------------------------------------------------------------------------------------


def _local_midnight(day: date, timezone: str) -> datetime:
    return datetime.combine(day, time(0), ZoneInfo(timezone))


def crowding_tap_window(
    stop_visits: pl.DataFrame,
    start: date,
    end: date,
    timezone: str,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> tuple[datetime, datetime]:
    """The instants [from, to) of the taps the service days `start`..`end` need: from
    `start`'s local midnight less the terminal boarding lead to the later of `end + 1`'s
    midnight and the last arrival of `end`'s runs (`stop_visits`: those of the days)."""
    lo = _local_midnight(start, timezone) - timedelta(seconds=options.boarding.terminal_boarding_s)
    hi = _local_midnight(end + timedelta(days=1), timezone)
    last = (
        stop_visits.filter(pl.col("service_date") <= end).select(pl.col("arrival_at").max()).item()
    )
    if last is not None and last > hi:
        hi = last
    return lo, hi


@dataclass(frozen=True)
class CrowdingPeriod:
    """What the crowding of service days `start`..`end` reads but the taps, which are read
    a slice at a time (`compute_crowding_by_day`): the stop visits and trips of the days and
    the day before, register, stops, APC counts, and the instants [`taps_from`, `taps_to`)
    of the taps the days need (`crowding_tap_window`)."""

    start: date
    end: date
    stop_visits: pl.DataFrame
    trips: pl.DataFrame
    vehicles: pl.DataFrame
    stops: pl.DataFrame
    taps_from: datetime
    taps_to: datetime
    passenger_counts: pl.DataFrame | None = None


def read_crowding_period(
    store: Store,
    profile: Profile,
    start: date,
    end: date,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> CrowdingPeriod:
    """Read what the service days `start`..`end` need but their taps (`read_crowding_inputs`
    reads the same, taps included)."""
    tz = profile.general.timezone.value
    first = start - timedelta(days=1)
    # one chunk (the store's read gives one per DuckDB batch): every gather, filter and
    # sort of the month's visits below costs a fraction of the same on 30 chunks
    visits = store.read(
        "stop_visits", "service_date BETWEEN ? AND ?", [first, end], columns=VISIT_COLUMNS
    ).rechunk()
    trips = store.query(
        "SELECT service_date, trip_id, route_id, direction_id FROM scheduled_trips "
        "WHERE service_date BETWEEN ? AND ?",
        [first, end],
    )
    lo, hi = crowding_tap_window(visits, start, end, tz, options)
    counts = store.read("passenger_counts", "event_at >= ? AND event_at < ?", [lo, hi])
    stops = store.query(
        "SELECT s.stop_id, s.stop_x_m, s.stop_y_m FROM gtfs_stops s "
        "JOIN feed_versions f USING (feed_id) "
        "WHERE s.stop_x_m IS NOT NULL ORDER BY f.loaded_at"
    ).unique("stop_id", keep="last", maintain_order=True)
    return CrowdingPeriod(
        start=start,
        end=end,
        stop_visits=visits,
        trips=trips,
        vehicles=to_register_latest(read_register(store, start, end)),
        stops=stops,
        taps_from=lo,
        taps_to=hi,
        passenger_counts=counts,
    )


def read_period_taps(store: Store, taps_from: datetime, taps_to: datetime) -> pl.DataFrame:
    """The columns of `fare_transactions` the crowding reads, of the taps in [from, to)."""
    return store.read(
        "fare_transactions",
        "event_at >= ? AND event_at < ?",
        [taps_from, taps_to],
        columns=TAP_COLUMNS,
    )


def read_crowding_inputs(
    store: Store,
    profile: Profile,
    start: date,
    end: date,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> CrowdingInputs:
    """Read what the service days `start`..`end` need.

    Stop visits and trips from the day before as well (a tap just after midnight may belong to
    the previous service day's last runs); taps and APC readings from `start`'s local
    midnight, less the terminal boarding lead, to the later of `end + 1`'s midnight and the
    last arrival of `end`'s runs.
    """
    period = read_crowding_period(store, profile, start, end, options)
    # only the columns the crowding reads (a month of a big city's taps is gigabytes)
    taps = read_period_taps(store, period.taps_from, period.taps_to)
    return CrowdingInputs(
        taps=taps,
        stop_visits=period.stop_visits,
        trips=period.trips,
        vehicles=period.vehicles,
        stops=period.stops,
        passenger_counts=period.passenger_counts,
    )


DayWriter = Callable[[str, date, pl.DataFrame], None]
"""Takes (crowding table, service day, that day's rows of it): `compute_crowding_by_day`
hands each day's rows of each table over once, `tap_placements` (with the route) in date
order as the days' taps are all read, then the other three in date order."""


def compute_crowding_by_day(
    period: CrowdingPeriod,
    read_taps: Callable[[datetime, datetime], pl.DataFrame],
    write: DayWriter,
    profile: Profile,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> None:
    """The crowding of the service days `period.start`..`period.end`, with the results of
    `compute_crowding` on all their inputs at once, in memory for about a day of taps plus
    the period's stop visits (ADR 0103).

    `read_taps(from, to)`: the taps (`fare_transactions`: transaction_id, operator_id,
    event_at, vehicle_id, card_hash) in [from, to), called for consecutive slices of
    [`period.taps_from`, `period.taps_to`). `write`: takes each day's rows (`DayWriter`).

    Three passes over the same method:
    1. the taps are placed a slice at a time on the boarding windows of all the period's
       visits (a tap's placement is its own);
    2. once every tap a service day can hold is read (its runs' windows and its local date
       are over), its taps are chained and their alightings inferred, with those of other
       days' taps of its time span (which part a card's legs in the one-go chaining as
       here); its rows of `tap_placements` are handed over, and only its integer counts on
       the visits are kept (`VisitTally`);
    3. the load profiles, runs and hourly summary of each day from the counts of all the
       days (the unlinked boarders' pooled tiers are over the whole period, as at once).
    The day before `start` (its night runs' taps after `start`'s midnight) and the day after
    `end` (unplaced taps before its runs) are chained and counted as in the one-go
    computation, not handed over.
    """
    tz = profile.general.timezone.value
    # numba's machine target (its typing and lowering registries, ~0.5 s of Python the
    # first kernel call would wait for) is set up on a thread of its own while the visits'
    # windows are built, mostly in Polars' native code
    threading.Thread(target=_set_up_kernel_target, name="crowding-kernels", daemon=True).start()
    # sorted once by run for the windows, the numbered visits and each day's chaining (each
    # would sort them; the store's read gives them in that order, and they are kept as read)
    visits = sort_by_run(period.stop_visits)
    windows = build_stop_windows(visits, include_last=False, options=options.boarding)
    vehicles = windows["vehicle_id"].unique()
    load_visits = build_load_visits(visits, period.trips)
    # a service day's taps are all read once its runs' boarding windows are over and its
    # local date is past: a placed tap lies in a window of its day, an unplaced one on it
    windows_end = dict(
        windows.group_by("service_date").agg(pl.col("window_end_at").max()).iter_rows()
    )

    def complete_at(day: date) -> datetime:
        midnight = _local_midnight(day + timedelta(days=1), tz)
        last = windows_end.get(day)
        return midnight if last is None or last < midnight else last

    tally = VisitTally(load_visits)
    done: set[date] = set()
    held: pl.DataFrame | None = None  # placed taps of days not all read, and their context
    bounds = _tap_slices(period, tz)
    for lo, hi in pairwise(bounds):
        taps = read_taps(lo, hi)
        placed = place_taps(taps, windows_between(windows, lo, hi), timezone=tz, vehicles=vehicles)
        del taps
        if set(placed["service_date"].unique().to_list()) & done:
            raise AssertionError("a tap of a service day already chained: a bug in the slices")
        held = placed if held is None else pl.concat([held, placed], how="vertical")
        del placed
        is_last = hi >= period.taps_to
        days = held["service_date"].unique().sort().to_list()
        ready = [d for d in days if d not in done and (is_last or complete_at(d) <= hi)]
        for day in ready:
            placements = _chain_day(held, day, visits, period.stops, options)
            tally.add_taps(placements)
            if period.start <= day <= period.end:
                write("tap_placements", day, to_routed_placements(placements, period.trips))
            del placements
            done.add(day)
        if ready:
            # keep the chained days' taps that a day still open may need as its context
            waiting = held.filter(~pl.col("service_date").is_in(list(done)))
            since = waiting["event_at"].min() if waiting.height else None
            keep = ~pl.col("service_date").is_in(list(done))
            if since is not None:
                keep = keep | (pl.col("event_at") >= since)
            held = held.filter(keep)
            del waiting
    del held
    counts = tally.counts()
    apc = None
    if period.passenger_counts is not None and period.passenger_counts.height:
        apc = compute_apc_counts(period.passenger_counts, visits, options.boarding)
    day = period.start
    while day <= period.end:
        loads = compute_loads_from_counts(
            load_visits,
            counts,
            period.vehicles,
            profile,
            apc_counts=apc,
            options=options.load,
            service_date=day,
        )
        trips = compute_trip_crowding(loads)
        summary = compute_crowding_summary(trips, loads, profile)
        write("trip_loads", day, loads)
        write("trip_crowding", day, trips)
        write("crowding_summary", day, summary)
        day += timedelta(days=1)


def _set_up_kernel_target() -> None:
    """Load numba's CPU target (its registries), under the compiler lock that a kernel's
    first call takes to load the kernel from the cache (it then finds the target ready)."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    with global_compiler_lock:
        cpu_target.target_context.refresh()


_TAP_SLICE = timedelta(hours=6)
"""taps read and placed at a time by `compute_crowding_by_day` (bounds its memory, not its
results): a service day is chained within a slice of its runs' end"""


def _tap_slices(period: CrowdingPeriod, timezone: str) -> list[datetime]:
    """Bounds of consecutive slices of [`taps_from`, `taps_to`): every `_TAP_SLICE` from
    `start`'s local midnight."""
    bounds = [period.taps_from]
    at = _local_midnight(period.start, timezone) + _TAP_SLICE
    while at < period.taps_to:
        if at > bounds[-1]:
            bounds.append(at)
        at += _TAP_SLICE
    bounds.append(period.taps_to)
    return bounds


def _chain_day(
    held: pl.DataFrame,
    day: date,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
    options: CrowdingOptions,
) -> pl.DataFrame:
    """`compute_alightings` of the taps of service day `day` among the placed taps `held`
    (`stop_visits`: sorted by run, `sort_by_run`).

    In the chaining of all the taps at once, a card's taps of other service days within the
    day's time span sit between its taps of the day (in card and time order) and part its
    legs (a tap on another run ends a leg): those taps are chained with the day's, and their
    own rows dropped after.
    """
    on_day = pl.col("service_date") == day
    span = held.filter(on_day).select(
        pl.col("event_at").min().alias("lo"), pl.col("event_at").max().alias("hi")
    )
    lo, hi = span.row(0)
    context = (
        ~on_day
        & (pl.col("placement") == "placed")
        & pl.col("card_hash").is_not_null()
        & pl.col("event_at").is_between(lo, hi)
    )
    taps = held.filter(on_day | context)
    # the day's visits: a slice of `stop_visits` in run order (a filter would test them all)
    dates = stop_visits["service_date"]
    first = int(dates.search_sorted(day, side="left"))
    end = int(dates.search_sorted(day, side="right"))
    placements = compute_alightings(
        taps, stop_visits.slice(first, end - first), stops, options.alighting
    )
    n_day = int(taps.select(on_day.sum()).item())
    return placements if n_day == taps.height else placements.filter(on_day)


@dataclass(frozen=True)
class CrowdingRun:
    """What `run_crowding` wrote for its service days, for the command's report: the taps'
    counts rather than the taps (a month of them would be gigabytes)."""

    tap_counts: pl.DataFrame
    """taps by `placement`, `alighting_method` and `reason` (its text before any ':'), in
    `n`"""
    trip_crowding: pl.DataFrame
    crowding_summary: pl.DataFrame
    trace_placements: pl.DataFrame | None
    """taps whose vehicle ran no recognised trip, located on its GPS trace
    (`read_trace_placements`); None when every vehicle had runs"""
    written: dict[str, int]
    """rows written per table"""


def run_crowding(
    store: Store,
    profile: Profile,
    start: date,
    end: date,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> CrowdingRun:
    """Read, compute and write the crowding tables for service days `start`..`end`, replacing
    their rows in one transaction.

    A day at a time (`compute_crowding_by_day`): the same rows as `compute_crowding` of
    `read_crowding_inputs` over the whole range, in memory for about a day of taps plus the
    range's stop visits.
    """
    period = read_crowding_period(store, profile, start, end, options)
    fill: dict[str, object] = {"pontual_version": __version__, "profile_id": profile.id}
    written = dict.fromkeys(CROWDING_TABLES, 0)
    tallies: list[pl.DataFrame] = []
    traces: list[pl.DataFrame] = []
    kept: dict[str, list[pl.DataFrame]] = {"trip_crowding": [], "crowding_summary": []}
    pending: dict[str, list[pl.DataFrame]] = {name: [] for name in CROWDING_TABLES}
    # the store's inserts run on a thread of their own while the next days are computed:
    # DuckDB and Polars let go of the GIL as they work, so the two cores share the command.
    # The store's connection is that thread's alone; the taps and pings are read through a
    # second connection to the same database (tables the command does not write)
    storing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crowding-store")
    reader = store.reader()
    inserts: list[Future[int]] = []

    def insert(name: str, rows: pl.DataFrame) -> int:
        n = store.append(name, rows).n_inserted
        written[name] += n
        return n

    def flush(name: str, *, whole: bool = True) -> None:
        if not pending[name]:
            return
        # one chunk, handed over in whole row groups: the store gives DuckDB batches of a row
        # group each, cut along the frame's chunks, and each part-filled row group a batch
        # ends with is merged again at the commit (a month's `trip_loads` in 31 day chunks:
        # 8.1 CPU s to insert and commit, against 4.4 s in batches of whole row groups)
        rows = pl.concat(pending[name]).rechunk()  # (concat gives one frame back as it is)
        pending[name].clear()
        n = rows.height if whole else rows.height - rows.height % _ROW_GROUP_ROWS
        if n < rows.height:
            pending[name].append(rows.slice(n))  # the rest goes with the next rows
        if n == 0:
            return
        inserts.append(storing.submit(insert, name, rows.slice(0, n)))
        # at most `_INSERTS_AHEAD` batches wait (bounds the memory), and a failed insert
        # stops the command at once
        while len(inserts) > _INSERTS_AHEAD or (inserts and inserts[0].done()):
            inserts.pop(0).result()

    def write(name: str, day: date, frame: pl.DataFrame) -> None:
        # the days' rows go to the store in batches of at least `_WRITE_ROWS`, while the next
        # days are computed
        if name != "tap_placements":
            # the taps' days are all handed over (`DayWriter`): the rest of their rows goes
            # to the store while the load profiles are computed
            flush("tap_placements")
        pending[name].append(table(name).conform(frame, fill=fill))
        if sum(f.height for f in pending[name]) >= _WRITE_ROWS:
            flush(name, whole=False)
        if name == "tap_placements":
            tallies.append(count_placements(frame))
            trace = read_trace_placements(reader, frame, options)
            if trace is not None:
                traces.append(trace)
        elif name in kept:
            kept[name].append(frame)

    def read_taps(taps_from: datetime, taps_to: datetime) -> pl.DataFrame:
        return read_period_taps(reader, taps_from, taps_to)

    with store.transaction():
        try:
            for name in CROWDING_TABLES:
                store.replace(
                    name, table(name).empty(), "service_date BETWEEN ? AND ?", [start, end]
                )
            compute_crowding_by_day(period, read_taps, write, profile, options)
            for name in CROWDING_TABLES:
                flush(name)
            for done in inserts:
                done.result()
        finally:
            # the store is the main thread's again (its transaction ends) once every insert
            # is over, whether the command failed or not
            storing.shutdown(wait=True, cancel_futures=True)
            reader.close()
    tap_counts = (
        pl.concat(tallies)
        .group_by("placement", "alighting_method", "reason")
        .agg(pl.col("n").sum())
        .sort(
            "n",
            "placement",
            "alighting_method",
            "reason",
            descending=[True, False, False, False],
            nulls_last=True,
        )
        if tallies
        else count_placements(table("tap_placements").empty())
    )
    return CrowdingRun(
        tap_counts=tap_counts,
        trip_crowding=pl.concat(kept["trip_crowding"]),
        crowding_summary=pl.concat(kept["crowding_summary"]),
        trace_placements=pl.concat(traces) if traces else None,
        written=written,
    )


_ROW_GROUP_ROWS = INSERT_BATCH_ROWS
"""rows of a DuckDB row group (the store's insert batch): `run_crowding` hands the store
whole ones but for each table's last batch"""
_WRITE_ROWS = 4 * _ROW_GROUP_ROWS
"""rows of a crowding table written at a time by `run_crowding` (bounds its memory only)"""
_INSERTS_AHEAD = 2
"""batches of `_WRITE_ROWS` rows handed to the store's thread that may wait for it while the
next days are computed (bounds the memory only)"""


def count_placements(tap_placements: pl.DataFrame) -> pl.DataFrame:
    """Taps by `placement`, `alighting_method` and `reason` (its text before any ':', the
    reason without the note on scaling), in `n`."""
    # grouped by the whole reason first: its text is cut on the few groups, not on every tap
    return (
        tap_placements.group_by("placement", "alighting_method", "reason")
        .len("n")
        .group_by(
            "placement",
            "alighting_method",
            pl.col("reason").str.split(":").list.first(),
        )
        .agg(pl.col("n").sum().cast(pl.Int64))
    )


def read_trace_placements(
    store: Store, tap_placements: pl.DataFrame, options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS
) -> pl.DataFrame | None:
    """Locate on the GPS trace the taps whose vehicle ran no recognised trip (a city without a
    timetable, GPS never matched); None when there are none. Reads only those vehicles' pings
    around those taps."""
    lost = tap_placements.filter(pl.col("placement") == "vehicle_without_trips")
    if lost.height == 0:
        return None
    gap = timedelta(seconds=options.boarding.trace_max_gap_s)
    lo, hi = lost["event_at"].min(), lost["event_at"].max()
    pings = store.read(
        "vehicle_locations",
        "event_at BETWEEN ? AND ? AND list_contains(?, vehicle_id)",
        [lo - gap, hi + gap, lost["vehicle_id"].unique().sort().to_list()],  # type: ignore[operator]
    )
    return match_to_trace(lost, pings, options.boarding)
