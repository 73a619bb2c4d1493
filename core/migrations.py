"""Versioned migrations of the store schema.

Migrations 1, 5 (data coverage and evidence), 6 (the fares key) and 7 (the key fingerprint) are
declared here; each derived-table module in `core.tables` declares its own (`MIGRATION`,
versions fixed in advance: matching 2, indices 3, crowding 4, raw-day digests 8). A migration creates the tables it names from their declarations (`CREATE TABLE IF NOT EXISTS`)
and then runs its SQL. Migrations are never edited once shipped: a column added to a declared
table later gets its own migration with ``ADD COLUMN IF NOT EXISTS``, which is a no-op on a
fresh store where the table was already created with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    tables: tuple[str, ...] = ()
    sql: tuple[str, ...] = ()


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
    # the next free number on this branch; renumber at merge
    Migration(
        10,
        "trip_outcomes: GPS silences credited inside a run (gps_gap_s, gps_gap_m)",
        sql=(
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS gps_gap_s INTEGER",
            "ALTER TABLE trip_outcomes ADD COLUMN IF NOT EXISTS gps_gap_m DOUBLE",
        ),
    ),
)


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
