"""A hand-built track for the crossing and stop visit tests: two runs, one standing at 200 m."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from analytics.matching.crossings import build_track

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
T0_S = T0.timestamp()


def hand_track() -> pl.DataFrame:
    """Run V1/0 stands at 200 m from 20 s to 40 s; run V2/0 moves steadily at 10 m/s."""
    v1 = [(0, 0.0), (10, 100.0), (20, 200.0), (30, 200.0), (40, 200.0), (50, 300.0)]
    rows = [("V1", 0, t, p) for t, p in v1] + [("V2", 0, t, 10.0 * t) for t in range(0, 60, 10)]
    raw = pl.DataFrame(
        {
            "vehicle_id": [r[0] for r in rows],
            "run_index": pl.Series([r[1] for r in rows], dtype=pl.Int32),
            "t_s": [T0_S + r[2] for r in rows],
            "prog_m": [float(r[3]) for r in rows],
        }
    )
    return build_track(raw, ["vehicle_id", "run_index"])
