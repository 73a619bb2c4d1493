"""Exports: the store's data in the open formats other systems read.

Reads (store): the raw and derived tables. Writes: files outside the store.
- `tides`: the TIDES tables (vehicle_locations, trips_performed, stop_visits, passenger_events,
  fare_transactions, vehicles, operators) as CSV with a data-package descriptor
  (`pontual export tides`); `validate` checks such a package against the TIDES schemas
  (Frictionless, offline).
- The partitioned Parquet lake lives in `core.lake` (the store's other home):
  `pontual export parquet` / `pontual lake export`.
"""
