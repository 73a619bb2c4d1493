"""Annual score, grade bands, IQS and the cassação rule (BG art. 57-58, 72-VII)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest

from analytics.indices.grades import (
    build_score_breakdown,
    compute_annual_grades,
    compute_iqs,
    compute_iqs_by_scope,
    grade_expr,
    read_grade_history,
    score_formula,
)
from core.errors import InputError
from core.profile import load_profile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "indices"
BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def year_scores(
    rows: Sequence[tuple[str, int, float, float | None, float | None]],
) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={
            "scope_id": pl.String,
            "year": pl.Int32,
            "icv_score": pl.Float64,
            "iqs_score": pl.Float64,
            "km_efficiency": pl.Float64,
        },
        orient="row",
    ).with_columns(pl.lit("operator").alias("scope"))


def test_grade_bands_at_their_edges() -> None:
    # A >= 90, B >= 80, C >= 70, D >= 60, E < 60 (profile defaults)
    scores = pl.DataFrame({"s": [100.0, 90.0, 89.99, 80.0, 70.0, 69.9, 60.0, 59.99, 0.0]})
    grades = scores.select(grade_expr(pl.col("s"), BG).alias("g"))["g"].to_list()
    assert grades == ["A", "A", "B", "B", "C", "D", "D", "E", "E"]


def test_annual_score_weights_icv_and_iqs() -> None:
    out = compute_annual_grades(year_scores([("O1", 2026, 80.0, 50.0, 0.95)]), None, BG)
    row = out.row(0, named=True)
    assert row["annual_score"] == pytest.approx(0.7 * 80 + 0.3 * 50)  # 71
    assert row["grade"] == "C"
    assert row["is_quality_goal_met"] and row["is_renewal_eligible"]


def test_without_survey_the_score_is_the_icv() -> None:
    out = compute_annual_grades(year_scores([("O1", 2026, 85.0, None, None)]), None, BG)
    assert out["annual_score"][0] == 85.0
    assert out["grade"][0] == "B"


def test_grade_a_with_85_percent_km_is_not_unfit_for_renewal_under_bg() -> None:
    # BG has no km rule (art. 32-I, 38-I ask quality goals): km below 90 % is shown, decides nothing
    out = compute_annual_grades(year_scores([("O1", 2026, 95.0, 95.0, 0.85)]), None, BG)
    row = out.row(0, named=True)
    assert row["grade"] == "A"
    assert not row["is_km_ok"]
    assert row["is_quality_goal_met"]
    assert row["is_renewal_eligible"]


def test_km_below_90_percent_misses_the_goal_under_cgs() -> None:
    # CGS art. 2 p.u. a: >= 90 % of programmed km; 89.9 % in one year is a miss, 90 % is met
    rows = [("O1", 2025, 95.0, None, 0.90), ("O1", 2026, 95.0, None, 0.899)]
    out = compute_annual_grades(year_scores(rows), None, CGS).sort("year")
    assert out["is_quality_goal_met"].to_list() == [True, False]
    assert out["is_renewal_eligible"].to_list() == [True, False]
    assert not out["is_cassacao_watch"].any()  # CGS has no cassação by grade


def test_one_or_two_missed_years_are_fined_not_disqualifying_under_bg() -> None:
    rows = [("O1", 2024, 30.0, None, None), ("O1", 2025, 95.0, None, None)]
    rows += [("O1", 2026, 30.0, None, None)]
    out = compute_annual_grades(year_scores(rows), None, BG).sort("year")
    assert out["grade"].to_list() == ["E", "A", "E"]
    assert out["n_goal_missed_total"].to_list() == [1, 1, 2]
    assert out["is_renewal_eligible"].to_list() == [True, True, True]


def test_cgs_grade_e_years_raise_no_cassacao_watch() -> None:
    rows = [("O1", y, 10.0, None, 0.95) for y in (2024, 2025, 2026)]
    out = compute_annual_grades(year_scores(rows), None, CGS)
    assert out["grade"].to_list() == ["E", "E", "E"]
    assert not out["is_cassacao_watch"].any()
    assert out["is_renewal_eligible"].all()  # no A-E grade decides renewal in CGS


def test_cassacao_watch_is_for_operators_not_lots_or_the_system() -> None:
    rows = [(s, "X", y, 10.0, None, None) for s in ("operator", "lot", "system") for y in (1, 2, 3)]
    frame = pl.DataFrame(
        rows,
        schema=["scope", "scope_id", "year", "icv_score", "iqs_score", "km_efficiency"],
        orient="row",
    ).with_columns(pl.col("year").cast(pl.Int32) + 2023, pl.col(pl.Null).cast(pl.Float64))
    out = compute_annual_grades(frame, None, BG)
    watch = out.filter(pl.col("year") == 2026).sort("scope")
    assert dict(zip(watch["scope"], watch["is_cassacao_watch"], strict=True)) == {
        "lot": False,
        "operator": True,
        "system": False,
    }


def test_three_consecutive_e_years_with_history() -> None:
    history = read_grade_history(FIXTURES / "grade_history_two_e_years.csv")
    # O1: C 2023, E 2024, E 2025 in the history; 2026 computed as E -> third in a row
    out = compute_annual_grades(year_scores([("O1", 2026, 40.0, 50.0, 0.95)]), history, BG)
    o1 = out.filter(pl.col("scope_id") == "O1").sort("year")
    assert o1["grade"].to_list() == ["C", "E", "E", "E"]
    assert o1["n_e_consecutive"].to_list() == [0, 1, 2, 3]
    assert o1["is_cassacao_watch"].to_list() == [False, False, False, True]
    assert o1["is_history"].to_list() == [True, True, True, False]


def test_eight_e_years_in_total_not_consecutive() -> None:
    history = read_grade_history(FIXTURES / "grade_history_two_e_years.csv")
    # O2: E E D E E D E in 2019-2025 (5 E, never 3 in a row); 2026 and 2027 E, 2028 C, 2029 E
    rows = [("O2", 2026, 30.0, 30.0, 0.95), ("O2", 2027, 30.0, 30.0, 0.95)]
    rows += [("O2", 2028, 75.0, 75.0, 0.95), ("O2", 2029, 30.0, 30.0, 0.95)]
    out = compute_annual_grades(year_scores(rows), history, BG)
    o2 = out.filter(pl.col("scope_id") == "O2").sort("year")
    assert o2["n_e_total"].to_list() == [1, 2, 2, 3, 4, 4, 5, 6, 7, 7, 8]
    # 2025-2027 are three E years in a row: watch from 2027; 2029 is the 8th E in total
    watch = dict(zip(o2["year"].to_list(), o2["is_cassacao_watch"].to_list(), strict=True))
    assert [y for y, w in watch.items() if w] == [2027, 2029]
    assert o2.filter(pl.col("year") == 2029)["n_e_consecutive"][0] == 1


def test_a_year_without_grade_does_not_break_the_run() -> None:
    # E, -, E, E: 2024 has no grade; the run is 3 graded E years and raises the watch
    history = pl.DataFrame(
        {
            "scope": ["operator"] * 2,
            "scope_id": ["O3"] * 2,
            "year": [2022, 2023],
            "grade": ["E", "E"],
        }
    )
    out = compute_annual_grades(year_scores([("O3", 2025, 10.0, 10.0, 0.95)]), history, BG)
    out = out.sort("year")
    assert out["year"].to_list() == [2022, 2023, 2025]
    assert out["n_e_consecutive"].to_list() == [1, 2, 3]
    assert out["is_cassacao_watch"].to_list() == [False, False, True]


def test_a_non_e_grade_breaks_the_run() -> None:
    rows = [("O4", 2024, 10.0, None, None), ("O4", 2025, 65.0, None, None)]
    rows += [("O4", 2026, 10.0, None, None)]
    out = compute_annual_grades(year_scores(rows), None, BG).sort("year")
    assert out["grade"].to_list() == ["E", "D", "E"]
    assert out["n_e_consecutive"].to_list() == [1, 0, 1]


def test_incomplete_survey_does_not_enter_the_score() -> None:
    surveys = pl.DataFrame(
        {
            "period": ["2026"] * 2,
            "operator_id": ["O1"] * 2,
            "dimension": ["fleet_quality", "courtesy_and_safety"],
            "score": [10.0, 10.0],
        }
    )
    iqs = compute_iqs(surveys, 2026, BG)
    assert iqs["n_dimensions"][0] == 2
    assert not iqs["is_iqs_complete"][0]  # BG art. 57-II: the three aspects a, b, c
    scopes = pl.DataFrame({"route_id": ["R"], "operator_id": ["O1"], "lot_id": ["L"]})
    assert compute_iqs_by_scope(iqs, scopes).height == 0


def test_history_with_an_unknown_grade_names_line_and_field() -> None:
    with pytest.raises(InputError) as err:
        read_grade_history(FIXTURES / "grade_history_unknown_grade.csv")
    assert "grade" in err.value.what and "'F'" in err.value.what
    assert err.value.where is not None and "line 3" in err.value.where
    assert "field grade" in err.value.where


def test_iqs_is_the_mean_of_the_profile_dimensions() -> None:
    surveys = pl.DataFrame(
        {
            "period": ["2026-S1", "2026-S2", "2026-S1", "2026-S1", "2025", "2026"],
            "operator_id": ["O1"] * 6,
            "dimension": [
                "fleet_quality",
                "fleet_quality",
                "courtesy_and_safety",
                "user_information",
                "fleet_quality",
                "not_a_dimension",
            ],
            "score": [60.0, 80.0, 90.0, 30.0, 0.0, 0.0],
        }
    )
    iqs = compute_iqs(surveys, 2026, BG)
    # fleet quality (60 + 80) / 2 = 70; then (70 + 90 + 30) / 3
    assert iqs.row(0) == ("O1", pytest.approx(190 / 3), 3, True)


def test_score_breakdown_prints_the_formula_it_applied() -> None:
    year_values: dict[str, float | None] = {
        "icv_fulfilment": 0.94,
        "icv_punctuality": 0.85,
        "breakdowns_per_10000_km": 1.75,
        "icv_score_fulfilment": 50.0,
        "icv_score_punctuality": 50.0,
        "icv_score_breakdowns": 50.0,
    }
    # without a survey: the annual score is the ICV, and the formula printed says so
    row = compute_annual_grades(year_scores([("O1", 2026, 50.0, None, None)]), None, BG).row(
        0, named=True
    )
    out = build_score_breakdown(year_values, row, BG)
    parts = {r["part"]: r for r in out.iter_rows(named=True)}
    assert parts["Cumprimento de viagens (ICV)"]["contribution"] == pytest.approx(25.0)  # 0.5×50
    assert parts["ICV (nota)"]["weight"] == 1.0
    assert parts["IQS (pesquisa)"]["weight"] is None
    total = parts["Nota anual — conceito E"]
    assert total["points"] == 50.0
    assert str(total["rule"]).startswith("Nota anual = ICV (sem pesquisa IQS completa")
    assert "padrão até o decreto, BG art. 58" in str(total["rule"])
    assert not out["is_law"].any()  # every band and weight is a default under BG today
    # with a survey: 0.7 ICV + 0.3 IQS, and the contributions add up to the annual score
    row = compute_annual_grades(year_scores([("O1", 2026, 80.0, 50.0, None)]), None, BG).row(
        0, named=True
    )
    out = build_score_breakdown(year_values, row, BG)
    both = out.filter(pl.col("part").is_in(["ICV (nota)", "IQS (pesquisa)"]))
    assert both["contribution"].sum() == pytest.approx(row["annual_score"]) == pytest.approx(71.0)
    assert score_formula(BG, True) == "Nota anual = 0,7 × ICV + 0,3 × IQS"
