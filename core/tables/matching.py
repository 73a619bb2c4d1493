"""Derived tables of the matching jobs (declared with `Table(derived=True)`).

`pontual match` writes them one service day at a time, replacing that day's rows, so a re-run
is idempotent. Every row is traceable: trip_outcomes -> trips_performed (vehicle, run_index)
-> the ping ids of `vehicle_locations` (first/last ping id, time window, n_pings).
"""

import polars as pl

from core.migrations import Migration
from core.schema import UTC_INSTANT, Table, cols, register

SERVICE_DATE = ("service_date", pl.Date(), "service day (local)", False)
VEHICLE_ID = ("vehicle_id", pl.String(), "fleet number", False)
RUN_INDEX = ("run_index", pl.Int32(), "order of the run among the vehicle's runs of the day", False)

TRIPS_PERFORMED = Table(
    "trips_performed",
    "What each vehicle actually ran: one row per run of monotone progress along one shape "
    "(TIDES trips_performed). A run matched to no scheduled trip is extra service or a "
    "duplicate (two vehicles on one trip: only one counts).",
    cols(
        SERVICE_DATE,
        VEHICLE_ID,
        RUN_INDEX,
        ("trip_id", pl.String(), "scheduled trip the run was matched to (null: none)"),
        ("route_id", pl.String(), "line of the shape run", False),
        ("direction_id", pl.Int32(), "direction of the shape run"),
        ("shape_id", pl.String(), "itinerary run", False),
        ("match_method", pl.String(), "'reported' (device trip id agreed) or 'inferred'", False),
        (
            "started_at",
            UTC_INSTANT,
            "actual departure from the origin, or first ping when it started mid-way (UTC)",
            False,
        ),
        (
            "ended_at",
            UTC_INSTANT,
            "actual arrival at the destination, or last ping on the shape (UTC)",
            False,
        ),
        (
            "departure_delay_s",
            pl.Int32(),
            "started_at minus the matched trip's planned start, seconds (+ late)",
        ),
        (
            "start_dist_m",
            pl.Float64(),
            "distance along the shape where the run starts, metres",
            False,
        ),
        ("end_dist_m", pl.Float64(), "distance along the shape where the run ends, metres", False),
        ("distance_run_m", pl.Float64(), "distance run along the itinerary, metres", False),
        ("shape_length_m", pl.Float64(), "length of the shape, metres", False),
        ("coverage_ratio", pl.Float64(), "share of the itinerary covered (0-1)", False),
        ("is_departed", pl.Boolean(), "the run left the origin terminal", False),
        ("is_arrived", pl.Boolean(), "the run reached the destination terminal", False),
        ("n_off_route", pl.Int32(), "stretches off the shape (detours) inside the run", False),
        ("off_route_s", pl.Int32(), "time spent off the shape inside the run, seconds", False),
        ("n_pings", pl.Int32(), "pings inside the run", False),
        (
            "gps_completeness_ratio",
            pl.Float64(),
            "share of the run's minutes with at least one ping (0-1)",
            False,
        ),
        ("first_ping_id", pl.Int64(), "first ping of the run (evidence)", False),
        ("last_ping_id", pl.Int64(), "last ping of the run (evidence)", False),
        (
            "is_counted",
            pl.Boolean(),
            "false for a run that duplicates a trip already served",
            False,
        ),
    ),
    primary_key=("service_date", "vehicle_id", "run_index"),
    derived=True,
)

STOP_VISITS = Table(
    "stop_visits",
    "Arrival and departure at every stop of every matched run, observed or interpolated "
    "(TIDES stop_visits).",
    cols(
        SERVICE_DATE,
        VEHICLE_ID,
        RUN_INDEX,
        ("trip_id", pl.String(), "scheduled trip", False),
        ("stop_sequence", pl.Int32(), "order of the stop in the trip", False),
        ("stop_id", pl.String(), "stop", False),
        ("stop_dist_m", pl.Float64(), "distance of the stop along the shape, metres", False),
        ("planned_arrival_at", UTC_INSTANT, "timetable arrival (UTC)"),
        ("planned_departure_at", UTC_INSTANT, "timetable departure (UTC)"),
        ("arrival_at", UTC_INSTANT, "estimated arrival (UTC); null when the run did not reach it"),
        (
            "departure_at",
            UTC_INSTANT,
            "estimated departure (UTC); null when the run did not reach it",
        ),
        ("arrival_delay_s", pl.Int32(), "arrival_at minus planned arrival, seconds (+ late)"),
        ("departure_delay_s", pl.Int32(), "departure_at minus planned departure, seconds (+ late)"),
        (
            "nearest_ping_m",
            pl.Float64(),
            "along-shape distance from the stop to the nearest ping, metres",
        ),
        (
            "is_interpolated",
            pl.Boolean(),
            "true when no ping lies within the stop radius (time interpolated between pings)",
            False,
        ),
    ),
    primary_key=("service_date", "vehicle_id", "run_index", "stop_sequence"),
    derived=True,
)

OUTCOMES = (
    "on_time",
    "late",
    "early",
    "partial",
    "suppressed",
    "broken_down",
    "not_evaluated",
)
RUN_OUTCOMES = ("on_time", "late", "early")
"""The outcomes of a trip that was run (its punctuality judged): the ICV's numerator and what
makes a vehicle count as covering its block."""

EVIDENCE_CLASSES = ("gps", "gps_gap_credited", "ticketing", "inspection", "none")
"""Vocabulary of `trip_outcomes.evidence_class`: what the outcome rests on. The profile's
`evidence.counted_as_run` says which classes count a trip as run; `none` never does."""

TRIP_OUTCOMES = Table(
    "trip_outcomes",
    "Exactly one row per scheduled trip of the day: " + ", ".join(OUTCOMES) + ".",
    cols(
        SERVICE_DATE,
        ("trip_id", pl.String(), "scheduled trip", False),
        ("route_id", pl.String(), "line", False),
        ("direction_id", pl.Int32(), "direction"),
        ("block_id", pl.String(), "vehicle block"),
        ("planned_start_at", UTC_INSTANT, "planned origin departure (UTC)", False),
        ("planned_distance_m", pl.Float64(), "programmed distance, metres", False),
        (
            "outcome",
            pl.String(),
            "on_time, late, early, partial, suppressed, broken_down or not_evaluated (no data: "
            "the operator's feed or the whole vehicle dark; left out of every index)",
            False,
        ),
        (
            "evidence_class",
            pl.String(),
            "what the outcome rests on: " + ", ".join(EVIDENCE_CLASSES) + " (null: matched "
            "before evidence classes existed)",
        ),
        (
            "gps_minutes_share",
            pl.Float64(),
            "share of the trip's planned minutes with a fix of the vehicle that ran it (0-1; 0 "
            "when no GPS run was matched)",
        ),
        (
            "feed_up_share",
            pl.Float64(),
            "share of the trip's planned minutes while its operator's AVL feed was up (0-1)",
        ),
        (
            "departure_delay_s",
            pl.Int32(),
            "actual minus planned origin departure, seconds (+ late)",
        ),
        ("actual_start_at", UTC_INSTANT, "actual origin departure (UTC)"),
        ("actual_end_at", UTC_INSTANT, "actual destination arrival (UTC)"),
        ("vehicle_id", pl.String(), "vehicle that ran it (trips_performed key with run_index)"),
        ("run_index", pl.Int32(), "run of that vehicle (trips_performed key)"),
        ("distance_run_m", pl.Float64(), "distance run along the itinerary, metres"),
        ("coverage_ratio", pl.Float64(), "share of the itinerary covered (0-1)"),
        (
            "gps_gap_s",
            pl.Int32(),
            "seconds of GPS silence inside the run (or at its ends) credited with the distance "
            "across it: fixes on the itinerary on both sides, forward, at a plausible speed "
            "(profile evidence.gap_credit_*); 0: none; null: no GPS run",
        ),
        (
            "gps_gap_m",
            pl.Float64(),
            "metres of distance_run_m credited across those silences (seen by no fix)",
        ),
        ("first_ping_id", pl.Int64(), "first ping of the run (evidence)"),
        ("last_ping_id", pl.Int64(), "last ping of the run (evidence)"),
        ("n_pings", pl.Int32(), "pings of the run"),
        ("is_justified", pl.Boolean(), "an approved incident covers it (BG art. 57 §1)", False),
        ("incident_id", pl.String(), "the approved incident that justifies it"),
        ("reason", pl.String(), "why this outcome, in words a planner reads (pt-BR)", False),
    ),
    primary_key=("service_date", "trip_id"),
    derived=True,
)

BREAKDOWNS = Table(
    "breakdowns",
    "Vehicle breakdowns: from an AVL event code, a breakdown incident, or inferred (standing "
    "still away from stops and terminals longer than the profile threshold, trip unfinished).",
    cols(
        SERVICE_DATE,
        VEHICLE_ID,
        (
            "started_at",
            UTC_INSTANT,
            "when the vehicle stopped (or the event was sent) (UTC)",
            False,
        ),
        ("ended_at", UTC_INSTANT, "last ping of the stop, or the incident end (UTC)"),
        ("duration_s", pl.Int32(), "ended_at minus started_at, seconds"),
        ("source", pl.String(), "'event_code', 'incident' or 'inferred'", False),
        ("trip_id", pl.String(), "scheduled trip it interrupted"),
        ("run_index", pl.Int32(), "run of the vehicle it interrupted"),
        ("incident_id", pl.String(), "breakdown incident, when one reports it"),
        ("lat", pl.Float64(), "where, WGS 84 latitude"),
        ("lon", pl.Float64(), "where, WGS 84 longitude"),
        ("first_ping_id", pl.Int64(), "first ping of the evidence"),
        ("last_ping_id", pl.Int64(), "last ping of the evidence"),
        ("evidence", pl.String(), "what shows it, in words (pt-BR)", False),
    ),
    primary_key=("service_date", "vehicle_id", "started_at"),
    derived=True,
)

HEADWAY_OBSERVATIONS = Table(
    "headway_observations",
    "Frequent lines: headways at the origin and excess waiting time (TfL EWT) per line, "
    "direction and hour. SWT = ΣH²/(2ΣH) on planned headways, AWT the same on observed ones.",
    cols(
        SERVICE_DATE,
        ("route_id", pl.String(), "line", False),
        ("direction_id", pl.Int32(), "direction (-1 when the feed has none)", False),
        ("hour_at", UTC_INSTANT, "start of the hour (UTC)", False),
        ("n_planned", pl.Int32(), "planned departures in the hour", False),
        ("n_observed", pl.Int32(), "observed departures in the hour", False),
        ("planned_headway_mean_s", pl.Float64(), "mean planned headway, seconds"),
        ("observed_headway_mean_s", pl.Float64(), "mean observed headway, seconds"),
        ("observed_headway_max_s", pl.Float64(), "longest observed headway, seconds"),
        ("scheduled_wait_s", pl.Float64(), "SWT, seconds"),
        ("actual_wait_s", pl.Float64(), "AWT, seconds"),
        ("excess_wait_s", pl.Float64(), "EWT = AWT - SWT, seconds"),
    ),
    primary_key=("service_date", "route_id", "direction_id", "hour_at"),
    derived=True,
)

AVL_COVERAGE = Table(
    "avl_coverage",
    "Data coverage per service day, operator and vehicle: whether AVL data was received. One "
    "row per vehicle that sent a fix or is in the register (a registered vehicle without a fix "
    "is a dark vehicle: its trips cannot be judged from GPS).",
    cols(
        SERVICE_DATE,
        ("operator_id", pl.String(), "operator (register, else the pings; '?' unknown)", False),
        VEHICLE_ID,
        ("is_reporting", pl.Boolean(), "the vehicle sent at least one fix that day", False),
        ("is_reserve", pl.Boolean(), "registered as reserve fleet (null: not registered)"),
        ("n_pings", pl.Int64(), "fixes received in the day's window", False),
        ("n_minutes_with_fix", pl.Int32(), "minutes with at least one fix", False),
        ("first_ping_at", UTC_INSTANT, "first fix (UTC)"),
        ("last_ping_at", UTC_INSTANT, "last fix (UTC)"),
        ("n_trips_run", pl.Int32(), "trips it ran by the outcomes (any evidence)", False),
    ),
    primary_key=("service_date", "operator_id", "vehicle_id"),
    derived=True,
)

FEED_OUTAGES = Table(
    "feed_outages",
    "Operator AVL feed outages: no fix from any vehicle of the operator for at least the "
    "profile's `evidence.feed_outage_min_s` within the service day's window. A reportable fact "
    "(keeping the feed up is the operator's duty, BG art. 25), never a suppression.",
    cols(
        SERVICE_DATE,
        ("operator_id", pl.String(), "operator ('?' when the register names none)", False),
        (
            "started_at",
            UTC_INSTANT,
            "last fix before the silence, or the window's start (UTC)",
            False,
        ),
        ("ended_at", UTC_INSTANT, "first fix after it, or the window's end (UTC)", False),
        ("duration_s", pl.Int32(), "ended_at minus started_at, seconds", False),
        ("n_trips_not_evaluated", pl.Int32(), "trips left not_evaluated by it", False),
    ),
    primary_key=("service_date", "operator_id", "started_at"),
    derived=True,
)

register(
    TRIPS_PERFORMED,
    STOP_VISITS,
    TRIP_OUTCOMES,
    BREAKDOWNS,
    HEADWAY_OBSERVATIONS,
    AVL_COVERAGE,
    FEED_OUTAGES,
)

MIGRATION: Migration | None = Migration(
    2,
    "matching: trips_performed, stop_visits, trip_outcomes, breakdowns, headway_observations",
    tables=(
        "trips_performed",
        "stop_visits",
        "trip_outcomes",
        "breakdowns",
        "headway_observations",
    ),
)
