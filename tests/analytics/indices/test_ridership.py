"""IPK, equivalent passengers, fare integrations (BG art. 7-V) and the technical tariff (CGS 15)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from analytics.indices.ridership import compute_ridership_indicators, match_integrations
from core.periods import parse_period
from core.profile import load_profile

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def _t(h: int, m: int) -> datetime:
    return datetime(2026, 3, 2, h, m, tzinfo=UTC)


TAPS = pl.DataFrame(
    {
        "card_hash": ["c1", "c1", "c1", "c2", "c3", None],
        "event_at": [_t(8, 0), _t(8, 40), _t(10, 0), _t(9, 0), _t(9, 30), _t(9, 5)],
        "route_id": ["A", "B", "B", "A", "B", "A"],
        "fare_class": ["full", "full", "student", "student", "integration", "exempt"],
        "operator_id": "O1",
        "lot_id": "L1",
    }
)
KM = pl.DataFrame(
    {"route_id": ["A", "B"], "operator_id": "O1", "lot_id": "L1", "km_run": [10.0, 5.0]}
)


def test_integration_within_60_minutes_on_another_line() -> None:
    out = match_integrations(TAPS, BG).sort("card_hash", "event_at", nulls_last=True)
    # c1: 8:00 A full; 8:40 B is an integration (40 min, other line) paying half;
    # 10:00 B is 80 min later: a new fare. c3 was recorded as an integration by the validator.
    assert out["is_integration"].to_list() == [False, True, False, False, True, False]
    assert out["weight"].to_list() == [1.0, 0.5, 0.5, 0.5, 0.5, 0.0]


def test_ipk_equivalent_and_tariff_by_hand() -> None:
    ind = compute_ridership_indicators(TAPS, KM, BG, parse_period("2026-03"), cost_per_km=6.0)
    v = {(r["scope_id"], r["indicator"]): r for r in ind.iter_rows(named=True)}
    # system: 6 taps on 15 km; equivalent 1 + 0.5 + 0.5 + 0.5 + 0.5 + 0 = 3.0
    assert v[("all", "ipk")]["value"] == pytest.approx(6 / 15)
    assert v[("all", "equivalent_passengers")]["value"] == pytest.approx(3.0)
    assert v[("all", "ipk_equivalent")]["value"] == pytest.approx(3.0 / 15)
    # tariff = cost per km ÷ IPKe = 6 ÷ 0.2 = R$ 30
    assert v[("all", "technical_tariff_brl")]["value"] == pytest.approx(30.0)
    # line B: taps 8:40 (0.5), 10:00 (0.5), c3 (0.5) on 5 km
    assert v[("B", "ipk_equivalent")]["value"] == pytest.approx(1.5 / 5)
    # the inferred integration took 0.5 equivalent passenger off (3.5 without it)
    assert v[("all", "integration_effect_equivalent")]["numerator"] == pytest.approx(0.5)
    assert v[("all", "fare_integrations")]["numerator"] == 2


def test_per_operator_costs_give_the_tariff_without_a_flat_cost() -> None:
    km = KM.with_columns((pl.col("km_run") * 8.0).alias("cost_km"))
    ind = compute_ridership_indicators(TAPS, km, BG, parse_period("2026-03"), cost_per_km=None)
    tariff = ind.filter(
        (pl.col("indicator") == "technical_tariff_brl") & (pl.col("scope") == "system")
    )
    assert tariff["value"][0] == pytest.approx(8.0 * 15 / 3.0)


def test_integration_hour_runs_from_the_first_boarding_on_another_vehicle() -> None:
    # BG art. 5 (integradas) and 7-V: more than one line, another vehicle, within 1 hour of
    # the first boarding. c1: A 8:00 paid, B 8:40 integration, C 9:10 is 70 min after 8:00
    # (30 min after 8:40): a new fare, and it starts a journey: D 9:50 integrates with it.
    # c2: A 8:00 on V1, then B 8:20 on the same vehicle V1 (a line change on board): no
    # integration; C 8:30 on V2 is one. c3: A 8:00, A 8:30 same line: a new fare.
    taps = pl.DataFrame(
        {
            "card_hash": ["c1"] * 4 + ["c2"] * 3 + ["c3"] * 2,
            "event_at": [
                *(_t(8, 0), _t(8, 40), _t(9, 10), _t(9, 50)),
                *(_t(8, 0), _t(8, 20), _t(8, 30)),
                *(_t(8, 0), _t(8, 30)),
            ],
            "route_id": ["A", "B", "C", "D", "A", "B", "C", "A", "A"],
            "vehicle_id": ["V1", "V2", "V3", "V4", "V1", "V1", "V2", "V1", "V5"],
            "fare_class": "full",
        }
    )
    out = match_integrations(taps, BG).sort("card_hash", "event_at")
    assert out["is_integration"].to_list() == [
        False, True, False, True,
        False, False, True,
        False, False,
    ]  # fmt: skip
    # the 60th minute is still inside the hour
    edge = taps.head(2).with_columns(pl.Series("event_at", [_t(8, 0), _t(9, 0)]))
    assert match_integrations(edge, BG)["is_integration"].to_list() == [False, True]
    # CGS grants no integration fare: none is inferred
    assert not match_integrations(taps, CGS)["is_integration"].any()


def _sequential_integrations(taps: pl.DataFrame, window_s: int) -> list[bool]:
    """The rule read tap by tap (the oracle): each card's taps in time order; a tap joins the
    journey when it is on another line, another vehicle (when both are known) and within the
    window of the journey's first boarding; otherwise it starts a journey."""
    out = [False] * taps.height
    rows = taps.with_row_index("i").filter(pl.col("card_hash").is_not_null())
    for _card, group in rows.sort("event_at").group_by("card_hash", maintain_order=True):
        prev: dict | None = None
        start = None
        for r in group.iter_rows(named=True):
            linked = (
                prev is not None
                and r["route_id"] is not None
                and prev["route_id"] is not None
                and r["route_id"] != prev["route_id"]
                and (
                    r["vehicle_id"] is None
                    or prev["vehicle_id"] is None
                    or r["vehicle_id"] != prev["vehicle_id"]
                )
            )
            if linked and start is not None and (r["event_at"] - start).total_seconds() <= window_s:
                out[r["i"]] = True
            else:
                start = r["event_at"]
            prev = r
    return out


def test_integration_chains_follow_the_rule_tap_by_tap_in_any_order() -> None:
    # random cards, lines and vehicles (some unknown) over two days, each card's taps at
    # distinct times, given in no order: the vectorised rounds give the sequential rule's answer
    rng = np.random.default_rng(7)
    n = 3000
    card = rng.integers(0, 60, n)
    route = rng.integers(0, 4, n)
    vehicle = rng.integers(0, 6, n)
    seconds = rng.choice(2 * 86400, size=n, replace=False)  # distinct: no ties to order
    taps = pl.DataFrame(
        {
            "card_hash": [None if c == 0 else f"card{c}" for c in card],
            "event_at": [
                datetime(2026, 3, 2, tzinfo=UTC) + timedelta(seconds=int(s)) for s in seconds
            ],
            "route_id": [None if r == 0 else f"R{r}" for r in route],
            "vehicle_id": [None if v == 0 else f"V{v}" for v in vehicle],
            "fare_class": "full",
        }
    )
    window = BG.fares.integration_window_s
    assert window is not None
    got = match_integrations(taps, BG)["is_integration"].to_list()
    assert got == _sequential_integrations(taps, window.value)
    assert 100 < sum(got) < n  # the draw does hold integrations and breaks


def test_a_long_stretch_of_line_changes_makes_a_journey_every_window() -> None:
    # one card alternating lines every 40 min for 12 hours, each tap within the hour of the one
    # before: journeys start at 0, 80, 160... min (the hour counts from the first boarding)
    minutes = list(range(0, 12 * 60, 40))
    taps = pl.DataFrame(
        {
            "card_hash": "c1",
            "event_at": [_t(6, 0) + timedelta(minutes=m) for m in minutes],
            "route_id": ["A" if i % 2 == 0 else "B" for i in range(len(minutes))],
            "vehicle_id": None,
            "fare_class": "full",
        }
    )
    got = match_integrations(taps, BG)["is_integration"].to_list()
    assert got == [i % 2 == 1 for i in range(len(minutes))]


def test_taps_of_one_card_at_one_instant_are_taken_in_transaction_order() -> None:
    # c1 taps A at 8:00 (T1), then two validators record it at 8:10: A (T3) and B (T2). In
    # transaction order T2 (B) continues the journey and T3 (A, after B) too, whatever order
    # the rows come in; taken as given, T3 (A after A) would have started a new journey.
    taps = pl.DataFrame(
        {
            "transaction_id": ["T1", "T3", "T2"],
            "card_hash": "c1",
            "event_at": [_t(8, 0), _t(8, 10), _t(8, 10)],
            "route_id": ["A", "A", "B"],
            "fare_class": "full",
        }
    )
    for frame in (taps, taps.reverse()):
        out = match_integrations(frame, BG).sort("transaction_id")
        assert out["is_integration"].to_list() == [False, True, True]
