"""Lotação: loads and crowding against the law's limit of standees per m² (BG art. 59).

Reads `crowding_summary` (line-hours: the heat map, the line-hours that ask for more trips;
also the annual dossier), `trip_crowding` (runs, most crowded first; also the annual dossier),
`trip_loads` with `gtfs_stops` (one run's load profile by stop).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import build_selection

WORST_FIRST = (
    "c.extra_trips_needed DESC NULLS LAST, c.over_limit_share DESC, "
    "c.max_standees_per_m2 DESC NULLS LAST, c.service_date, c.route_id, c.hour_at"
)
"""The order of the line-hours that ask for action: most extra trips, then the largest share
over the limit, then the densest standing; ties by day, line and hour."""


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
    selection = build_selection(start, end, route_ids, direction)
    if selection is None:
        return pl.DataFrame()
    where, params = selection
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
    selection = build_selection(start, end, route_ids, direction, "c.")
    if selection is None:
        return pl.DataFrame()
    where, params = selection
    where.append("c.is_action_required")
    stops = "(SELECT stop_id, any_value(stop_name) AS stop_name FROM gtfs_stops GROUP BY stop_id)"
    return store.query(
        "WITH c AS (SELECT c.*, count(*) OVER () AS n_actions, "
        "count(DISTINCT c.service_date) OVER () AS n_action_days, "
        "coalesce(sum(c.extra_trips_needed) OVER (), 0) AS extra_trips_total "
        f"FROM crowding_summary c WHERE {' AND '.join(where)} "
        f"ORDER BY {WORST_FIRST} LIMIT {int(limit)}) "
        "SELECT c.*, a.stop_name AS worst_from_stop_name, b.stop_name AS worst_to_stop_name "
        f"FROM c LEFT JOIN {stops} a ON a.stop_id = c.worst_from_stop_id "
        f"LEFT JOIN {stops} b ON b.stop_id = c.worst_to_stop_id "
        f"ORDER BY {WORST_FIRST}",
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
    selection = build_selection(start, end, route_ids, direction)
    if selection is None:
        return pl.DataFrame()
    where, params = selection
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
    name = "(SELECT s.stop_name FROM gtfs_stops s WHERE s.stop_id = l.stop_id LIMIT 1)"
    return store.query(
        f"SELECT l.stop_sequence, l.stop_id, {name} AS stop_name, l.n_boardings, "
        "l.n_alightings, l.load_after, l.n_seats, l.standing_area_m2, l.standees_per_m2, "
        "l.is_over_limit, l.los, l.count_source FROM trip_loads l "
        "WHERE l.service_date = ? AND l.vehicle_id = ? AND l.run_index = ? "
        "ORDER BY l.stop_sequence",
        [service_date, vehicle_id, run_index],
    )


def read_trip_crowding(store: Store, start: date, end: date) -> pl.DataFrame:
    """Every run's crowding verdict of the service days [start, end] (`trip_crowding`, every
    column, declared dtypes)."""
    return store.read("trip_crowding", "service_date BETWEEN ? AND ?", [start, end])


def read_crowding_summary(store: Store, start: date, end: date) -> pl.DataFrame:
    """Every line-hour of the service days [start, end] (`crowding_summary`, every column,
    declared dtypes)."""
    return store.read("crowding_summary", "service_date BETWEEN ? AND ?", [start, end])
