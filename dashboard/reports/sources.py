"""What the reports read from the store (a read-only store or the published snapshot).

Each reader returns the rows of one period, with only the columns the reports use; the
builders pass every frame they read to the reproducibility hash.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import polars as pl

from analytics.indices.scopes import compute_line_scopes
from core.store import Store

FARE_CLASS_LABELS = {
    "full": "Inteira",
    "student": "Estudante",
    "elderly": "Idoso",
    "disabled": "Pessoa com deficiência",
    "vale_transporte": "Vale-transporte",
    "integration": "Integração",
    "exempt": "Isento",
    "other": "Outros",
}
"""Payment forms as the monthly report names them (BG art. 62-VII)."""


def _table_exists(store: Store, name: str) -> bool:
    rows = store.query(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = ?", [name]
    )
    return bool(rows["n"][0])


def local_bounds(start: date, end: date, timezone: str) -> tuple[datetime, datetime]:
    """UTC instants of `start`'s local midnight and of the midnight after `end`."""
    zone = ZoneInfo(timezone)
    lo = datetime.combine(start, time(0), zone).astimezone(UTC)
    hi = datetime.combine(end + timedelta(days=1), time(0), zone).astimezone(UTC)
    return lo, hi


def read_outcomes(store: Store, start: date, end: date) -> pl.DataFrame:
    """trip_outcomes of the service days start..end (every column; the ICV flags need them)."""
    return store.read("trip_outcomes", "service_date BETWEEN ? AND ?", [start, end]).sort(
        "service_date", "trip_id"
    )


def read_routes(store: Store) -> pl.DataFrame:
    """route_id, agency_id, route_short_name, route_long_name (last loaded feed wins)."""
    return (
        store.read("gtfs_routes")
        .unique("route_id", keep="last")
        .select("route_id", "agency_id", "route_short_name", "route_long_name")
        .sort("route_id")
    )


def read_vehicles(store: Store) -> pl.DataFrame:
    """The fleet register: vehicle_id, operator_id, lot_id."""
    return store.read("vehicles").select("vehicle_id", "operator_id", "lot_id").sort("vehicle_id")


def read_taps(store: Store, start: date, end: date, timezone: str) -> pl.DataFrame:
    """Fare taps of the local days start..end: transaction_id, event_at, route_id, card_hash,
    fare_class, and month (first day of the tap's local month, a Date)."""
    lo, hi = local_bounds(start, end, timezone)
    taps = store.query(
        "SELECT transaction_id, event_at, route_id, card_hash, fare_class FROM fare_transactions "
        "WHERE event_at >= ? AND event_at < ? ORDER BY transaction_id",
        [lo, hi],
    )
    if taps.height == 0:
        taps = pl.DataFrame(
            schema={
                "transaction_id": pl.String,
                "event_at": pl.Datetime("us", "UTC"),
                "route_id": pl.String,
                "card_hash": pl.String,
                "fare_class": pl.String,
            }
        )
    return taps.with_columns(
        pl.col("event_at").cast(pl.Datetime("us", "UTC")),
        pl.col("event_at")
        .dt.convert_time_zone(timezone)
        .dt.date()
        .dt.truncate("1mo")
        .alias("month"),
    )


def compute_scopes(
    routes: pl.DataFrame, outcomes: pl.DataFrame, vehicles: pl.DataFrame
) -> pl.DataFrame:
    """Operator and lot of every line, by the rule the indices use (analytics.indices.scopes)."""
    return compute_line_scopes(routes, outcomes, vehicles)


def read_indicators(store: Store, scope: str, scope_id: str, periods: list[str]) -> pl.DataFrame:
    """`indicators` rows of one scope for the periods: period, indicator, numerator,
    denominator, value, unit, source."""
    if not periods:
        return pl.DataFrame(
            schema={
                "period": pl.String,
                "indicator": pl.String,
                "numerator": pl.Float64,
                "denominator": pl.Float64,
                "value": pl.Float64,
                "unit": pl.String,
                "source": pl.String,
            }
        )
    return store.query(
        "SELECT period, indicator, numerator, denominator, value, unit, source FROM indicators "
        "WHERE scope = ? AND scope_id = ? AND list_contains(?, period) "
        "ORDER BY period, indicator",
        [scope, scope_id, periods],
    )


def read_optional(
    store: Store, name: str, where_sql: str = "", params: list[object] | None = None
) -> pl.DataFrame:
    """Rows of a derived table that may not exist yet in an older store (empty frame then)."""
    if not _table_exists(store, name):
        from core.schema import table

        return table(name).empty()
    return store.read(name, where_sql, list(params or []))


def read_scheduled_counts(store: Store, start: date, end: date) -> pl.DataFrame:
    """Scheduled trips per service day and line: service_date, route_id, n_scheduled."""
    return store.query(
        "SELECT service_date, route_id, count(*) AS n_scheduled FROM scheduled_trips "
        "WHERE service_date BETWEEN ? AND ? GROUP BY ALL ORDER BY ALL",
        [start, end],
    ).with_columns(pl.col("service_date").cast(pl.Date), pl.col("n_scheduled").cast(pl.Int64))
