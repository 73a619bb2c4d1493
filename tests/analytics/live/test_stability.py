"""Hysteresis of the live assignment and the flip rate, on hand-checked cases."""

from __future__ import annotations

import polars as pl

from analytics.live.continuity import ASSIGNED_SCHEMA
from analytics.live.scoring import compute_flip_rate
from analytics.live.stability import PENDING_SCHEMA, hold_assignments


def _assigned(rows: list[tuple[str, str, float, float]]) -> pl.DataFrame:
    """(vehicle, trip, ended_s, end_dist_m) rows, departed at 0 and not arrived."""
    return pl.DataFrame(
        [
            {
                "vehicle_id": v,
                "trip_id": t,
                "started_s": 0.0,
                "ended_s": e,
                "end_dist_m": d,
                "is_arrived": False,
                "departure_delay_s": 0,
            }
            for v, t, e, d in rows
        ],
        schema=ASSIGNED_SCHEMA,
    )


def _located(rows: list[tuple[str, float, float]]) -> pl.DataFrame:
    schema = {"vehicle_id": pl.String, "t_s": pl.Float64, "dist_m": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row").with_columns(
        pl.lit(10_000.0).alias("destination_dist_m")
    )


def _hold(previous, proposed, located, pending):
    return hold_assignments(
        previous,
        proposed,
        located,
        pending,
        pl.DataFrame({"vehicle_id": ["V1", "V2"]}),
        switch_after_refreshes=3,
        backtrack_m=50.0,
        terminal_radius_m=100.0,
    )


def test_a_vehicle_keeps_its_trip_until_three_refreshes_propose_another() -> None:
    held = _assigned([("V1", "A", 60.0, 1000.0)])
    pending = pl.DataFrame(schema=PENDING_SCHEMA)
    # V1 moves on along A's shape while the fresh assignment says B: held twice, then B
    for step, dist in ((1, 1200.0), (2, 1400.0)):
        proposed = _assigned([("V1", "B", 60.0 + 60 * step, 300.0)])
        held, pending = _hold(held, proposed, _located([("V1", 60.0 + 60 * step, dist)]), pending)
        assert held.rows() == [("V1", "A", 0.0, 60.0 + 60 * step, dist, False, 0)]
        assert pending["n_pending"].to_list() == [step]
    proposed = _assigned([("V1", "B", 240.0, 500.0)])
    held, pending = _hold(held, proposed, _located([("V1", 240.0, 1600.0)]), pending)
    assert held["trip_id"].to_list() == ["B"] and pending.height == 0


def test_no_proposal_is_no_evidence_but_running_backwards_or_leaving_the_shape_is() -> None:
    held = _assigned([("V1", "A", 60.0, 1000.0), ("V2", "C", 60.0, 2000.0)])
    none = _assigned([])
    pending = pl.DataFrame(schema=PENDING_SCHEMA)
    # V1 progresses on A: kept with no count; V2 is 300 m behind its last place on C: dropped
    out, pending = _hold(
        held, none, _located([("V1", 120.0, 1100.0), ("V2", 120.0, 1700.0)]), pending
    )
    assert out.select("vehicle_id", "trip_id", "end_dist_m").rows() == [("V1", "A", 1100.0)]
    assert pending.filter(pl.col("vehicle_id") == "V1")["n_pending"].to_list() == [0]
    # V1 off A's shape (not located): dropped at once
    out, _ = _hold(out, none, _located([]), pending)
    assert out.height == 0


def test_the_incumbent_keeps_a_trip_another_vehicle_is_proposed_for() -> None:
    held = _assigned([("V1", "A", 60.0, 1000.0)])
    proposed = _assigned([("V2", "A", 120.0, 1050.0)])
    out, _ = _hold(
        held, proposed, _located([("V1", 120.0, 1150.0)]), pl.DataFrame(schema=PENDING_SCHEMA)
    )
    assert out.select("vehicle_id", "trip_id").rows() == [("V1", "A")]


def test_flip_rate_counts_changes_undone_within_the_window() -> None:
    # V1: A A B A A (a flip: off A for one minute), then C (a change, not undone)
    # V2: D, none, D after 15 minutes (outside a 10-minute window: not a flip)
    rows = [("V1", t, 60.0 * i) for i, t in enumerate(["A", "A", "B", "A", "A", "C"])] + [
        ("V2", "D", 0.0),
        ("V2", None, 60.0),
        ("V2", "D", 960.0),
    ]
    frame = pl.DataFrame(rows, schema=["vehicle_id", "trip_id", "made_s"], orient="row")
    got = compute_flip_rate(frame, 600.0)
    assert got["n_changes"] == 5  # V1: A>B, B>A, A>C; V2: D>none, none>D
    assert got["n_flips"] == 1
    assert got["flip_rate"] == 0.2
    # 5 + 16 vehicle-minutes observed: one flip in 0.35 h
    assert abs(got["flips_per_vehicle_hour"] - 1 / (21 / 60)) < 1e-9
