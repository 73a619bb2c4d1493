"""The per-minute activity of a day's pings (analytics/matching/coverage.py): counted by hand,
in the dense table and in the group-by it stands in for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from analytics.matching import coverage
from analytics.matching.coverage import compute_ping_activity

T0 = datetime(2025, 1, 7, 8, 0, tzinfo=UTC)
KEY = ["vehicle_id", "minute"]


def pings(fixes: list[tuple[str, float]]) -> pl.DataFrame:
    """Pings of (vehicle, seconds after T0), in the order given."""
    return pl.DataFrame(
        {
            "ping_id": range(len(fixes)),
            "vehicle_id": [v for v, _ in fixes],
            "event_at": [T0 + timedelta(seconds=s) for _, s in fixes],
        },
        schema_overrides={"event_at": pl.Datetime("us", "UTC")},
    )


def test_fixes_per_vehicle_and_minute_by_hand() -> None:
    # out of order, a duplicate instant, a sub-second fix, two vehicles, a silent minute
    day = pings(
        [("B", 75.5), ("A", 0.0), ("A", 59.0), ("B", 61.0), ("A", 30.0), ("A", 30.0), ("A", 185.0)]
    )
    got = compute_ping_activity(day)
    m0 = int(T0.timestamp()) // 60
    t0 = T0.timestamp()
    assert got.rows() == [
        ("A", m0, 4, t0, t0 + 59.0, None),
        ("A", m0 + 3, 1, t0 + 185.0, t0 + 185.0, None),
        ("B", m0 + 1, 2, t0 + 61.0, t0 + 75.5, None),
    ]
    assert got.schema == pl.Schema(
        {
            "vehicle_id": pl.String,
            "minute": pl.Int64,
            "n_pings": pl.Int64,
            "first_s": pl.Float64,
            "last_s": pl.Float64,
            "ping_operator_id": pl.String,
        }
    )


def test_dense_table_and_group_by_give_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    fixes = [(f"V{(7 * i) % 13:02d}", (i * 37.3) % 5400.0) for i in range(2000)]
    day = pings(fixes)
    dense = compute_ping_activity(day)
    # a table too large for the pings: the group-by
    monkeypatch.setattr(coverage, "ACTIVITY_DENSE_BINS_PER_PING", 0)
    grouped = compute_ping_activity(day)
    assert dense.height == grouped.height > 13
    assert dense.equals(grouped.sort(KEY))
    # with nulls or the pings' own operator: the group-by too
    monkeypatch.undo()
    with_null = pl.concat(
        [day, day.head(1).with_columns(pl.lit(None, pl.String).alias("vehicle_id"))]
    )
    assert compute_ping_activity(with_null).height == dense.height + 1
    named = compute_ping_activity(day.with_columns(pl.lit("OP1").alias("operator_id")))
    assert named.sort(KEY).drop("ping_operator_id").equals(dense.drop("ping_operator_id"))
    assert named["ping_operator_id"].unique().to_list() == ["OP1"]


def test_no_pings() -> None:
    assert compute_ping_activity(pings([])).height == 0
