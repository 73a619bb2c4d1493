"""Instants: seconds since the Unix epoch as UTC instants, written once.

The matching kernels, the simulator and the live feed count time in seconds since the epoch
(floats: a ping or an interpolated arrival falls between whole seconds); the store keeps UTC
instants to the microsecond (`TIMESTAMPTZ`, Polars `Datetime("us", "UTC")`). Every such
conversion goes through `to_utc_instant` so they all round the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

UTC_INSTANT = pl.Datetime("us", "UTC")
"""The dtype of every `*_at` column."""


def to_utc_instant(seconds: pl.Expr | str) -> pl.Expr:
    """Seconds since the epoch (a column name or an expression, int or float) as a UTC
    instant, rounded to the nearest microsecond; null stays null."""
    col = pl.col(seconds) if isinstance(seconds, str) else seconds
    return pl.from_epoch((col * 1e6).round().cast(pl.Int64), "us").dt.replace_time_zone("UTC")


def utc_instant(seconds: float) -> datetime:
    """One instant: seconds since the epoch as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, UTC)
