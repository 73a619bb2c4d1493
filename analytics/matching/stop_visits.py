"""Stop visits: arrival and departure at every stop of each matched run, with delays.

The crossing rule is `analytics.matching.crossings` (arrive when progress reaches a stop, leave when it
clears it by `clearance_m`, each instant extrapolated from the ping beyond the crossing and
clipped between the two pings around it); here it is evaluated on arrays: each run's pings are
one slice of the track ordered by progress, and each stop finds the pings around it by a
bisection of its run's slice (one compiled pass for all stops, in the slices' order: the
zone's and the crossings' searches share it). No (stop x ping) frame is built; the stops are taken a chunk of runs at a time so that their working columns
stay small on a large day.

A stop has a zone (`stop_radius_m` before and after it along the shape): a bus that halts
short of the point arrives when it reached its first fix in the zone, one that halts past it
leaves when it left its last fix there (`_zone_targets`), so a halt a few metres off the point
keeps its dwell; a visit without a fix in the zone is interpolated. Stop positions are the
stops' own projections onto the shape (`network.locate_trip_stops`), not the densify grid.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numba
import numpy as np
import polars as pl

from analytics.matching.crossings import MIN_SPEED_M_S, RUN_KEY, group_start
from analytics.matching.options import MatchOptions
from core.instants import to_utc_instant

TRACK_COLUMNS = ("t_s", "prog_m", "v_prev_m_s", "v_next_m_s", "t_prev_s", "t_next_s")
CROSSING_COLUMNS = ("arrive_s", "leave_s", "nearest_ping_m")
RUN_POSITION = "run_position"
"""an integer key of the runs crossings are asked for, 0 .. n - 1 (the row of the run in the
frame of runs given): searches, joins and sorts below use it, not the strings of `RUN_KEY`"""
# stops per chunk of runs: bounds the working columns (a large day has millions of stops)
CHUNK_STOPS = 500_000


@dataclass(frozen=True)
class TrackSlices:
    """A day's track laid out for searching (state; see `build_track_slices`).

    Each run's pings are one slice, in progress order: run `r` (its `RUN_POSITION`) holds positions
    `lo[r]:hi[r]` (empty for a run without pings) of `prog_m` (read-only), and those positions
    are rows `rows[lo[r]:hi[r]]` of `frame` (the track's columns; `rows` None: the same
    positions). `slice_of_run[r]` is the rank of run `r`'s slice along `prog_m`.
    """

    frame: pl.DataFrame
    rows: np.ndarray | None
    prog_m: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    slice_of_run: np.ndarray

    def at(self, pos: np.ndarray, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        """Columns `names` at slice positions `pos` (one gather): values, and `<name>_null`
        masks for those with nulls."""
        rows = self.frame.select(names)[pos if self.rows is None else self.rows[pos]]
        out = {}
        for name in names:
            s = rows[name]
            nulls = s.null_count()
            out[name] = s.fill_null(np.nan).to_numpy() if nulls else s.to_numpy()
            out[f"{name}_null"] = s.is_null().to_numpy() if nulls else np.zeros(s.len(), bool)
        return out


def compute_stop_visits(
    runs: pl.DataFrame,
    track: pl.DataFrame,
    trips: pl.DataFrame,
    trip_stops: pl.DataFrame,
    options: MatchOptions,
) -> pl.DataFrame:
    """One row per stop of every matched run (columns of `stop_visits`, times as UTC instants),
    ordered by vehicle_id, run_index, stop_sequence.

    Times come from the run's pings around the stop's position along the shape (see
    `analytics.matching.crossings`); a visit is `is_interpolated` when no ping lies within
    `stop_radius_m` of the stop along the shape. Stops the run never reached have null times.
    Planned times are the trip's planned start plus the template's offsets.
    """
    # `RUN_POSITION` in output order, so nothing below joins or sorts on strings
    matched = (
        runs.filter(pl.col("trip_id").is_not_null())
        .select(*RUN_KEY, "trip_id", "start_dist_m", "end_dist_m")
        .sort(RUN_KEY)
        .with_row_index(RUN_POSITION)
    )
    slices = build_track_slices(track, matched.select(*RUN_KEY, RUN_POSITION))
    run_trips = (
        matched.join(trips.select("trip_id", "template_trip_id", "planned_start_at"), on="trip_id")
        .filter(pl.col("template_trip_id").is_not_null())
        .sort(RUN_POSITION)
    )
    where = _template_rows(run_trips["template_trip_id"], trip_stops)
    if where is None or run_trips.height == 0:
        stops = run_trips.join(trip_stops, on="template_trip_id").sort(
            RUN_POSITION, "stop_sequence"
        )
        return _visits(stops, slices, options)
    lo, count = where
    # whole runs per chunk, about CHUNK_STOPS stops each
    ends = np.cumsum(count)
    cuts = np.searchsorted(ends, np.arange(CHUNK_STOPS, int(ends[-1]), CHUNK_STOPS), "right")
    bounds = np.unique(np.r_[0, cuts, count.size])
    stop_cols = trip_stops.drop("template_trip_id")
    run_cols = run_trips.drop("template_trip_id")
    parts = []
    for r0, r1 in itertools.pairwise(bounds):
        n = count[r0:r1]
        run = np.repeat(np.arange(r0, r1), n)
        take = np.repeat(lo[r0:r1] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        stops = pl.concat([run_cols[run], stop_cols[take]], how="horizontal")
        parts.append(_visits(stops, slices, options))
    return pl.concat(parts)


def _template_rows(
    templates: pl.Series, trip_stops: pl.DataFrame
) -> tuple[np.ndarray, np.ndarray] | None:
    """For each of `templates`: the first row of its stops in `trip_stops` and how many.

    `trip_stops` as `locate_trip_stops` writes it (each template's stops together, in
    stop_sequence order) is cut by position: each template's stretch of rows is found once, not
    by joining millions of rows on a string. None when it is in any other order."""
    ids = trip_stops["template_trip_id"]
    stretch = ids.rle_id()
    new = np.r_[True, np.diff(stretch.to_numpy()) != 0][: ids.len()]
    seq = trip_stops["stop_sequence"].to_numpy()
    if not (new[1:] | (seq[1:] > seq[:-1])).all():
        return None
    firsts = np.flatnonzero(new)
    where = pl.DataFrame(
        {
            "template_trip_id": ids.gather(firsts),
            "first_stop_row": firsts.astype(np.int64),
            "end_stop_row": np.r_[firsts[1:], ids.len()][: firsts.size].astype(np.int64),
        }
    )
    if where["template_trip_id"].n_unique() < where.height:
        return None
    at = templates.to_frame("template_trip_id").join(
        where, on="template_trip_id", how="left", maintain_order="left"
    )
    lo = at["first_stop_row"].fill_null(0).to_numpy()
    return lo, at["end_stop_row"].fill_null(0).to_numpy() - lo


def _visits(stops: pl.DataFrame, slices: TrackSlices, options: MatchOptions) -> pl.DataFrame:
    """The visits of `stops` (a matched run's row beside each of its template's stops, sorted
    by `RUN_POSITION`, stop_sequence)."""
    stops = stops.rename({"stop_dist_m": "target_m"})
    run = stops[RUN_POSITION].to_numpy()
    target = stops["target_m"].to_numpy()
    # the stop's zone: `stop_radius_m` along the shape before and after it, never past half
    # the way to the trip's previous or next stop
    same_prev = np.r_[False, run[1:] == run[:-1]]
    same_next = np.r_[run[:-1] == run[1:], False]
    prev_m = np.where(same_prev, np.r_[-np.inf, target[:-1]], -np.inf)
    next_m = np.where(same_next, np.r_[target[1:], np.inf], np.inf)
    zone_lo = np.maximum(target - options.stop_radius_m, (prev_m + target) / 2)
    zone_hi = np.minimum(target + options.stop_radius_m, (target + next_m) / 2)
    # the zone's searches walk the track's axis in its order (`_axis_order`), then the
    # stops' own order again
    order = _axis_order(slices.slice_of_run[run])
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    arrive_m, leave_m, in_zone, first_at = (
        a[back]
        for a in _zone_targets(slices, run[order], target[order], zone_lo[order], zone_hi[order])
    )
    cross = compute_run_crossings(
        slices, run, arrive_m, options.clearance_m, leave_m, arrive_at=first_at
    )
    # a stop beyond the run's end or before its start was not visited by this run
    reached = pl.col("target_m").is_between(
        pl.col("start_dist_m") - options.stop_radius_m, pl.col("end_dist_m") + options.stop_radius_m
    )
    out = (
        pl.concat(
            [
                stops.with_columns(
                    pl.col("target_m").alias("stop_dist_m"),
                    pl.Series("target_m", arrive_m),
                    pl.Series("_in_zone", in_zone),
                ),
                cross,
            ],
            how="horizontal",
        )
        .with_columns(
            # the vehicle reached a stop no later than it left it
            pl.min_horizontal("arrive_s", "leave_s").alias("arrive_s")
        )
        .with_columns(
            pl.when(reached).then(pl.col("arrive_s")).alias("arrive_s"),
            pl.when(reached).then(pl.col("leave_s")).alias("leave_s"),
        )
        .with_columns(
            (pl.col("planned_start_at") + pl.duration(seconds=pl.col("arrival_offset_s"))).alias(
                "planned_arrival_at"
            ),
            (pl.col("planned_start_at") + pl.duration(seconds=pl.col("departure_offset_s"))).alias(
                "planned_departure_at"
            ),
            to_utc_instant("arrive_s").alias("arrival_at"),
            to_utc_instant("leave_s").alias("departure_at"),
        )
    )
    return out.select(
        "vehicle_id",
        "run_index",
        "trip_id",
        "stop_sequence",
        "stop_id",
        "stop_dist_m",
        "planned_arrival_at",
        "planned_departure_at",
        "arrival_at",
        "departure_at",
        ((pl.col("arrival_at") - pl.col("planned_arrival_at")).dt.total_seconds())
        .cast(pl.Int32)
        .alias("arrival_delay_s"),
        ((pl.col("departure_at") - pl.col("planned_departure_at")).dt.total_seconds())
        .cast(pl.Int32)
        .alias("departure_delay_s"),
        # along-shape distance from the stop itself (the crossings were asked at its halt)
        (pl.col("nearest_ping_m") + (pl.col("target_m") - pl.col("stop_dist_m")).abs()).alias(
            "nearest_ping_m"
        ),
        # no fix in the stop's zone: its times are interpolated between fixes around it
        (~pl.col("_in_zone")).alias("is_interpolated"),
    )


def _zone_targets(
    slices: TrackSlices,
    run: np.ndarray,
    stop_m: np.ndarray,
    zone_lo: np.ndarray,
    zone_hi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where each run is taken to arrive at and leave each stop (metres along the shape),
    whether any of its fixes lies in the stop's zone [`zone_lo`, `zone_hi`], and the slice
    position of the first fix at or past the arrival point when it is that first fix in the
    zone (else -1: it is to be searched).

    A bus halts a few metres short of or past a stop's point (behind another bus, at a long
    bay): one that stands short never reaches the point until it leaves, one past it leaves
    from further on. So it arrives when it reached its first fix in the zone, when that lies
    short of the point, and leaves when it left its last fix in the zone, when that lies past
    the point (each instant by the crossing rule of `analytics.matching.crossings`); without
    a fix in the zone both are the point's own crossings, interpolated between the fixes
    around it. Measured on the simulator's halts 5-30 m off the point (30 s pings): arrival
    error median 2.7 s, p90 7 s short of it, where the point's crossing gave 7.5 s and 23 s.
    Fastest with the queries in the axis' order (`_axis_order`)."""
    arrive_m, leave_m = stop_m.copy(), stop_m.copy()
    prog = slices.prog_m
    lo, hi = slices.lo[run], slices.hi[run]
    if prog.size == 0:
        return arrive_m, leave_m, np.zeros(run.size, bool), np.full(run.size, -1, np.int64)
    first = _search(slices, run, zone_lo, right=False)
    last = _search(slices, run, zone_hi, right=True) - 1
    f = np.minimum(first, prog.size - 1)
    g = np.maximum(last, 0)
    in_zone = (first < hi) & (prog[f] <= zone_hi)
    # ... and only when it got to the point at last (a run ending short of it never reached it)
    got_there = prog[np.maximum(hi - 1, 0)] >= stop_m
    at_first = in_zone & (prog[f] < stop_m) & got_there
    arrive_m = np.where(at_first, prog[f], arrive_m)
    leave_m = np.where(in_zone & (last >= lo) & (prog[g] > stop_m), prog[g], leave_m)
    # every fix of the run before `first` lies short of the zone, so the first at or past
    # `prog[first]` is `first` itself: no search needed (and ties would send it to `_bisect`)
    return arrive_m, leave_m, in_zone, np.where(at_first, first, -1)


def build_track_slices(track: pl.DataFrame, run_positions: pl.DataFrame) -> TrackSlices:
    """The track (key columns and `TRACK_COLUMNS`, each run's pings in time order, progress
    monotone) laid out per run for searching; `run_positions`: vehicle_id, run_index,
    `RUN_POSITION` (0 .. n - 1). A track whose runs are contiguous and in progress order (as
    `build_runs` writes it) is used in place; any other is sorted first, stably, so pings at
    equal progress keep their track order."""
    n_runs = run_positions.height
    if track.height == 0:
        seg_start = np.zeros(0, np.int64)
        seg_run = np.zeros(0, np.int64)
    else:
        seg_start = np.flatnonzero(track.select(group_start(*RUN_KEY)).to_series().to_numpy())
        seg_run = (
            track.select(RUN_KEY)[seg_start]
            .join(run_positions, on=RUN_KEY, how="left", maintain_order="left")[RUN_POSITION]
            .fill_null(-1)
            .cast(pl.Int64)
            .to_numpy()
        )
    seg_len = np.diff(np.r_[seg_start, track.height]).astype(np.int64)
    frame = track.select(TRACK_COLUMNS)
    prog = frame["prog_m"].to_numpy()
    step_back = prog[1:] < prog[:-1]
    step_back[seg_start[1:] - 1] = False  # a new run may start behind the previous one
    mine = seg_run >= 0
    lo = np.zeros(n_runs, np.int64)
    hi = np.zeros(n_runs, np.int64)
    if not step_back.any() and np.unique(seg_run[mine]).size == int(mine.sum()):
        rows = None
        lo[seg_run[mine]] = seg_start[mine]
        hi[seg_run[mine]] = seg_start[mine] + seg_len[mine]
        slice_of_run = np.zeros(n_runs, np.int64)
        slice_of_run[seg_run[mine]] = np.flatnonzero(mine)
    else:
        row_run = np.repeat(seg_run, seg_len)
        keep = np.flatnonzero(row_run >= 0)
        rows = keep[np.lexsort((prog[keep], row_run[keep]))]
        prog = prog[rows]
        place = row_run[rows]
        lo = np.searchsorted(place, np.arange(n_runs), side="left").astype(np.int64)
        hi = np.searchsorted(place, np.arange(n_runs), side="right").astype(np.int64)
        slice_of_run = np.arange(n_runs)
    # one array type for the compiled search (a column's own array is read-only already)
    prog.flags.writeable = False
    return TrackSlices(frame, rows, prog, lo, hi, slice_of_run)


def _search(slices: TrackSlices, run: np.ndarray, x: np.ndarray, right: bool) -> np.ndarray:
    """Per query (its run, position `x`), the first position of the run's slice whose
    `prog_m` is > `x` (`right`) or >= `x` (else), the slice's end when none (or when `x` is
    NaN). Fastest with the queries in the axis' order (`_axis_order`): `bisect_slices`."""
    return bisect_slices(
        slices.prog_m, slices.lo[run], slices.hi[run], np.asarray(x, np.float64), right
    )


def _axis_order(place: np.ndarray) -> np.ndarray:
    """The permutation that orders queries by their slice's place on the axis, keeping the
    order of a run's queries (its stops, mostly ascending along the shape): each stretch of
    queries of one run moves as a block."""
    if place.size == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, place[1:] != place[:-1]])
    sizes = np.diff(np.r_[starts, place.size])
    by = np.argsort(place[starts], kind="stable")
    size, start = sizes[by], starts[by]
    return np.repeat(start - (np.cumsum(size) - size), size) + np.arange(place.size)


@numba.njit(cache=True, nogil=True)
def bisect_slices(prog, lo, hi, x, right):  # pragma: no cover - compiled; tested through _search
    """Per query, the first index in `lo:hi` whose `prog` is > `x` (`right`) or >= `x` (else),
    `hi` when none or when `x` is NaN: `np.searchsorted` within each query's own slice.

    Compiled because numpy has no search within many slices at once: its one `searchsorted`
    over all the slices laid end to end needs a composite key (position plus the slice's rank
    times a width), a rounded sum whose ties must be searched again, and a gather per probe
    from an array of every fix of the day. Here each query bisects its run's own slice (a few
    hundred fixes, a handful of steps), reading nothing else."""
    n = x.shape[0]
    out = np.empty(n, np.int64)
    for i in range(n):
        a = lo[i]
        b = hi[i]
        v = x[i]
        if v != v:  # NaN: past every fix, as `np.searchsorted` places it
            out[i] = b
            continue
        while a < b:
            m = (a + b) >> 1
            if prog[m] < v or (right and prog[m] == v):
                a = m + 1
            else:
                b = m
        out[i] = a
    return out


def compute_run_crossings(
    slices: TrackSlices,
    run: np.ndarray,
    target_m: np.ndarray,
    clearance_m: float,
    leave_target_m: np.ndarray | None = None,
    arrive_at: np.ndarray | None = None,
) -> pl.DataFrame:
    """When each run arrived at and left each of its targets (`analytics.matching.crossings` rule).

    `run`, `target_m`: per target, its `RUN_POSITION` and position along the shape (metres).
    `leave_target_m`: where the run is taken to leave from, when not `target_m` (a stop's
    halt past its point, `_zone_targets`). `arrive_at`: per target, the slice position of the
    run's first fix at or past `target_m` when already known (-1: search it).
    Returns, in target order, `arrive_s` and `leave_s` (epoch seconds, null when the run never
    got there; `arrive_s` not yet capped by `leave_s`) and `nearest_ping_m` (along-shape
    distance to the run's nearest ping, metres).
    """
    prog = slices.prog_m
    if prog.size == 0:  # no pings at all: no run reached anything
        return pl.DataFrame(
            {c: pl.Series(c, [None] * run.size, pl.Float64) for c in CROSSING_COLUMNS}
        )
    # targets in the track's order: the searches walk the axis forward and every gather
    # below reads the track nearly in sequence (far fewer cache misses than in run order)
    order = _axis_order(slices.slice_of_run[run])
    run, target_m = run[order], target_m[order]
    leave_m = target_m if leave_target_m is None else leave_target_m[order]
    arrive_at = None if arrive_at is None else arrive_at[order]
    lo, hi = slices.lo[run], slices.hi[run]

    def speed(row: dict[str, np.ndarray], first: str, second: str) -> np.ndarray:
        # coalesce(first, second, MIN_SPEED_M_S)
        return np.where(
            ~row[f"{first}_null"],
            row[first],
            np.where(~row[f"{second}_null"], row[second], MIN_SPEED_M_S),
        )

    speeds = ("v_prev_m_s", "v_next_m_s")
    # arrival: the last ping before the target (of equal progress, the last), moving on at
    # its incoming speed; no ping beyond it (no next ping) means the run never reached it
    if arrive_at is None:
        first_at = _search(slices, run, target_m, right=False)
    else:
        first_at = arrive_at.copy()
        ask = np.flatnonzero(arrive_at < 0)
        first_at[ask] = _search(slices, run[ask], target_m[ask], right=False)
    has_before = first_at > lo
    b = np.where(has_before, first_at - 1, 0)
    before = slices.at(b, ("t_s", "t_next_s", *speeds))
    arrive_ok = has_before & ~before["t_next_s_null"]
    arrive = before["t_s"] + (target_m - prog[b]) / speed(before, "v_prev_m_s", "v_next_m_s")
    arrive = np.maximum(np.minimum(arrive, before["t_next_s"]), before["t_s"])
    # departure: the first ping clear of the target (of equal progress, the first),
    # extrapolated back at its outgoing speed
    after_at = _search(slices, run, leave_m + clearance_m, right=True)
    leave_ok = after_at < hi
    a = np.where(leave_ok, after_at, 0)
    after = slices.at(a, ("t_s", "t_prev_s", *speeds))
    t_a = after["t_s"]
    leave = t_a - (prog[a] - leave_m) / speed(after, "v_next_m_s", "v_prev_m_s")
    t_prev = np.where(after["t_prev_s_null"], t_a, after["t_prev_s"])
    leave = np.maximum(np.minimum(leave, t_a), t_prev)
    # nearest ping: the one just before the target or the first at or after it
    has_after = first_at < hi
    gap_before = np.where(has_before, target_m - prog[b], np.inf)
    gap_after = np.where(has_after, prog[np.where(has_after, first_at, 0)] - target_m, np.inf)
    nearest = np.minimum(gap_before, gap_after)
    back = np.empty_like(order)
    back[order] = np.arange(order.size)  # to the targets' own order
    return pl.DataFrame(
        {
            "arrive_s": arrive[back],
            "leave_s": leave[back],
            "nearest_ping_m": nearest[back],
            "is_arrival_found": arrive_ok[back],
            "is_departure_found": leave_ok[back],
            "has_ping": (has_before | has_after)[back],
        }
    ).select(
        pl.when("is_arrival_found").then("arrive_s").alias("arrive_s"),
        pl.when("is_departure_found").then("leave_s").alias("leave_s"),
        pl.when("has_ping").then("nearest_ping_m").alias("nearest_ping_m"),
    )
