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


def _struct_dtype(fields: Sequence[str]) -> pl.Struct:
    return pl.Struct({name: pl.String() for name in fields})


def _decode_chunk(payloads: pl.Series, dtype: pl.Struct) -> pl.Series:
    return payloads.cast(pl.String()).str.json_decode(dtype)


def decode_payloads(payloads: pl.Series, fields: Sequence[str]) -> tuple[pl.DataFrame, pl.Series]:
    """Decode a Binary series of JSON objects into a frame of String columns, in bulk.

    Returns the decoded frame (one row per payload; all-null where the payload failed) and a
    String series with the reason each payload failed (null where it decoded). A failing bulk
    decode is bisected, so a few bad messages cost a few extra bulk decodes, not a per-message
    parse of the whole batch.
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
        except pl.exceptions.PolarsError as exc:
            if stop - start > 1:
                mid = (start + stop) // 2
                run(start, mid)
                run(mid, stop)
                return
            reasons[start] = _reason(chunk[0], exc)
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
            pl.when(reason.is_null() & is_null)
            .then(
                pl.lit("payload is not a JSON object (expected {...} with the documented fields)")
            )
            .otherwise(reason)
        )
        .to_series()
        .alias("reason")
        if n
        else reason
    )
    return decoded, reason


def _reason(payload: bytes, exc: Exception) -> str:
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return "payload is not UTF-8 text (expected a JSON object)"
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"payload is not a JSON object with text/number fields ({detail})"


def build_message_frames(
    topics: Sequence[str],
    payloads: Sequence[bytes],
    *,
    topic_root: str = "pontual",
    received_at: datetime | None = None,
) -> MessageFrames:
    """Split a batch of (topic, payload) messages into AVL, fare and quarantine frames."""
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
    )
    well_formed = (
        (pl.col("root") == topic_root)
        & pl.col("kind").is_in(list(KINDS))
        & (pl.col("n_levels") == 4)
        & (pl.col("topic_operator_id").str.len_chars() > 0)
        & (pl.col("topic_vehicle_id").str.len_chars() > 0)
    ).fill_null(False)
    msgs = msgs.with_columns(is_topic_ok=well_formed)
    rejected = [
        msgs.filter(~pl.col("is_topic_ok")).select(
            "source",
            "record_key",
            "payload",
            target_table=pl.lit("vehicle_locations"),
            field=pl.lit("topic"),
            reason=pl.lit(
                f"topic is not {topic_root}/avl/{{operator}}/{{vehicle}} "
                f"or {topic_root}/fares/{{operator}}/{{vehicle}}"
            ),
        )
    ]
    frames: dict[str, pl.DataFrame] = {}
    for kind, fields in KINDS.items():
        part = msgs.filter(pl.col("is_topic_ok") & (pl.col("kind") == kind))
        decoded, reason = decode_payloads(part["payload"], fields)
        part = pl.concat([part, decoded], how="horizontal").with_columns(reason=reason)
        part = part.with_columns(
            reason=pl.when(pl.col("reason").is_not_null())
            .then(pl.col("reason"))
            .when(
                pl.col("vehicle_id").is_not_null()
                & (pl.col("vehicle_id") != pl.col("topic_vehicle_id"))
            )
            .then(pl.lit("payload vehicle_id differs from the topic's vehicle"))
            .when(
                pl.col("operator_id").is_not_null()
                & (pl.col("operator_id") != pl.col("topic_operator_id"))
            )
            .then(pl.lit("payload operator_id differs from the topic's operator"))
        )
        rejected.append(
            part.filter(pl.col("reason").is_not_null()).select(
                "source",
                "record_key",
                "payload",
                target_table=pl.lit(TARGET_TABLES[kind]),
                field=pl.when(pl.col("reason").str.starts_with("payload vehicle_id"))
                .then(pl.lit("vehicle_id"))
                .when(pl.col("reason").str.starts_with("payload operator_id"))
                .then(pl.lit("operator_id")),
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
    # Rare path (rejected messages only): keep the original bytes readable even when not UTF-8.
    raw = [p.decode("utf-8", "backslashreplace") for p in quarantine["payload"].to_list()]
    quarantine = table("quarantine").conform(
        quarantine.with_columns(raw_record=pl.Series(raw, dtype=pl.String())),
        fill={"quarantined_at": received_at},
    )
    return MessageFrames(avl=frames["avl"], fares=frames["fares"], quarantine=quarantine)
