"""Versioned migrations of the store schema.

Migrations 1, 5 (data coverage and evidence), 6 (the fares key), 7 (the key fingerprint) and
10 (the fleet register's history), 11, 12 (archived raw days), 13 (the compact frequency
trips), 14 (derived tables without key indexes), 15 (raw day fingerprints) and 16 (the taps'
operator in their placements) are declared here; each derived-table module in `core.tables` declares its own (`MIGRATION`,
versions fixed in advance: matching 2, indices 3, crowding 4, raw-day digests 8). A migration creates the tables it names from their declarations (`CREATE TABLE IF NOT EXISTS`)
and then runs its SQL. Migrations are never edited once shipped: a column added to a declared
table later gets its own migration with ``ADD COLUMN IF NOT EXISTS``, which is a no-op on a
fresh store where the table was already created with it. A table a migration `rebuilt` is
renamed aside, created again from its declaration and its rows copied (the columns both have,
in stored order), then the old one dropped: DuckDB cannot drop a key or a constraint in place.

A NEW store does not walk the migrations: `fresh_schema_sql` creates every table they name from
its current declaration, under its final name, and their views, in one batch (ADR 0107);
`tests/core/test_store.py` holds its catalogue equal to the migrated one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    tables: tuple[str, ...] = ()
    sql: tuple[str, ...] = ()
    rebuilt: tuple[str, ...] = ()


# Migration 1 names its tables literally: a shipped migration is a frozen record.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "system, reference and observed tables",
        tables=(
            "ingest_runs",
            "quarantine",
            "feed_versions",
            "gtfs_agency",
            "gtfs_routes",
            "gtfs_stops",
            "gtfs_trips",
            "gtfs_stop_times",
            "gtfs_calendar",
            "gtfs_calendar_dates",
            "gtfs_shapes",
            "gtfs_frequencies",
            "scheduled_trips",
            "vehicles",
            "vehicle_locations",
            "fare_transactions",
            "passenger_counts",
            "incidents",
            "iqs_surveys",
        ),
    ),
    # Issue 16: data coverage and evidence classes. Tables created from their declarations;
    # columns added to tables an older store already has.
    Migration(
        5,
        "data coverage and evidence: avl_coverage, feed_outages, inspections; trip_outcomes "
        "evidence columns; annual_grades provisional stamp",
        tables=("avl_coverage", "feed_outages", "inspections"),
        sql=(
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS evidence_class VARCHAR "
            "DEFAULT 'gps'",
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS gps_minutes_share DOUBLE DEFAULT 0",
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS feed_up_share DOUBLE DEFAULT 1",
            "ALTER TABLE annual_grades ADD COLUMN IF NOT EXISTS evaluated_share DOUBLE",
            "ALTER TABLE annual_grades ADD COLUMN IF NOT EXISTS is_provisional BOOLEAN",
        ),
    ),
)


# Migration 6: the fares key scoped by operator and time (issue #23.3). DuckDB cannot drop a
# primary key in place: the table is rebuilt under its new declaration (written out literally,
# as a shipped migration is frozen) and its rows copied, in the migration's transaction.
MIGRATIONS += (
    Migration(
        6,
        "fare_transactions keyed by operator, transaction id and time (no primary-key index)",
        sql=(
            "ALTER TABLE fare_transactions RENAME TO fare_transactions_v4",
            """CREATE TABLE fare_transactions (
  "transaction_id" VARCHAR NOT NULL,
  "event_at" TIMESTAMPTZ NOT NULL,
  "vehicle_id" VARCHAR,
  "route_id" VARCHAR,
  "card_hash" VARCHAR,
  "fare_class" VARCHAR NOT NULL,
  "amount" DOUBLE,
  "operator_id" VARCHAR,
  "source" VARCHAR NOT NULL,
  "ingested_at" TIMESTAMPTZ NOT NULL
)""",
            "INSERT INTO fare_transactions SELECT * FROM fare_transactions_v4 ORDER BY event_at",
            "DROP TABLE fare_transactions_v4",
        ),
    ),
)

# Migration 7: the card-hashing key's fingerprint (issue #23.6).
MIGRATIONS += (
    Migration(
        7, "hash_key_fingerprints: the card-hashing key a store uses", ("hash_key_fingerprints",)
    ),
)

# Migration 10: the fleet register keeps its history (issue #17): `vehicles` holds one row per
# version (valid_from / valid_to, no primary key: a vehicle has several rows), `retired_on`
# says when a vehicle left the fleet, and inspections are their own history table, seeded
# with each vehicle's last inspection. Rebuilt like migration 6 (DuckDB cannot drop a key).
_V9_VEHICLE_COLUMNS = (
    '"vehicle_id", "plate", "operator_id", "lot_id", "service_area", "service_class", '
    '"vehicle_type", "manufacture_year", "n_seats", "standing_area_m2", "in_service_since", '
    '"last_inspection_on", "is_reserve", "source", "ingested_at"'
)
MIGRATIONS += (
    Migration(
        10,
        "fleet register history: vehicles versioned (valid_from/valid_to, retired_on), "
        "vehicle_inspections",
        tables=("vehicle_inspections",),
        sql=(
            "ALTER TABLE vehicles RENAME TO vehicles_v9",
            """CREATE TABLE vehicles (
  "vehicle_id" VARCHAR NOT NULL,
  "plate" VARCHAR,
  "operator_id" VARCHAR NOT NULL,
  "lot_id" VARCHAR,
  "service_area" VARCHAR NOT NULL,
  "service_class" VARCHAR NOT NULL,
  "vehicle_type" VARCHAR NOT NULL,
  "manufacture_year" INTEGER NOT NULL,
  "n_seats" INTEGER,
  "standing_area_m2" DOUBLE,
  "in_service_since" DATE,
  "last_inspection_on" DATE,
  "is_reserve" BOOLEAN,
  "source" VARCHAR NOT NULL,
  "ingested_at" TIMESTAMPTZ NOT NULL,
  "retired_on" DATE,
  "valid_from" DATE,
  "valid_to" DATE
)""",
            f"INSERT INTO vehicles ({_V9_VEHICLE_COLUMNS}) "
            f"SELECT {_V9_VEHICLE_COLUMNS} FROM vehicles_v9",
            "DROP TABLE vehicles_v9",
            "INSERT INTO vehicle_inspections SELECT DISTINCT vehicle_id, last_inspection_on, "
            "source, ingested_at FROM vehicles WHERE last_inspection_on IS NOT NULL "
            "ON CONFLICT DO NOTHING",
        ),
    ),
)

# Migration 11: GPS silences credited inside a run (issue #16 item 3).
MIGRATIONS += (
    Migration(
        11,
        "trip_outcomes: GPS silences credited inside a run (gps_gap_s, gps_gap_m)",
        sql=(
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS gps_gap_s INTEGER",
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS gps_gap_m DOUBLE",
        ),
    ),
)

# Migration 12: raw days archived to the lake (issue #18 item 4, docs/adr/0099).
MIGRATIONS += (
    Migration(12, "archived_days: raw days moved from the store into the lake", ("archived_days",)),
)

# Migration 13: frequency-based service stored compactly (issue #21, ADR 0102). The stored
# `scheduled_trips` table keeps the timetable trips under a new name (and any instances an
# older load expanded there); frequency templates get one row per service day in
# `scheduled_frequency_trips`; `scheduled_trips` becomes a view that expands each template row
# over its gtfs_frequencies windows, with the ids and times the expanded table had. (No
# ORDER BY: the table had no order either; it would sort every read, a year's in seconds.)
_SCHEDULED_TRIPS_COLUMNS = (
    '"feed_id", "service_date", "trip_id", "template_trip_id", "route_id", "direction_id", '
    '"block_id", "shape_id", "service_id", "planned_start_s", "planned_end_s", '
    '"planned_start_at", "planned_end_at", "planned_distance_m", "first_stop_id", '
    '"last_stop_id", "n_stops", "headway_s", "is_exact_times"'
)
SCHEDULED_TRIPS_VIEW = f"""CREATE VIEW scheduled_trips AS
SELECT {_SCHEDULED_TRIPS_COLUMNS} FROM scheduled_timetable_trips
UNION ALL
SELECT
  feed_id, service_date,
  template_trip_id || '@' || printf('%02d:%02d:%02d', s // 3600, s % 3600 // 60, s % 60),
  template_trip_id, route_id, direction_id, block_id, shape_id, service_id,
  CAST(s AS INTEGER), CAST(s + duration_s AS INTEGER),
  day_ref_at + to_seconds(s), day_ref_at + to_seconds(s + duration_s),
  planned_distance_m, first_stop_id, last_stop_id, n_stops, headway_s, is_exact_times
FROM (
  SELECT t.*, f.headway_s, coalesce(f.exact_times, 0) = 1 AS is_exact_times,
    unnest(range(f.start_time_s, f.end_time_s, f.headway_s)) AS s
  FROM scheduled_frequency_trips t
  JOIN gtfs_frequencies f ON f.feed_id = t.feed_id AND f.trip_id = t.template_trip_id
  WHERE f.headway_s > 0
)"""
MIGRATIONS += (
    Migration(
        13,
        "frequency trips stored compactly: scheduled_timetable_trips, scheduled_frequency_trips "
        "and the scheduled_trips view",
        tables=("scheduled_frequency_trips",),
        sql=(
            "ALTER TABLE scheduled_trips RENAME TO scheduled_timetable_trips",
            SCHEDULED_TRIPS_VIEW,
        ),
    ),
)

# Migration 14: derived tables without primary-key indexes (issue #21, ADR 0111). Their
# writers replace a whole partition (delete and insert in one transaction) and the store checks
# each write against the key instead; the ART indexes were about a quarter of a month's store
# (16 of 63 B per ping). `annual_grades` keeps its index (the indices job relies on it to skip
# stored history rows). Each table is rebuilt (DuckDB cannot drop a key in place).
MIGRATIONS += (
    Migration(
        14,
        "derived tables without primary-key indexes: the key checked on each write",
        rebuilt=(
            "trips_performed",
            "stop_visits",
            "trip_outcomes",
            "breakdowns",
            "headway_observations",
            "avl_coverage",
            "feed_outages",
            "tap_placements",
            "trip_loads",
            "trip_crowding",
            "crowding_summary",
            "indicators",
            "suggested_infractions",
            "fleet_days",
            "live_prediction_accuracy",
        ),
    ),
)

# Migration 15: the current digest of each raw day with a fingerprint of its rows, so a report
# reuses the digest of an unchanged day instead of hashing it again (issue #21, ADR 0113).
MIGRATIONS += (
    Migration(
        15,
        "raw_day_fingerprints: current raw day digests reused while the day's fingerprint holds",
        ("raw_day_fingerprints",),
    ),
)

# Migration 16: tap placements keyed as the taps are, (operator_id, transaction_id, event_at)
# (issue #21, ADR 0103): two operators' taps with one id at one instant had one key, and
# `pontual crowding` refused the whole period at the write. The table is rebuilt with the
# operator beside the id (its declaration's order; DuckDB cannot add a column in place
# elsewhere than last) and each stored placement takes the operator of its tap: the one
# `fare_transactions` row with its id and instant (none, or several, leave it null until the
# days are computed again; an old store could not hold two placements of one id and instant).
MIGRATIONS += (
    Migration(
        16,
        "tap_placements keyed by operator, transaction id and time (operator_id added)",
        rebuilt=("tap_placements",),
        sql=(
            """UPDATE tap_placements AS p SET operator_id = f.operator_id
FROM (
  SELECT transaction_id, event_at, min(operator_id) AS operator_id
  FROM fare_transactions
  WHERE event_at BETWEEN (SELECT min(event_at) FROM tap_placements)
    AND (SELECT max(event_at) FROM tap_placements)
  GROUP BY transaction_id, event_at
  HAVING count(*) = 1
) AS f
WHERE p.transaction_id = f.transaction_id AND p.event_at = f.event_at""",
        ),
    ),
)

# A NEW store is created directly at the latest schema (ADR 0107): the tables every migration
# names, from their declarations, under their final names, and the views, in one DDL batch;
# the test `test_fresh_store_has_the_migrated_catalogue` holds it equal to running every
# migration. Tables a migration renamed (final name of each):
FRESH_RENAMED = {"scheduled_trips": "scheduled_timetable_trips"}
# Views created by migrations, in their final form:
FRESH_VIEWS = (SCHEDULED_TRIPS_VIEW,)


def all_migrations() -> tuple[Migration, ...]:
    """Migration 1 plus the migration of each derived-table module, in version order."""
    from core.tables import AREA_MODULES

    extra = [m.MIGRATION for m in AREA_MODULES if m.MIGRATION is not None]
    out = tuple(sorted((*MIGRATIONS, *extra), key=lambda m: m.version))
    versions = [m.version for m in out]
    if versions != list(range(1, len(out) + 1)):
        raise RuntimeError(f"migration versions must be 1..N without gaps, got {versions}")
    return out


def latest_version() -> int:
    return all_migrations()[-1].version


def fresh_schema_sql() -> str:
    """The DDL of a new store at the latest schema, as one batch (no `schema_version` rows).

    The same catalogue as running every migration on an empty store: a shipped migration's
    rebuilds and added columns only bring an older store to the current declarations, which a
    new store is created with.
    """
    from core.schema import table

    names: list[str] = []
    for migration in all_migrations():
        for name in migration.tables:
            final = FRESH_RENAMED.get(name, name)
            if final not in names:
                names.append(final)
    return ";\n".join([*(table(n).create_sql() for n in names), *FRESH_VIEWS])
