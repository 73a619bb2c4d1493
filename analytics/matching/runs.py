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
stretches and their distances are cut by `analytics.matching.stretches` (compiled per-group passes).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
import polars as pl

from analytics.matching.crossings import (
    GROUP_START,
    RUN_KEY,
    build_track,
    cum_max_in_group,
    group_start,
)
from analytics.matching.frames import RUNS, TRACK
from analytics.matching.kernel_arrays import to_kernel_array
from analytics.matching.network import Network
from analytics.matching.options import ANY_GAP, GapCredit, MatchOptions
from analytics.matching.stop_visits import (
    RUN_POSITION,
    bisect_slices,
    build_track_slices,
    compute_run_crossings,
)
from analytics.matching.stretches import cut_stretches


class RunPairs(NamedTuple):
    """Pairs of runs (positions in the runs given to `_overlapping_pairs`), both orders."""

    one: np.ndarray
    other: np.ndarray


class RunFacts(NamedTuple):
    """What `_run_facts` returns, per run of a track."""

    departure_s: np.ndarray
    """departure back-extrapolated from the first fix clear of the start, epoch seconds (NaN:
    none)"""
    n_minutes_with_ping: np.ndarray
    """distinct minutes with a ping"""


def build_runs(
    pings: pl.DataFrame,
    cand: pl.DataFrame,
    network: Network,
    options: MatchOptions,
    gap_credit: GapCredit = ANY_GAP,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Runs of the pings given their shape candidates.

    `pings`: cleaned pings (`clean_pings`) numbered in their order by `row` (0 .. n - 1, by
    vehicle then time): row, vehicle_id, vehicle_rank, ping_id, t_s, x_m, y_m (and optional
    reported_trip_id).
    `cand`: `PING_CANDIDATES` (see `project_pings`). `gap_credit`: which GPS silences inside
    a run are credited (`analytics.matching.stretches`).
    Returns (runs, track): `RUNS`, one row per run, and `TRACK`, the pings of each run with
    monotone progress (the batch-local `row` is dropped: a day holds millions of these rows).
    """
    shapes = network.shapes
    # windows on frames sorted by group, as shifts masked at group starts: Polars' `over` on
    # thousands of (vehicle, shape) groups costs several times more
    t = pl.col("t_s")
    vehicle = pl.col("vehicle_rank")
    same_prev = vehicle == vehicle.shift(1)
    same_next = vehicle == vehicle.shift(-1)
    pings = pings.with_columns(vehicle.cast(pl.Int64)).with_columns(
        # time to the vehicle's neighbouring pings, on the shape or not (a detour's ends)
        pl.when(same_prev).then(t - t.shift(1)).alias("dt_prev_s"),
        pl.when(same_next).then(t.shift(-1) - t).alias("dt_next_s"),
    )
    stats, points = cut_stretches(cand, pings, network, options, gap_credit)
    stats = stats.filter(
        pl.col("n_mid_pings") + pl.col("is_departed").cast(pl.Int64) + pl.col("is_arrived")
        >= options.run_min_pings
    ).drop("observed_progress_m")
    stats = stats.with_columns(
        pings["vehicle_id"].gather(stats["first_row"]),
        pings["vehicle_rank"].gather(stats["first_row"]),
    ).drop("first_row")
    mid = points.filter(pl.col("point_kind") == 1)
    stats = _drop_dominated(stats, mid, shapes, options, network.trip_times)
    # runs numbered per vehicle in time order (the stretch number breaks ties: deterministic)
    stats = stats.sort("vehicle_rank", "first_s", "stretch_index")
    v = stats["vehicle_rank"].to_numpy()
    first_of_vehicle = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])
    sizes = np.diff(np.r_[first_of_vehicle, stats.height])
    run_index = np.arange(stats.height) - np.repeat(first_of_vehicle, sizes)
    stats = stats.with_columns(pl.Series("run_index", run_index, pl.Int32)).drop("vehicle_rank")
    ids = stats.select("stretch_index", "run_index")
    at_ping = ["vehicle_id", "vehicle_rank", "ping_id"]
    track = (
        _by_vehicle_run_row(
            points.join(ids, on="stretch_index").select(
                "run_index", "row", "t_s", pl.col("dist_m").alias("prog_m")
            ),
            pings["vehicle_rank"],
        )
        .pipe(lambda f: pl.concat([f, pings.select(at_ping)[f["row"]]], how="horizontal"))
        .with_columns(group_start(*RUN_KEY).alias(GROUP_START))
        .with_columns(cum_max_in_group(pl.col("prog_m")).alias("prog_m"))
    )
    # each run's first row in the track; runs come in the order of `stats` (vehicle, run_index)
    starts = np.flatnonzero(track[GROUP_START].to_numpy())
    track = build_track(
        track.select("vehicle_id", "row", "ping_id", "t_s", "prog_m", "run_index"), RUN_KEY
    )
    runs = _finish_runs(stats, track, starts, pings, network, options)
    return RUNS.conform(runs), TRACK.conform(track)


def _by_vehicle_run_row(points: pl.DataFrame, vehicle_rank: pl.Series) -> pl.DataFrame:
    """`points` (run_index, row, ...) sorted in (vehicle, run, time) order: by the vehicle rank
    of their row (`vehicle_rank`: of the batch's pings, by row), run_index, row. Rows number
    each vehicle's pings in time order. The three integers are packed into one Int64 key
    when they fit (a batch's pings and runs do by far), sorted before the ping columns are
    gathered: one integer sort of the narrow frame costs about a third of the three-column
    sort of the wide one."""
    row = points["row"]
    n_rows = max(vehicle_rank.len(), 1)
    n_runs = int(points["run_index"].max() or 0) + 1  # type: ignore[arg-type]
    n_vehicles = int(vehicle_rank.max() or 0) + 1  # type: ignore[arg-type]
    if points.height == 0 or n_vehicles * n_runs * n_rows >= 1 << 62:
        return (
            points.with_columns(vehicle_rank.gather(row).alias("_v"))
            .sort("_v", "run_index", "row")
            .drop("_v")
        )
    key = (
        vehicle_rank.gather(row).cast(pl.Int64) * n_runs + points["run_index"].cast(pl.Int64)
    ) * n_rows + row.cast(pl.Int64)
    return points.sort(key, maintain_order=True)


def _drop_dominated(
    stats: pl.DataFrame,
    mid: pl.DataFrame,
    shapes: pl.DataFrame,
    options: MatchOptions,
    trip_times: pl.DataFrame | None = None,
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

    Look-alike shapes (terminal variants, a short-turn and its full line: the two runs' distances
    within `look_alike_min_ratio` of each other) are told apart by the schedule first: when only
    one of the two shapes has a trip planned around the run (`_is_scheduled`), its run wins;
    otherwise the rule above (where the run ends decides). A short-turn driven when only the
    full trip is planned is that trip, partial, not a run without a trip.

    A dominated run that went nearly as far (>= 95 %) on another shape marks that shape as an
    alternative of the winner (identical itineraries under two shape ids).
    `stats`: `STRETCHES` with `vehicle_rank` (Int64; pairs are joined on it). `mid`: the
    stretches' pings (`STRETCH_POINTS` of kind 1), each stretch's rows contiguous.
    """
    key = ["vehicle_rank", "shape_idx", "stretch_index"]
    # `run_row`: the row of `s`; `covered_share`: the share of its itinerary a run covered
    s = stats.with_row_index("run_row").with_columns(
        _coverage().alias("covered_share"), _is_scheduled(stats, trip_times, options)
    )
    # each run's shape ends, gathered by position (shape_idx is the row of `shapes`)
    ends = shapes.select("start_x_m", "start_y_m", "end_x_m", "end_y_m")[s["shape_idx"]]
    s = pl.concat([s, ends], how="horizontal")
    # pairs overlapping in time first, on the times alone; their other columns are then
    # gathered by row (`run_row`)
    v, first_s, last_s = (s[c].to_numpy() for c in ("vehicle_rank", "first_s", "last_s"))
    by_start = np.lexsort((first_s, v))
    one, other = _overlapping_pairs(
        vehicle_rank=v[by_start],
        first_s=first_s[by_start],
        last_s=last_s[by_start],
        min_overlap_s=options.dominance_overlap_s,
    )
    # each pair: a run (`run_row`, its columns) and the other run (`other_run_row`, its
    # columns prefixed `other_`)
    times = s.select("first_s", "last_s")
    pairs = pl.concat(
        [
            pl.DataFrame({"run_row": by_start[one], "other_run_row": by_start[other]}),
            times[by_start[one]],
            times[by_start[other]].rename(lambda c: f"other_{c}"),
        ],
        how="horizontal",
    )
    side = s.select(
        "stretch_index",
        "shape_idx",
        "distance_run_m",
        "covered_share",
        "first_dist_m",
        "max_dist_m",
        "origin_dist_m",
        "destination_dist_m",
        "is_scheduled",
        *ends.columns,
    )
    pairs = pl.concat(
        [
            pairs,
            side[pairs["run_row"]],
            side[pairs["other_run_row"]].rename(lambda c: f"other_{c}"),
        ],
        how="horizontal",
    )
    # turnarounds: the plateaus are measured only on the stretches of pairs meeting at one
    meet = _meet("", "other_", options) | _meet("other_", "", options)
    met = pairs.filter(meet)
    stretches = pl.concat([met["stretch_index"], met["other_stretch_index"]]).unique()
    plateaus = _plateaus(mid.filter(pl.col("stretch_index").is_in(stretches.implode())), options)
    pairs = (
        pairs.join(plateaus, on="stretch_index", how="left")
        .join(plateaus.rename(lambda c: f"other_{c}"), on="other_stretch_index", how="left")
        .filter(~(meet & (_still("", "other_") | _still("other_", ""))))
    )
    other_dist = pl.col("other_distance_run_m")
    further = (other_dist > pl.col("distance_run_m")) | (
        (other_dist == pl.col("distance_run_m")) & (pl.col("other_shape_idx") < pl.col("shape_idx"))
    )
    margin = options.dominance_coverage_margin
    share, other_share = pl.col("covered_share"), pl.col("other_covered_share")
    beaten = (other_share >= share + margin) | ((other_share > share - margin) & further)
    dist = pl.col("distance_run_m")
    look_alike = pl.min_horizontal(dist, other_dist) >= options.look_alike_min_ratio * (
        pl.max_horizontal(dist, other_dist)
    )
    own_planned, other_planned = pl.col("is_scheduled"), pl.col("other_is_scheduled")
    beaten = (beaten & ~(look_alike & own_planned & ~other_planned)) | (
        look_alike & ~own_planned & other_planned
    )
    losers = pairs.filter(beaten)
    winners = s.join(losers.select("run_row").unique(), on="run_row", how="anti")
    alts = (
        losers.filter(pl.col("distance_run_m") >= 0.95 * other_dist)
        .join(winners.select(pl.col("run_row").alias("other_run_row")), on="other_run_row")
        .group_by("other_run_row")
        .agg(pl.col("shape_idx").unique().alias("alt_shapes"))
        .rename({"other_run_row": "run_row"})
    )
    out = winners.join(alts, on="run_row", how="left").with_columns(
        pl.col("alt_shapes").fill_null(pl.lit([], dtype=pl.List(pl.Int32)))
    )
    return out.drop("run_row", "covered_share", "is_scheduled", *ends.columns).sort(key)


def _is_scheduled(
    stats: pl.DataFrame, trip_times: pl.DataFrame | None, options: MatchOptions
) -> pl.Series:
    """Per stretch (`stats` rows, in order): whether a trip of its shape is planned around it
    (its planned span, widened by `match_window_s`, meets the stretch's first-last fix span).
    All true without `trip_times`."""
    if trip_times is None:
        return pl.Series("is_scheduled", [True] * stats.height, pl.Boolean)
    if trip_times.height == 0:
        return pl.Series("is_scheduled", [False] * stats.height, pl.Boolean)
    w = options.match_window_s
    # the trips of a shape in start order, with the latest end so far (`Network.trip_times`):
    # a trip starting before the probe and ending after the stretch's first fix exists when
    # that running end does. Each stretch bisects its shape's trips for the last one starting
    # no later than its probe
    s = stats["shape_idx"].cast(pl.Int64).to_numpy()
    shape = trip_times["shape_idx"].to_numpy()
    at = np.searchsorted(shape, np.arange(max(s.max(initial=-1), shape.max()) + 2))
    lo, hi = at[s], at[s + 1]
    probe_s = stats["last_s"].to_numpy() + w
    k = bisect_slices(trip_times["planned_start_s"].to_numpy(), lo, hi, probe_s, True) - 1
    latest_end_s = trip_times["latest_end_s"].to_numpy()[np.maximum(k, 0)]
    ok = (k >= lo) & (latest_end_s >= stats["first_s"].to_numpy() - w)
    return pl.Series("is_scheduled", ok, pl.Boolean)


@numba.njit(cache=True, nogil=True)
def _overlapping_pairs(vehicle_rank, first_s, last_s, min_overlap_s):  # pragma: no cover - compiled
    """Both orders of each pair of runs of one vehicle (`vehicle_rank`) that overlap in time
    by more than a quarter of the shorter one or by `min_overlap_s`, given the runs sorted by
    vehicle and start (`first_s`, `last_s`: epoch seconds): `RunPairs`, positions in that order.
    A sweep stops at the first run starting after the current one ends."""
    one = []
    other = []
    n = vehicle_rank.shape[0]
    for i in range(n):
        j = i + 1
        while j < n and vehicle_rank[j] == vehicle_rank[i] and first_s[j] < last_s[i]:
            overlap = min(last_s[i], last_s[j]) - max(first_s[i], first_s[j])
            shorter = min(last_s[i] - first_s[i], last_s[j] - first_s[j])
            if (overlap > 0.25 * shorter or overlap >= min_overlap_s) and overlap > 0:
                one.append(i)
                other.append(j)
                one.append(j)
                other.append(i)
            j += 1
    return RunPairs(np.array(one, np.int64), np.array(other, np.int64))


def itinerary_share(length_m: pl.Expr) -> pl.Expr:
    """A length along a run's shape (metres) as a share of its itinerary, from
    `origin_dist_m` to `destination_dist_m` (a span of at least 1 m)."""
    span = (pl.col("destination_dist_m") - pl.col("origin_dist_m")).clip(lower_bound=1.0)
    return length_m / span


def _coverage() -> pl.Expr:
    """The share of its itinerary a run covered."""
    return itinerary_share(pl.col("distance_run_m"))


def _meet(a: str, b: str, options: MatchOptions) -> pl.Expr:
    """True where the runs of a pair whose columns are prefixed `a` and `b` ("" or "other_") meet
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
    """Per stretch (`stretch_index`): `approach_s`, the time of its last ping more than
    `backward_break_m` short of its furthest position (its end plateau follows), and
    `launch_s`, the time of its first ping more than that past its first position (its start
    plateau precedes): while on them it progressed no more than a step backwards it tolerates.
    """
    dist, tol = pl.col("dist_m"), options.backward_break_m
    return mid.group_by("stretch_index").agg(
        pl.col("t_s").filter(dist < dist.max() - tol).last().alias("approach_s"),
        pl.col("t_s").filter(dist > dist.first() + tol).first().alias("launch_s"),
    )


def _finish_runs(
    stats: pl.DataFrame,
    track: pl.DataFrame,
    starts: np.ndarray,
    pings: pl.DataFrame,
    network: Network,
    options: MatchOptions,
) -> pl.DataFrame:
    """Departure/arrival instants, evidence, GPS completeness and the reported trip of each run.

    `track` holds the runs of `stats` in its order, each from its row in `starts`. Also
    `silence_first_s` / `silence_last_s`: seconds of GPS silence (gaps longer than `gap_s`) of
    the vehicle accumulated up to the run's first / last ping, so that the difference between
    two runs is how long the unit was silent between them.
    """

    t = to_kernel_array(track["t_s"])
    start_m = to_kernel_array(stats["start_dist_m"])
    end_m = to_kernel_array(stats["end_dist_m"])
    bounds = np.r_[starts, track.height].astype(np.int64)
    stretch_leave, n_minutes = _run_facts(
        run_bounds=bounds,
        t_s=t,
        prog_m=to_kernel_array(track["prog_m"]),
        t_prev_s=to_kernel_array(track["t_prev_s"]),
        start_m=start_m,
        end_m=end_m,
        clearance_m=options.clearance_m,
        min_speed_m_s=options.stationary_speed_m_s,
        max_speed_m_s=options.max_speed_m_s,
    )
    # when each run left its start and arrived at its end (the rule of `analytics.matching.crossings`,
    # as stop visits cross their stops); an arrival is never later than a departure from
    # the same target
    n = stats.height
    slices = build_track_slices(
        track, stats.select(*RUN_KEY).with_columns(pl.int_range(n).alias(RUN_POSITION))
    )
    runs_twice = np.r_[np.arange(n), np.arange(n)].astype(np.int64)
    cross = compute_run_crossings(
        slices, runs_twice, np.r_[start_m, end_m], options.clearance_m
    ).with_columns(pl.min_horizontal("arrive_s", "leave_s").alias("arrive_s"))
    cross_leave = cross["leave_s"][:n].fill_null(np.nan).to_numpy()
    cross_arrive = cross["arrive_s"][n:]
    first, last = bounds[:-1], bounds[1:] - 1
    rows = track["row"].to_numpy()
    silence = _silence(
        t_s=to_kernel_array(pings["t_s"]),
        vehicle_rank=to_kernel_array(pings["vehicle_rank"], pl.Int64),
        gap_s=options.gap_s,
    )  # by row: `pings` is sorted by row
    leave = np.where(np.isnan(stretch_leave), cross_leave, stretch_leave)
    runs = stats.with_columns(
        pl.Series("left_start_s", leave, nan_to_null=True),
        cross_arrive.alias("reached_end_s"),
        track["ping_id"].gather(first).alias("first_ping_id"),
        track["ping_id"].gather(last).alias("last_ping_id"),
        pl.Series("n_pings", (last - first + 1).astype(np.uint32)),
        pl.Series("silence_first_s", silence[rows[first]]),
        pl.Series("silence_last_s", silence[rows[last]]),
        pl.Series("n_minutes_with_ping", n_minutes),
    ).with_columns(
        pl.coalesce("left_start_s", "first_s").alias("started_s"),
        pl.when(pl.col("is_arrived"))
        .then(pl.coalesce("reached_end_s", "last_s"))
        .otherwise(pl.col("last_s"))
        .alias("ended_s"),
        # GPS completeness: minutes of the run with at least one of its pings
        (
            pl.col("n_minutes_with_ping")
            / ((pl.col("last_s") // 60) - (pl.col("first_s") // 60) + 1).clip(lower_bound=1)
        )
        .clip(upper_bound=1.0)
        .fill_null(0.0)
        .alias("gps_completeness_ratio"),
    )
    runs = runs.with_columns(pl.max_horizontal("ended_s", "started_s").alias("ended_s"))
    if "reported_trip_id" in pings.columns and pings["reported_trip_id"].null_count() < len(pings):
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
    # shape_idx is the row of `network.shapes`
    shapes = network.shapes.select("shape_id", "route_id", "direction_id")[runs["shape_idx"]]
    return (
        pl.concat([runs, shapes], how="horizontal")
        .with_columns(
            _coverage().clip(0.0, 1.0).alias("coverage_ratio"),
            pl.col("n_off_route").cast(pl.Int32),
            pl.col("off_route_s").round().cast(pl.Int32),
        )
        .drop(
            "left_start_s", "reached_end_s", "n_minutes_with_ping", "stretch_index", "n_mid_pings"
        )
    )


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _run_facts(
    run_bounds, t_s, prog_m, t_prev_s, start_m, end_m, clearance_m, min_speed_m_s, max_speed_m_s
):  # pragma: no cover - compiled; tested through build_runs
    """Per run (rows `run_bounds[k]` .. `run_bounds[k + 1]` - 1 of a track's `t_s`, `prog_m`,
    `t_prev_s`; the run's start and end along its shape `start_m[k]`, `end_m[k]`): `RunFacts`,
    the departure back-extrapolated from its first fix clear of the start by `clearance_m`
    (NaN when it has none, or no mean speed) and the number of distinct minutes with a ping.

    The departure uses the run's mean speed between its first and last fix clear of both ends,
    not the speed of that fix's own next step: after a silence (lost pings) one noisy step
    over- or under-states the speed over hundreds of metres, while the stretch's mean (stops
    included) is what carried the bus from the start to that fix. It is clipped between that
    fix and the one before it, the speed between `min_speed_m_s` and `max_speed_m_s`.
    """
    n = run_bounds.shape[0] - 1
    leave = np.full(n, np.nan)
    minutes = np.zeros(n, np.int64)
    for k in range(n):
        lo, hi = run_bounds[k], run_bounds[k + 1]
        clear_from = start_m[k] + clearance_m
        clear_to = end_m[k] - clearance_m
        c = -1
        m0 = -1
        m1 = -1
        last_minute = np.nan
        for j in range(lo, hi):
            if c < 0 and prog_m[j] > clear_from:
                c = j
            if prog_m[j] > clear_from and prog_m[j] < clear_to:
                if m0 < 0:
                    m0 = j
                m1 = j
            minute = np.floor(t_s[j] / 60.0)
            if minute != last_minute:
                minutes[k] += 1
                last_minute = minute
        if c < 0 or m0 < 0:
            continue
        v = (prog_m[m1] - prog_m[m0]) / (t_s[m1] - t_s[m0])
        if not np.isfinite(v):
            continue
        v = max(min(v, max_speed_m_s), min_speed_m_s)
        floor = t_prev_s[c] if t_prev_s[c] == t_prev_s[c] else t_s[c]
        leave[k] = max(min(t_s[c] - (prog_m[c] - start_m[k]) / v, t_s[c]), floor)
    return RunFacts(leave, minutes)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _silence(t_s, vehicle_rank, gap_s):  # pragma: no cover - compiled; tested through build_runs
    """Per ping (`t_s`, `vehicle_rank`; sorted by vehicle and time): seconds of GPS silence
    (steps longer than `gap_s`) of its vehicle up to it."""
    out = np.zeros(t_s.shape[0])
    total = 0.0
    for i in range(t_s.shape[0]):
        if i == 0 or vehicle_rank[i] != vehicle_rank[i - 1]:
            total = 0.0
        elif t_s[i] - t_s[i - 1] > gap_s:
            total += t_s[i] - t_s[i - 1]
        out[i] = total
    return out
