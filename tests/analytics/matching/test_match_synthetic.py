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
from analytics.matching.trip_context import DayEvidence
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


def _run(
    pings: pl.DataFrame,
    incidents: pl.DataFrame | None = None,
    evidence: DayEvidence | None = None,
) -> DayResult:
    trips, st = sy.schedule(TRIPS)
    schedule = Schedule(sy.SERVICE_DATE, trips, st, sy.shapes(), sy.stops(), 31982)
    return match_day(
        pings,
        schedule,
        INCIDENTS.empty() if incidents is None else incidents,
        load_profile("bento-goncalves-2021"),
        MatchOptions(),
        evidence=evidence,
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
            "run_index": [0, 0],
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


# V8 runs its block B1: A1, B1 and A2, each 60 s late; its unit is silent for 29 min while it
# runs B1 (planned 8:30, 805 s), between A1 and A2 that it ran in full view
B1_LEGS = [("S1", 8 * H + 60, None, 0), ("S2", 8 * H + 1860, None, 0), ("S1", 9 * H + 60, None, 0)]


def _silent_b1() -> pl.DataFrame:
    pings = sy.drive("V8", B1_LEGS, first_ping_id=80_000)
    t = (pl.col("event_at") - sy.REF).dt.total_seconds()
    return pings.filter(~t.is_between(8 * H + 1000, 8 * H + 2700))


def _feed_up() -> pl.DataFrame:
    # V9 keeps the feed up: it runs C1 (L2, 8:00) and stands pinging at its end for 3 h
    run = sy.drive("V9", [("S3", 8 * H, None, 0)], first_ping_id=90_000)
    last = run.sort("event_at").tail(1)
    stand = pl.concat(
        [
            last.with_columns(
                pl.col("event_at") + timedelta(seconds=30 * k),
                pl.col("ping_id") + k,
            )
            for k in range(1, 360)
        ]
    )
    return pl.concat([run, stand])


def _taps(vehicle: str, route: str, seconds: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "event_at": [sy.REF + timedelta(seconds=s) for s in seconds],
            "vehicle_id": [vehicle] * len(seconds),
            "route_id": [route] * len(seconds),
        },
        schema={
            "event_at": pl.Datetime("us", "UTC"),
            "vehicle_id": pl.String,
            "route_id": pl.String,
        },
    )


def test_trip_in_a_whole_feed_outage_is_not_evaluated() -> None:
    # V8 is the only unit of the day: its 29 min silence is the whole feed down over B1
    day = _run(_silent_b1())
    b1 = outcome(day, "B1")
    assert (b1["outcome"], b1["evidence_class"]) == ("not_evaluated", "none")
    assert b1["vehicle_id"] is None and b1["departure_delay_s"] is None
    assert b1["reason"].startswith("não avaliada — sem dados: o GPS da operadora ? esteve fora")
    assert b1["feed_up_share"] == 0.0
    # the outage is a fact of its own: one silence of about 29 min, B1 inside it
    b1_start = sy.REF + timedelta(seconds=8 * H + 1800)
    out = day.feed_outages.filter(
        (pl.col("started_at") <= b1_start) & (pl.col("ended_at") >= b1_start)
    )
    assert out.height == 1
    assert out["duration_s"][0] == pytest.approx(1700, abs=60)
    assert out["n_trips_not_evaluated"][0] == 1
    # A1 and A2 were seen whole: GPS evidence on nearly all their planned minutes
    a1 = outcome(day, "A1")
    assert (a1["outcome"], a1["evidence_class"]) == ("on_time", "gps")
    assert a1["gps_minutes_share"] > 0.9


def test_silent_trip_without_evidence_is_suppressed_when_the_feed_is_up() -> None:
    # the same silence while another unit pings: nothing shows B1 ran, the data were there
    b1 = outcome(_run(pl.concat([_silent_b1(), _feed_up()])), "B1")
    assert (b1["outcome"], b1["evidence_class"]) == ("suppressed", "none")
    assert "nenhuma validação ou fiscalização" in b1["reason"]
    assert b1["gps_minutes_share"] == 0.0


def test_silent_trip_with_taps_is_run_by_ticketing_and_dated_by_its_block() -> None:
    # passengers tapped on V8, line L1, while its unit was silent (8:33 to 8:40)
    taps = _taps("V8", "L1", [8 * H + 1980, 8 * H + 2100, 8 * H + 2400])
    # and one tap inside A1's run, which is A1's, not evidence of B1
    day = _run(
        pl.concat([_silent_b1(), _feed_up()]),
        evidence=DayEvidence(taps=taps),
    )
    b1 = outcome(day, "B1")
    assert (b1["outcome"], b1["evidence_class"], b1["vehicle_id"]) == (
        "on_time",
        "ticketing",
        "V8",
    )
    # block continuity bounds its departure between A1's arrival (~8:14:25) and A2's
    # departure less B1's planned time (~8:47:35): 33 min wide, more than twice the profile's
    # evidence.unobserved_departure_max_uncertainty_s (300 s), so it is not dated: counted on
    # time, never late or early on a guess
    assert b1["departure_delay_s"] is None and b1["actual_start_at"] is None
    assert b1["reason"].startswith("3 validações no veículo V8")
    assert "horário de partida não observado; contada no horário, veículo V8" in b1["reason"]
    # one tap is not enough (profile: evidence.ticketing_min_taps = 2)
    one = _run(
        pl.concat([_silent_b1(), _feed_up()]),
        evidence=DayEvidence(taps=_taps("V8", "L1", [8 * H + 2100])),
    )
    assert outcome(one, "B1")["outcome"] == "suppressed"
    # taps inside a GPS run belong to it: A1's passengers do not make B1 run
    inside = _run(
        pl.concat([_silent_b1(), _feed_up()]),
        evidence=DayEvidence(taps=_taps("V8", "L1", [8 * H + 300, 8 * H + 400, 8 * H + 500])),
    )
    assert outcome(inside, "B1")["outcome"] == "suppressed"


def test_silent_trip_seen_by_an_inspector_is_run_by_inspection() -> None:
    stop = sy.schedule(TRIPS)[1].filter(pl.col("trip_id") == "B1")["stop_id"][3]
    seen = DayEvidence().inspections.vstack(
        pl.DataFrame(
            {
                "inspection_id": ["F-17"],
                "observed_at": [sy.REF + timedelta(seconds=8 * H + 2200)],
                "vehicle_id": ["V8"],
                "route_id": ["L1"],
                "stop_id": [stop],
                "is_vehicle_seen": [True],
                "inspector": ["fiscal 204"],
            },
            schema=DayEvidence().inspections.schema,
        )
    )
    b1 = outcome(
        _run(pl.concat([_silent_b1(), _feed_up()]), evidence=DayEvidence(inspections=seen)), "B1"
    )
    assert (b1["outcome"], b1["evidence_class"], b1["vehicle_id"]) == (
        "on_time",
        "inspection",
        "V8",
    )
    assert b1["reason"].startswith("fiscalização em campo F-17 (fiscal 204) viu o veículo V8")


def test_block_without_gps_is_not_evaluated_while_a_registered_vehicle_is_dark() -> None:
    # V8 runs block B1 and V9 keeps the feed up; nobody's GPS runs block B3 (A3, B3 at 10:00)
    pings = pl.concat([sy.drive("V8", B1_LEGS, first_ping_id=80_000), _feed_up()])
    register = pl.DataFrame(
        {
            "vehicle_id": ["V8", "V9", "V7", "V6"],
            "operator_id": ["O1", "O1", "O1", "O1"],
            "is_reserve": [False, False, False, True],
        }
    )
    routes = pl.DataFrame({"route_id": ["L1", "L2"], "agency_id": ["O1", "O1"]})
    day = _run(pings, evidence=DayEvidence(vehicles=register, routes=routes))
    a3 = outcome(day, "A3")
    # V7 is registered, not reserve, and sent nothing all day: it may have run B3 unseen
    assert (a3["outcome"], a3["evidence_class"]) == ("not_evaluated", "none")
    assert (
        "nenhum veículo com GPS acompanhado no bloco B3 nesse horário e 1 veículo(s) da operadora O1"
        in a3["reason"]
    )
    assert outcome(day, "B3")["outcome"] == "not_evaluated"
    cov = day.avl_coverage.sort("vehicle_id")
    assert cov["vehicle_id"].to_list() == ["V6", "V7", "V8", "V9"]
    assert cov["is_reporting"].to_list() == [False, False, True, True]
    assert cov["n_trips_run"].to_list() == [0, 0, 3, 1]
    # a dark reserve vehicle alone proves nothing: B3 suppressed
    no_v7 = register.filter(pl.col("vehicle_id") != "V7")
    day = _run(pings, evidence=DayEvidence(vehicles=no_v7, routes=routes))
    assert outcome(day, "A3")["outcome"] == "suppressed"


def test_day_without_pings_has_every_trip_not_evaluated_none_suppressed() -> None:
    day = _run(sy.drive("V8", B1_LEGS, first_ping_id=80_000).clear())
    assert day.trip_outcomes.height == len(TRIPS)
    assert set(day.trip_outcomes["outcome"]) == {"not_evaluated"}
    assert day.feed_outages.height == 1


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
