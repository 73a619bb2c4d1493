"""Derived tables of the crowding jobs: where each tap boarded and alighted, the load profile of
every trip, and where and when the network is crowded (BG art. 59, CGS art. 45).

`pontual crowding --from --to` writes them one service-day range at a time, replacing those
days' rows, so a re-run is idempotent. Every number is traceable: crowding_summary -> trip_crowding
(vehicle, run_index) -> trip_loads (per stop) -> tap_placements (operator_id, transaction_id,
event_at) -> fare_transactions.
"""

import polars as pl

from core.migrations import Migration
from core.schema import UTC_INSTANT, Table, cols, register

SERVICE_DATE = ("service_date", pl.Date(), "service day (local)", False)
VEHICLE_ID = ("vehicle_id", pl.String(), "fleet number", False)
RUN_INDEX = ("run_index", pl.Int32(), "run of the vehicle (trips_performed key)", False)
ROUTE_ID = ("route_id", pl.String(), "line", False)
DIRECTION_ID = ("direction_id", pl.Int32(), "direction (-1 when the feed has none)", False)

PLACEMENTS = ("placed", "no_vehicle", "vehicle_without_trips", "outside_trips")
ALIGHTING_METHODS = ("chained", "chained_home", "unlinked")
LOS_LEVELS = ("A", "B", "C", "D", "E", "F")

TAP_PLACEMENTS = Table(
    "tap_placements",
    "One row per fare tap: the trip and stop where it boarded (as-of join on vehicle and time "
    "against stop_visits) and the stop where it alighted (trip chaining), or why it could not "
    "be placed. Placement codes: " + ", ".join(PLACEMENTS) + ".",
    cols(
        ("transaction_id", pl.String(), "the tap's id (fare_transactions key)", False),
        (
            "operator_id",
            pl.String(),
            "the tap's operator (fare_transactions key; null when the tap has none)",
        ),
        (
            "service_date",
            pl.Date(),
            "service day of the trip it boarded; the local date of the tap when unplaced",
            False,
        ),
        ("event_at", UTC_INSTANT, "tap time (UTC)", False),
        ("vehicle_id", pl.String(), "vehicle whose validator recorded the tap"),
        ("placement", pl.String(), ", ".join(PLACEMENTS), False),
        ("run_index", pl.Int32(), "run of the vehicle it boarded (null: unplaced)"),
        ("trip_id", pl.String(), "scheduled trip it boarded (null: unplaced)"),
        ("route_id", pl.String(), "line of that trip (null: unplaced)"),
        ("stop_sequence", pl.Int32(), "boarding stop's order in the trip"),
        ("stop_id", pl.String(), "boarding stop"),
        ("alighting_stop_sequence", pl.Int32(), "inferred alighting stop's order in the trip"),
        ("alighting_stop_id", pl.String(), "inferred alighting stop"),
        (
            "alighting_method",
            pl.String(),
            "'chained' (nearest stop to the card's next boarding), 'chained_home' (last trip of "
            "the day, toward its first boarding) or 'unlinked' (scaled in by the linked taps)",
        ),
        (
            "walk_m",
            pl.Float64(),
            "straight-line distance from the alighting stop to the next boarding stop, metres",
        ),
        ("reason", pl.String(), "why it is unplaced or unlinked, in words (pt-BR)"),
    ),
    # the taps' own key (fare_transactions): ids repeat (counters restart; ADR 0040) and a
    # validator's id is unique only within its operator, so two operators' taps with one id at
    # one instant are two placements. A null operator matches a null one, as in the taps'
    # table (the store's key check groups nulls together). ADR 0103, migration 16.
    primary_key=("operator_id", "transaction_id", "event_at"),
    derived=True,
)

TRIP_LOADS = Table(
    "trip_loads",
    "Load profile: one row per stop visited by a run, with boardings, alightings and the load "
    "on the segment that leaves the stop; standees per m² = max(0, load - seats) / standing "
    "area (BG art. 59).",
    cols(
        SERVICE_DATE,
        VEHICLE_ID,
        RUN_INDEX,
        ("trip_id", pl.String(), "scheduled trip", False),
        ROUTE_ID,
        DIRECTION_ID,
        ("stop_sequence", pl.Int32(), "order of the stop in the trip", False),
        ("stop_id", pl.String(), "stop", False),
        ("next_stop_id", pl.String(), "next stop visited (null at the last one)"),
        ("departure_at", UTC_INSTANT, "departure from the stop (UTC)"),
        ("n_taps", pl.Int32(), "fare taps placed at this stop", False),
        (
            "n_boardings",
            pl.Float64(),
            "passengers in: the taps, or the APC count when the run has one",
            False,
        ),
        (
            "n_alightings",
            pl.Float64(),
            "passengers out: chained taps plus unlinked ones scaled in, or the APC count",
            False,
        ),
        ("n_alightings_linked", pl.Int32(), "taps whose alighting was inferred here", False),
        ("load_after", pl.Float64(), "passengers on board leaving the stop", False),
        ("n_seats", pl.Int32(), "seats of the vehicle (register, else the type's fallback)"),
        ("standing_area_m2", pl.Float64(), "standing area of the vehicle, m²"),
        (
            "standees_per_m2",
            pl.Float64(),
            "max(0, load_after - n_seats) / standing_area_m2, passengers per m²",
        ),
        (
            "is_over_limit",
            pl.Boolean(),
            "standees per m² above the profile's limit (null: capacity unknown)",
        ),
        ("los", pl.String(), "TCQSM passenger-load level of service A–F"),
        ("count_source", pl.String(), "'taps' (inferred) or 'apc' (counter)", False),
    ),
    primary_key=("service_date", "vehicle_id", "run_index", "stop_sequence"),
    derived=True,
)

TRIP_CROWDING = Table(
    "trip_crowding",
    "One row per run with a load profile: its peak load, where, and whether it broke the limit.",
    cols(
        SERVICE_DATE,
        VEHICLE_ID,
        RUN_INDEX,
        ("trip_id", pl.String(), "scheduled trip", False),
        ROUTE_ID,
        DIRECTION_ID,
        ("departure_at", UTC_INSTANT, "departure from the first visited stop (UTC)", False),
        ("hour_at", UTC_INSTANT, "start of the hour of that departure (UTC)", False),
        ("n_taps", pl.Int32(), "taps placed on the run", False),
        ("n_taps_linked", pl.Int32(), "of them, with a chained alighting", False),
        ("n_boardings", pl.Float64(), "passengers in over the run", False),
        ("max_load", pl.Float64(), "highest load on board, passengers", False),
        ("max_load_stop_sequence", pl.Int32(), "stop after which the highest load rode", False),
        ("max_load_stop_id", pl.String(), "that stop", False),
        ("max_standees_per_m2", pl.Float64(), "highest standees per m² on the run"),
        ("is_over_limit", pl.Boolean(), "some segment was over the profile's limit"),
        ("los", pl.String(), "worst TCQSM load level on the run (A–F)"),
        ("n_seats", pl.Int32(), "seats"),
        ("standing_area_m2", pl.Float64(), "standing area, m²"),
        (
            "capacity_source",
            pl.String(),
            "'register', 'type_fallback' (profile value for the vehicle type) or 'unknown'",
            False,
        ),
        ("count_source", pl.String(), "'taps' or 'apc'", False),
    ),
    primary_key=("service_date", "vehicle_id", "run_index"),
    derived=True,
)

CROWDING_SUMMARY = Table(
    "crowding_summary",
    "Where and when it is crowded: per line, direction and hour of departure, the share of "
    "trips over the limit, the worst segment, and the extra trips (or larger vehicle) that "
    "bring the peak back under the limit (BG art. 59 §1; TCQSM maximum-load-point method).",
    cols(
        SERVICE_DATE,
        ROUTE_ID,
        DIRECTION_ID,
        ("hour_at", UTC_INSTANT, "start of the hour of departure (UTC)", False),
        ("n_trips", pl.Int32(), "runs with a load profile", False),
        ("n_over_limit", pl.Int32(), "of them, over the limit somewhere", False),
        ("over_limit_share", pl.Float64(), "n_over_limit / n_trips (0-1)", False),
        ("max_load", pl.Float64(), "highest load of any run, passengers", False),
        ("max_standees_per_m2", pl.Float64(), "highest standees per m² of any run"),
        ("worst_from_stop_id", pl.String(), "worst segment: the stop it leaves"),
        ("worst_to_stop_id", pl.String(), "worst segment: the stop it reaches"),
        ("worst_mean_load", pl.Float64(), "mean load on the worst segment over the hour's runs"),
        (
            "worst_mean_standees_per_m2",
            pl.Float64(),
            "mean standees per m² on the worst segment over the hour's runs",
        ),
        (
            "peak_segment_load",
            pl.Float64(),
            "passengers through the hour's maximum-load segment (sum over its runs)",
            False,
        ),
        (
            "capacity_at_limit",
            pl.Float64(),
            "mean capacity per run at the limit: seats + limit × standing area, passengers",
        ),
        (
            "is_action_required",
            pl.Boolean(),
            "over_limit_share above the profile's share: more trips or capacity (art. 59 §1)",
            False,
        ),
        (
            "n_trips_needed",
            pl.Int32(),
            "runs that carry peak_segment_load at the limit: ceil(load / capacity_at_limit)",
        ),
        (
            "extra_trips_needed",
            pl.Int32(),
            "max(0, n_trips_needed - n_trips) when action is required",
        ),
        (
            "larger_vehicle_type",
            pl.String(),
            "smallest profile vehicle type whose capacity at the limit carries the hour's "
            "highest load (null: none needed, or none large enough)",
        ),
    ),
    primary_key=("service_date", "route_id", "direction_id", "hour_at"),
    derived=True,
)

register(TAP_PLACEMENTS, TRIP_LOADS, TRIP_CROWDING, CROWDING_SUMMARY)

MIGRATION: Migration | None = Migration(
    4,
    "crowding: tap_placements, trip_loads, trip_crowding, crowding_summary",
    tables=("tap_placements", "trip_loads", "trip_crowding", "crowding_summary"),
)
