"""The validation core of the ingest boundary: raw records in, typed rows or quarantine out.

Every reader (CSV, Parquet, JSON lines, GTFS-RT, Olho Vivo, GPX, MQTT) turns its input into a
frame of RAW records in the documented column set of the target table (strings or already typed
values) plus two bookkeeping columns:

- ``record_key``: where the record is in its source (line number, message id): a string,
  or an integer row or line number;
- ``raw_record``: the original text (optional: when absent, the record's fields as JSON are kept
  for the rejected rows only, which keeps large clean files fast).

`write_records` parses each field to the dtype the store declares for it, applies the rules of
the table (vectorised Polars expressions, each with its reason), appends the good rows
(idempotent on the table's key), puts every rejected row in `quarantine` with the first failing
field and its reason, and records an `ingest_runs` row, all in one transaction per batch.
`write_avl_records` and `write_fare_records` are the two entry points the MQTT listener uses.
Validation (`compute_judged`, `compute_avl_judged`, `compute_fare_judged`) touches no store;
`write_judged` writes its result.

Cost (1 M clean pings, CPU seconds): parsing ~0.12 (Parquet) to ~0.4 (CSV, all text), the
rules ~0.01, the store's key check ~0.04 and insert ~0.45 (on two threads); so each value is
parsed once, over materialised columns, and a clean batch is never copied through a filter.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl

from core.schema import UTC_INSTANT, Column, Table, table
from core.store import Store
from core.tables.observed import FARE_CLASSES
from ingest.options import IngestOptions

RECORD_KEY = "record_key"
RAW_RECORD = "raw_record"
# Optional column a reader sets when it could not read a record at all (e.g. a JSON-lines line
# that is not JSON): the reason, naming the line; null for records it read.
READ_ERROR = "read_error"
# Optional AVL column: the instant of the snapshot a fix was published in (Olho Vivo `hr`).
SNAPSHOT_AT = "snapshot_at"
# Optional fares column: the raw card id, replaced by `card_hash` before anything is written.
CARD_ID = "card_id"

# Store bookkeeping columns that no raw record supplies.
_BOOKKEEPING = ("ping_id", "source", "ingested_at")

_TRUE_WORDS = ("true", "t", "yes", "y", "sim", "s", "1")
_FALSE_WORDS = ("false", "f", "no", "n", "nao", "não", "0")

_ROW = "_row"
# A degree of latitude, in metres (mean, WGS 84): enough for a margin of a few kilometres.
_M_PER_DEG_LAT = 111_320.0


@dataclass
class IngestCounts:
    """What one call (or one file, summed over its chunks) did.

    n_read: records read; n_accepted: rows written to the table; n_duplicate: records whose key
    was already stored (or repeated within the batch); n_quarantined: records rejected into
    quarantine (a re-run counts them again but adds no quarantine row). `notes` says which rules
    were skipped and why (e.g. no GTFS feed loaded, so no bounding-box check).
    """

    n_read: int = 0
    n_accepted: int = 0
    n_duplicate: int = 0
    n_quarantined: int = 0
    notes: tuple[str, ...] = field(default=())

    def __add__(self, other: IngestCounts) -> IngestCounts:
        notes = self.notes + tuple(n for n in other.notes if n not in self.notes)
        return IngestCounts(
            self.n_read + other.n_read,
            self.n_accepted + other.n_accepted,
            self.n_duplicate + other.n_duplicate,
            self.n_quarantined + other.n_quarantined,
            notes,
        )


@dataclass(frozen=True)
class Check:
    """A rule: rows where `bad` is true are rejected with `reason`, blaming `field`."""

    field: str | None
    bad: pl.Expr
    reason: str | pl.Expr  # an expression: a reason per row


# -- the documented input column sets -------------------------------------------------------
def input_columns(target: Table) -> list[Column]:
    """The documented raw column set of a target table: its columns less the bookkeeping.

    Fares take ``card_id`` (raw, hashed at the boundary) in place of ``card_hash``.
    """
    out = [c for c in target.columns if c.name not in _BOOKKEEPING]
    if target.name == "fare_transactions":
        out = [
            Column(CARD_ID, pl.String(), "card id as the validator wrote it (hashed on entry)")
            if c.name == "card_hash"
            else c
            for c in out
        ]
    return out


# -- parsing raw values -------------------------------------------------------------------
def parse_instant(values: pl.Series, source_tz: str, time_format: str | None = None) -> pl.Series:
    """Instants in UTC from raw values; null where a value cannot be read.

    Strings: ISO 8601 with an offset or ``Z`` (``T`` or a space between date and time);
    ISO 8601 without offset (local time in `source_tz`; ambiguous DST times take the earlier
    instant, non-existent ones are null); epoch seconds (9–11 digits, optional decimals) or
    milliseconds (12–13 digits); or, with `time_format`, that strptime format only. Numbers:
    epoch seconds. Datetimes: converted to UTC (naive ones are local in `source_tz`).
    The parsers run in stages, each only on the values the previous ones could not read, so a
    clean ISO column costs one parse.
    """
    dtype = values.dtype
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            return _localize(values.cast(pl.Datetime("us")), source_tz)
        return values.dt.convert_time_zone("UTC").cast(UTC_INSTANT)
    if isinstance(dtype, pl.Date):
        return _localize(values.cast(pl.Datetime("us")), source_tz)
    if dtype.is_numeric():
        return _from_epoch_s(values.cast(pl.Float64))
    if isinstance(dtype, pl.Null):
        return values.cast(UTC_INSTANT)
    text = values.cast(pl.String)
    if time_format is not None:
        parsed = text.str.strip_chars().str.to_datetime(time_format, strict=False, time_unit="us")
        if parsed.dtype == UTC_INSTANT or getattr(parsed.dtype, "time_zone", None):
            return parsed.dt.convert_time_zone("UTC").cast(UTC_INSTANT)
        return _localize(parsed, source_tz)
    out = _cast_with_offset(text)
    todo = out.is_null() & text.is_not_null()
    if not todo.any():
        return out
    index = todo.arg_true()
    rest = text.filter(todo).str.strip_chars()
    iso = rest.str.replace(r"^(\d{4}-\d{2}-\d{2})[ T]", "${1}T")
    with_offset = iso.str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%#z", strict=False, time_unit="us", time_zone="UTC"
    )
    local = _localize(
        iso.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us"), source_tz
    )
    parts = pl.DataFrame({"t": rest, "n": rest.cast(pl.Float64, strict=False)})
    seconds = parts.select(
        pl.when(pl.col("t").str.contains(r"^\d{9,11}(\.\d+)?$"))
        .then(pl.col("n"))
        .when(pl.col("t").str.contains(r"^\d{12,13}$"))
        .then(pl.col("n") / 1000.0)
    ).to_series()
    epoch = _from_epoch_s(seconds)
    found = pl.select(pl.coalesce(with_offset, local, epoch)).to_series()
    return out.scatter(index, found)


def _cast_with_offset(text: pl.Series) -> pl.Series:
    """ISO 8601 texts that end in an offset or Z, cast by DuckDB (3x faster than Polars'
    strptime on a million rows); null for every other text."""
    # The offset test runs in the same parallel scan; `suffix` first, as most feeds write Z.
    sql = (
        "SELECT CASE WHEN suffix(v, 'Z') OR regexp_matches(v, '(?:[Zz]|[+-]\\d{2}:?\\d{2})$') "
        "THEN try_cast(v AS TIMESTAMPTZ) END AS t FROM texts"
    )
    with _scratch() as con:
        con.execute("SET TimeZone = 'UTC'").fetchall()
        frame = pl.DataFrame({"v": text})
        con.register("texts", frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        cast = con.sql(sql).pl()["t"]
    return cast.cast(UTC_INSTANT).alias(text.name)


_SCRATCH_DB: duckdb.DuckDBPyConnection | None = None
_SCRATCH_LOCK = threading.Lock()


@contextmanager
def _scratch() -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh connection to a process-wide in-memory DuckDB (a cursor costs ~0.3 ms, a new
    database ~15 ms: a tenth of a 5 000-record MQTT batch). Each call has its own connection,
    so registered views and settings stay private to it and threads do not share one."""
    global _SCRATCH_DB
    with _SCRATCH_LOCK:
        if _SCRATCH_DB is None:
            _SCRATCH_DB = duckdb.connect()
        con = _SCRATCH_DB.cursor()
    try:
        yield con
    finally:
        con.close()


def _localize(naive: pl.Series, source_tz: str) -> pl.Series:
    return naive.dt.replace_time_zone(
        source_tz, ambiguous="earliest", non_existent="null"
    ).dt.convert_time_zone("UTC")


def _from_epoch_s(seconds: pl.Series) -> pl.Series:
    return (seconds * 1_000_000).round(0).cast(pl.Int64, strict=False).cast(UTC_INSTANT)


def parse_value(expr: pl.Expr, dtype_in: pl.DataType, target: pl.DataType) -> pl.Expr:
    """A raw value cast to the declared dtype `target`; null when it cannot be read.

    Texts must already be stripped of surrounding blanks (`compute_typed` strips each text
    column once). Numbers come out as Float64 here: `finish_value` checks them and casts
    integers, on the materialised column (each parse runs once per value).
    """
    if isinstance(target, pl.String):
        return expr.cast(pl.String)
    if isinstance(target, pl.Boolean):
        if isinstance(dtype_in, pl.Boolean):
            return expr
        word = expr.cast(pl.String).str.to_lowercase()
        return (
            pl.when(word.is_in(_TRUE_WORDS)).then(True).when(word.is_in(_FALSE_WORDS)).then(False)
        )
    if isinstance(target, pl.Date):
        if isinstance(dtype_in, pl.String):
            return expr.str.to_date("%Y-%m-%d", strict=False)
        return expr.cast(pl.Date, strict=False)
    if target.is_integer() or target.is_float():
        return expr.cast(pl.Float64, strict=False)
    raise TypeError(f"no raw parser for {target!r}")  # pragma: no cover - declaration error


def finish_value(number: pl.Expr, target: pl.DataType) -> pl.Expr:
    """A parsed Float64 `number` as the declared numeric `target`; other dtypes pass."""
    if target.is_integer():
        # "1.0" is an integer written by a float-minded exporter; "1.5" is not an integer.
        return pl.when(number.is_finite() & (number == number.round(0))).then(
            number.cast(target, strict=False)
        )
    if target.is_float():
        # NaN and infinities are not readings.
        return pl.when(number.is_finite()).then(number)
    return number


_KIND_WORDS = {
    "Datetime": "a time (ISO 8601 with offset, local ISO 8601, or epoch seconds)",
    "Date": "a date (YYYY-MM-DD)",
    "Boolean": "yes/no",
    "Float64": "a number",
    "Int32": "a whole number",
    "Int64": "a whole number",
}


def compute_typed(
    raw: pl.DataFrame, columns: Sequence[Column], options: IngestOptions
) -> tuple[pl.DataFrame, list[Check]]:
    """Parse the documented columns of `raw` to their declared dtypes.

    Returns the typed frame (the documented columns, `record_key`, `raw_record` when given,
    and any extra column the rules use such as `snapshot_at`) and the parse checks: a required
    column that is null is "missing", a given value that cannot be read is "cannot read".
    """
    tz = options.source_tz or "UTC"
    # Four passes, each over materialised columns, so that every value is stripped and parsed
    # once: strip texts, parse, check and cast numbers, then flag the unreadable and missing.
    stripped: list[pl.Expr] = []
    parsed: list[pl.Expr] = []
    finished: list[pl.Expr] = []
    flags: list[pl.Expr] = []
    checks: list[Check] = []
    present: list[str] = []
    for col in columns:
        if col.name not in raw.columns:
            parsed.append(pl.lit(None, dtype=col.dtype).alias(col.name))
            if not col.nullable:
                checks.append(Check(col.name, pl.lit(True), f"missing {col.name}"))
            continue
        present.append(col.name)
        src = pl.col(col.name)
        dtype_in = raw.schema[col.name]
        given_name = f"_given_{col.name}"
        if isinstance(dtype_in, pl.String):
            stripped.append(src.str.strip_chars())
            given = src.is_not_null() & (src != "")
        else:
            stripped.append(src)
            given = src.is_not_null()
        parsed.append(given.alias(given_name))
        if isinstance(col.dtype, pl.Datetime):
            value = pl.lit(parse_instant(raw[col.name], tz, options.time_format))
        else:
            value = parse_value(src, dtype_in, col.dtype)
        parsed.append(value.alias(col.name))
        finished.append(finish_value(src, col.dtype).alias(col.name))
        flag = f"_unreadable_{col.name}"
        flags.append((pl.col(given_name) & src.is_null()).alias(flag))
        if not col.nullable:
            flags.append((~pl.col(given_name)).alias(f"_missing_{col.name}"))
            checks.append(Check(col.name, pl.col(f"_missing_{col.name}"), f"missing {col.name}"))
        kind = _KIND_WORDS.get(type(col.dtype).__name__)
        if kind is not None:
            checks.append(Check(col.name, pl.col(flag), f"cannot read {col.name} as {kind}"))
    # A per-record `source` (the MQTT topic of each message) travels with the record.
    extra = [c for c in (RECORD_KEY, RAW_RECORD, READ_ERROR, "source") if c in raw.columns]
    if SNAPSHOT_AT in raw.columns:
        parsed.append(pl.lit(parse_instant(raw[SNAPSHOT_AT], tz)).alias(SNAPSHOT_AT))
    keep = [pl.col(c) for c in extra]
    typed = (
        raw.select(*keep, *stripped)
        .select(
            pl.int_range(pl.len(), dtype=pl.UInt32).alias(_ROW),
            *keep,
            *parsed,
        )
        .with_columns(finished)
        .with_columns(flags)
        .drop([f"_given_{name}" for name in present])
    )
    return typed, checks


def compute_rejections(typed: pl.DataFrame, checks: Sequence[Check]) -> pl.DataFrame:
    """`typed` with `_field` and `_reason`: the first failing rule of each row (null: passed)."""
    if not checks:
        return typed.with_columns(
            pl.lit(None, dtype=pl.String).alias("_field"),
            pl.lit(None, dtype=pl.String).alias("_reason"),
        )

    def field_of(check: Check) -> pl.Expr:
        return pl.lit(check.field, dtype=pl.String)

    def reason_of(check: Check) -> pl.Expr:
        return check.reason if isinstance(check.reason, pl.Expr) else pl.lit(check.reason)

    field_expr: Any = pl.when(checks[0].bad).then(field_of(checks[0]))
    reason_expr: Any = pl.when(checks[0].bad).then(reason_of(checks[0]))
    for check in checks[1:]:
        field_expr = field_expr.when(check.bad).then(field_of(check))
        reason_expr = reason_expr.when(check.bad).then(reason_of(check))
    return typed.with_columns(field_expr.alias("_field"), reason_expr.alias("_reason"))


# -- rules of each table --------------------------------------------------------------------
@dataclass(frozen=True)
class NetworkContext:
    """What the rules need from the store: the network's box and the fleet register."""

    bbox: tuple[float, float, float, float] | None  # min lat, min lon, max lat, max lon
    known_vehicles: pl.Series | None  # None when the register is empty


def read_network_context(store: Store) -> NetworkContext:
    """The bounding box of the loaded stops and the registered vehicle ids (None when none)."""
    row = store.query(
        "SELECT min(stop_lat) AS a, min(stop_lon) AS b, max(stop_lat) AS c, max(stop_lon) AS d "
        "FROM gtfs_stops WHERE stop_lat IS NOT NULL AND stop_lon IS NOT NULL"
    ).row(0)
    bbox = None if row[0] is None else (float(row[0]), float(row[1]), float(row[2]), float(row[3]))
    vehicles = store.query("SELECT vehicle_id FROM vehicles")["vehicle_id"]
    return NetworkContext(bbox, vehicles if vehicles.len() else None)


def _vehicle_checks(ctx: NetworkContext, options: IngestOptions) -> tuple[list[Check], list[str]]:
    if options.accept_unknown_vehicles:
        return [], []
    if ctx.known_vehicles is None:
        return [], ["fleet register empty: vehicle ids not checked (run `pontual ingest vehicles`)"]
    unknown = pl.col("vehicle_id").is_not_null() & ~pl.col("vehicle_id").is_in(
        ctx.known_vehicles.implode()
    )
    reason = "vehicle_id not in the fleet register (load it, or pass --accept-unknown-vehicles)"
    return [Check("vehicle_id", unknown, reason)], []


def _future_check(column: str, now: datetime, options: IngestOptions) -> Check:
    limit = now.timestamp() + options.future_skew_s
    limit_at = pl.lit(datetime.fromtimestamp(limit, UTC)).cast(UTC_INSTANT)
    return Check(
        column,
        pl.col(column) > limit_at,
        f"{column} more than {options.future_skew_s:g} s in the future (clock skew allowance)",
    )


def compute_avl_checks(
    ctx: NetworkContext, options: IngestOptions, now: datetime, has_snapshot: bool
) -> tuple[list[Check], list[str]]:
    """The AVL rules after parsing, in the order they are reported, and notes on skipped ones."""
    lat, lon = pl.col("lat"), pl.col("lon")
    checks = [
        Check("lat", (lat < -90) | (lat > 90), "lat outside -90..90 degrees"),
        Check("lon", (lon < -180) | (lon > 180), "lon outside -180..180 degrees"),
        Check("lat", (lat == 0) & (lon == 0), "position 0,0: the device had no GPS fix"),
    ]
    notes: list[str] = []
    if ctx.bbox is None:
        notes.append("no GTFS stops loaded: positions not checked against the network's area")
    else:
        checks.append(_bbox_check(ctx.bbox, options.bbox_margin_m))
    checks.append(_future_check("event_at", now, options))
    if has_snapshot:
        stale = pl.col("event_at") < pl.col(SNAPSHOT_AT) - pl.duration(
            microseconds=int(options.stale_fix_max_age_s * 1_000_000)
        )
        checks.append(
            Check(
                "event_at",
                stale,
                f"stale fix: more than {options.stale_fix_max_age_s:g} s older than its snapshot",
            )
        )
    speed, heading = pl.col("speed_m_s"), pl.col("heading_deg")
    checks += [
        Check(
            "speed_m_s",
            (speed < 0) | (speed > options.max_speed_m_s),
            f"speed_m_s outside 0..{options.max_speed_m_s:g} m/s",
        ),
        Check("heading_deg", (heading < 0) | (heading > 360), "heading_deg outside 0..360"),
        Check(
            "reported_direction_id",
            ~pl.col("reported_direction_id").is_in([0, 1]),
            "reported_direction_id not 0 or 1",
        ),
    ]
    vehicle_checks, vehicle_notes = _vehicle_checks(ctx, options)
    return checks + vehicle_checks, notes + vehicle_notes


def _bbox_check(bbox: tuple[float, float, float, float], margin_m: float) -> Check:
    import math

    min_lat, min_lon, max_lat, max_lon = bbox
    dlat = margin_m / _M_PER_DEG_LAT
    mid = math.radians((min_lat + max_lat) / 2)
    dlon = margin_m / (_M_PER_DEG_LAT * max(math.cos(mid), 0.01))
    lat, lon = pl.col("lat"), pl.col("lon")
    outside = (
        (lat < min_lat - dlat)
        | (lat > max_lat + dlat)
        | (lon < min_lon - dlon)
        | (lon > max_lon + dlon)
    )
    return Check(
        "lat",
        outside,
        f"position outside the network's area (bounding box of the stops plus {margin_m:g} m)",
    )


def compute_fare_checks(
    ctx: NetworkContext, options: IngestOptions, now: datetime
) -> tuple[list[Check], list[str]]:
    """The fare rules after parsing (fare_class is lower-cased before they run)."""
    amount = pl.col("amount")
    checks = [
        _future_check("event_at", now, options),
        Check(
            "fare_class",
            ~pl.col("fare_class").is_in(FARE_CLASSES),
            "fare_class unknown, expected one of " + ", ".join(FARE_CLASSES),
        ),
        Check(
            "amount",
            (amount < 0) | (amount > options.max_amount),
            f"amount outside 0..{options.max_amount:g}",
        ),
    ]
    vehicle_checks, notes = _vehicle_checks(ctx, options)
    return checks + vehicle_checks, notes


# -- the card-id hash (LGPD) ------------------------------------------------------------------
def compute_card_hashes(df: pl.DataFrame, key: bytes) -> pl.DataFrame:
    """Replace `card_id` by `card_hash` = HMAC-SHA256(key, card_id) in hex (null stays null).

    Also replaces the card id inside `raw_record` by its hash, and derives a `transaction_id`
    where the source gave none, as the SHA-256 of (card hash, event time text, vehicle). The
    HMAC runs vectorised in DuckDB as H((K^opad) || H((K^ipad) || m)), checked against Python's
    `hmac` in the tests.
    """
    block = key if len(key) <= 64 else __import__("hashlib").sha256(key).digest()
    block = block.ljust(64, b"\0")
    ipad = bytes(b ^ 0x36 for b in block).hex()
    opad = bytes(b ^ 0x5C for b in block).hex()
    with _scratch() as con:
        frame = df.with_columns(
            pl.col(CARD_ID).cast(pl.String).str.strip_chars().replace("", None).alias(CARD_ID)
        )
        absent = [c for c in ("transaction_id", "event_at", "vehicle_id") if c not in frame.columns]
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(c) for c in absent)
        con.register("taps", frame.to_arrow())
        raw_sql = (
            f"CASE WHEN {CARD_ID} IS NULL THEN {RAW_RECORD} "
            f"ELSE replace({RAW_RECORD}, {CARD_ID}, card_hash) END AS {RAW_RECORD}"
            if RAW_RECORD in df.columns
            else None
        )
        tid_sql = (
            "coalesce(nullif(trim(CAST(transaction_id AS VARCHAR)), ''), "
            "'derived:' || sha256(coalesce(card_hash, '') || '|' || "
            "coalesce(CAST(event_at AS VARCHAR), '') || '|' || "
            "coalesce(CAST(vehicle_id AS VARCHAR), ''))) AS transaction_id"
        )
        excluded = [CARD_ID, "transaction_id", *([RAW_RECORD] if raw_sql else [])]
        keep = ", ".join(f'"{c}"' for c in frame.columns if c not in excluded)
        selects = ", ".join(s for s in (keep, tid_sql, raw_sql, "card_hash") if s)
        sql = (
            f"WITH h AS (SELECT *, CASE WHEN {CARD_ID} IS NULL THEN NULL ELSE "
            f"sha256(unhex($opad || sha256(unhex($ipad || hex(encode({CARD_ID})))))) END "
            f"AS card_hash FROM taps) SELECT {selects} FROM h"
        )
        out = con.sql(sql, params={"opad": opad, "ipad": ipad}).pl()
    return out


# -- writing ------------------------------------------------------------------------------
def to_quarantine(
    rejected: pl.DataFrame, raw_columns: Sequence[str], *, source: str, target: str, at: datetime
) -> pl.DataFrame:
    """Quarantine rows for the rejected records (raw_record built from the fields if absent)."""
    if RAW_RECORD in rejected.columns:
        raw_text = pl.col(RAW_RECORD).cast(pl.String)
    else:
        present = [c for c in raw_columns if c in rejected.columns]
        raw_text = pl.struct([pl.col(c).cast(pl.String) for c in present]).struct.json_encode()
    per_row = "source" in rejected.columns
    return rejected.select(
        (pl.col("source").fill_null(source) if per_row else pl.lit(source)).alias("source"),
        pl.col(RECORD_KEY).cast(pl.String).alias("record_key"),
        pl.lit(target).alias("target_table"),
        pl.col("_field").alias("field"),
        pl.col("_reason").alias("reason"),
        pl.coalesce(raw_text, pl.lit("")).alias("raw_record"),
        pl.lit(at).cast(UTC_INSTANT).alias("quarantined_at"),
    )


def write_batch(
    store: Store,
    accepted: pl.DataFrame,
    quarantined: pl.DataFrame,
    *,
    target: str,
    source: str,
    run_kind: str,
    started_at: datetime,
    n_read: int,
    source_sha256: str | None = None,
    upsert: bool = False,
    notes: Sequence[str] = (),
) -> IngestCounts:
    """Append (or upsert by key) the accepted rows, the quarantine rows and the run's row.

    One transaction: a crash leaves either all of the batch or none of it. Upsert replaces the
    stored rows whose key is in the batch and whose content changed (a fleet register changes);
    rows identical to the stored ones count as duplicates.
    """
    decl = table(target)
    row_source = (
        pl.col("source").fill_null(source) if "source" in accepted.columns else pl.lit(source)
    )
    accepted = accepted.with_columns(
        row_source.alias("source"), pl.lit(started_at).cast(UTC_INSTANT).alias("ingested_at")
    )
    with store.transaction():
        if upsert:
            n_accepted, n_duplicate = _upsert(store, decl, accepted)
        else:
            result = store.append(target, accepted)
            n_accepted, n_duplicate = result.n_inserted, result.n_duplicate
        store.append("quarantine", quarantined)
        counts = IngestCounts(n_read, n_accepted, n_duplicate, quarantined.height, tuple(notes))
        store.append(
            "ingest_runs",
            pl.DataFrame(
                {
                    "run_id": [uuid.uuid4().hex],
                    "kind": [run_kind],
                    "source": [source],
                    "source_sha256": [source_sha256],
                    "started_at": [started_at],
                    "finished_at": [datetime.now(UTC)],
                    "n_read": [counts.n_read],
                    "n_accepted": [counts.n_accepted],
                    "n_duplicate": [counts.n_duplicate],
                    "n_quarantined": [counts.n_quarantined],
                }
            ),
        )
    return counts


def _upsert(store: Store, decl: Table, rows: pl.DataFrame) -> tuple[int, int]:
    if rows.height == 0:
        return 0, 0
    key = list(decl.primary_key)
    content = [c for c in decl.column_names if c not in ("source", "ingested_at")]
    rows = rows.unique(subset=key, keep="last", maintain_order=True)
    stored = store.read(decl.name).select(content)
    batch = decl.conform(rows)
    unchanged = batch.select(content).join(stored, on=content, how="semi", nulls_equal=True)
    changed = batch.join(unchanged.select(key), on=key, how="anti")
    if changed.height:
        view = "_upsert_keys"
        store.con.register(view, changed.select(key).to_arrow())
        try:
            cond = " AND ".join(f't."{k}" = k."{k}"' for k in key)
            store.con.execute(
                f'DELETE FROM "{decl.name}" t WHERE EXISTS (SELECT 1 FROM {view} k WHERE {cond})'
            ).fetchall()
        finally:
            store.con.unregister(view)
        store.append(decl.name, changed)
    return changed.height, rows.height - changed.height


@dataclass(frozen=True)
class JudgedBatch:
    """A validated batch, ready to write: the accepted rows (typed, in the target's columns
    plus helpers that the append drops), the quarantine rows, how many records were read, when
    its validation started (ingest and quarantine time) and notes on skipped rules."""

    target: str
    accepted: pl.DataFrame
    quarantined: pl.DataFrame
    n_read: int
    started_at: datetime
    notes: tuple[str, ...] = ()


def compute_judged(
    raw: pl.DataFrame,
    *,
    target: str,
    source: str,
    options: IngestOptions | None = None,
    checks: Sequence[Check] = (),
    notes: Sequence[str] = (),
    prepare: pl.Expr | None = None,
    columns: Sequence[Column] | None = None,
) -> JudgedBatch:
    """Validate `raw` against table `target` (see the module docstring); touches no store.

    `checks` are the table's rules after parsing; `prepare` is an optional list of expressions
    applied to the typed frame before the rules (e.g. lower-casing a vocabulary column).
    """
    options = options or IngestOptions()
    started_at = datetime.now(UTC)
    decl = table(target)
    cols_in = list(columns) if columns is not None else input_columns(decl)
    raw = _with_record_key(raw)
    typed, parse_checks = compute_typed(raw, cols_in, options)
    if prepare is not None:
        typed = typed.with_columns(prepare)
    # A record its reader could not read is reported as such, not as its missing fields.
    unread = (
        [Check(None, pl.col(READ_ERROR).is_not_null(), pl.col(READ_ERROR))]
        if READ_ERROR in typed.columns
        else []
    )
    judged = compute_rejections(typed, [*unread, *parse_checks, *checks])
    if judged["_reason"].null_count() == judged.height:
        # A clean batch (the usual case): no copy of the accepted rows, an empty quarantine.
        good, bad = judged, judged.clear()
    else:
        good = judged.filter(pl.col("_reason").is_null())
        bad = judged.filter(pl.col("_reason").is_not_null())
    if RAW_RECORD not in raw.columns and bad.height:
        # Keep the record as it came (before parsing), not as it was parsed.
        keep = [c.name for c in cols_in if c.name in raw.columns]
        originals = raw.select(keep).with_row_index(_ROW)
        bad = bad.drop([c for c in keep if c in bad.columns]).join(originals, on=_ROW, how="left")
    quarantined = to_quarantine(
        bad, [c.name for c in cols_in], source=source, target=target, at=started_at
    )
    return JudgedBatch(target, good, quarantined, raw.height, started_at, tuple(notes))


def write_judged(
    store: Store,
    batch: JudgedBatch,
    *,
    source: str,
    run_kind: str,
    source_sha256: str | None = None,
    upsert: bool = False,
) -> IngestCounts:
    """Write a validated batch: rows, quarantine and the run's row, in one transaction."""
    return write_batch(
        store,
        batch.accepted,
        batch.quarantined,
        target=batch.target,
        source=source,
        run_kind=run_kind,
        started_at=batch.started_at,
        n_read=batch.n_read,
        source_sha256=source_sha256,
        upsert=upsert,
        notes=batch.notes,
    )


def write_records(
    store: Store,
    raw: pl.DataFrame,
    *,
    target: str,
    source: str,
    run_kind: str,
    options: IngestOptions | None = None,
    checks: Sequence[Check] = (),
    notes: Sequence[str] = (),
    prepare: pl.Expr | None = None,
    source_sha256: str | None = None,
    upsert: bool = False,
    columns: Sequence[Column] | None = None,
) -> IngestCounts:
    """Validate `raw` against table `target` and write it (`compute_judged`, `write_judged`)."""
    batch = compute_judged(
        raw,
        target=target,
        source=source,
        options=options,
        checks=checks,
        notes=notes,
        prepare=prepare,
        columns=columns,
    )
    return write_judged(
        store,
        batch,
        source=source,
        run_kind=run_kind,
        source_sha256=source_sha256,
        upsert=upsert,
    )


def _with_record_key(raw: pl.DataFrame) -> pl.DataFrame:
    """`raw` with a `record_key` (its row number from 1 when it has none). Keys may be
    integers: `to_quarantine` writes them as text, for the rejected records only."""
    if RECORD_KEY in raw.columns:
        return raw
    return raw.with_row_index(RECORD_KEY, offset=1)


def compute_avl_judged(
    raw: pl.DataFrame,
    ctx: NetworkContext,
    *,
    source: str,
    options: IngestOptions | None = None,
) -> JudgedBatch:
    """Validate raw AVL pings against `vehicle_locations` (see `write_avl_records`)."""
    options = options or IngestOptions()
    checks, notes = compute_avl_checks(ctx, options, datetime.now(UTC), SNAPSHOT_AT in raw.columns)
    return compute_judged(
        raw,
        target="vehicle_locations",
        source=source,
        options=options,
        checks=checks,
        notes=notes,
    )


def write_avl_records(
    store: Store,
    raw: pl.DataFrame,
    *,
    source: str,
    run_kind: str = "avl",
    options: IngestOptions | None = None,
    source_sha256: str | None = None,
    context: NetworkContext | None = None,
) -> IngestCounts:
    """Validate raw AVL pings and append the good ones to `vehicle_locations` (one transaction).

    `raw` holds the documented AVL columns (vehicle_id, event_at, lat, lon, speed_m_s,
    heading_deg, reported_trip_id, reported_route_id, reported_direction_id, event_code,
    reported_occupancy, operator_id; any may be strings), `record_key`, optionally `raw_record`
    and `snapshot_at` (the stale-fix rule). `context` saves a store read per call when given.
    """
    ctx = context or read_network_context(store)
    batch = compute_avl_judged(raw, ctx, source=source, options=options)
    return write_judged(store, batch, source=source, run_kind=run_kind, source_sha256=source_sha256)


def compute_fare_judged(
    raw: pl.DataFrame,
    ctx: NetworkContext,
    *,
    source: str,
    key: bytes,
    options: IngestOptions | None = None,
) -> JudgedBatch:
    """Hash card ids and validate raw taps against `fare_transactions` (see
    `write_fare_records`)."""
    options = options or IngestOptions()
    raw = _with_record_key(raw)
    absent = [
        c.name for c in input_columns(table("fare_transactions")) if c.name not in raw.columns
    ]
    raw = raw.with_columns(pl.lit(None, dtype=pl.String).alias(name) for name in absent)
    hashed = compute_card_hashes(raw, key)
    checks, notes = compute_fare_checks(ctx, options, datetime.now(UTC))
    columns = input_columns(table("fare_transactions"))
    columns = [
        table("fare_transactions").column("card_hash") if c.name == CARD_ID else c for c in columns
    ]
    return compute_judged(
        hashed,
        target="fare_transactions",
        source=source,
        options=options,
        checks=checks,
        notes=notes,
        prepare=pl.col("fare_class").str.to_lowercase(),
        columns=columns,
    )


def write_fare_records(
    store: Store,
    raw: pl.DataFrame,
    *,
    source: str,
    key: bytes,
    run_kind: str = "fares",
    options: IngestOptions | None = None,
    source_sha256: str | None = None,
    context: NetworkContext | None = None,
) -> IngestCounts:
    """Hash card ids, validate raw taps and append the good ones to `fare_transactions`.

    `raw` holds the documented fare columns (transaction_id, event_at, vehicle_id, route_id,
    card_id, fare_class, amount, operator_id) and `record_key`, optionally `raw_record`. `key`
    is `core.settings.hash_key(settings, create=True)`. The raw card id never reaches the store:
    it is replaced by its HMAC before validation, in quarantine's raw_record too.
    """
    ctx = context or read_network_context(store)
    batch = compute_fare_judged(raw, ctx, source=source, key=key, options=options)
    return write_judged(store, batch, source=source, run_kind=run_kind, source_sha256=source_sha256)
