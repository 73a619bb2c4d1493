"""What the live engine needs from the store, read once per service day.

The schedule of the day (scheduled_trips, stop times, shapes, stops) becomes the matcher's
`Network`; past `stop_visits` teach the travel times; the fleet register gives each vehicle's
capacity; incidents feed the alerts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import polars as pl

from analytics.live.occupancy import build_vehicle_capacity
from analytics.live.options import LiveOptions
from analytics.live.traveltimes import build_segment_times, build_trip_stop_times
from analytics.network import Network, build_network
from analytics.options import MatchOptions
from core.profile import Profile
from core.store import Store


@dataclass
class LiveReference:
    """The day's reference data (state shared read-only by the engine).

    `trips`: scheduled_trips of the day; `stop_times`: `build_trip_stop_times`; `capacity`:
    `build_vehicle_capacity`; `incidents`: incidents overlapping the day; `stops`: gtfs_stops
    (stop_id, stop_name, stop_lat, stop_lon); `n_segments_learned`: learned segment-hours.
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
    return LiveReference(
        service_date=service_date,
        timezone=timezone,
        crs_epsg=crs,
        trips=trips,
        network=network,
        stop_times=build_trip_stop_times(trips, network.trip_stops, segments, timezone),
        capacity=build_vehicle_capacity(vehicles, profile),
        incidents=incidents,
        stops=stops.select("stop_id", "stop_name", "stop_lat", "stop_lon"),
        n_segments_learned=segments.height,
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
        store.read("vehicles"),
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
