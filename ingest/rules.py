"""Rules of the observed tables and the judging of a batch against them.

`read_network_context` reads what the rules need from the store (the stops' robust extent, the
fleet register); `compute_avl_checks` / `compute_fare_checks` return the rules of AVL pings and
fare taps (vectorised Polars expressions, each with its field and reason) and notes on the rules
skipped. `compute_judged` parses a raw frame (`ingest.parsing`), applies the parse checks and
the table's rules (`ingest.checks`) and returns a `JudgedBatch`: the good rows typed, the
rejected ones as quarantine rows (first failing field and reason, the original text).
`compute_avl_judged` and `compute_fare_judged` do so for pings and taps (taps hashed first,
`ingest.cards`). Touches no store except `read_network_context`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import polars as pl

from core.schema import UTC_INSTANT, Column, table
from core.store import Store
from core.tables.observed import FARE_CLASSES
from ingest.cards import compute_card_hashes, mask_card_numbers
from ingest.checks import Check, JudgedBatch, compute_failing, compute_rejections
from ingest.options import IngestOptions
from ingest.parsing import (
    CARD_ID,
    RAW_RECORD,
    READ_ERROR,
    RECORD_KEY,
    ROW_INDEX,
    SNAPSHOT_AT,
    compute_typed,
    input_columns,
    with_record_key,
)

log = logging.getLogger(__name__)

# A degree of latitude, in metres (mean, WGS 84): enough for a margin of a few kilometres.
_M_PER_DEG_LAT = 111_320.0


# -- rules of each table --------------------------------------------------------------------
REASON_UNPROCESSABLE = "record could not be processed (internal error, see the log)"
"""The last resort of `compute_judged_isolating`: a record whose validation failed alone."""

REASON_OTHER_OPERATOR = "vehicle of another operator (the fleet register names {registered})"
"""A record whose operator is not the registered operator of its vehicle (one operator cannot
forge or block another's data): the reason, with the registered operator."""


@dataclass(frozen=True)
class NetworkContext:
    """What the rules need from the store: the network's box and the fleet register.

    `fleet`: the register's `vehicle_id` and `operator_id` (None when the register is empty).
    """

    bbox: tuple[float, float, float, float] | None  # min lat, min lon, max lat, max lon
    fleet: pl.DataFrame | None

    @property
    def known_vehicles(self) -> pl.Series | None:
        return None if self.fleet is None else self.fleet["vehicle_id"]


def read_network_context(store: Store, *, extent: bool = True) -> NetworkContext:
    """The network's box and the fleet register (None when empty).

    The box is the loaded stops' robust extent (`gtfs.geography.compute_robust_extent`), not
    their min/max: one stop with latitude and longitude swapped would stretch a min/max box
    across a continent and let every ping in. `extent=False` leaves it out (None): the taps'
    rules do not read it, and it costs a fare ingest the import of `gtfs` and a pass over
    the stops."""
    bbox = None
    if extent:
        # pings only: a register's or taps' ingest does not import gtfs
        from gtfs.geography import compute_robust_extent

        stops = store.query(
            "SELECT DISTINCT stop_lat, stop_lon FROM gtfs_stops "
            "WHERE stop_lat IS NOT NULL AND stop_lon IS NOT NULL"
        )
        bbox = compute_robust_extent(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy())
    # every version of the register: a ping of a past day may carry the operator the vehicle
    # had then (the check accepts any operator the vehicle has been registered to)
    fleet = store.query("SELECT DISTINCT vehicle_id, operator_id FROM vehicles")
    return NetworkContext(bbox, fleet if fleet.height else None)


def compute_fleet_checks(
    ctx: NetworkContext, options: IngestOptions
) -> tuple[list[Check], list[str]]:
    """The fleet-register rules of a ping or tap: its vehicle is registered (unless unknown
    vehicles are accepted) and, when the record names an operator (the MQTT topic's, or the
    file's column), registered to that operator. Skipped, with a note, while the register is
    empty."""
    if ctx.fleet is None:
        if options.accept_unknown_vehicles:
            return [], []
        return [], ["fleet register empty: vehicle ids not checked (run `pontual ingest vehicles`)"]
    checks: list[Check] = []
    vehicle = pl.col("vehicle_id")
    if not options.accept_unknown_vehicles:
        unknown = vehicle.is_not_null() & ~vehicle.is_in(ctx.fleet["vehicle_id"].implode())
        reason = "vehicle_id not in the fleet register (load it, or pass --accept-unknown-vehicles)"
        checks.append(Check("vehicle_id", unknown, reason))
    # The verdict compares (vehicle, operator) pairs as they are (no text built per record);
    # the registered operators are looked up for the reason alone, on the failing records.
    pairs = ctx.fleet.select(pl.struct("vehicle_id", "operator_id")).to_series().implode()
    other = (
        pl.col("operator_id").is_not_null()
        & vehicle.is_in(ctx.fleet["vehicle_id"].unique().implode())
        & ~pl.struct(vehicle, pl.col("operator_id")).is_in(pairs)
    )
    owners = ctx.fleet.group_by("vehicle_id").agg(pl.col("operator_id").sort().str.join("/"))
    registered = vehicle.replace_strict(
        owners["vehicle_id"], owners["operator_id"], default=None, return_dtype=pl.String()
    )
    reason_other = pl.format(REASON_OTHER_OPERATOR.replace("{registered}", "{}"), registered)
    checks.append(Check("operator_id", other, reason_other))
    return checks, []


def past_check(column: str, options: IngestOptions) -> Check:
    """Times before `min_event_year`: a device whose clock was never set (1970-01-01 is epoch 0,
    1900 and 0001 are the zero dates of spreadsheets and .NET)."""
    floor = pl.lit(datetime(options.min_event_year, 1, 1, tzinfo=UTC)).cast(UTC_INSTANT)
    return Check(
        column,
        pl.col(column) < floor,
        f"{column} before {options.min_event_year}: a clock that was never set",
    )


def future_check(column: str, now: datetime, options: IngestOptions) -> Check:
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
        checks.append(bbox_check(ctx.bbox, options.bbox_margin_m))
    checks.append(future_check("event_at", now, options))
    checks.append(past_check("event_at", options))
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
    vehicle_checks, vehicle_notes = compute_fleet_checks(ctx, options)
    return checks + vehicle_checks, notes + vehicle_notes


def bbox_check(bbox: tuple[float, float, float, float], margin_m: float) -> Check:
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
        future_check("event_at", now, options),
        past_check("event_at", options),
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
    vehicle_checks, notes = compute_fleet_checks(ctx, options)
    return checks + vehicle_checks, notes


# -- judging a batch --------------------------------------------------------------------
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


def compute_judged(
    raw: pl.DataFrame,
    *,
    target: str,
    source: str,
    options: IngestOptions | None = None,
    checks: Sequence[Check] = (),
    notes: Sequence[str] = (),
    prepare: pl.Expr | Sequence[pl.Expr] | None = None,
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
    raw = with_record_key(raw)
    typed, parse_checks = compute_typed(raw, cols_in, options)
    if prepare is not None:
        typed = typed.with_columns(prepare)
    # A record its reader could not read is reported as such, not as its missing fields.
    unread = (
        [Check(None, pl.col(READ_ERROR).is_not_null(), pl.col(READ_ERROR))]
        if READ_ERROR in typed.columns
        else []
    )
    rules = [*unread, *parse_checks, *checks]
    failing = compute_failing(typed, rules)
    if not failing.any():
        # A clean batch (the usual case): no copy of the accepted rows, an empty quarantine.
        good, bad = typed, compute_rejections(typed.clear(), rules)
    else:
        # The first failing rule is named for the rejected rows alone.
        good = typed.filter(~failing)
        bad = compute_rejections(typed.filter(failing), rules)
    if RAW_RECORD not in raw.columns and bad.height:
        # Keep the record as it came (before parsing), not as it was parsed.
        keep = [c.name for c in cols_in if c.name in raw.columns]
        originals = raw.select(keep).with_row_index(ROW_INDEX)
        bad = bad.drop([c for c in keep if c in bad.columns]).join(
            originals, on=ROW_INDEX, how="left"
        )
    quarantined = to_quarantine(
        bad, [c.name for c in cols_in], source=source, target=target, at=started_at
    )
    return JudgedBatch(target, good, quarantined, raw.height, started_at, tuple(notes))


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
    raw = with_record_key(raw)
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
    judged = compute_judged(
        hashed,
        target="fare_transactions",
        source=source,
        options=options,
        checks=checks,
        notes=notes,
        prepare=[pl.col("fare_class").str.to_lowercase(), _operator_of_vehicle(ctx)],
        columns=columns,
    )
    if judged.quarantined.height == 0:
        return judged
    masked = judged.quarantined.with_columns(mask_card_numbers(pl.col("raw_record")))
    return replace(judged, quarantined=masked)


def _operator_of_vehicle(ctx: NetworkContext) -> pl.Expr:
    """A tap's operator: as given (topic or file), else its vehicle's in the fleet register;
    it scopes the tap's key (`fare_transactions`), so one operator's ids never meet another's."""
    if ctx.fleet is None:
        return pl.col("operator_id")
    registered = pl.col("vehicle_id").replace_strict(
        ctx.fleet["vehicle_id"], ctx.fleet["operator_id"], default=None, return_dtype=pl.String()
    )
    return pl.coalesce(pl.col("operator_id"), registered).alias("operator_id")


def compute_judged_isolating(
    judge: Callable[[pl.DataFrame], JudgedBatch],
    raw: pl.DataFrame,
    *,
    target: str,
    source: str,
) -> JudgedBatch:
    """`judge(raw)`, where a failure of the validation itself (an error, a native panic) is
    pinned on the records that cause it: the batch is bisected, and a record that fails alone
    is quarantined as unprocessable (`REASON_UNPROCESSABLE`, its fields as JSON with any card
    id left out) while the rest of the batch is judged as usual. For streams, where one
    record must never stop the consumer; validation touches no store, so nothing else can
    fail here.
    """
    try:
        return judge(raw)
    except (Exception, pl.exceptions.PanicException):
        if raw.height > 1:
            log.exception("validating %d records failed; bisecting", raw.height)
            mid = raw.height // 2
            first = compute_judged_isolating(judge, raw.slice(0, mid), target=target, source=source)
            rest = compute_judged_isolating(judge, raw.slice(mid), target=target, source=source)
            return JudgedBatch(
                target,
                pl.concat([first.accepted, rest.accepted], how="diagonal_relaxed"),
                pl.concat([first.quarantined, rest.quarantined], how="vertical_relaxed"),
                first.n_read + rest.n_read,
                first.started_at,
                tuple(dict.fromkeys(first.notes + rest.notes)),
            )
        log.exception("a record from %s could not be validated", source)
    started_at = datetime.now(UTC)
    rejected = with_record_key(raw).with_columns(
        pl.lit(None, dtype=pl.String()).alias("_field"),
        pl.lit(REASON_UNPROCESSABLE).alias("_reason"),
    )
    fields = [c for c in raw.columns if c not in (CARD_ID, RAW_RECORD, RECORD_KEY, "source")]
    rejected = rejected.drop([c for c in (RAW_RECORD,) if c in rejected.columns])
    quarantined = to_quarantine(rejected, fields, source=source, target=target, at=started_at)
    if target == "fare_transactions":
        quarantined = quarantined.with_columns(mask_card_numbers(pl.col("raw_record")))
    return JudgedBatch(target, raw.clear(), quarantined, raw.height, started_at)
