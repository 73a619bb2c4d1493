"""Layovers learned from history, on a hand-checked day of stop visits, and the chaining of the
next trip with them (and without them: a first day predicts as before)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from functools import partial

import polars as pl

from analytics.live.layovers import (
    build_layover_pairs,
    build_terminal_layovers,
    build_trip_layovers,
)
from analytics.live.predict import compute_stop_predictions

DAY = date(2026, 3, 2)
T0 = datetime(2026, 3, 2, 12, 0)  # naive UTC


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _trip(vehicle: str, trip: str, first: str, last: str, plan: float, dep: float, arr: float):
    """Two stop visits: the first stop (planned departure `plan`, departed `dep`) and the last
    (arrived `arr`); minutes after 12:00 UTC."""
    return [
        (vehicle, trip, 1, first, _at(plan), _at(dep), _at(dep)),
        (vehicle, trip, 2, last, _at(plan + 30), _at(arr), _at(arr)),
    ]


def _visits() -> pl.DataFrame:
    rows = []
    # terminal B: three late arrivals (slack under 2 min) that left 4, 5 and 6 min after
    # arriving; terminal A: three arrivals with time to spare that left 1, 1 and 3 min late
    for k, v in enumerate(("v1", "v2", "v3")):
        base = 100 * k
        rows += _trip(v, f"{v}a", "A", "B", base, base, base + 31)  # arrives at B at +31
        # next trip planned at +32 from B (slack 1 min): leaves after 4+k minutes
        rows += _trip(v, f"{v}b", "B", "A", base + 32, base + 35 + k, base + 64)
        # next trip planned at +80 from A (slack 16 min): leaves 1, 1, 3 min late
        late = (1, 1, 3)[k]
        rows += _trip(v, f"{v}c", "A", "B", base + 80, base + 80 + late, base + 110 + late)
    # a crew break (next planned 2 h after the arrival) teaches nothing
    rows += _trip("v4", "v4a", "A", "B", 500, 500, 530)
    rows += _trip("v4", "v4b", "B", "A", 650, 700, 730)
    frame = pl.DataFrame(
        rows,
        schema=[
            "vehicle_id",
            "trip_id",
            "stop_sequence",
            "stop_id",
            "planned_departure_at",
            "departure_at",
            "arrival_at",
        ],
        orient="row",
    )
    return frame.with_columns(
        pl.lit(DAY).alias("service_date"),
        pl.col("stop_sequence").cast(pl.Int32),
        pl.col("planned_departure_at", "departure_at", "arrival_at").dt.replace_time_zone("UTC"),
        pl.lit(False).alias("is_interpolated"),
    )


def test_layovers_and_departure_offsets_are_learned_per_terminal() -> None:
    pairs = build_layover_pairs(_visits(), max_gap_s=3600)
    # 3 vehicles x 2 pairs; v4's two-hour break is left out
    assert pairs.height == 6
    terminals = build_terminal_layovers(pairs, min_layover_s=120, min_samples=3)
    by = {r["stop_id"]: r for r in terminals.iter_rows(named=True)}
    # at B the late vehicles took 4, 5 and 6 minutes: median 5 min
    assert by["B"]["learned_layover_s"] == 300.0
    assert by["B"]["n_layover_samples"] == 3
    # at A the vehicles ready in time left 1, 1, 3 min late: median 1 min
    assert by["A"]["learned_departure_offset_s"] == 60.0
    assert by["A"]["learned_layover_s"] is None  # nobody arrived late at A
    assert by["*"]["learned_layover_s"] == 300.0


def test_trips_inherit_their_terminal_or_the_defaults() -> None:
    terminals = build_terminal_layovers(
        build_layover_pairs(_visits(), max_gap_s=3600), min_layover_s=120, min_samples=3
    )
    stop_times = pl.DataFrame(
        {
            "trip_id": ["x", "x", "y", "y"],
            "stop_sequence": [1, 2, 1, 2],
            "stop_id": ["B", "A", "C", "A"],
        }
    )
    got = build_trip_layovers(stop_times, terminals, min_layover_s=120).rows()
    # x leaves B: B's layover, the network's offset (A's, the only one learned)
    # y leaves C (never seen): the network's layover and offset
    assert got == [("x", 300.0, 60.0, True), ("y", 300.0, 60.0, True)]
    first_day = build_terminal_layovers(
        build_layover_pairs(_visits().clear(), max_gap_s=3600), min_layover_s=120, min_samples=3
    )
    assert build_trip_layovers(stop_times, first_day, min_layover_s=120).rows() == [
        ("x", 120.0, 0.0, False),
        ("y", 120.0, 0.0, False),
    ]


def test_the_next_trip_leaves_after_the_learned_layover_never_before_its_time() -> None:
    trips = pl.DataFrame(
        {
            "trip_id": ["t1", "t2"],
            "block_id": ["b", "b"],
            "planned_start_at": [_at(0), _at(32)],
        }
    ).with_columns(pl.col("planned_start_at").dt.replace_time_zone("UTC"))
    epoch0 = (T0 - datetime(1970, 1, 1)).total_seconds()  # 12:00 UTC, epoch seconds
    stop_times = pl.DataFrame(
        {
            "trip_id": ["t1", "t1", "t2", "t2"],
            "stop_sequence": [1, 2, 1, 2],
            "stop_id": ["A", "B", "B", "A"],
            "planned_arrival_s": [epoch0, epoch0 + 1800, epoch0 + 1920, epoch0 + 3720],
            "learned_seg_s": [0.0, 1800.0, 0.0, 1800.0],
            "learned_cum_s": [0.0, 1800.0, 0.0, 1800.0],
        }
    )
    # t1's vehicle arrived at B at +31 min and has left the terminal (not waiting)
    positions = pl.DataFrame(
        {
            "vehicle_id": ["v"],
            "trip_id": ["t1"],
            "t_s": [epoch0 + 31 * 60 + 30],
            "stop_index": [2],
            "frac": [0.0],
            "delay_s": [60.0],
            "arrived_s": [epoch0 + 31 * 60],
            "waiting_s": [None],
        },
        schema_overrides={"waiting_s": pl.Float64},
    )
    predict = partial(
        compute_stop_predictions, delay_decay_s=600.0, min_layover_s=120.0, next_trips=1
    )
    plain = predict(positions, stop_times, trips)
    first = plain.filter(pl.col("trip_id") == "t2").sort("stop_sequence")
    # first day: max(planned +32 min, arrived +31 + 2 min) = +33 min
    assert first["predicted_s"][0] == epoch0 + 33 * 60
    learned = pl.DataFrame({"trip_id": ["t2"], "layover_s": [300.0], "departure_offset_s": [60.0]})
    got = predict(positions, stop_times, trips, layovers=learned)
    nxt = got.filter(pl.col("trip_id") == "t2").sort("stop_sequence")
    # learned: max(+32 + 1 min, +31 + 5 min) = +36 min, then 30 min to A
    assert nxt["predicted_s"].to_list() == [epoch0 + 36 * 60, epoch0 + 66 * 60]
    # a negative offset (vehicles used to leave early) never predicts before the timetable
    early = learned.with_columns(
        pl.lit(0.0).alias("layover_s"), pl.lit(-300.0).alias("departure_offset_s")
    )
    got = predict(positions, stop_times, trips, layovers=early)
    assert got.filter(pl.col("trip_id") == "t2")["predicted_s"][0] == epoch0 + 32 * 60
    # still waiting at the terminal at +37 min: it leaves no sooner than now
    waiting = positions.with_columns(pl.lit(epoch0 + 37 * 60, pl.Float64).alias("waiting_s"))
    got = predict(waiting, stop_times, trips, layovers=learned)
    assert got.filter(pl.col("trip_id") == "t2")["predicted_s"][0] == epoch0 + 37 * 60
