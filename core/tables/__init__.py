"""Every table declaration of Pontual; importing this package registers them all.

- `system`: schema_version, ingest_runs, quarantine
- `reference`: the loaded GTFS feed versions, `gtfs_*` tables, `scheduled_trips` (a view over
  `scheduled_timetable_trips` and `scheduled_frequency_trips`), `vehicles`
- `observed`: append-only inputs (pings, fare taps, counts, incidents, surveys)
- `matching`, `indices`, `crowding`: derived tables, each module with the migration that
  creates them (versions 2, 3 and 4)
- `evidence`: raw_day_digests, the content digest of each day's raw data (version 8), and
  archived_days, the raw days moved into the lake (version 12, `core.migrations`), and
  raw_day_fingerprints, each raw day's current digest and row fingerprint (version 15)
- `live`: the live feed's prediction log and its accuracy (version 9)
"""

from core.tables import crowding, evidence, indices, live, matching, observed, reference, system

AREA_MODULES = (matching, indices, crowding, evidence, live)

__all__ = [
    "AREA_MODULES",
    "crowding",
    "evidence",
    "indices",
    "live",
    "matching",
    "observed",
    "reference",
    "system",
]
