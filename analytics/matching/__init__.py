"""Matching: which scheduled trip each vehicle ran, and how.

Reads (store): `vehicle_locations` (pings), `scheduled_trips`, `gtfs_stop_times`, `gtfs_shapes`,
`gtfs_stops`, `feed_versions` (the metric CRS) and `incidents` of one service day.
Writes (store): `trips_performed`, `stop_visits`, `trip_outcomes`, `breakdowns`,
`headway_observations` of that day, replacing the day's rows.
Entry points: `day.run_match_days` (a range of days, store in, store out: a pipeline, ADR 0005
addenda), `day.run_match_day` (one day) and `day.match_day` (frames in, `DayResult` out:
`day.match_partitions`, the vehicle batches, then `day.assemble_partitions`, the day);
`batches.match_vehicles` is the partition step the live engine reuses.

Flow: `clean` (order, duplicates, spikes) -> `project` (shape passes near each ping, on the
`shape_grid` of the `network`) -> `runs` (+ `stretches`: runs between terminals) -> `assign`
(runs to trips, exclusive per day) -> `stop_visits` (the `crossings` rule) -> `outcomes`,
`breakdowns`, `headways`; `outcomes` also reads the day's `trip_context` (data `coverage`:
feed outages, watched and dark vehicles; `evidence` besides GPS: ticketing, inspections). `batches` cuts the day into vehicle batches and runs the partition
steps in threads or processes; `day` assembles the day. `disagreements` scores outcomes
against a simulator's truth.
"""

# First of all: point numba's cache at the user cache folder before any kernel module imports
# numba (a package's __init__ runs before its modules; an import in each kernel module would be
# sorted after `import numba`).
from core import kernel_cache as kernel_cache
