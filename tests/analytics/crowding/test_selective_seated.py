"""Selective service carries seated passengers only (BG art. 6-II): zero standees allowed."""

from __future__ import annotations

import polars as pl

from analytics.crowding.loads import build_capacities, over_limit_expr
from core.profile import load_profile

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def test_one_standee_on_a_selective_bus_is_over_the_limit_under_bg() -> None:
    vehicles = pl.DataFrame(
        {
            "vehicle_id": ["S1", "C1"],
            "vehicle_type": ["convencional", "convencional"],
            "service_class": ["selective", "conventional"],
            "n_seats": [40, 40],
            "standing_area_m2": [6.0, 6.0],
        }
    )
    caps = build_capacities(vehicles, BG)
    assert caps["standees_limit_per_m2"].to_list() == [0.0, 4.0]
    # 41 aboard = one standee: over on the selective bus, fine on the conventional one
    over = (
        caps.with_columns(pl.lit(41.0).alias("load"))
        .select(
            over_limit_expr(
                pl.col("load"),
                pl.col("n_seats"),
                pl.col("standing_area_m2"),
                pl.col("standees_limit_per_m2"),
            ).alias("over")
        )["over"]
        .to_list()
    )
    assert over == [True, False]
    # CGS sets no class limit: both at 7.5/m² (art. 45)
    assert build_capacities(vehicles, CGS)["standees_limit_per_m2"].to_list() == [7.5, 7.5]
