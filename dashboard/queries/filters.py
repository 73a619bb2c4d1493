"""The sidebar filters every page shares (`dashboard.state.render_filters`): periods,
operators and lots, lines, and the feed's time zone.

Reads `indicators` (periods, operator scopes), `trip_outcomes` (months with trips, lines an
operator's vehicles ran), `vehicles` (operators and lots), `gtfs_routes` with
`feed_versions` (lines, time zone). Returns small frames and lists; `read_routes` is also the
reports' list of lines.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.periods import parse_period
from core.register import in_force_sql
from core.store import Store
from dashboard.queries.snapshot import ALL


def compute_scope(operator_id: str, lot_id: str, route_id: str) -> tuple[str, str]:
    """The `indicators` scope a filter selection reads: the narrowest chosen one."""
    if route_id != ALL:
        return "line", route_id
    if lot_id != ALL:
        return "lot", lot_id
    if operator_id != ALL:
        return "operator", operator_id
    return "system", ALL


def read_periods(store: Store) -> pl.DataFrame:
    """Periods planners can pick, newest first: `period` (its label, `core.periods`),
    `n_days` (its length, days).

    The periods of the `indicators` table, plus every month with trip outcomes.
    """
    stored = store.query('SELECT DISTINCT "period" FROM indicators')["period"].to_list()
    labels = sorted({*stored, *read_outcome_months(store)})
    periods = [parse_period(label) for label in labels]
    out = pl.DataFrame(
        {
            "period": [p.label for p in periods],
            "start": [p.start for p in periods],
            "n_days": [p.n_days for p in periods],
        },
        schema={"period": pl.String, "start": pl.Date, "n_days": pl.Int32},
    )
    # Months first (what planners open every morning), then years and other spans.
    return out.sort(
        [pl.col("n_days").is_between(28, 31).not_(), "start"], descending=[False, True]
    ).select("period", "n_days")


def read_outcome_months(store: Store, year: int | None = None) -> list[str]:
    """The months ('2026-03') from the first to the last service day of `trip_outcomes`
    (of `year` when given). From min/max, which DuckDB answers from its zone maps, not a
    DISTINCT over every trip (0.4 s on a year of a 300-bus city)."""
    where, params = "", []
    if year is not None:
        where, params = (
            " WHERE service_date BETWEEN ? AND ?",
            [date(year, 1, 1), date(year, 12, 31)],
        )
    first, last = store.query(
        f"SELECT min(service_date) AS a, max(service_date) AS b FROM trip_outcomes{where}",
        params,
    ).row(0)
    if first is None:
        return []
    months = pl.date_range(first.replace(day=1), last, "1mo", eager=True)
    return months.dt.strftime("%Y-%m").to_list()


def read_operators(store: Store) -> pl.DataFrame:
    """Operators and their lots: `operator_id`, `lot_id` (null: no lot), from the fleet
    register and the operator scopes of `indicators`."""
    return (
        store.query(
            "SELECT DISTINCT operator_id, lot_id FROM vehicles UNION "
            "SELECT DISTINCT scope_id AS operator_id, NULL::VARCHAR AS lot_id "
            "FROM indicators WHERE scope = 'operator'"
        )
        .cast({"operator_id": pl.String, "lot_id": pl.String})
        .sort("operator_id", "lot_id", nulls_last=True)
    )


def read_routes(store: Store) -> pl.DataFrame:
    """Lines of the latest loaded feed that has each: `route_id`, `agency_id`,
    `route_short_name`, `route_long_name`, sorted by `route_id`."""
    return (
        store.query(
            "SELECT r.route_id, r.agency_id, r.route_short_name, r.route_long_name "
            "FROM gtfs_routes r LEFT JOIN feed_versions f USING (feed_id) "
            "ORDER BY f.loaded_at DESC NULLS LAST"
        )
        .unique("route_id", keep="first", maintain_order=True)
        .sort("route_id")
    )


def read_lines(store: Store) -> pl.DataFrame:
    """Lines as the filters list them: `route_id`, `route_short_name`, `route_long_name`,
    `agency_id`, `label` ('short — long name'), sorted by short name."""
    label = pl.concat_str(
        [
            pl.coalesce("route_short_name", "route_id"),
            pl.when(pl.col("route_long_name").is_not_null())
            .then(pl.lit(" — ") + pl.col("route_long_name"))
            .otherwise(pl.lit("")),
        ]
    )
    return (
        read_routes(store)
        .select("route_id", "route_short_name", "route_long_name", "agency_id")
        .with_columns(label.alias("label"))
        .sort("route_short_name", "route_id")
    )


def read_timezone(store: Store, default: str) -> str:
    """The feed's IANA time zone (latest loaded feed), else `default` (the profile's)."""
    rows = store.query("SELECT timezone FROM feed_versions ORDER BY loaded_at DESC LIMIT 1")
    return str(rows["timezone"][0]) if rows.height else default


def read_route_ids(store: Store, operator_id: str, lot_id: str) -> list[str] | None:
    """Lines run by an operator / lot (None: no restriction). A line belongs to an operator
    when its GTFS agency is the operator or when the operator's vehicles ran it."""
    if operator_id == ALL and lot_id == ALL:
        return None
    ids: set[str] = set()
    if operator_id != ALL:
        rows = store.query(
            "SELECT DISTINCT route_id FROM gtfs_routes WHERE agency_id = ?", [operator_id]
        )
        ids.update(rows["route_id"].to_list())
    where, params = [], []
    if operator_id != ALL:
        where.append("v.operator_id = ?")
        params.append(operator_id)
    if lot_id != ALL:
        where.append("v.lot_id = ?")
        params.append(lot_id)
    rows = store.query(
        # the vehicle's owner on the day it ran the trip (core.register)
        "SELECT DISTINCT o.route_id FROM trip_outcomes o JOIN vehicles v "
        f"ON v.vehicle_id = o.vehicle_id AND {in_force_sql('v', 'o.service_date')} "
        "WHERE " + " AND ".join(where),
        params,
    )
    ids.update(rows["route_id"].to_list())
    return sorted(ids)
