"""The planned service: scheduled trips per service day and the frames of the gtfs_* tables.

Service-day instants follow the GTFS rule: times count from "noon minus 12 h" local time of
the service date (midnight except on daylight-saving change days), in the agency time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from core.tables.reference import (
    GTFS_AGENCY,
    GTFS_CALENDAR,
    GTFS_CALENDAR_DATES,
    GTFS_FREQUENCIES,
    GTFS_ROUTES,
    GTFS_SHAPES,
    GTFS_STOP_TIMES,
    GTFS_STOPS,
    GTFS_TRIPS,
    SCHEDULED_FREQUENCY_TRIPS,
    SCHEDULED_TIMETABLE_TRIPS,
    SCHEDULED_TRIPS,
)
from gtfs.calendar import compute_service_dates
from gtfs.frequencies import expand_frequency_days, frequency_templates
from gtfs.geometry import (
    build_patterns,
    build_shapes,
    build_stops_xy,
    choose_feed_crs,
    compute_stop_distances,
    compute_trip_distances,
)
from gtfs.read import Feed
from gtfs.spec import WEEKDAYS


@dataclass(frozen=True)
class FeedGeometry:
    """What the geometry of a feed resolves to (computed once, reused by every output).

    `stops` has stop_x_m/stop_y_m; `shapes` the shape points in metres (gtfs_shapes columns);
    `stop_times` has `shape_id` (the shape the trip's geometry uses) and `shape_dist_m`;
    `trips` has one row per trip: shape_id, planned_distance_m (metres), distance_source.
    """

    epsg: int
    stops: pl.DataFrame
    shapes: pl.DataFrame
    stop_times: pl.DataFrame
    trips: pl.DataFrame


def build_geometry(feed: Feed, epsg: int | None = None) -> FeedGeometry:
    """Project the feed to metres, place stops on shapes and measure each trip's planned km."""
    epsg = epsg or choose_feed_crs(feed)
    stops = build_stops_xy(feed["stops"], epsg)
    shapes_in = feed.get("shapes")
    usable = None
    if shapes_in is not None and shapes_in.height:
        counts = (
            shapes_in.filter(
                pl.col("shape_pt_lat").is_not_null() & pl.col("shape_pt_lon").is_not_null()
            )
            .group_by("shape_id")
            .len()
        )
        usable = counts.filter(pl.col("len") >= 2)["shape_id"]
    st = feed["stop_times"]
    patterns = build_patterns(st, feed["trips"], usable)
    shapes = build_shapes(feed, patterns, stops, epsg)
    st_m = compute_stop_distances(st, patterns, stops, shapes)
    distances = compute_trip_distances(st_m, shapes)
    trips = patterns.select("trip_id", "shape_id").join(distances, on="trip_id", how="left")
    return FeedGeometry(epsg, stops, shapes, st_m, trips)


def build_trip_summary(feed: Feed, geometry: FeedGeometry) -> pl.DataFrame:
    """One row per trips.txt trip with stop times: its planned times, terminals and distance.

    Columns: trip_id, route_id, service_id, direction_id, block_id, shape_id (the geometry's),
    first_s / last_s (origin departure / destination arrival, seconds after the service-day
    reference), first_stop_id, last_stop_id, n_stops, planned_distance_m (metres).
    """
    st = geometry.stop_times
    dep = pl.col("departure_time").fill_null(pl.col("arrival_time"))
    arr = pl.col("arrival_time").fill_null(pl.col("departure_time"))
    per_trip = (
        st.sort("trip_id", "stop_sequence")
        .group_by("trip_id", maintain_order=True)
        .agg(
            dep.first().alias("first_s"),
            arr.last().alias("last_s"),
            pl.col("stop_id").first().alias("first_stop_id"),
            pl.col("stop_id").last().alias("last_stop_id"),
            pl.len().cast(pl.Int32).alias("n_stops"),
        )
    )
    trips = feed["trips"]
    opt = [c for c in ("direction_id", "block_id") if c in trips.columns]
    base = trips.select("trip_id", "route_id", "service_id", *opt)
    return (
        base.join(per_trip, on="trip_id", how="inner")
        .join(
            geometry.trips.select("trip_id", "shape_id", "planned_distance_m"),
            on="trip_id",
            how="left",
        )
        .filter(pl.col("first_s").is_not_null() & pl.col("last_s").is_not_null())
    )


def feed_timezone(feed: Feed) -> str:
    """The agency time zone (validation guarantees one for a valid feed)."""
    return str(feed["agency"]["agency_timezone"].drop_nulls()[0])


def service_instant(service_date: pl.Expr, seconds: pl.Expr, timezone: str) -> pl.Expr:
    """UTC instant of `seconds` after the GTFS reference ("noon minus 12 h") of a local date."""
    noon = (service_date.cast(pl.Datetime("us")) + pl.duration(hours=12)).dt.replace_time_zone(
        timezone, ambiguous="earliest", non_existent="null"
    )
    return (
        noon.dt.convert_time_zone("UTC") - pl.duration(hours=12) + pl.duration(seconds=seconds)
    ).cast(pl.Datetime("us", "UTC"))


@dataclass(frozen=True)
class ScheduleDays:
    """The planned service of a date range as the store keeps it (ADR 0102).

    `timetable`: `scheduled_timetable_trips` rows, one per trip that is not a frequency
    template per service day; `frequency`: `scheduled_frequency_trips` rows, one per frequency
    template per service day (its instances are expanded on reading). Both are in service-date
    order, and within a date in (planned start, trip id) order.
    """

    timetable: pl.DataFrame
    frequency: pl.DataFrame


def build_schedule_days(
    feed: Feed, start: date, end: date, *, feed_id: str = "", geometry: FeedGeometry | None = None
) -> ScheduleDays:
    """The scheduled trips of every service day in [start, end], frequency templates kept whole.

    Trips listed in frequencies.txt (with at least one start) are templates: they run as their
    instances '<template>@HH:MM:SS', never themselves, and are kept as one row per day.
    """
    geometry = geometry or build_geometry(feed)
    summary = build_trip_summary(feed, geometry).with_columns(
        pl.col("planned_distance_m").fill_null(0.0)
    )
    is_template = pl.col("trip_id").is_in(frequency_templates(feed.get("frequencies")).implode())
    days = compute_service_dates(feed, start, end)
    # The time-zone arithmetic once per date (a frequency feed runs thousands of trips a day):
    # `day_ref_at` is the UTC instant of the date's GTFS reference, `service_instant` at 0 s.
    refs = (
        days.select("service_date")
        .unique()
        .with_columns(
            service_instant(pl.col("service_date"), pl.lit(0), feed_timezone(feed)).alias(
                "day_ref_at"
            )
        )
    )
    fill: dict[str, object] = {"feed_id": feed_id}
    # Sorted here, on one row per trip, the trips of a date come out in (planned_start_s,
    # trip_id) order from the order-keeping joins; one stable sort by date then orders them all.
    plain = (
        summary.filter(~is_template)
        .with_columns(
            pl.col("trip_id").alias("template_trip_id"),
            pl.col("first_s").alias("planned_start_s"),
            pl.col("last_s").alias("planned_end_s"),
            pl.lit(None, pl.Int32).alias("headway_s"),
            pl.lit(True).alias("is_exact_times"),
        )
        .sort("planned_start_s", "trip_id", maintain_order=True)
        .join(days, on="service_id", how="inner", maintain_order="left")
        .join(refs, on="service_date", how="left", maintain_order="left")
        .with_columns(
            (pl.col("day_ref_at") + pl.duration(seconds=pl.col("planned_start_s"))).alias(
                "planned_start_at"
            ),
            (pl.col("day_ref_at") + pl.duration(seconds=pl.col("planned_end_s"))).alias(
                "planned_end_at"
            ),
        )
    )
    templates = (
        summary.filter(is_template)
        .rename({"trip_id": "template_trip_id"})
        .with_columns((pl.col("last_s") - pl.col("first_s")).alias("duration_s"))
        .sort("template_trip_id")
        .join(days, on="service_id", how="inner", maintain_order="left")
        .join(refs, on="service_date", how="left", maintain_order="left")
    )
    # a trip runs at most once a date: (service_date, planned_start_s, trip_id) has no ties
    return ScheduleDays(
        SCHEDULED_TIMETABLE_TRIPS.conform(plain, fill=fill).sort(
            "service_date", maintain_order=True
        ),
        SCHEDULED_FREQUENCY_TRIPS.conform(templates, fill=fill).sort(
            "service_date", maintain_order=True
        ),
    )


def build_scheduled_trips(
    feed: Feed, start: date, end: date, *, feed_id: str = "", geometry: FeedGeometry | None = None
) -> pl.DataFrame:
    """One row per trip run on each service day in [start, end], conforming to scheduled_trips.

    Trips listed in frequencies.txt are templates: each headway window is expanded into trips
    '<template>@HH:MM:SS' shifted from the template's times; the template itself is not run.
    The rows and their order are the `scheduled_trips` view's over what `build_schedule_days`
    stores (service date, planned start, trip id).
    """
    days = build_schedule_days(feed, start, end, feed_id=feed_id, geometry=geometry)
    if days.frequency.height == 0:
        return SCHEDULED_TRIPS.conform(days.timetable)
    instances = expand_frequency_days(days.frequency, feed.get("frequencies"))
    both = pl.concat(
        [days.timetable, SCHEDULED_TRIPS.conform(instances)], how="vertical", rechunk=False
    )
    return both.sort("service_date", "planned_start_s", "trip_id")


def to_store_frames(
    feed: Feed, feed_id: str, geometry: FeedGeometry | None = None
) -> dict[str, pl.DataFrame]:
    """The feed as frames conforming to the gtfs_* tables, each with `feed_id`."""
    geometry = geometry or build_geometry(feed)
    fill: dict[str, object] = {"feed_id": feed_id}
    agency = feed["agency"]
    agency = agency.with_columns(
        (pl.col("agency_id") if "agency_id" in agency.columns else pl.lit(None, pl.String))
        .fill_null("")
        .alias("agency_id")
    )
    routes = feed["routes"]
    if "agency_id" not in routes.columns or routes["agency_id"].null_count():
        # a one-agency feed may leave routes.agency_id out: it is that agency's ('' id when none)
        only = agency["agency_id"][0] if agency.height == 1 else None
        routes = routes.with_columns(
            (pl.col("agency_id") if "agency_id" in routes.columns else pl.lit(None, pl.String))
            .fill_null(only)
            .alias("agency_id")
        )
    trips = (
        feed["trips"]
        .drop("shape_id", strict=False)
        .join(geometry.trips.select("trip_id", "shape_id"), on="trip_id", how="left")
    )
    st = geometry.stop_times.rename(
        {"arrival_time": "arrival_time_s", "departure_time": "departure_time_s"}, strict=False
    )
    frames = {
        "gtfs_agency": GTFS_AGENCY.conform(agency, fill=fill),
        "gtfs_routes": GTFS_ROUTES.conform(routes, fill=fill),
        "gtfs_stops": GTFS_STOPS.conform(geometry.stops, fill=fill),
        "gtfs_trips": GTFS_TRIPS.conform(trips, fill=fill),
        "gtfs_stop_times": GTFS_STOP_TIMES.conform(st, fill=fill),
        "gtfs_shapes": GTFS_SHAPES.conform(geometry.shapes, fill=fill),
    }
    cal = feed.get("calendar")
    if cal is not None:
        frames["gtfs_calendar"] = GTFS_CALENDAR.conform(
            cal.with_columns(pl.col(list(WEEKDAYS)) == 1), fill=fill
        )
    cd = feed.get("calendar_dates")
    if cd is not None:
        frames["gtfs_calendar_dates"] = GTFS_CALENDAR_DATES.conform(cd, fill=fill)
    freq = feed.get("frequencies")
    if freq is not None:
        frames["gtfs_frequencies"] = GTFS_FREQUENCIES.conform(
            freq.rename(
                {
                    "start_time": "start_time_s",
                    "end_time": "end_time_s",
                    "headway_secs": "headway_s",
                }
            ),
            fill=fill,
        )
    return frames


def from_store_frames(
    frames: dict[str, pl.DataFrame], epsg: int, trip_distances: pl.DataFrame | None = None
) -> tuple[Feed, FeedGeometry]:
    """Rebuild a Feed and its geometry from gtfs_* table frames (as `to_store_frames` wrote them).

    Used to materialise more service days from a stored feed. `trip_distances` (trip_id,
    planned_distance_m) keeps the distances decided at load; trips missing from it get the
    measured distance along their shape.
    """
    cal = frames.get("gtfs_calendar")
    tables: dict[str, pl.DataFrame] = {
        "agency": frames["gtfs_agency"],
        "routes": frames["gtfs_routes"],
        "stops": frames["gtfs_stops"],
        "trips": frames["gtfs_trips"],
        "stop_times": frames["gtfs_stop_times"].rename(
            {"arrival_time_s": "arrival_time", "departure_time_s": "departure_time"}
        ),
    }
    if cal is not None and cal.height:
        tables["calendar"] = cal.with_columns(pl.col(list(WEEKDAYS)).cast(pl.Int32))
    cd = frames.get("gtfs_calendar_dates")
    if cd is not None and cd.height:
        tables["calendar_dates"] = cd
    freq = frames.get("gtfs_frequencies")
    if freq is not None and freq.height:
        tables["frequencies"] = freq.rename(
            {"start_time_s": "start_time", "end_time_s": "end_time", "headway_s": "headway_secs"}
        )
    feed = Feed(source="<store>", tables=tables)
    st = tables["stop_times"]
    measured = (
        st.sort("trip_id", "stop_sequence")
        .group_by("trip_id")
        .agg(
            (pl.col("shape_dist_m").last() - pl.col("shape_dist_m").first())
            .fill_null(0.0)
            .alias("_m")
        )
    )
    trips = tables["trips"].select("trip_id", "shape_id").join(measured, on="trip_id", how="left")
    if trip_distances is not None and trip_distances.height:
        trips = trips.join(
            trip_distances.select("trip_id", "planned_distance_m"), on="trip_id", how="left"
        )
    else:
        trips = trips.with_columns(pl.lit(None, pl.Float64).alias("planned_distance_m"))
    trips = trips.with_columns(pl.col("planned_distance_m").fill_null(pl.col("_m"))).drop("_m")
    geometry = FeedGeometry(epsg, tables["stops"], frames["gtfs_shapes"], st, trips)
    return feed, geometry
