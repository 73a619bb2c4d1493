"""The store as TIDES tables (Transit ITS Data Exchange Specification), with a data package.

Reads (store): vehicle_locations, trips_performed, scheduled_trips, stop_visits, trip_loads,
tap_placements, fare_transactions, vehicles. Writes: one CSV per TIDES table in a folder plus
`datapackage.json` (the TIDES data-package profile), for the service days `start`..`end`.

Mapping choices (TIDES field <- Pontual column):
- `trip_id_performed` is `VEHICLE:RUN` (a run: one vehicle along one itinerary), so that
  trips_performed, stop_visits, passenger_events and fare_transactions refer to the same run;
  `trip_id_scheduled` is the matched scheduled trip (null for a run matched to none).
- vehicle_locations: `location_ping_id` <- ping_id, `service_date` <- the local date of the fix
  (the profile's time zone), `speed` (m/s) <- speed_m_s, `heading` <- heading_deg.
- trips_performed: `schedule_relationship` 'Scheduled' when matched, 'Unscheduled' otherwise;
  `trip_type` 'In service'; times are the run's actual start/end and the trip's planned ones.
- stop_visits: `boarding_1`/`alighting_1`/`departure_load` from trip_loads (inferred from taps
  or APC, rounded to whole passengers: TIDES counts are integers); `dwell` = departure -
  arrival, seconds.
- passenger_events: one 'Passenger boarded' per placed tap (at its boarding stop) and one
  'Passenger alighted' per chained alighting (at its inferred stop, timestamped at the run's
  departure from that stop); unplaced taps have no stop and are left out.
- fare_transactions: `transaction_id` <- OPERATOR:ID:EPOCH_MS, the tap's whole key (its
  operator, the vendor's id, its instant in milliseconds since 1970 UTC; an empty operator
  when the tap has none): TIDES wants the id unique, and a vendor's ids are not (counters
  restart, two operators' vendors number alike: ADR 0040); passenger_events'
  `passenger_event_id` is that id plus ':b' (boarded) or ':a' (alighted).
  `fare_action` 'Enter' (a validator tap on boarding), `token_id` <- the
  keyed card hash (card ids stay hashed, LGPD), `rider_category` <- fare_class,
  `currency_type` 'BRL', `fare_capped` false (no capping in these laws).
- vehicles: `capacity_seated` <- n_seats, `model_name` <- vehicle_type, `vehicle_start` <-
  in_service_since; operators: the operators of the fleet register.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl

from core.lake import local_day_sql
from core.register import in_force_sql
from core.store import Store

TIDES_TABLES = (
    "vehicle_locations",
    "trips_performed",
    "stop_visits",
    "passenger_events",
    "fare_transactions",
    "vehicles",
    "operators",
)
TIDES_FIELDS: dict[str, tuple[str, ...]] = {
    "vehicle_locations": (
        "location_ping_id",
        "service_date",
        "event_timestamp",
        "trip_id_performed",
        "trip_id_scheduled",
        "trip_stop_sequence",
        "scheduled_stop_sequence",
        "vehicle_id",
        "device_id",
        "pattern_id",
        "stop_id",
        "current_status",
        "latitude",
        "longitude",
        "gps_quality",
        "heading",
        "speed",
        "odometer",
        "schedule_deviation",
        "headway_deviation",
        "trip_type",
        "schedule_relationship",
    ),
    "trips_performed": (
        "service_date",
        "trip_id_performed",
        "vehicle_id",
        "trip_id_scheduled",
        "route_id",
        "route_type",
        "ntd_mode",
        "route_type_agency",
        "shape_id",
        "pattern_id",
        "direction_id",
        "operator_id",
        "block_id",
        "trip_start_stop_id",
        "trip_end_stop_id",
        "schedule_trip_start",
        "schedule_trip_end",
        "actual_trip_start",
        "actual_trip_end",
        "trip_type",
        "schedule_relationship",
    ),
    "stop_visits": (
        "service_date",
        "trip_id_performed",
        "trip_stop_sequence",
        "scheduled_stop_sequence",
        "pattern_id",
        "vehicle_id",
        "dwell",
        "stop_id",
        "timepoint",
        "schedule_arrival_time",
        "schedule_departure_time",
        "actual_arrival_time",
        "actual_departure_time",
        "distance",
        "boarding_1",
        "alighting_1",
        "boarding_2",
        "alighting_2",
        "departure_load",
        "door_open",
        "door_close",
        "door_status",
        "ramp_deployed_time",
        "ramp_failure",
        "kneel_deployed_time",
        "lift_deployed_time",
        "bike_rack_deployed",
        "bike_load",
        "revenue",
        "number_of_transactions",
        "schedule_relationship",
    ),
    "passenger_events": (
        "passenger_event_id",
        "service_date",
        "event_timestamp",
        "location_ping_id",
        "trip_id_performed",
        "trip_id_scheduled",
        "trip_stop_sequence",
        "scheduled_stop_sequence",
        "event_type",
        "vehicle_id",
        "device_id",
        "train_car_id",
        "stop_id",
        "pattern_id",
        "event_count",
    ),
    "fare_transactions": (
        "transaction_id",
        "service_date",
        "event_timestamp",
        "location_ping_id",
        "amount",
        "currency_type",
        "fare_action",
        "trip_id_performed",
        "trip_id_scheduled",
        "pattern_id",
        "trip_stop_sequence",
        "scheduled_stop_sequence",
        "vehicle_id",
        "device_id",
        "fare_id",
        "stop_id",
        "num_riders",
        "fare_media_id",
        "rider_category",
        "fare_product",
        "fare_period",
        "fare_capped",
        "token_id",
        "balance",
    ),
    "vehicles": (
        "vehicle_id",
        "vehicle_start",
        "vehicle_end",
        "model_name",
        "facility_name",
        "capacity_seated",
        "capacity_wheelchair",
        "capacity_bike",
        "bike_rack",
        "capacity_standing",
    ),
    "operators": ("operator_id",),
}
"""every field of each TIDES table, in the order of its schema (CSV header order)"""

ISO_UTC = "%Y-%m-%dT%H:%M:%SZ"
"""TIDES datetimes are Frictionless `datetime`s: ISO 8601 in UTC"""


def _tap_id(alias: str) -> str:
    """SQL for a tap's TIDES `transaction_id`: OPERATOR:ID:EPOCH_MS (columns of `alias`), the
    taps' key (ADR 0040) as one text, unique where the vendor's id alone is not."""
    a = f"{alias}."
    return (
        f"coalesce({a}operator_id, '') || ':' || {a}transaction_id || ':' "
        f"|| CAST(epoch_ms({a}event_at) AS VARCHAR)"
    )


def _run_id(alias: str = "") -> str:
    """SQL for `trip_id_performed`: VEHICLE:RUN of the row (columns of table `alias`)."""
    a = f"{alias}." if alias else ""
    return f"{a}vehicle_id || ':' || CAST({a}run_index AS VARCHAR)"


def build_tides_tables(
    store: Store, start: date, end: date, timezone: str
) -> dict[str, pl.DataFrame]:
    """The TIDES tables of service days `start`..`end`, as frames (datetimes in UTC)."""
    days = [start, end]
    q = store.query
    tables: dict[str, pl.DataFrame] = {}
    tables["vehicle_locations"] = q(
        f"""
        SELECT CAST(ping_id AS VARCHAR) AS location_ping_id,
               {local_day_sql("event_at", timezone)} AS service_date,
               event_at AS event_timestamp, vehicle_id,
               lat AS latitude, lon AS longitude, heading_deg AS heading, speed_m_s AS speed
        FROM vehicle_locations
        WHERE {local_day_sql("event_at", timezone)} BETWEEN ? AND ?
        ORDER BY event_at, vehicle_id
        """,
        days,
    )
    tables["trips_performed"] = q(
        f"""
        SELECT p.service_date, {_run_id("p")} AS trip_id_performed, p.vehicle_id,
               p.trip_id AS trip_id_scheduled, p.route_id, 'Bus' AS route_type,
               p.shape_id, p.direction_id, v.operator_id, s.block_id,
               s.planned_start_at AS schedule_trip_start, s.planned_end_at AS schedule_trip_end,
               p.started_at AS actual_trip_start, p.ended_at AS actual_trip_end,
               'In service' AS trip_type,
               CASE WHEN p.trip_id IS NULL THEN 'Unscheduled' ELSE 'Scheduled' END
                 AS schedule_relationship
        FROM trips_performed p
        LEFT JOIN scheduled_trips s ON s.service_date = p.service_date AND s.trip_id = p.trip_id
        LEFT JOIN vehicles v ON v.vehicle_id = p.vehicle_id
          AND {in_force_sql("v", "p.service_date")}
        WHERE p.service_date BETWEEN ? AND ?
        ORDER BY p.service_date, p.vehicle_id, p.run_index
        """,
        days,
    )
    tables["stop_visits"] = q(
        f"""
        SELECT sv.service_date, {_run_id("sv")} AS trip_id_performed,
               sv.stop_sequence AS trip_stop_sequence,
               sv.stop_sequence AS scheduled_stop_sequence, sv.vehicle_id, sv.stop_id,
               CAST(round(epoch(sv.departure_at) - epoch(sv.arrival_at)) AS INTEGER) AS dwell,
               sv.planned_arrival_at AS schedule_arrival_time,
               sv.planned_departure_at AS schedule_departure_time,
               sv.arrival_at AS actual_arrival_time, sv.departure_at AS actual_departure_time,
               CAST(round(sv.stop_dist_m) AS INTEGER) AS distance,
               CAST(round(l.n_boardings) AS INTEGER) AS boarding_1,
               CAST(round(l.n_alightings) AS INTEGER) AS alighting_1,
               CAST(round(l.load_after) AS INTEGER) AS departure_load,
               CASE WHEN sv.arrival_at IS NULL THEN 'Missing' ELSE 'Scheduled' END
                 AS schedule_relationship
        FROM stop_visits sv
        LEFT JOIN trip_loads l USING (service_date, vehicle_id, run_index, stop_sequence)
        WHERE sv.service_date BETWEEN ? AND ?
        ORDER BY sv.service_date, sv.vehicle_id, sv.run_index, sv.stop_sequence
        """,
        days,
    )
    tables["passenger_events"] = q(
        f"""
        SELECT {_tap_id("p")} || ':b' AS passenger_event_id, p.service_date,
               p.event_at AS event_timestamp, {_run_id("p")} AS trip_id_performed,
               p.trip_id AS trip_id_scheduled, p.stop_sequence AS trip_stop_sequence,
               p.stop_sequence AS scheduled_stop_sequence, 'Passenger boarded' AS event_type,
               p.vehicle_id, p.stop_id, 1 AS event_count
        FROM tap_placements p
        WHERE p.service_date BETWEEN ? AND ? AND p.stop_sequence IS NOT NULL
        UNION ALL
        SELECT {_tap_id("t")} || ':a', t.service_date, sv.departure_at,
               {_run_id("t")}, t.trip_id, t.alighting_stop_sequence,
               t.alighting_stop_sequence, 'Passenger alighted', t.vehicle_id,
               t.alighting_stop_id, 1
        FROM tap_placements t
        JOIN stop_visits sv ON sv.service_date = t.service_date AND sv.vehicle_id = t.vehicle_id
             AND sv.run_index = t.run_index AND sv.stop_sequence = t.alighting_stop_sequence
        WHERE t.service_date BETWEEN ? AND ? AND t.alighting_stop_sequence IS NOT NULL
             AND sv.departure_at IS NOT NULL
        ORDER BY 3, 1
        """,
        [*days, *days],
    )
    tables["fare_transactions"] = q(
        f"""
        SELECT {_tap_id("f")} AS transaction_id,
               {local_day_sql("f.event_at", timezone)} AS service_date,
               f.event_at AS event_timestamp, f.amount, 'BRL' AS currency_type,
               'Enter' AS fare_action,
               CASE WHEN t.run_index IS NULL THEN NULL
                    ELSE t.vehicle_id || ':' || CAST(t.run_index AS VARCHAR) END
                 AS trip_id_performed,
               t.trip_id AS trip_id_scheduled, t.stop_sequence AS trip_stop_sequence,
               f.vehicle_id, t.stop_id,
               CASE WHEN f.card_hash IS NULL THEN 'Cash or coins'
                    ELSE 'Smart card or ticket' END AS fare_media_id,
               f.fare_class AS rider_category, false AS fare_capped, f.card_hash AS token_id
        FROM fare_transactions f
        -- transaction ids repeat across days and operators (ADR 0040): a tap is its operator,
        -- id and instant, as its placement (a null operator matches a null one)
        LEFT JOIN tap_placements t
          ON t.transaction_id = f.transaction_id AND t.event_at = f.event_at
             AND t.operator_id IS NOT DISTINCT FROM f.operator_id
        WHERE {local_day_sql("f.event_at", timezone)} BETWEEN ? AND ?
        ORDER BY f.event_at, f.transaction_id, f.operator_id NULLS LAST
        """,
        days,
    )
    tables["vehicles"] = q(
        """
        SELECT vehicle_id, CAST(in_service_since AS TIMESTAMPTZ) AS vehicle_start,
               vehicle_type AS model_name, n_seats AS capacity_seated
        FROM vehicles WHERE valid_to IS NULL ORDER BY vehicle_id
        """
    )
    tables["operators"] = q("SELECT DISTINCT operator_id FROM vehicles ORDER BY operator_id")
    return tables


def _to_csv_frame(name: str, df: pl.DataFrame) -> pl.DataFrame:
    """Every field of the TIDES table in schema order (absent ones empty); datetimes as
    ISO 8601 UTC text ('Z'), dates as ISO dates, booleans as true/false."""
    unknown = set(df.columns) - set(TIDES_FIELDS[name])
    if unknown:  # a mapping error of this module, not of the data
        raise ValueError(f"{name}: not TIDES fields: {sorted(unknown)}")
    df = df.with_columns(pl.lit(None).alias(f) for f in TIDES_FIELDS[name] if f not in df.columns)
    return df.select(TIDES_FIELDS[name]).with_columns(
        [
            pl.col(name).dt.convert_time_zone("UTC").dt.strftime(ISO_UTC)
            for name, dtype in df.schema.items()
            if isinstance(dtype, pl.Datetime)
        ]
    )


def write_tides_package(
    tables: dict[str, pl.DataFrame], out: str | Path, schema_dir: Path | None = None
) -> Path:
    """Write the tables as CSV and the data-package descriptor; returns its path.

    Each resource names its TIDES table schema by file name (`NAME.schema.json`); with
    `schema_dir` (a folder of the TIDES schemas) the schemas are copied beside the data so the
    package validates offline.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    resources = []
    for name, df in tables.items():
        path = folder / f"{name}.csv"
        _to_csv_frame(name, df).write_csv(path)
        resource: dict[str, object] = {
            "name": name,
            "path": path.name,
            "format": "csv",
            "mediatype": "text/csv",
            "encoding": "utf-8",
            "schema": f"{name}.schema.json",
        }
        if schema_dir is not None:
            (folder / f"{name}.schema.json").write_text(
                (schema_dir / f"{name}.schema.json").read_text(encoding="utf-8"),
                encoding="utf-8",
            )
        resources.append(resource)
    descriptor = {
        "profile": "tides-data-package",
        "name": "pontual-tides-export",
        "title": "Pontual: TIDES export",
        "description": "Observed and derived transit data exported by Pontual (card ids hashed).",
        "resources": resources,
    }
    target = folder / "datapackage.json"
    target.write_text(json.dumps(descriptor, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target
