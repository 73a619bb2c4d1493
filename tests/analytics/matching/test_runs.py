"""Runs: which of a vehicle's concurrent stretches survive (dominance, turnarounds)."""

from __future__ import annotations

import numpy as np
import polars as pl

from analytics.matching.options import MatchOptions
from analytics.matching.runs import _by_vehicle_run_row, _drop_dominated


def test_turnaround_needs_the_runs_to_meet_at_that_terminal() -> None:
    # L1's two directions as stretches of one vehicle, pings as (s, m along the shape): S1 out
    # stops 150 m short of its end, S2 back starts there; they share the 200 s of layover
    # fixes, neither progressing meanwhile: consecutive, both kept
    shapes = pl.DataFrame(
        {"start_x_m": [0.0, 5000.0], "start_y_m": 0.0, "end_x_m": [5000.0, 0.0], "end_y_m": 0.0}
    )

    def stretches(*runs: tuple[int, list[tuple[int, int]]]) -> tuple[pl.DataFrame, pl.DataFrame]:
        mid = pl.DataFrame(
            [(k, shape, t, float(d)) for k, (shape, pings) in enumerate(runs) for t, d in pings],
            schema=["stretch_index", "shape_idx", "t_s", "dist_m"],
            orient="row",
        ).with_columns(
            pl.col("stretch_index", "shape_idx").cast(pl.Int32), pl.col("t_s").cast(pl.Float64)
        )
        stats = mid.group_by("stretch_index", "shape_idx", maintain_order=True).agg(
            pl.lit("V").alias("vehicle_id"),
            pl.lit(0, pl.Int64).alias("vehicle_rank"),
            pl.col("t_s").first().alias("first_s"),
            pl.col("t_s").last().alias("last_s"),
            pl.col("dist_m").first().alias("first_dist_m"),
            pl.col("dist_m").max().alias("max_dist_m"),
            (pl.col("dist_m").max() - pl.col("dist_m").first()).alias("distance_run_m"),
            pl.lit(0.0).alias("origin_dist_m"),
            pl.lit(5000.0).alias("destination_dist_m"),
        )
        return stats, mid

    out = [(0, 200), (200, 1800), (400, 3400), (600, 4790), (700, 4850), (800, 4845), (900, 4850)]
    back = [(700, 150), (800, 155), (900, 150), (1000, 600), (1200, 2200), (1400, 3800)]
    kept = _drop_dominated(*stretches((0, out), (1, back)), shapes, MatchOptions())
    assert kept["shape_idx"].to_list() == [0, 1]
    # the same geometry met at the other terminal: a fragment of S2 near its start (x = 4 800
    # to 4 300) then one of S1 near its end, sharing 200 s of fixes. S2 ends where S1 starts,
    # but the runs do not meet there: concurrent, the one that went further wins
    s2 = [(0, 200), (300, 400), (600, 650), (700, 700), (800, 690), (900, 700)]
    s1 = [(700, 4200), (800, 4210), (900, 4200), (1000, 4500), (1200, 4800)]
    kept = _drop_dominated(*stretches((1, s2), (0, s1)), shapes, MatchOptions())
    assert kept["shape_idx"].to_list() == [0]


def test_the_track_order_is_vehicle_run_row() -> None:
    """`_by_vehicle_run_row` sorts a run's points by one packed integer key: the rows of the
    plain sort by (vehicle rank of the row, run_index, row), runs of a vehicle interleaved and
    a ping in two runs included."""
    rng = np.random.default_rng(11)
    n_pings = 500
    # rows numbered by vehicle then time: the vehicle rank is non-decreasing in the row
    vehicle_rank = pl.Series("vehicle_rank", np.sort(rng.integers(0, 12, n_pings)), pl.Int64)
    rows = rng.integers(0, n_pings, 3_000)
    points = pl.DataFrame(
        {
            "run_index": rng.integers(0, 9, rows.size).astype(np.int32),
            "row": rows.astype(np.int64),
            "t_s": rng.random(rows.size),
        }
    ).unique(["run_index", "row"], keep="first", maintain_order=True)
    expected = (
        points.with_columns(vehicle_rank.gather(points["row"]).alias("_v"))
        .sort("_v", "run_index", "row")
        .drop("_v")
    )
    assert _by_vehicle_run_row(points, vehicle_rank).equals(expected)
    assert _by_vehicle_run_row(points.clear(), vehicle_rank).height == 0
