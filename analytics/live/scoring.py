"""How well the live engine did, scored after the fact: the stability of its trip assignment
(flip rate) and, in `analytics.live.accuracy`, its published predictions against stop visits."""

from __future__ import annotations

import polars as pl


def compute_flip_rate(assigned: pl.DataFrame, window_s: float) -> dict[str, float]:
    """Flips of the online assignment: a vehicle moved off trip A (to another trip or to none)
    and back onto A within `window_s` seconds.

    `assigned`: one row per vehicle and published update: vehicle_id, trip_id (null: on no
    trip), made_s (epoch s of the update). Output: n_vehicle_batches (rows), n_changes
    (updates whose trip differs from the vehicle's previous update), n_flips (excursions off a
    trip that came back to it within the window), flip_rate (n_flips / n_changes: the share of
    changes that were undone), flips_per_vehicle_hour.
    """
    seq = assigned.sort("vehicle_id", "made_s").with_columns(
        (
            pl.col("trip_id").ne_missing(pl.col("trip_id").shift(1)).over("vehicle_id")
            # a vehicle's first update changes nothing
            & (pl.int_range(pl.len()).over("vehicle_id") > 0)
        ).alias("_change")
    )
    n_changes = int(seq["_change"].sum())
    # runs of equal assignment per vehicle
    segments = (
        seq.with_columns(pl.col("_change").cum_sum().over("vehicle_id").alias("_seg"))
        .group_by("vehicle_id", "_seg")
        .agg(
            pl.col("trip_id").first(),
            pl.col("made_s").min().alias("_first_s"),
            pl.col("made_s").max().alias("_last_s"),
        )
        .sort("vehicle_id", "_seg")
    )
    flips = segments.with_columns(
        pl.col("trip_id").shift(1).over("vehicle_id").alias("_before"),
        pl.col("trip_id").shift(-1).over("vehicle_id").alias("_after"),
        pl.col("_last_s").shift(1).over("vehicle_id").alias("_left_s"),
        pl.col("_first_s").shift(-1).over("vehicle_id").alias("_back_s"),
    ).filter(
        pl.col("_before").is_not_null()
        & (pl.col("_before") == pl.col("_after"))
        & (pl.col("_back_s") - pl.col("_left_s") <= window_s)
    )
    span_h = (
        float(
            seq.group_by("vehicle_id")
            .agg((pl.col("made_s").max() - pl.col("made_s").min()).alias("_s"))["_s"]
            .sum()
        )
        / 3600.0
    )
    return {
        "n_vehicle_batches": float(seq.height),
        "n_changes": float(n_changes),
        "n_flips": float(flips.height),
        "flip_rate": flips.height / n_changes if n_changes else 0.0,
        "flips_per_vehicle_hour": flips.height / span_h if span_h else 0.0,
    }
