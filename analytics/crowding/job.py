"""Crowding: where and when the limit of standees per m² is broken, and what it takes to fix it.

`compute_crowding` chains the pure steps — boarding placement (`analytics.crowding.boardings`),
alighting inference (`analytics.crowding.alightings`), load profiles (`analytics.crowding.loads`) — and adds the
line × direction × hour summary. `run_crowding` reads a service-date range from the store and
replaces those days' rows of `tap_placements`, `trip_loads`, `trip_crowding` and
`crowding_summary`.

Extra trips follow the TCQSM maximum-load-point method: the hour's passengers through its
busiest segment, divided by a run's capacity at the limit (seats + limit × standing area), is
the number of runs that carry them within the limit (BG art. 59 §1 orders more trips or larger
vehicles whenever the limit is exceeded on more than the profile's share of trips).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
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
    compute_boardings,
    match_to_trace,
)
from analytics.crowding.loads import (
    DEFAULT_LOAD_OPTIONS,
    LoadOptions,
    compute_apc_counts,
    compute_loads,
    compute_trip_crowding,
)
from core import __version__
from core.profile import Profile
from core.register import read_register, to_register_latest
from core.schema import table
from core.store import Store

GROUP = ["service_date", "route_id", "direction_id", "hour_at"]
TAP_COLUMNS = ("transaction_id", "event_at", "vehicle_id", "card_hash")
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


def compute_crowding_summary(
    trip_crowding: pl.DataFrame, trip_loads: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """Line × direction × hour of departure: share of runs over the limit, the worst segment,
    and the extra trips or larger vehicle that bring the peak under the limit.

    `trip_crowding`, `trip_loads`: `compute_trip_crowding` and `compute_loads` outputs.
    Returns the `crowding_summary` columns. The worst segment has the highest mean standees
    per m² (then the highest mean load, then the first stop id) over the hour's runs that ride
    it; the peak segment, the highest sum of loads (the hour's maximum load point).
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
        # segment in stop id order, so that a re-run names the same segment
        segments.sort(
            pl.col("mean_standees").fill_null(-1.0),
            "mean_load",
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
    routes = trips.select("service_date", "trip_id", "route_id").unique(["service_date", "trip_id"])
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
    tz = profile.general.timezone.value
    first = start - timedelta(days=1)
    visits = store.read(
        "stop_visits", "service_date BETWEEN ? AND ?", [first, end], columns=VISIT_COLUMNS
    )
    trips = store.query(
        "SELECT service_date, trip_id, route_id, direction_id FROM scheduled_trips "
        "WHERE service_date BETWEEN ? AND ?",
        [first, end],
    )
    lo = _local_midnight(start, tz) - timedelta(seconds=options.boarding.terminal_boarding_s)
    hi = _local_midnight(end + timedelta(days=1), tz)
    last = visits.filter(pl.col("service_date") <= end).select(pl.col("arrival_at").max()).item()
    if last is not None and last > hi:
        hi = last
    # only the columns the crowding reads (a month of a big city's taps is gigabytes)
    taps = store.read(
        "fare_transactions", "event_at >= ? AND event_at < ?", [lo, hi], columns=TAP_COLUMNS
    )
    counts = store.read("passenger_counts", "event_at >= ? AND event_at < ?", [lo, hi])
    stops = store.query(
        "SELECT s.stop_id, s.stop_x_m, s.stop_y_m FROM gtfs_stops s "
        "JOIN feed_versions f USING (feed_id) "
        "WHERE s.stop_x_m IS NOT NULL ORDER BY f.loaded_at"
    ).unique("stop_id", keep="last", maintain_order=True)
    return CrowdingInputs(
        taps=taps,
        stop_visits=visits,
        trips=trips,
        vehicles=to_register_latest(read_register(store, start, end)),
        stops=stops,
        passenger_counts=counts,
    )


def write_crowding(
    store: Store, result: CrowdingResult, profile: Profile, start: date, end: date
) -> dict[str, int]:
    """Replace the rows of service days `start`..`end` in the four crowding tables, in one
    transaction; returns the rows written per table."""
    fill: dict[str, object] = {"pontual_version": __version__, "profile_id": profile.id}
    frames = {
        "tap_placements": result.tap_placements,
        "trip_loads": result.trip_loads,
        "trip_crowding": result.trip_crowding,
        "crowding_summary": result.crowding_summary,
    }
    written = {}
    in_range = pl.col("service_date").is_between(start, end)
    with store.transaction():
        for name, frame in frames.items():
            rows = table(name).conform(frame.filter(in_range), fill=fill)
            written[name] = store.replace(name, rows, "service_date BETWEEN ? AND ?", [start, end])
    return written


def run_crowding(
    store: Store,
    profile: Profile,
    start: date,
    end: date,
    options: CrowdingOptions = DEFAULT_CROWDING_OPTIONS,
) -> CrowdingResult:
    """Read, compute and write the crowding tables for service days `start`..`end`.

    Returns the result restricted to those days.
    """
    inputs = read_crowding_inputs(store, profile, start, end, options)
    result = compute_crowding(inputs, profile, options)
    write_crowding(store, result, profile, start, end)
    in_range = pl.col("service_date").is_between(start, end)
    taps = result.tap_placements.filter(in_range)
    return CrowdingResult(
        taps,
        result.trip_loads.filter(in_range),
        result.trip_crowding.filter(in_range),
        result.crowding_summary.filter(in_range),
        read_trace_placements(store, taps, options),
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
