"""The DuckDB store: one file, one writing process, versioned schema.

The pipeline process is the only writer. Readers (the dashboard, the real-time feed) never open
the store file itself: DuckDB locks a file opened for writing against every other process. They
open the *published snapshot* instead, a consistent image that the writer replaces atomically
after each job (`Store.publish_snapshot`), so they keep working while the pipeline writes.

The snapshot is published without copying the whole store (ADR 0104): a big table is held as
one DuckDB file per (table, month) under `<store>.snapshot.parts/`, and only the months that
changed since the last publication are written again; the snapshot file itself is a small
catalogue (the small tables, and a view per big table over its month files).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from core import __version__
from core.errors import ConfigError, SchemaVersionError, StoreError
from core.migrations import Migration, all_migrations, fresh_schema_sql, latest_version
from core.schema import Table, table
from core.tables.system import SCHEMA_VERSION

# Key checks in memory read at most this many stored keys per batch row (and at least
# _MIN_KEYS_IN_MEMORY per batch, for small batches); beyond, DuckDB anti-joins them.
_MAX_STORED_KEYS_PER_ROW = 4
_MIN_KEYS_IN_MEMORY = 250_000
# Rows per Arrow batch handed to DuckDB: its row-group size, the unit of its parallel scans.
INSERT_BATCH_ROWS = 122_880
# A table of at least this many rows is published as one file per month (ADR 0104); a smaller
# one is copied whole into the snapshot's catalogue at each publication (a few MB at most).
PART_MIN_ROWS = 10_000
# A table with no month to split by (the GTFS tables) of at least this many rows is published
# as one file of its own, written again only when its rows' digest moved (ADR 0114); a
# smaller one is copied into the catalogue.
WHOLE_MIN_ROWS = 5_000
SNAPSHOT_MODE_ENV = "PONTUAL_SNAPSHOT"
"""How the readers' snapshot is published: "copy" (the default: the whole file copied and
renamed into place) or "months" (ADR 0104: big tables as month files, only changed months
written again). "months" pays off on a year's store with few writers; a live listener that
publishes every minute rewrites the current month of pings each time, so it is opt-in."""


def snapshot_mode() -> str:
    """The publication mode in force (`SNAPSHOT_MODE_ENV`): "copy" or "months"."""
    mode = os.environ.get(SNAPSHOT_MODE_ENV, "copy").strip().lower() or "copy"
    if mode not in ("copy", "months"):
        raise StoreError(
            f"unknown snapshot mode {mode!r}",
            where=f"environment {SNAPSHOT_MODE_ENV}",
            hint="copy (the default) or months",
        )
    return mode


# The catalogue's table of the month files (not a store table: only snapshots have it).
_PARTS_TABLE = "_snapshot_parts"
# The "month" of the file holding a whole table that has no month (ADR 0114).
_WHOLE = "all"
# The catalogue's table of the signatures of the tables copied into it (ADR 0114).
_COPIED_TABLE = "_snapshot_copied"
# Times a reader re-reads the catalogue when a month file it names was just replaced.
_OPEN_RETRIES = 5


@dataclass(frozen=True)
class _AheadPart:
    """A month file written ahead of the publication (`Store.write_parts_ahead`): its file
    name, its rows and its table's columns then."""

    file: str
    n_rows: int
    signature: str


@dataclass(frozen=True)
class AppendResult:
    """What an append did: rows written and rows whose key was already stored."""

    n_inserted: int
    n_duplicate: int


def _anti_join_insert(decl: Table, view: str, columns: str) -> str:
    """INSERT of the batch's rows whose key is not stored (the batch has no repeated key).

    The stored side is bounded to the batch's time range, so DuckDB's zone maps skip the
    row groups of other days.
    """
    # A nullable key column (a tap's operator) matches null to null, as the in-memory check.
    match = " AND ".join(f't."{k}" IS NOT DISTINCT FROM n."{k}"' for k in decl.primary_key)
    tcol = f'"{decl.key_time_column}"'
    return (
        f'INSERT INTO "{decl.name}" ({columns}) SELECT {columns} FROM {view} n WHERE NOT EXISTS ('
        f'SELECT 1 FROM "{decl.name}" t WHERE {match} AND t.{tcol} BETWEEN '
        f"(SELECT min({tcol}) FROM {view}) AND (SELECT max({tcol}) FROM {view}))"
    )


def compute_repeated(values: pl.Series) -> pl.Series:
    """Whether each of `values` (64-bit hashes) occurs more than once: a sort and a look-up
    of the few repeated values, twice as fast as `is_duplicated` on a million hashes."""
    ordered = values.sort(multithreaded=False)  # half the CPU time of the parallel sort
    twice = ordered.filter(ordered == ordered.shift(1))
    if twice.len() == 0:
        return pl.repeat(False, values.len(), dtype=pl.Boolean, eager=True).alias(values.name)
    return values.is_in(twice.unique().implode())


def _first_repeated_key(keys: pl.DataFrame) -> tuple[tuple[Any, ...], int] | None:
    """A key that `keys` (the key columns of a batch) holds more than once, and how many times;
    None when every key is distinct. A null equals a null, as in SQL's GROUP BY. The rows are
    hashed first (`compute_repeated`); only rows whose hash repeats are compared exactly, so a
    hash collision is never taken for a repeated key."""
    candidates = keys.filter(compute_repeated(keys.hash_rows()))
    if candidates.height == 0:
        return None
    counted = (
        candidates.group_by(keys.columns, maintain_order=True).len("n").filter(pl.col("n") > 1)
    )
    if counted.height == 0:
        return None
    *values, n = counted.row(0)
    return tuple(values), int(n)


def _repeated_key_error(path: Path, decl: Table, values: tuple[Any, ...], n: int) -> StoreError:
    """The error of `n` rows of `decl` with the key `values` (a bug in the job that wrote
    them)."""
    shown = ", ".join(f"{k}={v}" for k, v in zip(decl.primary_key, values, strict=True))
    return StoreError(
        f"{n} rows for table {decl.name} have the same key ({shown})",
        where=str(path),
        hint="this is a bug in the job that wrote them: a derived table's rows are "
        "written once per key, replacing their partition (Store.replace)",
    )


def compute_new_keys(decl: Table, frame: pl.DataFrame, stored: pl.DataFrame) -> pl.DataFrame:
    """The rows of `frame` whose key is neither in `stored` (the stored keys) nor repeated in
    `frame` (the first of repeated rows is kept). A null key value equals a null one.

    Keys are compared through a 64-bit hash of the key columns first (cheap on a million rows,
    where joins on the raw string and time columns are not); rows whose hash matches are then
    compared column by column, so a hash collision never drops a row. Only the key columns of
    the few rows whose hash repeats or is stored are ever copied: the verdicts make one mask,
    and `frame` is filtered once, or returned as it is when every row is new.
    """
    key = list(decl.primary_key)
    hashes = frame.select(pl.struct(key).hash()).to_series()
    keep: pl.Series | None = None  # None: every row kept so far
    # Distinct hashes prove distinct keys; only the rows whose hash repeats (a feed's
    # duplicates: a few in a thousand) pay the exact (and ten times dearer) comparison of the
    # key columns, and the first row of each key is kept, in order.
    repeated = compute_repeated(hashes)
    if repeated.any():
        at = repeated.arg_true()
        first = frame.select(key)[at].select(pl.struct(key).is_first_distinct()).to_series()
        keep = repeated.not_().scatter(at, first)
    if stored.height:
        stored_hashes = stored.select(pl.struct(key).hash()).to_series()
        # A row whose hash is not stored has a new key; the others (a re-run's rows, the few
        # a batch shares with the one before) are confirmed column by column.
        maybe = hashes.is_in(stored_hashes.implode())
        if maybe.any():
            at = maybe.arg_true()
            candidates = frame.select(key)[at].with_columns(
                at.alias("_pos"), hashes.gather(at).alias("_key_hash")
            )
            pairs = candidates.join(
                stored.select(key).with_columns(stored_hashes.alias("_key_hash")),
                on="_key_hash",
                how="inner",
                suffix="_stored",
            )
            same = pl.all_horizontal(pl.col(k).eq_missing(pl.col(f"{k}_stored")) for k in key)
            seen = pairs.filter(same)["_pos"].unique()
            if seen.len():
                unseen = pl.repeat(True, frame.height, dtype=pl.Boolean, eager=True)
                unseen = unseen.scatter(seen, False)
                keep = unseen if keep is None else keep & unseen
    return frame if keep is None else frame.filter(keep)


def snapshot_path(path: Path) -> Path:
    """Where the read-only snapshot of a store file is published (its catalogue)."""
    return path.with_name(path.stem + ".snapshot" + path.suffix)


def snapshot_parts_dir(path: Path) -> Path:
    """The folder of the snapshot's month files of big tables (ADR 0104)."""
    return path.with_name(path.stem + ".snapshot.parts")


def _pending_path(path: Path) -> Path:
    """The journal of (table, month) pairs written since the last publication."""
    return path.with_name(path.stem + ".snapshot.pending")


def _part_column(name: str, columns: Sequence[str]) -> str | None:
    """The column whose month partitions table `name` in the snapshot: its service date, else
    its declared key time (an observed record's instant); None: not partitionable."""
    if "service_date" in columns:
        return "service_date"
    try:
        tcol = table(name).key_time_column
    except KeyError:
        return None
    return tcol if tcol in columns else None


def _month_sql(column: str) -> str:
    """SQL of the month ('YYYY-MM', 'none' for a null) of `column` (a date or a UTC instant;
    the store's connections run in UTC)."""
    return f"coalesce(strftime(\"{column}\", '%Y-%m'), 'none')"


def _months_between(low: object, high: object) -> set[str]:
    """Every month 'YYYY-MM' from `low` to `high` (dates or datetimes; None: 'none')."""
    if low is None or high is None:
        return {"none"}
    y, m = low.year, low.month  # type: ignore[attr-defined]
    out = set()
    while (y, m) <= (high.year, high.month):  # type: ignore[attr-defined]
        out.add(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _rows_digest_sql(name: str, columns: list[tuple[str, str]]) -> str:
    """`count(*) AS n, <digest> AS h FROM name`: the row count and the sum of a 64-bit hash of
    each row over `columns` (an order-free digest of the rows as a multiset, ADR 0114)."""
    row = ", ".join(f'"{c}"' for c, _ in columns)
    return f'count(*) AS n, sum(hash({row})) AS h FROM "{name}"'


class Store:
    """The Pontual store. Open with `Store.open`; use as a context manager."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, *, read_only: bool) -> None:
        self.path = path
        self.con = con
        self.read_only = read_only
        self._tx_depth = 0
        # (table, month) pairs this process wrote, also journaled (`_note_changed`)
        self._changed: set[tuple[str, str]] = set()
        # (table, month) -> writes of it noted by this process (`_note_changed`), and the
        # month files written ahead of the publication (`write_parts_ahead`) with the count
        # of writes they saw
        self._writes: dict[tuple[str, str], int] = {}
        self._ahead: dict[tuple[str, str], tuple[int, Future[_AheadPart]]] = {}
        self._ahead_pool: ThreadPoolExecutor | None = None
        self._ahead_con: duckdb.DuckDBPyConnection | None = None

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls, path: str | Path, *, read_only: bool = False, target_version: int | None = None
    ) -> Store:
        """Open (creating and migrating when writable) the store at `path`.

        `target_version` stops migrations at that version (for tests of migration itself).
        """
        path = Path(path)
        if read_only and not path.exists():
            raise StoreError(
                "store not found",
                where=str(path),
                hint="run `pontual demo` or `pontual init` first",
            )
        if not read_only:
            # The store holds personal data (card hashes, plates): every file the writer makes
            # (the store, its WAL, the folder) is its owner's alone; a snapshot may be shared
            # with a group (`publish_snapshot`). DuckDB creates its files as the umask says.
            _restrict_umask()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the store's folder: {exc.strerror}",
                    where=str(path.parent),
                    hint="check the path given with --store (or PONTUAL_STORE)",
                ) from exc
        if path.is_dir():
            raise StoreError(
                "the store path is a folder", where=str(path), hint="give the store file's path"
            )
        try:
            con = duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as exc:
            raise _open_error(path, exc) from exc
        con.execute("SET TimeZone = 'UTC'").fetchall()
        store = cls(path, con, read_only=read_only)
        try:
            store._check_or_migrate(target_version)
        except BaseException:
            con.close()
            raise
        return store

    def close(self) -> None:
        self._stop_ahead()
        self.con.close()

    def reader(self) -> Store:
        """A second, read-only handle on this store's database, for reads on another thread
        while this one writes (DuckDB's connections of one database run concurrently; one
        connection must not be used by two threads at once). It sees what is committed, not
        this handle's open transaction. Close it before this one."""
        con = self.con.cursor()
        con.execute("SET TimeZone = 'UTC'").fetchall()
        return Store(self.path, con, read_only=True)

    def writer_beside(self) -> Store:
        """A second, writable handle on this store's database, for a writer on another thread
        (`reader`'s twin): its transactions are its own, committed apart from this handle's,
        and it must write tables that this handle does not write meanwhile. It never publishes
        the snapshot (this handle does, and reads the journal of what both wrote). Close it
        before this one."""
        self._require_writable()
        con = self.con.cursor()
        con.execute("SET TimeZone = 'UTC'").fetchall()
        return Store(self.path, con, read_only=False)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Execute and fetch every row (DuckDB 2.x refuses new work while a result is open)."""
        return self.con.execute(sql, params or []).fetchall()

    # -- schema ----------------------------------------------------------------------------
    def has_table(self, name: str) -> bool:
        """Whether the store (or lake catalogue) has table or view `name`: an older store or a
        lake may lack one."""
        found = self._run(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
        )
        return bool(found[0][0])

    @property
    def schema_version(self) -> int:
        if not self.has_table("schema_version"):
            return 0
        row = self._run("SELECT max(version) FROM schema_version")
        return int(row[0][0]) if row[0][0] is not None else 0

    def _check_or_migrate(self, target_version: int | None) -> None:
        current = self.schema_version
        latest = latest_version()
        if current > latest:
            raise SchemaVersionError(
                f"store schema version {current} is newer than this Pontual "
                f"({__version__}) knows (up to {latest})",
                where=str(self.path),
                hint="upgrade Pontual to open this store",
            )
        if self.read_only:
            if current < latest:
                raise StoreError(
                    f"store schema version {current} is older than {latest}",
                    where=str(self.path),
                    hint="open it once with a writing command (e.g. `pontual init`) to migrate it",
                )
            return
        target = latest if target_version is None else target_version
        if current == 0 and target == latest:
            self._create_latest()
            return
        for migration in all_migrations():
            if current < migration.version <= target:
                self._apply(migration)

    def _create_latest(self) -> None:
        """A new store: the latest schema in one DDL batch and one transaction, every migration
        recorded as applied (ADR 0107); the same catalogue as applying them one by one."""
        now = datetime.now(UTC)
        rows = [(m.version, m.description, now, __version__) for m in all_migrations()]
        with self.transaction():
            self.con.execute(SCHEMA_VERSION.create_sql() + ";\n" + fresh_schema_sql())
            self.con.executemany("INSERT INTO schema_version VALUES (?, ?, ?, ?)", rows)

    def _apply(self, migration: Migration) -> None:
        with self.transaction():
            self._run(SCHEMA_VERSION.create_sql())
            for name in migration.tables:
                self._run(table(name).create_sql())
            for name in migration.rebuilt:
                self._rebuild(name, f"{name}_before_{migration.version}")
            for statement in migration.sql:
                self._run(statement)
            self._run(
                "INSERT INTO schema_version VALUES (?, ?, ?, ?)",
                [migration.version, migration.description, datetime.now(UTC), __version__],
            )

    def _rebuild(self, name: str, aside: str) -> None:
        """Create table `name` again from its declaration, keeping its rows (in stored order):
        how a migration drops a key or a constraint, which DuckDB cannot do in place."""
        decl = table(name)
        self._run(f'ALTER TABLE "{name}" RENAME TO "{aside}"')
        self._run(decl.create_sql())
        old = {
            r[0]
            for r in self._run(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = "
                "current_database() AND schema_name = 'main' AND table_name = ?",
                [aside],
            )
        }
        kept = ", ".join(f'"{c}"' for c in decl.column_names if c in old)
        self._run(f'INSERT INTO "{name}" ({kept}) SELECT {kept} FROM "{aside}"')
        self._run(f'DROP TABLE "{aside}"')

    # -- transactions ----------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """All writes inside commit together or not at all (nesting joins the outer one)."""
        if self._tx_depth:
            self._tx_depth += 1
            try:
                yield self
            finally:
                self._tx_depth -= 1
            return
        self._require_writable()
        self._run("BEGIN TRANSACTION")
        self._tx_depth = 1
        try:
            yield self
        except BaseException:
            self._tx_depth = 0
            self._run("ROLLBACK")
            raise
        self._tx_depth = 0
        self._run("COMMIT")

    def _require_writable(self) -> None:
        if self.read_only:
            raise StoreError("the store is open read-only", where=str(self.path))

    # -- writing ---------------------------------------------------------------------------
    def append(
        self,
        name: str,
        df: pl.DataFrame,
        *,
        fill: Mapping[str, object] | None = None,
        new_keys: bool = False,
    ) -> AppendResult:
        """Insert the rows of `df` into table `name`; rows whose primary key exists are skipped.

        The frame is conformed to the table's declaration first (columns, order, dtypes).
        `new_keys`: the caller knows that the rows' keys are distinct and that no stored row
        has one (a new feed version's tables, whose keys start with its new feed id; the days
        of a schedule just deleted): a table keyed by its index takes a plain INSERT, which
        its index still checks (a repeated key raises and the transaction rolls back) but
        without INSERT OR IGNORE's conflict handling, a third of a GTFS load's insert time.
        """
        self._require_writable()
        decl = table(name)
        frame = decl.conform(df, fill=dict(fill or {}))
        if frame.height == 0:
            return AppendResult(0, 0)
        n_given = frame.height
        check_in_duckdb = False
        if decl.key_time_column is not None:
            stored = self._stored_keys(decl, frame)
            # Too many stored keys in the batch's range to hold in memory (a sparse backfill
            # over a long period): DuckDB anti-joins them instead, out of core.
            check_in_duckdb = stored is None
            frame = compute_new_keys(decl, frame, pl.DataFrame() if stored is None else stored)
            if frame.height == 0:
                return AppendResult(0, n_given)
        self._note_changed_frame(decl, frame)
        view = f"_append_{name}"
        written = decl.insert_columns
        if decl.identity is not None and decl.identity not in frame.columns:
            # Ids drawn as one block and written as a column: the table's per-row
            # `DEFAULT nextval(...)` would serialise the insert on one thread (2x slower).
            frame = frame.with_columns(self._reserve_ids(decl, frame.height))
            written = [decl.identity, *written]
        columns = ", ".join(f'"{c}"' for c in written)
        # String views and the newest Arrow layout: DuckDB reads Polars' buffers without a copy.
        arrow = frame.select(written).to_arrow(compat_level=pl.CompatLevel.newest())
        # Batches of a row group each (zero-copy slices): DuckDB scans batches in parallel, one
        # 1M-row batch would be one thread's work.
        batches = arrow.to_batches(max_chunksize=INSERT_BATCH_ROWS)
        self.con.register(view, pa.Table.from_batches(batches, schema=arrow.schema))
        try:
            if decl.is_key_checked:
                self._check_key(decl, view, frame)
            if check_in_duckdb:
                rows = self._run(_anti_join_insert(decl, view, columns))
            else:
                # Key-time tables: new keys kept above; key-checked tables: checked above;
                # others: stored keys skipped by their primary-key index (unless the caller
                # says every key is new: the index alone then refuses a repeated one).
                verb = "INSERT OR IGNORE" if decl.has_key_index and not new_keys else "INSERT"
                rows = self._run(f'{verb} INTO "{name}" ({columns}) SELECT {columns} FROM {view}')
        finally:
            # a refused insert aborted the transaction: keep its own error
            with suppress(duckdb.TransactionException):
                self.con.unregister(view)
        inserted = int(rows[0][0]) if rows else 0
        return AppendResult(inserted, n_given - inserted)

    def _check_key(self, decl: Table, view: str, frame: pl.DataFrame) -> None:
        """Raise when the rows of `view` (`frame`, registered) repeat a key of `decl`, among
        themselves or with a stored row (a table whose key has no index, `Table.is_key_checked`).

        A key with a service date or an instant (`event_at`: `tap_placements`) can only repeat
        a stored row within the batch's range of it. When none is stored there (the usual
        case: `replace` deleted the days first; a count, zone maps skip the rest) only the
        batch is checked, in Polars, by a 64-bit hash of its keys (`compute_repeated`) and the
        candidates compared column by column: a tenth of grouping a month's keys in DuckDB.
        Otherwise one grouping of the batch's keys and the stored keys in that range; a table
        whose key has neither reads every stored key (the smaller derived tables).
        """
        keys = ", ".join(f'"{k}"' for k in decl.primary_key)
        bound = ""
        # a key with a date or an instant: a repeated key has the batch's, so only the stored
        # rows within the batch's range of it are read (zone maps skip the rest)
        when = next((k for k in ("service_date", "event_at") if k in decl.primary_key), None)
        if when is not None:
            n_stored, low, _ = self.count_in_range(decl.name, when, frame)
            if low is not None and n_stored == 0:
                found = _first_repeated_key(frame.select(decl.primary_key))
                if found is not None:
                    raise _repeated_key_error(self.path, decl, *found)
                return
            bound = (
                f' WHERE "{when}" BETWEEN (SELECT min("{when}") FROM {view}) '
                f'AND (SELECT max("{when}") FROM {view})'
            )
        repeated = self._run(
            f"SELECT {keys}, count(*) FROM (SELECT {keys} FROM {view} UNION ALL "
            f'SELECT {keys} FROM "{decl.name}"{bound}) GROUP BY ALL HAVING count(*) > 1 LIMIT 1'
        )
        if repeated:
            *values, n = repeated[0]
            raise _repeated_key_error(self.path, decl, tuple(values), n)

    def _note_changed_frame(self, decl: Table, frame: pl.DataFrame) -> None:
        """Note the months of `frame`'s rows in table `decl` as changed (min to max: cheap,
        and a month too many only costs its republication)."""
        column = _part_column(decl.name, frame.columns)
        if column is None:
            return
        low, high, nulls = frame.select(
            pl.col(column).min().alias("lo"),
            pl.col(column).max().alias("hi"),
            pl.col(column).null_count().alias("n"),
        ).row(0)
        months = set() if low is None else _months_between(low, high)
        self._note_changed(decl.name, months | ({"none"} if nulls else set()))

    def _note_changed(self, name: str, months: set[str]) -> None:
        """Record (table, month) pairs written, in memory and in the journal beside the store
        (before the write commits: a command that fails after committing does not publish,
        and the next publication must still republish what it wrote)."""
        for m in months:
            self._writes[(name, m)] = self._writes.get((name, m), 0) + 1
        new = {(name, m) for m in months} - self._changed
        if not new or snapshot_mode() != "months":
            return  # a whole copy needs no journal
        with open(_pending_path(self.path), "a", encoding="utf-8") as journal:
            journal.writelines(f"{t}\t{m}\n" for t, m in sorted(new))
            journal.flush()
            os.fsync(journal.fileno())
        self._changed |= new

    def _reserve_ids(self, decl: Table, n: int) -> pl.Series:
        """`n` fresh values of `decl`'s identity sequence, in order, as its identity column.

        Drawn as one block (the next value, then the sequence set past the block), so that the
        insert needs no per-row `nextval`. The store has one writer, so nothing draws between;
        a rolled-back batch leaves a gap, as `nextval` does.
        """
        assert decl.identity is not None
        seq = decl.sequence_name
        sql = f"SELECT setval('{seq}', nextval('{seq}') + $1 - 1)"
        last = int(self._run(sql, [n])[0][0])
        ids = pl.int_range(last - n + 1, last + 1, dtype=pl.Int64, eager=True)
        return ids.cast(decl.column(decl.identity).dtype).alias(decl.identity)

    def count_in_range(self, name: str, column: str, frame: pl.DataFrame) -> tuple[int, Any, Any]:
        """(rows, low, high): the rows of table `name` whose `column` lies within `frame`'s
        range of it (low to high, its minimum and maximum; None when it has none). A count
        bounded so that DuckDB's zone maps skip the row groups of other days: how a write of
        new days (the usual case) finds that nothing stored can clash with it."""
        low, high = frame.select(
            pl.col(column).min().alias("lo"), pl.col(column).max().alias("hi")
        ).row(0)
        n = self._run(
            f'SELECT count(*) FROM "{name}" WHERE "{column}" BETWEEN ? AND ?', [low, high]
        )
        return int(n[0][0]), low, high

    def _stored_keys(self, decl: Table, frame: pl.DataFrame) -> pl.DataFrame | None:
        """The stored keys of `decl` within the time range of `frame`'s key time column, or
        None when there are more than `_MAX_STORED_KEYS_PER_ROW` per batch row.

        Bounded to the batch's range, so DuckDB's zone maps skip the row groups of other days;
        a batch of new days (the usual case) reads nothing.
        """
        tcol = decl.key_time_column
        assert tcol is not None
        n_stored, low, high = self.count_in_range(decl.name, tcol, frame)
        in_range = f'FROM "{decl.name}" WHERE "{tcol}" BETWEEN $1 AND $2'
        if n_stored > _MAX_STORED_KEYS_PER_ROW * max(frame.height, _MIN_KEYS_IN_MEMORY):
            return None
        keys = ", ".join(f'"{k}"' for k in decl.primary_key)
        stored = self.query(f"SELECT {keys} {in_range}", [low, high])
        # The same dtypes as the batch, so that equal keys hash equal.
        return stored.select(pl.col(k).cast(frame.schema[k]) for k in decl.primary_key)

    def replace(self, name: str, df: pl.DataFrame, where_sql: str, params: list[Any]) -> int:
        """Delete the rows of `name` matching `where_sql`, then append `df`, in one transaction.

        This is how a job re-run replaces its own partition (idempotent derived tables).
        """
        with self.transaction():
            column = _part_column(name, table(name).column_names)
            if column is not None:
                low, high, nulls = self._run(
                    f'SELECT min("{column}"), max("{column}"), count(*) - count("{column}") '
                    f'FROM "{name}" WHERE {where_sql}',
                    params,
                )[0]
                months = set() if low is None else _months_between(low, high)
                self._note_changed(name, months | ({"none"} if nulls else set()))
            self._run(f'DELETE FROM "{name}" WHERE {where_sql}', params)
            return self.append(name, df).n_inserted

    # -- reading ---------------------------------------------------------------------------
    def query(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame:
        """Run a query and return a Polars frame."""
        # DuckDB 2.x: a relation converts to Polars directly (a DB-API result has no `.pl()`).
        return self.con.sql(sql, params=params or None).pl()

    def read(
        self,
        name: str,
        where_sql: str = "",
        params: list[Any] | None = None,
        columns: Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """Read a table (optionally filtered) with its declared schema, or only `columns` of
        it (declared dtypes, in that order: a large read holds no column its reader ignores)."""
        decl: Table = table(name)
        names = list(columns) if columns is not None else decl.column_names
        cols = ", ".join(f'"{decl.column(c).name}"' for c in names)
        sql = f'SELECT {cols} FROM "{name}"' + (f" WHERE {where_sql}" if where_sql else "")
        df = self.query(sql, params)
        if columns is None:
            return decl.conform(df)
        return df.select(pl.col(c).cast(decl.column(c).dtype) for c in names)

    def count(self, name: str) -> int:
        return int(self._run(f'SELECT count(*) FROM "{name}"')[0][0])

    # -- the card-hashing key -------------------------------------------------------------
    def check_key_fingerprint(self, fingerprint: str) -> None:
        """Refuse a card-hashing key other than the one this store's cards were hashed with.

        The first call on a store records `fingerprint` (`core.settings.key_fingerprint`);
        later calls with another one raise a ConfigError (exit 2): hashes made with two keys
        would make every card two cards.
        """
        stored = self._run("SELECT fingerprint FROM hash_key_fingerprints")
        if not stored:
            self._require_writable()
            self._run(
                "INSERT INTO hash_key_fingerprints VALUES (?, ?)", [fingerprint, datetime.now(UTC)]
            )
            return
        if all(row[0] != fingerprint for row in stored):
            raise ConfigError(
                "the card-hashing key is not the one this store's cards were hashed with",
                where=str(self.path),
                hint="use the store's key file (or PONTUAL_HASH_KEY) from the backup; to change "
                "keys see docs/key-rotation.md",
            )

    # -- snapshot for readers --------------------------------------------------------------
    def publish_snapshot(
        self,
        *,
        part_min_rows: int = PART_MIN_ROWS,
        whole_min_rows: int = WHOLE_MIN_ROWS,
        mode: str | None = None,
    ) -> Path:
        """Checkpoint and publish a consistent read-only snapshot for the dashboard and the
        reports: a whole copy (`mode` "copy", the default of `snapshot_mode`) or month files
        (`_publish_months`, ADR 0104)."""
        if (mode or snapshot_mode()) == "months":
            return self._publish_months(part_min_rows, whole_min_rows)
        self._require_writable()
        self._run("CHECKPOINT")
        target = snapshot_path(self.path)
        tmp = target.with_name(target.name + ".tmp")
        shutil.copyfile(self.path, tmp)
        # Owner read/write, and group read when the store itself is group-readable (readers
        # under another account of the store's group); never anyone else.
        os.chmod(tmp, 0o600 | (stat.S_IMODE(os.stat(self.path).st_mode) & 0o040))
        os.replace(tmp, target)
        return target

    def write_parts_ahead(
        self, months: Collection[str], *, part_min_rows: int = PART_MIN_ROWS
    ) -> int:
        """Start writing the snapshot's month files (ADR 0104) of `months` ('YYYY-MM') of
        every big table this process wrote in them, on a thread beside the caller, and return
        how many were started. The next publication takes such a file instead of writing it
        again, unless a write of its table and month was noted after it started
        (`_note_changed`), or its row count or the table's columns moved since.

        For a command that finishes months one after another (a year's `match`): a finished
        month's files are written while the command goes on, on the core it leaves idle,
        instead of all at its end. The caller must have committed every write of those months
        (no open transaction: nothing is started inside one), and says they are final for now;
        a month written again after all the same is only written twice. Months mode only (a
        whole copy has no month files); a reader's handle starts nothing."""
        if self.read_only or self._tx_depth or snapshot_mode() != "months":
            return 0
        wanted = sorted(
            (t, m)
            for t, m in self._changed
            if m in months
            and ((t, m) not in self._ahead or self._ahead[(t, m)][0] != self._writes.get((t, m), 0))
        )
        if not wanted:
            return 0
        tables, columns = self._tables_and_columns()
        sizes = dict(tables)
        db = self._run("SELECT current_database()")[0][0]
        parts_dir, group = self._parts_dir()
        if self._ahead_pool is None or self._ahead_con is None:
            self._ahead_pool = ThreadPoolExecutor(1, thread_name_prefix="pontual-parts-ahead")
            self._ahead_con = self.con.cursor()
            self._ahead_con.execute("SET TimeZone = 'UTC'").fetchall()
        pool, con = self._ahead_pool, self._ahead_con
        started = 0
        for name, month in wanted:
            column = _part_column(name, [c for c, _ in columns.get(name, [])])
            if column is None or int(sizes.get(name) or 0) < part_min_rows:
                continue  # copied whole into the catalogue, or a whole file: not by month
            where, params = _month_filter(column, dict(columns[name])[column], month)
            writes = self._writes.get((name, month), 0)
            signature = ",".join(f"{c} {t}" for c, t in columns[name])
            self._ahead[(name, month)] = (
                writes,
                pool.submit(
                    _write_ahead,
                    con,
                    db,
                    name,
                    where,
                    params,
                    parts_dir / f"{name}.{month}.{time.time_ns():x}.duckdb",
                    group,
                    signature,
                ),
            )
            started += 1
        return started

    def _tables_and_columns(
        self,
    ) -> tuple[list[tuple[str, int | None]], dict[str, list[tuple[str, str]]]]:
        """The store's own tables (name, DuckDB's estimated rows), by name, and each one's
        (column, type) pairs in order."""
        tables = self._run(
            "SELECT table_name, estimated_size FROM duckdb_tables() "
            "WHERE database_name = current_database() AND schema_name = 'main' "
            "AND NOT internal AND NOT temporary ORDER BY table_name"
        )
        columns: dict[str, list[tuple[str, str]]] = {}
        for name, column, dtype in self._run(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main' "
            "AND NOT internal ORDER BY table_name, column_index"
        ):
            columns.setdefault(name, []).append((column, dtype))
        return [(str(t), n) for t, n in tables], columns

    def _parts_dir(self) -> tuple[Path, int]:
        """The snapshot's folder of month files (made when missing) and the group-read bit its
        files get: owner only, or group read when the store itself is group-readable (readers
        under another account of the store's group); never anyone else."""
        parts_dir = snapshot_parts_dir(self.path)
        group = stat.S_IMODE(os.stat(self.path).st_mode) & 0o040
        parts_dir.mkdir(exist_ok=True)
        os.chmod(parts_dir, 0o700 | (0o050 if group else 0))
        return parts_dir, group

    def _finished_ahead(self) -> dict[tuple[str, str], _AheadPart]:
        """Wait for the month files written ahead (`write_parts_ahead`) and return those that
        no later write made stale. One that failed is left to the publication, which writes
        it again and raises if the cause (a full disk) is still there."""
        fresh: dict[tuple[str, str], _AheadPart] = {}
        for key, (writes, future) in self._ahead.items():
            try:
                part = future.result()
            except Exception:  # written again by the publication
                continue
            if writes == self._writes.get(key, 0):
                fresh[key] = part
        self._ahead.clear()
        return fresh

    def _stop_ahead(self) -> None:
        """Wait for the writes ahead, then close their handle (before the store's own)."""
        if self._ahead_pool is not None:
            self._ahead_pool.shutdown(wait=True)
            self._ahead_pool = None
        if self._ahead_con is not None:
            self._ahead_con.close()
            self._ahead_con = None

    def _publish_months(self, part_min_rows: int, whole_min_rows: int) -> Path:
        """Publish the snapshot writing again only what changed since the last one (ADR 0104).

        A table of `part_min_rows` rows or more is held as one DuckDB file per month of its
        service date (or of its key instant) under `snapshot_parts_dir`; a month's file is
        written again when this store wrote rows of that month (`_note_changed`, journaled
        across processes), when its row count moved (a write that did not go through
        `append`/`replace`, such as a plain DELETE) or its columns changed (a migration). A
        table with no month of `whole_min_rows` rows or more (the GTFS tables) is one file
        of its own, written again when the digest of its rows moved (ADR 0114). Every smaller
        table is copied into the catalogue, a new file moved into place with an atomic
        rename: a reader sees the previous snapshot or the new one, never a mix (the month
        files it names are never rewritten, only replaced by new files under new names). The
        new catalogue starts as a copy of the previous one, whose copied tables are kept
        when the digest of their rows did not move (ADR 0114).
        """
        self._require_writable()
        ahead = self._finished_ahead()
        self._run("CHECKPOINT")
        target = snapshot_path(self.path)
        parts_dir, group = self._parts_dir()
        pending = _pending_path(self.path)
        changed = set(self._changed)
        if pending.exists():
            for line in pending.read_text(encoding="utf-8").splitlines():
                name, _, month = line.partition("\t")
                changed.add((name, month))
        published, copied_before = _read_published(self, target, parts_dir)
        db = self._run("SELECT current_database()")[0][0]
        tables, columns = self._tables_and_columns()
        token = f"{time.time_ns():x}"
        # The catalogue has a path of its own per publication (a folder named by the token)
        # and the snapshot path is a symbolic link to it: DuckDB shares one database
        # instance per path within a process, so a reader process that kept an old
        # snapshot open (the dashboard caches two) would get the old file again on every
        # later open of one fixed path, never the new snapshot.
        catalogue_dir = parts_dir / f"catalogue-{token}"
        catalogue_dir.mkdir()
        os.chmod(catalogue_dir, 0o700 | (0o050 if group else 0))
        tmp = catalogue_dir / target.name
        attached: list[str] = []
        rows: list[tuple[str, str, str, str, int, str]] = []
        copied: list[str] = []  # tables copied whole into the catalogue
        viewed: dict[str, str] = {}  # parted table -> the SQL of its view over its files
        same_views: set[str] = set()  # parted tables whose last catalogue's view is the same
        try:
            for name, estimated in tables:
                signature = ",".join(f"{c} {t}" for c, t in columns[name])
                column = _part_column(name, [c for c, _ in columns[name]])
                least = whole_min_rows if column is None else part_min_rows
                if name == SCHEMA_VERSION.name:  # read by `open_snapshot` before any attach
                    least = sys.maxsize
                n_rows = int(estimated or 0)
                if n_rows >= least:
                    n_rows = int(self._run(f'SELECT count(*) FROM "{name}"')[0][0])
                if n_rows < least:
                    copied.append(name)
                    continue
                if column is None:
                    # its signature also holds the digest of its rows
                    signature, months, dirty = self._changed_whole(
                        name, columns[name], signature, published
                    )
                else:
                    months, dirty = self._changed_months(
                        name,
                        column,
                        dict(columns[name])[column],
                        signature,
                        published,
                        changed,
                        n_rows,
                    )
                branches = []
                for m in sorted(months):
                    alias = f"_snap_{name}_{m.replace('-', '_')}"
                    old = published.get((name, m))
                    early = ahead.get((name, m))
                    if m in dirty or old is None:
                        if early is not None and (early.n_rows, early.signature) == (
                            months[m],
                            signature,
                        ):
                            file = early.file  # written ahead, nothing written since
                        else:
                            file = f"{name}.{m}.{token}.duckdb"
                            where, params = (
                                ("TRUE", [])
                                if column is None
                                else _month_filter(column, dict(columns[name])[column], m)
                            )
                            _write_part(self.con, db, name, where, params, parts_dir / file, group)
                    else:
                        file = old[0]
                    self._run(f"ATTACH {_quote(str(parts_dir / file))} AS {alias} (READ_ONLY)")
                    attached.append(alias)
                    rows.append((alias, name, m, file, months[m], signature))
                    branches.append(f'SELECT * FROM {alias}.main."{name}"')
                viewed[name] = " UNION ALL ".join(branches)
                before = {(m, _columns_of(r[2])) for (t, m), r in published.items() if t == name}
                if before == {(m, _columns_of(signature)) for m in months}:
                    same_views.add(name)  # same months and columns: the last view reads them
            signatures = self._copied_signatures(copied, columns)
            if copied_before is not None:
                shutil.copyfile(target.resolve(), tmp)
            self._run(f"ATTACH {_quote(str(tmp))} AS _snapshot_new")
            attached.append("_snapshot_new")
            with self.transaction():  # one commit of the catalogue's changes
                self._fill_catalogue(
                    db, copied, signatures, copied_before or {}, viewed, same_views, rows
                )
            self._copy_views(db)
            self._run("CHECKPOINT _snapshot_new")
        finally:
            for alias in reversed(attached):
                self._run(f"DETACH {alias}")
        os.chmod(tmp, 0o600 | group)
        link = target.with_name(target.name + ".tmp")
        link.unlink(missing_ok=True)
        link.symlink_to(os.path.relpath(tmp, target.parent))
        os.replace(link, target)
        # The journal is done with once the new catalogue is in place; files no catalogue
        # names are removed (a reader that attached one keeps it open: POSIX).
        pending.unlink(missing_ok=True)
        self._changed.clear()
        keep = {r[3] for r in rows} | {catalogue_dir.name}
        for path in parts_dir.iterdir():
            if path.name in keep:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        return target

    def _copied_signatures(
        self, names: list[str], columns: dict[str, list[tuple[str, str]]]
    ) -> dict[str, str]:
        """Table -> its columns and the digest of its rows (as `_changed_whole`), for the
        tables copied whole into the catalogue: one query, a scan of each small table."""
        if not names:
            return {}
        selects = [f"SELECT {_quote(n)} AS t, {_rows_digest_sql(n, columns[n])}" for n in names]
        found = {t: f"rows {n} {h}" for t, n, h in self._run(" UNION ALL ".join(selects))}
        return {n: ",".join(f"{c} {t}" for c, t in columns[n]) + ";" + found[n] for n in names}

    def _fill_catalogue(
        self,
        db: str,
        copied: list[str],
        signatures: dict[str, str],
        copied_before: dict[str, str],
        viewed: dict[str, str],
        same_views: set[str],
        rows: list[tuple[str, str, str, str, int, str]],
    ) -> None:
        """Make the attached `_snapshot_new` (empty, or the previous catalogue's copy, whose
        copied tables had `copied_before` signatures) the new catalogue: the small tables
        copied (kept when their signature did not move), a view per parted table (kept when
        in `same_views`: the same months, read through the same aliases, the same
        columns), the list of the part files and the signatures of the copied tables. The
        store's own views are dropped here and made again after (`_copy_views`)."""
        there = dict(
            self._run(
                "SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE database_name = "
                "'_snapshot_new' AND schema_name = 'main' UNION ALL SELECT view_name, 'VIEW' "
                "FROM duckdb_views() WHERE database_name = '_snapshot_new' "
                "AND schema_name = 'main' AND NOT internal"
            )
        )
        kept = {
            n for n in copied if there.get(n) == "TABLE" and copied_before.get(n) == signatures[n]
        }
        kept |= {n for n in same_views if there.get(n) == "VIEW"}
        for name, kind in there.items():
            if name not in kept:
                self._run(f'DROP {kind} _snapshot_new.main."{name}"')
        for name in copied:
            if name not in kept:
                self._run(
                    f'CREATE TABLE _snapshot_new.main."{name}" AS '
                    f'SELECT * FROM "{db}".main."{name}"'
                )
        for name, sql in viewed.items():
            if name not in kept:
                self._run(f'CREATE VIEW _snapshot_new.main."{name}" AS {sql}')
        self._run(
            f"CREATE TABLE _snapshot_new.main.{_PARTS_TABLE} (alias VARCHAR, table_name "
            "VARCHAR, month VARCHAR, file VARCHAR, n_rows BIGINT, signature VARCHAR)"
        )
        if rows:
            self.con.executemany(
                f"INSERT INTO _snapshot_new.main.{_PARTS_TABLE} VALUES (?, ?, ?, ?, ?, ?)", rows
            )
        self._run(
            f"CREATE TABLE _snapshot_new.main.{_COPIED_TABLE} (table_name VARCHAR, "
            "signature VARCHAR)"
        )
        if copied:
            self.con.executemany(
                f"INSERT INTO _snapshot_new.main.{_COPIED_TABLE} VALUES (?, ?)",
                [(n, signatures[n]) for n in copied],
            )

    def _copy_views(self, db: str) -> None:
        """Create the store's views (e.g. `scheduled_trips`, ADR 0102) in the new catalogue,
        from their own SQL, so that they read the catalogue's tables (a view that reads
        another view waits for it)."""
        views = dict(
            self._run(
                "SELECT view_name, sql FROM duckdb_views() WHERE database_name = "
                "current_database() AND schema_name = 'main' AND NOT internal "
                "AND NOT temporary"
            )
        )
        self._run("USE _snapshot_new")
        try:
            while views:
                failed: dict[str, str] = {}
                for name, sql in views.items():
                    try:
                        self._run(sql)
                    except duckdb.CatalogException:
                        failed[name] = sql
                if len(failed) == len(views):
                    self._run(next(iter(failed.values())))  # raises: a view of nothing there
                views = failed
        finally:
            self._run(f'USE "{db}"')

    def _changed_whole(
        self,
        name: str,
        columns: list[tuple[str, str]],
        signature: str,
        published: dict[tuple[str, str], tuple[str, int, str]],
    ) -> tuple[str, dict[str, int], set[str]]:
        """Table `name`, which has no month, as one part: its signature (the columns', then
        the digest of its rows), its rows (`_WHOLE` -> count), and that part if its file must
        be written again, when the signature or the count differs from the published one.

        The digest is the sum of a 64-bit hash of each row (an order-free digest of the rows
        as a multiset): any write moves it, an UPDATE that keeps the row count included. It
        costs a scan, a tenth of writing the table again (ADR 0114)."""
        n, digest = self._run(f"SELECT {_rows_digest_sql(name, columns)}")[0]
        whole = f"{signature};rows {digest}"
        old = published.get((name, _WHOLE))
        fresh = old is not None and old[1:] == (int(n), whole)
        return whole, {_WHOLE: int(n)}, set() if fresh else {_WHOLE}

    def _changed_months(
        self,
        name: str,
        column: str,
        dtype: str,
        signature: str,
        published: dict[tuple[str, str], tuple[str, int, str]],
        changed: set[tuple[str, str]],
        total: int,
    ) -> tuple[dict[str, int], set[str]]:
        """The months of table `name` (of `total` rows) now (month -> rows) and those whose
        file must be written again.

        Usually cheap: the months this store wrote are counted (a range each, zone maps skip
        the rest) and, with the published counts of the others, must add up to the table's
        row count. When they do not (a write that bypassed `append`/`replace`), or the
        table's columns changed, or it was not published by month before, every month is
        counted and any whose count moved is written again.
        """
        before = {m: rec for (t, m), rec in published.items() if t == name}
        tracked = {m for t, m in changed if t == name}
        if before and all(rec[2] == signature for rec in before.values()):
            months = {m: rec[1] for m, rec in before.items() if m not in tracked}
            for m in tracked:
                where, params = _month_filter(column, dtype, m)
                n = int(self._run(f'SELECT count(*) FROM "{name}" WHERE {where}', params)[0][0])
                if n:
                    months[m] = n
            if sum(months.values()) == total:
                return months, tracked
        stats = self._run(f'SELECT {_month_sql(column)} AS m, count(*) FROM "{name}" GROUP BY m')
        months = {str(m): int(n) for m, n in stats}
        dirty = {
            m
            for m, n in months.items()
            if m in tracked or m not in before or before[m][1:] != (n, signature)
        }
        return months, dirty


def _write_part(
    con: duckdb.DuckDBPyConnection,
    db: str,
    name: str,
    where: str,
    params: list[Any],
    path: Path,
    group: int,
    alias: str = "_snapshot_part",
) -> int:
    """Write one (table, month) file of the snapshot: the month's rows in the table's order.
    Returns its rows."""
    path.unlink(missing_ok=True)
    con.execute(f"ATTACH {_quote(str(path))} AS {alias}").fetchall()
    try:
        n_rows = con.execute(
            f'CREATE TABLE {alias}.main."{name}" AS SELECT * FROM "{db}".main."{name}" '
            f"WHERE {where}",
            params,
        ).fetchall()[0][0]
        con.execute(f"CHECKPOINT {alias}").fetchall()
    finally:
        con.execute(f"DETACH {alias}").fetchall()
    os.chmod(path, 0o600 | group)
    return int(n_rows)


def _write_ahead(
    con: duckdb.DuckDBPyConnection,
    db: str,
    name: str,
    where: str,
    params: list[Any],
    path: Path,
    group: int,
    signature: str,
) -> _AheadPart:
    """`_write_part` on the thread of `Store.write_parts_ahead` (its own handle, its own
    alias), and what it wrote (`signature`: the table's columns). A failed file is removed."""
    try:
        n_rows = _write_part(con, db, name, where, params, path, group, "_snapshot_ahead")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return _AheadPart(path.name, n_rows, signature)


def _columns_of(signature: str) -> str:
    """The columns part of a part's signature (a whole table's also holds its rows' digest)."""
    return signature.rsplit(";rows ", 1)[0]


def _month_filter(column: str, dtype: str, month: str) -> tuple[str, list[Any]]:
    """WHERE clause (and parameters) of the rows of `month` ('YYYY-MM' or 'none') by
    `column` (of DuckDB type `dtype`): a range, so that zone maps skip other months."""
    if month == "none":
        return f'"{column}" IS NULL', []
    year, mon = int(month[:4]), int(month[5:])
    end = f"{year + 1:04d}-01-01" if mon == 12 else f"{year:04d}-{mon + 1:02d}-01"
    where = f'"{column}" >= CAST(? AS {dtype}) AND "{column}" < CAST(? AS {dtype})'
    return where, [f"{month}-01", end]


def _read_published(
    store: Store, target: Path, parts_dir: Path
) -> tuple[dict[tuple[str, str], tuple[str, int, str]], dict[str, str] | None]:
    """What the published snapshot holds: (table, month) -> (file, rows, signature) of its
    part files that still exist, and table -> signature of the tables copied into its
    catalogue (None when the catalogue is not one to start the next from: none, one of
    before ADR 0114, a plain copy of before ADR 0104). The catalogue is attached read-only
    to the store's connection for the look-up (a fifth of the cost of a connection of its
    own)."""
    if not target.exists():
        return {}, None
    try:
        store._run(f"ATTACH {_quote(str(target.resolve()))} AS _snapshot_old (READ_ONLY)")
    except duckdb.Error:
        return {}, None  # damaged or unreadable: everything is written again
    try:
        found = {
            r[0]
            for r in store._run(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = '_snapshot_old' "
                "AND schema_name = 'main' AND table_name IN (?, ?)",
                [_PARTS_TABLE, _COPIED_TABLE],
            )
        }
        if _PARTS_TABLE not in found:
            return {}, None
        rows = store._run(
            "SELECT table_name, month, file, n_rows, signature "
            f"FROM _snapshot_old.main.{_PARTS_TABLE}"
        )
        copied = (
            dict(
                store._run(f"SELECT table_name, signature FROM _snapshot_old.main.{_COPIED_TABLE}")
            )
            if _COPIED_TABLE in found
            else None
        )
    finally:
        store._run("DETACH _snapshot_old")
    parts = {(t, m): (f, int(n), sig) for t, m, f, n, sig in rows if (parts_dir / f).exists()}
    return parts, copied


def _open_error(path: Path, exc: duckdb.Error) -> StoreError:
    """Why DuckDB could not open the store, in words: locked, corrupt, forbidden or other."""
    text = str(exc)
    lowered = text.lower()
    if "could not set lock" in lowered or "conflicting lock" in lowered:
        holder = re.search(r"\(PID (\d+)\)", text)
        return StoreError(
            "the store is open for writing by another process"
            + (f" (PID {holder[1]})" if holder else ""),
            where=str(path),
            hint="one process writes the store at a time: wait for it or stop it "
            "(`pontual listen`/`serve` hold it while running); readers use the snapshot",
        )
    if "not a valid duckdb database" in lowered or "corrupt" in lowered or "checksum" in lowered:
        return StoreError(
            "the store file is damaged or is not a Pontual store (not a DuckDB database)",
            where=str(path),
            hint="restore the store from the backup, or give the right --store path",
        )
    if "permission denied" in lowered or isinstance(exc, duckdb.PermissionException):
        return StoreError(
            "no permission to open the store file",
            where=str(path),
            hint="run as the store's owner, or check the file's permissions",
        )
    return StoreError(f"cannot open the store: {text.splitlines()[0]}", where=str(path))


def _restrict_umask() -> None:
    """Take group and other permissions out of this process's umask (files made from now on
    are the owner's alone). Process-wide and kept: the store's WAL is created later, at the
    first write after each checkpoint."""
    current = os.umask(0o077)
    os.umask(current | 0o077)


def open_snapshot(path: str | Path) -> Store:
    """Open the published snapshot of the store at `path` read-only (what readers use): its
    catalogue, with the month files of its big tables attached (ADR 0104)."""
    snap = snapshot_path(Path(path))
    if not snap.exists():
        raise StoreError(
            "no published snapshot of the store",
            where=str(snap),
            hint="run a pipeline command (e.g. `pontual demo --no-serve`) to publish one",
        )
    parts_dir = snapshot_parts_dir(Path(path))
    for attempt in range(_OPEN_RETRIES):
        # the catalogue the link names now (its own path per publication, ADR 0104)
        catalogue = snap.resolve()
        try:
            store = Store.open(catalogue, read_only=True)
        except StoreError:
            if catalogue.exists() or attempt == _OPEN_RETRIES - 1:
                raise
            continue  # replaced and removed between the link's reading and the open
        try:
            _attach_parts(store, parts_dir)
        except duckdb.IOException:
            # the writer published a new snapshot between our open and the attach, and
            # removed a month file the one we opened names: open the new one
            store.close()
            if attempt == _OPEN_RETRIES - 1:
                raise
            continue
        except BaseException:
            store.close()
            raise
        return store
    raise AssertionError("unreachable")


def _attach_parts(store: Store, parts_dir: Path) -> None:
    """Attach the month files the snapshot's catalogue names (none for a plain copy)."""
    found = store._run(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND table_name = ?",
        [_PARTS_TABLE],
    )[0][0]
    if not found:
        return
    # Another open of the same catalogue in this process shares its DuckDB instance, with
    # the month files already attached.
    attached = {r[0] for r in store._run("SELECT database_name FROM duckdb_databases()")}
    for alias, file in store._run(f"SELECT alias, file FROM {_PARTS_TABLE} ORDER BY alias"):
        if alias not in attached:
            store._run(f"ATTACH {_quote(str(parts_dir / file))} AS {alias} (READ_ONLY)")
