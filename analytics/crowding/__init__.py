"""Crowding: how full each bus was, stop by stop.

Reads (store): `fare_transactions` (taps), `stop_visits`, `trips_performed`, `scheduled_trips`,
`gtfs_stop_times`, `gtfs_stops`, `vehicles` (seats, standing area), `passenger_counts` (APC).
Writes (store): `tap_placements`, `trip_loads`, `trip_crowding`, `crowding_summary` of the days.
Entry points: `job.run_crowding` (store in, store out, a day at a time), `job.compute_crowding`
(frames in, frames out), `job.compute_crowding_by_day` (the same rows, the taps read by slice).

Flow: `boardings` (each tap placed at a stop visit of the vehicle's run) -> `alightings`
(trip chaining: where the card's next boarding says it got off) -> `loads` (load and
standees per m² between stops, scaled to the taps that could not be chained).
"""

# First of all: numba's cache in the user cache folder before a kernel module imports numba
# (core/kernel_cache.py; a read-only install would otherwise compile the kernels every run).
from core import kernel_cache as kernel_cache
