"""Frota: the fleet register and the daily fleet figures (BG art. 18-23, 72; CGS art. 23).

Reads `vehicles` (the register of an operator / lot; also the reports' vehicle list) and
`fleet_days` (each operator's daily totals).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.register import in_fleet_expr, to_register_latest, to_register_on, with_last_inspection
from core.store import Store
from dashboard.queries.snapshot import ALL, select_rows


def read_vehicles(
    store: Store, operator_id: str, lot_id: str, on: date | None = None
) -> pl.DataFrame:
    """The fleet register of an operator / lot (all when ALL) as it stood on day `on` (today
    when None): the version of each vehicle then in force (`core.register`), vehicles in the
    fleet that day only (entered, not retired), `last_inspection_on` as of that day."""
    on = on or date.today()
    versions = select_rows(
        store, "vehicles", {"operator_id": operator_id, "lot_id": lot_id}, order_by=("vehicle_id",)
    )
    inspections = store.read("vehicle_inspections", "inspected_on <= ?", [on])
    register = to_register_on(versions, on).filter(in_fleet_expr(pl.lit(on)))
    return with_last_inspection(register, inspections, on)


def read_fleet_days(store: Store, start: date, end: date, operator_id: str) -> pl.DataFrame:
    """The operators' daily totals of `fleet_days` (route_id '*') over [start, end]: vehicles
    required vs operated, the cut ratio and its run of days, the reserve fleet."""
    return select_rows(
        store,
        "fleet_days",
        {"operator_id": operator_id, "route_id": "*"},
        between=("service_date", start, end),
        order_by=("service_date", "operator_id"),
    )


def read_reserve_over_period(
    store: Store, start: date, end: date, operator_id: str
) -> pl.DataFrame:
    """The reserve fleet judged over every day of [start, end] (BG Anexo I XXXV; CGS art. 23),
    not on one day, per operator, from `fleet_days` (route_id '*'). Columns:
    operator_id; n_days (days evaluated); n_days_below_min (reserve under the minimum);
    n_days_above_max (over the cap; 0 without a cap); n_reserve_lowest and lowest_on (the
    smallest reserve, vehicles, and its first day); n_reserve_min_max (the largest minimum
    required on a day, vehicles); reserve_ratio_lowest (smallest reserve ÷ vehicles required,
    days with vehicles required only); n_registered_min / n_registered_max (vehicles in the
    fleet on its smallest / largest day: retired vehicles are gone from their day on);
    is_reserve_ok_every_day."""
    where = "route_id = '*' AND service_date BETWEEN ? AND ?"
    params: list[object] = [start, end]
    if operator_id not in (ALL, None):
        where += " AND operator_id = ?"
        params.append(operator_id)
    return store.query(
        "SELECT operator_id, count(*)::INTEGER AS n_days, "
        "count(*) FILTER (WHERE NOT is_reserve_ok)::INTEGER AS n_days_below_min, "
        "count(*) FILTER (WHERE n_reserve > n_reserve_max)::INTEGER AS n_days_above_max, "
        "min(n_reserve)::INTEGER AS n_reserve_lowest, "
        "arg_min(service_date, (n_reserve, service_date)) AS lowest_on, "
        "max(n_reserve_min)::INTEGER AS n_reserve_min_max, "
        "min(reserve_ratio) FILTER (WHERE n_vehicles_required > 0) AS reserve_ratio_lowest, "
        "min(n_vehicles_registered)::INTEGER AS n_registered_min, "
        "max(n_vehicles_registered)::INTEGER AS n_registered_max, "
        "bool_and(is_reserve_ok) AS is_reserve_ok_every_day "
        f"FROM fleet_days WHERE {where} GROUP BY operator_id ORDER BY operator_id",
        params,
    )


def read_register(store: Store, on: date | None = None) -> pl.DataFrame:
    """Who owns each vehicle (the reports' scopes): `vehicle_id`, `operator_id`, `lot_id`,
    by vehicle: the version in force on `on`, else each vehicle's latest version."""
    versions = select_rows(store, "vehicles", {"operator_id": ALL}, order_by=("vehicle_id",))
    chosen = to_register_latest(versions) if on is None else to_register_on(versions, on)
    return chosen.select("vehicle_id", "operator_id", "lot_id")
