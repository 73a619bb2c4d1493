"""`--trace`: the trips behind an indicator, with their share of it and their pings.

Reads trip_outcomes, trips_performed, vehicle_locations, gtfs_routes and vehicles of the store;
writes nothing. Entry points: `trace_indicator`, `read_trace_pings`.
"""

from __future__ import annotations

import polars as pl

from analytics.indices.data_coverage import split_evaluated
from analytics.indices.icv import compute_trip_flags
from analytics.indices.scopes import attach_scopes, compute_line_scopes
from core.errors import ConfigError
from core.periods import Period, parse_period
from core.profile import Profile
from core.register import read_register, to_register_latest
from core.schema import table
from core.store import Store

# -- traceability ------------------------------------------------------------------------------
# Which trip counters make an indicator's numerator and denominator (see icv.compute_trip_flags).
TRACE_COUNTERS: dict[str, tuple[str, str]] = {
    "icv_fulfilment": ("n_run", "n_eligible"),
    "icv_punctuality": ("n_on_time", "n_run"),
    "share_late": ("n_late", "n_run"),
    "share_early": ("n_early", "n_run"),
    "trips_programmed": ("n_programmed", "n_programmed"),
    "trips_justified": ("n_justified", "n_programmed"),
    "trips_run": ("n_run", "n_programmed"),
    "trips_suppressed": ("n_suppressed", "n_programmed"),
    "trips_partial": ("n_partial", "n_programmed"),
    "trips_broken_down": ("n_broken_down", "n_programmed"),
    "trips_late": ("n_late", "n_programmed"),
    "trips_early": ("n_early", "n_programmed"),
    "km_run": ("km_run", "n_programmed"),
    "km_programmed": ("km_programmed", "n_programmed"),
    "km_efficiency": ("km_run", "km_programmed"),
    "breakdowns_per_10000_km": ("km_run", "km_run"),
    "mkbf_km": ("km_run", "km_run"),
    "icv_score": ("n_programmed", "n_programmed"),
}


def trace_indicator(
    store: Store, profile: Profile, scope: str, scope_id: str, period: str | Period, indicator: str
) -> pl.DataFrame:
    """The trip_outcomes rows behind an indicator, with their share of it and their pings.

    Returns the trip_outcomes columns plus operator_id, lot_id, in_numerator and
    in_denominator (the trip's contribution: 0/1 for counts, km for km indicators), and from
    trips_performed: started_at, ended_at, n_pings, first_ping_id, last_ping_id of the run.
    Σ in_numerator and Σ in_denominator equal the stored numerator and denominator.
    """
    if indicator not in TRACE_COUNTERS:
        raise ConfigError(
            f"indicator {indicator!r} is not traced to trips",
            where="--trace",
            hint="traceable: " + ", ".join(sorted(TRACE_COUNTERS)),
        )
    per = parse_period(period) if isinstance(period, str) else period
    outcomes = store.read("trip_outcomes", "service_date BETWEEN ? AND ?", per.days())
    scopes = compute_line_scopes(
        store.read("gtfs_routes").unique("route_id", keep="last"),
        outcomes,
        to_register_latest(read_register(store, per.start, per.end)),
    )
    # not_evaluated trips are in no index (analytics.indices.data_coverage)
    flags = attach_scopes(
        compute_trip_flags(split_evaluated(outcomes), profile.trips.excused_outcomes), scopes
    ).with_columns((pl.col("n_programmed") - pl.col("n_justified")).alias("n_eligible"))
    key = {"system": None, "operator": "operator_id", "lot": "lot_id", "line": "route_id"}
    if scope not in key:
        raise ConfigError(
            f"unknown scope {scope!r}",
            where="--scope",
            hint="system, operator:ID, lot:ID or line:ID",
        )
    col = key[scope]
    rows = flags if col is None else flags.filter(pl.col(col) == scope_id)
    num, den = TRACE_COUNTERS[indicator]
    runs = store.read("trips_performed", "service_date BETWEEN ? AND ?", per.days()).select(
        "service_date",
        "vehicle_id",
        "run_index",
        "started_at",
        "ended_at",
        pl.col("n_pings").alias("run_n_pings"),
        pl.col("first_ping_id").alias("run_first_ping_id"),
        pl.col("last_ping_id").alias("run_last_ping_id"),
    )
    out = rows.with_columns(
        pl.col(num).cast(pl.Float64).alias("in_numerator"),
        pl.col(den).cast(pl.Float64).alias("in_denominator"),
    ).join(runs, on=["service_date", "vehicle_id", "run_index"], how="left")
    keep = [*table("trip_outcomes").column_names]
    keep = [c for c in keep if c not in ("pontual_version", "profile_id")]
    return out.select(
        *keep,
        "operator_id",
        "lot_id",
        "in_numerator",
        "in_denominator",
        "started_at",
        "ended_at",
        "run_n_pings",
        "run_first_ping_id",
        "run_last_ping_id",
    ).sort("service_date", "planned_start_at", "trip_id")


def read_trace_pings(store: Store, trace: pl.DataFrame) -> pl.DataFrame:
    """The vehicle_locations rows of the traced runs: ping_id, vehicle_id, event_at, lat, lon,
    plus the service_date and trip_id they belong to (pings between the run's first and last
    ping instants)."""
    runs = trace.filter(pl.col("started_at").is_not_null()).select(
        "service_date", "trip_id", "vehicle_id", "run_first_ping_id", "run_last_ping_id"
    )
    if runs.height == 0:
        return pl.DataFrame(
            schema={
                "ping_id": pl.Int64,
                "vehicle_id": pl.String,
                "event_at": pl.Datetime("us", "UTC"),
            }
        )
    store.con.register("_trace_runs", runs.to_arrow())
    try:
        return store.query(
            """
            WITH bounds AS (
              SELECT r.service_date, r.trip_id, r.vehicle_id,
                     f.event_at AS first_at, l.event_at AS last_at
              FROM _trace_runs r
              JOIN vehicle_locations f ON f.ping_id = r.run_first_ping_id
              JOIN vehicle_locations l ON l.ping_id = r.run_last_ping_id)
            SELECT b.service_date, b.trip_id, p.ping_id, p.vehicle_id, p.event_at, p.lat, p.lon
            FROM bounds b JOIN vehicle_locations p
              ON p.vehicle_id = b.vehicle_id AND p.event_at BETWEEN b.first_at AND b.last_at
            ORDER BY b.service_date, b.trip_id, p.event_at
            """
        )
    finally:
        store.con.unregister("_trace_runs")
