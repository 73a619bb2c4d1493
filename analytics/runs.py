"""Cut a vehicle's trace into runs: stretches of forward progress along one shape.

Only shapes the vehicle made sustained progress along are considered (a grid city's crossings
drop out first). For each of them, each ping is *on* the shape (within the buffer),
*at a terminal* (on it and inside the geofence of its first or last point), or *off*. A run is
a maximal stretch of on-shape pings between terminals, broken by a step backwards (wrong
direction, short-turn) or by an off-shape or silent stretch longer than `detour_max_s`; shorter
off-shape stretches that rejoin ahead are detours inside the run. The terminal ping just before
a run shows it departed from the origin; the one just after shows it arrived. A run's distance
counts only progress made on its shape (detours and other lines' touch points cover nothing);
a run needs real observed progress and a few pings to exist. Runs along a shared corridor lose
to the run of the same vehicle, at the same time, that covered more of its own itinerary. The
stretches and their distances are cut by `analytics.stretches` (compiled per-group passes).
"""

from __future__ import annotations

import polars as pl

from analytics.crossings import (
    build_track,
    compute_crossings,
    cum_max_in_group,
    group_start,
)
from analytics.network import Network
from analytics.options import MatchOptions
from analytics.stretches import cut_stretches

RUN_KEY = ["vehicle_id", "run_id"]


def build_runs(
    pings: pl.DataFrame, cand: pl.DataFrame, network: Network, options: MatchOptions
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Runs of the pings (rows in time order per vehicle) given their shape candidates.

    `pings`: row, vehicle_id, ping_id, t_s, x_m, y_m (and optional reported_trip_id).
    `cand`: row, shape_idx, dist_m, offset_m (see `project_pings`).
    Returns (runs, run_pings). `runs` has one row per run: vehicle_id, run_id, shape_idx,
    shape_id, route_id, direction_id, start/end_dist_m, distance_run_m, length_m,
    coverage_ratio, is_departed, is_arrived, started_s, ended_s (epoch seconds),
    first/last_ping_id, n_pings, n_off_route, off_route_s, gps_completeness_ratio,
    reported_trip_id (the most reported trip, if any), alt_shapes (shapes with an equivalent
    run). `run_pings` has the pings of each run: vehicle_id, run_id, row, ping_id, t_s,
    prog_m (monotone position along the shape, metres).
    """
    shapes = network.shapes
    # windows on frames sorted by group, as shifts masked at group starts: Polars' `over` on
    # thousands of (vehicle, shape) groups costs several times more
    t = pl.col("t_s")
    same_prev = pl.col("_v") == pl.col("_v").shift(1)
    same_next = pl.col("_v") == pl.col("_v").shift(-1)
    pings = (
        pings.sort("row")
        .with_columns(pl.col("vehicle_id").rank("dense").cast(pl.Int64).alias("_v"))
        .with_columns(
            # time to the vehicle's neighbouring pings, on the shape or not (a detour's ends)
            pl.when(same_prev).then(t - t.shift(1)).alias("_dt_in"),
            pl.when(same_next).then(t.shift(-1) - t).alias("_dt_out"),
        )
    )
    stats, points = cut_stretches(cand, pings, network, options)
    stats = stats.filter(
        pl.col("n_mid") + pl.col("is_departed").cast(pl.Int64) + pl.col("is_arrived")
        >= options.run_min_pings
    ).drop("_observed_m")
    stats = stats.with_columns(pings["vehicle_id"].gather(stats["_row0"])).drop("_row0")
    mid = points.filter(pl.col("_kind") == 1)
    stats = _drop_dominated(stats, mid, shapes, options)
    stats = stats.sort("vehicle_id", "first_s").with_columns(
        pl.int_range(pl.len()).over("vehicle_id").cast(pl.Int32).alias("run_id")
    )
    ids = stats.select("_seg", "run_id")
    at_ping = ["vehicle_id", "_v", "ping_id"]
    track = (
        points.join(ids, on="_seg")
        .select("run_id", "row", "t_s", pl.col("dist_m").alias("prog_m"))
        .pipe(lambda f: pl.concat([f, pings.select(at_ping)[f["row"]]], how="horizontal"))
        # (vehicle, run, time) order on integers: `_v` ranks the vehicle ids, and rows number
        # each vehicle's pings in time order
        .sort("_v", "run_id", "row")
        .with_columns(group_start(*RUN_KEY).alias("_gs"))
        .with_columns(cum_max_in_group(pl.col("prog_m")).alias("prog_m"))
        .select("vehicle_id", "row", "ping_id", "t_s", "prog_m", "run_id")
    )
    track = build_track(track, RUN_KEY)
    runs = _finish_runs(stats, track, pings, network, options)
    return runs, track


def _drop_dominated(
    stats: pl.DataFrame, mid: pl.DataFrame, shapes: pl.DataFrame, options: MatchOptions
) -> pl.DataFrame:
    """Drop runs overlapped in time (a quarter of the shorter one, or `dominance_overlap_s`) by
    a better run of the same vehicle: one that covered a larger share of its own itinerary (by
    more than `dominance_coverage_margin`), or about the same share and further. A complete run
    of a short line beats the partial run of a long line sharing its corridor; a long line
    beats a short one it contains.

    Runs that only share the fixes of a turnaround are consecutive, not concurrent, and
    neither dominates the other: one run starts and ends before the other, the end of the
    first one's shape and the start of the second one's lie at the same terminal (their
    `terminal_radius_m` geofences touch), the first run ends and the second starts within
    `turnaround_reach_m` of it along their shapes, and one of them progressed no more than
    `backward_break_m` during the overlap (see `_plateaus`). When no fix of the turnaround
    falls inside the geofence (lost, or the layover spot lies outside it), the fixes around it
    are on both directions' shapes (steps backwards shorter than `backward_break_m` do not
    break a run) and both runs hold them. Runs sharing a corridor progress together during
    their overlap, so they stay concurrent.

    A dominated run that went nearly as far (>= 95 %) on another shape marks that shape as an
    alternative of the winner (identical itineraries under two shape ids).
    `mid`: the stretches' pings (`_seg`, `t_s`, `dist_m`), each stretch's rows contiguous.
    """
    key = ["vehicle_id", "shape_idx", "_seg"]
    s = stats.with_row_index("_rid").with_columns(
        (
            pl.col("distance_run_m")
            / (pl.col("destination_dist_m") - pl.col("origin_dist_m")).clip(lower_bound=1.0)
        ).alias("_cov")
    )
    # each run's shape ends, gathered by position (shape_idx is the row of `shapes`)
    ends = shapes.select("start_x_m", "start_y_m", "end_x_m", "end_y_m")[s["shape_idx"]]
    s = pl.concat([s, ends], how="horizontal")
    # pairs overlapping in time first, on the times alone; their other columns are then
    # gathered by row (`_rid` is the row of `s`)
    times = s.select("_rid", "vehicle_id", "first_s", "last_s")
    pairs = times.join(
        times.select(
            pl.col("_rid").alias("_o"),
            "vehicle_id",
            pl.col("first_s").alias("o_first_s"),
            pl.col("last_s").alias("o_last_s"),
        ),
        on="vehicle_id",
    ).filter(pl.col("_rid") != pl.col("_o"))
    overlap = pl.min_horizontal("last_s", "o_last_s") - pl.max_horizontal("first_s", "o_first_s")
    shorter = pl.min_horizontal(
        pl.col("last_s") - pl.col("first_s"), pl.col("o_last_s") - pl.col("o_first_s")
    )
    pairs = pairs.filter(
        ((overlap > 0.25 * shorter) | (overlap >= options.dominance_overlap_s)) & (overlap > 0)
    )
    side = s.select(
        "_seg",
        "shape_idx",
        "distance_run_m",
        "_cov",
        "first_dist_m",
        "max_dist_m",
        "origin_dist_m",
        "destination_dist_m",
        *ends.columns,
    )
    pairs = pl.concat(
        [
            pairs,
            side[pairs["_rid"]],
            side[pairs["_o"]].rename(lambda c: f"o_{c.lstrip('_')}"),
        ],
        how="horizontal",
    )
    # turnarounds: the plateaus are measured only on the stretches of pairs meeting at one
    meet = _meet("", "o_", options) | _meet("o_", "", options)
    met = pairs.filter(meet)
    segs = pl.concat([met["_seg"], met["o_seg"]]).unique()
    plateaus = _plateaus(mid.filter(pl.col("_seg").is_in(segs.implode())), options)
    pairs = (
        pairs.join(plateaus, on="_seg", how="left")
        .join(plateaus.rename(lambda c: f"o_{c.lstrip('_')}"), on="o_seg", how="left")
        .filter(~(meet & (_still("", "o_") | _still("o_", ""))))
    )
    o_dist = pl.col("o_distance_run_m")
    further = (o_dist > pl.col("distance_run_m")) | (
        (o_dist == pl.col("distance_run_m")) & (pl.col("o_shape_idx") < pl.col("shape_idx"))
    )
    margin = options.dominance_coverage_margin
    beaten = (pl.col("o_cov") >= pl.col("_cov") + margin) | (
        (pl.col("o_cov") > pl.col("_cov") - margin) & further
    )
    losers = pairs.filter(beaten)
    winners = s.join(losers.select("_rid").unique(), on="_rid", how="anti")
    alts = (
        losers.filter(pl.col("distance_run_m") >= 0.95 * o_dist)
        .join(winners.select(pl.col("_rid").alias("_o")), on="_o")
        .group_by("_o")
        .agg(pl.col("shape_idx").unique().alias("alt_shapes"))
        .rename({"_o": "_rid"})
    )
    out = winners.join(alts, on="_rid", how="left").with_columns(
        pl.col("alt_shapes").fill_null(pl.lit([], dtype=pl.List(pl.Int32)))
    )
    return out.drop("_rid", "_cov", *ends.columns).sort(key)


def _meet(a: str, b: str, options: MatchOptions) -> pl.Expr:
    """True where the runs of a pair whose columns are prefixed `a` and `b` ("" or "o_") meet
    at a terminal, `a` first: `a` starts and ends before `b`, its shape ends where `b`'s
    starts, and `a` ends and `b` starts within `turnaround_reach_m` of it."""

    def c(prefix: str, name: str) -> pl.Expr:
        return pl.col(prefix + name)

    gap_m = (
        (c(a, "end_x_m") - c(b, "start_x_m")).pow(2) + (c(a, "end_y_m") - c(b, "start_y_m")).pow(2)
    ).sqrt()
    return (
        (c(a, "first_s") < c(b, "first_s"))
        & (c(a, "last_s") < c(b, "last_s"))
        # the two geofences touch: the same terminal, or its two sides of the street
        & (gap_m <= 2 * options.terminal_radius_m)
        # and the runs meet there (the two directions of an out-and-back line also meet at
        # the other terminal, where the first one starts and the second one ends)
        & (c(a, "destination_dist_m") - c(a, "max_dist_m") <= options.turnaround_reach_m)
        & (c(b, "first_dist_m") - c(b, "origin_dist_m") <= options.turnaround_reach_m)
    )


def _still(a: str, b: str) -> pl.Expr:
    """True where, of a pair meeting at a terminal (`a` first, see `_meet`), one run made no
    progress during the overlap: the vehicle ran at most one of them (on the two directions of
    one street, progress on one is a step back on the other). A plateau without bound (`a`
    never short of its end, `b` never moving on) holds the whole overlap."""
    a_still = (pl.col(b + "first_s") > pl.col(a + "approach_s")).fill_null(True)
    b_still = (pl.col(a + "last_s") < pl.col(b + "launch_s")).fill_null(True)
    return a_still | b_still


def _plateaus(mid: pl.DataFrame, options: MatchOptions) -> pl.DataFrame:
    """Per stretch (`_seg`): `approach_s`, the time of its last ping more than
    `backward_break_m` short of its furthest position (its end plateau follows), and
    `launch_s`, the time of its first ping more than that past its first position (its start
    plateau precedes): while on them it progressed no more than a step backwards it tolerates.
    """
    dist, tol = pl.col("dist_m"), options.backward_break_m
    return mid.group_by("_seg").agg(
        pl.col("t_s").filter(dist < dist.max() - tol).last().alias("approach_s"),
        pl.col("t_s").filter(dist > dist.first() + tol).first().alias("launch_s"),
    )


def _finish_runs(
    stats: pl.DataFrame,
    track: pl.DataFrame,
    pings: pl.DataFrame,
    network: Network,
    options: MatchOptions,
) -> pl.DataFrame:
    """Departure/arrival instants, evidence, GPS completeness and the reported trip of each run.

    Also `silence_first_s` / `silence_last_s`: seconds of GPS silence (gaps longer than
    `gap_s`) of the vehicle accumulated up to the run's first / last ping, so that the
    difference between two runs is how long the unit was silent between them.
    """
    targets = pl.concat(
        [
            stats.select(
                *RUN_KEY, pl.col("start_dist_m").alias("target_m"), pl.lit("start").alias("end")
            ),
            stats.select(
                *RUN_KEY, pl.col("end_dist_m").alias("target_m"), pl.lit("end").alias("end")
            ),
        ]
    )
    cross = compute_crossings(track, targets, RUN_KEY, options.clearance_m)
    start = cross.filter(pl.col("end") == "start").select(
        *RUN_KEY, pl.col("leave_s").alias("_leave")
    )
    # the departure is back-extrapolated from the first fix clear of the start at the run's
    # mean speed, not at the speed of that fix's own next step: after a silence (lost pings)
    # one noisy step over- or under-states the speed over hundreds of metres, while the
    # stretch's mean (stops included) is what carried the bus from the start to that fix
    bounds = stats.select(*RUN_KEY, "start_dist_m", "end_dist_m")
    moving = (
        track.join(bounds, on=RUN_KEY)
        .filter(
            (pl.col("prog_m") > pl.col("start_dist_m") + options.clearance_m)
            & (pl.col("prog_m") < pl.col("end_dist_m") - options.clearance_m)
        )
        .group_by(RUN_KEY)
        .agg(
            (
                (pl.col("prog_m").last() - pl.col("prog_m").first())
                / (pl.col("t_s").last() - pl.col("t_s").first())
            ).alias("_v_run")
        )
        .filter(pl.col("_v_run").is_finite())
    )
    first_clear = (
        track.join(bounds, on=RUN_KEY)
        .filter(pl.col("prog_m") > pl.col("start_dist_m") + options.clearance_m)
        .group_by(RUN_KEY)
        .agg(
            pl.col("t_s").first().alias("_t_c"),
            pl.col("prog_m").first().alias("_p_c"),
            pl.col("t_prev_s").first().alias("_t_p"),
            pl.col("start_dist_m").first().alias("_s_m"),
        )
    )
    v = pl.col("_v_run").clip(options.stationary_speed_m_s, options.max_speed_m_s)
    stretch_leave = (
        (pl.col("_t_c") - (pl.col("_p_c") - pl.col("_s_m")) / v)
        .clip(pl.coalesce("_t_p", "_t_c"), pl.col("_t_c"))
        .alias("_stretch_leave")
    )
    start = (
        start.join(first_clear, on=RUN_KEY, how="left")
        .join(moving, on=RUN_KEY, how="left")
        .select(*RUN_KEY, pl.coalesce(stretch_leave, "_leave").alias("_leave"))
    )
    end = cross.filter(pl.col("end") == "end").select(*RUN_KEY, pl.col("arrive_s").alias("_arrive"))
    ev = track.group_by(RUN_KEY).agg(
        pl.col("ping_id").first().alias("first_ping_id"),
        pl.col("ping_id").last().alias("last_ping_id"),
        pl.col("row").first().alias("_row0"),
        pl.col("row").last().alias("_row1"),
        pl.len().alias("n_pings"),
    )
    runs = (
        stats.join(start, on=RUN_KEY, how="left")
        .join(end, on=RUN_KEY, how="left")
        .join(ev, on=RUN_KEY)
        .with_columns(
            pl.coalesce("_leave", "first_s").alias("started_s"),
            pl.when(pl.col("is_arrived"))
            .then(pl.coalesce("_arrive", "last_s"))
            .otherwise(pl.col("last_s"))
            .alias("ended_s"),
        )
        .with_columns(pl.max_horizontal("ended_s", "started_s").alias("ended_s"))
    )
    # GPS silence (gaps longer than gap_s) of the vehicle accumulated up to the run's first and
    # last ping: their difference between two runs is how long the unit was silent between them
    silent = pings.sort("row").select(
        "row",
        pl.col("t_s")
        .diff()
        .over("vehicle_id")
        .pipe(lambda dt: pl.when(dt > options.gap_s).then(dt).otherwise(0.0))
        .cum_sum()
        .over("vehicle_id")
        .alias("_sil"),
    )
    runs = runs.join(
        silent.rename({"row": "_row0", "_sil": "silence_first_s"}), on="_row0", how="left"
    ).join(silent.rename({"row": "_row1", "_sil": "silence_last_s"}), on="_row1", how="left")
    # GPS completeness: minutes of the run with at least one of its pings
    minutes = track.group_by(RUN_KEY).agg((pl.col("t_s") // 60).n_unique().alias("_n_min"))
    runs = runs.join(minutes, on=RUN_KEY, how="left").with_columns(
        (
            pl.col("_n_min")
            / ((pl.col("last_s") // 60) - (pl.col("first_s") // 60) + 1).clip(lower_bound=1)
        )
        .clip(upper_bound=1.0)
        .fill_null(0.0)
        .alias("gps_completeness_ratio")
    )
    if "reported_trip_id" in pings.columns:
        rep = (
            track.select(*RUN_KEY, "row")
            .join(pings.select("row", "reported_trip_id"), on="row")
            .drop_nulls("reported_trip_id")
            .group_by(RUN_KEY)
            .agg(pl.col("reported_trip_id").mode().first())
        )
        runs = runs.join(rep, on=RUN_KEY, how="left")
    else:
        runs = runs.with_columns(pl.lit(None, pl.String).alias("reported_trip_id"))
    shapes = network.shapes.select("shape_idx", "shape_id", "route_id", "direction_id")
    return (
        runs.join(shapes, on="shape_idx")
        .with_columns(
            (
                pl.col("distance_run_m")
                / (pl.col("destination_dist_m") - pl.col("origin_dist_m")).clip(lower_bound=1.0)
            )
            .clip(0.0, 1.0)
            .alias("coverage_ratio"),
            pl.col("n_off_route").cast(pl.Int32),
            pl.col("off_route_s").round().cast(pl.Int32),
        )
        .drop("_leave", "_arrive", "_row0", "_row1", "_n_min", "_seg", "n_mid")
    )
