"""What the live engine needs from the store, read once per service day.

The schedule of the day (scheduled_trips, stop times, shapes, stops) becomes the matcher's
`Network`; past `stop_visits` teach the travel times; the fleet register gives each vehicle's
capacity; incidents feed the alerts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import polars as pl

from analytics.live.layovers import (
    build_layover_pairs,
    build_terminal_layovers,
    build_trip_layovers,
)
from analytics.live.occupancy import build_vehicle_capacity
from analytics.live.options import LiveOptions
from analytics.live.traveltimes import build_segment_times, build_trip_stop_times
from analytics.matching.network import Network, build_network
from analytics.matching.options import MatchOptions
from core.errors import InputError
from core.profile import Profile
from core.register import read_register
from core.store import Store


@dataclass
class LiveReference:
    """The day's reference data (state shared read-only by the engine).

    `trips`: scheduled_trips of the day; `stop_times`: `build_trip_stop_times`; `capacity`:
    `build_vehicle_capacity`; `incidents`: incidents overlapping the day; `stops`: gtfs_stops
    (stop_id, stop_name, stop_lat, stop_lon); `n_segments_learned`: learned segment-hours;
    `layovers`: `build_trip_layovers` (what each trip starts with after its vehicle's previous
    trip); `n_terminals_learned`: terminals whose layover or departure offset history taught
    (0 on a first day: the defaults of the options apply).
    """

    service_date: date
    timezone: str
    crs_epsg: int
    trips: pl.DataFrame
    network: Network
    stop_times: pl.DataFrame
    capacity: pl.DataFrame
    incidents: pl.DataFrame
    stops: pl.DataFrame
    n_segments_learned: int
    layovers: pl.DataFrame
    n_terminals_learned: int


OVERNIGHT_SEPARATOR = "~"


def build_overnight_trips(
    previous: pl.DataFrame, service_date: date, timezone: str
) -> pl.DataFrame:
    """The previous service day's trips still running when `service_date` begins.

    `previous`: scheduled_trips of the day before. A trip is kept when its planned_end_at is
    after local midnight of `service_date` (GTFS times past 24:00). Its trip_id becomes
    `<trip_id>~<YYYYMMDD of its service day>`, so it cannot collide with the same GTFS trip
    of the new day; template_trip_id and service_date still tell the feed's descriptor.
    """
    midnight = (
        pl.lit(service_date)
        .cast(pl.Datetime("us"))
        .dt.replace_time_zone(timezone)
        .dt.convert_time_zone("UTC")
    )
    return previous.filter(pl.col("planned_end_at") > midnight).with_columns(
        pl.concat_str(
            "trip_id",
            pl.lit(OVERNIGHT_SEPARATOR),
            pl.col("service_date").dt.strftime("%Y%m%d"),
        ).alias("trip_id")
    )


def build_live_reference(
    service_date: date,
    trips: pl.DataFrame,
    stop_times: pl.DataFrame,
    shapes: pl.DataFrame,
    stops: pl.DataFrame,
    feed: tuple[str, int],
    history: pl.DataFrame,
    vehicles: pl.DataFrame,
    incidents: pl.DataFrame,
    profile: Profile,
    options: LiveOptions,
    match_options: MatchOptions,
) -> LiveReference:
    """Assemble the reference from frames (`feed` = (time zone, CRS EPSG); `history`: rows of
    stop_visits; `vehicles`: the register)."""
    timezone, crs = feed
    network = build_network(shapes, trips, stop_times, stops, match_options)
    segments = build_segment_times(history, timezone, options.min_samples)
    trip_stop_times = build_trip_stop_times(trips, network.trip_stops, segments, timezone)
    terminals = build_terminal_layovers(
        build_layover_pairs(history, options.layover_max_gap_s),
        options.min_layover_s,
        options.min_samples,
    )
    learned = terminals.filter(
        (pl.col("stop_id") != "*")
        & (
            pl.col("learned_layover_s").is_not_null()
            | pl.col("learned_departure_offset_s").is_not_null()
        )
    )
    return LiveReference(
        service_date=service_date,
        timezone=timezone,
        crs_epsg=crs,
        trips=trips,
        network=network,
        stop_times=trip_stop_times,
        capacity=build_vehicle_capacity(vehicles, profile),
        incidents=incidents,
        stops=stops.select("stop_id", "stop_name", "stop_lat", "stop_lon"),
        n_segments_learned=segments.height,
        layovers=build_trip_layovers(trip_stop_times, terminals, options.min_layover_s),
        n_terminals_learned=learned.height,
    )


def read_live_reference(
    store: Store,
    service_date: date,
    profile: Profile,
    options: LiveOptions,
    match_options: MatchOptions,
) -> LiveReference:
    """Read the reference of `service_date` from the store (or a published snapshot)."""
    from ingest.gtfs_feed import read_schedule_from_store  # schedule reading lives in ingest

    trips, stop_times, shapes = read_schedule_from_store(store, service_date)
    feed_id = str(trips["feed_id"][0]) if trips.height else ""
    stops = store.read("gtfs_stops", "feed_id = ?", [feed_id])
    feed = store.query("SELECT timezone, crs_epsg FROM feed_versions WHERE feed_id = ?", [feed_id])
    # trips of the previous service day that run past midnight are still on the road
    try:
        before = read_schedule_from_store(store, service_date - timedelta(days=1))
    except InputError:  # no feed in force the day before: nothing runs over
        before = (trips.clear(), stop_times.clear(), shapes.clear())
    overnight = build_overnight_trips(before[0], service_date, str(feed["timezone"][0]))
    if overnight.height:
        used = overnight.select("template_trip_id", "shape_id")
        trips = pl.concat([overnight, trips], how="vertical_relaxed")
        stop_times = pl.concat(
            [
                stop_times,
                before[1].join(used, left_on="trip_id", right_on="template_trip_id", how="semi"),
            ]
        ).unique(["trip_id", "stop_sequence"], maintain_order=True)
        shapes = pl.concat([shapes, before[2].join(used, on="shape_id", how="semi")]).unique(
            ["shape_id", "shape_pt_sequence"], maintain_order=True
        )
    since = service_date - timedelta(days=options.history_days)
    history = store.read(
        "stop_visits", "service_date >= ? AND service_date < ?", [since, service_date]
    )
    lo = service_date - timedelta(days=1)
    hi = service_date + timedelta(days=2)
    incidents = store.read("incidents", "ends_at >= ? AND starts_at <= ?", [lo, hi])
    return build_live_reference(
        service_date,
        trips,
        stop_times,
        shapes,
        stops,
        (str(feed["timezone"][0]), int(feed["crs_epsg"][0])),
        history,
        read_register(store, service_date),
        incidents,
        profile,
        options,
        match_options,
    )


def refresh_incidents(store: Store, reference: LiveReference) -> None:
    """Re-read the incidents of the day (approved during the day: new alerts)."""
    d = reference.service_date
    reference.incidents = store.read(
        "incidents",
        "ends_at >= ? AND starts_at <= ?",
        [d - timedelta(days=1), d + timedelta(days=2)],
    )
