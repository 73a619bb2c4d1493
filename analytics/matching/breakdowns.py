"""Breakdowns: declared by an AVL event code or an incident, or inferred from the trace.

Inferred: the vehicle stands still (every step within `stationary_radius_m`) for at least the
profile's `breakdown_stop_min_s`, away from stops and terminals, during a run that never
reaches its destination. Each breakdown carries its evidence (ping ids, words).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
import polars as pl
from scipy.spatial import cKDTree

from analytics.matching.frames import BREAKDOWN_STANDS
from analytics.matching.kernel_arrays import to_kernel_array
from analytics.matching.network import Network
from analytics.matching.options import MatchOptions


class Stands(NamedTuple):
    """What `_stands` returns, one entry per stand."""

    first_ping: np.ndarray
    """row of its first ping"""
    last_ping: np.ndarray
    """row of its last ping"""
    means: np.ndarray
    """(values x stands) mean of each row of the values over its pings (NaN: none)"""


SOURCE_RANK = {"event_code": 0, "incident": 1, "inferred": 2}
COLUMNS = BREAKDOWN_STANDS.column_names


def find_stands(
    pings: pl.DataFrame, network: Network, options: MatchOptions, breakdown_stop_min_s: float
) -> pl.DataFrame:
    """Breakdown evidence in a batch of vehicles' pings, before any run is matched: long stands
    away from stops and terminals (`source` 'inferred') and AVL breakdown event codes
    ('event_code'): `BREAKDOWN_STANDS`. Small: a batch's pings need not be kept for it.

    `pings`: cleaned pings in their order, by vehicle then time (vehicle_id, vehicle_rank,
    ping_id, t_s, x_m, y_m, lat, lon, event_code; see `clean_pings`).
    """
    parts = [_inferred(pings, network, options, breakdown_stop_min_s).select(COLUMNS)]
    if "event_code" in pings.columns:
        ev = pings.filter(pl.col("event_code").is_in(list(options.breakdown_event_codes)))
        parts.append(
            ev.select(
                "vehicle_id",
                pl.col("t_s").alias("started_s"),
                pl.lit(None, pl.Float64).alias("ended_s"),
                pl.lit("event_code").alias("source"),
                pl.lit(None, pl.String).alias("incident_id"),
                "lat",
                "lon",
                pl.col("ping_id").alias("first_ping_id"),
                pl.col("ping_id").alias("last_ping_id"),
                pl.format("código de evento AVL '{}' no ping {}", "event_code", "ping_id").alias(
                    "evidence"
                ),
            )
        )
    return BREAKDOWN_STANDS.conform(
        pl.concat(
            [p.cast({"lat": pl.Float64, "lon": pl.Float64, "ended_s": pl.Float64}) for p in parts],
            how="vertical_relaxed",
        )
    )


def find_breakdowns(
    stands: pl.DataFrame,
    runs: pl.DataFrame,
    incidents: pl.DataFrame,
    options: MatchOptions,
) -> pl.DataFrame:
    """Breakdowns of the day: vehicle_id, started_s, ended_s, source, run_index, trip_id,
    incident_id, lat/lon of the place, first/last_ping_id, evidence (pt-BR).

    `stands`: `find_stands` of every batch. `runs`: matched runs. `incidents`: the incidents
    table rows of the day. At most one breakdown per run (an event code wins over an incident,
    which wins over an inference); declared breakdowns outside any run are kept without a run.
    """
    parts = [stands.select(COLUMNS)]
    inc = incidents.filter((pl.col("kind") == "breakdown") & pl.col("vehicle_id").is_not_null())
    if inc.height:
        parts.append(
            inc.select(
                "vehicle_id",
                (pl.col("starts_at").dt.epoch("us") / 1e6).alias("started_s"),
                (pl.col("ends_at").dt.epoch("us") / 1e6).alias("ended_s"),
                pl.lit("incident").alias("source"),
                "incident_id",
                pl.lit(None, pl.Float64).alias("lat"),
                pl.lit(None, pl.Float64).alias("lon"),
                pl.lit(None, pl.Int64).alias("first_ping_id"),
                pl.lit(None, pl.Int64).alias("last_ping_id"),
                pl.format("ocorrência de avaria {}", "incident_id").alias("evidence"),
            )
        )
    found = pl.concat(
        [p.cast({"lat": pl.Float64, "lon": pl.Float64, "ended_s": pl.Float64}) for p in parts],
        how="vertical_relaxed",
    )
    # attach to the run in progress (or just ended) when it happened
    r = runs.select("vehicle_id", "run_index", "trip_id", "first_s", "last_s", "is_arrived")
    with_run = (
        found.with_row_index("breakdown_row")
        .join(r, on="vehicle_id", how="left")
        .filter(
            pl.col("started_s").is_between(
                pl.col("first_s") - 60.0, pl.col("last_s") + options.gap_s
            )
        )
        .sort("breakdown_row", "first_s", descending=[False, True])
        .unique("breakdown_row", keep="first")
        .select("breakdown_row", "run_index", "trip_id", "is_arrived")
    )
    found = found.with_row_index("breakdown_row").join(with_run, on="breakdown_row", how="left")
    # an inferred stop only counts inside a run that never arrived
    found = found.filter(
        (pl.col("source") != "inferred")
        | (pl.col("run_index").is_not_null() & ~pl.col("is_arrived").fill_null(True))
    )
    found = found.with_columns(
        pl.col("source").replace_strict(SOURCE_RANK, return_dtype=pl.Int32).alias("source_rank")
    )
    in_run = (
        found.filter(pl.col("run_index").is_not_null())
        .sort("source_rank", "started_s")
        .unique(["vehicle_id", "run_index"], keep="first")
    )
    loose = found.filter(pl.col("run_index").is_null())
    out = (
        pl.concat([in_run, loose])
        .sort("vehicle_id", "started_s")
        .unique(["vehicle_id", "started_s"], keep="first")
    )
    return out.drop("breakdown_row", "source_rank", "is_arrived")


def _inferred(
    pings: pl.DataFrame, network: Network, options: MatchOptions, min_s: float
) -> pl.DataFrame:
    def f64(name: str) -> np.ndarray:
        return to_kernel_array(pings[name])

    first, last, means = _stands(
        vehicle_rank=to_kernel_array(pings["vehicle_rank"], pl.Int64),
        t_s=f64("t_s"),
        values=np.stack([f64("x_m"), f64("y_m"), f64("lat"), f64("lon")]),
        stationary_radius_m=options.stationary_radius_m,
        stand_min_s=min_s,
    )
    stands = pl.DataFrame(
        {
            "vehicle_id": pings["vehicle_id"].gather(first),
            "started_s": pings["t_s"].gather(first),
            "ended_s": pings["t_s"].gather(last),
            **{
                name: pl.Series(name, means[k], nan_to_null=True)
                for k, name in enumerate(("x_m", "y_m", "lat", "lon"))
            },
            "first_ping_id": pings["ping_id"].gather(first),
            "last_ping_id": pings["ping_id"].gather(last),
            "n": pl.Series("n", last - first + 1, pl.UInt32),
        }
    )
    xy = stands.select("x_m", "y_m").to_numpy()
    far = np.ones(len(xy), dtype=bool)
    if len(xy) and network.stop_tree is not None:  # a stand's position: its pings' mean
        d, _ = network.stop_tree.query(xy, k=1)
        far &= d > options.breakdown_clear_of_stop_m
    if len(xy):
        sh = network.shapes
        ends = np.r_[
            sh.select("start_x_m", "start_y_m").to_numpy(),
            sh.select("end_x_m", "end_y_m").to_numpy(),
        ]
        d, _ = cKDTree(ends).query(xy, k=1)
        far &= d > options.terminal_radius_m
    return stands.filter(pl.Series(far)).with_columns(
        pl.lit("inferred").alias("source"),
        pl.lit(None, pl.String).alias("incident_id"),
        pl.format(
            "parado {} min longe de paradas e terminais ({} pings), viagem não concluída",
            ((pl.col("ended_s") - pl.col("started_s")) / 60).round(0).cast(pl.Int64),
            "n",
        ).alias("evidence"),
    )


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _stands(
    vehicle_rank, t_s, values, stationary_radius_m, stand_min_s
):  # pragma: no cover - compiled
    """Stands in pings (`vehicle_rank`, `t_s`) sorted by vehicle and time: stretches whose
    every step (from the vehicle's previous ping) stays within `stationary_radius_m`, lasting
    at least `stand_min_s`. Returns `Stands`: their first and last ping and the mean of each
    row of `values` (x, y, lat, lon; NaN skipped) over their pings."""
    n = t_s.shape[0]
    first = []
    last = []
    lo = 0
    for i in range(1, n + 1):
        if i < n and vehicle_rank[i] == vehicle_rank[i - 1]:
            dx = values[0, i] - values[0, i - 1]
            dy = values[1, i] - values[1, i - 1]
            if not np.sqrt(dx * dx + dy * dy) > stationary_radius_m:
                continue
        if t_s[i - 1] - t_s[lo] >= stand_min_s:
            first.append(lo)
            last.append(i - 1)
        lo = i
    a = np.array(first, np.int64)
    b = np.array(last, np.int64)
    means = np.full((values.shape[0], a.shape[0]), np.nan)
    for k in range(a.shape[0]):
        for r in range(values.shape[0]):
            total = 0.0
            count = 0
            for i in range(a[k], b[k] + 1):
                if values[r, i] == values[r, i]:
                    total += values[r, i]
                    count += 1
            if count:
                means[r, k] = total / count
    return Stands(a, b, means)
