"""Verdicts per profile with their legal basis (BG art. 32, 38, 72; CGS art. 2, 36)."""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl
import pytest

from analytics.indices.grades import compute_annual_grades, score_formula
from analytics.indices.verdicts import (
    STATUSES,
    Inputs,
    build_verdict_criteria,
    compute_verdict_outcomes,
    describe_e_years,
    describe_profile_verdicts,
)
from core.profile import load_profile

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def grades(rows: list[tuple[int, float, float | None]], profile=BG, scope="operator"):
    frame = pl.DataFrame(
        [(scope, "O1", y, icv, None, km) for y, icv, km in rows],
        schema={
            "scope": pl.String,
            "scope_id": pl.String,
            "year": pl.Int32,
            "icv_score": pl.Float64,
            "iqs_score": pl.Float64,
            "km_efficiency": pl.Float64,
        },
        orient="row",
    )
    return compute_annual_grades(frame, None, profile)


def by_rule(criteria: pl.DataFrame, verdict: str) -> dict[str, dict[str, object]]:
    rows = criteria.filter(pl.col("verdict") == verdict).iter_rows(named=True)
    return {r["rule"]: r for r in rows}


def test_e_gap_e_e_raises_the_alert_and_names_the_gap() -> None:
    # 2023 E, 2024 no grade, 2025 E, 2026 E: three graded E years in a row (BG art. 72-VII)
    g = grades([(2023, 10.0, None), (2025, 10.0, None), (2026, 10.0, None)])
    assert describe_e_years(g["year"].to_list(), g["grade"].to_list()) == (3, 3, [2024])
    criteria = build_verdict_criteria(Inputs(BG, "operator", "O1", 2026, grades=g))
    ground = by_rule(criteria, "termination")["grade_e_years"]
    assert ground["status"] == "met"
    assert ground["value"] == "3 seguidos, 3 no total"
    assert "2024 sem conceito" in str(ground["note"])
    assert ground["article"] == "BG art. 72-VII; Anexo I LXXXVIII"
    outcomes = compute_verdict_outcomes(criteria)
    assert dict(zip(outcomes["verdict"], outcomes["outcome"], strict=True)) == {
        "renewal": "não apta",
        "termination": "alerta",
    }
    # before the third E year there is no alert
    earlier = build_verdict_criteria(Inputs(BG, "operator", "O1", 2025, grades=g))
    assert by_rule(earlier, "termination")["grade_e_years"]["status"] == "not_met"


def test_grade_a_with_85_percent_km_is_not_unfit_for_km_alone_under_bg() -> None:
    g = grades([(2026, 95.0, 0.85)])
    criteria = build_verdict_criteria(Inputs(BG, "operator", "O1", 2026, grades=g))
    renewal = by_rule(criteria, "renewal")
    assert renewal["km_efficiency"]["status"] == "not_met"
    assert renewal["km_efficiency"]["decides"] is False  # not BG law: shown, decides nothing
    assert renewal["km_efficiency"]["is_law"] is False
    assert renewal["quality_goals"]["status"] == "met"
    assert renewal["recorded_by_city"]["status"] == "not_computed"  # art. 32-II fiscal
    outcome = compute_verdict_outcomes(criteria).filter(pl.col("verdict") == "renewal")
    # fiscal qualification is recorded by the city: open, never "não apta" for km
    assert outcome["outcome"][0] == "em aberto"


def test_bg_termination_grounds_and_their_status() -> None:
    g = grades([(2026, 95.0, None)])
    start = date(2026, 3, 5)  # Thu
    days = pl.DataFrame(
        {
            "service_date": [start + timedelta(days=i) for i in range(5)] * 2,
            "operator_id": ["O1"] * 10,
            "route_id": ["L1"] * 5 + ["*"] * 5,
            "n_vehicles_required": [10] * 10,
            "n_vehicles_operated": [8, 8, 8, 8, 10, 8, 8, 8, 8, 0],
            "is_grave_cut": [False, False, False, True, False] * 2,
        }
    )
    criteria = build_verdict_criteria(Inputs(BG, "operator", "O1", 2026, grades=g, fleet_days=days))
    t = by_rule(criteria, "termination")
    assert t["grave_fleet_cut"]["status"] == "met"
    assert t["grave_fleet_cut"]["note"] == "linhas: L1"
    assert t["paralisacao"]["status"] == "met" and t["paralisacao"]["value"] == "1 dia(s)"
    assert t["suspensions"]["status"] == "not_evaluable"  # until sanctions are recorded
    assert t["grade_e_years"]["status"] == "not_met"
    assert set(criteria["status"]) <= set(STATUSES)


def test_lot_and_system_scopes_have_no_cassacao_grounds() -> None:
    g = grades([(y, 10.0, None) for y in (2024, 2025, 2026)], scope="lot")
    criteria = build_verdict_criteria(Inputs(BG, "lot", "O1", 2026, grades=g))
    assert set(criteria["verdict"]) == {"renewal"}


def test_cgs_renewal_is_km_over_the_term_and_fleet_renewed_not_the_grade() -> None:
    g = grades([(2024, 10.0, 0.95), (2025, 10.0, 0.91)], profile=CGS)
    register = pl.DataFrame(
        {
            "operator_id": ["O1", "O1"],
            "vehicle_id": ["M9", "B3"],
            "is_over_max_age": [True, False],  # a 9-year-old micro (CGS art. 10-III-a)
        }
    )
    criteria = build_verdict_criteria(
        Inputs(CGS, "operator", "O1", 2025, grades=g, register=register)
    )
    renewal = by_rule(criteria, "renewal")
    assert set(renewal) == {"km_efficiency", "fleet_renewed"}  # no grade criterion
    assert renewal["km_efficiency"]["status"] == "met"  # grade E years do not matter
    assert renewal["km_efficiency"]["is_law"] is True
    assert renewal["fleet_renewed"]["status"] == "not_met"
    termination = by_rule(criteria, "termination")
    assert "grade_e_years" not in termination
    assert termination["vehicles_past_useful_life"]["status"] == "met"
    assert termination["vehicles_past_useful_life"]["note"] == "veículos: M9"
    outcomes = compute_verdict_outcomes(criteria)
    assert outcomes["outcome"].to_list() == ["não apta", "alerta"]


def test_cgs_km_below_90_percent_in_one_year_fails_the_term() -> None:
    g = grades([(2024, 95.0, 0.95), (2025, 95.0, 0.899)], profile=CGS)
    km = by_rule(build_verdict_criteria(Inputs(CGS, "operator", "O1", 2025, grades=g)), "renewal")
    assert km["km_efficiency"]["status"] == "not_met"
    assert km["km_efficiency"]["value"] == "pior ano 2025: 89,9 %"


def test_profile_verdicts_list_their_articles() -> None:
    listed = describe_profile_verdicts(BG)
    assert listed.filter(pl.col("verdict") == "termination")["article"].to_list() == [
        "BG art. 72-I; Anexo I LXXXVI",
        "BG art. 72-II; Anexo I LXXXVII",
        "BG art. 72-III",
        "BG art. 72-IV, parágrafo único, I",
        "BG art. 72-V; Anexo I LXXXII, LXXXIII",
        "BG art. 72-VI; Anexo I LXXXIV",
        "BG art. 72-VII; Anexo I LXXXVIII",
    ]


def test_the_verdict_texts_come_from_the_catalogue_in_the_chosen_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Values, thresholds, notes and outcomes are made to be shown: PONTUAL_LANG=en gives the
    catalogue's English ids, the default their pt-BR (the case above)."""
    monkeypatch.setenv("PONTUAL_LANG", "en")
    g = grades([(2023, 10.0, None), (2025, 10.0, None), (2026, 10.0, None)])
    criteria = build_verdict_criteria(Inputs(BG, "operator", "O1", 2026, grades=g))
    ground = by_rule(criteria, "termination")["grade_e_years"]
    assert ground["value"] == "3 consecutive, 3 in all"
    assert (
        ground["threshold"] == "3 consecutive years or 8 non-consecutive ones with grade E"
    )  # BG art. 72-VII
    assert str(ground["note"]).startswith(
        "run with a gap: 2024 without a grade (a data gap does not break the count)"
    )
    outcomes = compute_verdict_outcomes(criteria)
    assert dict(zip(outcomes["verdict"], outcomes["outcome"], strict=True)) == {
        "renewal": "not eligible",
        "termination": "alert",
    }
    assert score_formula(BG, True) == "Annual score = 0,7 × ICV + 0,3 × IQS"  # pt-BR numbers
