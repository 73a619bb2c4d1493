"""The trip a vehicle is expected on next: the one after its last completed trip in the block."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from analytics.live.continuity import build_block_expectations


def _trips() -> pl.DataFrame:
    def at(h: int, m: int) -> datetime:
        return datetime(2026, 3, 3, h, m, tzinfo=UTC)

    return pl.DataFrame(
        {
            "trip_id": ["B1-0", "B1-1", "B1-2", "B2-0", "B2-1"],
            "block_id": ["B1", "B1", "B1", "B2", "B2"],
            "shape_id": ["out", "back", "out", "out", "back"],
            "planned_start_at": [at(9, 0), at(9, 40), at(10, 20), at(9, 10), at(9, 50)],
        },
        schema_overrides={"planned_start_at": pl.Datetime("us", "UTC")},
    )


def test_next_trip_of_the_block_after_the_last_completed() -> None:
    completed = pl.DataFrame(
        {
            "trip_id": ["B1-0", "B2-0", "B2-1"],
            "vehicle_id": ["V1", "V2", "V2"],
            "ended_s": [1.0e9, 1.0e9, 1.1e9],
        }
    )
    open_trips = (
        _trips().select("trip_id").filter(~pl.col("trip_id").is_in(["B1-0", "B2-0", "B2-1"]))
    )
    expected = build_block_expectations(completed, _trips(), open_trips)
    # V1 finished B1-0: B1-1 (09:40, shape back) is next; V2 finished its block: nothing
    assert expected.select("vehicle_id", "trip_id", "shape_id", "after_s").to_dicts() == [
        {"vehicle_id": "V1", "trip_id": "B1-1", "shape_id": "back", "after_s": 1.0e9}
    ]
    assert expected["plan_start_s"].to_list() == [
        datetime(2026, 3, 3, 9, 40, tzinfo=UTC).timestamp()
    ]


def test_a_trip_someone_else_finished_is_skipped() -> None:
    completed = pl.DataFrame(
        {"trip_id": ["B1-0", "B1-1"], "vehicle_id": ["V1", "V9"], "ended_s": [1.0e9, 1.05e9]}
    )
    open_trips = pl.DataFrame({"trip_id": ["B1-2", "B2-0", "B2-1"]})
    expected = build_block_expectations(completed, _trips(), open_trips)
    # V1's block continues with B1-2 (B1-1 was run by V9); V9's last trip is B1-1: also
    # B1-2 (match_block_continuations keeps the one whose departure fits better)
    assert sorted(expected.select("vehicle_id", "trip_id").rows()) == [
        ("V1", "B1-2"),
        ("V9", "B1-2"),
    ]
