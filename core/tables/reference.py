"""Reference tables: the loaded GTFS feed versions, the planned service, the fleet register.

GTFS clock times are stored as seconds after the service day's reference ("noon minus 12 h",
i.e. midnight except on daylight-saving days) and may exceed 86 400 for trips past midnight.
Every `gtfs_*` row carries the `feed_id` of the feed version it came from.
"""

import polars as pl

from core.schema import UTC_INSTANT, Table, cols, register

FEED_ID = ("feed_id", pl.String(), "feed version the row belongs to", False)

FEED_VERSIONS = Table(
    "feed_versions",
    "One row per loaded GTFS feed version.",
    cols(
        FEED_ID,
        ("source", pl.String(), "path of the zip or folder it was loaded from", False),
        ("source_sha256", pl.String(), "hash of the feed's files, the idempotency key", False),
        ("loaded_at", UTC_INSTANT, "when it was loaded (UTC)", False),
        ("timezone", pl.String(), "agency time zone (IANA), decides service-day instants", False),
        ("crs_epsg", pl.Int32(), "projected CRS (metres) used for its geometry", False),
        ("valid_from", pl.Date(), "first service date of the feed", False),
        ("valid_to", pl.Date(), "last service date of the feed", False),
        ("n_warnings", pl.Int32(), "validation warnings at load"),
        ("pontual_version", pl.String(), "Pontual version that loaded it", False),
    ),
    primary_key=("feed_id",),
)

GTFS_AGENCY = Table(
    "gtfs_agency",
    "agency.txt",
    cols(
        FEED_ID,
        ("agency_id", pl.String(), "agency id ('' when the feed has one agency and no id)", False),
        ("agency_name", pl.String(), "name", False),
        ("agency_url", pl.String(), "URL"),
        ("agency_timezone", pl.String(), "IANA time zone", False),
        ("agency_lang", pl.String(), "language"),
        ("agency_phone", pl.String(), "phone"),
    ),
    primary_key=("feed_id", "agency_id"),
)

GTFS_ROUTES = Table(
    "gtfs_routes",
    "routes.txt (a route is a 'linha').",
    cols(
        FEED_ID,
        ("route_id", pl.String(), "route id", False),
        ("agency_id", pl.String(), "operating agency"),
        ("route_short_name", pl.String(), "public line number"),
        ("route_long_name", pl.String(), "line name"),
        ("route_type", pl.Int32(), "GTFS route type (3 = bus)", False),
        ("route_color", pl.String(), "hex colour"),
        ("route_text_color", pl.String(), "hex colour"),
    ),
    primary_key=("feed_id", "route_id"),
)

GTFS_STOPS = Table(
    "gtfs_stops",
    "stops.txt, with the stop projected to the feed's metric CRS.",
    cols(
        FEED_ID,
        ("stop_id", pl.String(), "stop id", False),
        ("stop_code", pl.String(), "public code"),
        ("stop_name", pl.String(), "name"),
        ("stop_lat", pl.Float64(), "WGS 84 latitude, degrees"),
        ("stop_lon", pl.Float64(), "WGS 84 longitude, degrees"),
        ("stop_x_m", pl.Float64(), "easting in the feed's CRS, metres"),
        ("stop_y_m", pl.Float64(), "northing in the feed's CRS, metres"),
        ("location_type", pl.Int32(), "0 stop, 1 station, 2 entrance, ..."),
        ("parent_station", pl.String(), "parent station id"),
    ),
    primary_key=("feed_id", "stop_id"),
)

GTFS_TRIPS = Table(
    "gtfs_trips",
    "trips.txt.",
    cols(
        FEED_ID,
        ("trip_id", pl.String(), "trip id", False),
        ("route_id", pl.String(), "route", False),
        ("service_id", pl.String(), "service calendar", False),
        ("trip_headsign", pl.String(), "headsign"),
        ("direction_id", pl.Int32(), "0 or 1 (ida / volta)"),
        ("block_id", pl.String(), "vehicle block ('tabela')"),
        ("shape_id", pl.String(), "itinerary shape"),
    ),
    primary_key=("feed_id", "trip_id"),
)

GTFS_STOP_TIMES = Table(
    "gtfs_stop_times",
    "stop_times.txt with times in seconds and each stop's distance along the trip's shape.",
    cols(
        FEED_ID,
        ("trip_id", pl.String(), "trip", False),
        ("stop_sequence", pl.Int32(), "order of the stop in the trip", False),
        ("stop_id", pl.String(), "stop", False),
        (
            "arrival_time_s",
            pl.Int32(),
            "planned arrival, seconds after the service-day reference (null: interpolate)",
        ),
        (
            "departure_time_s",
            pl.Int32(),
            "planned departure, seconds after the service-day reference",
        ),
        ("timepoint", pl.Int32(), "1 exact, 0 approximate"),
        ("shape_dist_m", pl.Float64(), "distance of the stop along the trip's shape, metres"),
    ),
    primary_key=("feed_id", "trip_id", "stop_sequence"),
)

GTFS_CALENDAR = Table(
    "gtfs_calendar",
    "calendar.txt.",
    cols(
        FEED_ID,
        ("service_id", pl.String(), "service id", False),
        ("monday", pl.Boolean(), "runs on Mondays", False),
        ("tuesday", pl.Boolean(), "runs on Tuesdays", False),
        ("wednesday", pl.Boolean(), "runs on Wednesdays", False),
        ("thursday", pl.Boolean(), "runs on Thursdays", False),
        ("friday", pl.Boolean(), "runs on Fridays", False),
        ("saturday", pl.Boolean(), "runs on Saturdays", False),
        ("sunday", pl.Boolean(), "runs on Sundays", False),
        ("start_date", pl.Date(), "first date", False),
        ("end_date", pl.Date(), "last date", False),
    ),
    primary_key=("feed_id", "service_id"),
)

GTFS_CALENDAR_DATES = Table(
    "gtfs_calendar_dates",
    "calendar_dates.txt.",
    cols(
        FEED_ID,
        ("service_id", pl.String(), "service id", False),
        ("date", pl.Date(), "service date", False),
        ("exception_type", pl.Int32(), "1 added, 2 removed", False),
    ),
    primary_key=("feed_id", "service_id", "date"),
)

GTFS_SHAPES = Table(
    "gtfs_shapes",
    "shapes.txt points with their distance along the shape in metres.",
    cols(
        FEED_ID,
        ("shape_id", pl.String(), "shape id", False),
        ("shape_pt_sequence", pl.Int32(), "order of the point", False),
        ("shape_pt_lat", pl.Float64(), "WGS 84 latitude, degrees", False),
        ("shape_pt_lon", pl.Float64(), "WGS 84 longitude, degrees", False),
        ("shape_x_m", pl.Float64(), "easting in the feed's CRS, metres", False),
        ("shape_y_m", pl.Float64(), "northing in the feed's CRS, metres", False),
        ("shape_dist_m", pl.Float64(), "distance along the shape, metres (measured)", False),
        (
            "is_from_stops",
            pl.Boolean(),
            "true when shapes.txt lacked it and it was built from the stop sequence",
            False,
        ),
    ),
    primary_key=("feed_id", "shape_id", "shape_pt_sequence"),
)

GTFS_FREQUENCIES = Table(
    "gtfs_frequencies",
    "frequencies.txt (headway-based service).",
    cols(
        FEED_ID,
        ("trip_id", pl.String(), "template trip", False),
        (
            "start_time_s",
            pl.Int32(),
            "window start, seconds after the service-day reference",
            False,
        ),
        ("end_time_s", pl.Int32(), "window end, seconds after the service-day reference", False),
        ("headway_s", pl.Int32(), "headway, seconds", False),
        ("exact_times", pl.Int32(), "1 schedule-based, 0 frequency-based"),
    ),
    primary_key=("feed_id", "trip_id", "start_time_s"),
)

SCHEDULED_TRIPS = Table(
    "scheduled_trips",
    "One row per trip per service day (frequency windows expanded into trips). A VIEW (ADR "
    "0102): the rows of `scheduled_timetable_trips`, and each `scheduled_frequency_trips` row "
    "expanded over its template's `gtfs_frequencies` windows (in no particular order). Read "
    "it; write its two tables.",
    cols(
        FEED_ID,
        ("service_date", pl.Date(), "service day (local)", False),
        (
            "trip_id",
            pl.String(),
            "scheduled trip id; for frequency trips '<template>@<HH:MM:SS>'",
            False,
        ),
        ("template_trip_id", pl.String(), "trips.txt trip whose stop pattern it follows", False),
        ("route_id", pl.String(), "line", False),
        ("direction_id", pl.Int32(), "0 or 1"),
        ("block_id", pl.String(), "vehicle block"),
        ("shape_id", pl.String(), "itinerary"),
        ("service_id", pl.String(), "service calendar", False),
        (
            "planned_start_s",
            pl.Int32(),
            "origin departure, seconds after the service-day reference",
            False,
        ),
        (
            "planned_end_s",
            pl.Int32(),
            "destination arrival, seconds after the service-day reference",
            False,
        ),
        ("planned_start_at", UTC_INSTANT, "origin departure (UTC)", False),
        ("planned_end_at", UTC_INSTANT, "destination arrival (UTC)", False),
        ("planned_distance_m", pl.Float64(), "programmed distance of the trip, metres", False),
        ("first_stop_id", pl.String(), "origin terminal", False),
        ("last_stop_id", pl.String(), "destination terminal", False),
        ("n_stops", pl.Int32(), "number of stop times", False),
        ("headway_s", pl.Int32(), "planned headway for frequency-based trips, seconds"),
        (
            "is_exact_times",
            pl.Boolean(),
            "false for frequency-based trips whose start is nominal",
            False,
        ),
    ),
    primary_key=("service_date", "trip_id"),
)

SCHEDULED_TIMETABLE_TRIPS = Table(
    "scheduled_timetable_trips",
    "The timetable part of `scheduled_trips`: one row per trips.txt trip that is not a "
    "frequency template, per service day (the same columns as `scheduled_trips`).",
    SCHEDULED_TRIPS.columns,
    primary_key=SCHEDULED_TRIPS.primary_key,
)

SCHEDULED_FREQUENCY_TRIPS = Table(
    "scheduled_frequency_trips",
    "The frequency part of `scheduled_trips`, compact (ADR 0102): one row per frequency "
    "template trip (a trips.txt trip listed in frequencies.txt) per service day it runs. Its "
    "instances, one per start of each headway window, are expanded by the `scheduled_trips` "
    "view; they share the template's pattern, shape and planned distance.",
    cols(
        FEED_ID,
        ("service_date", pl.Date(), "service day (local)", False),
        ("template_trip_id", pl.String(), "trips.txt trip listed in frequencies.txt", False),
        ("route_id", pl.String(), "line", False),
        ("direction_id", pl.Int32(), "0 or 1"),
        ("block_id", pl.String(), "vehicle block"),
        ("shape_id", pl.String(), "itinerary"),
        ("service_id", pl.String(), "service calendar", False),
        (
            "duration_s",
            pl.Int32(),
            "the template's origin departure to destination arrival, seconds (every "
            "instance's planned_end_s - planned_start_s)",
            False,
        ),
        (
            "day_ref_at",
            UTC_INSTANT,
            "the service day's reference ('noon minus 12 h' local) as a UTC instant: an "
            "instance starting at planned_start_s starts at day_ref_at + planned_start_s",
            False,
        ),
        ("planned_distance_m", pl.Float64(), "programmed distance of each instance, metres", False),
        ("first_stop_id", pl.String(), "origin terminal", False),
        ("last_stop_id", pl.String(), "destination terminal", False),
        ("n_stops", pl.Int32(), "number of stop times", False),
    ),
    primary_key=("service_date", "template_trip_id"),
)

VEHICLES = Table(
    "vehicles",
    "The fleet register ('cadastro da frota') with its history: one row per version of a "
    "vehicle, in force from valid_from (inclusive; null: since the vehicle was first "
    "registered) to valid_to (exclusive; null: still in force). Read it only through "
    "`core.register` (the version in force on a day or over a period).",
    cols(
        ("vehicle_id", pl.String(), "fleet number used by AVL and ticketing", False),
        ("plate", pl.String(), "licence plate"),
        ("operator_id", pl.String(), "operating company ('concessionária')", False),
        ("lot_id", pl.String(), "concession lot"),
        ("service_area", pl.String(), "'urban' or 'district' (BG art. 5)", False),
        ("service_class", pl.String(), "'conventional' or 'selective' (BG art. 6)", False),
        ("vehicle_type", pl.String(), "'micro', 'convencional', 'padron' or 'articulado'", False),
        ("manufacture_year", pl.Int32(), "year of manufacture of the chassis", False),
        ("n_seats", pl.Int32(), "seats"),
        ("standing_area_m2", pl.Float64(), "area for standing passengers, m²"),
        ("in_service_since", pl.Date(), "date it entered the concession"),
        ("last_inspection_on", pl.Date(), "date of the last inspection ('vistoria')"),
        ("is_reserve", pl.Boolean(), "registered as reserve fleet"),
        ("source", pl.String(), "file it came from", False),
        ("ingested_at", UTC_INSTANT, "when it was ingested (UTC)", False),
        ("retired_on", pl.Date(), "day it left the fleet (null: in the fleet)"),
        ("valid_from", pl.Date(), "first day this version is in force (null: since registered)"),
        ("valid_to", pl.Date(), "day a newer version replaced it (null: in force now)"),
    ),
)

VEHICLE_INSPECTIONS = Table(
    "vehicle_inspections",
    "Inspection history of the fleet ('vistorias'): one row per vehicle and inspection day. "
    "The register's last_inspection_on on a day is the latest of these on or before it.",
    cols(
        ("vehicle_id", pl.String(), "fleet number", False),
        ("inspected_on", pl.Date(), "day of the inspection", False),
        ("source", pl.String(), "file it came from", False),
        ("ingested_at", UTC_INSTANT, "when it was ingested (UTC)", False),
    ),
    primary_key=("vehicle_id", "inspected_on"),
)

# The tables holding a feed's own files, in the order they load.
GTFS_TABLES = (
    GTFS_AGENCY,
    GTFS_ROUTES,
    GTFS_STOPS,
    GTFS_TRIPS,
    GTFS_STOP_TIMES,
    GTFS_CALENDAR,
    GTFS_CALENDAR_DATES,
    GTFS_SHAPES,
    GTFS_FREQUENCIES,
)
GTFS_TABLE_NAMES = tuple(t.name for t in GTFS_TABLES)

register(
    FEED_VERSIONS,
    *GTFS_TABLES,
    SCHEDULED_TRIPS,
    SCHEDULED_TIMETABLE_TRIPS,
    SCHEDULED_FREQUENCY_TRIPS,
    VEHICLES,
    VEHICLE_INSPECTIONS,
)
