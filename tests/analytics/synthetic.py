"""A tiny hand-built network and traces for the matching tests (frames, no files).

Line L1 runs east along y = 0 from x = 0 to x = 5 000 m (shape S1, direction 0) and back west
(shape S2, direction 1); stops every 500 m. Line L2 (shape S3) shares L1's corridor from
x = 2 000 m and turns north at x = 4 000 m to (4 000, 3 000). Times are seconds after
2026-03-02 00:00 local (03:00 UTC).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl

SERVICE_DATE = date(2026, 3, 2)
REF = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)


def _line(points: list[tuple[float, float]], step: float = 100.0) -> np.ndarray:
    out = []
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        n = int(np.hypot(x1 - x0, y1 - y0) // step)
        t = np.arange(n) / n
        out.append(np.c_[x0 + t * (x1 - x0), y0 + t * (y1 - y0)])
    out.append(np.array([points[-1]]))
    return np.concatenate(out)


GEOMETRY = {
    "S1": _line([(0, 0), (5000, 0)]),
    "S2": _line([(5000, 0), (0, 0)]),
    "S3": _line([(2000, 0), (4000, 0), (4000, 3000)]),
}
SHAPE_ROUTE = {"S1": ("L1", 0), "S2": ("L1", 1), "S3": ("L2", 0)}
SPEED_M_S = 8.0


def shapes() -> pl.DataFrame:
    rows = []
    for sid, xy in GEOMETRY.items():
        d = np.r_[0, np.cumsum(np.hypot(*np.diff(xy, axis=0).T))]
        for i, ((x, y), dd) in enumerate(zip(xy, d, strict=True)):
            rows.append((sid, i + 1, float(x), float(y), float(dd)))
    return pl.DataFrame(
        rows,
        schema=["shape_id", "shape_pt_sequence", "shape_x_m", "shape_y_m", "shape_dist_m"],
        orient="row",
    )


def _stops_of(sid: str) -> list[tuple[str, float, float, float]]:
    xy = GEOMETRY[sid]
    d = np.r_[0, np.cumsum(np.hypot(*np.diff(xy, axis=0).T))]
    out = []
    for dist in np.arange(0, d[-1] + 1, 500.0):
        x = float(np.interp(dist, d, xy[:, 0]))
        y = float(np.interp(dist, d, xy[:, 1]))
        out.append((f"P{round(x)}_{round(y)}", x, y, float(dist)))
    return out


def stops() -> pl.DataFrame:
    seen = {}
    for sid in GEOMETRY:
        for stop_id, x, y, _ in _stops_of(sid):
            seen[stop_id] = (stop_id, x, y)
    return pl.DataFrame(
        list(seen.values()), schema=["stop_id", "stop_x_m", "stop_y_m"], orient="row"
    )


def schedule(trips: list[tuple[str, str, str, int]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(scheduled_trips, stop_times) for trips given as (trip_id, shape_id, block_id, start_s)."""
    trows, strows = [], []
    for trip_id, sid, block, start in trips:
        st = _stops_of(sid)
        length = st[-1][3]
        dur = int(length / SPEED_M_S) + 20 * (len(st) - 2)
        route, direction = SHAPE_ROUTE[sid]
        trows.append(
            dict(
                service_date=SERVICE_DATE,
                trip_id=trip_id,
                template_trip_id=trip_id,
                route_id=route,
                direction_id=direction,
                block_id=block,
                shape_id=sid,
                service_id="WK",
                planned_start_s=start,
                planned_end_s=start + dur,
                planned_start_at=REF + timedelta(seconds=start),
                planned_end_at=REF + timedelta(seconds=start + dur),
                planned_distance_m=length,
                first_stop_id=st[0][0],
                last_stop_id=st[-1][0],
                n_stops=len(st),
                headway_s=None,
                is_exact_times=True,
            )
        )
        for i, (stop_id, _, _, dist) in enumerate(st):
            tt = start + int(dist / SPEED_M_S) + 20 * max(i - 1, 0)
            strows.append(
                (trip_id, i + 1, stop_id, tt, tt + (20 if 0 < i < len(st) - 1 else 0), float(dist))
            )
    st_df = pl.DataFrame(
        strows,
        schema=[
            "trip_id",
            "stop_sequence",
            "stop_id",
            "arrival_time_s",
            "departure_time_s",
            "shape_dist_m",
        ],
        orient="row",
    ).with_columns(pl.col("stop_sequence", "arrival_time_s", "departure_time_s").cast(pl.Int32))
    return pl.DataFrame(trows), st_df


def drive(
    vehicle_id: str,
    legs: Sequence[tuple[str, float, float | None, float]],
    *,
    interval_s: float = 30.0,
    sigma_m: float = 8.0,
    seed: int = 0,
    first_ping_id: int = 1,
    t0: float | None = None,
    t1: float | None = None,
) -> pl.DataFrame:
    """Pings of a vehicle driving `legs` = (shape_id, depart_s, stop_at_dist_m or None, stand_s).

    Between legs the vehicle stands where the last leg ended. A leg with `stop_at_dist_m` stops
    there (short-turn or breakdown) and stands for `stand_s`. Pings every `interval_s` from t0
    to t1 with Gaussian noise `sigma_m`.
    """
    rng = np.random.default_rng(seed)
    starts = [leg[1] for leg in legs]
    t0 = starts[0] - 300 if t0 is None else t0
    t1 = t1 if t1 is not None else starts[-1] + 3000
    times = np.arange(t0, t1, interval_s)
    xs, ys = np.empty_like(times), np.empty_like(times)
    for k, t in enumerate(times):
        # the leg in force: the last one departed, else stand at the first origin
        idx = max([i for i, s in enumerate(starts) if s <= t], default=0)
        sid, dep, stop_at, _ = legs[idx]
        xy = GEOMETRY[sid]
        d = np.r_[0, np.cumsum(np.hypot(*np.diff(xy, axis=0).T))]
        # 20 s dwell at each intermediate stop (every 500 m)
        el = max(t - dep, 0.0)
        pos = 0.0
        cycle = 500.0 / SPEED_M_S + 20.0
        n_full = el // cycle
        rem = el - n_full * cycle
        pos = n_full * 500.0 + min(rem * SPEED_M_S, 500.0)
        pos = min(pos, d[-1], stop_at if stop_at is not None else d[-1])
        xs[k] = np.interp(pos, d, xy[:, 0])
        ys[k] = np.interp(pos, d, xy[:, 1])
    xs += rng.normal(0, sigma_m, len(times))
    ys += rng.normal(0, sigma_m, len(times))
    n = len(times)
    return pl.DataFrame(
        {
            "ping_id": np.arange(first_ping_id, first_ping_id + n, dtype=np.int64),
            "vehicle_id": [vehicle_id] * n,
            "event_at": [REF + timedelta(seconds=float(t)) for t in times],
            "x_m": xs,
            "y_m": ys,
        }
    ).with_columns(pl.col("event_at").dt.cast_time_unit("us"))


def true_departure(depart_s: float) -> datetime:
    return REF + timedelta(seconds=depart_s)
