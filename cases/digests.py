"""The digest of a raw day, and its reuse while the day is unchanged (ADR 0113).

- `compute_day_digest`: the SHA-256 of one raw table's rows of one service day (method
  `DIGEST_METHOD`, duckdb-text-v1): its rows ordered by every recorded column, each written as
  its columns cast to text by DuckDB (UTC session), joined by U+001F, nulls as U+0000, rows
  joined by newlines. The legal definition: `raw_day_digests` records it, `pontual verify`
  recomputes it in full.
- `compute_day_fingerprints`: a cheap fingerprint of each day of a period in one DuckDB scan
  (row count, two sums of DuckDB row hashes), about a tenth of the CPU of the SHA-256.
- `compute_raw_day_digests`: each day's *current* digest, taken from `raw_day_fingerprints`
  while the day's fingerprint holds, hashed in full otherwise (what reports' input hashes and
  new reference digests use); `record_day_fingerprints` / `record_ingested_day_fingerprints`
  write that table for given days / for the days an ingest touched.

No import of the case database: `pontual ingest` digests the days it touched through this
module alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa

from core import __version__
from core.periods import local_bounds, range_period
from core.schema import table
from core.store import Store

RAW_TABLES = ("vehicle_locations", "fare_transactions")
DIGEST_METHOD = "duckdb-text-v1"


def _day_sql(name: str, columns: list[str], *, bounded: bool = True, by_first: bool = False) -> str:
    """The day's rows as their canonical text lines, in digest order: each row's cells as text
    (NULL as chr(0)) joined by chr(31), rows ordered by every column; each line ends with its
    newline (`compute_day_digest` hashes every byte but the last line's newline). `by_first`:
    ordered by the first column alone, returned beside each line as `k` (the same order when
    no two rows share that column's value: `compute_day_digest` checks it)."""
    cells = ", ".join(f'coalesce(CAST("{c}" AS VARCHAR), chr(0))' for c in columns)
    order = f'"{columns[0]}"' if by_first else ", ".join(f'"{c}"' for c in columns)
    key = f', "{columns[0]}" AS k' if by_first else ""
    where = " WHERE event_at >= ? AND event_at < ?" if bounded else ""
    return (
        f"SELECT concat_ws(chr(31), {cells}) || chr(10) AS line{key} "
        f'FROM "{name}"{where} ORDER BY {order}'
    )


def _text_bytes(array: pa.Array) -> memoryview:
    """The UTF-8 bytes of a string array's values, back to back (its data buffer between its
    first and last offsets: no copy)."""
    if array.type not in (pa.string(), pa.large_string()):
        array = array.cast(pa.large_string())  # a string view's values are not contiguous
    width = np.int32 if array.type == pa.string() else np.int64
    offsets = np.frombuffer(array.buffers()[1], dtype=width)
    first, last = offsets[array.offset], offsets[array.offset + len(array)]
    data = array.buffers()[2]
    return memoryview(data)[first:last] if data is not None else memoryview(b"")


def compute_day_digest(
    store: Store,
    name: str,
    day: date,
    tz: str,
    columns: list[str] | None = None,
    *,
    whole: bool = False,
) -> tuple[int, str, list[str]]:
    """(n_rows, sha256, columns) of table `name`'s rows of the local service day `day`: the
    SHA-256 of the day's canonical lines (`_day_sql`) joined by newlines (method
    `DIGEST_METHOD`). `whole`: every row of the relation (a lake day's partition,
    `compute_lake_day_digest`), so a row filed under the day with an instant outside it
    changes the digest too.

    DuckDB orders the lines (a parallel sort) and writes each one's newline; hashlib hashes
    the Arrow batches' text buffers as they come, holding back the last byte (the final
    newline, which the joined text never had): the same bytes, so the same digest, as joining
    the lines in Python (a third less CPU: no joined copy, no re-encoding) or DuckDB's own
    `sha256(string_agg(... ORDER BY ...))` (several times slower). A table whose first
    column is an integer (`ping_id`) is first sorted by it alone, which is the order of every
    column when no two rows share it: checked on the rows as they are hashed, and the day is
    sorted by every column when they do (a row repeated by hand)."""
    cols = columns if columns is not None else table(name).column_names
    params = None if whole else list(local_bounds(range_period(day, day), tz))
    if table(name).columns[0].dtype.is_integer() and cols[0] == table(name).column_names[0]:
        got = _hash_lines(store, _day_sql(name, cols, bounded=not whole, by_first=True), params)
        if got is not None:
            return (*got, cols)
    got = _hash_lines(store, _day_sql(name, cols, bounded=not whole), params)
    assert got is not None  # only a keyed read gives up
    return (*got, cols)


def _hash_lines(store: Store, sql: str, params: list[Any] | None) -> tuple[int, str] | None:
    """(n_rows, sha256) of the canonical lines `sql` returns, hashed as the Arrow batches
    come, the final newline held back. With a key column `k` (an integer first column, the
    rows ordered by it alone): None as soon as a key is null or not above the one before it
    (two rows share it, so only every column orders them): the caller orders by all."""
    reader = store.con.sql(sql, params=params).to_arrow_reader()
    digest = hashlib.sha256()
    n_rows = 0
    held = b""  # the last newline seen: hashed only when more text follows it
    last_key: int | None = None
    for batch in reader:
        if batch.num_rows == 0:
            continue
        if batch.num_columns > 1:
            keys = batch.column(1)
            if keys.null_count:
                return None
            values = keys.to_numpy()
            if (np.diff(values) <= 0).any() or (last_key is not None and values[0] <= last_key):
                return None
            last_key = int(values[-1])
        text = _text_bytes(batch.column(0))
        digest.update(held)
        digest.update(text[:-1])
        held = bytes(text[-1:])
        n_rows += batch.num_rows
    return n_rows, digest.hexdigest()


FINGERPRINT_METHOD = "duckdb-hash-sum-v1"
"""How a day's rows are fingerprinted (`_fingerprint_sql`); the DuckDB version that ran it is
recorded beside the sums, since DuckDB does not promise `hash()` across versions."""
_TWO_64 = 18446744073709551616


def _fingerprint_sql(name: str, columns: list[str], dtypes: list[pl.DataType]) -> str:
    """Per local service day (parameter 1: the time zone) of the rows of `name` from parameter
    2 to parameter 3 (UTC instants): n_rows and two sums modulo 2^64 of DuckDB's `hash()` of
    each row, its columns in digest order (a) and in reverse order after a salt (b).

    A sum of row hashes does not depend on the rows' order (no sort) and moves with any row
    added, removed or changed (a row repeated adds its hash again); `hash()` is order-sensitive
    across its arguments, so two values swapped between columns move it too. DuckDB hashes 0.0
    and -0.0 alike where their text differs: a float column adds its sign bit."""
    parts: list[str] = []
    for c, dtype in zip(columns, dtypes, strict=True):
        parts.append(f'"{c}"')
        if dtype.is_float():
            parts.append(f'signbit("{c}")')
    a = ", ".join(parts)
    b = ", ".join(["'pontual-b'", *reversed(parts)])
    return (
        "SELECT CAST(timezone(?, event_at) AS DATE) AS service_date, count(*) AS n_rows, "
        f"CAST(sum(hash({a})) % {_TWO_64} AS UBIGINT) AS row_hash_sum_a, "
        f"CAST(sum(hash({b})) % {_TWO_64} AS UBIGINT) AS row_hash_sum_b "
        f'FROM "{name}" WHERE event_at >= ? AND event_at < ? GROUP BY ALL'
    )


def compute_day_fingerprints(
    store: Store, name: str, start: date, end: date, tz: str
) -> pl.DataFrame:
    """The fingerprint of each day of raw table `name` from `start` to `end` (inclusive) that
    has rows: service_date, n_rows, row_hash_sum_a, row_hash_sum_b (`_fingerprint_sql`), in one
    vectorised scan of the period (about a tenth of the CPU of the days' SHA-256)."""
    decl = table(name)
    lo, _ = local_bounds(range_period(start, start), tz)
    _, hi = local_bounds(range_period(end, end), tz)
    sql = _fingerprint_sql(name, decl.column_names, [c.dtype for c in decl.columns])
    return (
        store.query(sql, [tz, lo, hi])
        .with_columns(pl.col("service_date").cast(pl.Date), pl.col("n_rows").cast(pl.Int64))
        .sort("service_date")
    )


CURRENT_SCHEMA = {
    "service_date": pl.Date,
    "table_name": pl.String,
    "n_rows": pl.Int64,
    "sha256": pl.String,
    "digest_method": pl.String,
    "row_hash_sum_a": pl.UInt64,
    "row_hash_sum_b": pl.UInt64,
    "is_reused": pl.Boolean,
}
"""What `compute_raw_day_digests` returns: a row per raw day with rows; is_reused: the digest
was taken from `raw_day_fingerprints` (the day's fingerprint unchanged), not hashed again."""


def _day_runs(days: Iterable[date]) -> list[tuple[date, date]]:
    """Consecutive days as (first, last) runs: one fingerprint scan per run."""
    runs: list[tuple[date, date]] = []
    for day in sorted(set(days)):
        if runs and (day - runs[-1][1]).days == 1:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def compute_raw_day_digests(
    store: Store,
    name: str,
    start: date,
    end: date,
    tz: str,
    *,
    known: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The current digest (`compute_day_digest`, the table's current columns) of each day of
    raw table `name` from `start` to `end` (inclusive) that has rows (CURRENT_SCHEMA).

    One fingerprint scan of the period (`compute_day_fingerprints`); a day whose row count,
    both hash sums, time zone, digest columns and DuckDB version equal its row in
    `raw_day_fingerprints` reuses that row's SHA-256, any other day is hashed in full. A row
    written behind Pontual's back moves the day's fingerprint, so the day is hashed again
    (ADR 0113: what only `pontual verify` catches is a change crafted to keep both sums).
    `known` (service_date, n_rows, sha256): days just hashed in full with the current columns
    (by `pontual verify`), taken as they are and not marked reused."""
    method = f"{DIGEST_METHOD}:{','.join(table(name).column_names)}"
    prints = compute_day_fingerprints(store, name, start, end, tz)
    keys = ["service_date", "n_rows", "row_hash_sum_a", "row_hash_sum_b"]
    if store.has_table("raw_day_fingerprints"):
        cached = store.query(
            "SELECT service_date, n_rows, row_hash_sum_a, row_hash_sum_b, sha256 "
            "FROM raw_day_fingerprints WHERE table_name = ? AND service_date BETWEEN ? AND ? "
            "AND time_zone = ? AND digest_method = ? AND duckdb_version = ?",
            [name, start, end, tz, method, duckdb.__version__],
        ).with_columns(pl.col("service_date").cast(pl.Date))
    else:
        cached = pl.DataFrame(schema={**{k: CURRENT_SCHEMA[k] for k in keys}, "sha256": pl.String})
    if known is not None:
        known = known.select(
            pl.col("service_date").cast(pl.Date), pl.col("n_rows").cast(pl.Int64), "sha256"
        )
        cached = pl.concat(
            [
                prints.join(known, on=["service_date", "n_rows"]).with_columns(
                    pl.lit(False).alias("is_reused")
                ),
                cached.join(known, on="service_date", how="anti").with_columns(
                    pl.lit(True).alias("is_reused")
                ),
            ]
        )
    else:
        cached = cached.with_columns(pl.lit(True).alias("is_reused"))
    joined = prints.join(cached, on=keys, how="left")
    rows = []
    for day, n, a, b, sha, reused in joined.select(*keys, "sha256", "is_reused").iter_rows():
        if sha is not None:
            rows.append((day, name, n, sha, method, a, b, reused))
        else:  # one query per day hashed: bounded memory
            n, sha, _ = compute_day_digest(store, name, day, tz)
            rows.append((day, name, n, sha, method, a, b, False))
    return pl.DataFrame(rows, schema=CURRENT_SCHEMA, orient="row")


def record_day_fingerprints(
    store: Store,
    tz: str,
    *,
    days: Iterable[date] | None = None,
    tables: Iterable[str] = RAW_TABLES,
    known: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Bring `raw_day_fingerprints` up to date for `days` (every day with rows when None) of
    each raw table in `tables`: each day is fingerprinted, hashed again only when its
    fingerprint moved, and the rows of the days hashed again are written. `known`: as in
    `compute_raw_day_digests` (one table). Returns the current digest of every such day
    (CURRENT_SCHEMA), reused or not."""
    wanted = [] if days is None else sorted(set(days))
    parts = []
    for name in tables:
        if days is None:
            span = store.query(
                f"SELECT CAST(timezone(?, min(event_at)) AS DATE) AS lo, "
                f'CAST(timezone(?, max(event_at)) AS DATE) AS hi FROM "{name}"',
                [tz, tz],
            ).row(0)
            runs = [] if span[0] is None else [(span[0], span[1])]
        else:
            runs = _day_runs(wanted)
        for first, last in runs:
            got = compute_raw_day_digests(store, name, first, last, tz, known=known)
            parts.append(got)
            new = got.filter(~pl.col("is_reused"))
            if new.height:
                store.replace(
                    "raw_day_fingerprints",
                    new.drop("is_reused").with_columns(
                        pl.lit(tz).alias("time_zone"),
                        pl.lit(duckdb.__version__).alias("duckdb_version"),
                        pl.lit(datetime.now(UTC)).alias("digested_at"),
                        pl.lit(__version__).alias("pontual_version"),
                    ),
                    "table_name = ? AND list_contains(?, service_date)",
                    [name, new["service_date"].to_list()],
                )
    return pl.concat(parts) if parts else pl.DataFrame(schema=CURRENT_SCHEMA)


def record_ingested_day_fingerprints(store: Store, tz: str, since: datetime) -> pl.DataFrame:
    """`record_day_fingerprints` for the raw days an ingest touched: the days of the rows
    ingested at or after `since` (`ingested_at`, the ingest's start), in each raw table.
    Only those days are fingerprinted and, since their rows changed, hashed again."""
    parts = []
    for name in RAW_TABLES:
        touched = store.query(
            f'SELECT DISTINCT CAST(timezone(?, event_at) AS DATE) AS d FROM "{name}" '
            "WHERE ingested_at >= ?",
            [tz, since],
        )["d"].to_list()
        if touched:
            parts.append(record_day_fingerprints(store, tz, days=touched, tables=(name,)))
    return pl.concat(parts) if parts else pl.DataFrame(schema=CURRENT_SCHEMA)
