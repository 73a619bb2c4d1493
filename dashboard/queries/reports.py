"""What only the reports read (the pages show none of it): fare taps, and the monthly counts
of scheduled and judged trips behind the annual dossier's data completeness.

Reads `fare_transactions` (by the local day of the tap), `scheduled_trips` and
`trip_outcomes` (counts per month and line), `iqs_surveys` (a year's surveys). The reports'
other readers are the pages' own (`dashboard.queries.*`).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from core.instants import UTC_INSTANT
from core.periods import Period, local_bounds
from core.store import Store

TAP_SCHEMA: dict[str, Any] = {
    "transaction_id": pl.String,
    "event_at": UTC_INSTANT,
    "route_id": pl.String,
    "card_hash": pl.String,
    "fare_class": pl.String,
}


def read_taps(store: Store, period: Period, timezone: str) -> pl.DataFrame:
    """Fare taps of the local days of `period`: `transaction_id`, `event_at` (UTC),
    `route_id`, `card_hash`, `fare_class`, and `month` (first day of the tap's local month,
    a Date)."""
    lo, hi = local_bounds(period, timezone)
    taps = store.query(
        "SELECT transaction_id, event_at, route_id, card_hash, fare_class FROM fare_transactions "
        "WHERE event_at >= ? AND event_at < ? ORDER BY transaction_id",
        [lo, hi],
    )
    if taps.height == 0:
        taps = pl.DataFrame(schema=TAP_SCHEMA)
    return taps.with_columns(
        pl.col("event_at").cast(UTC_INSTANT),
        pl.col("event_at")
        .dt.convert_time_zone(timezone)
        .dt.date()
        .dt.truncate("1mo")
        .alias("month"),
    )


def read_monthly_scheduled(store: Store, period: Period) -> pl.DataFrame:
    """Scheduled trips per month and line of `period`: `month` (Date, first day),
    `route_id`, `n_scheduled`."""
    return store.query(
        "SELECT CAST(date_trunc('month', service_date) AS DATE) AS month, route_id, "
        "count(*) AS n_scheduled FROM scheduled_trips WHERE service_date BETWEEN ? AND ? "
        "GROUP BY ALL ORDER BY ALL",
        [period.start, period.end],
    )


def read_monthly_judged(store: Store, period: Period) -> pl.DataFrame:
    """Judged trips per month and line of `period` (`trip_outcomes`): `month` (Date),
    `route_id`, `n_with_outcome`, `n_with_gps` (with at least one ping of a run behind)."""
    return store.query(
        "SELECT CAST(date_trunc('month', service_date) AS DATE) AS month, route_id, "
        "count(*) AS n_with_outcome, count(first_ping_id) AS n_with_gps FROM trip_outcomes "
        "WHERE service_date BETWEEN ? AND ? GROUP BY ALL ORDER BY ALL",
        [period.start, period.end],
    )


def read_year_surveys(store: Store, year: int) -> pl.DataFrame:
    """The IQS surveys of `year` (`iqs_surveys`, every column, declared dtypes)."""
    return store.read("iqs_surveys").filter(pl.col("period").str.starts_with(f"{year:04d}"))
