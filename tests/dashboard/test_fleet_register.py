"""The Frota page's register applies the vehicle type's useful life as the indices do (CGS art.
10-III-a: a 9-year-old micro-ônibus is past its life, a 9-year-old bus is not)."""

from __future__ import annotations

from datetime import date

import polars as pl

from core.profile import load_profile
from dashboard.fleet import build_fleet_register


def test_a_nine_year_old_micro_is_over_age_under_cgs_and_a_bus_is_not() -> None:
    vehicles = pl.DataFrame(
        {
            "vehicle_id": ["M1", "B1"],
            "service_area": "urban",
            "vehicle_type": ["micro", "convencional"],
            "manufacture_year": 2017,
            "n_seats": [20, 38],
            "standing_area_m2": [2.0, 6.0],
            "last_inspection_on": date(2026, 1, 10),
        }
    )
    got = build_fleet_register(
        vehicles, load_profile("campina-grande-do-sul-2003"), date(2026, 6, 1)
    )
    assert got.select("vehicle_id", "age_years", "max_age_years", "is_over_age").rows() == [
        ("M1", 9, 8.0, True),
        ("B1", 9, 10.0, False),
    ]
