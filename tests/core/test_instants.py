"""Epoch seconds -> UTC instants, checked against hand-computed instants."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from core.instants import UTC_INSTANT, to_utc_instant, utc_instant

# 2026-03-02 10:00:00 UTC = 07:00 in Bento Gonçalves
T0_S = 1_772_445_600


def test_epoch_seconds_become_utc_instants_to_the_microsecond() -> None:
    frame = pl.DataFrame({"t_s": [T0_S + 0.0000004, T0_S + 1.5000006, None]})
    out = frame.select(to_utc_instant("t_s").alias("at"))
    assert out.schema["at"] == UTC_INSTANT
    assert out["at"].to_list() == [
        datetime(2026, 3, 2, 10, 0, 0, 0, tzinfo=UTC),  # 0.4 µs rounds down
        datetime(2026, 3, 2, 10, 0, 1, 500001, tzinfo=UTC),  # 0.6 µs rounds up
        None,
    ]


def test_whole_seconds_and_one_instant_agree() -> None:
    frame = pl.DataFrame({"t_s": [T0_S]}, schema={"t_s": pl.Int64})
    assert frame.select(to_utc_instant(pl.col("t_s")))["t_s"][0] == utc_instant(T0_S)
    assert utc_instant(T0_S) == datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
