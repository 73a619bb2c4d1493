"""Crossings: when a track passed a position, by the rule stated on frames, and the array
search of stop visits checked against it."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from analytics.matching.crossings import compute_crossings
from analytics.matching.stop_visits import (
    RUN_POSITION,
    bisect_slices,
    build_track_slices,
    compute_run_crossings,
)
from tests.analytics.matching.hand_track import hand_track


def test_crossings_follow_the_rule_of_analytics_crossings() -> None:
    # any row order, pings standing at one place included: the same instants as the
    # frame-based rule, which takes such pings in the order the track lists them
    track = hand_track()
    track = track[np.random.default_rng(3).permutation(track.height)]
    key = ["vehicle_id", "run_index"]
    targets = pl.DataFrame(
        {
            "vehicle_id": ["V1"] * 6 + ["V2"] * 3 + ["V9"],
            "run_index": pl.Series([0] * 10, dtype=pl.Int32),
            "target_m": [0.0, 99.0, 150.0, 200.0, 275.0, 350.0, 0.0, 250.0, 600.0, 10.0],
        }
    )
    want = compute_crossings(track, targets, key, 25.0)
    index = targets.select(key).unique(maintain_order=True).with_row_index(RUN_POSITION)
    run = targets.join(index, on=key, maintain_order="left")[RUN_POSITION].to_numpy()
    got = compute_run_crossings(
        build_track_slices(track, index), run, targets["target_m"].to_numpy(), 25.0
    ).with_columns(pl.min_horizontal("arrive_s", "leave_s").alias("arrive_s"))
    assert_frame_equal(got, want.select("arrive_s", "leave_s", "nearest_ping_m"))


def test_slice_search_is_searchsorted_within_each_slice() -> None:
    # slices of repeated positions (a halted bus), an empty slice, queries on, between,
    # before and past the fixes, and NaN (past every fix, as np.searchsorted places it)
    rng = np.random.default_rng(7)
    prog = np.concatenate(
        [np.sort(rng.choice([0.0, 5.0, 5.0, 12.5, 40.0], 9)), np.sort(rng.uniform(0, 90, 30))]
    )
    prog.flags.writeable = False
    bounds = [(0, 9), (9, 39), (20, 20), (9, 12)]
    queries = [-1.0, 0.0, 5.0, 12.5, 13.0, 40.0, 41.0, 90.0, float("nan"), *rng.uniform(0, 90, 20)]
    lo = np.repeat([a for a, _ in bounds], len(queries))
    hi = np.repeat([b for _, b in bounds], len(queries))
    x = np.tile(np.array(queries, np.float64), len(bounds))
    for side in ("left", "right"):
        got = bisect_slices(prog, lo, hi, x, side == "right")
        want = [
            int(lo[i]) + int(np.searchsorted(prog[lo[i] : hi[i]], x[i], side=side))
            for i in range(x.size)
        ]
        assert got.tolist() == want
