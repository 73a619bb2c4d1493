"""Evidence bookkeeping of the store: the content digest of each service day's raw data, and
the raw days moved out of the store into the lake.

A day's raw pings and taps are digested once (`cases.evidence.record_day_digests`) and re-checked
by `pontual verify`, so a fact judged years later rests on data provably unchanged since
(BG art. 77). Its migration is version 8; `archived_days` (`pontual lake archive`) is created
by migration 12 (`core.migrations`). `raw_day_fingerprints` (migration 15, ADR 0113) keeps each
raw day's *current* digest with a cheap fingerprint of its rows, so a report reuses the digest
of a day whose rows did not change instead of hashing the day again.
"""

import polars as pl

from core.migrations import Migration
from core.schema import UTC_INSTANT, Table, cols, register

RAW_DAY_DIGESTS = Table(
    "raw_day_digests",
    "SHA-256 of the raw rows of one table for one service day (local date of event_at in the "
    "profile's time zone), recorded when the day is first digested.",
    cols(
        ("service_date", pl.Date(), "service day (local)", False),
        ("table_name", pl.String(), "vehicle_locations or fare_transactions", False),
        ("n_rows", pl.Int64(), "rows of the day when digested", False),
        (
            "sha256",
            pl.String(),
            "hex SHA-256 of the day's rows in key order, in the canonical form of digest_method",
            False,
        ),
        (
            "digest_method",
            pl.String(),
            "how the rows were written out before hashing: method:columns (arrow-binary-v1, "
            "or duckdb-text-v1 before session 31)",
            False,
        ),
        ("time_zone", pl.String(), "IANA zone that defined the day", False),
        ("digested_at", UTC_INSTANT, "when the digest was recorded (UTC)", False),
        ("pontual_version", pl.String(), "Pontual version that recorded it", False),
    ),
    primary_key=("service_date", "table_name"),
)

ARCHIVED_DAYS = Table(
    "archived_days",
    "Raw days moved out of the store into the lake (`pontual lake archive`): the day's rows "
    "were written to the lake, digested there equal to raw_day_digests, then deleted from the "
    "store. `pontual verify` checks these days against the lake; `pruned_at` is set when the "
    "lake partition was deleted past the retention (`pontual lake prune`).",
    cols(
        ("service_date", pl.Date(), "service day (local)", False),
        ("table_name", pl.String(), "vehicle_locations or fare_transactions", False),
        ("n_rows", pl.Int64(), "rows moved to the lake", False),
        (
            "sha256",
            pl.String(),
            "digest of the day computed from the lake (= raw_day_digests)",
            False,
        ),
        ("lake_path", pl.String(), "absolute path of the lake the day was moved to", False),
        ("archived_at", UTC_INSTANT, "when the day left the store (UTC)", False),
        ("pruned_at", UTC_INSTANT, "when its lake partition was deleted (UTC); null: kept", True),
        ("pontual_version", pl.String(), "Pontual version that archived it", False),
    ),
    primary_key=("service_date", "table_name"),
)

RAW_DAY_FINGERPRINTS = Table(
    "raw_day_fingerprints",
    "The current SHA-256 of one raw table's rows for one service day (the digest of "
    "raw_day_digests, recomputed: not the reference) with a fingerprint of those rows from one "
    "DuckDB scan (row count and two sums of DuckDB row hashes). A report reuses the digest of a "
    "day whose fingerprint, DuckDB version, time zone and columns are unchanged and hashes the "
    "others again (`cases.evidence.compute_period_day_digests`, ADR 0113). Rewritten whenever "
    "the day is digested again (after an ingest touched it, by `pontual verify`).",
    cols(
        ("service_date", pl.Date(), "service day (local)", False),
        ("table_name", pl.String(), "vehicle_locations or fare_transactions", False),
        ("time_zone", pl.String(), "IANA zone that defined the day", False),
        ("n_rows", pl.Int64(), "rows of the day when digested", False),
        (
            "row_hash_sum_a",
            pl.UInt64(),
            "sum modulo 2^64 of DuckDB hash() of each row's columns in digest order",
            False,
        ),
        (
            "row_hash_sum_b",
            pl.UInt64(),
            "sum modulo 2^64 of DuckDB hash() of each row's columns in reverse order, salted",
            False,
        ),
        (
            "duckdb_version",
            pl.String(),
            "DuckDB version whose hash() gave the sums (another version: digested again)",
            False,
        ),
        ("sha256", pl.String(), "hex SHA-256 of the day's rows (as raw_day_digests)", False),
        (
            "digest_method",
            pl.String(),
            "method and columns of the digest (as raw_day_digests)",
            False,
        ),
        ("digested_at", UTC_INSTANT, "when the digest was computed (UTC)", False),
        ("pontual_version", pl.String(), "Pontual version that computed it", False),
    ),
    primary_key=("service_date", "table_name"),
)

register(RAW_DAY_DIGESTS)
register(ARCHIVED_DAYS)
register(RAW_DAY_FINGERPRINTS)

MIGRATION: Migration | None = Migration(
    8,
    "evidence: raw_day_digests",
    tables=("raw_day_digests",),
)
