"""Indices: what the law measures, per period and scope.

Reads (store): `trip_outcomes`, `trips_performed`, `breakdowns`, `headway_observations`,
`scheduled_trips`, `fare_transactions`, `vehicles`, `incidents`, `iqs_surveys`, `gtfs_routes`,
`gtfs_stops`, earlier `indicators`/`annual_grades`/`suggested_infractions`; optionally a cost
per km CSV and a population CSV.
Writes (store): `indicators` (long format), `fleet_days`, `annual_grades`,
`suggested_infractions` of the period.
Entry points: `job.run_indices` (store in, store out; `job.run_indices_each` for a year's
months then the year, reading the taps and days once), `job.compute_index_results` (frames in,
frames out) and `trace.trace_indicator` (`--trace`: the trips behind a value).

Modules: `icv` (fulfilment, punctuality, breakdowns, ICV score), `km` (km run / programmed),
`ridership` (passengers, IPK, integrations), `fleet` (age, inspections, reserve), `coverage`
(stops within walking distance), `grades` (IQS, annual score, A-E), `infractions` (Anexo I
suggestions), `scopes` (system / operator / lot / line of each trip), `tap_kernels` (the
compiled passes over a span's taps in time order: card codes, integration chains, fare
suspects).
"""

# First of all: numba's cache in the user cache folder before a kernel module imports numba
# (core/kernel_cache.py; a read-only install would otherwise compile the kernels every run).
from core import kernel_cache as kernel_cache
