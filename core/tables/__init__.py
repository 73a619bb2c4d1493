"""Every table declaration of Pontual; importing this package registers them all.

- `system`: schema_version, ingest_runs, quarantine
- `reference`: the loaded GTFS feed versions, `gtfs_*` tables, `scheduled_trips`, `vehicles`
- `observed`: append-only inputs (pings, fare taps, counts, incidents, surveys)
- `derived`: what the analytics jobs compute (added by their migrations)
"""

from core.tables import derived, observed, reference, system

__all__ = ["derived", "observed", "reference", "system"]
