"""Occupancy from the live load, with the Bento Gonçalves profile (4 standees/m², mapping in
`[occupancy]`), checked by hand on a 38-seat bus with 6 m² standing area (capacity 62)."""

from __future__ import annotations

import polars as pl

from analytics.live.occupancy import (
    build_vehicle_capacity,
    compute_live_loads,
    compute_occupancy,
)
from core.profile import load_profile

PROFILE = load_profile("bento-goncalves-2021")


def test_vehicle_capacity_takes_the_register_then_the_type_fallback() -> None:
    vehicles = pl.DataFrame(
        {
            "vehicle_id": ["A", "B"],
            "vehicle_type": ["convencional", "micro"],
            "n_seats": [38, None],
            "standing_area_m2": [6.0, None],
        },
        schema_overrides={"n_seats": pl.Int32, "standing_area_m2": pl.Float64},
    )
    cap = build_vehicle_capacity(vehicles, PROFILE).sort("vehicle_id")
    # A: 38 + 6 x 4 = 62; B (micro fallback, up to 20 seats by BG art. 15 §1): 20 + 2.5 x 4 = 30
    assert cap.to_dicts() == [
        {"vehicle_id": "A", "n_seats": 38, "standing_area_m2": 6.0, "capacity": 62},
        {"vehicle_id": "B", "n_seats": 20, "standing_area_m2": 2.5, "capacity": 30},
    ]


def test_occupancy_bands_follow_the_profile() -> None:
    cap = pl.DataFrame(
        {"vehicle_id": ["v"], "n_seats": [38], "standing_area_m2": [6.0], "capacity": [62]},
        schema_overrides={"n_seats": pl.Int32, "capacity": pl.Int32},
    )
    loads = [0.0, 10.0, 18.9, 19.0, 37.9, 38.0, 61.9, 62.0, 62.5]
    frame = pl.DataFrame({"vehicle_id": ["v"] * len(loads), "load": loads})
    out = pl.concat([compute_occupancy(frame[i : i + 1], cap, PROFILE) for i in range(len(loads))])
    assert out["occupancy_status"].to_list() == [
        "EMPTY",
        "MANY_SEATS_AVAILABLE",  # 10 / 38 < 0.5
        "MANY_SEATS_AVAILABLE",  # 18.9 / 38 < 0.5
        "FEW_SEATS_AVAILABLE",  # 19 / 38 = 0.5
        "FEW_SEATS_AVAILABLE",
        "STANDING_ROOM_ONLY",  # every seat taken, no standee yet
        "STANDING_ROOM_ONLY",  # 23.9 standees / 6 m2 = 3.98 < 4
        "CRUSHED_STANDING_ROOM_ONLY",  # 24 / 6 = 4.0: at the art. 59 limit
        "FULL",  # above it
    ]
    assert out["occupancy_percentage"].to_list() == [0, 16, 30, 31, 61, 61, 100, 100, 101]


def test_live_load_assumes_uniform_alighting_over_the_rest_of_the_trip() -> None:
    # trip ends at 10 km; two taps at 0 m and one at 5 km; the bus is at 6 km
    boardings = pl.DataFrame(
        {"vehicle_id": ["v"] * 3, "trip_id": ["t"] * 3, "board_dist_m": [0.0, 0.0, 5000.0]}
    )
    vehicles = pl.DataFrame(
        {"vehicle_id": ["v"], "trip_id": ["t"], "dist_m": [6000.0], "end_dist_m": [10000.0]}
    )
    load = compute_live_loads(boardings, vehicles)["load"][0]
    # 2 x 4/10 + 1 x 4/5 = 1.6
    assert abs(load - 1.6) < 1e-9
