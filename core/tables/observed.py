"""Observed tables: append-only inputs, each row with its source and ingest time.

Event time (`event_at`) and ingest time (`ingested_at`) are separate columns, both UTC.
"""

import polars as pl

from core.schema import UTC_INSTANT, Table, cols, register

SOURCE = ("source", pl.String(), "file path, URL or MQTT topic it came from", False)
INGESTED_AT = ("ingested_at", UTC_INSTANT, "when it entered the store (UTC)", False)

VEHICLE_LOCATIONS = Table(
    "vehicle_locations",
    "GPS/AVL pings. A vehicle is in one place at one instant: (vehicle_id, event_at) is the key.",
    cols(
        ("ping_id", pl.Int64(), "stable id of the ping in the store (evidence reference)", False),
        ("vehicle_id", pl.String(), "fleet number", False),
        ("event_at", UTC_INSTANT, "GPS fix time (UTC)", False),
        ("lat", pl.Float64(), "WGS 84 latitude, degrees", False),
        ("lon", pl.Float64(), "WGS 84 longitude, degrees", False),
        ("speed_m_s", pl.Float64(), "reported speed, m/s"),
        ("heading_deg", pl.Float64(), "reported heading, degrees clockwise from north"),
        ("reported_trip_id", pl.String(), "trip the device reported (often absent)"),
        ("reported_route_id", pl.String(), "line the device reported"),
        ("reported_direction_id", pl.Int32(), "direction the device reported"),
        ("event_code", pl.String(), "AVL event code (e.g. 'breakdown', 'panic', 'door_open')"),
        ("reported_occupancy", pl.String(), "occupancy status the device reported"),
        ("operator_id", pl.String(), "operator (from the MQTT topic or file)"),
        SOURCE,
        INGESTED_AT,
    ),
    primary_key=("vehicle_id", "event_at"),
    identity="ping_id",
    key_time_column="event_at",
)

FARE_CLASSES = (
    "full",
    "student",
    "elderly",
    "disabled",
    "vale_transporte",
    "integration",
    "exempt",
    "other",
)
"""Vocabulary of `fare_transactions.fare_class` (the keys of the profiles' equivalent weights),
in the order reports list them."""

INCIDENT_KINDS = ("obstruction", "detour", "breakdown", "accident", "weather", "other")
"""Vocabulary of `incidents.kind`."""

FARE_TRANSACTIONS = Table(
    "fare_transactions",
    "Electronic-ticketing taps (BG art. 26, 49). Card ids are keyed hashes (LGPD), never raw. "
    "A tap is (operator_id, transaction_id, event_at): a validator's id is unique only within "
    "its operator and its counter's period (counters restart), so the id alone is no key.",
    cols(
        (
            "transaction_id",
            pl.String(),
            "id from the validator, or derived from card, time and vehicle",
            False,
        ),
        ("event_at", UTC_INSTANT, "tap time (UTC)", False),
        ("vehicle_id", pl.String(), "vehicle whose validator recorded the tap"),
        ("route_id", pl.String(), "line the validator was set to"),
        ("card_hash", pl.String(), "HMAC-SHA256 of the card id (hex)"),
        (
            "fare_class",
            pl.String(),
            ", ".join(FARE_CLASSES),
            False,
        ),
        ("amount", pl.Float64(), "amount charged, in the local currency"),
        (
            "operator_id",
            pl.String(),
            "operator (the MQTT topic's, the file's, else the vehicle's in the fleet register)",
        ),
        SOURCE,
        INGESTED_AT,
    ),
    primary_key=("operator_id", "transaction_id", "event_at"),
    key_time_column="event_at",
)

PASSENGER_COUNTS = Table(
    "passenger_counts",
    "Automatic passenger counter (APC) readings, when the fleet has them.",
    cols(
        ("vehicle_id", pl.String(), "vehicle", False),
        ("event_at", UTC_INSTANT, "door-close time (UTC)", False),
        ("stop_id", pl.String(), "stop, when the counter knows it"),
        ("trip_id", pl.String(), "trip, when the counter knows it"),
        ("n_boardings", pl.Int32(), "passengers in", False),
        ("n_alightings", pl.Int32(), "passengers out", False),
        SOURCE,
        INGESTED_AT,
    ),
    primary_key=("vehicle_id", "event_at"),
)

INCIDENTS = Table(
    "incidents",
    "Obstructions, detours, breakdowns and other events, approved (justified) or not.",
    cols(
        ("incident_id", pl.String(), "id", False),
        ("starts_at", UTC_INSTANT, "start (UTC)", False),
        ("ends_at", UTC_INSTANT, "end (UTC)", False),
        ("route_id", pl.String(), "line affected (null: any)"),
        ("trip_id", pl.String(), "scheduled trip affected"),
        ("vehicle_id", pl.String(), "vehicle affected"),
        ("kind", pl.String(), ", ".join(INCIDENT_KINDS), False),
        (
            "is_justified",
            pl.Boolean(),
            "approved by the managing body: trips it covers leave the ICV (BG art. 57 §1)",
            False,
        ),
        ("note", pl.String(), "free text"),
        SOURCE,
        INGESTED_AT,
    ),
    primary_key=("incident_id",),
)

IQS_SURVEYS = Table(
    "iqs_surveys",
    "User-satisfaction survey results (IQS, BG art. 57-II).",
    cols(
        ("period", pl.String(), "'2026', '2026-S1' or '2026-03'", False),
        ("operator_id", pl.String(), "operator evaluated", False),
        ("dimension", pl.String(), "survey dimension (profile's IQS dimensions)", False),
        ("score", pl.Float64(), "score on 0–100", False),
        ("n_respondents", pl.Int32(), "respondents"),
        SOURCE,
        INGESTED_AT,
    ),
    primary_key=("period", "operator_id", "dimension"),
)

INSPECTIONS = Table(
    "inspections",
    "In-loco inspection records (BG art. 57 §2, art. 77): an inspector saw, at a time and a "
    "place, a vehicle (or a line) in service, or waited and saw none. Evidence for trips "
    "without GPS (`pontual ingest inspections`).",
    cols(
        ("inspection_id", pl.String(), "id of the record", False),
        ("observed_at", UTC_INSTANT, "when it was seen (UTC)", False),
        ("inspector", pl.String(), "who saw it (registration of the inspector)", False),
        ("stop_id", pl.String(), "stop where it was seen (null: see lat/lon)"),
        ("lat", pl.Float64(), "where, WGS 84 latitude (when no stop)"),
        ("lon", pl.Float64(), "where, WGS 84 longitude (when no stop)"),
        ("vehicle_id", pl.String(), "vehicle seen (fleet number)"),
        ("route_id", pl.String(), "line seen"),
        (
            "is_vehicle_seen",
            pl.Boolean(),
            "true: the vehicle/line was seen in service; false: the inspector waited and saw none",
            False,
        ),
        ("note", pl.String(), "what was seen, in the inspector's words"),
        SOURCE,
        INGESTED_AT,
    ),
    primary_key=("inspection_id",),
)

register(
    VEHICLE_LOCATIONS, FARE_TRANSACTIONS, PASSENGER_COUNTS, INCIDENTS, IQS_SURVEYS, INSPECTIONS
)
