"""The DuckDB store: one file, one writing process, versioned schema.

The pipeline process is the only writer. Readers (the dashboard, the real-time feed) never open
the store file itself: DuckDB locks a file opened for writing against every other process. They
open the *published snapshot* instead, a consistent copy that the writer replaces atomically
after each job (`Store.publish_snapshot`), so they keep working while the pipeline writes.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
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
_INSERT_BATCH_ROWS = 122_880


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


def compute_new_keys(decl: Table, frame: pl.DataFrame, stored: pl.DataFrame) -> pl.DataFrame:
    """The rows of `frame` whose key is neither in `stored` (the stored keys) nor repeated in
    `frame` (the first of repeated rows is kept). A null key value equals a null one.

    Keys are compared through a 64-bit hash of the key columns first (cheap on a million rows,
    where joins on the raw string and time columns are not); rows whose hash matches are then
    compared column by column, so a hash collision never drops a row.
    """
    key = list(decl.primary_key)
    hashes = frame.select(pl.struct(key).hash()).to_series().alias("_key_hash")
    hashed = frame.with_columns(hashes)
    # Distinct hashes prove distinct keys; only a batch with a repeated hash pays the exact
    # (and ten times dearer) de-duplication on the key columns.
    if hashes.n_unique() < hashes.len():
        hashed = hashed.unique(subset=key, keep="first", maintain_order=True)
    if stored.height == 0:
        return hashed.drop("_key_hash")
    stored_hashed = stored.select(key).with_columns(pl.struct(key).hash().alias("_key_hash"))
    index = hashed.with_row_index("_pos")
    pairs = index.select("_pos", "_key_hash", *key).join(
        stored_hashed, on="_key_hash", how="inner", suffix="_stored"
    )
    same = pl.all_horizontal(pl.col(k).eq_missing(pl.col(f"{k}_stored")) for k in key)
    seen = pairs.filter(same).select("_pos")
    return index.join(seen, on="_pos", how="anti", maintain_order="left").drop("_pos", "_key_hash")


def snapshot_path(path: Path) -> Path:
    """Where the read-only snapshot of a store file is published."""
    return path.with_name(path.stem + ".snapshot" + path.suffix)


class Store:
    """The Pontual store. Open with `Store.open`; use as a context manager."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, *, read_only: bool) -> None:
        self.path = path
        self.con = con
        self.read_only = read_only
        self._tx_depth = 0

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
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Execute and fetch every row (DuckDB 2.x refuses new work while a result is open)."""
        return self.con.execute(sql, params or []).fetchall()

    # -- schema ----------------------------------------------------------------------------
    @property
    def schema_version(self) -> int:
        exists = self._run(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
        )
        if exists[0][0] == 0:
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
            for statement in migration.sql:
                self._run(statement)
            self._run(
                "INSERT INTO schema_version VALUES (?, ?, ?, ?)",
                [migration.version, migration.description, datetime.now(UTC), __version__],
            )

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
        self, name: str, df: pl.DataFrame, *, fill: Mapping[str, object] | None = None
    ) -> AppendResult:
        """Insert the rows of `df` into table `name`; rows whose primary key exists are skipped.

        The frame is conformed to the table's declaration first (columns, order, dtypes).
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
        batches = arrow.to_batches(max_chunksize=_INSERT_BATCH_ROWS)
        self.con.register(view, pa.Table.from_batches(batches, schema=arrow.schema))
        try:
            if check_in_duckdb:
                rows = self._run(_anti_join_insert(decl, view, columns))
            else:
                # Key-time tables: keys checked above; others: by their primary-key index.
                by_index = decl.primary_key and decl.key_time_column is None
                verb = "INSERT OR IGNORE" if by_index else "INSERT"
                rows = self._run(f'{verb} INTO "{name}" ({columns}) SELECT {columns} FROM {view}')
        finally:
            self.con.unregister(view)
        inserted = int(rows[0][0]) if rows else 0
        return AppendResult(inserted, n_given - inserted)

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

    def _stored_keys(self, decl: Table, frame: pl.DataFrame) -> pl.DataFrame | None:
        """The stored keys of `decl` within the time range of `frame`'s key time column, or
        None when there are more than `_MAX_STORED_KEYS_PER_ROW` per batch row.

        Bounded to the batch's range, so DuckDB's zone maps skip the row groups of other days;
        a batch of new days (the usual case) reads nothing.
        """
        tcol = decl.key_time_column
        assert tcol is not None
        low, high = frame.select(
            pl.col(tcol).min().alias("lo"), pl.col(tcol).max().alias("hi")
        ).row(0)
        in_range = f'FROM "{decl.name}" WHERE "{tcol}" BETWEEN $1 AND $2'
        n_stored = self._run(f"SELECT count(*) {in_range}", [low, high])[0][0]
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
    def publish_snapshot(self) -> Path:
        """Checkpoint and publish a consistent read-only copy for the dashboard and the feed.

        The copy is written beside the store and moved into place with an atomic rename, so a
        reader sees either the previous snapshot or the new one, never a half-written file.
        """
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
    """Open the published snapshot of the store at `path` read-only (what readers use)."""
    snap = snapshot_path(Path(path))
    if not snap.exists():
        raise StoreError(
            "no published snapshot of the store",
            where=str(snap),
            hint="run a pipeline command (e.g. `pontual demo --no-serve`) to publish one",
        )
    return Store.open(snap, read_only=True)
