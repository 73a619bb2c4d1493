"""The digest of a raw day, and its reuse while the day is unchanged (ADR 0113).

- `compute_day_digest`: the SHA-256 of one raw table's rows of one service day by a method
  (`DIGEST_METHODS`). New digests use `DIGEST_METHOD`, arrow-binary-v1 (`_hash_binary`):
  per column, a SHA-256 of its validity bytes, of its strings' lengths and of its values'
  bytes (fixed-width little-endian; strings as UTF-8), the rows ordered by every column;
  the day's digest is the SHA-256 of those digests in column order (ADR 0113, addendum).
  Digests recorded before it keep theirs, duckdb-text-v1 (`TEXT_METHOD`, `_day_sql`): the
  rows ordered by every column, each written as its columns cast to text by DuckDB (UTC
  session), joined by U+001F, nulls as U+0000, rows joined by newlines. `raw_day_digests`
  records the method and columns; `pontual verify` recomputes with the recorded one.
- `compute_day_fingerprints`: a cheap fingerprint of each day of a period in one DuckDB scan
  (row count, two sums of DuckDB row hashes): a tenth of the CPU of the text SHA-256, two
  thirds of the binary one (an ingest reads them beside the rows it hashes instead).
- `compute_raw_day_digests`: each day's *current* digest, taken from `raw_day_fingerprints`
  while the day's fingerprint holds, hashed in full otherwise, by the method of the day's
  reference digest when it has one (what reports' input hashes and new reference digests
  use); `record_day_fingerprints` / `record_ingested_day_fingerprints` write that table for
  given days / for the days an ingest touched.

No import of the case database: `pontual ingest` digests the days it touched through this
module alone.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from cases.errors import CaseError
from core import __version__
from core.periods import local_bounds, range_period
from core.schema import table
from core.store import Store

RAW_TABLES = ("vehicle_locations", "fare_transactions")
TEXT_METHOD = "duckdb-text-v1"
"""The first method: the rows' DuckDB text, hashed as one string (`_day_sql`)."""
BINARY_METHOD = "arrow-binary-v1"
"""The rows' values as bytes, hashed per column (`_hash_binary`): about 4x less CPU."""
DIGEST_METHOD = BINARY_METHOD
"""The method of every digest computed anew (a day with no reference digest yet)."""
DIGEST_METHODS = (TEXT_METHOD, BINARY_METHOD)


def split_method(recorded: str, where: str = "") -> tuple[str, list[str]]:
    """(method, columns) of a recorded `digest_method` ('method:col1,col2,...'); CaseError
    for a method this version does not know."""
    method, _, cols = recorded.partition(":")
    if method not in DIGEST_METHODS:
        raise CaseError(
            f"unknown digest method {method!r}",
            where=where or None,
            hint="verify with the Pontual version that recorded it",
        )
    return method, cols.split(",")


def method_of(name: str, method: str = DIGEST_METHOD) -> str:
    """The recorded `digest_method` of a digest of raw table `name`'s current columns."""
    return f"{method}:{','.join(table(name).column_names)}"


def _day_sql(name: str, columns: list[str], *, bounded: bool = True, by_first: bool = False) -> str:
    """duckdb-text-v1: the day's rows as their canonical text lines, in digest order: each
    row's cells as text (NULL as chr(0)) joined by chr(31), rows ordered by every column; each
    line ends with its newline (`_hash_lines` hashes every byte but the last line's newline).
    `by_first`: ordered by the first column alone, returned beside each line as `k` (the same
    order when no two rows share that column's value: `_hash_lines` checks it)."""
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
    offsets = _offsets(array)
    first, last = offsets[0], offsets[-1]
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
    method: str = DIGEST_METHOD,
) -> tuple[int, str, list[str]]:
    """(n_rows, sha256, columns) of table `name`'s rows of the local service day `day` by
    `method` (`DIGEST_METHODS`; its columns: `columns`, else the table's). `whole`: every row
    of the relation (a lake day's partition, `compute_lake_day_digest`), so a row filed under
    the day with an instant outside it changes the digest too.

    Both methods order the rows by every column. The rows are first read in the order they
    are stored, then sorted by the first column alone, and are taken in that order when the
    first column rises strictly (no null, no two rows sharing it: then it is the order of
    every column), checked on the rows as they are hashed; else they are sorted by every
    column (a row repeated by hand). duckdb-text-v1 starts at the sort by the first column,
    for an integer one (`ping_id`)."""
    cols = columns if columns is not None else table(name).column_names
    params = None if whole else list(local_bounds(range_period(day, day), tz))
    if method == BINARY_METHOD:
        n_rows, sha, _ = _binary_day(store, name, cols, params, whole=whole)
        return n_rows, sha, cols
    if method != TEXT_METHOD:
        raise CaseError(f"unknown digest method {method!r}", where=f"{name} {day}")
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
            values = _numbers(keys)
            if (np.diff(values) <= 0).any() or (last_key is not None and values[0] <= last_key):
                return None
            last_key = int(values[-1])
        text = _text_bytes(batch.column(0))
        digest.update(held)
        digest.update(text[:-1])
        held = bytes(text[-1:])
        n_rows += batch.num_rows
    return n_rows, digest.hexdigest()


def _binary_day(
    store: Store,
    name: str,
    columns: list[str],
    params: list[Any] | None,
    *,
    whole: bool = False,
    sums: tuple[str, ...] = (),
) -> tuple[int, str, list[int]]:
    """(n_rows, sha256, sums) of the day by arrow-binary-v1, in the stored order, else the
    first column's, else every column's (`compute_day_digest`). `sums`: SQL expressions of a
    UBIGINT per row (the fingerprint's row hashes, `_row_hashes`), read beside the rows and
    summed modulo 2^64: the day's fingerprint from the same read."""
    for order in ("stored", "first", "every"):
        sql = _binary_sql(name, columns, bounded=not whole, order=order, sums=sums)
        got = _hash_binary(store, sql, params, is_checked=order != "every", n_sums=len(sums))
        if got is not None:
            return got
    raise AssertionError("the order of every column is never given up")


def _binary_sql(
    name: str, columns: list[str], *, bounded: bool, order: str, sums: tuple[str, ...] = ()
) -> str:
    """arrow-binary-v1: the day's rows, their columns as stored, in the order of `order`:
    'stored' (none asked), 'first' (the first column), 'every' (every column, ascending,
    nulls last); then the `sums` expressions, as s0, s1, ..."""
    listed = ", ".join(
        [*(f'"{c}"' for c in columns), *(f"{e} AS s{i}" for i, e in enumerate(sums))]
    )
    where = " WHERE event_at >= ? AND event_at < ?" if bounded else ""
    by = {
        "stored": "",
        "first": f' ORDER BY "{columns[0]}" ASC NULLS LAST',
        "every": " ORDER BY " + ", ".join(f'"{c}" ASC NULLS LAST' for c in columns),
    }[order]
    return f'SELECT {listed} FROM "{name}"{where}{by}'


# Rows per Arrow batch read back to be hashed: a batch's buffers (a few MB) are still in the
# CPU's cache when they are hashed, and DuckDB fills them without growing big ones; 32 768
# rows took 12 % less CPU than DuckDB's default 131 072 on a month of pings (8 192: more
# Python calls per row). The digest does not depend on it (each stream is hashed as a whole).
DIGEST_BATCH_ROWS = 32_768
# The validity stream of a batch without nulls (a byte 1 per row), allocated once.
_ONES = np.ones(DIGEST_BATCH_ROWS, dtype=np.uint8)


def _is_text(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)
    )


def _hash_binary(
    store: Store, sql: str, params: list[Any] | None, *, is_checked: bool, n_sums: int = 0
) -> tuple[int, str, list[int]] | None:
    """(n_rows, sha256) by arrow-binary-v1 of the rows `sql` returns, hashed as the Arrow
    batches come. Per column, in order, its byte streams, each hashed apart (so a batch's
    size never matters): its validity (a byte per row, 1 present, 0 null); for a string
    column the UTF-8 length of each value (uint32 little-endian; 0 for null) and the values'
    UTF-8 bytes back to back; for any other column each value fixed-width little-endian
    (int32/int64 two's complement, float64 IEEE 754 bits, timestamp int64 microseconds since
    1970-01-01 UTC; null: zero bytes). The digest: SHA-256 of the streams' SHA-256 (32 bytes
    each) in that order. `is_checked`: None as soon as the first column does not rise
    strictly (a null, two rows sharing it, out of order): the caller sorts by more. The last
    `n_sums` columns are not hashed but summed, modulo 2^64 (UBIGINT row hashes)."""
    reader = store.con.sql(sql, params=params).to_arrow_reader(DIGEST_BATCH_ROWS)
    n_columns = len(reader.schema) - n_sums
    streams = [
        [hashlib.sha256() for _ in range(3 if _is_text(field.type) else 2)]
        for field in list(reader.schema)[:n_columns]
    ]
    sums = [0] * n_sums
    n_rows = 0
    last: pa.Scalar | None = None
    for batch in reader:
        if batch.num_rows == 0:
            continue
        if is_checked:
            keys = batch.column(0)
            if keys.null_count or not _rises(keys, last):
                return None
            last = keys[len(keys) - 1]
        for hashers, values in zip(streams, batch.columns[:n_columns], strict=True):
            _hash_column(hashers, values)
        for i, values in enumerate(batch.columns[n_columns:]):
            sums[i] = (sums[i] + int(_numbers(values).sum(dtype=np.uint64))) % _TWO_64
        n_rows += batch.num_rows
    digest = hashlib.sha256()
    for hashers in streams:
        for hasher in hashers:
            digest.update(hasher.digest())
    return n_rows, digest.hexdigest(), sums


def _rises(keys: pa.Array, last: pa.Scalar | None) -> bool:
    """Whether `keys` (no null) rise strictly, from above `last` (the previous batch's last
    key). Strings compare by their UTF-8 bytes, as DuckDB's sort; a NaN never rises."""
    n = len(keys)
    if last is not None and not pc.less(last, keys[0]).as_py():
        return False
    return n < 2 or bool(pc.all(pc.less(keys.slice(0, n - 1), keys.slice(1))).as_py())


def _hash_column(hashers: list[Any], values: pa.Array) -> None:
    """Feed one batch of one column to its streams' hashers (`_hash_binary`)."""
    n = len(values)
    valid: np.ndarray[Any, Any] | None = None
    if values.null_count:
        valid = _bools(pc.is_valid(values))
        hashers[0].update(valid.view(np.uint8))
    else:
        hashers[0].update(_ONES[:n] if n <= _ONES.size else np.ones(n, dtype=np.uint8))
    kind = values.type
    if _is_text(kind):
        if kind not in (pa.string(), pa.large_string()):
            values = values.cast(pa.large_string())  # a string view's values are not contiguous
        offsets = _offsets(values)
        lengths = np.diff(offsets)
        if valid is not None and lengths[~valid].any():  # a null slot may hold bytes
            values = pc.fill_null(values, "")
            offsets = _offsets(values)
            lengths = np.diff(offsets)
        hashers[1].update(lengths.astype("<u4"))
        data = values.buffers()[2]
        if data is not None:
            hashers[2].update(memoryview(data)[offsets[0] : offsets[-1]])
        return
    if pa.types.is_boolean(kind):
        fixed = _bools(pc.fill_null(values, False)).view(np.uint8)
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_temporal(kind):
        width = kind.bit_width // 8
        fixed = np.frombuffer(values.buffers()[1], f"=u{width}", n, values.offset * width)
        if valid is not None:  # what a null slot holds is undefined: zero it
            fixed = np.where(valid, fixed, 0).astype(fixed.dtype)
        if sys.byteorder != "little":
            fixed = fixed.astype(f"<u{width}")
    else:
        raise TypeError(f"arrow-binary-v1 does not define the bytes of {kind}")
    hashers[1].update(fixed)


def _numbers(values: pa.Array) -> np.ndarray[Any, Any]:
    """An integer array without nulls as a numpy view of its values buffer (no copy; pyarrow's
    own `to_numpy` imports pandas, half a second of an ingest's CPU)."""
    width = values.type.bit_width // 8
    kind = "i" if pa.types.is_signed_integer(values.type) else "u"
    return np.frombuffer(values.buffers()[1], f"={kind}{width}", len(values), values.offset * width)


def _bools(values: pa.Array) -> np.ndarray[Any, Any]:
    """A boolean array without nulls as numpy booleans, unpacked from its bitmap (pyarrow's
    own `to_numpy` of booleans imports pandas)."""
    n, offset = len(values), values.offset
    bits = np.frombuffer(values.buffers()[1], np.uint8)
    return np.unpackbits(bits, bitorder="little")[offset : offset + n].astype(bool)


def _offsets(values: pa.Array) -> np.ndarray[Any, Any]:
    """The n + 1 offsets of a string or large string array's values (no copy)."""
    width = 4 if values.type == pa.string() else 8
    return np.frombuffer(values.buffers()[1], f"=i{width}", len(values) + 1, values.offset * width)


FINGERPRINT_METHOD = "duckdb-hash-sum-v1"
"""How a day's rows are fingerprinted (`_fingerprint_sql`); the DuckDB version that ran it is
recorded beside the sums, since DuckDB does not promise `hash()` across versions."""
_TWO_64 = 18446744073709551616
_QUARTER_HOUR_US = 900_000_000


def _fingerprint_sql(
    name: str, columns: list[str], dtypes: list[pl.DataType], *, by_quarter_hour: bool = True
) -> str:
    """Per local service day (parameter 1: the time zone) of the rows of `name` from parameter
    2 to parameter 3 (UTC instants): n_rows and two sums modulo 2^64 of DuckDB's `hash()` of
    each row, its columns in digest order (a) and in reverse order after a salt (b).

    A sum of row hashes does not depend on the rows' order (no sort) and moves with any row
    added, removed or changed (a row repeated adds its hash again); `hash()` is order-sensitive
    across its arguments, so two values swapped between columns move it too. DuckDB hashes 0.0
    and -0.0 alike where their text differs: a float column adds its sign bit.

    `by_quarter_hour`: the rows are first summed per UTC quarter hour (an integer division per
    row) and only those sums are put in their local day, instead of a time zone conversion per
    row, which cost 60 % of the scan's CPU and ran threads one at a time (a lock in the time
    zone library: 6 s of wall for 2 s of CPU on a month of pings). The sums are exact integers,
    so the result is the same; it is right wherever every local midnight of the period falls on
    a UTC quarter hour (`is_quarter_hour_aligned`: every zone in use today)."""
    a, b = _row_hashes(columns, dtypes)
    if not by_quarter_hour:
        return (
            "SELECT CAST(timezone(?, event_at) AS DATE) AS service_date, count(*) AS n_rows, "
            f"CAST(sum({a}) % {_TWO_64} AS UBIGINT) AS row_hash_sum_a, "
            f"CAST(sum({b}) % {_TWO_64} AS UBIGINT) AS row_hash_sum_b "
            f'FROM "{name}" WHERE event_at >= ? AND event_at < ? GROUP BY ALL'
        )
    return (
        "SELECT CAST(timezone(?, make_timestamptz(q * "
        f"{_QUARTER_HOUR_US})) AS DATE) AS service_date, "
        "sum(n) AS n_rows, "
        f"CAST(sum(sum_a) % {_TWO_64} AS UBIGINT) AS row_hash_sum_a, "
        f"CAST(sum(sum_b) % {_TWO_64} AS UBIGINT) AS row_hash_sum_b "
        f"FROM (SELECT epoch_us(event_at) // {_QUARTER_HOUR_US} AS q, count(*) AS n, "
        f"sum({a}) AS sum_a, sum({b}) AS sum_b "
        f'FROM "{name}" WHERE event_at >= ? AND event_at < ? GROUP BY ALL) GROUP BY ALL'
    )


def read_local_days(
    store: Store, name: str, tz: str, *, since: datetime | None = None
) -> list[date]:
    """The local days (zone `tz`) of the rows of raw table `name`, sorted (`since`: only of the
    rows ingested at or after it). The rows' distinct UTC quarter hours are found first (an
    integer division per row) and only those are put in their local day, about a tenth of the
    CPU of a time zone conversion per row, where every local midnight falls on a quarter hour
    (`is_quarter_hour_aligned`); otherwise each row's instant is converted."""
    where, params = "event_at IS NOT NULL", []
    if since is not None:
        where, params = f"{where} AND ingested_at >= ?", [since]
    quarters = (
        f'SELECT DISTINCT epoch_us(event_at) // {_QUARTER_HOUR_US} AS q FROM "{name}" WHERE {where}'
    )
    days = store.query(
        f"SELECT DISTINCT CAST(timezone(?, make_timestamptz(q * {_QUARTER_HOUR_US})) AS DATE) "
        f"AS d FROM ({quarters}) ORDER BY d",
        [tz, *params],
    )["d"].to_list()
    if not days or is_quarter_hour_aligned(tz, days[0] - timedelta(days=1), days[-1]):
        return list(days)
    return list(
        store.query(
            f'SELECT DISTINCT CAST(timezone(?, event_at) AS DATE) AS d FROM "{name}" '
            f"WHERE {where} ORDER BY d",
            [tz, *params],
        )["d"].to_list()
    )


def is_quarter_hour_aligned(tz: str, start: date, end: date) -> bool:
    """Whether every local day from `start` to `end` begins on a UTC quarter hour in zone
    `tz` (its offset at midnight a whole number of quarter hours, before and after any
    change at that instant), so that a UTC quarter hour lies within one local day."""
    zone = ZoneInfo(tz)
    day = start
    while day <= end + timedelta(days=1):
        for fold in (0, 1):
            offset = datetime.combine(day, time(), zone).replace(fold=fold).utcoffset()
            if offset is None or offset % timedelta(minutes=15):
                return False
        day += timedelta(days=1)
    return True


def _row_hashes(columns: list[str], dtypes: list[pl.DataType]) -> tuple[str, str]:
    """The two row hashes the fingerprint sums (`_fingerprint_sql`), as SQL expressions."""
    parts: list[str] = []
    for c, dtype in zip(columns, dtypes, strict=True):
        parts.append(f'"{c}"')
        if dtype.is_float():
            parts.append(f'signbit("{c}")')
    salted = ["'pontual-b'", *reversed(parts)]
    return f"hash({', '.join(parts)})", f"hash({', '.join(salted)})"


def compute_day_fingerprints(
    store: Store, name: str, start: date, end: date, tz: str
) -> pl.DataFrame:
    """The fingerprint of each day of raw table `name` from `start` to `end` (inclusive) that
    has rows: service_date, n_rows, row_hash_sum_a, row_hash_sum_b (`_fingerprint_sql`), in one
    vectorised scan of the period (about a tenth of the CPU of the days' SHA-256)."""
    decl = table(name)
    lo, _ = local_bounds(range_period(start, start), tz)
    _, hi = local_bounds(range_period(end, end), tz)
    sql = _fingerprint_sql(
        name,
        decl.column_names,
        [c.dtype for c in decl.columns],
        by_quarter_hour=is_quarter_hour_aligned(tz, start, end),
    )
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
    is_changed: bool = False,
) -> pl.DataFrame:
    """The current digest (`compute_day_digest`, the table's current columns) of each day of
    raw table `name` from `start` to `end` (inclusive) that has rows (CURRENT_SCHEMA).

    One fingerprint scan of the period (`compute_day_fingerprints`); a day whose row count,
    both hash sums, time zone, digest columns and DuckDB version equal its row in
    `raw_day_fingerprints` reuses that row's SHA-256, any other day is hashed in full. A row
    written behind Pontual's back moves the day's fingerprint, so the day is hashed again
    (ADR 0113: what only `pontual verify` catches is a change crafted to keep both sums).

    A day's current digest is by the method of its reference digest (`raw_day_digests`), so
    the two compare; a day with none yet reuses a recorded digest by any method this version
    knows (still true of the day), and is hashed anew by `DIGEST_METHOD`. `known`
    (service_date, n_rows, sha256, digest_method): days just hashed in full with the current
    columns (by `pontual verify`), taken as they are and not marked reused. `is_changed`:
    every day of the period is known to have changed (an ingest wrote rows of it,
    `record_ingested_day_fingerprints`): each is hashed in full with no fingerprint scan
    before, its fingerprint summed from the same read (`_changed_day_digests`)."""
    columns = ",".join(table(name).column_names)
    methods = [f"{m}:{columns}" for m in DIGEST_METHODS]
    wanted = _reference_methods(store, name, start, end)
    if is_changed:
        return _changed_day_digests(store, name, start, end, tz, wanted)
    prints = compute_day_fingerprints(store, name, start, end, tz)
    keys = ["service_date", "n_rows", "row_hash_sum_a", "row_hash_sum_b"]
    if store.has_table("raw_day_fingerprints"):
        cached = store.query(
            "SELECT service_date, n_rows, row_hash_sum_a, row_hash_sum_b, sha256, digest_method "
            "FROM raw_day_fingerprints WHERE table_name = ? AND service_date BETWEEN ? AND ? "
            "AND time_zone = ? AND list_contains(?, digest_method) AND duckdb_version = ?",
            [name, start, end, tz, methods, duckdb.__version__],
        ).with_columns(pl.col("service_date").cast(pl.Date))
    else:
        cached = pl.DataFrame(
            schema={**{k: CURRENT_SCHEMA[k] for k in keys}, "sha256": pl.String},
        ).with_columns(pl.lit(None, pl.String).alias("digest_method"))
    if known is not None:
        known = known.select(
            pl.col("service_date").cast(pl.Date),
            pl.col("n_rows").cast(pl.Int64),
            "sha256",
            "digest_method",
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
    # a recorded digest by another method than the day's reference does not compare to it
    cached = cached.join(wanted, on="service_date", how="left").filter(
        pl.col("method").is_null()
        | (pl.col("digest_method").str.split(":").list.first() == pl.col("method"))
    )
    joined = prints.join(cached, on=keys, how="left").join(
        wanted.rename({"method": "reference"}), on="service_date", how="left"
    )
    rows = []
    for day, n, a, b, sha, method, reused, reference in joined.select(
        *keys, "sha256", "digest_method", "is_reused", "reference"
    ).iter_rows():
        if sha is not None:
            rows.append((day, name, n, sha, method, a, b, reused))
        else:  # one query per day hashed: bounded memory
            how = reference or DIGEST_METHOD
            n, sha, _ = compute_day_digest(store, name, day, tz, method=how)
            rows.append((day, name, n, sha, f"{how}:{columns}", a, b, False))
    return pl.DataFrame(rows, schema=CURRENT_SCHEMA, orient="row")


def _changed_day_digests(
    store: Store, name: str, start: date, end: date, tz: str, wanted: pl.DataFrame
) -> pl.DataFrame:
    """`compute_raw_day_digests` of days known to have changed: each day hashed in full, by
    arrow-binary-v1 with its fingerprint's row hashes read beside its rows and summed (one
    read of the day instead of a fingerprint scan and a read), or, for a day whose reference
    digest is by another method, fingerprinted apart and hashed by that method. The sums
    equal `compute_day_fingerprints`' (the same expressions over the same rows)."""
    decl = table(name)
    references = dict(wanted.iter_rows())
    sums = _row_hashes(decl.column_names, [c.dtype for c in decl.columns])
    rows = []
    for offset in range((end - start).days + 1):
        day = start + timedelta(days=offset)
        how = references.get(day) or DIGEST_METHOD
        if how == BINARY_METHOD:
            bounds = list(local_bounds(range_period(day, day), tz))
            n, sha, (a, b) = _binary_day(store, name, decl.column_names, bounds, sums=sums)
        else:
            prints = compute_day_fingerprints(store, name, day, day, tz)
            if prints.height == 0:
                continue
            _, _, a, b = prints.row(0)
            n, sha, _ = compute_day_digest(store, name, day, tz, method=how)
        if n:
            rows.append((day, name, n, sha, method_of(name, how), a, b, False))
    return pl.DataFrame(rows, schema=CURRENT_SCHEMA, orient="row")


def _reference_methods(store: Store, name: str, start: date, end: date) -> pl.DataFrame:
    """service_date, method: the method of each day's reference digest of raw table `name`
    (`raw_day_digests`; no row: none, or one by a method this version does not know, which
    `pontual verify` refuses: the current digest is then by `DIGEST_METHOD`)."""
    if not store.has_table("raw_day_digests"):
        return pl.DataFrame(schema={"service_date": pl.Date, "method": pl.String})
    return store.query(
        "SELECT service_date, split_part(digest_method, ':', 1) AS method FROM raw_day_digests "
        "WHERE table_name = ? AND service_date BETWEEN ? AND ? "
        "AND list_contains(?, split_part(digest_method, ':', 1))",
        [name, start, end, list(DIGEST_METHODS)],
    ).with_columns(pl.col("service_date").cast(pl.Date), pl.col("method").cast(pl.String))


def record_day_fingerprints(
    store: Store,
    tz: str,
    *,
    days: Iterable[date] | None = None,
    tables: Iterable[str] = RAW_TABLES,
    known: pl.DataFrame | None = None,
    is_changed: bool = False,
) -> pl.DataFrame:
    """Bring `raw_day_fingerprints` up to date for `days` (every day with rows when None) of
    each raw table in `tables`: each day is fingerprinted, hashed again only when its
    fingerprint moved, and the rows of the days hashed again are written. `known`,
    `is_changed`: as in `compute_raw_day_digests` (one table; every day of `days` changed). Returns the current digest of every such day
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
            got = compute_raw_day_digests(
                store, name, first, last, tz, known=known, is_changed=is_changed
            )
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
    Since their rows changed, those days alone are hashed again, each fingerprinted from the
    same read (`compute_raw_day_digests`, is_changed). The days are found by `read_local_days`
    from the rows' quarter hours."""
    parts = []
    for name in RAW_TABLES:
        touched = read_local_days(store, name, tz, since=since)
        if touched:
            parts.append(
                record_day_fingerprints(store, tz, days=touched, tables=(name,), is_changed=True)
            )
    return pl.concat(parts) if parts else pl.DataFrame(schema=CURRENT_SCHEMA)
