"""Live load of each vehicle from its fare taps, and its GTFS-RT occupancy.

Validators know where passengers board, not where they alight. Live, each passenger who
boarded the current trip at distance d (along the shape) is assumed to alight uniformly over
the rest of the trip: at position x the expected share still aboard is (D - x) / (D - d), D the
trip's last stop. The trip chaining of `analytics.crowding.alightings` needs the whole day; this needs
only the current trip.
"""

from __future__ import annotations

import polars as pl

from core.profile import Profile

OCCUPANCY_STATUSES = (
    "EMPTY",
    "MANY_SEATS_AVAILABLE",
    "FEW_SEATS_AVAILABLE",
    "STANDING_ROOM_ONLY",
    "CRUSHED_STANDING_ROOM_ONLY",
    "FULL",
)


def build_vehicle_capacity(vehicles: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Seats and standing area per vehicle: the register's, else its type's profile fallback.

    Output: vehicle_id, n_seats, standing_area_m2, capacity (seats + standing area x the
    profile's standees limit, passengers: the 100 % of `occupancy_percentage`).
    """
    types = pl.DataFrame(
        {
            "vehicle_type": list(profile.crowding.vehicle_types),
            "_seats": [t.n_seats.value for t in profile.crowding.vehicle_types.values()],
            "_area": [t.standing_area_m2.value for t in profile.crowding.vehicle_types.values()],
        },
        schema={"vehicle_type": pl.String, "_seats": pl.Int32, "_area": pl.Float64},
    )
    limit = float(profile.crowding.standees_max_per_m2.value)
    return (
        vehicles.select("vehicle_id", "vehicle_type", "n_seats", "standing_area_m2")
        .join(types, on="vehicle_type", how="left")
        .select(
            "vehicle_id",
            pl.coalesce("n_seats", "_seats").cast(pl.Int32).alias("n_seats"),
            pl.coalesce("standing_area_m2", "_area").cast(pl.Float64).alias("standing_area_m2"),
        )
        .with_columns(
            (pl.col("n_seats") + (pl.col("standing_area_m2") * limit).floor())
            .cast(pl.Int32)
            .alias("capacity")
        )
    )


def compute_live_loads(boardings: pl.DataFrame, vehicles: pl.DataFrame) -> pl.DataFrame:
    """Expected passengers aboard each vehicle now.

    `boardings`: vehicle_id, trip_id, board_dist_m (one row per tap on the trip).
    `vehicles`: vehicle_id, trip_id, dist_m (position now), end_dist_m (trip's last stop).
    Output: vehicle_id, load (expected passengers aboard, float).
    """
    share = (
        (pl.col("end_dist_m") - pl.col("dist_m"))
        / (pl.col("end_dist_m") - pl.col("board_dist_m")).clip(lower_bound=1.0)
    ).clip(0.0, 1.0)
    return (
        vehicles.select("vehicle_id", "trip_id", "dist_m", "end_dist_m")
        .join(boardings, on=["vehicle_id", "trip_id"])
        .group_by("vehicle_id")
        .agg(share.sum().alias("load"))
    )


def compute_occupancy(
    loads: pl.DataFrame, capacity: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """GTFS-RT occupancy from the load, with the profile's `[occupancy]` mapping.

    `loads`: vehicle_id, load. Output: vehicle_id, load, standees_per_m2 (max(0, load - seats)
    / standing area), occupancy_status (EMPTY below one passenger; MANY_SEATS_AVAILABLE under
    `many_seats_below_seat_ratio` of the seats; FEW_SEATS_AVAILABLE under
    `few_seats_below_seat_ratio`; STANDING_ROOM_ONLY while the standees stay under
    `crushed_standing_above_limit_ratio` x the standing limit; CRUSHED_STANDING_ROOM_ONLY up to
    the limit itself; FULL above it) and occupancy_percentage (load / capacity, %, may pass 100).
    Vehicles without a register entry get no occupancy.
    """
    occ = profile.occupancy
    limit = float(profile.crowding.standees_max_per_m2.value)
    crushed = limit * float(occ.crushed_standing_above_limit_ratio.value)
    seats_ratio = pl.col("load") / pl.col("n_seats").cast(pl.Float64)
    density = (pl.col("load") - pl.col("n_seats")).clip(lower_bound=0.0) / pl.col(
        "standing_area_m2"
    ).clip(lower_bound=0.1)
    return (
        loads.join(capacity, on="vehicle_id")
        .with_columns(density.alias("standees_per_m2"))
        .with_columns(
            pl.when(pl.col("load") < 1.0)
            .then(pl.lit("EMPTY"))
            .when(seats_ratio < float(occ.many_seats_below_seat_ratio.value))
            .then(pl.lit("MANY_SEATS_AVAILABLE"))
            .when(seats_ratio < float(occ.few_seats_below_seat_ratio.value))
            .then(pl.lit("FEW_SEATS_AVAILABLE"))
            .when(pl.col("standees_per_m2") < min(crushed, limit))
            .then(pl.lit("STANDING_ROOM_ONLY"))
            .when(pl.col("standees_per_m2") <= limit)
            .then(pl.lit("CRUSHED_STANDING_ROOM_ONLY"))
            .otherwise(pl.lit("FULL"))
            .alias("occupancy_status"),
            (100.0 * pl.col("load") / pl.col("capacity").clip(lower_bound=1))
            .round()
            .cast(pl.Int32)
            .alias("occupancy_percentage"),
        )
        .select("vehicle_id", "load", "standees_per_m2", "occupancy_status", "occupancy_percentage")
    )
