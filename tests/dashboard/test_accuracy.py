"""The accuracy page and the monthly report's section on a hand-checked small case: six logged
predictions of one day scored against their stop visits, and a second day's stored scores."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from analytics.live.accuracy import compute_prediction_accuracy
from core.schema import table
from core.store import Store
from dashboard.queries.accuracy import compute_accuracy_summary, select_dimension
from tests.dashboard.store_builder import DAY

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
UTC = pl.Datetime("us", "UTC")
T0 = datetime(2026, 3, 2, 14, 0)  # 11:00 in São Paulo


def build_case() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(log, visits, trips) of the case. Two trips of line L1 (T1 current, T2 next) and one of
    L2 (T3 current); every stop truly reached at T0 + k min.

    | trip | stop | horizon | order | predicted - true | timetable - true |
    | T1   | 1    | 10      | 0     | +60              | +120             |
    | T1   | 2    | 10      | 0     | -30              | -240             |
    | T2   | 1    | 10      | 1     | +300             | +60              |
    | T3   | 1    | 5       | 0     | 0                | +180             |
    | T3   | 2    | 5       | 0     | +90              | +90              |
    | T3   | 3    | 5       | 0     | -120             | -300             |
    """
    case = [
        ("T1", 1, 10, 0, 60, 120),
        ("T1", 2, 10, 0, -30, -240),
        ("T2", 1, 10, 1, 300, 60),
        ("T3", 1, 5, 0, 0, 180),
        ("T3", 2, 5, 0, 90, 90),
        ("T3", 3, 5, 0, -120, -300),
    ]
    true = [T0 + timedelta(minutes=k) for k in range(len(case))]
    log = pl.DataFrame(
        {
            "service_date": [DAY] * len(case),
            "trip_id": [c[0] for c in case],
            "stop_sequence": [c[1] for c in case],
            "horizon_min": [c[2] for c in case],
            "block_order": [c[3] for c in case],
            "vehicle_id": ["V1"] * len(case),
            "made_at": [t - timedelta(minutes=c[2]) for t, c in zip(true, case, strict=True)],
            "predicted_arrival_at": [
                t + timedelta(seconds=c[4]) for t, c in zip(true, case, strict=True)
            ],
            "planned_arrival_at": [
                t + timedelta(seconds=c[5]) for t, c in zip(true, case, strict=True)
            ],
        }
    ).with_columns(
        pl.col("stop_sequence").cast(pl.Int32),
        pl.col("horizon_min", "block_order").cast(pl.Int16),
        pl.col("made_at", "predicted_arrival_at", "planned_arrival_at").dt.replace_time_zone("UTC"),
    )
    visits = log.select(
        "service_date",
        "trip_id",
        "stop_sequence",
        pl.Series("arrival_at", true).dt.replace_time_zone("UTC"),
        pl.lit(False).alias("is_interpolated"),
    )
    trips = pl.DataFrame({"trip_id": ["T1", "T2", "T3"], "route_id": ["L1", "L1", "L2"]})
    return log, visits, trips


def scored_case() -> pl.DataFrame:
    log, visits, trips = build_case()
    return compute_prediction_accuracy(log, visits, trips, "America/Sao_Paulo")


def test_the_summary_of_one_day_is_the_hand_computed_case() -> None:
    summary = compute_accuracy_summary(scored_case())
    horizon = {r["key"]: r for r in select_dimension(summary, "horizon").iter_rows(named=True)}
    # 10 min: |60|, |-30|, |300| -> MAE 130, median 60; timetable 120, 240, 60 -> 140
    assert horizon["10"]["n_predictions"] == 3
    assert horizon["10"]["mae_s"] == pytest.approx(130.0)
    assert horizon["10"]["p50_s"] == pytest.approx(60.0)
    assert horizon["10"]["timetable_mae_s"] == pytest.approx(140.0)
    assert horizon["10"]["gain_vs_timetable"] == pytest.approx(1 - 130 / 140)
    # 5 min: 0, 90, 120 -> 70; bias (0 + 90 - 120) / 3 = -10; timetable 180, 90, 300 -> 190
    assert horizon["5"]["mae_s"] == pytest.approx(70.0)
    assert horizon["5"]["bias_s"] == pytest.approx(-10.0)
    assert horizon["5"]["timetable_mae_s"] == pytest.approx(190.0)
    assert select_dimension(summary, "horizon")["key"].to_list() == ["5", "10"]
    trip = {r["key"]: r for r in select_dimension(summary, "trip").iter_rows(named=True)}
    # current: 60, 30, 0, 90, 120 -> 60; next: the one 300 s miss (timetable 60)
    assert trip["current"]["mae_s"] == pytest.approx(60.0)
    assert trip["next"]["mae_s"] == pytest.approx(300.0)
    assert trip["next"]["timetable_mae_s"] == pytest.approx(60.0)
    line = {r["key"]: r for r in select_dimension(summary, "line").iter_rows(named=True)}
    assert line["L1"]["mae_s"] == pytest.approx(130.0)
    assert line["L2"]["mae_s"] == pytest.approx(70.0)
    # the true arrivals are 11:00-11:05 in São Paulo
    assert select_dimension(summary, "hour")["key"].to_list() == ["11"]


def test_two_days_weigh_each_prediction_once() -> None:
    one = scored_case()
    # a second day with the same groups, every error doubled
    two = one.with_columns(
        pl.lit(DAY + timedelta(days=1)).alias("service_date"),
        *[pl.col(c) * 2 for c in ("mae_s", "p50_s", "p90_s", "bias_s")],
    )
    summary = compute_accuracy_summary(pl.concat([one, two]))
    ten = select_dimension(summary, "horizon").filter(pl.col("key") == "10").row(0, named=True)
    # 3 predictions at 130 s and 3 at 260 s: 195 s over 6
    assert (ten["n_days"], ten["n_predictions"]) == (2, 6)
    assert ten["mae_s"] == pytest.approx(195.0)


@pytest.fixture
def accuracy_store(dashboard_store: Path, tmp_path: Path) -> Path:
    """The dashboard's small store with the case scored on its day."""
    store_path = tmp_path / "pontual.duckdb"
    shutil.copy(dashboard_store, store_path)
    scored = scored_case()
    with Store.open(store_path) as store:
        store.replace(
            "live_prediction_accuracy",
            table("live_prediction_accuracy").conform(
                scored, fill={"pontual_version": "test", "profile_id": "bento-goncalves-2021"}
            ),
            "service_date = ?",
            [DAY],
        )
        store.publish_snapshot()
    return store_path


def test_the_accuracy_page_shows_the_case(
    accuracy_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(accuracy_store))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/accuracy.py").run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = {m.label: (m.value, m.delta) for m in at.metric}
    assert metrics["Dias avaliados"][0] == "1"
    assert metrics["Previsões avaliadas"][0] == "6"
    assert metrics["Erro médio a 10 min (s)"] == ("130", "quadro: 140 s")
    assert metrics["Ganho sobre o quadro a 10 min"][0] == "7,1 %"
    tables = [t.value for t in at.dataframe]
    trip = next(t for t in tables if "Viagem" in t.columns)
    assert dict(zip(trip["Viagem"], trip["Erro médio (s)"], strict=True)) == {
        "atual": 60.0,
        "próximas": 300.0,
    }
    line = next(t for t in tables if "Linha" in t.columns)
    assert list(line["Linha"]) == ["L1", "L2"]


def test_the_accuracy_page_says_what_to_run_without_scores(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/accuracy.py").run()
    assert not at.exception
    assert "pontual serve" in at.info[0].value


def test_the_monthly_report_has_the_case(accuracy_store: Path) -> None:
    from core.profile import load_profile
    from dashboard.reports.monthly import build_monthly_report

    with Store.open(accuracy_store, read_only=True) as store:
        report = build_monthly_report(store, "2026-03", load_profile("bento-goncalves-2021"))
    section = next(s for s in report.sections if s.title.startswith("Precisão das previsões"))
    assert section.tables == ("precisao_previsoes",)
    shown = report.tables["precisao_previsoes"].data
    got = {r["group"]: r for r in shown.iter_rows(named=True)}
    assert list(got) == [
        "Horizonte ≥ 5 min",
        "Horizonte ≥ 10 min",
        "Viagem atual",
        "Viagem seguinte",
        "Linha L1",
        "Linha L2",
    ]
    assert (got["Horizonte ≥ 10 min"]["mae_s"], got["Horizonte ≥ 10 min"]["timetable_mae_s"]) == (
        130.0,
        140.0,
    )
    assert got["Viagem seguinte"]["n_predictions"] == 1
    assert got["Viagem seguinte"]["gain_vs_timetable"] == pytest.approx(1 - 300 / 60)


def test_a_month_without_scores_says_so_in_the_report(dashboard_store: Path) -> None:
    from core.profile import load_profile
    from dashboard.reports.monthly import build_monthly_report

    with Store.open(dashboard_store, read_only=True) as store:
        report = build_monthly_report(store, "2026-03", load_profile("bento-goncalves-2021"))
    section = next(s for s in report.sections if s.title.startswith("Precisão das previsões"))
    assert section.tables == ()
    assert "Nenhuma previsão avaliada" in section.paragraphs[0]


def test_the_scored_predictions_enter_the_monthly_reports_input_hash(
    accuracy_store: Path, dashboard_store: Path
) -> None:
    """The accuracy section's numbers are reproducible like the rest of the report: the
    scored predictions it reads are one of the report's hashed inputs, so scoring more
    predictions changes the report's hash."""
    from core.profile import load_profile
    from dashboard.reports.monthly import build_monthly_report

    profile = load_profile("bento-goncalves-2021")
    hashes = []
    for path in (accuracy_store, dashboard_store):
        with Store.open(path, read_only=True) as store:
            report = build_monthly_report(store, "2026-03", profile)
        entries = report.table("entradas").frame
        assert "store:live_prediction_accuracy" in entries["input"].to_list()
        hashes.append(report.input_hash)
    assert hashes[0] != hashes[1]
