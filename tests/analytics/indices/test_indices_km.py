"""km efficiency (CGS art. 2, 20-II): ≥ 90 % of the programmed km, per month and over 12 months;
and the period parser."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from analytics.indices.km import compute_km_efficiency, compute_km_indicators, list_months_below
from core.errors import ConfigError
from core.periods import months_back, months_in, parse_period
from core.profile import load_profile

CGS = load_profile("campina-grande-do-sul-2003")


def monthly(km_run: list[float], start_year: int = 2025) -> pl.DataFrame:
    months = [date(start_year + (m // 12), m % 12 + 1, 1) for m in range(len(km_run))]
    return pl.DataFrame(
        {
            "scope": "operator",
            "scope_id": "O1",
            "month": months,
            "km_run": km_run,
            "km_programmed": [1000.0] * len(km_run),
        }
    )


def test_twelve_month_rule_tolerates_a_bad_month_but_lists_it() -> None:
    # 11 months at 95 % and one at 50 %: window (11 × 950 + 500) / 12 000 = 91.25 % >= 90 %
    eff = compute_km_efficiency(monthly([950.0] * 11 + [500.0]), CGS)
    last = eff.sort("month").row(-1, named=True)
    assert last["n_months"] == 12
    assert last["window_efficiency"] == pytest.approx(0.9125)
    assert not last["is_window_below"]
    below = list_months_below(eff)
    assert below["month"].to_list() == [date(2025, 12, 1)]
    assert below["efficiency"].to_list() == [0.5]


def test_window_rolls_the_oldest_month_out() -> None:
    # 13 months: the 13th window drops January 2025 (the only month at 100 %)
    eff = compute_km_efficiency(monthly([1000.0] + [895.0] * 12), CGS).sort("month")
    assert eff["window_efficiency"][11] == pytest.approx((1000 + 11 * 895) / 12000)
    assert not eff["is_window_below"][11]
    assert eff["window_efficiency"][12] == pytest.approx(0.895)
    assert eff["is_window_below"][12] and eff["n_months"][12] == 12


def test_year_indicators() -> None:
    eff = compute_km_efficiency(monthly([950.0] * 11 + [500.0]), CGS)
    ind = compute_km_indicators(eff, parse_period("2025"))
    vals = {r["indicator"]: r for r in ind.iter_rows(named=True)}
    assert vals["km_efficiency"]["numerator"] == 11 * 950 + 500
    assert vals["km_efficiency"]["denominator"] == 12000
    assert vals["km_months_below"]["numerator"] == 1


def test_periods() -> None:
    assert parse_period("2026-02").end == date(2026, 2, 28)
    assert parse_period("2024-02").end == date(2024, 2, 29)
    y = parse_period("2026")
    assert (y.start, y.end, y.kind) == (date(2026, 1, 1), date(2026, 12, 31), "year")
    r = parse_period("2026-03-01..2026-03-15")
    assert r.label == "2026-03-01..2026-03-15" and r.n_days == 15
    assert [p.label for p in months_in(parse_period("2025-11-20..2026-01-05"))] == [
        "2025-11",
        "2025-12",
        "2026-01",
    ]
    assert months_back(date(2026, 3, 31), 12).start == date(2025, 4, 1)
    with pytest.raises(ConfigError) as err:
        parse_period("2026-13")
    assert err.value.where == "--period"
    with pytest.raises(ConfigError):
        parse_period("março")
