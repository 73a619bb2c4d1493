"""Frota: the fleet register and the daily fleet figures (BG art. 18-23, 72; CGS art. 23).

Reads `vehicles` (the register of an operator / lot; also the reports' vehicle list) and
`fleet_days` (each operator's daily totals).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import ALL, select_rows


def read_vehicles(store: Store, operator_id: str, lot_id: str) -> pl.DataFrame:
    """The fleet register of an operator / lot (all when ALL)."""
    return select_rows(
        store, "vehicles", {"operator_id": operator_id, "lot_id": lot_id}, order_by=("vehicle_id",)
    )


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


def read_register(store: Store) -> pl.DataFrame:
    """Who owns each vehicle (the reports' scopes): `vehicle_id`, `operator_id`, `lot_id`,
    by vehicle."""
    return read_vehicles(store, ALL, ALL).select("vehicle_id", "operator_id", "lot_id")
