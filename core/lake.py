"""The lake: the store's tables as Hive-partitioned Parquet, and a read-only store over it.

Layout (one folder per table, `zstd` Parquet, the table's declaration written beside it):

    LAKE/vehicle_locations/service_date=2026-03-02/operator_id=O1/part-0.parquet
    LAKE/vehicle_locations/_schema.json
    LAKE/trip_outcomes/service_date=2026-03-02/part-0.parquet
    LAKE/gtfs_stops/part-0.parquet

- Tables with a service day are partitioned by it (`service_date`; the raw pings and taps, which
  have none, by the local date of `event_at` in the profile's time zone) and, when they carry one,
  by `operator_id`; the others are one file.
- Rows are sorted within each file: by all columns in order, except the pings, which are
  sorted by vehicle and time in small row groups (`LAKE_ORDER`), so that a reader of a range
  of vehicles (the Spark engine's tasks) skips the others' row groups by their statistics.
- Export is idempotent and atomic per partition: each partition is written under a temporary
  name and renamed into place, replacing the previous one whole; a re-run writes the same files.
- `open_lake` gives a read-only `Store` whose tables are DuckDB views over the partitions, cast
  to the declared schema (`core.tables`: one declaration rules the file and the lake), so the
  indices, the dashboard and the reports read a lake exactly as they read the file.
- Raw days archived out of the store (`archived_days`, `pontual lake archive`, docs/adr/0099)
  live only in the lake: an export never rewrites nor removes their partitions, even a full one
  (the store holds no rows for them any more). `raw_day_files`, `lake_raw_days` and
  `delete_day_partitions` are what archival, `pontual verify` and `pontual lake prune` use.

Only local paths are exercised by the tests; DuckDB reads s3:// paths through its own
filesystem layer when the deployment provides it.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Collection, Sequence
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl

from core.errors import ConfigError, StoreError
from core.periods import local_bounds, range_period
from core.schema import TABLES, Table, duckdb_type, table
from core.store import Store

RAW_BY_EVENT_DAY = ("vehicle_locations", "fare_transactions", "passenger_counts")
"""raw tables without a service day: partitioned by the local date of `event_at`"""
SCHEMA_FILE = "_schema.json"
PART_FILE = "part-0.parquet"
NULL_PARTITION = "__null__"
"""the folder name of a partition whose value is null (e.g. pings without an operator)"""
LAKE_ORDER: dict[str, tuple[tuple[str, ...], int]] = {
    "vehicle_locations": (("vehicle_id", "event_at", "ping_id"), 16_384),
}
"""tables whose lake files are not sorted by all their columns in order: the sort columns and
the rows per Parquet row group. The pings by vehicle in row groups of 16 384 rows: a Spark task
reads a range of vehicles (`analytics.engines.spark.read_batch_pings`), and the row groups'
min/max of vehicle_id let it skip the rest (a day's partition of one operator is ~60 k pings
of the 300-bus city, ~700 k of a São Paulo-sized one; DuckDB's default row group is 122 880)"""


def lake_tables() -> list[Table]:
    """Every declared table of the store, in a stable order."""
    table("vehicle_locations")  # registers the declarations
    return [TABLES[name] for name in sorted(TABLES)]


def partition_columns(decl: Table) -> list[str]:
    """The Hive partition keys of a table: service_date (or the event day), then operator_id."""
    names = decl.column_names
    keys: list[str] = []
    if "service_date" in names or decl.name in RAW_BY_EVENT_DAY:
        keys.append("service_date")
    if "operator_id" in names:
        keys.append("operator_id")
    return keys


def local_day_sql(column: str, timezone: str) -> str:
    """SQL for the local calendar date of a UTC instant column: the day a raw ping or tap is
    filed under in the lake and exported under in TIDES (the service day is matching's)."""
    return f"CAST(timezone('{timezone}', {column}) AS DATE)"


def _day_expression(decl: Table, timezone: str) -> str:
    if "service_date" in decl.column_names:
        return '"service_date"'
    # the local calendar day of the event (a ping of a trip past midnight lands on the next day's
    # folder: the partition is a storage unit, the service day is decided by matching)
    return local_day_sql('"event_at"', timezone)


def _schema_document(decl: Table) -> dict[str, object]:
    return {
        "name": decl.name,
        "description": decl.doc,
        "primary_key": list(decl.primary_key),
        "partition_by": partition_columns(decl),
        "columns": [
            {
                "name": c.name,
                "type": duckdb_type(c.dtype),
                "nullable": c.nullable,
                "description": c.doc,
            }
            for c in decl.columns
        ],
    }


def _replace_dir(tmp: Path, final: Path) -> None:
    """Move `tmp` to `final`, replacing what is there whole (rename, then drop the old copy)."""
    old = None
    if final.exists():
        old = final.with_name(f".old-{uuid.uuid4().hex}-{final.name}")
        os.replace(final, old)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, final)
    if old is not None:
        shutil.rmtree(old)


def export_table(
    store: Store,
    lake: Path,
    decl: Table,
    timezone: str,
    days: tuple[date, date] | None = None,
    keep_days: Collection[date] = (),
) -> int:
    """Write one table of `store` to `lake`; returns the number of partitions written.

    With `days`, only the partitions of those service days are (re)written; a table without a
    day partition is then left alone unless it has never been exported. The partitions of
    `keep_days` (raw days archived out of the store) are neither written nor removed.
    """
    keys = partition_columns(decl)
    folder = lake / decl.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SCHEMA_FILE).write_text(
        json.dumps(_schema_document(decl), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    cols = ", ".join(f'"{c}"' for c in decl.column_names)
    if "service_date" not in keys:
        if days is not None and (folder / PART_FILE).exists():
            return 0
        tmp = folder / f".tmp-{uuid.uuid4().hex}.parquet"
        store.con.execute(
            f"COPY (SELECT {cols} FROM \"{decl.name}\") TO '{tmp}' "
            "(FORMAT parquet, COMPRESSION zstd)"
        )
        os.replace(tmp, folder / PART_FILE)
        return 1
    day = _day_expression(decl, timezone)
    conditions: list[str] = []
    params: list[object] = []
    if days is not None:
        conditions.append(f"{day} BETWEEN ? AND ?")
        params += [days[0], days[1]]
        if decl.name in RAW_BY_EVENT_DAY:  # the same days as UTC bounds: row groups are skipped
            lo, _ = local_bounds(range_period(days[0], days[0]), timezone)
            _, hi = local_bounds(range_period(days[1], days[1]), timezone)
            conditions.append('"event_at" >= ? AND "event_at" < ?')
            params += [lo, hi]
    kept_days = sorted(set(keep_days))
    if kept_days:
        conditions.append(f"NOT list_contains(?, {day})")
        params.append(kept_days)
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    part_cols = [f"{day} AS __day"]
    by = ["__day"]
    if "operator_id" in keys:
        part_cols.append(f"coalesce(\"operator_id\", '{NULL_PARTITION}') AS __op")
        by.append("__op")
    # one pass over the table: DuckDB writes every partition under a temporary folder (the
    # partition keys are not written into the files), then each moves into place
    tmp = folder / f".tmp-{uuid.uuid4().hex}"
    order, row_group, threads = "ALL", "", None
    if decl.name in LAKE_ORDER:
        columns, rows = LAKE_ORDER[decl.name]
        order = ", ".join(f'"{c}"' for c in columns)
        row_group = f", ROW_GROUP_SIZE {rows}"
        # a partitioned COPY on several threads interleaves the sorted rows within a file;
        # on one it keeps them in order (DuckDB 2.0). The cost: a São Paulo day of pings
        # 16.4-17.0 s against 7.3-7.4 s on 2 cores (ADR 0080, session 34)
        threads = store.con.execute("SELECT current_setting('threads')").fetchone()
        store.con.execute("SET threads = 1")
    try:
        store.con.execute(
            f'COPY (SELECT {cols}, {", ".join(part_cols)} FROM "{decl.name}" {where} '
            f"ORDER BY {order}) TO '{tmp}' "
            f"(FORMAT parquet, COMPRESSION zstd{row_group}, PARTITION_BY ({', '.join(by)}))",
            params,
        )
    finally:
        if threads is not None:
            store.con.execute(f"SET threads = {int(threads[0])}")
    parts = []
    for day_dir in sorted(tmp.glob("__day=*")) if tmp.exists() else []:
        leaves = sorted(day_dir.glob("__op=*")) if "operator_id" in keys else [day_dir]
        for leaf in leaves:
            sub = folder / f"service_date={day_dir.name.removeprefix('__day=')}"
            if "operator_id" in keys:
                sub = sub / f"operator_id={leaf.name.removeprefix('__op=')}"
            files = sorted(leaf.glob("*.parquet"))
            staged = folder / f".tmp-{uuid.uuid4().hex}"
            staged.mkdir()
            for i, f in enumerate(files):
                os.replace(f, staged / (PART_FILE if i == 0 else f"part-{i}.parquet"))
            _replace_dir(staged, sub)
            parts.append(sub.relative_to(folder).parts[0])
        if "operator_id" in keys:  # an operator gone from a re-run day goes from the lake too
            written = {leaf.name.removeprefix("__op=") for leaf in leaves}
            for old in (folder / f"service_date={day_dir.name.removeprefix('__day=')}").glob("*"):
                if old.name.removeprefix("operator_id=") not in written:
                    shutil.rmtree(old)
    if tmp.exists():
        shutil.rmtree(tmp)
    if days is not None:
        return len(parts)
    # a full export also drops partitions of days no longer in the store (not archived ones)
    kept = set(parts) | {f"service_date={d.isoformat()}" for d in kept_days}
    for stale in folder.glob("service_date=*"):
        if stale.name not in kept:
            shutil.rmtree(stale)
    return len(parts)


def export_lake(
    store: Store,
    lake: str | Path,
    timezone: str,
    days: tuple[date, date] | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, int]:
    """Export every table (or `names`) of `store` to the lake; partitions written per table.
    The raw days the store has archived (`archived_days`) keep their lake partitions."""
    root = Path(lake)
    root.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    for decl in lake_tables():
        if names is not None and decl.name not in names:
            continue
        keep = read_archived_days(store, decl.name)
        written[decl.name] = export_table(store, root, decl, timezone, days, keep)
    return written


def read_archived_days(store: Store, name: str) -> list[date]:
    """The service days of raw table `name` archived out of `store` (`archived_days`), pruned
    or not: their rows live only in the lake."""
    if not store.has_table("archived_days"):
        return []
    rows = store.query(
        "SELECT service_date FROM archived_days WHERE table_name = ? ORDER BY service_date",
        [name],
    )
    return list(rows["service_date"].to_list())


def check_not_archived(store: Store, start: date, end: date) -> None:
    """Refuse (ConfigError) to compute from the store a period some of whose raw days were
    archived to the lake: their pings and taps are no longer in the file, so matching, crowding
    or indices on it would replace that period's results with ones computed without them."""
    days = sorted(
        {
            d
            for name in ("vehicle_locations", "fare_transactions")
            for d in read_archived_days(store, name)
            if start <= d <= end
        }
    )
    if days:
        raise ConfigError(
            f"the raw data of {len(days)} day(s) of the period ({days[0]} to {days[-1]}) were "
            "archived to the lake: computing on the store would leave them out",
            where=f"store {store.path}, table archived_days",
            hint="compute that period over the lake (global --lake), or leave those days out",
        )


def _day_dir(lake: str | Path, name: str, day: date) -> Path:
    return Path(lake) / name / f"service_date={day.isoformat()}"


def raw_day_files(lake: str | Path, name: str, day: date) -> list[Path]:
    """The Parquet files of one day of table `name` in the lake (every operator's partition;
    none when the day is absent), leaving out the hidden names of a write in progress."""
    folder = _day_dir(lake, name, day)
    if not folder.is_dir():
        return []
    return sorted(
        f
        for f in folder.rglob("*.parquet")
        if not any(part.startswith(".") for part in f.relative_to(folder).parts)
    )


def lake_raw_days(lake: str | Path, name: str) -> list[date]:
    """The service days that have a partition of table `name` in the lake, in order."""
    folder = Path(lake) / name
    days = []
    for sub in folder.glob("service_date=*") if folder.is_dir() else []:
        try:
            day = date.fromisoformat(sub.name.removeprefix("service_date="))
        except ValueError:
            continue
        if raw_day_files(lake, name, day):
            days.append(day)
    return sorted(days)


def open_lake_day(lake: str | Path, name: str, day: date) -> Store | None:
    """A read-only store whose one view, `name`, holds that day's rows of the lake (every
    operator's partition, cast to the declared schema); None when the lake has no such day.
    Digests are recomputed over it exactly as over the store file (`cases.evidence`)."""
    files = raw_day_files(lake, name, day)
    if not files:
        return None
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    source = f"read_parquet([{listed}], hive_partitioning = false, union_by_name = true)"
    con = duckdb.connect(":memory:")
    con.execute("SET TimeZone = 'UTC'")
    present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    # a column declared after the day was written reads as null, as in a migrated store
    cells = [(f'"{c.name}"' if c.name in present else "NULL", c) for c in table(name).columns]
    casts = ", ".join(f'CAST({v} AS {duckdb_type(c.dtype)}) AS "{c.name}"' for v, c in cells)
    con.execute(f'CREATE VIEW "{name}" AS SELECT {casts} FROM {source}')
    return Store(Path(lake), con, read_only=True)


def delete_day_partitions(lake: str | Path, name: str, day: date) -> bool:
    """Delete one day of table `name` from the lake, all its operators at once (renamed
    aside, then removed); whether there was one."""
    folder = _day_dir(lake, name, day)
    if not folder.exists():
        return False
    aside = folder.with_name(f".old-{uuid.uuid4().hex}-{folder.name}")
    os.replace(folder, aside)
    shutil.rmtree(aside)
    return True


def _view_source(decl: Table, folder: Path, days: tuple[date, date] | None = None) -> str | None:
    """The `read_parquet` of a table's files; with `days`, of only those days' partitions
    (None when the table has none of them: it then reads as empty)."""
    if (folder / PART_FILE).exists():
        source = f"read_parquet('{folder / PART_FILE}')"
    elif days is None:
        pattern = folder / "service_date=*" / "**" / "*.parquet"
        source = f"read_parquet('{pattern}', hive_partitioning = false, union_by_name = true)"
    else:
        n = (days[1] - days[0]).days + 1
        folders = [folder / f"service_date={days[0] + timedelta(days=i)}" for i in range(n)]
        files = sorted(str(f) for d in folders if d.is_dir() for f in d.rglob("*.parquet"))
        if not files:
            return None
        listed = ", ".join(f"'{f}'" for f in files)
        source = f"read_parquet([{listed}], hive_partitioning = false, union_by_name = true)"
    return source


def _view_sql(decl: Table, source: str, present: set[str] | None = None) -> str:
    """The view of a table over `source` (`_view_source`), cast to the declared schema; a
    column not in `present` (when given) reads as null."""
    cells = [
        (f'"{c.name}"' if present is None or c.name in present else "NULL", c) for c in decl.columns
    ]
    casts = ", ".join(f'CAST({v} AS {duckdb_type(c.dtype)}) AS "{c.name}"' for v, c in cells)
    return f'CREATE VIEW "{decl.name}" AS SELECT {casts} FROM {source}'


def open_lake(
    lake: str | Path,
    days: tuple[date, date] | None = None,
    names: Collection[str] | None = None,
) -> Store:
    """A read-only store whose tables are views over the lake's partitions.

    A table with no file in the lake reads as empty (declared schema), as in a new store file.
    With `days` (first, last), the day-partitioned tables hold only those days' partitions (the
    service days', and the raw tables' local event days): a job of one day reads a few files
    instead of every day's footers (`scheduled_trips` has a partition for every day of the
    feed). The caller must ask for every day its queries reach. With `names`, only those
    tables are there (a query reaching another fails): each view reads its files' footers
    when made, ~2 ms a table (the Spark engine's plan of a day reads three of ~35).
    """
    root = Path(lake)
    if not root.is_dir():
        raise StoreError(
            "lake not found",
            where=str(root),
            hint="write one with `pontual lake export --lake PATH`",
        )
    con = duckdb.connect(":memory:")
    con.execute("SET TimeZone = 'UTC'")
    for decl in lake_tables():
        if names is not None and decl.name not in names:
            continue
        folder = root / decl.name
        has_files = (folder / PART_FILE).exists() or any(folder.glob("service_date=*/**/*.parquet"))
        source = _view_source(decl, folder, days) if has_files else None
        if source is None:
            con.execute(decl.create_sql())
            continue
        try:
            con.execute(_view_sql(decl, source))
        except duckdb.BinderException:
            # files written before a column was declared (an older lake; e.g. tap_placements'
            # operator_id, ADR 0103) and none since: it reads as null, as in a migrated store
            present = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
            con.execute(_view_sql(decl, source, present))
    return Store(root, con, read_only=True)


def write_day_partitions(
    lake: str | Path, name: str, service_date: date, frame: pl.DataFrame
) -> int:
    """Replace one service day of a derived table in the lake with `frame` (a Polars frame
    conformed to the table); returns the partitions written.

    Each partition (the day, or the day and an operator) is written under a temporary name and
    renamed into place, replacing the old one whole; the day's partitions of operators absent
    from `frame` are removed, and a day without rows leaves no partition. This is how engines
    that compute a day away from the store (the Spark engine's executors) file their results:
    a retried task rewrites the same partitions.
    """
    decl = table(name)
    keys = partition_columns(decl)
    if "service_date" not in keys:
        raise StoreError(f"table {name} has no service day to partition by", where=str(lake))
    folder = _table_folder(lake, decl)
    day_dir = folder / f"service_date={service_date.isoformat()}"
    rows = frame.select(decl.column_names)
    if "operator_id" in keys:
        groups = (
            rows.with_columns(pl.col("operator_id").fill_null(NULL_PARTITION).alias("__op"))
            .sort("__op", maintain_order=True)
            .partition_by("__op", as_dict=True, include_key=False)
        )
        parts = {str(k[0]): v for k, v in groups.items()}
    else:
        parts = {"": rows} if rows.height else {}
    for op, part in parts.items():
        staged = folder / f".tmp-{uuid.uuid4().hex}"
        staged.mkdir()
        part.write_parquet(staged / PART_FILE, compression="zstd")
        _replace_dir(staged, day_dir / f"operator_id={op}" if op else day_dir)
    if not parts and day_dir.exists():
        shutil.rmtree(day_dir)
    elif "operator_id" in keys and day_dir.exists():
        for old in day_dir.glob("operator_id=*"):
            if old.name.removeprefix("operator_id=") not in parts:
                shutil.rmtree(old)
        # a day written before the table carried its operator (one file for the day, e.g.
        # tap_placements before ADR 0103's migration 16) is replaced by its operators' files
        for stale in day_dir.glob("*.parquet"):
            stale.unlink()
    return len(parts)


def _table_folder(lake: str | Path, decl: Table) -> Path:
    """The table's folder in the lake, made with its schema document beside the data the first
    time (written under a temporary name and renamed into place)."""
    folder = Path(lake) / decl.name
    folder.mkdir(parents=True, exist_ok=True)
    schema = folder / SCHEMA_FILE
    document = json.dumps(_schema_document(decl), indent=2, ensure_ascii=False) + "\n"
    # written again when the declaration changed since (a column added by a migration)
    if not schema.exists() or schema.read_text(encoding="utf-8") != document:
        tmp_schema = folder / f".tmp-{uuid.uuid4().hex}.json"
        tmp_schema.write_text(document, encoding="utf-8")
        os.replace(tmp_schema, schema)
    return folder


def write_table_file(lake: str | Path, name: str, frame: pl.DataFrame) -> int:
    """Replace a table without a service day (indicators, annual_grades,
    suggested_infractions) in the lake with `frame` (conformed to the table), whole: written
    under a temporary name and renamed into place. Returns the rows written."""
    decl = table(name)
    if "service_date" in partition_columns(decl):
        raise StoreError(f"table {name} is partitioned by service day", where=str(lake))
    folder = _table_folder(lake, decl)
    tmp = folder / f".tmp-{uuid.uuid4().hex}.parquet"
    frame.select(decl.column_names).write_parquet(tmp, compression="zstd")
    os.replace(tmp, folder / PART_FILE)
    return frame.height
