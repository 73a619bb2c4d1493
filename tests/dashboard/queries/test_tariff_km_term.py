"""The tariff worksheet and the term-long km series read from the stored month indicators
(issue #17), hand-computed."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from dashboard.queries.annual import (
    read_km_term_series,
    read_monthly_figures,
    read_tariff_worksheet,
)


def _indicators() -> pl.DataFrame:
    """OP1 in 2025, months but May: 20 000 equivalent passengers (none in August), 10 000 km
    programmed, 9 500 km run (9 000 in August) at R$ 8.00/km."""
    rows = []
    for m in (1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12):
        period, run = f"2025-{m:02d}", 9_000.0 if m == 8 else 9_500.0
        first = date(2025, m, 1)
        base = {"scope": "operator", "scope_id": "OP1", "period": period, "period_start": first}
        base |= {"period_end": first, "source": "t", "computed_at": datetime.now(UTC)}
        if m != 8:
            rows.append(
                base
                | {"indicator": "equivalent_passengers", "value": 20_000.0, "unit": "passengers"}
            )
        rows.append(
            base
            | {
                "indicator": "km_efficiency",
                "numerator": run,
                "denominator": 10_000.0,
                "value": run / 10_000,
                "unit": "ratio",
            }
        )
        rows.append(
            base
            | {
                "indicator": "technical_tariff_brl",
                "numerator": run * 8.0,
                "unit": "brl",
            }
        )
    return pl.DataFrame(rows)


@pytest.fixture
def store(store_path: Path) -> Store:
    with Store.open(store_path) as opened:
        opened.append(
            "indicators",
            _indicators(),
            fill={"pontual_version": "t", "profile_id": "campina-grande-do-sul-2003"},
        )
    return Store.open(store_path, read_only=True)


def test_month_figures_come_from_the_stored_month_rows(store: Store) -> None:
    with store:
        got = read_monthly_figures(store, "operator", "OP1", None, date(2025, 12, 31))
    assert got.height == 11
    aug = got.filter(pl.col("month") == date(2025, 8, 1)).row(0, named=True)
    assert (aug["equivalent_passengers"], aug["km_run"], aug["cost_km"]) == (None, 9_000, 72_000)


def test_the_cgs_worksheet_prints_the_tariff_of_art_16(store: Store) -> None:
    with store:
        sheet = read_tariff_worksheet(
            store, "campina-grande-do-sul-2003", "operator", "OP1", date(2025, 12, 1)
        )
    values = dict(sheet.select("item", "value").rows())
    assert values["Meses com dados (bilhetagem e km) na janela"] == 10
    missing = sheet.filter(pl.col("item").str.starts_with("Meses da janela sem dados"))
    assert missing.select("value", "detail").row(0) == (2, "2025-05, 2025-08")
    # no dead km recorded (CGS default 0): km total = 100 000; IPK 2.0; 8.00 ÷ 2.0 = 4.00
    assert values["Km total do sistema (base do IPK)"] == 100_000
    assert values["IPK (passageiros equivalentes por km)"] == pytest.approx(2.0)
    assert values["Tarifa técnica = custo por km ÷ IPK"] == pytest.approx(4.0)


def test_the_term_series_runs_from_the_first_month_and_marks_may(store: Store) -> None:
    with store:
        series = read_km_term_series(store, "operator", "OP1", date(2025, 12, 31))
    assert series.height == 12
    assert series.filter(~pl.col("has_data"))["month"].to_list() == [date(2025, 5, 1)]
    # 10 × 9 500 + 9 000 = 104 000 of 110 000 programmed
    assert series["term_efficiency"][-1] == pytest.approx(104_000 / 110_000)
