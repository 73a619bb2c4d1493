"""MQTT messages to raw-record frames: topics and JSON payloads of one batch, decoded in bulk.

Topics are ``pontual/avl/{operator}/{vehicle}`` and ``pontual/fares/{operator}/{vehicle}``;
each payload is one JSON object (fields in `AVL_FIELDS` / `FARE_FIELDS`, see ingest/README.md,
"MQTT topics and payloads"). A batch becomes at most three frames: AVL raw records and fare raw
records for the ingest writers (every field as text, as a CSV reader would give it, plus
`operator_id`, `source`, `record_key`, `raw_record`), and quarantine rows for the messages that
are not records at all (a topic outside the scheme, a payload that is not a JSON object, a
vehicle or operator in the payload that contradicts the topic).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from core.schema import table
from ingest.cards import mask_card_numbers

# Payload fields, read as text: the ingest writers parse and validate them like a CSV column.
AVL_FIELDS: tuple[str, ...] = (
    "vehicle_id",
    "event_at",
    "lat",
    "lon",
    "speed_m_s",
    "heading_deg",
    "event_code",
    "trip_id",
    "route_id",
    "direction_id",
    "occupancy",
    "operator_id",
)
FARE_FIELDS: tuple[str, ...] = (
    "transaction_id",
    "event_at",
    "vehicle_id",
    "route_id",
    "card_id",
    "fare_class",
    "amount",
    "operator_id",
)
KINDS: dict[str, tuple[str, ...]] = {"avl": AVL_FIELDS, "fares": FARE_FIELDS}
TARGET_TABLES = {"avl": "vehicle_locations", "fares": "fare_transactions"}


@dataclass(frozen=True)
class MessageFrames:
    """One batch of messages as frames.

    `avl` and `fares`: one row per message, columns = the payload fields (String, null when
    absent) with `operator_id` and `vehicle_id` taken from the topic when the payload lacks
    them, plus `source` (the topic), `record_key` (hex hash of topic and payload: the same
    message redelivered gets the same key) and `raw_record` (the payload text).
    `quarantine`: rows of the `quarantine` table for messages that are not records.
    """

    avl: pl.DataFrame
    fares: pl.DataFrame
    quarantine: pl.DataFrame


# Why a message is not a record: the closed set of reasons the decoder gives (quarantine.reason).
REASON_TOPIC = (
    "topic is not {root}/avl/{{operator}}/{{vehicle}} or {root}/fares/{{operator}}/{{vehicle}}"
)
REASON_EMPTY = "payload is empty (expected a JSON object)"
REASON_TOO_LARGE = "payload larger than {limit} bytes (max_message_bytes)"
REASON_NOT_UTF8 = "payload is not UTF-8 text (expected a JSON object)"
REASON_NOT_JSON = "payload is not a JSON object with text/number fields"
REASON_NOT_OBJECT = "payload is not a JSON object (expected {...} with the documented fields)"
REASON_FIELD_TOO_LONG = "field longer than {limit} bytes (max_field_bytes)"
REASON_VEHICLE_DIFFERS = "payload vehicle_id differs from the topic's vehicle"
REASON_OPERATOR_DIFFERS = "payload operator_id differs from the topic's operator"
REASON_UNPROCESSABLE = "message could not be decoded (internal error, see the listener's log)"

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024
"""Largest payload read (bytes): an AVL or fare message is a few hundred bytes."""
DEFAULT_MAX_FIELD_BYTES = 256
"""Longest field value kept (bytes, UTF-8): ids, times and numbers are far shorter."""
# How much of an oversized payload quarantine keeps (the rest is cut, with its size noted).
_KEPT_OF_OVERSIZED_BYTES = 1024


def _struct_dtype(fields: Sequence[str]) -> pl.Struct:
    return pl.Struct({name: pl.String() for name in fields})


def _decode_chunk(payloads: pl.Series, dtype: pl.Struct) -> pl.Series:
    out = payloads.cast(pl.String()).str.json_decode(dtype)
    if out.len() != payloads.len():
        # A blank payload decodes to no row at all (Polars), which would shift every other one.
        raise pl.exceptions.ShapeError("decoded rows do not match the payloads")
    return out


def decode_payloads(payloads: pl.Series, fields: Sequence[str]) -> tuple[pl.DataFrame, pl.Series]:
    """Decode a Binary series of JSON objects into a frame of String columns, in bulk.

    Returns the decoded frame (one row per payload; all-null where the payload failed) and a
    String series with the reason each payload failed (null where it decoded; one of the
    `REASON_*` texts). A failing bulk decode is bisected, so a few bad messages cost a few extra
    bulk decodes, not a per-message parse of the whole batch. A payload that makes the decoder
    fail in any way (an error or a native panic) is only that payload's failure.
    """
    dtype = _struct_dtype(fields)
    n = payloads.len()
    reasons: list[str | None] = [None] * n
    parts: list[pl.Series] = []

    def run(start: int, stop: int) -> None:
        chunk = payloads.slice(start, stop - start)
        try:
            parts.append(_decode_chunk(chunk, dtype))
            return
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException):
            if stop - start > 1:
                mid = (start + stop) // 2
                run(start, mid)
                run(mid, stop)
                return
            reasons[start] = _reason(chunk[0])
        parts.append(pl.Series([None], dtype=dtype))

    if n:
        run(0, n)
        decoded = pl.concat(parts).struct.unnest()
    else:
        decoded = pl.DataFrame(schema={name: pl.String() for name in fields})
    # A JSON `null` payload decodes to a null struct: not an object either.
    reason = pl.Series("reason", reasons, dtype=pl.String())
    is_null = pl.concat(parts).is_null() if n else pl.Series([], dtype=pl.Boolean())
    reason = (
        pl.select(
            pl.when(reason.is_null() & is_null).then(pl.lit(REASON_NOT_OBJECT)).otherwise(reason)
        )
        .to_series()
        .alias("reason")
        if n
        else reason
    )
    return decoded, reason


def _reason(payload: bytes) -> str:
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return REASON_NOT_UTF8
    text = text.strip()
    if not text:
        return REASON_EMPTY
    return REASON_NOT_JSON if text.startswith("{") else REASON_NOT_OBJECT


def to_quarantine_text(payload: bytes, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> str:
    """The raw text quarantine keeps of a rejected payload: readable even when not UTF-8, and
    cut when oversized. Card numbers are masked after (`mask_card_numbers`, vectorised)."""
    cut = len(payload) > max_message_bytes
    text = payload[: _KEPT_OF_OVERSIZED_BYTES if cut else None].decode("utf-8", "backslashreplace")
    if cut:
        text += f"... ({len(payload)} bytes, cut)"
    return text


def build_message_frames(
    topics: Sequence[str],
    payloads: Sequence[bytes],
    *,
    topic_root: str = "pontual",
    received_at: datetime | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_field_bytes: int = DEFAULT_MAX_FIELD_BYTES,
) -> MessageFrames:
    """Split a batch of (topic, payload) messages into AVL, fare and quarantine frames.

    Never raises on what a publisher sent: a message that is not a record (topic outside the
    scheme, empty, larger than `max_message_bytes`, not UTF-8, not a JSON object, a field that
    is not text or a number or is longer than `max_field_bytes`, a vehicle or operator that
    contradicts the topic) becomes a quarantine row with one of the `REASON_*` texts.
    """
    received_at = received_at or datetime.now(UTC)
    msgs = pl.DataFrame(
        {
            "source": pl.Series(topics, dtype=pl.String()),
            "payload": pl.Series(payloads, dtype=pl.Binary()),
        }
    )
    parts = pl.col("source").str.split("/")
    msgs = msgs.with_columns(
        # Same topic and payload -> same key, so a redelivered bad message is quarantined once.
        record_key=pl.struct("source", "payload").hash().cast(pl.String()),
        root=parts.list.get(0, null_on_oob=True),
        kind=parts.list.get(1, null_on_oob=True),
        topic_operator_id=parts.list.get(2, null_on_oob=True),
        topic_vehicle_id=parts.list.get(3, null_on_oob=True),
        n_levels=parts.list.len(),
        n_bytes=pl.col("payload").bin.size(),
    )
    well_formed = (
        (pl.col("root") == topic_root)
        & pl.col("kind").is_in(list(KINDS))
        & (pl.col("n_levels") == 4)
        & (pl.col("topic_operator_id").str.len_chars() > 0)
        & (pl.col("topic_vehicle_id").str.len_chars() > 0)
    ).fill_null(False)
    # Checked before decoding: an empty or oversized payload is never handed to the decoder.
    msgs = msgs.with_columns(
        pre_reason=pl.when(~well_formed)
        .then(pl.lit(REASON_TOPIC.format(root=topic_root)))
        .when(pl.col("n_bytes") == 0)
        .then(pl.lit(REASON_EMPTY))
        .when(pl.col("n_bytes") > max_message_bytes)
        .then(pl.lit(REASON_TOO_LARGE.format(limit=max_message_bytes)))
    )
    rejected = [
        msgs.filter(pl.col("pre_reason").is_not_null()).select(
            "source",
            "record_key",
            "payload",
            target_table=pl.when(pl.col("kind") == "fares")
            .then(pl.lit(TARGET_TABLES["fares"]))
            .otherwise(pl.lit(TARGET_TABLES["avl"])),
            field=pl.when(~well_formed).then(pl.lit("topic")),
            reason="pre_reason",
        )
    ]
    frames: dict[str, pl.DataFrame] = {}
    too_long = REASON_FIELD_TOO_LONG.format(limit=max_field_bytes)
    for kind, fields in KINDS.items():
        part = msgs.filter(pl.col("pre_reason").is_null() & (pl.col("kind") == kind))
        decoded, reason = decode_payloads(part["payload"], fields)
        part = pl.concat([part, decoded], how="horizontal").with_columns(reason=reason)
        long_field = pl.coalesce(
            pl.when(pl.col(f).str.len_bytes() > max_field_bytes).then(pl.lit(f)) for f in fields
        )
        part = part.with_columns(
            bad_field=pl.when(pl.col("reason").is_not_null())
            .then(pl.lit(None, dtype=pl.String()))
            .otherwise(long_field)
        ).with_columns(
            reason=pl.when(pl.col("reason").is_not_null())
            .then(pl.col("reason"))
            .when(pl.col("bad_field").is_not_null())
            .then(pl.lit(too_long))
            .when(
                pl.col("vehicle_id").is_not_null()
                & (pl.col("vehicle_id") != pl.col("topic_vehicle_id"))
            )
            .then(pl.lit(REASON_VEHICLE_DIFFERS))
            .when(
                pl.col("operator_id").is_not_null()
                & (pl.col("operator_id") != pl.col("topic_operator_id"))
            )
            .then(pl.lit(REASON_OPERATOR_DIFFERS))
        )
        rejected.append(
            part.filter(pl.col("reason").is_not_null()).select(
                "source",
                "record_key",
                "payload",
                target_table=pl.lit(TARGET_TABLES[kind]),
                field=pl.when(pl.col("reason") == REASON_VEHICLE_DIFFERS)
                .then(pl.lit("vehicle_id"))
                .when(pl.col("reason") == REASON_OPERATOR_DIFFERS)
                .then(pl.lit("operator_id"))
                .otherwise(pl.col("bad_field")),
                reason="reason",
            )
        )
        frames[kind] = (
            part.filter(pl.col("reason").is_null())
            .with_columns(
                vehicle_id=pl.coalesce("vehicle_id", "topic_vehicle_id"),
                operator_id=pl.coalesce("operator_id", "topic_operator_id"),
                raw_record=pl.col("payload").cast(pl.String()),
            )
            .select(*fields, "source", "record_key", "raw_record")
        )
    quarantine = pl.concat(rejected, how="vertical_relaxed")
    # Rare path (rejected messages only): readable, bounded, card ids masked.
    raw = [to_quarantine_text(p, max_message_bytes) for p in quarantine["payload"].to_list()]
    # A rejected payload was never hashed: its card number must not reach the store (LGPD).
    quarantine = table("quarantine").conform(
        quarantine.with_columns(
            raw_record=pl.when(pl.col("target_table") == TARGET_TABLES["fares"])
            .then(mask_card_numbers(pl.lit(pl.Series(raw, dtype=pl.String()))))
            .otherwise(pl.lit(pl.Series(raw, dtype=pl.String())))
        ),
        fill={"quarantined_at": received_at},
    )
    return MessageFrames(avl=frames["avl"], fares=frames["fares"], quarantine=quarantine)


def build_unprocessable_quarantine(
    topic: str, payload: bytes, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> pl.DataFrame:
    """The quarantine row of a message whose decoding failed alone (the consumer's last
    resort: such a message is kept and acknowledged, never redelivered for ever)."""
    msg = pl.DataFrame({"source": [topic], "payload": pl.Series([payload], dtype=pl.Binary())})
    kind = topic.split("/")[1] if topic.count("/") >= 1 else "avl"
    return table("quarantine").conform(
        msg.select(
            "source",
            record_key=pl.struct("source", "payload").hash().cast(pl.String()),
            target_table=pl.lit(TARGET_TABLES.get(kind, TARGET_TABLES["avl"])),
            field=pl.lit(None, dtype=pl.String()),
            reason=pl.lit(REASON_UNPROCESSABLE),
            raw_record=mask_card_numbers(pl.lit(to_quarantine_text(payload, max_message_bytes))),
        ),
        fill={"quarantined_at": datetime.now(UTC)},
    )
