"""Suggested infractions: facts to Anexo I items, evidence, URM and the repeat rule (art. 65)."""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl
import pytest

from analytics.indices.infractions import (
    STATUS,
    compute_suggested_infractions,
    match_fleet_facts,
    match_grade_facts,
    match_trip_facts,
    repeat_window_start,
)
from analytics.indices.scopes import attach_scopes, compute_line_scopes
from core.profile import load_profile
from tests.analytics.indices.test_icv import fixture_frames

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def fact(item: str, on: date, operator: str = "O1") -> dict[str, object]:
    return {
        "item": item,
        "operator_id": operator,
        "route_id": "T10",
        "vehicle_id": None,
        "occurred_on": on,
        "occurred_at": None,
        "fact": "f",
        "evidence": "e",
        "trip_ids": None,
        "ping_ids": None,
    }


def facts(*rows: dict[str, object]) -> pl.DataFrame:
    return pl.DataFrame(list(rows)).with_columns(
        pl.col("occurred_at").cast(pl.Datetime("us", "UTC")),
        *[pl.col(c).cast(pl.String) for c in ("vehicle_id", "trip_ids", "ping_ids")],
    )


def test_repeat_within_six_calendar_months_31_jan_to_31_jul() -> None:
    # BG art. 65 §2: "nos 06 meses imediatamente anteriores" -- calendar months, not 180 days
    # (31 Jan -> 31 Jul is 181 days and a repeat; 31 Jan -> 1 Aug is not)
    out = compute_suggested_infractions(
        facts(
            fact("VII", date(2026, 1, 31)),
            fact("VII", date(2026, 7, 31)),
            fact("XXXV", date(2026, 1, 31)),
            fact("XXXV", date(2026, 8, 1)),
        ),
        None,
        BG,
    ).sort("item", "occurred_on")
    vii = out.filter(pl.col("item") == "VII")
    # VII: 2 URM first, 3 URM on repeat (the table's value, not 2 × 2)
    assert vii["is_repeat"].to_list() == [False, True]
    assert vii["urm"].to_list() == [2.0, 3.0]
    xxxv = out.filter(pl.col("item") == "XXXV")
    assert xxxv["is_repeat"].to_list() == [False, False]
    assert xxxv["urm"].to_list() == [2.0, 2.0]
    assert set(out["status"]) == {STATUS}
    assert "BG art. 65 §2" in out["source"][0]


def test_repeat_window_clips_at_the_month_end() -> None:
    # 31 Aug looks back to 28 Feb 2026: 28 Feb is a repeat, 27 Feb is not
    out = compute_suggested_infractions(
        facts(
            fact("VII", date(2026, 2, 28)),
            fact("VII", date(2026, 8, 31)),
            fact("XXXV", date(2026, 2, 27)),
            fact("XXXV", date(2026, 8, 31)),
        ),
        None,
        BG,
    ).sort("item", "occurred_on")
    assert out["is_repeat"].to_list() == [False, True, False, False]
    assert repeat_window_start(date(2026, 8, 31), 6) == date(2026, 2, 28)
    assert repeat_window_start(date(2026, 7, 31), 6) == date(2026, 1, 31)


def test_repeat_without_a_table_value_doubles_the_fine() -> None:
    # LXXXVIII has 10 URM and no repeat value: doubled (art. 65 §1)
    out = compute_suggested_infractions(
        facts(fact("LXXXVIII", date(2026, 12, 31))),
        pl.DataFrame(
            {
                "operator_id": ["O1"],
                "group": ["I"],
                "item": ["LXXXVIII"],
                "occurred_on": [date(2026, 7, 10)],
            }
        ),
        BG,
    )
    assert out["is_repeat"][0] and out["urm"][0] == 20.0


def test_group_a_is_a_warning_first_and_a_fine_on_repeat() -> None:
    out = compute_suggested_infractions(
        facts(fact("I", date(2026, 3, 2)), fact("I", date(2026, 3, 3))), None, BG
    ).sort("occurred_on")
    assert out["urm"].to_list() == [0.0, 1.0]


def test_same_day_is_not_a_repeat_and_other_operators_do_not_count() -> None:
    d = date(2026, 3, 2)
    rows = [
        fact("VII", d),
        {**fact("VII", d), "route_id": "U41"},
        fact("VII", d + timedelta(1), "O2"),
    ]
    out = compute_suggested_infractions(facts(*rows), None, BG)
    assert not out["is_repeat"].any()


def test_profile_without_a_catalogue_suggests_nothing() -> None:
    out = compute_suggested_infractions(facts(fact("VII", date(2026, 3, 2))), None, CGS)
    assert out.height == 0


def test_trip_facts_from_the_fixture_carry_their_evidence() -> None:
    f = fixture_frames()
    scopes = compute_line_scopes(f["routes"], f["outcomes"], f["vehicles"])
    outcomes = attach_scopes(f["outcomes"], scopes).with_columns(
        # pings of each run, for the evidence
        (pl.col("run_index") * 100 + 1).cast(pl.Int64).alias("first_ping_id"),
        (pl.col("run_index") * 100 + 40).cast(pl.Int64).alias("last_ping_id"),
        # the GPS saw every run throughout its planned minutes
        (pl.col("distance_run_m") / pl.col("planned_distance_m")).alias("coverage_ratio"),
        pl.lit(1.0).alias("gps_minutes_share"),
    )
    # t08 turned back halfway (the GPS saw it throughout) and is XXI; the same half trip with
    # the fixes missing for half its minutes (a GPS gap), or with an incident attached (a
    # short-turn around an obstruction), is not; u03 broke down: counted as a breakdown already
    half = outcomes.filter(pl.col("trip_id") == "t08")
    outcomes = pl.concat(
        [
            outcomes,
            half.with_columns(
                pl.lit("t08-gap").alias("trip_id"), pl.lit(0.5).alias("gps_minutes_share")
            ),
            half.with_columns(
                pl.lit("t08-inc").alias("trip_id"), pl.lit("I7").alias("incident_id")
            ),
        ]
    )
    runs = pl.DataFrame(
        {
            "service_date": [date(2026, 3, 2)],
            "vehicle_id": ["V11"],
            "run_index": [0],
            "first_ping_id": [1],
            "last_ping_id": [40],
            "n_off_route": [1],
        },
        schema_overrides={
            "run_index": pl.Int32,
            "first_ping_id": pl.Int64,
            "last_ping_id": pl.Int64,
        },
    )
    got = match_trip_facts(outcomes, runs, BG)
    by_item = {r["item"]: r for r in got.filter(pl.col("route_id") == "T10").iter_rows(named=True)}
    # VII: t03 late (t09 is late but justified); XVIII: t04 early; XXI: t08 partial only
    assert by_item["VII"]["trip_ids"] == "t03"
    assert "t03 08:00 (+10 min, veículo V11, pings 201-240)" in by_item["VII"]["evidence"]
    assert by_item["XVIII"]["trip_ids"] == "t04"
    xxi = got.filter(pl.col("item") == "XXI").sort("route_id")
    assert xxi["trip_ids"].to_list() == ["t08"]
    # XXIV: V11's run 0 (t01) left the itinerary, no incident covers it
    assert by_item["XXIV"]["trip_ids"] == "t01" and by_item["XXIV"]["ping_ids"] == "1-40"
    assert "LXIV" not in set(got["item"])  # every line ran something


def test_a_line_that_ran_nothing_is_lxiv() -> None:
    f = fixture_frames()
    scopes = compute_line_scopes(f["routes"], f["outcomes"], f["vehicles"])
    outcomes = attach_scopes(f["outcomes"], scopes).with_columns(
        pl.when(pl.col("route_id") == "D50")
        .then(pl.lit("suppressed"))
        .otherwise(pl.col("outcome"))
        .alias("outcome")
    )
    got = match_trip_facts(outcomes, None, BG).filter(pl.col("item") == "LXIV")
    assert got["route_id"].to_list() == ["D50"] and got["trip_ids"][0] == "d01,d02"


def test_a_month_whose_only_fact_is_lxiv_keeps_its_dates() -> None:
    # no late, early or broken trip: the empty trip-fact parts must not turn dates into text
    f = fixture_frames()
    scopes = compute_line_scopes(f["routes"], f["outcomes"], f["vehicles"])
    outcomes = attach_scopes(f["outcomes"], scopes).with_columns(
        pl.when(pl.col("route_id") == "D50")
        .then(pl.lit("suppressed"))
        .otherwise(pl.lit("on_time"))
        .alias("outcome")
    )
    got = match_trip_facts(outcomes, None, BG)
    assert got["item"].to_list() == ["LXIV"]
    assert got.schema["occurred_on"] == pl.Date
    rows = compute_suggested_infractions(got, None, BG)
    assert rows["occurred_on"].to_list() == got["occurred_on"].to_list()


def test_fleet_and_grade_facts() -> None:
    fleet_days = pl.DataFrame(
        {
            "service_date": [date(2026, 3, 2), date(2026, 3, 3)],
            "operator_id": ["O2", "O2"],
            "route_id": ["*", "*"],
            "n_vehicles_required": [10, 10],
            "n_vehicles_operated": [10, 8],
            "cut_ratio": [0.0, 0.2],
            "is_cut_over_limit": [False, True],
            "n_cut_days_consecutive": [0, 1],
            "is_grave_cut": [False, False],
            "n_vehicles_registered": [10, 9],
            "n_reserve": [0, -1],
            "n_reserve_min": [1, 1],
            "is_reserve_ok": [False, False],
        }
    )
    got = match_fleet_facts(fleet_days)
    assert sorted(got["item"].to_list()) == ["LXIX", "XXXV", "XXXV"]
    # LXIX follows the register (9 kept for 10 needed on 3 March), not the day's 20 % cut: the
    # cut on 2 March's full register raises none
    lxix = got.filter(pl.col("item") == "LXIX").row(0, named=True)
    assert lxix["occurred_on"] == date(2026, 3, 3)
    assert (
        lxix["fact"]
        == "frota cadastrada ativa de 9 veículo(s), abaixo dos 10 que a programação exige"
    )
    only_cut = match_fleet_facts(fleet_days.with_columns(pl.lit(10).alias("n_vehicles_registered")))
    assert "LXIX" not in set(only_cut["item"])
    grades = pl.DataFrame(
        {
            "scope": ["operator"] * 3,
            "scope_id": ["O1", "O2", "O3"],
            "year": [2026] * 3,
            "grade": ["E", "E", "D"],
            "annual_score": [50.0, 40.0, 65.0],
            "icv_score": [50.0, 40.0, 65.0],
            "iqs_score": [None, None, None],
            "km_efficiency": [0.95, 0.95, 0.8],
            "is_quality_goal_met": [False, False, False],
            "is_history": [False] * 3,
            "is_cassacao_watch": [False, True, False],
            "n_goal_missed_total": [1, 5, 2],
            "n_e_consecutive": [1, 3, 0],
        }
    )
    items = match_grade_facts(grades, BG).sort("operator_id")["item"].to_list()
    assert items == ["LXI", "LXXXVIII", "LXXXV"]
    out = compute_suggested_infractions(match_grade_facts(grades, BG), None, BG)
    assert out.sort("operator_id")["urm"].to_list() == pytest.approx([5.0, 10.0, 6.0])
