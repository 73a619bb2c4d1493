"""km efficiency over the concession term (CGS art. 2 p.ú. a), months without data kept out
explicitly (issue #17), hand-computed."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from analytics.indices.km import build_km_term_series, compute_km_term
from core.profile import load_profile


def _months() -> pl.DataFrame:
    # Jan 95 %, Feb 85 %, (Mar: no data), Apr 92 %: 1 000 km programmed each
    return pl.DataFrame(
        {
            "scope": "operator",
            "scope_id": "OP1",
            "month": [date(2025, 1, 1), date(2025, 2, 1), date(2025, 4, 1)],
            "km_run": [950.0, 850.0, 920.0],
            "km_programmed": [1_000.0, 1_000.0, 1_000.0],
        }
    )


def test_the_term_series_keeps_a_month_without_data_out_of_the_sums() -> None:
    series = build_km_term_series(_months(), date(2025, 1, 1), date(2025, 4, 30))
    assert series["month"].to_list() == [date(2025, m, 1) for m in (1, 2, 3, 4)]
    assert series["has_data"].to_list() == [True, True, False, True]
    assert series["efficiency"].to_list()[2] is None
    # the term figure as it stood each month: 95 %, (950+850)/2000 = 90 %, still 90 %, 2720/3000
    assert series["term_efficiency"].to_list() == pytest.approx([0.95, 0.90, 0.90, 2720 / 3000])


def test_the_term_verdict_counts_months_with_data_only() -> None:
    cgs = load_profile("campina-grande-do-sul-2003")
    series = build_km_term_series(_months(), date(2025, 1, 1), date(2025, 4, 30))
    row = compute_km_term(series, cgs).row(0, named=True)
    assert (row["n_months"], row["n_months_with_data"]) == (4, 3)
    assert row["months_without_data"] == "2025-03"
    # 2 720 ÷ 3 000 = 90.7 % >= 90 %: met, though February alone was below (1 month)
    assert row["term_efficiency"] == pytest.approx(2720 / 3000)
    assert row["n_months_below"] == 1
    assert row["is_term_met"] is True
    # counting March as 0 km would give 2 720 ÷ 4 000 = 68 %: not what the law measures
    assert row["km_programmed"] == 3_000
