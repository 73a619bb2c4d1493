"""Without a fleet register the reserve is not evaluated: no negative reserve, no suggested
infraction, and the reserve indicators are null (issue #22)."""

from __future__ import annotations

from datetime import date

import polars as pl

from analytics.indices.fleet import compute_fleet_day_indicators, compute_fleet_days
from analytics.indices.infractions import match_fleet_facts
from core.periods import parse_period
from core.profile import load_profile
from tests.analytics.indices.test_icv import fixture_frames

BG = load_profile("bento-goncalves-2021")


def test_an_empty_register_leaves_the_reserve_not_evaluated() -> None:
    f = fixture_frames()
    outcomes = f["outcomes"].filter(pl.col("service_date") == date(2026, 3, 2))
    scheduled = outcomes.select(
        "service_date",
        "route_id",
        "planned_start_at",
        (pl.col("planned_start_at") + pl.duration(minutes=50)).alias("planned_end_at"),
        pl.col("trip_id").alias("block_id"),
    )
    scopes = pl.DataFrame(
        {"route_id": ["T10", "U41", "D50"], "operator_id": ["O1", "O2", "O2"], "lot_id": ["L1"] * 3}
    )
    empty = f["vehicles"].clear()
    days = compute_fleet_days(scheduled, outcomes, empty, scopes, BG)
    totals = days.filter(pl.col("route_id") == "*")
    assert totals.height == 2 and (totals["n_vehicles_required"] > 0).all()
    # Without a register: unknown, never "0 registered, reserve = -required".
    for column in ("n_vehicles_registered", "n_reserve", "is_reserve_ok", "reserve_ratio"):
        assert totals[column].null_count() == 2, column
    assert match_fleet_facts(days).filter(pl.col("item") == "XXXV").height == 0
    rows = compute_fleet_day_indicators(days, parse_period("2026-03"))
    reserve = rows.filter(
        pl.col("indicator").is_in(["days_reserve_below_min", "days_reserve_above_max"])
    )
    assert reserve.height == 4 and reserve["value"].null_count() == 4
    # The same days with the register do judge the reserve (the fixture's O1 has 3 vehicles).
    judged = compute_fleet_days(scheduled, outcomes, f["vehicles"], scopes, BG)
    o1 = judged.filter((pl.col("operator_id") == "O1") & (pl.col("route_id") == "*"))
    assert o1["n_vehicles_registered"].to_list() == [3]
