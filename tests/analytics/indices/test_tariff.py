"""The technical tariff worksheet (CGS art. 15-16; BG art. 26 §2, 49), hand-computed."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from analytics.indices.tariff import build_tariff_worksheet, compute_tariff_inputs
from core.profile import Cited, load_profile

DEC = date(2025, 12, 1)


def _year() -> pl.DataFrame:
    """OP1 in 2025: ten full months of 20 000 equivalent passengers, 10 000 km programmed and
    9 500 km run at R$ 8.00/km; May has no data at all; August has km but no ticketing."""
    months = [date(2025, m, 1) for m in range(1, 13) if m != 5]
    return pl.DataFrame(
        {
            "scope": "operator",
            "scope_id": "OP1",
            "month": months,
            "equivalent_passengers": [0.0 if m.month == 8 else 20_000.0 for m in months],
            "km_programmed": 10_000.0,
            "km_run": [9_000.0 if m.month == 8 else 9_500.0 for m in months],
            "cost_km": [72_000.0 if m.month == 8 else 76_000.0 for m in months],
        }
    )


def test_cgs_ipk_divides_twelve_months_of_demand_by_programmed_plus_dead_km() -> None:
    cgs = load_profile("campina-grande-do-sul-2003")
    assert cgs.tariff is not None
    ratio = Cited[float](value=0.05, unit="ratio", default=True, note="test: 5 % dead km")
    profile = cgs.model_copy(
        update={"tariff": cgs.tariff.model_copy(update={"dead_km_ratio": ratio})}
    )
    row = compute_tariff_inputs(_year(), profile, DEC).row(0, named=True)
    # May (no data) and August (no ticketing) stay out of both sums
    assert row["n_months"] == 10
    assert row["months_missing"] == "2025-05, 2025-08"
    assert row["equivalent_passengers"] == 200_000
    assert row["km_programmed"] == 100_000
    assert row["dead_km"] == pytest.approx(5_000)
    assert row["km_total"] == pytest.approx(105_000)
    assert row["ipk"] == pytest.approx(200_000 / 105_000)
    assert row["cost_per_km"] == pytest.approx(8.0)
    # art. 16: 8.00 ÷ (200 000 / 105 000) = 4.20
    assert row["technical_tariff"] == pytest.approx(4.20)
    sheet = build_tariff_worksheet(compute_tariff_inputs(_year(), profile, DEC), profile)
    tariff_line = sheet.filter(pl.col("item").str.starts_with("Tarifa técnica")).row(0, named=True)
    assert (tariff_line["value"], tariff_line["article"]) == (
        pytest.approx(4.2),
        "CGS art. 16 (custo da km total ÷ IPK)",
    )
    dead_line = sheet.filter(pl.col("item").str.contains("garagem")).row(0, named=True)
    assert dead_line["article"].startswith("padrão do Pontual")


def test_bg_ipk_is_the_annual_mean_of_passengers_over_the_mean_km_run() -> None:
    bg = load_profile("bento-goncalves-2021")
    row = compute_tariff_inputs(_year(), bg, DEC).row(0, named=True)
    assert row["dead_km"] is None
    assert row["km_total"] == pytest.approx(95_000)
    assert row["mean_monthly_passengers"] == pytest.approx(20_000)
    assert row["mean_monthly_km"] == pytest.approx(9_500)
    assert row["ipk"] == pytest.approx(20_000 / 9_500)
    # 8.00 ÷ (20 000 / 9 500) = 3.80
    assert row["technical_tariff"] == pytest.approx(3.80)


def test_a_month_without_a_cost_leaves_the_tariff_unknown() -> None:
    bg = load_profile("bento-goncalves-2021")
    monthly = _year().with_columns(
        pl.when(pl.col("month") == date(2025, 3, 1))
        .then(None)
        .otherwise("cost_km")
        .alias("cost_km")
    )
    row = compute_tariff_inputs(monthly, bg, DEC).row(0, named=True)
    assert row["ipk"] == pytest.approx(20_000 / 9_500)
    assert row["technical_tariff"] is None
