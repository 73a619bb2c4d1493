"""Assign runs to scheduled trips: one run per trip and one trip per run, across all vehicles.

Candidates are the trips of the run's shape (or of an identical shape) whose planned start,
moved to where the run began, lies within `match_window_s` of the run's departure, and that
the run did not cover implausibly fast (`min_duration_ratio` of the planned time: deadheads).
The cost is the departure deviation (early seconds weigh `early_cost_factor` times more), less
a bonus for the trip the device reported and for trips of the block the vehicle is running
(weighted by the share of its other first-pass trips in that block). An optimal assignment (scipy; dense or sparse by group size) of the
day's runs and trips makes it exclusive: of two vehicles on one trip only one counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, min_weight_full_bipartite_matching

from analytics.matching.crossings import RUN_KEY
from analytics.matching.options import MatchOptions
from analytics.matching.runs import itinerary_share

# groups up to this many (runs x columns) cells are solved dense (Hungarian), larger sparse
_DENSE_MAX_CELLS = 250_000


def match_runs_to_trips(
    runs: pl.DataFrame, trips: pl.DataFrame, options: MatchOptions
) -> pl.DataFrame:
    """Return `runs` with `trip_id`, `match_method` and `departure_delay_s` (null if unmatched).

    `runs`: from `build_runs` (all vehicles of the day). `trips`: scheduled_trips of the day.
    `departure_delay_s` is the run's departure minus the planned time at the point where the run
    began (the origin departure for runs that left the terminal), seconds, + late.
    """
    # integer keys, numbered in the order of the string keys they stand for (`_run` in
    # vehicle_id, run_index order; `_trip` in trip_id order), so the pairs are joined, grouped
    # and ranked on integers and the solver sees rows and columns in the same order
    runs = runs.with_columns(
        pl.struct(RUN_KEY).rank("ordinal").cast(pl.Int64).sub(1).alias("_run"),
        pl.col("vehicle_id").rank("dense").cast(pl.Int64).alias("_veh"),
    )
    trips = trips.with_columns(
        pl.col("trip_id").rank("dense").cast(pl.Int64).sub(1).alias("_trip"),
        pl.col("block_id").rank("dense").cast(pl.Int64).alias("_block"),
    )
    pairs = _candidates(runs, trips, options)
    # both passes solve the same pairs, only their costs differ: one structure for both
    problem = _problem(pairs, options) if pairs.height else None
    first = _solve(pairs, problem)
    # block continuity: a vehicle runs one block (or the rest of one, after a swap), so the
    # share of its other first-pass trips that belong to a trip's block is strong evidence;
    # a share, not "the neighbour's block", so two stray trips of another block cannot
    # reinforce each other
    mine = first.group_by("_veh", "_block").agg(pl.len().alias("_n_block"))
    total = first.group_by("_veh").agg(pl.len().alias("_n_all"))
    own = first.select("_run", pl.col("_block").alias("_own_block"))
    share = (
        (
            pl.col("_n_block").fill_null(0)
            - (pl.col("_own_block") == pl.col("_block")).fill_null(False).cast(pl.Int64)
        )
        / (pl.col("_n_all").fill_null(0) - pl.col("_own_block").is_not_null().cast(pl.Int64)).clip(
            lower_bound=1
        )
    ).clip(0.0, 1.0)
    # joins on the first pass' keys, in the pairs' order: `problem` refers to them by position
    pairs = (
        pairs.join(mine, on=["_veh", "_block"], how="left", maintain_order="left")
        .join(total, on="_veh", how="left", maintain_order="left")
        .join(own, on="_run", how="left", maintain_order="left")
        .with_columns((pl.col("cost") - options.block_bonus_s * share).alias("cost"))
        .drop("_n_block", "_n_all", "_own_block")
    )
    if problem is not None and pairs.height != problem.ri.size:
        # a run given two first-pass trips (a trip id listed twice) multiplies its pairs
        problem = _problem(pairs, options)
    chosen = _solve(pairs, problem)
    return (
        runs.join(
            chosen.select("_run", "trip_id", "departure_delay_s", "match_method"),
            on="_run",
            how="left",
            maintain_order="left",
        )
        .with_columns(pl.col("match_method").fill_null("inferred"))
        .drop("_run", "_veh")
    )


def _candidates(runs: pl.DataFrame, trips: pl.DataFrame, options: MatchOptions) -> pl.DataFrame:
    """Candidate (run, trip) pairs with their cost. `runs` and `trips` carry the integer keys
    of `match_runs_to_trips` (`_run`, `_veh`; `_trip`, `_block`)."""
    # runs in key order (`_run` is a position then) and trips numbered by row (`_row`): a
    # pair's columns are gathered by position, so the time buckets are joined on integers
    # alone and only the pairs kept carry the rest
    runs = runs.sort("_run")
    trips = trips.with_row_index("_row")
    # shapes as integers: those of the day's trips (a run's other shapes have no candidates)
    shape_code = trips.select("shape_id").unique().with_row_index("_shape")
    idx_to_id = runs.select(
        pl.col("shape_idx").alias("alt_shapes"), pl.col("shape_id").alias("alt_id")
    ).unique()
    alts = (
        runs.select("_run", "alt_shapes")
        .explode("alt_shapes")
        .drop_nulls("alt_shapes")
        .join(idx_to_id, on="alt_shapes")
        .select("_run", pl.col("alt_id").alias("shape_id"))
    )
    run_shapes = (
        pl.concat([runs.select("_run", "shape_id"), alts])
        .join(shape_code, on="shape_id")
        .select("_run", "_shape")
        .unique()
    )
    t = trips.join(shape_code, on="shape_id").select(
        "_row",
        "_trip",
        "_shape",
        (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("plan_start_s"),
        (pl.col("planned_end_at").dt.epoch("us") / 1e6).alias("plan_end_s"),
    )
    share = itinerary_share(pl.col("start_dist_m") - pl.col("origin_dist_m")).clip(0.0, 1.0)
    plan_here = pl.col("plan_start_s") + share * (pl.col("plan_end_s") - pl.col("plan_start_s"))
    delay = pl.col("started_s") - plan_here
    # time consistency: the planned time for the stretch the run covered, against its own
    planned_here_s = (pl.col("plan_end_s") - pl.col("plan_start_s")) * itinerary_share(
        pl.col("end_dist_m") - pl.col("start_dist_m")
    )
    too_fast = (pl.col("ended_s") - pl.col("started_s")) < options.min_duration_ratio * (
        planned_here_s
    )
    # only trips whose start can lie within the window: the run began at most one planned
    # duration of its shape after the trip's start (plus the window), so a join on time
    # buckets of one window keeps the pairs to a few per run, not every trip of the shape
    w = options.match_window_s
    t = t.with_columns(
        (pl.col("plan_end_s") - pl.col("plan_start_s")).max().over("_shape").alias("_dur"),
        (pl.col("plan_start_s") // w).cast(pl.Int64).alias("_bucket"),
    )
    dur = t.group_by("_shape").agg(pl.col("_dur").first())
    runs_b = run_shapes.join(dur, on="_shape")
    runs_b = (
        runs_b.with_columns(runs["started_s"].gather(runs_b["_run"]))
        .with_columns(
            pl.int_ranges(
                ((pl.col("started_s") - w - pl.col("_dur")) // w).cast(pl.Int64),
                ((pl.col("started_s") + w) // w).cast(pl.Int64) + 1,
            ).alias("_bucket")
        )
        .select("_run", "_shape", "_bucket")
        .explode("_bucket")
    )
    pairs = runs_b.join(t.drop("_dur"), on=["_shape", "_bucket"]).select(
        "_run", "_trip", "_row", "plan_start_s", "plan_end_s"
    )
    at_run = pairs["_run"]
    pairs = (
        pairs.with_columns(
            runs[n].gather(at_run)
            for n in (
                "started_s",
                "ended_s",
                "start_dist_m",
                "end_dist_m",
                "origin_dist_m",
                "destination_dist_m",
            )
        )
        .with_columns(delay.alias("departure_delay_s"))
        .filter((pl.col("departure_delay_s").abs() <= options.match_window_s) & ~too_fast)
    )
    at_run, at_trip = pairs["_run"], pairs["_row"]
    pairs = (
        pairs.with_columns(
            *(runs[n].gather(at_run) for n in ("_veh", "reported_trip_id", "coverage_ratio")),
            runs["route_id"].gather(at_run).alias("_run_route"),
            runs["direction_id"].gather(at_run).alias("_run_direction"),
            *(trips[n].gather(at_trip) for n in ("trip_id", "_block", "route_id", "direction_id")),
        )
        # the other direction of the run's own line is never an equivalent itinerary: runs.py
        # marks it as one when the two directions share the fixes of a turnaround
        .filter(
            (pl.col("route_id") != pl.col("_run_route")).fill_null(True)
            | (pl.col("direction_id") == pl.col("_run_direction")).fill_null(True)
        )
        .with_columns(
            (pl.col("reported_trip_id") == pl.col("trip_id")).fill_null(False).alias("_reported")
        )
    )
    cost = pl.when(pl.col("departure_delay_s") < 0).then(
        -pl.col("departure_delay_s") * options.early_cost_factor
    ).otherwise(pl.col("departure_delay_s")) - pl.when(pl.col("_reported")).then(
        options.reported_bonus_s
    ).otherwise(0.0)
    return pairs.with_columns(
        cost.alias("cost"),
        pl.when(pl.col("_reported"))
        .then(pl.lit("reported"))
        .otherwise(pl.lit("inferred"))
        .alias("match_method"),
        pl.col("departure_delay_s").round().cast(pl.Int32),
    )


@dataclass(frozen=True)
class _Problem:
    """The structure of the assignment, shared by its two passes (only the costs differ).

    Rows are the runs of the candidate pairs, columns their trips (`ri`, `ti`: per pair, in
    key order, `nr` x `nt`) plus one "unmatched" column per run (`nt + row`). Edges are the
    pairs, then each run to its unmatched column, taken in `order` (by connected group); for
    them, in that order: `er`, `ec`, `comp` and the local row and column numbers in their
    group (`local_r`, `local_c`). Per group: its rows' and columns' global numbers
    (`rows_of`/`cols_of` from `r_start`/`c_start`, `n_rows`/`n_cols` of them); `bounds`: where
    each group's edges start. `single`: edges of one-row groups; `repeated`: whether an edge
    is given twice."""

    ri: np.ndarray
    ti: np.ndarray
    nr: int
    nt: int
    unmatched: np.ndarray
    order: np.ndarray
    er: np.ndarray
    ec: np.ndarray
    comp: np.ndarray
    local_r: np.ndarray
    local_c: np.ndarray
    rows_of: np.ndarray
    r_start: np.ndarray
    n_rows: np.ndarray
    cols_of: np.ndarray
    c_start: np.ndarray
    n_cols: np.ndarray
    bounds: np.ndarray
    single: np.ndarray
    repeated: bool


def _problem(pairs: pl.DataFrame, options: MatchOptions) -> _Problem:
    """The assignment's structure for candidate pairs (at least one)."""
    ri = pairs["_run"].rank("dense").cast(pl.Int64).to_numpy() - 1
    ti = pairs["_trip"].rank("dense").cast(pl.Int64).to_numpy() - 1
    nr, nt = int(ri.max()) + 1, int(ti.max()) + 1
    # one "unmatched" column per run: without it the solver would rather shift a whole chain
    # of runs to wrong trips than leave one stray run without a trip
    unmatched = np.zeros(nr)
    unmatched[ri] = (
        options.unmatched_base_cost_s
        + options.unmatched_full_cost_s * pairs["coverage_ratio"].cast(pl.Float64)
    ).to_numpy()
    # edges: each candidate pair, and each run to its own unmatched column
    er = np.r_[ri, np.arange(nr)]
    ec = np.r_[ti, nt + np.arange(nr)]
    _, node_comp = connected_components(
        coo_matrix((np.ones(len(er)), (er, nr + ec)), shape=(2 * nr + nt, 2 * nr + nt)),
        directed=False,
    )
    comp = node_comp[er]
    n_comp = int(node_comp.max()) + 1
    row_local, rows_of, r_start, n_rows = _local_numbers(node_comp[:nr], n_comp)
    col_local, cols_of, c_start, n_cols = _local_numbers(node_comp[nr:], n_comp)
    local_r, local_c = row_local[er], col_local[ec]
    order = np.argsort(comp, kind="stable")
    er, ec, comp = er[order], ec[order], comp[order]
    single = n_rows[comp] == 1
    by_col = np.lexsort((ec[single], comp[single]))
    repeated = bool(
        ((np.diff(comp[single][by_col]) == 0) & (np.diff(ec[single][by_col]) == 0)).any()
    )
    return _Problem(
        ri=ri,
        ti=ti,
        nr=nr,
        nt=nt,
        unmatched=unmatched,
        order=order,
        er=er,
        ec=ec,
        comp=comp,
        local_r=local_r[order],
        local_c=local_c[order],
        rows_of=rows_of,
        r_start=r_start,
        n_rows=n_rows,
        cols_of=cols_of,
        c_start=c_start,
        n_cols=n_cols,
        bounds=np.flatnonzero(np.r_[True, comp[1:] != comp[:-1], True]),
        single=single,
        repeated=repeated,
    )


def _solve_components(p: _Problem, ew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-weight assignment of every row (run) to one column, per connected group of rows
    and columns, for edge weights `ew` (in `p.order`): a dense Hungarian for small groups
    (most: a shape's runs and trips of a few hours), sparse LAPJV for large ones (a busy
    corridor), whose dense matrix is quadratic in memory and cubic in time; one sparse problem
    over a whole day would be slower than both.

    Groups of one row (most of a day's) are solved at once: the row takes its cheapest column,
    the first in column order on a tie, which is what the Hungarian solver returns for them.
    """
    lows, highs = p.bounds[:-1], p.bounds[1:]
    single = p.n_rows[p.comp[lows]] == 1
    if p.repeated or not np.isfinite(ew[p.single]).all():
        # weights the solver rejects, or a pair given twice (the solver keeps the last):
        # every group to the solver
        single[:] = False
        rows_out, cols_out = [np.zeros(0, p.er.dtype)], [np.zeros(0, p.ec.dtype)]
    else:
        er, ec, w, comp = p.er[p.single], p.ec[p.single], ew[p.single], p.comp[p.single]
        best = np.lexsort((ec, w, comp))
        first = best[np.r_[True, comp[best][1:] != comp[best][:-1]][: best.size]]
        rows_out, cols_out = [er[first]], [ec[first]]
    for lo, hi in zip(lows[~single], highs[~single], strict=True):
        c = p.comp[lo]
        r_ids = p.rows_of[p.r_start[c] : p.r_start[c] + p.n_rows[c]]
        c_ids = p.cols_of[p.c_start[c] : p.c_start[c] + p.n_cols[c]]
        rr, cc, w = p.local_r[lo:hi], p.local_c[lo:hi], ew[lo:hi]
        if len(r_ids) * len(c_ids) <= _DENSE_MAX_CELLS:
            m = np.full((len(r_ids), len(c_ids)), np.inf)
            m[rr, cc] = w
            a, b = linear_sum_assignment(m)
        else:
            # every row is matched exactly once, so one constant shift keeps the optimum; it
            # makes the weights non-zero, which the sparse solver needs (a zero is no edge)
            shift = 1.0 - min(float(w.min()), 0.0)
            graph = coo_matrix((w + shift, (rr, cc)), shape=(len(r_ids), len(c_ids))).tocsr()
            a, b = min_weight_full_bipartite_matching(graph)
        rows_out.append(r_ids[a])
        cols_out.append(c_ids[b])
    return np.concatenate(rows_out), np.concatenate(cols_out)


def _local_numbers(
    group: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Number the nodes 0 .. n - 1 (rows, or columns) within their `group` 0, 1, ... in
    ascending order (what `np.unique` of a group's ids gives), for every group at once.
    Returns (each node's local number, the nodes grouped one group after the other, where each
    group starts among them, how many)."""
    members = np.argsort(group, kind="stable")
    count = np.bincount(group, minlength=n_groups)
    start = np.cumsum(count) - count
    local = np.empty(group.size, np.int64)
    local[members] = np.arange(group.size) - start[group[members]]
    return local, members, start, count


def _solve(pairs: pl.DataFrame, problem: _Problem | None) -> pl.DataFrame:
    """Minimum-cost exclusive assignment of candidate pairs (runs x trips) at their `cost`;
    `problem`: `_problem` of these pairs, in this order (None when there are none)."""
    keep = ["_run", "_veh", "_block", "trip_id", "departure_delay_s", "match_method"]
    if problem is None:
        return pairs.select(keep)
    p = problem
    ew = np.r_[pairs["cost"].to_numpy(), p.unmatched][p.order]
    a, b = _solve_components(p, ew)
    ok = b < p.nt
    trip_of = np.full(p.nr, -1, np.int64)
    trip_of[a[ok]] = b[ok]
    return pairs.filter(pl.Series(trip_of[p.ri] == p.ti)).select(keep)
