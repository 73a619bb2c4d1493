"""Versioned migrations of the store schema.

Migration 1 is declared here; each derived-table module in `core.tables` declares its own
(`MIGRATION`, versions fixed in advance: matching 2, indices 3, crowding 4, evidence 5). A migration creates the tables it names from their declarations (`CREATE TABLE IF NOT EXISTS`)
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
