"""Bookkeeping tables of the store itself."""

import polars as pl

from core.schema import UTC_INSTANT, Table, cols, register

SCHEMA_VERSION = Table(
    "schema_version",
    "One row per migration applied to the store.",
    cols(
        ("version", pl.Int32(), "migration number", False),
        ("description", pl.String(), "what the migration did", False),
        ("applied_at", UTC_INSTANT, "when it was applied (UTC)", False),
        ("pontual_version", pl.String(), "Pontual version that applied it", False),
    ),
    primary_key=("version",),
)

INGEST_RUNS = Table(
    "ingest_runs",
    "One row per ingest of a file or batch of messages, with its counts.",
    cols(
        ("run_id", pl.String(), "unique id of the run", False),
        (
            "kind",
            pl.String(),
            "what was ingested: avl, fares, vehicles, incidents, surveys, counts, gtfs",
            False,
        ),
        ("source", pl.String(), "file path, URL or MQTT topic", False),
        ("source_sha256", pl.String(), "hash of the file bytes (null for streams)"),
        ("started_at", UTC_INSTANT, "when the run started (UTC)", False),
        ("finished_at", UTC_INSTANT, "when the run committed (UTC)"),
        ("n_read", pl.Int64(), "records read"),
        ("n_accepted", pl.Int64(), "records written to their table"),
        ("n_duplicate", pl.Int64(), "records already in the store (idempotent re-ingest)"),
        ("n_quarantined", pl.Int64(), "records rejected into quarantine"),
    ),
    primary_key=("run_id",),
)

QUARANTINE = Table(
    "quarantine",
    "Every rejected input record, with the original text and why it was rejected.",
    cols(
        ("source", pl.String(), "file path, URL or MQTT topic the record came from", False),
        (
            "record_key",
            pl.String(),
            "line number in the file, or message id; identifies the record in its source",
            False,
        ),
        ("target_table", pl.String(), "table the record was meant for", False),
        ("field", pl.String(), "the offending field, when one field is to blame"),
        ("reason", pl.String(), "why it was rejected and what was expected", False),
        ("raw_record", pl.String(), "the original text of the record", False),
        ("quarantined_at", UTC_INSTANT, "when it was rejected (UTC)", False),
    ),
    primary_key=("source", "record_key", "reason"),
)

HASH_KEY_FINGERPRINTS = Table(
    "hash_key_fingerprints",
    "The fingerprint of the card-hashing key this store's card hashes were made with (one row; "
    "a different key is refused, as it would split every card's history).",
    cols(
        (
            "fingerprint",
            pl.String(),
            "HMAC-SHA256(key, a fixed label), hex: names the key without revealing it",
            False,
        ),
        ("recorded_at", UTC_INSTANT, "when the first card was hashed with it (UTC)", False),
    ),
    primary_key=("fingerprint",),
)

register(SCHEMA_VERSION, INGEST_RUNS, QUARANTINE, HASH_KEY_FINGERPRINTS)
