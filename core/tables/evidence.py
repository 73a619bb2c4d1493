"""Evidence bookkeeping of the store: the content digest of each service day's raw data.

A day's raw pings and taps are digested once (`cases.evidence.record_day_digests`) and re-checked
by `pontual verify`, so a fact judged years later rests on data provably unchanged since
(BG art. 77). Its migration is version 8.
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

register(RAW_DAY_DIGESTS)

MIGRATION: Migration | None = Migration(
    8,
    "evidence: raw_day_digests",
    tables=("raw_day_digests",),
)
