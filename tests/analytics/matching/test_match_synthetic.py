"""Matching on the hand-built network of `synthetic.py`: every case checked against the
instants and outcomes the traces were driven with."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import polars as pl
import pytest

from analytics.matching.assign import match_runs_to_trips
from analytics.matching.day import DayResult, Schedule, match_day
from analytics.matching.options import MatchOptions
from analytics.matching.runs import _drop_dominated
from core.profile import load_profile
from core.tables.observed import INCIDENTS
from tests.analytics import synthetic as sy

H = 3600
TRIPS = [
    ("A1", "S1", "B1", 8 * H),
    ("B1", "S2", "B1", 8 * H + 1800),
    ("A2", "S1", "B1", 9 * H),
    ("C1", "S3", "B2", 8 * H),
    ("A3", "S1", "B3", 10 * H),
    ("B3", "S2", "B3", 10 * H + 1800),
]


def _run(pings: pl.DataFrame, incidents: pl.DataFrame | None = None) -> DayResult:
    trips, st = sy.schedule(TRIPS)
    schedule = Schedule(sy.SERVICE_DATE, trips, st, sy.shapes(), sy.stops(), 31982)
    return match_day(
        pings,
        schedule,
        INCIDENTS.empty() if incidents is None else incidents,
        load_profile("bento-goncalves-2021"),
        MatchOptions(),
    )


@pytest.fixture(scope="module")
def day() -> DayResult:
    pings = pl.concat(
        [
            # V1: on time, then 7 min late, then short-turns at 2 500 m (a stop) and stands
            sy.drive(
                "V1",
                [
                    ("S1", 8 * H + 60, None, 0),
                    ("S2", 8 * H + 1800 + 420, None, 0),
                    ("S1", 9 * H - 90, 2500, 0),
                ],
            ),
            # V2: L2 shares L1's corridor from 2 000 m; departs 400 s late
            sy.drive("V2", [("S3", 8 * H + 400, None, 0)], first_ping_id=10_000),
            # V3 and V4 both run A3 (one counts); nobody runs B3
            sy.drive("V3", [("S1", 10 * H + 30, None, 0)], first_ping_id=20_000, seed=3),
            sy.drive("V4", [("S1", 10 * H + 150, None, 0)], first_ping_id=30_000, seed=4),
        ]
    )
    return _run(pings)


def outcome(day: DayResult, trip: str) -> dict[str, Any]:
    return day.trip_outcomes.filter(pl.col("trip_id") == trip).row(0, named=True)


def test_one_outcome_per_scheduled_trip(day: DayResult) -> None:
    assert sorted(day.trip_outcomes["trip_id"]) == sorted(t[0] for t in TRIPS)


def test_outcomes_match_the_driven_traces(day: DayResult) -> None:
    got = dict(zip(day.trip_outcomes["trip_id"], day.trip_outcomes["outcome"], strict=True))
    assert got == {
        "A1": "on_time",
        "B1": "late",
        "A2": "partial",
        "C1": "late",
        "A3": "on_time",
        "B3": "suppressed",
    }


def test_departure_delays_within_seconds(day: DayResult) -> None:
    assert outcome(day, "A1")["departure_delay_s"] == pytest.approx(60, abs=5)
    assert outcome(day, "B1")["departure_delay_s"] == pytest.approx(420, abs=5)
    assert outcome(day, "C1")["departure_delay_s"] == pytest.approx(400, abs=5)
    assert outcome(day, "A2")["departure_delay_s"] == pytest.approx(-90, abs=10)


def test_partial_trip_covers_half(day: DayResult) -> None:
    a2 = outcome(day, "A2")
    assert a2["coverage_ratio"] == pytest.approx(0.5, abs=0.02)
    assert "50%" in a2["reason"]


def test_two_vehicles_on_one_trip_only_one_counts(day: DayResult) -> None:
    a3 = day.trips_performed.filter(pl.col("started_at") >= sy.true_departure(10 * H - 60))
    assert a3.height == 2
    assert a3.filter(pl.col("trip_id") == "A3")["vehicle_id"].to_list() == ["V3"]
    extra = a3.filter(pl.col("trip_id").is_null())
    assert extra["vehicle_id"].to_list() == ["V4"]
    assert extra["is_counted"].to_list() == [False]


def test_shared_corridor_does_not_steal_the_trip(day: DayResult) -> None:
    v2 = day.trips_performed.filter(pl.col("vehicle_id") == "V2")
    assert v2["shape_id"].to_list() == ["S3"]


def test_traceable_to_pings(day: DayResult) -> None:
    a1 = outcome(day, "A1")
    run = day.trips_performed.filter(
        (pl.col("vehicle_id") == "V1") & (pl.col("run_index") == a1["run_index"])
    )
    assert run["first_ping_id"][0] == a1["first_ping_id"]
    # V1's pings start 300 s before its first departure, every 30 s: ping 11 stands at the terminal
    assert a1["first_ping_id"] == 11


def test_stop_visits_delays(day: DayResult) -> None:
    b1 = day.stop_visits.filter(pl.col("trip_id") == "B1").sort("stop_sequence")
    assert b1.height == 11
    # driven with the same speed and dwell as planned: every stop is 420 s late, within 15 s
    delays = b1["departure_delay_s"].drop_nulls()
    assert delays.is_between(405, 435).all()
    assert b1["is_interpolated"].sum() <= 2


def test_rerun_is_identical(day: DayResult) -> None:
    pings = sy.drive("V1", [("S1", 8 * H + 60, None, 0)])
    first = _run(pings).trip_outcomes
    assert first.equals(_run(pings).trip_outcomes)


def test_breakdown_inferred_and_justified_delay() -> None:
    # V5 stops between stops (at 2 750 m) on A3 and stands for 40 min: a breakdown
    pings = sy.drive("V5", [("S1", 10 * H + 30, 2750, 0)], first_ping_id=50_000, t1=10 * H + 3600)
    # V6 departs B3 12 min late under an approved obstruction of line L1
    pings = pl.concat(
        [pings, sy.drive("V6", [("S2", 10 * H + 1800 + 720, None, 0)], first_ping_id=60_000)]
    )
    incidents = INCIDENTS.conform(
        pl.DataFrame(
            {
                "incident_id": ["INC-7"],
                "starts_at": [sy.REF + timedelta(seconds=10 * H + 1500)],
                "ends_at": [sy.REF + timedelta(seconds=10 * H + 2400)],
                "route_id": ["L1"],
                "kind": ["obstruction"],
                "is_justified": [True],
                "source": ["test"],
                "ingested_at": [sy.REF],
            }
        )
    )
    day = _run(pings, incidents)
    a3 = outcome(day, "A3")
    assert a3["outcome"] == "broken_down"
    bd = day.breakdowns.row(0, named=True)
    assert (bd["vehicle_id"], bd["source"], bd["trip_id"]) == ("V5", "inferred", "A3")
    b3 = outcome(day, "B3")
    assert (b3["outcome"], b3["is_justified"], b3["incident_id"]) == ("late", True, "INC-7")


def test_departure_after_a_silence_back_extrapolated_at_the_stretch_speed() -> None:
    # V7 departs A1 60 s late with pings every 60 s; its unit is silent from the minute before
    # departure to 4 min after, and the fix after the first one back lags 250 m along the
    # street (GPS error along the track, no spike): one slow step must not date the departure
    dep = 8 * H + 60
    pings = sy.drive("V7", [("S1", dep, None, 0)], interval_s=60.0, first_ping_id=70_000)
    t = (pl.col("event_at") - sy.REF).dt.total_seconds()
    pings = pings.filter(~t.is_between(dep - 59, dep + 239)).with_columns(
        pl.when(t == dep + 300).then(pl.col("x_m") - 250).otherwise(pl.col("x_m")).alias("x_m")
    )
    a1 = outcome(_run(pings), "A1")
    # the next step alone (170 m in 60 s) put the departure at the last fix at the terminal,
    # 60 s early; the stretch's mean speed (stops included) carries it back to within seconds
    assert a1["departure_delay_s"] == pytest.approx(60, abs=15)
    assert a1["outcome"] == "on_time"


def test_other_direction_of_the_line_is_not_an_alternative_itinerary() -> None:
    # runs.py may list S2 (L1 back) as an alternative of a run on S1 (L1 out) when the two
    # directions share the fixes around a turnaround; a run on S1 25 min late for A1 and 5 min
    # early for B1 (S2) is A1, late: it never ran the other way
    trips, _ = sy.schedule(TRIPS)
    base = sy.REF.timestamp()
    runs = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V9"],
            "run_id": [0, 0],
            "shape_idx": [0, 1],
            "shape_id": ["S1", "S2"],
            "route_id": ["L1", "L1"],
            "direction_id": [0, 1],
            "alt_shapes": [[1], []],
            "started_s": [base + 8 * H + 1500, base + 13 * H],
            "ended_s": [base + 8 * H + 2400, base + 13 * H + 900],
            "start_dist_m": [0.0, 0.0],
            "end_dist_m": [5000.0, 5000.0],
            "origin_dist_m": [0.0, 0.0],
            "destination_dist_m": [5000.0, 5000.0],
            "reported_trip_id": [None, None],
            "coverage_ratio": [1.0, 1.0],
        },
        schema_overrides={"alt_shapes": pl.List(pl.Int32), "reported_trip_id": pl.String},
    )
    got = match_runs_to_trips(runs, trips, MatchOptions()).filter(pl.col("vehicle_id") == "V1")
    assert got["trip_id"].to_list() == ["A1"]
    assert got["departure_delay_s"].to_list() == [1500]


def test_trip_inside_a_gps_outage_inferred_from_block_continuity() -> None:
    # V8 runs its block B1: A1, B1 and A2, each 60 s late; its unit is silent for 29 min
    # while it runs B1 (planned 8:30, 805 s), between A1 and A2 that it ran in full view
    legs = [("S1", 8 * H + 60, None, 0), ("S2", 8 * H + 1860, None, 0), ("S1", 9 * H + 60, None, 0)]
    pings = sy.drive("V8", legs, first_ping_id=80_000)
    t = (pl.col("event_at") - sy.REF).dt.total_seconds()
    b1 = outcome(_run(pings.filter(~t.is_between(8 * H + 1000, 8 * H + 2700))), "B1")
    assert (b1["outcome"], b1["vehicle_id"]) == ("on_time", "V8")
    # bounds: A1's arrival (~8:14:25) to A2's departure less B1's planned time (~8:47:35);
    # the midpoint is about 8:31, some 60 s late like the rest of the block
    assert b1["departure_delay_s"] == pytest.approx(60, abs=45)
    assert b1["reason"].startswith("viagem inferida: o veículo V8 fez as viagens A1 e A2")
    assert "29 min sem sinal de GPS" in b1["reason"]
    # the same block with the unit pinging while the bus stands at the terminal instead of
    # running B1: no silence, so B1 was not run (suppressed), whatever the block says
    stand = sy.drive("V8", [legs[0], legs[2]], first_ping_id=80_000)
    assert outcome(_run(stand), "B1")["outcome"] == "suppressed"


def test_turnaround_outside_the_geofence_keeps_both_directions() -> None:
    # V10 runs A1 (S1) 900 s late, lays over 150 m short of the shape's end for 4 min and runs
    # B1 back (S2) 120 s late; no fix falls inside the terminal's geofence. The layover fixes
    # lie on both shapes, so the run out and the run back both hold them: consecutive runs at
    # a turnaround, neither dominates the other (before, the one back lost as concurrent)
    legs: list[tuple[str, float, float | None, float]] = [
        ("S1", 8 * H + 900, 4850.0, 0),
        ("S2", 8 * H + 1800 + 120, None, 0),
    ]
    pings = sy.drive("V10", legs, first_ping_id=100_000).filter(pl.col("x_m") < 4900)
    day = _run(pings)
    runs = day.trips_performed.filter(pl.col("trip_id").is_not_null()).sort("started_at")
    assert runs["trip_id"].to_list() == ["A1", "B1"]
    # they share the layover fixes (four minutes at 30 s)
    assert runs["first_ping_id"][1] < runs["last_ping_id"][0] - 5
    a1, b1 = outcome(day, "A1"), outcome(day, "B1")
    assert (a1["outcome"], b1["outcome"]) == ("late", "on_time")
    assert a1["departure_delay_s"] == pytest.approx(900, abs=5)
    assert b1["departure_delay_s"] == pytest.approx(120, abs=15)


def test_turnaround_needs_the_runs_to_meet_at_that_terminal() -> None:
    # L1's two directions as stretches of one vehicle, pings as (s, m along the shape): S1 out
    # stops 150 m short of its end, S2 back starts there; they share the 200 s of layover
    # fixes, neither progressing meanwhile: consecutive, both kept
    shapes = pl.DataFrame(
        {"start_x_m": [0.0, 5000.0], "start_y_m": 0.0, "end_x_m": [5000.0, 0.0], "end_y_m": 0.0}
    )

    def stretches(*runs: tuple[int, list[tuple[int, int]]]) -> tuple[pl.DataFrame, pl.DataFrame]:
        mid = pl.DataFrame(
            [(k, shape, t, float(d)) for k, (shape, pings) in enumerate(runs) for t, d in pings],
            schema=["_seg", "shape_idx", "t_s", "dist_m"],
            orient="row",
        ).with_columns(pl.col("_seg", "shape_idx").cast(pl.Int32), pl.col("t_s").cast(pl.Float64))
        stats = mid.group_by("_seg", "shape_idx", maintain_order=True).agg(
            pl.lit("V").alias("vehicle_id"),
            pl.lit(0, pl.Int64).alias("_v"),
            pl.col("t_s").first().alias("first_s"),
            pl.col("t_s").last().alias("last_s"),
            pl.col("dist_m").first().alias("first_dist_m"),
            pl.col("dist_m").max().alias("max_dist_m"),
            (pl.col("dist_m").max() - pl.col("dist_m").first()).alias("distance_run_m"),
            pl.lit(0.0).alias("origin_dist_m"),
            pl.lit(5000.0).alias("destination_dist_m"),
        )
        return stats, mid

    out = [(0, 200), (200, 1800), (400, 3400), (600, 4790), (700, 4850), (800, 4845), (900, 4850)]
    back = [(700, 150), (800, 155), (900, 150), (1000, 600), (1200, 2200), (1400, 3800)]
    kept = _drop_dominated(*stretches((0, out), (1, back)), shapes, MatchOptions())
    assert kept["shape_idx"].to_list() == [0, 1]
    # the same geometry met at the other terminal: a fragment of S2 near its start (x = 4 800
    # to 4 300) then one of S1 near its end, sharing 200 s of fixes. S2 ends where S1 starts,
    # but the runs do not meet there: concurrent, the one that went further wins
    s2 = [(0, 200), (300, 400), (600, 650), (700, 700), (800, 690), (900, 700)]
    s1 = [(700, 4200), (800, 4210), (900, 4200), (1000, 4500), (1200, 4800)]
    kept = _drop_dominated(*stretches((1, s2), (0, s1)), shapes, MatchOptions())
    assert kept["shape_idx"].to_list() == [0]
