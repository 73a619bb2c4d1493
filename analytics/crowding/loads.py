"""Load profiles: boardings, alightings and the load after each stop of every run; standees per
m² against the profile's limit (BG art. 59: seats + 4 per m²; CGS art. 45: 7.5 per m²) and the
TCQSM passenger-load level of service.

Alightings are the chained ones plus the unlinked taps scaled in: the unlinked boarders at a stop
alight downstream in proportion to the linked alightings after that stop on the same run; when
the run has none there, in proportion to the line-direction's linked alightings at those stops
over the period; failing that, evenly over the remaining stops. Because every share lies
strictly downstream of its boarding, loads never go negative and reach zero at the last stop.
APC counts, when a run has them, replace the taps and the inference.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cached_property

import numba
import numpy as np
import polars as pl

from analytics.crowding.boardings import (
    DEFAULT_BOARDING_OPTIONS,
    RUN_KEY,
    BoardingOptions,
    VisitKey,
    build_stop_windows,
    match_to_windows,
    sort_by_run,
)
from core.profile import Profile
from core.schema import UTC_INSTANT


@dataclass(frozen=True)
class LoadOptions:
    """TCQSM passenger-load LOS bands (TCQSM 3rd ed., bus passenger load): seated loads by
    load factor, standing loads by area per standee. All default-marked method parameters."""

    od_min_linked_taps: int = 1
    """default: linked riders from a stop (line and direction, over the period) needed before
    their destinations stand for the unlinked boarders of that stop"""
    los_a_max_load_factor: float = 0.50
    """default (TCQSM): A while passengers / seats is at most this"""
    los_b_max_load_factor: float = 0.75
    """default (TCQSM): B up to this load factor"""
    los_c_max_load_factor: float = 1.00
    """default (TCQSM): C up to every seat taken"""
    los_d_min_m2_per_standee: float = 0.35
    """default (TCQSM): D while each standee has more than this standing area, m²"""
    los_e_min_m2_per_standee: float = 0.20
    """default (TCQSM): E ('maximum schedule load') down to this area per standee, m²; F below"""


DEFAULT_LOAD_OPTIONS = LoadOptions()


def build_capacities(vehicles: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Seats and standing area of each registered vehicle, with the profile's fallback per type.

    `vehicles`: the `vehicles` register. Returns `vehicle_id`, `n_seats`, `standing_area_m2`
    (m²), `capacity_source` ('register' when the register gives both, else
    'type_fallback'; 'unknown' when neither the register nor the type gives them) and
    `standees_limit_per_m2` (the profile's limit for the vehicle's service class).
    """
    types = profile.crowding.vehicle_types
    fallback = pl.DataFrame(
        {
            "vehicle_type": list(types),
            "fb_seats": [t.n_seats.value for t in types.values()],
            "fb_area_m2": [t.standing_area_m2.value for t in types.values()],
        },
        schema={"vehicle_type": pl.String, "fb_seats": pl.Int32, "fb_area_m2": pl.Float64},
    )
    v = vehicles.select(
        "vehicle_id",
        "vehicle_type",
        # a frame without the class (a partial register) gets the general limit
        pl.col("service_class")
        if "service_class" in vehicles.columns
        else pl.lit(None, dtype=pl.String).alias("service_class"),
        pl.col("n_seats").cast(pl.Int32),
        pl.col("standing_area_m2").cast(pl.Float64),
    ).join(fallback, on="vehicle_type", how="left")
    seats = pl.coalesce("n_seats", "fb_seats")
    area = pl.coalesce("standing_area_m2", "fb_area_m2")
    source = (
        pl.when(pl.col("n_seats").is_not_null() & pl.col("standing_area_m2").is_not_null())
        .then(pl.lit("register"))
        .when(seats.is_not_null() & area.is_not_null())
        .then(pl.lit("type_fallback"))
        .otherwise(pl.lit("unknown"))
    )
    # a service class with its own standing limit (BG art. 6-II: selective seats only, 0)
    limit: pl.Expr = pl.lit(profile.crowding.standees_max_per_m2.value)
    for service_class, value in profile.crowding.standees_limit_by_class().items():
        limit = pl.when(pl.col("service_class") == service_class).then(value).otherwise(limit)
    return v.select(
        "vehicle_id",
        seats.alias("n_seats"),
        area.alias("standing_area_m2"),
        source.alias("capacity_source"),
        limit.cast(pl.Float64).alias("standees_limit_per_m2"),
    )


def standees_per_m2_expr(load: pl.Expr, seats: pl.Expr, area: pl.Expr) -> pl.Expr:
    """max(0, load - seats) / standing area; null without capacity or standing area."""
    standees = (load - seats).clip(lower_bound=0)
    return pl.when(area > 0).then(standees / area)


def over_limit_expr(
    load: pl.Expr, seats: pl.Expr, area: pl.Expr, limit_per_m2: float | pl.Expr
) -> pl.Expr:
    """True when the standees per m² exceed the limit (a vehicle without standing area is over
    as soon as someone stands); null when the capacity is unknown."""
    return (
        pl.when(seats.is_null() | area.is_null())
        .then(None)
        .when(area > 0)
        .then(standees_per_m2_expr(load, seats, area) > limit_per_m2)
        .otherwise(load > seats)
    )


def los_expr(load: pl.Expr, seats: pl.Expr, area: pl.Expr, options: LoadOptions) -> pl.Expr:
    """TCQSM passenger-load LOS letter (A–F); null when the seats are unknown."""
    factor = load / seats
    m2_per_standee = area / (load - seats)
    return (
        pl.when(seats.is_null() | (seats <= 0))
        .then(None)
        .when(factor <= options.los_a_max_load_factor)
        .then(pl.lit("A"))
        .when(factor <= options.los_b_max_load_factor)
        .then(pl.lit("B"))
        .when(factor <= options.los_c_max_load_factor)
        .then(pl.lit("C"))
        .when(area.is_null())
        .then(None)
        .when(m2_per_standee > options.los_d_min_m2_per_standee)
        .then(pl.lit("D"))
        .when(m2_per_standee >= options.los_e_min_m2_per_standee)
        .then(pl.lit("E"))
        .otherwise(pl.lit("F"))
    )


def compute_apc_counts(
    counts: pl.DataFrame,
    stop_visits: pl.DataFrame,
    options: BoardingOptions = DEFAULT_BOARDING_OPTIONS,
) -> pl.DataFrame:
    """Place APC readings (`passenger_counts`) on stop visits by vehicle and time.

    Returns per run and `stop_sequence`: `apc_boardings`, `apc_alightings` (passengers).
    Readings outside every stop window of their vehicle are left out.
    """
    windows = build_stop_windows(stop_visits, include_last=True, options=options)
    placed = match_to_windows(
        counts.select(
            "vehicle_id", pl.col("event_at").cast(UTC_INSTANT), "n_boardings", "n_alightings"
        ),
        windows,
    ).filter("is_placed")
    return (
        placed.rename({"window_service_date": "service_date"})
        .group_by(*RUN_KEY, "stop_sequence")
        .agg(
            pl.col("n_boardings").sum().cast(pl.Float64).alias("apc_boardings"),
            pl.col("n_alightings").sum().cast(pl.Float64).alias("apc_alightings"),
        )
    )


_DENSE_VISITS_MAX = 1 << 25
"""largest table of visit rows built for the lookup: of every cell of the key (days x
vehicles x runs x sequences, int32) or else of the runs' sequences (runs x sequences,
int64); 32 M entries. Beyond it the taps bisect the visits' keys"""


def _visit_rows(keys: np.ndarray, key: VisitKey, *wanted: np.ndarray) -> list[np.ndarray]:
    """Row of each `wanted` key in the sorted, unique visit `keys` (values of `key`, whose
    `n_seqs` consecutive values belong to one run); -1 where there is none.

    A bisection over a big city's million visits misses the cache at every step for each of
    ten million taps. A key numbers the (day, vehicle, run, sequence) cells of its ranges
    densely, so while they are few a table of every cell's row answers in one access;
    otherwise the run is found by bisection over the runs (a small array) and the row read
    from a table of each run's rows by stop sequence.
    """
    return _VisitLookup(keys, key).rows(*wanted)


class _VisitLookup:
    """`_visit_rows` over one set of visit keys, its tables built once (a period counted a
    day at a time looks its taps up in the same visits every day: the dense table of a
    month's cells is tens of MB)."""

    def __init__(self, keys: np.ndarray, key: VisitKey) -> None:
        self.size = keys.size
        self.keys = keys
        self.n_seqs = key.n_seqs
        self.cells: np.ndarray | None = None
        self.runs: np.ndarray | None = None
        self.table: np.ndarray | None = None
        if keys.size == 0:
            return
        n_cells = key.n_days * key.vehicles.len() * key.n_runs * key.n_seqs
        if n_cells <= _DENSE_VISITS_MAX:
            self.cells = np.full(n_cells, -1, dtype=np.int32)
            self.cells[keys] = np.arange(keys.size, dtype=np.int32)
            return
        n_seqs = key.n_seqs
        run_of_key = keys // n_seqs
        first = np.flatnonzero(np.r_[True, run_of_key[1:] != run_of_key[:-1]])
        runs = run_of_key[first]
        if runs.size * n_seqs > _DENSE_VISITS_MAX:
            return  # bisection over the keys
        run_of_row = np.repeat(np.arange(runs.size), np.diff(np.r_[first, keys.size]))
        table = np.full(runs.size * n_seqs, -1, dtype=np.int64)
        table[run_of_row * n_seqs + keys % n_seqs] = np.arange(keys.size)
        self.runs, self.table = runs, table

    def rows(self, *wanted: np.ndarray) -> list[np.ndarray]:
        """The row of each key of each `wanted` array, -1 where none."""
        if self.size == 0:
            return [np.full(w.size, -1, dtype=np.int64) for w in wanted]
        found = []
        if self.cells is not None:
            cells = self.cells
            for w in wanted:
                inside = (w >= 0) & (w < cells.size)
                found.append(np.where(inside, cells[np.where(inside, w, 0)], -1).astype(np.int64))
            return found
        if self.runs is None or self.table is None:
            keys = self.keys
            for w in wanted:
                rows = np.searchsorted(keys, w).clip(max=keys.size - 1)
                found.append(np.where(keys[rows] == w, rows, -1))
            return found
        runs, table, n_seqs = self.runs, self.table, self.n_seqs
        for w in wanted:
            wanted_run = w // n_seqs
            run = np.searchsorted(runs, wanted_run).clip(max=runs.size - 1)
            is_found = (w >= 0) & (runs[run] == wanted_run)
            found.append(np.where(is_found, table[run * n_seqs + w % n_seqs], -1))
        return found


def _od_alightings(
    v: pl.DataFrame, load_visits: LoadVisits, counts: VisitCounts, options: LoadOptions
) -> pl.DataFrame:
    """First tier for the unlinked boarders: the line-direction's linked riders who boarded at
    the same stop over the period (its origin-destination shares, `counts.od_pair`), over the
    stops the run reaches after it. Adds `n_alightings_od` and leaves in `u` only the boarders
    no such rider covers (for `_scaled_alightings`).

    `v` has one row per run (numbered by `run_number`) and stop, in run and stop sequence
    order, with its `pattern_stop` (line, direction and stop) and `stop_code`, numbered over
    `load_visits`."""
    pattern_stop = v["pattern_stop"].cast(pl.Int64).to_numpy()
    stop_code = v["stop_code"].cast(pl.Int64).to_numpy()
    n_codes, n_patterns = load_visits.n_codes, load_visits.n_patterns
    # origin-destination counts by (pattern stop, destination stop), sorted by pattern stop
    od_from, od_to = counts.od_pair // n_codes, counts.od_pair % n_codes
    n_od = counts.od_count
    kept = np.bincount(od_from, weights=n_od, minlength=n_patterns) >= options.od_min_linked_taps
    keep = kept[od_from]
    od_from, od_to, n_od = od_from[keep], od_to[keep], n_od[keep].astype(np.float64)
    od_start = np.searchsorted(od_from, np.arange(n_patterns + 1))
    run = v["run_number"].to_numpy()
    run_start = np.r_[np.flatnonzero(np.r_[True, run[1:] != run[:-1]]), run.size]
    u = v["u"].to_numpy()
    n_alightings_od, is_covered = _od_shares(
        run_start, u, pattern_stop, stop_code, od_start, od_to, n_od, n_codes
    )
    return v.with_columns(
        pl.Series("n_alightings_od", n_alightings_od),
        pl.when(pl.Series(is_covered)).then(0.0).otherwise("u").alias("u"),
    )


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _od_shares(  # pragma: no cover - compiled; tested through compute_loads
    run_start, u, pattern_stop, stop_code, od_start, od_to, n_od, n_codes
):
    """Alightings of the unlinked boarders by origin-destination shares; returns (alightings
    per visit row, whether the row's boarders were sent).

    Visits are rows in run and stop sequence order, the runs' rows `run_start[r]` ..
    `run_start[r + 1] - 1`. The boarders `u` of a row go to the destinations of its pattern
    stop (`od_to[k]`, `n_od[k]` riders, k in `od_start[p]` .. `od_start[p + 1] - 1`) that the
    run reaches later, the first time it reaches each, in proportion to `n_od`.

    No vectorised form: joining each unlinked stop to its line's destinations and those to
    the run's later stops expands tens of rows per stop only to keep the first of each; this
    scan walks each run backwards holding the next row of every stop.
    """
    n = u.shape[0]
    out = np.zeros(n, dtype=np.float64)
    is_covered = np.zeros(n, dtype=np.bool_)
    next_row = np.full(n_codes, -1, dtype=np.int64)
    for r in range(run_start.shape[0] - 1):
        first, end = run_start[r], run_start[r + 1]
        for i in range(end - 1, first - 1, -1):
            if u[i] > 0:
                p = pattern_stop[i]
                total = 0.0
                for k in range(od_start[p], od_start[p + 1]):
                    if next_row[od_to[k]] >= 0:
                        total += n_od[k]
                if total > 0:
                    is_covered[i] = True
                    for k in range(od_start[p], od_start[p + 1]):
                        t = next_row[od_to[k]]
                        if t >= 0:
                            out[t] += u[i] * n_od[k] / total
            next_row[stop_code[i]] = i
        for i in range(first, end):
            next_row[stop_code[i]] = -1
    return out, is_covered


def _scaled_alightings(v: pl.LazyFrame) -> pl.LazyFrame:
    """Alightings of the unlinked boarders `u` spread over downstream stops, in three tiers
    of weights (`w_trip`, `w_pattern`, `w_even`); adds `n_alightings_scaled`. `v` has one
    row per run (numbered by `run_number`) and stop.

    For weights w over a run's stops, the boarders u_s of stop s are sent to t > s in shares
    w_t / R_s with R_s = sum of w after s; the total reaching t is w_t * sum_{s<t} u_s / R_s,
    an exclusive cumulative sum, so the whole run is a few vectorised passes.
    """
    tiers = ("w_trip", "w_pattern", "w_even")
    exprs = []
    for w in tiers:
        # `v` is in stop sequence order within each run: the running sums need no order_by
        # (a sort of every run's rows, per window)
        after = pl.col(w).sum().over("run_number") - pl.col(w).cum_sum().over("run_number")
        exprs.append(after.alias(f"r_{w}"))
    v = v.with_columns(exprs)
    # Each stop's unlinked boarders use the first tier with weight downstream.
    tier = (
        pl.when(pl.col("r_w_trip") > 0)
        .then(pl.lit(0))
        .when(pl.col("r_w_pattern") > 0)
        .then(pl.lit(1))
        .when(pl.col("r_w_even") > 0)
        .then(pl.lit(2))
    )
    v = v.with_columns(tier.alias("tier"))
    total = pl.lit(0.0)
    for i, w in enumerate(tiers):
        share = pl.when(pl.col("tier") == i).then(pl.col("u") / pl.col(f"r_{w}")).otherwise(0.0)
        before = share.cum_sum().over("run_number") - share
        total = total + pl.col(w) * before
    return v.with_columns(total.alias("n_alightings_scaled"))


@dataclass(frozen=True)
class LoadVisits:
    """The stop visits of a period as the load profiles number them: one row per usable visit
    (a time at the stop), in run key and stop sequence order, with the keys the taps are
    counted on and the line-direction stops whose riders are pooled over the period.

    Built once for a period (`build_load_visits`); the taps' counts (`count_visit_taps`) can
    then be added up a day at a time and the profiles computed from them
    (`compute_loads_from_counts`), with the same results as from all the taps at once."""

    visits: pl.DataFrame
    """run key, `trip_id`, `stop_sequence`, `stop_id`, `departure_at`, `run_number`,
    `next_stop_id`, `route_id` ('?' without), `direction_id` (-1 without), `has_route`,
    `pattern_stop`, `stop_code`"""
    key: VisitKey
    keys: np.ndarray
    """each row's `key` value (increasing)"""
    has_route: np.ndarray
    pattern_stop: np.ndarray
    """each row's line-direction stop (route, direction, stop), numbered from 0"""
    stop_code: np.ndarray
    """each row's stop, numbered from 0 in stop id order"""
    n_patterns: int
    n_codes: int

    @cached_property
    def lookup(self) -> _VisitLookup:
        """The row of a visit key (`_visit_rows`), its tables built once for every day."""
        return _VisitLookup(self.keys, self.key)


def build_load_visits(stop_visits: pl.DataFrame, trips: pl.DataFrame) -> LoadVisits:
    """The visits of `stop_visits` the load profiles count on, with their line and direction
    from `trips` (`scheduled_trips`: service_date, trip_id, route_id, direction_id)."""
    seq = "stop_sequence"
    # joins and windows on integer keys (a run number; a visit key) cost a fraction of those
    # on the (string) run key, most of all the group-bys over a million taps
    new_run = pl.any_horizontal(*[pl.col(c).ne_missing(pl.col(c).shift(1)) for c in RUN_KEY])
    route = trips.lazy().select(
        "service_date",
        "trip_id",
        "route_id",
        pl.col("direction_id").cast(pl.Int32).fill_null(-1),
    )
    ordered = sort_by_run(
        stop_visits.lazy()
        .filter(pl.coalesce("arrival_at", "departure_at").is_not_null())
        .select(
            *RUN_KEY,
            "trip_id",
            pl.col(seq).cast(pl.Int32),
            "stop_id",
            pl.coalesce("departure_at", "arrival_at").cast(UTC_INSTANT).alias("departure_at"),
        )
        .collect()
    )
    # the stops numbered in stop id order (a dense rank of a month's string ids sorts them
    # all: the few distinct ids are sorted instead, and each visit's found by its id)
    stop_ids = ordered["stop_id"].drop_nulls().unique().sort()
    # the line and direction of each run's trip: joined on the first visit of each stretch of
    # one run and trip (a run's visits share its trip: some ten thousand rows a day rather
    # than a month of visits on the string key), then gathered by the stretch's number
    new_trip = new_run | pl.col("trip_id").ne_missing(pl.col("trip_id").shift(1))
    v = (
        ordered.lazy()
        .with_columns(
            new_run.cum_sum().alias("run_number"),
            pl.when(new_run.shift(-1, fill_value=True))
            .then(None)
            .otherwise(pl.col("stop_id").shift(-1))
            .alias("next_stop_id"),
            (new_trip.cum_sum() - 1).alias("stretch"),
            pl.col("stop_id")
            .cast(pl.Enum(stop_ids))
            .to_physical()
            .cast(pl.Int64)
            .alias("stop_code"),
        )
        .collect()
    )
    stretches = (
        ordered.lazy()
        .filter(new_trip)
        .select("service_date", "trip_id")
        .join(
            route.unique(["service_date", "trip_id"], keep="first"),
            on=["service_date", "trip_id"],
            how="left",
            maintain_order="left",
        )
        .select(
            pl.col("route_id").is_not_null().alias("has_route"),
            pl.col("route_id").fill_null("?"),
            pl.col("direction_id").fill_null(-1),
        )
        .collect()
        .rechunk()  # (gathered from: one chunk)
    )
    del ordered
    stretch = v["stretch"].rechunk()  # (its rows gathered as one chunk, as the rest)
    visits = pl.concat([v.drop("stretch"), stretches[stretch]], how="horizontal")
    del v, stretch
    # a pattern stop: a stop of a line-direction (its linked alightings over the period weigh
    # the second tier; its riders' destinations make the origin-destination shares), numbered
    # by a table of the (line, direction, stop) codes present (the numbers are ids only: the
    # shares sum each pattern stop's destinations in stop code order)
    route_ids = stretches["route_id"].unique().sort()
    route_code = visits["route_id"].cast(pl.Enum(route_ids)).to_physical().cast(pl.Int64).to_numpy()
    direction = visits["direction_id"].cast(pl.Int64).to_numpy()
    stop_code = visits["stop_code"].to_numpy()
    n_codes = int(stop_code.max()) + 1 if stop_code.size else 1
    lowest_direction = int(direction.min()) if direction.size else 0
    n_directions = int(direction.max()) - lowest_direction + 1 if direction.size else 1
    cell = (route_code * n_directions + (direction - lowest_direction)) * n_codes + stop_code
    n_cells = max(len(route_ids), 1) * n_directions * n_codes
    if n_cells <= _PATTERN_TABLE_MAX:
        present = np.zeros(n_cells, dtype=np.bool_)
        present[cell] = True
        pattern_stop = (np.cumsum(present) - 1)[cell]
    else:  # (a sort of the cells: the same numbers)
        pattern_stop = np.unique(cell, return_inverse=True)[1].reshape(-1)
    del route_code, direction, cell
    visits = visits.select(
        pl.exclude("has_route", "stop_code"),
        "has_route",
        pl.Series("pattern_stop", pattern_stop, dtype=pl.Int64),
        "stop_code",
    )
    key = VisitKey.of(visits)
    return LoadVisits(
        visits=visits,
        key=key,
        keys=visits.select(key.expr(pl.col(seq))).to_series().to_numpy(),
        has_route=visits["has_route"].to_numpy(),
        pattern_stop=pattern_stop,
        stop_code=stop_code,
        n_patterns=int(pattern_stop.max()) + 1 if pattern_stop.size else 1,
        n_codes=n_codes,
    )


_PATTERN_TABLE_MAX = 64_000_000
"""(lines x directions x stops) cells beyond which `build_load_visits` numbers the pattern
stops by a sort rather than a table of the cells (64 MB; a big city has a few million)"""


@dataclass(frozen=True)
class VisitCounts:
    """What the load profiles need of the taps, per row of a `LoadVisits`: integer counts,
    which add up exactly over days (`add`)."""

    n_taps: np.ndarray
    """taps that boarded at each visit"""
    n_boardings_linked: np.ndarray
    """of them, those whose alighting was chained"""
    n_alightings_linked: np.ndarray
    """chained alightings at each visit"""
    od_pair: np.ndarray
    """(pattern stop x `n_codes` + destination stop code) of the chained riders of runs with
    a line, sorted, unique"""
    od_count: np.ndarray
    """riders of each `od_pair`"""

    @classmethod
    def none(cls, load_visits: LoadVisits) -> VisitCounts:
        """No tap on any visit."""
        zeros = np.zeros(load_visits.keys.size, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        return cls(zeros, zeros, zeros, empty, empty)

    def add(self, other: VisitCounts) -> VisitCounts:
        """The counts of both (of taps of other days: each tap is counted once)."""
        pair, inverse = np.unique(np.r_[self.od_pair, other.od_pair], return_inverse=True)
        count = np.bincount(
            inverse, weights=np.r_[self.od_count, other.od_count], minlength=pair.size
        )
        return VisitCounts(
            self.n_taps + other.n_taps,
            self.n_boardings_linked + other.n_boardings_linked,
            self.n_alightings_linked + other.n_alightings_linked,
            pair,
            count.astype(np.int64),
        )


def count_visit_taps(placements: pl.DataFrame, load_visits: LoadVisits) -> VisitCounts:
    """Count the placed taps of `placements` (`compute_alightings` output) on the visits.

    Each placed tap finds its boarding and alighting visits by the visits' integer keys
    (sorted with the visits, unique as the table's primary key; `_visit_rows`), and the
    counts per visit are bincounts: no group-by or join over a million taps.
    """
    tally = VisitTally(load_visits)
    tally.add_taps(placements)
    return tally.counts()


class VisitTally:
    """The `VisitCounts` of taps counted a part at a time (`add_taps`: a service day's), added
    up in place: the same counts as `count_visit_taps` of all the parts at once.

    A day's taps touch the visits of a few days only (the visits are in day order): their
    counts are added to that range of rows, and their origin-destination pairs are kept and
    merged once (`counts`), rather than arrays of every visit of the period made and added,
    and the pairs sorted again, for each day."""

    def __init__(self, load_visits: LoadVisits) -> None:
        self.load_visits = load_visits
        n = load_visits.keys.size
        self.n_taps = np.zeros(n, dtype=np.int64)
        self.n_boardings_linked = np.zeros(n, dtype=np.int64)
        self.n_alightings_linked = np.zeros(n, dtype=np.int64)
        self.od_pairs: list[np.ndarray] = []

    def add_taps(self, placements: pl.DataFrame) -> None:
        """Count the placed taps of `placements` (`compute_alightings` output)."""
        load_visits = self.load_visits
        seq = "stop_sequence"
        key = load_visits.key
        placed = (
            # every tap, not a filtered copy of the placed ones: an unplaced tap has no run or
            # stop, so its keys are -1 and it counts nowhere, as if filtered out
            placements.lazy()
            .with_columns(
                pl.when(pl.col("placement") == "placed").then(key.run_expr()).alias("run_key")
            )
            .select(
                key.expr(pl.col(seq), pl.col("run_key")).fill_null(-1).alias("board_key"),
                key.expr(pl.col("alighting_stop_sequence"), pl.col("run_key"))
                .fill_null(-1)
                .alias("alight_key"),
                pl.col("alighting_stop_sequence").is_not_null().alias("is_linked"),
            )
            .collect()
        )
        board, alight = load_visits.lookup.rows(
            placed["board_key"].to_numpy(), placed["alight_key"].to_numpy()
        )
        is_linked = placed["is_linked"].to_numpy()
        del placed
        on_board = board >= 0
        is_od = on_board & (alight >= 0)
        is_od[is_od] = load_visits.has_route[board[is_od]]
        self.od_pairs.append(
            load_visits.pattern_stop[board[is_od]] * load_visits.n_codes
            + load_visits.stop_code[alight[is_od]]
        )
        boarded = board[on_board]
        _add_counts(self.n_taps, boarded)
        _add_counts(self.n_boardings_linked, board[on_board & is_linked])
        _add_counts(self.n_alightings_linked, alight[alight >= 0])

    def counts(self) -> VisitCounts:
        """The counts of every tap added so far."""
        pairs = np.concatenate(self.od_pairs) if self.od_pairs else np.zeros(0, dtype=np.int64)
        pair, n_od = np.unique(pairs, return_counts=True)
        return VisitCounts(
            n_taps=self.n_taps,
            n_boardings_linked=self.n_boardings_linked,
            n_alightings_linked=self.n_alightings_linked,
            od_pair=pair.astype(np.int64),
            od_count=n_od.astype(np.int64),
        )


def _add_counts(counts: np.ndarray, rows: np.ndarray) -> None:
    """Add one to `counts` at each of `rows` (a bincount over the rows' range only)."""
    if rows.size == 0:
        return
    lo, hi = int(rows.min()), int(rows.max())
    counts[lo : hi + 1] += np.bincount(rows - lo, minlength=hi - lo + 1)


def compute_loads(
    placements: pl.DataFrame,
    stop_visits: pl.DataFrame,
    trips: pl.DataFrame,
    vehicles: pl.DataFrame,
    profile: Profile,
    *,
    apc_counts: pl.DataFrame | None = None,
    options: LoadOptions = DEFAULT_LOAD_OPTIONS,
) -> pl.DataFrame:
    """The load profile of every run that has stop visits.

    `placements`: `compute_alightings` output. `stop_visits`: the `stop_visits` table.
    `trips`: `scheduled_trips` (service_date, trip_id, route_id, direction_id).
    `vehicles`: the register. `apc_counts`: `compute_apc_counts` output (optional).
    Returns the `trip_loads` columns: per run and visited stop, `n_taps`, `n_boardings`,
    `n_alightings` (passengers), `n_alightings_linked` (taps), `load_after` (passengers
    leaving the stop), `n_seats`, `standing_area_m2` (m²), `standees_per_m2`,
    `is_over_limit`, `los` (A–F), `count_source` ('taps' or 'apc'); plus
    `capacity_source` and `n_boardings_linked` for the trip summary.

    The same as `compute_loads_from_counts` of `count_visit_taps` of the placements.
    """
    load_visits = build_load_visits(stop_visits, trips)
    counts = count_visit_taps(placements, load_visits)
    return compute_loads_from_counts(
        load_visits, counts, vehicles, profile, apc_counts=apc_counts, options=options
    )


def compute_loads_from_counts(
    load_visits: LoadVisits,
    counts: VisitCounts,
    vehicles: pl.DataFrame,
    profile: Profile,
    *,
    apc_counts: pl.DataFrame | None = None,
    options: LoadOptions = DEFAULT_LOAD_OPTIONS,
    service_date: date | None = None,
) -> pl.DataFrame:
    """The load profiles (`compute_loads` columns) of the runs of `load_visits` from the
    taps' `counts` on them; of the runs of `service_date` only when given.

    The unlinked boarders' pooled tiers (the line-direction's linked alightings and its
    origin-destination shares) are those of all the counts: the profiles of one day are
    those of the whole period's computation, row for row.
    """
    limit = profile.crowding.standees_max_per_m2.value
    seq = "stop_sequence"
    visits = load_visits.visits
    rows = slice(0, visits.height)
    if service_date is not None:
        days = visits["service_date"]
        lo = int(days.search_sorted(service_date, side="left"))
        hi = int(days.search_sorted(service_date, side="right"))
        rows = slice(lo, hi)
        visits = visits.slice(lo, hi - lo)
    n_alightings_linked = counts.n_alightings_linked
    # the pattern's linked alightings over the period (integers: the same sum in any order)
    w_pattern = np.bincount(
        load_visits.pattern_stop, weights=n_alightings_linked, minlength=load_visits.n_patterns
    )
    per_stop = visits.with_columns(
        pl.Series("n_taps", counts.n_taps[rows]).cast(pl.Int32),
        pl.Series("n_boardings_linked", counts.n_boardings_linked[rows]).cast(pl.Int32),
        pl.Series("n_alightings_linked", n_alightings_linked[rows]).cast(pl.Int32),
        pl.Series("w_pattern", w_pattern[load_visits.pattern_stop[rows]]),
    ).with_columns(
        (pl.col("n_taps") - pl.col("n_boardings_linked")).cast(pl.Float64).alias("u"),
        pl.col("n_alightings_linked").cast(pl.Float64).alias("w_trip"),
        pl.lit(1.0).alias("w_even"),
    )
    v = _od_alightings(per_stop, load_visits, counts, options).lazy()
    v = _scaled_alightings(v).with_columns(
        pl.col("n_taps").cast(pl.Float64).alias("tap_boardings"),
        (pl.col("w_trip") + pl.col("n_alightings_scaled") + pl.col("n_alightings_od")).alias(
            "tap_alightings"
        ),
    )
    if apc_counts is not None and apc_counts.height:
        apc_runs = (
            apc_counts.lazy().select(RUN_KEY).unique().with_columns(pl.lit(True).alias("has_apc"))
        )
        v = v.join(apc_counts.lazy(), on=[*RUN_KEY, seq], how="left", maintain_order="left").join(
            apc_runs, on=RUN_KEY, how="left", maintain_order="left"
        )
    else:
        v = v.with_columns(
            pl.lit(None, pl.Float64).alias("apc_boardings"),
            pl.lit(None, pl.Float64).alias("apc_alightings"),
            pl.lit(None, pl.Boolean).alias("has_apc"),
        )
    is_apc = pl.col("has_apc").fill_null(False)
    v = v.with_columns(
        pl.when(is_apc)
        .then(pl.col("apc_boardings").fill_null(0.0))
        .otherwise("tap_boardings")
        .alias("n_boardings"),
        pl.when(is_apc)
        .then(pl.col("apc_alightings").fill_null(0.0))
        .otherwise("tap_alightings")
        .alias("n_alightings"),
        pl.when(is_apc).then(pl.lit("apc")).otherwise(pl.lit("taps")).alias("count_source"),
    )
    # Rounding leaves crumbs of 1e-12 at the end of a run; counters can drift below zero.
    # The rows keep the visits' order (run number, then stop sequence) through the joins:
    # the running sum needs no order_by, nor the result a sort.
    load = (
        (pl.col("n_boardings") - pl.col("n_alightings"))
        .cum_sum()
        .over("run_number")
        .round(9)
        .clip(lower_bound=0.0)
    )
    caps = build_capacities(vehicles, profile).lazy()
    v = (
        v.with_columns(load.alias("load_after"))
        .join(caps, on="vehicle_id", how="left", maintain_order="left")
        .with_columns(pl.col("capacity_source").fill_null("unknown"))
    )
    ld, seats, area = pl.col("load_after"), pl.col("n_seats"), pl.col("standing_area_m2")
    return (
        v.with_columns(
            standees_per_m2_expr(ld, seats, area).alias("standees_per_m2"),
            over_limit_expr(
                ld, seats, area, pl.col("standees_limit_per_m2").fill_null(limit)
            ).alias("is_over_limit"),
            los_expr(ld, seats, area, options).alias("los"),
        )
        .select(
            *RUN_KEY,
            "trip_id",
            "route_id",
            "direction_id",
            seq,
            "stop_id",
            "next_stop_id",
            "departure_at",
            "n_taps",
            "n_boardings",
            "n_alightings",
            "n_alightings_linked",
            "load_after",
            "n_seats",
            "standing_area_m2",
            "standees_per_m2",
            "is_over_limit",
            "los",
            "count_source",
            "capacity_source",
            "n_boardings_linked",
        )
        .collect()
    )


def compute_trip_crowding(trip_loads: pl.DataFrame) -> pl.DataFrame:
    """One row per run: peak load and where, worst standees per m² and LOS (`trip_crowding`).

    `trip_loads`: `compute_loads` output. `max_load_stop_*` is the first stop after which the
    highest load rode; `hour_at` is the UTC hour of the departure from the first visited stop.
    """
    # (rows in run and stop order already, as `compute_loads` gives them, are not sorted
    # again: the sort gathers every column of the day's visits)
    return (
        sort_by_run(trip_loads)
        .lazy()
        .group_by(RUN_KEY)
        .agg(
            pl.col("trip_id", "route_id", "direction_id", "departure_at").first(),
            pl.col("n_taps").sum().cast(pl.Int32),
            pl.col("n_boardings_linked").sum().cast(pl.Int32).alias("n_taps_linked"),
            pl.col("n_boardings").sum(),
            pl.col("load_after").max().alias("max_load"),
            pl.col("stop_sequence")
            .get(pl.col("load_after").arg_max())
            .alias("max_load_stop_sequence"),
            pl.col("stop_id").get(pl.col("load_after").arg_max()).alias("max_load_stop_id"),
            pl.col("standees_per_m2").max().alias("max_standees_per_m2"),
            pl.col("is_over_limit").max().alias("is_over_limit"),
            pl.col("los").max().alias("los"),
            pl.col("n_seats", "standing_area_m2", "capacity_source", "count_source").first(),
        )
        .with_columns(pl.col("departure_at").dt.truncate("1h").alias("hour_at"))
        .sort(*RUN_KEY)
        .collect()
    )
