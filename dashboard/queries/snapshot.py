"""What every query module shares: the 'no filter' value, the snapshot's cache key, and the
two helpers that write a filtered SELECT.

Every table exists in a snapshot: a read-only store opens only at the latest schema version
(`core.store.Store.open`), and the migrations create every declared table. A table the
pipeline has not filled yet is simply empty, and every reader then returns an empty frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl

from core.store import Store, open_snapshot, snapshot_path

ALL = ""
"""The filter value meaning 'no filter' (all operators, lots, lines)."""


def read_snapshot_mtime(store_path: str | Path) -> float:
    """Modification time of the published snapshot (0.0 when none): the cache key.

    For a lake (a folder: `pontual --lake PATH dashboard`), the latest modification of its
    tables and their day partitions (a partition is replaced by a rename inside them)."""
    path = Path(store_path)
    if path.is_dir():
        return read_lake_mtime(path)
    snap = snapshot_path(path)
    return snap.stat().st_mtime if snap.exists() else 0.0


def read_lake_mtime(lake: Path) -> float:
    """The latest modification time of a lake's table folders and their service-day
    folders (0.0 for an empty lake)."""
    folders = [p for p in lake.iterdir() if p.is_dir()]
    folders += [d for p in folders for d in p.glob("service_date=*")]
    return max((p.stat().st_mtime for p in folders), default=0.0)


def open_source(path: str | Path) -> Store:
    """What the dashboard reads: the store's published snapshot, or, when `path` is a lake
    folder, the read-only store over its partitions (`core.lake.open_lake`)."""
    if Path(path).is_dir():
        from core.lake import open_lake

        return open_lake(path)
    return open_snapshot(path)


def select_rows(
    store: Store,
    name: str,
    equal: Mapping[str, object] | None = None,
    between: tuple[str, object, object] | None = None,
    order_by: Sequence[str] = (),
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Rows of table `name` where each `equal` column has its value (ALL or None: no
    condition) and the `between` column's day falls in [start, end]; `columns` only when
    given, sorted by `order_by`."""
    where, params = [], []
    for column, value in (equal or {}).items():
        if value is not None and value != ALL:
            where.append(f'"{column}" = ?')
            params.append(value)
    if between:
        where.append(f'CAST("{between[0]}" AS DATE) BETWEEN ? AND ?')
        params += [between[1], between[2]]
    sql = "SELECT " + (", ".join(f'"{c}"' for c in columns) if columns else "*") + " "
    sql += f'FROM "{name}"' + (" WHERE " + " AND ".join(where) if where else "")
    if order_by:
        sql += " ORDER BY " + ", ".join(f'"{c}"' for c in order_by)
    return store.query(sql, params)


def build_selection(
    start: date,
    end: date,
    route_ids: Sequence[str] | None,
    direction: int | None,
    alias: str = "",
) -> tuple[list[str], list[Any]] | None:
    """The WHERE conditions and their parameters of a page's selection: service days in
    [start, end], the lines `route_ids` (None: every line) and the `direction` (None: both),
    on columns prefixed by `alias` ('c.'). None when `route_ids` is empty: no line is
    chosen, and the reader returns an empty frame."""
    if route_ids is not None and not route_ids:
        return None
    where = [f"{alias}service_date BETWEEN ? AND ?"]
    params: list[Any] = [start, end]
    if route_ids is not None:
        where.append(f"{alias}route_id IN ({', '.join('?' for _ in route_ids)})")
        params.extend(route_ids)
    if direction is not None:
        where.append(f"{alias}direction_id = ?")
        params.append(direction)
    return where, params
