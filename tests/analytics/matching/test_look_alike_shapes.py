"""Look-alike shapes (issue 16 item 5): a terminal-variant pair and a short-turn pattern.

Added to the hand-built network of `tests/analytics/synthetic.py` (its other lines are far
away, 3 km and more):
- line L3, one direction, two terminal variants sharing 4 000 m of corridor along y = -3 000:
  T1 turns north for its last 600 m, T2 goes on east 600 m;
- line L4, one direction: U1 runs 5 000 m along y = -6 000, its short-turn U2 the first 3 000 m.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
import pytest

from analytics.matching.day import DayResult, Schedule, match_day
from analytics.matching.options import MatchOptions
from core.profile import load_profile
from core.tables.observed import INCIDENTS
from tests.analytics import synthetic as sy

H = 3600
LOOK_ALIKE = {
    "T1": ([(0, -3000), (4000, -3000), (4000, -2400)], ("L3", 0)),
    "T2": ([(0, -3000), (4000, -3000), (4600, -3000)], ("L3", 0)),
    "U1": ([(0, -6000), (5000, -6000)], ("L4", 0)),
    "U2": ([(0, -6000), (3000, -6000)], ("L4", 0)),
}
TRIPS = [
    ("X1", "T2", "B5", 8 * H),  # east variant at 8:00; no north one before 9:00
    ("Y1", "T1", "B6", 9 * H),  # north variant at 9:00
    ("Z1", "U1", "B7", 8 * H),  # full trip at 8:00
    ("Z2", "U2", "B8", 8 * H + 1200),  # short-turn at 8:20
    ("Z3", "U1", "B9", 10 * H),  # full trip at 10:00; no short-turn then
    ("X2", "T2", "B10", 11 * H),  # east variant at 11:00; no north one then
]


@pytest.fixture(scope="module")
def network() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for sid, (points, route) in LOOK_ALIKE.items():
            mp.setitem(sy.GEOMETRY, sid, sy._line([(float(x), float(y)) for x, y in points]))
            mp.setitem(sy.SHAPE_ROUTE, sid, route)
        yield


def _run(pings: pl.DataFrame) -> DayResult:
    trips, st = sy.schedule(TRIPS)
    schedule = Schedule(sy.SERVICE_DATE, trips, st, sy.shapes(), sy.stops(), 31982)
    return match_day(
        pings, schedule, INCIDENTS.empty(), load_profile("bento-goncalves-2021"), MatchOptions()
    )


@pytest.fixture(scope="module")
def day(network: None) -> DayResult:
    pings = pl.concat(
        [
            sy.drive("W1", [("T2", 8 * H + 60, None, 0)], first_ping_id=1_000, t1=8 * H + 900),
            sy.drive("W2", [("T1", 9 * H + 60, None, 0)], first_ping_id=2_000, t1=9 * H + 900),
            sy.drive("W3", [("U1", 8 * H + 60, None, 0)], first_ping_id=3_000, t1=8 * H + 1000),
            sy.drive("W4", [("U2", 8 * H + 1260, None, 0)], first_ping_id=4_000, t1=8 * H + 2000),
            # runs only the short-turn's 3 000 m at 10:00, when only a full trip is planned
            sy.drive("W5", [("U2", 10 * H + 60, None, 0)], first_ping_id=5_000, t1=10 * H + 900),
            # runs the north variant at 11:00, when only the east one is planned
            sy.drive("W6", [("T1", 11 * H + 60, None, 0)], first_ping_id=6_000, t1=11 * H + 900),
        ]
    )
    return _run(pings)


def outcome(day: DayResult, trip: str) -> dict[str, object]:
    return day.trip_outcomes.filter(pl.col("trip_id") == trip).row(0, named=True)


def test_each_run_goes_to_the_variant_it_drove_when_both_are_planned(day: DayResult) -> None:
    performed = day.trips_performed.sort("vehicle_id")
    got = dict(zip(performed["vehicle_id"], performed["trip_id"], strict=True))
    assert got == {"W1": "X1", "W2": "Y1", "W3": "Z1", "W4": "Z2", "W5": "Z3", "W6": "X2"}
    for trip in ("X1", "Y1", "Z1", "Z2"):
        assert outcome(day, trip)["outcome"] == "on_time"
        assert outcome(day, trip)["coverage_ratio"] == pytest.approx(1.0, abs=0.01)


def test_short_turn_driven_when_only_the_full_trip_is_planned_is_that_trip_partial(
    day: DayResult,
) -> None:
    # W5 drove U2's 3 000 m at 10:00: the full trip Z3 (5 000 m) is partial, not suppressed
    z3 = outcome(day, "Z3")
    assert z3["outcome"] == "partial"
    assert z3["coverage_ratio"] == pytest.approx(0.6, abs=0.01)
    assert z3["vehicle_id"] == "W5"


def test_other_terminal_variant_driven_counts_for_the_planned_one(day: DayResult) -> None:
    # W6 drove T1 (north end) at 11:00 when only T2 (east end) is planned: the 4 000 m shared
    # of T2's 4 600 m (plus the fixes within reach of the fork) count for X2
    x2 = outcome(day, "X2")
    assert x2["vehicle_id"] == "W6"
    assert x2["coverage_ratio"] == pytest.approx(4000 / 4600, abs=0.03)
    assert x2["outcome"] != "suppressed"


def test_without_the_schedule_rule_the_planned_variant_is_suppressed(network: None) -> None:
    # the same day with every stretch taken as planned (the rule off): W5's short-turn wins
    # and Z3 is called suppressed, as the issue found
    pings = sy.drive("W5", [("U2", 10 * H + 60, None, 0)], first_ping_id=5_000, t1=10 * H + 900)
    trips, st = sy.schedule(TRIPS)
    schedule = Schedule(sy.SERVICE_DATE, trips, st, sy.shapes(), sy.stops(), 31982)
    off = MatchOptions(look_alike_min_ratio=1.01)
    day = match_day(pings, schedule, INCIDENTS.empty(), load_profile("bento-goncalves-2021"), off)
    assert outcome(day, "Z3")["outcome"] == "suppressed"
