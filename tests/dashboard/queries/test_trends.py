"""Tendências e risco: the monthly series per operator and who is at risk, hand-checked."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from dashboard.queries import trends as q
from tests.dashboard.store_builder import write


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path: Path = tmp_path_factory.mktemp("trends") / "t.duckdb"
    s = Store.open(path)
    rows = []
    # O1 falls: 70, 62, 55, 50 over four months (mean of the last 3 = 55.67 < 60: heading for
    # E); O2 holds at 85. A yearly row and a system row must not reach the monthly series.
    for month, o1, o2 in (
        ("2026-01", 70.0, 85.0),
        ("2026-02", 62.0, 85.0),
        ("2026-03", 55.0, 85.0),
        ("2026-04", 50.0, 85.0),
    ):
        rows += [
            ("operator", "O1", month, "icv_score", o1),
            ("operator", "O2", month, "icv_score", o2),
            ("operator", "O1", month, "icv_fulfilment", 0.9),
        ]
    rows += [
        ("operator", "O1", "2026", "icv_score", 59.0),
        ("system", "", "2026-01", "icv_score", 77.0),
    ]
    frame = pl.DataFrame(
        rows, schema=["scope", "scope_id", "period", "indicator", "value"], orient="row"
    )
    write(s, "indicators", frame.with_columns(pl.lit("points").alias("unit")))
    grades = pl.DataFrame(
        {
            "scope": ["operator"] * 3,
            "scope_id": ["O1", "O3", "O3"],
            "year": [2025, 2024, 2025],
            "grade": ["D", "E", "E"],
            "n_e_consecutive": [0, 1, 2],
            "is_cassacao_watch": [False, False, True],
            "is_provisional": [False, False, True],
        }
    )
    write(s, "annual_grades", grades)
    return s


def test_monthly_series_per_operator(store: Store) -> None:
    series = q.read_monthly_series(store, "", 2026)
    icv = series.filter(pl.col("indicator") == "icv_score")
    assert icv.group_by("operator_id").len().sort("operator_id").rows() == [("O1", 4), ("O2", 4)]
    assert icv.filter(pl.col("operator_id") == "O1")["month"].to_list()[0] == date(2026, 1, 1)
    assert q.read_monthly_series(store, "O2", 2026)["operator_id"].unique().to_list() == ["O2"]


def test_risk_panel_lists_who_to_watch_most_serious_first(store: Store) -> None:
    series = q.read_monthly_series(store, "", 2026)
    grades = store.read("annual_grades")
    risk = q.build_risk(series, grades, 60.0)
    assert risk["operator_id"].to_list() == ["O3", "O1"]  # O2 (85 points) is not at risk
    o3, o1 = risk.row(0, named=True), risk.row(1, named=True)
    assert o3["is_cassacao_watch"] and o3["last_grade"] == "E"
    assert o3["reasons"] == (
        "vigilância de cassação (conceito E em 3 anos seguidos ou 8 no total); conceito E em 2025"
    )
    assert o1["recent_icv"] == pytest.approx((62 + 55 + 50) / 3)
    assert o1["reasons"] == (
        "ICV médio dos últimos 3 meses abaixo de 60 pontos (rumo ao conceito E)"
    )


def test_overdue_cases_summed_up_per_operator_oldest_named() -> None:
    overdue = pl.DataFrame(
        {
            "case_id": [7, 3, 9],
            "state": ["lavrada", "em_defesa", "lavrada"],
            "operator_id": ["O1", "O1", "O2"],
            "pending": ["notify (art. 68 §2)", "judge (art. 69-I)", "notify (art. 68 §2)"],
            "due_on": [date(2026, 4, 20), date(2026, 3, 20), date(2026, 4, 1)],
            "days_late": [10, 41, 29],
        }
    )
    got = q.build_overdue_by_operator(overdue)
    assert got.rows() == [
        ("O1", 2, 3, date(2026, 3, 20), 41, "judge (art. 69-I)"),
        ("O2", 1, 9, date(2026, 4, 1), 29, "notify (art. 68 §2)"),
    ]
    assert q.build_overdue_by_operator(overdue.clear()).is_empty()
