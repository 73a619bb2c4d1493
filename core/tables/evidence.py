"""Evidence bookkeeping of the store: the content digest of each service day's raw data, and
the raw days moved out of the store into the lake.

A day's raw pings and taps are digested once (`cases.evidence.record_day_digests`) and re-checked
by `pontual verify`, so a fact judged years later rests on data provably unchanged since
(BG art. 77). Its migration is version 8; `archived_days` (`pontual lake archive`) is created
by migration 12 (`core.migrations`).
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
            "hex SHA-256 of the day's rows in key order, in the canonical text of digest_method",
            False,
        ),
        ("digest_method", pl.String(), "how the rows were written out before hashing", False),
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

register(RAW_DAY_DIGESTS)
register(ARCHIVED_DAYS)

MIGRATION: Migration | None = Migration(
    8,
    "evidence: raw_day_digests",
    tables=("raw_day_digests",),
)
