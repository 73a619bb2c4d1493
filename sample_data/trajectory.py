"""True movement: stop plan, true stop times, and the legs each vehicle drives.

A *leg* is uniform motion along one path between two instants: (piece, t0, t1, path, d0, d1).
Between legs the vehicle stands still where the last leg ended (dwell at a stop, layover at a
terminal, a breakdown on the road, parked at the garage). A *piece* is a vehicle's continuous
time in service: garage -> deadhead -> trips -> deadhead -> garage (trippers have two).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from sample_data.network import Paths, densify, detour_polyline
from sample_data.operation import _DEADHEAD_MARGIN_S, _GARAGE_GAP_S
from sample_data.options import SimulationOptions
from sample_data.timetable import Timetable

_DETOUR_SKIPPED_STOPS = 2
_DETOUR_AT = 0.35


def build_plan(trips: pl.DataFrame, tt: Timetable) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One row per (trip, stop): shape_id, stop_sequence, stop_id, dist_m, planned_time (Unix s),
    operated, visited (false for stops skipped by a detour or after a breakdown), n_stops,
    detour range and the breakdown's segment (`break_seq`: the last stop reached)."""
    pat = tt.patterns.with_columns(n_stops=pl.len().over("shape_id"))
    detour = (
        pat.group_by("shape_id")
        .agg(n_stops=pl.first("n_stops"))
        .with_columns(
            detour_a=(pl.col("n_stops") * _DETOUR_AT).floor().cast(pl.Int32).clip(lower_bound=2),
        )
        .with_columns(detour_b=pl.col("detour_a") + _DETOUR_SKIPPED_STOPS + 1)
    )
    t = (
        trips.join(detour.select("shape_id", "detour_a", "detour_b"), on="shape_id", how="left")
        .with_columns(
            operated=pl.col("vehicle_id").is_not_null(),
            is_detour=(
                (pl.col("injected") == "detour") & pl.col("vehicle_id").is_not_null()
            ).fill_null(False),
        )
        .join(pat.group_by("shape_id").agg(n_stops=pl.len()), on="shape_id")
        .with_columns(
            is_detour=pl.col("is_detour") & (pl.col("detour_b") < pl.col("n_stops")),
            break_seq=pl.when(
                (pl.col("injected") == "breakdown") & pl.col("vehicle_id").is_not_null()
            )
            .then((2 + pl.col("u_seg") * (pl.col("n_stops") - 2)).floor().cast(pl.Int32))
            .otherwise(None),
        )
    )
    plan = t.select(
        "tkey",
        "service_date",
        "route_id",
        "direction_id",
        "shape_id",
        "planned_start",
        "run_s",
        "planned_distance_m",
        "operated",
        "is_detour",
        "detour_a",
        "detour_b",
        "break_seq",
    ).join(pat.select("shape_id", "stop_sequence", "stop_id", "dist_m"), on="shape_id")
    skipped = (
        pl.col("is_detour")
        & (pl.col("stop_sequence") > pl.col("detour_a"))
        & (pl.col("stop_sequence") < pl.col("detour_b"))
    )
    after_break = pl.col("break_seq").is_not_null() & (
        pl.col("stop_sequence") > pl.col("break_seq")
    )
    return plan.with_columns(
        planned_time=(
            pl.col("planned_start")
            + pl.col("run_s") * pl.col("dist_m") / pl.col("planned_distance_m")
        ).round(0),
        visited=pl.col("operated") & ~skipped & ~after_break,
    ).sort("tkey", "stop_sequence"), t.select(
        "tkey", "is_detour", "break_seq", "detour_a", "detour_b"
    )


@dataclass
class PathIndex:
    """Path ids: shapes first (`shape_path`), then one detour per shape, then deadheads."""

    paths: Paths
    shape_path: dict[str, int]
    detour_path: dict[str, int]
    detour_extra_m: dict[str, float]
    detour_ratio: dict[str, float]
    deadhead: pl.DataFrame  # operator_id, stop_id, out_path, back_path, length_m
    garages: pl.DataFrame  # operator_id, x_m, y_m
    links: pl.DataFrame  # prev_last_stop, first_stop, link_path, link_length_m


def build_paths(
    tt: Timetable, stops: pl.DataFrame, opts: SimulationOptions, trips: pl.DataFrame
) -> PathIndex:
    """Every drivable path: shapes, their detours (a parallel street for the skipped stops),
    garage <-> terminal deadheads (an L-shaped run off the itinerary) and the repositioning
    runs between a trip's last stop and the next trip's first when they differ (`trips`: the
    operation's trips, with vehicle_id, first_stop and last_stop)."""
    polylines: list[np.ndarray] = []
    shape_path, detour_path, extra, ratio = {}, {}, {}, {}
    shape_ids = sorted(tt.shapes)
    for sid in shape_ids:
        shape_path[sid] = len(polylines)
        polylines.append(tt.shapes[sid])
    pat = tt.patterns
    for sid in shape_ids:
        dist = pat.filter(pl.col("shape_id") == sid)["dist_m"].to_numpy()
        a = max(2, int(np.floor(len(dist) * _DETOUR_AT)))
        b = a + _DETOUR_SKIPPED_STOPS + 1
        a_m, b_m = dist[min(a, len(dist)) - 1], dist[min(b, len(dist)) - 1]
        poly = detour_polyline(tt.shapes[sid], a_m, b_m, opts.detour_offset_m)
        detour_path[sid] = len(polylines)
        polylines.append(poly)
        length = float(np.sum(np.hypot(*np.diff(poly, axis=0).T)))
        base = float(np.sum(np.hypot(*np.diff(tt.shapes[sid], axis=0).T)))
        extra[sid] = length - base
        ratio[sid] = (b_m - a_m + extra[sid]) / max(b_m - a_m, 1.0)
    terminals = (
        pat.filter(pl.col("stop_sequence") == 1)
        .select("shape_id", "stop_id")
        .join(tt.trips.select("shape_id", "route_id").unique(), on="shape_id")
    )
    ops = pl.DataFrame(
        {
            "route_id": [ln.route_id for ln in tt.lines],
            "operator_id": [ln.operator_id for ln in tt.lines],
        }
    )
    term = terminals.join(ops, on="route_id").join(
        stops.select("stop_id", "x_m", "y_m"), on="stop_id"
    )
    garages = (
        term.group_by("operator_id")
        .agg(pl.col("x_m").mean(), pl.col("y_m").mean())
        .with_columns(pl.col("x_m") + 700.0, pl.col("y_m") - 900.0)
        .sort("operator_id")
    )
    pairs = (
        term.select("operator_id", "stop_id", "x_m", "y_m")
        .unique(["operator_id", "stop_id"])
        .join(garages.rename({"x_m": "gx", "y_m": "gy"}), on="operator_id")
        .sort("operator_id", "stop_id")
    )
    out_ids, back_ids, lengths = [], [], []
    for gx, gy, x, y in pairs.select("gx", "gy", "x_m", "y_m").iter_rows():
        poly = densify(np.array([[gx, gy], [gx, y], [x, y]]), 100.0)
        out_ids.append(len(polylines))
        polylines.append(poly)
        back_ids.append(len(polylines))
        polylines.append(poly[::-1].copy())
        lengths.append(float(np.sum(np.hypot(*np.diff(poly, axis=0).T))))
    deadhead = pairs.select("operator_id", "stop_id").with_columns(
        out_path=pl.Series(out_ids, dtype=pl.Int64),
        back_path=pl.Series(back_ids, dtype=pl.Int64),
        dh_length_m=pl.Series(lengths),
    )
    xy = stops.select("stop_id", "x_m", "y_m")
    links = (
        trips.filter(pl.col("vehicle_id").is_not_null())
        .sort("vehicle_id", "planned_start")
        .with_columns(
            prev_last_stop=pl.col("last_stop").shift(1).over("vehicle_id", "service_date")
        )
        .filter(
            pl.col("prev_last_stop").is_not_null()
            & (pl.col("prev_last_stop") != pl.col("first_stop"))
        )
        .select("prev_last_stop", "first_stop")
        .unique()
        .sort("prev_last_stop", "first_stop")
        .join(
            xy.rename({"stop_id": "prev_last_stop", "x_m": "ax", "y_m": "ay"}), on="prev_last_stop"
        )
        .join(xy.rename({"stop_id": "first_stop", "x_m": "bx", "y_m": "by"}), on="first_stop")
    )
    link_ids, link_len = [], []
    for ax, ay, bx, by in links.select("ax", "ay", "bx", "by").iter_rows():
        poly = densify(np.array([[ax, ay], [bx, by]]), 100.0)
        link_ids.append(len(polylines))
        polylines.append(poly)
        link_len.append(float(np.hypot(bx - ax, by - ay)))
    links = links.select("prev_last_stop", "first_stop").with_columns(
        link_path=pl.Series(link_ids, dtype=pl.Int64),
        link_length_m=pl.Series(link_len, dtype=pl.Float64),
    )
    return PathIndex(
        Paths.build(polylines), shape_path, detour_path, extra, ratio, deadhead, garages, links
    )


def compute_times(
    trips: pl.DataFrame,
    plan: pl.DataFrame,
    loads: pl.DataFrame,
    pidx: PathIndex,
    opts: SimulationOptions,
    early_s: int,
    late_s: int,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """True times. Returns (trips with actual_start, actual_end, break_time, dev_s, ...;
    visits: tkey, stop_sequence, stop_id, dist_m, arrived, departed for visited stops)."""
    rng = np.random.default_rng([opts.seed, 6001])
    ops = trips.filter(pl.col("vehicle_id").is_not_null())
    p = (
        plan.filter(pl.col("operated"))
        .join(loads, on=["tkey", "stop_sequence"], how="left")
        .join(ops.select("tkey", "obstruction_delay_s", "u_frac"), on="tkey")
    )
    n = p.height
    trip_factor = ops.select(
        "tkey", tf=pl.Series(rng.lognormal(0.0, opts.travel_time_sigma, ops.height))
    )
    ratio = pl.col("shape_id").replace_strict(
        pidx.detour_ratio, default=1.0, return_dtype=pl.Float64
    )
    last = pl.col("stop_sequence") == pl.col("stop_sequence").max().over("tkey")
    p = (
        p.join(trip_factor, on="tkey")
        .with_columns(
            seg_noise=pl.Series(rng.lognormal(0.0, opts.travel_time_sigma / 2, n)),
        )
        .with_columns(
            # moving time to the next stop (the planned run time includes dwell: ~80 % is motion)
            seg_s=pl.when(last)
            .then(0.0)
            .otherwise(
                (pl.col("dist_m").shift(-1).over("tkey") - pl.col("dist_m"))
                / pl.col("planned_distance_m")
                * pl.col("run_s")
                * 0.8
                * pl.col("tf")
                * pl.col("seg_noise")
                * pl.when(
                    pl.col("is_detour")
                    & (pl.col("stop_sequence") >= pl.col("detour_a"))
                    & (pl.col("stop_sequence") < pl.col("detour_b"))
                )
                .then(ratio)
                .otherwise(1.0)
                + pl.when(
                    pl.col("stop_sequence") == (pl.col("stop_sequence").max().over("tkey") // 2)
                )
                .then(pl.col("obstruction_delay_s"))
                .otherwise(0.0)
            ),
            dwell_s=pl.when(~pl.col("visited"))
            .then(0.0)
            .when(
                (pl.col("n_boardings") + pl.col("n_alightings") > 0)
                | (pl.col("stop_sequence") == 1)
                | last
            )
            .then(
                opts.dwell_base_s
                + opts.dwell_per_boarding_s * pl.col("n_boardings")
                + opts.dwell_per_alighting_s * pl.col("n_alightings")
            )
            .otherwise(0.0),
        )
        .with_columns(pl.col("seg_s").round(0), pl.col("dwell_s").round(0))
    )
    first = pl.col("stop_sequence") == 1
    p = p.with_columns(
        arr_off=(
            pl.col("seg_s").shift(1).over("tkey").fill_null(0.0)
            + pl.when(first)
            .then(0.0)
            .otherwise(pl.col("dwell_s"))
            .shift(1)
            .over("tkey")
            .fill_null(0.0)
        )
        .cum_sum()
        .over("tkey")
        - pl.when(first).then(pl.col("dwell_s")).otherwise(0.0),
    ).with_columns(
        dep_off=pl.when(first).then(0.0).otherwise(pl.col("arr_off") + pl.col("dwell_s"))
    )
    ends = p.group_by("tkey").agg(
        dur=pl.col("arr_off").filter(last).first(),
        end_dwell=pl.col("dwell_s").filter(last).first(),
        break_off=(pl.col("dep_off") + pl.col("u_frac") * pl.col("seg_s"))
        .filter(pl.col("stop_sequence") == pl.col("break_seq"))
        .first(),
        break_dist=(
            pl.col("dist_m") + pl.col("u_frac") * (pl.col("dist_m").shift(-1) - pl.col("dist_m"))
        )
        .filter(pl.col("stop_sequence") == pl.col("break_seq"))
        .first(),
    )
    # departure deviation: injected early/late ones are placed beyond the profile's windows
    dev = (
        pl.when(pl.col("injected") == "early")
        .then(-(early_s + 30.0 + pl.col("u_dev") * 240.0))
        .when(pl.col("injected") == "late")
        .then(late_s + 60.0 + pl.col("u_dev") * 900.0)
        .otherwise(pl.col("dev_s"))
    )
    seq = (
        ops.join(ends, on="tkey")
        .with_columns(dev_s=dev)
        .sort("vehicle_id", "planned_start")
        .with_columns(
            gap=pl.col("planned_start") - pl.col("planned_end").shift(1).over("vehicle_id"),
        )
        .with_columns(
            new_piece=pl.col("gap").is_null() | (pl.col("gap") > _GARAGE_GAP_S),
        )
        .with_columns(piece=pl.col("new_piece").cum_sum().cast(pl.Int64) - 1)
        .with_columns(
            pos=pl.int_range(0, pl.len()).over("piece"),
            prev_last_stop=pl.col("last_stop").shift(1).over("piece"),
        )
        .join(pidx.links, on=["prev_last_stop", "first_stop"], how="left")
        .with_columns(repos_s=(pl.col("link_length_m") / opts.deadhead_speed_m_s).fill_null(0.0))
    )
    repos = seq["repos_s"].to_numpy()
    planned = seq["planned_start"].to_numpy()
    dev_a = seq["dev_s"].to_numpy()
    dur = seq["dur"].to_numpy()
    end_dwell = seq["end_dwell"].to_numpy()
    pos = seq["pos"].to_numpy()
    start = np.zeros(seq.height)
    end = np.zeros(seq.height)
    # the vehicle reaches the next origin only after leaving its last stop (and driving the
    # link): a busy origin's boarding dwell starts no earlier, whatever its length
    origin_floor = np.full(seq.height, -np.inf)
    for k in range(int(pos.max()) + 1 if seq.height else 0):
        idx = np.flatnonzero(pos == k)
        ready = (
            planned[idx] - _DEADHEAD_MARGIN_S
            if k == 0
            else end[idx - 1]
            + end_dwell[idx - 1]
            + np.maximum(opts.min_layover_s, repos[idx] + 60.0)
        )
        start[idx] = np.round(np.maximum(planned[idx] + dev_a[idx], ready))
        end[idx] = start[idx] + dur[idx]
        if k > 0:
            origin_floor[idx] = end[idx - 1] + end_dwell[idx - 1] + repos[idx]
    seq = seq.with_columns(
        actual_start=pl.Series(start),
        arrival=pl.Series(end),
        origin_floor=pl.Series(origin_floor),
    ).with_columns(
        break_time=pl.col("actual_start") + pl.col("break_off"),
        true_dev_s=pl.col("actual_start") - pl.col("planned_start"),
    )
    visits = (
        p.filter(pl.col("visited"))
        .join(seq.select("tkey", "actual_start", "origin_floor"), on="tkey")
        .select(
            "tkey",
            "stop_sequence",
            "stop_id",
            "dist_m",
            "shape_id",
            "is_detour",
            "detour_b",
            arrived=pl.when(pl.col("stop_sequence") == 1)
            .then(pl.max_horizontal(pl.col("actual_start") + pl.col("arr_off"), "origin_floor"))
            .otherwise(pl.col("actual_start") + pl.col("arr_off")),
            departed=pl.col("actual_start") + pl.col("dep_off"),
        )
    )
    return seq, visits


def add_halt_offsets(visits: pl.DataFrame, opts: SimulationOptions) -> pl.DataFrame:
    """`visits` (of `compute_times`) with `halt_m`: metres the bus stands past (+) or short of
    (-) the stop's point during its dwell (option `halt_offset_rate`); 0 at the trip's first
    and last stop, at a stop passed without a dwell and on a detour (its own path)."""
    rng = np.random.default_rng([opts.seed, 6020])
    visits = visits.sort("tkey", "stop_sequence")
    n = visits.height
    size = rng.uniform(*opts.halt_offset_m, n) * rng.choice([-1.0, 1.0], n)
    pick = rng.random(n) < opts.halt_offset_rate
    inner = visits.select(
        (pl.col("stop_sequence") > pl.col("stop_sequence").min().over("tkey"))
        & (pl.col("stop_sequence") < pl.col("stop_sequence").max().over("tkey"))
        & (pl.col("departed") > pl.col("arrived"))
        & ~pl.col("is_detour")
    ).to_series()
    return visits.with_columns(pl.Series("halt_m", np.where(pick & inner.to_numpy(), size, 0.0)))


def build_legs(
    seq: pl.DataFrame, visits: pl.DataFrame, pidx: PathIndex, opts: SimulationOptions
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Legs of every piece, and the pieces (piece, vehicle_id, operator_id, service_date,
    on_s, off_s: the unit's power window, Unix s). `visits` carry `halt_m`
    (`add_halt_offsets`): where the bus stands during each dwell."""
    shape_path = pl.col("shape_id").replace_strict(pidx.shape_path, return_dtype=pl.Int64)
    detour_path = pl.col("shape_id").replace_strict(pidx.detour_path, return_dtype=pl.Int64)
    extra = pl.col("shape_id").replace_strict(pidx.detour_extra_m, return_dtype=pl.Float64)
    v = (
        visits.join(seq.select("tkey", "piece", "vehicle_id"), on="tkey")
        .sort("tkey", "stop_sequence")
        .with_columns(
            path=pl.when(pl.col("is_detour")).then(detour_path).otherwise(shape_path),
            d=pl.when(pl.col("is_detour") & (pl.col("stop_sequence") >= pl.col("detour_b")))
            .then(pl.col("dist_m") + extra)
            .otherwise(pl.col("dist_m")),
        )
    )
    v = v.with_columns(pl.col("d") + pl.col("halt_m"))
    trip_legs = (
        v.with_columns(
            t1=pl.col("arrived").shift(-1).over("tkey"),
            d1=pl.col("d").shift(-1).over("tkey"),
        )
        .filter(pl.col("t1").is_not_null())
        .select("piece", t0="departed", t1="t1", path="path", d0="d", d1="d1")
    )
    broken = seq.filter(pl.col("break_time").is_not_null())
    last_visit = v.group_by("tkey").agg(
        pl.col("departed").last(), pl.col("d").last(), pl.col("path").last()
    )
    break_legs = broken.join(last_visit, on="tkey").select(
        "piece", t0="departed", t1="break_time", path="path", d0="d", d1="break_dist"
    )
    first = seq.filter(pl.col("pos") == 0)
    last = (
        seq.group_by("piece")
        .agg(pl.all().sort_by("pos").last())
        .filter(pl.col("break_time").is_null())
    )
    dh = pidx.deadhead
    out_legs = first.join(
        dh, left_on=["operator_id", "first_stop"], right_on=["operator_id", "stop_id"]
    ).select(
        "piece",
        t0=pl.col("planned_start")
        - _DEADHEAD_MARGIN_S
        - pl.col("dh_length_m") / opts.deadhead_speed_m_s,
        t1=pl.col("planned_start") - _DEADHEAD_MARGIN_S,
        path="out_path",
        d0=pl.lit(0.0),
        d1="dh_length_m",
    )
    back_legs = last.join(
        dh, left_on=["operator_id", "last_stop"], right_on=["operator_id", "stop_id"]
    ).select(
        "piece",
        t0=pl.col("arrival") + pl.col("end_dwell") + 60.0,
        t1=pl.col("arrival")
        + pl.col("end_dwell")
        + 60.0
        + pl.col("dh_length_m") / opts.deadhead_speed_m_s,
        path="back_path",
        d0=pl.lit(0.0),
        d1="dh_length_m",
    )
    link_legs = (
        seq.sort("piece", "pos")
        .with_columns(t0=(pl.col("arrival") + pl.col("end_dwell")).shift(1).over("piece") + 30.0)
        .filter(pl.col("link_path").is_not_null() & pl.col("t0").is_not_null())
        .select(
            "piece",
            "t0",
            t1=pl.col("t0") + pl.col("link_length_m") / opts.deadhead_speed_m_s,
            path="link_path",
            d0=pl.lit(0.0),
            d1="link_length_m",
        )
    )
    legs = pl.concat(
        [out_legs, trip_legs, break_legs, link_legs, back_legs], how="vertical_relaxed"
    ).sort("piece", "t0")
    pieces = (
        legs.group_by("piece")
        .agg(
            on_s=pl.col("t0").min() - opts.power_on_before_s,
            off_s=pl.col("t1").max() + opts.power_on_before_s,
        )
        .join(
            broken.select(
                "piece", brk=pl.col("break_time") + pl.col("u_frac") * 0 + pl.col("break_stand_s")
            ),
            on="piece",
            how="left",
        )
        .with_columns(off_s=pl.coalesce("brk", "off_s"))
        .join(
            seq.group_by("piece").agg(
                pl.first("vehicle_id"), pl.first("operator_id"), pl.first("service_date")
            ),
            on="piece",
        )
        .drop("brk")
        .sort("piece")
    )
    return legs, pieces
