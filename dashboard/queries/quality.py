"""Qualidade dos dados: what the figures rest on, before anyone reads them as facts.

Reads `avl_coverage` (per day, operator and vehicle: reporting or dark), `feed_outages`
(operator AVL feed outages, BG art. 25), `quarantine` (every rejected input record) and
`trip_crowding` (loads above a physical maximum: counting or placement errors, not crowding).
Returns small frames for the page's tables; nothing here judges an operator.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import ALL


def _operator_filter(operator_id: str, alias: str = "") -> tuple[str, list[Any]]:
    if operator_id == ALL:
        return "", []
    return f" AND {alias}operator_id = ?", [operator_id]


def read_coverage_days(store: Store, start: date, end: date, operator_id: str) -> pl.DataFrame:
    """GPS coverage per service day and operator: `service_date`, `operator_id`,
    `n_vehicles` (registered or reporting), `n_reporting` (sent at least one fix), `n_dark`
    (registered, not reserve, and silent all day), `n_pings`, `reporting_share`
    (n_reporting / n_vehicles, 0-1), `n_outages` and `outage_s` (feed outages that day)."""
    extra, params = _operator_filter(operator_id, "c.")
    return store.query(
        "WITH c AS (SELECT service_date, operator_id, count(*)::INTEGER AS n_vehicles, "
        "count(*) FILTER (WHERE is_reporting)::INTEGER AS n_reporting, "
        "count(*) FILTER (WHERE NOT is_reporting AND NOT coalesce(is_reserve, false))::INTEGER "
        "AS n_dark, sum(n_pings)::BIGINT AS n_pings FROM avl_coverage c "
        f"WHERE service_date BETWEEN ? AND ?{extra} GROUP BY ALL), "
        "o AS (SELECT service_date, operator_id, count(*)::INTEGER AS n_outages, "
        "sum(duration_s)::BIGINT AS outage_s FROM feed_outages GROUP BY ALL) "
        "SELECT c.*, n_reporting / nullif(n_vehicles, 0) AS reporting_share, "
        "coalesce(o.n_outages, 0)::INTEGER AS n_outages, coalesce(o.outage_s, 0)::BIGINT "
        "AS outage_s FROM c LEFT JOIN o USING (service_date, operator_id) "
        "ORDER BY service_date, operator_id",
        [start, end, *params],
    )


def read_silent_vehicles(store: Store, start: date, end: date, operator_id: str) -> pl.DataFrame:
    """Registered vehicles silent on some day of the period, most silent first:
    `vehicle_id`, `operator_id`, `n_days` (days in `avl_coverage`), `n_dark_days` (days
    without any fix while not reserve), `last_ping_at` (UTC; null: never seen)."""
    extra, params = _operator_filter(operator_id)
    return store.query(
        "SELECT vehicle_id, operator_id, count(*)::INTEGER AS n_days, "
        "count(*) FILTER (WHERE NOT is_reporting AND NOT coalesce(is_reserve, false))::INTEGER "
        "AS n_dark_days, max(last_ping_at) AS last_ping_at FROM avl_coverage "
        f"WHERE service_date BETWEEN ? AND ?{extra} GROUP BY ALL HAVING n_dark_days > 0 "
        "ORDER BY n_dark_days DESC, vehicle_id",
        [start, end, *params],
    )


def read_feed_outages(store: Store, start: date, end: date, operator_id: str) -> pl.DataFrame:
    """The period's operator feed outages (BG art. 25): `service_date`, `operator_id`,
    `started_at`, `ended_at` (UTC), `duration_s`, `n_trips_not_evaluated`; longest first."""
    extra, params = _operator_filter(operator_id)
    return store.query(
        "SELECT service_date, operator_id, started_at, ended_at, duration_s, "
        f"n_trips_not_evaluated FROM feed_outages WHERE service_date BETWEEN ? AND ?{extra} "
        "ORDER BY duration_s DESC, service_date, operator_id",
        [start, end, *params],
    )


def read_quarantine_summary(store: Store) -> pl.DataFrame:
    """Rejected records by destination, source and reason: `target_table`, `source`,
    `reason`, `n_records`, `example_key` (the first record's line or message id) and
    `last_at` (UTC); most frequent first. The raw text is not returned (card numbers in it are
    masked, but this page is for counts)."""
    return store.query(
        "SELECT target_table, source, reason, count(*)::BIGINT AS n_records, "
        "min(record_key) AS example_key, max(quarantined_at) AS last_at FROM quarantine "
        "GROUP BY ALL ORDER BY n_records DESC, target_table, source, reason LIMIT 500"
    )


def read_implausible_loads(
    store: Store, start: date, end: date, route_ids: tuple[str, ...] | None, physical_max: float
) -> pl.DataFrame:
    """Runs whose peak load exceeds what the vehicle can physically carry: seats plus
    `physical_max` standees per m² of standing area (the profile's
    `crowding.standees_physical_max_per_m2`). `service_date`, `route_id`, `trip_id`,
    `vehicle_id`, `max_load`, `n_seats`, `physical_capacity`, `count_source`; worst first.
    These are counting or placement errors: flagged here, not shown as crowding facts."""
    if route_ids is not None and not route_ids:
        return pl.DataFrame()
    lines = ""
    params: list[Any] = [physical_max, start, end]
    if route_ids is not None:
        lines = f" AND route_id IN ({', '.join('?' for _ in route_ids)})"
        params.extend(route_ids)
    return store.query(
        "SELECT * FROM (SELECT service_date, route_id, trip_id, vehicle_id, max_load, n_seats, "
        "n_seats + coalesce(standing_area_m2, 0) * ? AS physical_capacity, count_source "
        f"FROM trip_crowding WHERE service_date BETWEEN ? AND ?{lines}) "
        "WHERE n_seats IS NOT NULL AND max_load > physical_capacity "
        "ORDER BY max_load - physical_capacity DESC, service_date, trip_id",
        params,
    )
