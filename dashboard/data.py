"""What the dashboard reads from the store's published snapshot, as Polars frames.

Pure functions over an open read-only `Store` (the snapshot, `core.store.open_snapshot`): the
dashboard never opens the store file itself, so it never takes the writer's lock. No streamlit
here; the pages cache these results keyed on the snapshot's modification time.

Tables written by other jobs may be absent (not yet migrated) or empty; every reader then
returns an empty frame and the page says which command fills it. Readers of the derived tables
of the indices and crowding jobs select only the columns they find, so the dashboard keeps
working while those declarations evolve.
"""

from __future__ import annotations

from calendar import monthrange
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from core.store import Store, snapshot_path

ALL = ""
"""The filter value meaning 'no filter' (all operators, lots, lines)."""

OUTCOME_LABELS: dict[str, str] = {
    "on_time": "no horário",
    "late": "atrasada",
    "early": "adiantada",
    "partial": "parcial",
    "suppressed": "suprimida",
    "broken_down": "quebra",
    "not_evaluated": "não avaliada — sem dados",
}
"""Trip outcomes in the laws' words (BG art. 57-I)."""


# -- the snapshot ---------------------------------------------------------------------------
def read_snapshot_mtime(store_path: str | Path) -> float:
    """Modification time of the published snapshot (0.0 when none): the cache key."""
    snap = snapshot_path(Path(store_path))
    return snap.stat().st_mtime if snap.exists() else 0.0


def read_tables(store: Store) -> dict[str, set[str]]:
    """Every table of the snapshot with its column names."""
    rows = store.query(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
    )
    out: dict[str, set[str]] = {}
    for name, column in rows.iter_rows():
        out.setdefault(name, set()).add(column)
    return out


def _columns(store: Store, name: str) -> set[str]:
    return read_tables(store).get(name, set())


def _select(
    store: Store,
    name: str,
    equal: Mapping[str, object] | None = None,
    between: tuple[str, object, object] | None = None,
    order_by: Sequence[str] = (),
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Rows of table `name` (empty frame when absent); conditions on columns it lacks are
    ignored, and ALL / None values mean no condition."""
    present = _columns(store, name)
    if not present:
        return pl.DataFrame()
    where, params = [], []
    for column, value in (equal or {}).items():
        if column in present and value is not None and value != ALL:
            where.append(f'"{column}" = ?')
            params.append(value)
    if between and between[0] in present:
        where.append(f'CAST("{between[0]}" AS DATE) BETWEEN ? AND ?')
        params += [between[1], between[2]]
    wanted = [c for c in columns if c in present] if columns else None
    sql = "SELECT " + (", ".join(f'"{c}"' for c in wanted) if wanted else "*") + " "
    sql += f'FROM "{name}"' + (" WHERE " + " AND ".join(where) if where else "")
    order = [f'"{c}"' for c in order_by if c in present]
    if order:
        sql += " ORDER BY " + ", ".join(order)
    return store.query(sql, params)


# -- periods --------------------------------------------------------------------------------
def compute_period_dates(period: str) -> tuple[date, date]:
    """First and last service day of a period id: '2026-03', '2026', '2026-S1',
    'YYYY-MM-DD' or 'YYYY-MM-DD..YYYY-MM-DD'."""
    if ".." in period:
        start, end = period.split("..", 1)
        return date.fromisoformat(start), date.fromisoformat(end)
    if "-S" in period:
        year, half = int(period[:4]), int(period.split("-S", 1)[1])
        return (
            (date(year, 1, 1), date(year, 6, 30))
            if half == 1
            else (
                date(year, 7, 1),
                date(year, 12, 31),
            )
        )
    if len(period) == 4:
        return date(int(period), 1, 1), date(int(period), 12, 31)
    if len(period) == 7:
        year, month = int(period[:4]), int(period[5:])
        return date(year, month, 1), date(year, month, monthrange(year, month)[1])
    day = date.fromisoformat(period)
    return day, day


def compute_previous_period(period: str) -> str:
    """The period just before, of the same kind: '2026-03' -> '2026-02', '2026' -> '2025'."""
    if ".." in period:
        start, end = compute_period_dates(period)
        length = end - start
        prev_end = start - timedelta(days=1)
        return f"{prev_end - length}..{prev_end}"
    if "-S" in period:
        year, half = int(period[:4]), int(period.split("-S", 1)[1])
        return f"{year - 1}-S2" if half == 1 else f"{year}-S1"
    if len(period) == 4:
        return str(int(period) - 1)
    if len(period) == 7:
        year, month = int(period[:4]), int(period[5:])
        return f"{year - 1}-12" if month == 1 else f"{year}-{month - 1:02d}"
    return str(date.fromisoformat(period) - timedelta(days=1))


def read_periods(store: Store) -> pl.DataFrame:
    """Periods planners can pick, newest first: `period` (id), `n_days` (its length, days).

    The months and years of the `indicators` table, plus every month with trip outcomes.
    """
    frames = []
    if _columns(store, "indicators"):
        frames.append(store.query('SELECT DISTINCT "period" FROM indicators'))
    if _columns(store, "trip_outcomes"):
        frames.append(
            pl.DataFrame({"period": read_outcome_months(store)}, schema={"period": pl.String})
        )
    if not frames:
        return pl.DataFrame(schema={"period": pl.String, "n_days": pl.Int32})
    periods = pl.concat(frames).unique()["period"].to_list()
    spans = [compute_period_dates(p) for p in periods]
    out = pl.DataFrame(
        {
            "period": periods,
            "start": [s for s, _ in spans],
            "n_days": [(e - s).days + 1 for s, e in spans],
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


# -- who and what: operators, lots, lines ------------------------------------------------
def read_operators(store: Store) -> pl.DataFrame:
    """Operators and their lots: `operator_id`, `lot_id` (null: no lot), from the fleet
    register and the operator/lot scopes of `indicators`."""
    frames = [pl.DataFrame(schema={"operator_id": pl.String, "lot_id": pl.String})]
    if _columns(store, "vehicles"):
        frames.append(store.query("SELECT DISTINCT operator_id, lot_id FROM vehicles"))
    if _columns(store, "indicators"):
        ops = store.query(
            "SELECT DISTINCT scope_id AS operator_id, NULL::VARCHAR AS lot_id "
            "FROM indicators WHERE scope = 'operator'"
        )
        frames.append(ops)
    return pl.concat(frames).unique().sort("operator_id", "lot_id", nulls_last=True)


def read_lines(store: Store) -> pl.DataFrame:
    """Lines: `route_id`, `route_short_name`, `route_long_name`, `agency_id`, `label`
    ('short — long name'), one row per route id (latest feed first)."""
    schema = {
        "route_id": pl.String,
        "route_short_name": pl.String,
        "route_long_name": pl.String,
        "agency_id": pl.String,
        "label": pl.String,
    }
    if not _columns(store, "gtfs_routes"):
        return pl.DataFrame(schema=schema)
    routes = store.query(
        "SELECT r.route_id, r.route_short_name, r.route_long_name, r.agency_id "
        "FROM gtfs_routes r LEFT JOIN feed_versions f USING (feed_id) "
        "ORDER BY f.loaded_at DESC NULLS LAST"
    ).unique("route_id", keep="first", maintain_order=True)
    label = pl.concat_str(
        [
            pl.coalesce("route_short_name", "route_id"),
            pl.when(pl.col("route_long_name").is_not_null())
            .then(pl.lit(" — ") + pl.col("route_long_name"))
            .otherwise(pl.lit("")),
        ]
    )
    return routes.with_columns(label.alias("label")).sort("route_short_name", "route_id")


def read_timezone(store: Store, default: str) -> str:
    """The feed's IANA time zone (latest loaded feed), else `default` (the profile's)."""
    if not _columns(store, "feed_versions"):
        return default
    rows = store.query("SELECT timezone FROM feed_versions ORDER BY loaded_at DESC LIMIT 1")
    return str(rows["timezone"][0]) if rows.height else default


def compute_scope(operator_id: str, lot_id: str, route_id: str) -> tuple[str, str]:
    """The `indicators` scope a filter selection reads: the narrowest chosen one."""
    if route_id != ALL:
        return "line", route_id
    if lot_id != ALL:
        return "lot", lot_id
    if operator_id != ALL:
        return "operator", operator_id
    return "system", ALL


def read_route_ids(store: Store, operator_id: str, lot_id: str) -> list[str] | None:
    """Lines run by an operator / lot (None: no restriction). A line belongs to an operator
    when its GTFS agency is the operator or when the operator's vehicles ran it."""
    if operator_id == ALL and lot_id == ALL:
        return None
    ids: set[str] = set()
    if operator_id != ALL and _columns(store, "gtfs_routes"):
        rows = store.query(
            "SELECT DISTINCT route_id FROM gtfs_routes WHERE agency_id = ?", [operator_id]
        )
        ids.update(rows["route_id"].to_list())
    if _columns(store, "trip_outcomes") and _columns(store, "vehicles"):
        where, params = [], []
        if operator_id != ALL:
            where.append("v.operator_id = ?")
            params.append(operator_id)
        if lot_id != ALL:
            where.append("v.lot_id = ?")
            params.append(lot_id)
        rows = store.query(
            "SELECT DISTINCT o.route_id FROM trip_outcomes o JOIN vehicles v USING (vehicle_id) "
            "WHERE " + " AND ".join(where),
            params,
        )
        ids.update(rows["route_id"].to_list())
    return sorted(ids)


# -- indicators (Visão geral) ----------------------------------------------------------------
def read_indicators(
    store: Store, scope: str, scope_id: str, periods: Sequence[str]
) -> pl.DataFrame:
    """`indicators` rows of one scope for some periods: period, indicator, numerator,
    denominator, value (and unit when declared)."""
    if not _columns(store, "indicators") or not periods:
        return pl.DataFrame()
    present = _columns(store, "indicators")
    cols = [
        c
        for c in ("period", "indicator", "numerator", "denominator", "value", "unit", "source")
        if c in present
    ]
    marks = ", ".join("?" for _ in periods)
    where = f"scope = ? AND period IN ({marks})"
    params: list[Any] = [scope, *periods]
    if scope != "system":
        where += " AND scope_id = ?"
        params.append(scope_id)
    return store.query(
        f"SELECT {', '.join(cols)} FROM indicators WHERE {where} ORDER BY indicator", params
    )


def build_changes(indicators: pl.DataFrame, period: str, previous: str) -> pl.DataFrame:
    """One row per indicator of `period`: `indicator`, `value`, `previous_value` (the same
    indicator in `previous`, null when absent) and `change` = value - previous_value, in the
    indicator's own unit (ratios stay ratios)."""
    schema = {
        "indicator": pl.String,
        "value": pl.Float64,
        "previous_value": pl.Float64,
        "change": pl.Float64,
    }
    if indicators.is_empty():
        return pl.DataFrame(schema=schema)
    now = indicators.filter(pl.col("period") == period).select("indicator", "value")
    before = indicators.filter(pl.col("period") == previous).select(
        "indicator", pl.col("value").alias("previous_value")
    )
    return (
        now.join(before, on="indicator", how="left")
        .with_columns((pl.col("value") - pl.col("previous_value")).alias("change"))
        .cast({"value": pl.Float64, "previous_value": pl.Float64, "change": pl.Float64})
    )


def read_outcome_counts(
    store: Store, start: date, end: date, route_ids: Sequence[str] | None, direction: int | None
) -> pl.DataFrame:
    """Trip outcomes per line over [start, end]: `route_id`, `n_programmed`, one `n_<outcome>`
    column per outcome, `n_justified` (trips covered by an approved incident)."""
    if not _columns(store, "trip_outcomes"):
        return pl.DataFrame()
    where: list[str] = ["service_date BETWEEN ? AND ?"]
    params: list[Any] = [start, end]
    if route_ids is not None:
        if not route_ids:
            return pl.DataFrame()
        where.append(f"route_id IN ({', '.join('?' for _ in route_ids)})")
        params += list(route_ids)
    if direction is not None:
        where.append("direction_id = ?")
        params.append(direction)
    counts = ", ".join(f"count(*) FILTER (WHERE outcome = '{o}') AS n_{o}" for o in OUTCOME_LABELS)
    return store.query(
        f"SELECT route_id, count(*) AS n_programmed, {counts}, "
        "count(*) FILTER (WHERE is_justified) AS n_justified "
        f"FROM trip_outcomes WHERE {' AND '.join(where)} GROUP BY route_id ORDER BY route_id",
        params,
    )


# -- Linhas ----------------------------------------------------------------------------------
def read_service_dates(store: Store, start: date, end: date) -> list[date]:
    """Service days with trip outcomes inside [start, end], newest first."""
    if not _columns(store, "trip_outcomes"):
        return []
    rows = store.query(
        "SELECT DISTINCT service_date FROM trip_outcomes WHERE service_date BETWEEN ? AND ? "
        "ORDER BY service_date DESC",
        [start, end],
    )
    return list(rows["service_date"].to_list())


def read_day_outcomes(
    store: Store, service_date: date, route_id: str, direction: int | None
) -> pl.DataFrame:
    """The `trip_outcomes` rows of one line on one day, in planned order."""
    return _select(
        store,
        "trip_outcomes",
        {"service_date": service_date, "route_id": route_id, "direction_id": direction},
        order_by=("planned_start_at",),
    )


def read_marey(
    store: Store, service_date: date, route_id: str, direction: int | None
) -> pl.DataFrame:
    """Time–distance points of a line's day: `trip_id`, `kind` ('programada' or 'realizada'),
    `at` (UTC instant), `dist_km` (distance along the itinerary, km), `vehicle_id`.

    Scheduled points come from the timetable (service-day reference = planned start instant
    minus planned start seconds, plus each stop time); actual points from `stop_visits`.
    """
    frames = []
    params: list[Any] = [service_date, route_id]
    dir_sql = ""
    if direction is not None:
        dir_sql = " AND s.direction_id = ?"
        params.append(direction)
    if _columns(store, "scheduled_trips") and _columns(store, "gtfs_stop_times"):
        frames.append(
            store.query(
                "SELECT s.trip_id, 'programada' AS kind, "
                "s.planned_start_at + to_seconds(coalesce(t.arrival_time_s, t.departure_time_s)"
                " - s.planned_start_s) AS at, t.shape_dist_m / 1000.0 AS dist_km, "
                "NULL::VARCHAR AS vehicle_id "
                "FROM scheduled_trips s JOIN gtfs_stop_times t "
                "ON t.feed_id = s.feed_id AND t.trip_id = s.template_trip_id "
                "WHERE s.service_date = ? AND s.route_id = ?" + dir_sql + " "
                "AND t.shape_dist_m IS NOT NULL",
                params,
            )
        )
    if _columns(store, "stop_visits") and _columns(store, "trip_outcomes"):
        frames.append(
            store.query(
                "SELECT v.trip_id, 'realizada' AS kind, coalesce(v.arrival_at, v.departure_at)"
                " AS at, v.stop_dist_m / 1000.0 AS dist_km, v.vehicle_id "
                "FROM stop_visits v JOIN trip_outcomes s "
                "ON s.service_date = v.service_date AND s.trip_id = v.trip_id "
                "AND s.vehicle_id = v.vehicle_id AND s.run_index = v.run_index "
                "WHERE v.service_date = ? AND s.route_id = ?" + dir_sql + " "
                "AND coalesce(v.arrival_at, v.departure_at) IS NOT NULL",
                params,
            )
        )
    frames = [f for f in frames if f.height]
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="vertical_relaxed").sort("kind", "trip_id", "at")


def read_headways(store: Store, start: date, end: date, route_id: str) -> pl.DataFrame:
    """`headway_observations` of one line over [start, end] (frequent lines only)."""
    return _select(
        store,
        "headway_observations",
        {"route_id": route_id},
        between=("service_date", start, end),
        order_by=("service_date", "direction_id", "hour_at"),
    )


# -- Viagem ----------------------------------------------------------------------------------
def read_trip_ids(store: Store, service_date: date, route_id: str) -> pl.DataFrame:
    """The trips of a line on a day: `trip_id`, `planned_start_at`, `outcome`."""
    return _select(
        store,
        "trip_outcomes",
        {"service_date": service_date, "route_id": route_id},
        order_by=("planned_start_at",),
        columns=("trip_id", "planned_start_at", "outcome", "direction_id"),
    )


def read_trip_outcome(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """The `trip_outcomes` row of one trip (0 or 1 row)."""
    return _select(store, "trip_outcomes", {"service_date": service_date, "trip_id": trip_id})


def read_trip_pings(
    store: Store, vehicle_id: str | None, first_ping_id: int | None, last_ping_id: int | None
) -> pl.DataFrame:
    """The pings of the run behind a trip outcome (its evidence ids first..last ping of its
    vehicle): `ping_id`, `event_at`, `lat`, `lon`, `speed_m_s`, `event_code`."""
    if vehicle_id is None or first_ping_id is None or last_ping_id is None:
        return pl.DataFrame()
    return store.query(
        "SELECT ping_id, event_at, lat, lon, speed_m_s, event_code FROM vehicle_locations "
        "WHERE vehicle_id = ? AND ping_id BETWEEN ? AND ? ORDER BY event_at",
        [vehicle_id, first_ping_id, last_ping_id],
    )


def read_trip_shape(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """The itinerary of a scheduled trip: `lat`, `lon`, `dist_m`, in order."""
    if not _columns(store, "scheduled_trips") or not _columns(store, "gtfs_shapes"):
        return pl.DataFrame()
    return store.query(
        "SELECT p.shape_pt_lat AS lat, p.shape_pt_lon AS lon, p.shape_dist_m AS dist_m "
        "FROM scheduled_trips s JOIN gtfs_shapes p "
        "ON p.feed_id = s.feed_id AND p.shape_id = s.shape_id "
        "WHERE s.service_date = ? AND s.trip_id = ? ORDER BY p.shape_pt_sequence",
        [service_date, trip_id],
    )


def read_trip_stops(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """The itinerary's stops with the timetable and, where run, the observed times:
    `stop_sequence`, `stop_id`, `stop_name`, `lat`, `lon`, `dist_m`, `planned_at` (UTC),
    `arrival_at` (UTC, null when not reached), `delay_s` (arrival minus planned, seconds),
    `is_interpolated`."""
    if not _columns(store, "scheduled_trips") or not _columns(store, "gtfs_stop_times"):
        return pl.DataFrame()
    has_visits = bool(_columns(store, "stop_visits"))
    observed = (
        "v.arrival_at, v.arrival_delay_s AS delay_s, v.is_interpolated "
        if has_visits
        else "NULL::TIMESTAMPTZ AS arrival_at, NULL::INTEGER AS delay_s, "
        "NULL::BOOLEAN AS is_interpolated "
    )
    # The counted run of the trip (trip_outcomes names it) when several runs served it.
    visits = (
        "LEFT JOIN (SELECT v.* FROM stop_visits v JOIN trip_outcomes o "
        "USING (service_date, trip_id, vehicle_id, run_index) "
        "WHERE v.service_date = ? AND v.trip_id = ?) v ON v.stop_sequence = t.stop_sequence "
        if has_visits
        else ""
    )
    params: list[Any] = [service_date, trip_id] if has_visits else []
    return store.query(
        "SELECT t.stop_sequence, t.stop_id, st.stop_name, st.stop_lat AS lat, st.stop_lon AS lon,"
        " t.shape_dist_m AS dist_m, s.planned_start_at + to_seconds("
        "coalesce(t.arrival_time_s, t.departure_time_s) - s.planned_start_s) AS planned_at, "
        + observed
        + "FROM scheduled_trips s JOIN gtfs_stop_times t "
        "ON t.feed_id = s.feed_id AND t.trip_id = s.template_trip_id "
        "LEFT JOIN gtfs_stops st ON st.feed_id = t.feed_id AND st.stop_id = t.stop_id "
        + visits
        + "WHERE s.service_date = ? AND s.trip_id = ? ORDER BY t.stop_sequence",
        [*params, service_date, trip_id],
    )


def read_incident(store: Store, incident_id: str | None) -> pl.DataFrame:
    """The incident that justifies a trip (0 or 1 row)."""
    if not incident_id:
        return pl.DataFrame()
    return _select(store, "incidents", {"incident_id": incident_id})


def read_trip_breakdowns(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """`breakdowns` rows that interrupted one trip."""
    return _select(store, "breakdowns", {"service_date": service_date, "trip_id": trip_id})


# -- Lotação ---------------------------------------------------------------------------------
def _route_filter(
    column: str, route_ids: Sequence[str] | None, where: list[str], params: list[Any]
) -> bool:
    """Add `column IN (...)` for a line restriction; False when the restriction is empty."""
    if route_ids is None:
        return True
    if not route_ids:
        return False
    where.append(f"{column} IN ({', '.join('?' for _ in route_ids)})")
    params.extend(route_ids)
    return True


def read_crowding_heatmap(
    store: Store,
    start: date,
    end: date,
    route_ids: Sequence[str] | None,
    direction: int | None,
    timezone: str,
) -> pl.DataFrame:
    """Share of trips over the crowding limit per line and local hour of departure, from
    `crowding_summary` (summed over the days and directions of the selection): `route_id`,
    `hour` (0-23, local), `n_trips`, `n_over_limit`, `over_limit_share` (0-1),
    `max_standees_per_m2` (worst run, passengers per m²), `extra_trips_needed` (summed over
    the days, art. 59 §1)."""
    if not _columns(store, "crowding_summary"):
        return pl.DataFrame()
    where: list[str] = ["service_date BETWEEN ? AND ?"]
    params: list[Any] = [start, end]
    if not _route_filter("route_id", route_ids, where, params):
        return pl.DataFrame()
    if direction is not None:
        where.append("direction_id = ?")
        params.append(direction)
    return store.query(
        f"SELECT route_id, hour(timezone(?, hour_at))::INTEGER AS hour, "
        "sum(n_trips)::INTEGER AS n_trips, sum(n_over_limit)::INTEGER AS n_over_limit, "
        "sum(n_over_limit) / sum(n_trips) AS over_limit_share, "
        "max(max_standees_per_m2) AS max_standees_per_m2, "
        "coalesce(sum(extra_trips_needed), 0)::INTEGER AS extra_trips_needed "
        f"FROM crowding_summary WHERE {' AND '.join(where)} "
        "GROUP BY ALL HAVING sum(n_trips) > 0 ORDER BY route_id, hour",
        [timezone, *params],
    )


def read_crowding_actions(
    store: Store,
    start: date,
    end: date,
    route_ids: Sequence[str] | None,
    direction: int | None,
    limit: int = 200,
) -> pl.DataFrame:
    """The line-hours where the share of trips over the limit calls for more trips or a larger
    vehicle (`crowding_summary.is_action_required`, BG art. 59 §1), worst first, at most
    `limit` rows: every column of `crowding_summary`, `worst_from_stop_name`,
    `worst_to_stop_name`, and over all the matching line-hours (not only those returned)
    `n_actions`, `n_action_days` and `extra_trips_total`."""
    if not _columns(store, "crowding_summary"):
        return pl.DataFrame()
    where = ["c.service_date BETWEEN ? AND ?", "c.is_action_required"]
    params: list[Any] = [start, end]
    if not _route_filter("c.route_id", route_ids, where, params):
        return pl.DataFrame()
    if direction is not None:
        where.append("c.direction_id = ?")
        params.append(direction)
    stops = (
        "(SELECT stop_id, any_value(stop_name) AS stop_name FROM gtfs_stops GROUP BY stop_id)"
        if _columns(store, "gtfs_stops")
        else "(SELECT NULL::VARCHAR AS stop_id, NULL::VARCHAR AS stop_name WHERE false)"
    )
    return store.query(
        "WITH c AS (SELECT c.*, count(*) OVER () AS n_actions, "
        "count(DISTINCT c.service_date) OVER () AS n_action_days, "
        "coalesce(sum(c.extra_trips_needed) OVER (), 0) AS extra_trips_total "
        f"FROM crowding_summary c WHERE {' AND '.join(where)} "
        "ORDER BY c.extra_trips_needed DESC NULLS LAST, c.over_limit_share DESC, "
        "c.max_standees_per_m2 DESC NULLS LAST, c.service_date, c.route_id, c.hour_at "
        f"LIMIT {int(limit)}) "
        "SELECT c.*, a.stop_name AS worst_from_stop_name, b.stop_name AS worst_to_stop_name "
        f"FROM c LEFT JOIN {stops} a ON a.stop_id = c.worst_from_stop_id "
        f"LEFT JOIN {stops} b ON b.stop_id = c.worst_to_stop_id "
        "ORDER BY c.extra_trips_needed DESC NULLS LAST, c.over_limit_share DESC, "
        "c.max_standees_per_m2 DESC NULLS LAST, c.service_date, c.route_id, c.hour_at",
        params,
    )


def read_crowded_trips(
    store: Store,
    start: date,
    end: date,
    route_ids: Sequence[str] | None,
    direction: int | None,
    limit: int = 300,
) -> pl.DataFrame:
    """Runs with a load profile in [start, end], most crowded first (`trip_crowding`, at most
    `limit` rows): `service_date`, `vehicle_id`, `run_index`, `trip_id`, `route_id`,
    `direction_id`, `departure_at` (UTC), `max_load` (passengers), `max_standees_per_m2`,
    `is_over_limit`, `los`, `n_seats`, `standing_area_m2`, `capacity_source`."""
    if not _columns(store, "trip_crowding"):
        return pl.DataFrame()
    where: list[str] = ["service_date BETWEEN ? AND ?"]
    params: list[Any] = [start, end]
    if not _route_filter("route_id", route_ids, where, params):
        return pl.DataFrame()
    if direction is not None:
        where.append("direction_id = ?")
        params.append(direction)
    return store.query(
        "SELECT service_date, vehicle_id, run_index, trip_id, route_id, direction_id, "
        "departure_at, max_load, max_standees_per_m2, is_over_limit, los, n_seats, "
        "standing_area_m2, capacity_source FROM trip_crowding "
        f"WHERE {' AND '.join(where)} "
        "ORDER BY max_standees_per_m2 DESC NULLS LAST, max_load DESC, service_date, "
        f"departure_at LIMIT {int(limit)}",
        params,
    )


def read_trip_loads(
    store: Store, service_date: date, vehicle_id: str, run_index: int
) -> pl.DataFrame:
    """The load profile of one run (`trip_loads`, by stop order) with the stop names:
    `stop_sequence`, `stop_id`, `stop_name`, `n_boardings`, `n_alightings`, `load_after`
    (passengers leaving the stop), `n_seats`, `standing_area_m2`, `standees_per_m2`,
    `is_over_limit`, `los`, `count_source`."""
    if not _columns(store, "trip_loads"):
        return pl.DataFrame()
    name = (
        "(SELECT s.stop_name FROM gtfs_stops s WHERE s.stop_id = l.stop_id LIMIT 1)"
        if _columns(store, "gtfs_stops")
        else "NULL::VARCHAR"
    )
    return store.query(
        f"SELECT l.stop_sequence, l.stop_id, {name} AS stop_name, l.n_boardings, "
        "l.n_alightings, l.load_after, l.n_seats, l.standing_area_m2, l.standees_per_m2, "
        "l.is_over_limit, l.los, l.count_source FROM trip_loads l "
        "WHERE l.service_date = ? AND l.vehicle_id = ? AND l.run_index = ? "
        "ORDER BY l.stop_sequence",
        [service_date, vehicle_id, run_index],
    )


def read_crowded_share(
    store: Store, start: date, end: date, route_ids: Sequence[str] | None
) -> pl.DataFrame:
    """Runs over the crowding limit in [start, end] (`trip_crowding`): one row with
    `n_over_limit`, `n_trips` (runs with a known capacity) and `value` (their ratio, 0-1;
    null without runs)."""
    if not _columns(store, "trip_crowding"):
        return pl.DataFrame()
    where = ["service_date BETWEEN ? AND ?", "is_over_limit IS NOT NULL"]
    params: list[Any] = [start, end]
    if not _route_filter("route_id", route_ids, where, params):
        return pl.DataFrame()
    return store.query(
        "SELECT sum(is_over_limit::INTEGER)::INTEGER AS n_over_limit, "
        "count(*)::INTEGER AS n_trips, avg(is_over_limit::INTEGER) AS value "
        f"FROM trip_crowding WHERE {' AND '.join(where)}",
        params,
    )


# -- Frota -----------------------------------------------------------------------------------
def read_vehicles(store: Store, operator_id: str, lot_id: str) -> pl.DataFrame:
    """The fleet register of an operator / lot (all when ALL)."""
    return _select(
        store, "vehicles", {"operator_id": operator_id, "lot_id": lot_id}, order_by=("vehicle_id",)
    )


def read_fleet_days(store: Store, start: date, end: date, operator_id: str) -> pl.DataFrame:
    """The operators' daily totals of `fleet_days` (route_id '*') over [start, end]: vehicles
    required vs operated, the cut ratio and its run of days, the reserve fleet."""
    frame = _select(
        store,
        "fleet_days",
        {"operator_id": operator_id, "route_id": "*"},
        between=("service_date", start, end),
        order_by=("service_date", "operator_id"),
    )
    return frame


# -- Avaliação anual / Infrações -------------------------------------------------------------
def read_annual_grades(store: Store, operator_id: str, lot_id: str) -> pl.DataFrame:
    """`annual_grades` rows by year: of the chosen lot, else of the chosen operator, else of
    every operator and lot (scope, scope_id, year, scores, grade, renewal, cassação watch)."""
    if lot_id != ALL:
        equal = {"scope": "lot", "scope_id": lot_id}
    elif operator_id != ALL:
        equal = {"scope": "operator", "scope_id": operator_id}
    else:
        equal = {}
    return _select(store, "annual_grades", equal, order_by=("scope", "scope_id", "year"))


def read_suggested_infractions(
    store: Store, start: date, end: date, operator_id: str
) -> pl.DataFrame:
    """`suggested_infractions` of an operator whose fact occurred in [start, end]."""
    cols = _columns(store, "suggested_infractions")
    when = next((c for c in ("occurred_on", "service_date", "occurred_at") if c in cols), None)
    return _select(
        store,
        "suggested_infractions",
        {"operator_id": operator_id},
        between=(when, start, end) if when else None,
        order_by=(when,) if when else (),
    )


def read_delays(
    store: Store, start: date, end: date, route_id: str, direction: int | None
) -> pl.DataFrame:
    """Origin departure delays of a line's run trips over [start, end]: `delay_min` (+ late)."""
    frame = _select(
        store,
        "trip_outcomes",
        {"route_id": route_id, "direction_id": direction},
        between=("service_date", start, end),
        columns=("departure_delay_s",),
    )
    if frame.is_empty():
        return pl.DataFrame()
    return frame.drop_nulls().select((pl.col("departure_delay_s") / 60.0).alias("delay_min"))


def read_last_positions(store: Store) -> pl.DataFrame:
    """The last stored ping of every vehicle: `vehicle_id`, `event_at`, `lat`, `lon`,
    `reported_occupancy` (what the Ao vivo page shows when the live feed is not running)."""
    if not _columns(store, "vehicle_locations"):
        return pl.DataFrame()
    return store.query(
        "SELECT vehicle_id, max(event_at) AS event_at, arg_max(lat, event_at) AS lat, "
        "arg_max(lon, event_at) AS lon, arg_max(reported_occupancy, event_at) "
        "AS reported_occupancy FROM vehicle_locations GROUP BY vehicle_id ORDER BY vehicle_id"
    )


LIVE_POSITIONS_PATH = "/gtfs-rt/vehicle-positions.pb?format=json"
LIVE_TRIP_UPDATES_PATH = "/gtfs-rt/trip-updates.pb?format=json"
LIVE_HEALTH_PATH = "/health"

LIVE_SCHEMA: dict[str, Any] = {
    "vehicle_id": pl.String,
    "route_id": pl.String,
    "trip_id": pl.String,
    "lat": pl.Float64,
    "lon": pl.Float64,
    "delay_s": pl.Float64,
    "occupancy_status": pl.String,
    "occupancy_percentage": pl.Float64,
    "timestamp_at": pl.Datetime("us", "UTC"),
}
"""Columns of `build_live_vehicles`."""


def _json_path(frame: pl.DataFrame, column: str, *fields: str) -> pl.Expr:
    """The nested field `column.fields...` of a frame of JSON objects; null where the payload
    never carries it (protobuf JSON omits default and absent fields)."""
    if column not in frame.columns:
        return pl.lit(None)
    expr, dtype = pl.col(column), frame.schema[column]
    dtype_any: Any = dtype
    for name in fields:
        if not isinstance(dtype_any, pl.Struct) or name not in {f.name for f in dtype_any.fields}:
            return pl.lit(None)
        dtype_any = next(f.dtype for f in dtype_any.fields if f.name == name)
        expr = expr.struct.field(name)
    return expr


def build_live_vehicles(
    positions: Mapping[str, Any], trip_updates: Mapping[str, Any]
) -> pl.DataFrame:
    """The vehicles of the live feed (`pontual serve`'s GTFS-RT JSON, `?format=json`): one row
    per VehiclePosition with a position, its trip's delay from the TripUpdates feed.

    Columns: `vehicle_id`, `route_id`, `trip_id`, `lat`, `lon` (WGS84), `delay_s` (the trip
    update's delay, seconds, + late; null when the vehicle has no predicted trip),
    `occupancy_status` (GTFS-RT enum name; null when not sent: EMPTY is protobuf's default),
    `occupancy_percentage` (0-100+), `timestamp_at` (UTC instant of the position).
    """
    entities = [e for e in positions.get("entity", []) if isinstance(e.get("vehicle"), dict)]
    if not entities:
        return pl.DataFrame(schema=LIVE_SCHEMA)
    vp = pl.from_dicts([e["vehicle"] for e in entities], infer_schema_length=None)
    vehicles = vp.select(
        _json_path(vp, "vehicle", "id").alias("vehicle_id"),
        _json_path(vp, "trip", "routeId").alias("route_id"),
        _json_path(vp, "trip", "tripId").alias("trip_id"),
        _json_path(vp, "position", "latitude").alias("lat"),
        _json_path(vp, "position", "longitude").alias("lon"),
        _json_path(vp, "occupancyStatus").alias("occupancy_status"),
        _json_path(vp, "occupancyPercentage").alias("occupancy_percentage"),
        # int64 fields are strings in protobuf JSON
        _json_path(vp, "timestamp").cast(pl.Int64).alias("timestamp_s"),
    ).with_columns(
        pl.from_epoch(pl.col("timestamp_s"), "s").dt.replace_time_zone("UTC").alias("timestamp_at")
    )
    updates = [e["tripUpdate"] for e in trip_updates.get("entity", []) if "tripUpdate" in e]
    delays = pl.DataFrame(schema={"trip_id": pl.String, "delay_s": pl.Float64})
    if updates:
        tu = pl.from_dicts(updates, infer_schema_length=None)
        delays = (
            tu.select(
                _json_path(tu, "trip", "tripId").cast(pl.String).alias("trip_id"),
                _json_path(tu, "delay").cast(pl.Float64).alias("delay_s"),
            )
            .drop_nulls("trip_id")
            .unique("trip_id", keep="first")
        )
    out = vehicles.with_columns(pl.col("trip_id").cast(pl.String)).join(
        delays, on="trip_id", how="left"
    )
    return (
        out.select([pl.col(c).cast(t) for c, t in LIVE_SCHEMA.items()])
        .drop_nulls(["lat", "lon"])
        .sort("vehicle_id")
    )


def read_live_feed(base_url: str, timeout_s: float) -> pl.DataFrame | None:
    """Fetch the live vehicles from `pontual serve` at `base_url` (`build_live_vehicles`);
    None when the server does not answer or answers with an error."""
    import requests  # a dependency of streamlit; imported here so the module stays light

    base = base_url.rstrip("/")
    try:
        bodies = []
        for path in (LIVE_POSITIONS_PATH, LIVE_TRIP_UPDATES_PATH):
            reply = requests.get(base + path, timeout=timeout_s)
            reply.raise_for_status()
            bodies.append(reply.json())
    except (requests.RequestException, ValueError):
        return None
    return build_live_vehicles(bodies[0], bodies[1])


def read_report_offers(store: Store, year: int) -> list[Any]:
    """The reports of `year` the Avaliação anual page offers (`downloads.ReportOffer`)."""
    from dashboard.downloads import compute_report_offers  # ReportLab loads only when asked

    return compute_report_offers(store, year)
