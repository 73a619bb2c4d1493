"""Alighting inference by trip chaining (Barry et al. 2002; Trépanier et al. 2007).

The taps of one card on one service day form a chain of legs (consecutive taps on the same run
are one leg). A leg alights at the stop of its run, after its boarding stop and reached before
the card's next boarding, that lies nearest to that next boarding stop; the day's last leg
returns toward the day's first boarding stop. A leg whose nearest stop is beyond the walking
limit, a card seen once a day, or a tap without a card stays unlinked: `analytics.crowding.loads` scales
those in by the alightings of the linked ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import polars as pl

from analytics.crowding.boardings import VisitKey, is_sorted_by

RUN_KEY = ["service_date", "vehicle_id", "run_index"]

UNLINKED_REASONS = {
    "no_card": "validação sem cartão identificado",
    "single_leg": "único embarque do cartão no dia",
    "beyond_walk": "o próximo embarque do cartão fica longe de toda parada seguinte da viagem",
    "no_stop_before_next": "nenhuma parada seguinte da viagem foi alcançada antes do próximo embarque",
}
"""Why a placed tap has no chained alighting (pt-BR); its alighting is then scaled in."""

_SCALED = ": desembarque estimado na proporção dos desembarques encadeados"


@dataclass(frozen=True)
class AlightingOptions:
    """Trip-chaining parameters; units in the names."""

    walk_max_m: float = 400.0
    """default: farthest straight-line walk from the alighting stop to the next boarding stop
    (about one stop spacing; trip-chaining studies use 400 m to 1 km); beyond it the leg
    stays unlinked. Longer limits link more legs but also more wrong ones (measured on the
    simulator: see tests/analytics/crowding/test_crowding_simulated.py)"""


DEFAULT_ALIGHTING_OPTIONS = AlightingOptions()


@dataclass(frozen=True)
class Chain:
    """The legs of the placed, carded taps of each card and day, as arrays by leg (a leg's
    `leg_id` is its index, legs in chain order: card key, then time).

    Only integers go through the card sort (the string ids of a big city's day are gathered
    for no tap): a 64-bit key of the card id, the run as a `VisitKey` run key, the instant."""

    leg_of_tap: np.ndarray
    """the leg of each row of the boardings; -1 for taps in no leg (unplaced or without card)"""
    first_row: np.ndarray
    """the boardings row of each leg's first tap"""
    run: np.ndarray
    """each leg's run: `VisitKey.run_expr` of the key over the boardings"""
    next_leg: np.ndarray
    """the card's next leg that day; -1 for the day's last leg"""
    home_leg: np.ndarray
    """the day's first leg of the card"""
    n_legs: np.ndarray
    """legs of the card that day"""


def build_chain(boardings: pl.DataFrame, key: VisitKey) -> Chain:
    """Chain the placed, carded taps of each card and day into legs (consecutive taps of one
    card on the same run are one leg), in order of card, instant, transaction id and operator.

    `boardings`: `compute_boardings` output. `key`: a `VisitKey` whose ranges hold every
    placed tap's run (`VisitKey.of(boardings)` does).
    """
    is_chained = (pl.col("placement") == "placed") & pl.col("card_hash").is_not_null()
    taps = (
        boardings.lazy()
        .with_row_index("tap_row")
        .filter(is_chained)
        .select(
            "tap_row",
            _card_key(pl.col("card_hash")).alias("card_key"),
            key.run_expr().fill_null(-1).alias("run"),
            pl.col("service_date").to_physical().cast(pl.Int32).alias("day"),
            pl.col("event_at").to_physical().alias("at"),
            pl.col("card_hash").hash(seed=_CHECK_SEED).alias("check"),
        )
        .collect()
    )
    tap_row = taps["tap_row"].to_numpy()
    run = taps["run"].to_numpy()
    day = taps["day"].to_numpy()
    at = taps["at"].to_numpy()
    card_key = taps["card_key"].to_numpy()
    # Cards are grouped by a 64-bit hash of the card id (sorting the ids as strings costs
    # more than the rest of the chaining). Two cards that share it would end up in one group;
    # a second hash of the ids (another seed) tells them apart, and the ids are then numbered
    # exactly instead.
    order = _in_chain_order(card_key, at, boardings, tap_row)
    key_in_order = card_key[order]
    check_in_order = taps["check"].to_numpy()[order]
    if np.any(
        (key_in_order[1:] == key_in_order[:-1]) & (check_in_order[1:] != check_in_order[:-1])
    ):
        card_key = (
            boardings.select(pl.col("card_hash").gather(tap_row).rank("dense"))
            .to_series()
            .cast(pl.UInt64)
            .to_numpy()
        )
        order = _in_chain_order(card_key, at, boardings, tap_row)
        key_in_order = card_key[order]
    del taps, check_in_order, card_key
    run_in_order = run[order]
    n = order.size
    is_new_leg = np.ones(n, dtype=np.bool_)
    is_new_leg[1:] = (key_in_order[1:] != key_in_order[:-1]) | (
        run_in_order[1:] != run_in_order[:-1]
    )
    del run_in_order
    leg_id = np.cumsum(is_new_leg) - 1
    leg_of_tap = np.full(boardings.height, -1, dtype=np.int64)
    leg_of_tap[tap_row[order]] = leg_id
    del leg_id
    # A leg starts at its first tap. Days group a card's legs by service date, in time order;
    # each day must be a contiguous block. It is, unless a card's service dates go back in
    # time (a tap on the night run of the day before after one on the new day's first run):
    # then the legs are regrouped by day, stably, and put back in leg order afterwards.
    first = order[is_new_leg]
    leg_card = key_in_order[is_new_leg]
    del order, key_in_order, is_new_leg
    leg_day = day[first]
    n_legs = first.size
    by_day = np.arange(n_legs)
    if np.any((leg_card[1:] == leg_card[:-1]) & (leg_day[1:] < leg_day[:-1])):
        by_day = (
            pl.DataFrame({"card": leg_card, "day": leg_day})
            .select(pl.arg_sort_by("card", "day", maintain_order=True))
            .to_series()
            .to_numpy()
            .astype(np.int64)
        )
    card, day_of = leg_card[by_day], leg_day[by_day]
    is_new_day = np.ones(n_legs, dtype=np.bool_)
    is_new_day[1:] = (card[1:] != card[:-1]) | (day_of[1:] != day_of[:-1])
    is_last_of_day = np.r_[is_new_day[1:], True]
    i = np.arange(n_legs)
    day_start = np.maximum.accumulate(np.where(is_new_day, i, 0))
    day_end = np.minimum.accumulate(np.where(is_last_of_day, i, n_legs)[::-1])[::-1]
    next_leg = np.full(n_legs, -1, dtype=np.int64)
    home_leg = np.empty(n_legs, dtype=np.int64)
    legs_of_day = np.empty(n_legs, dtype=np.int64)
    next_leg[by_day[:-1]] = np.where(is_last_of_day[:-1], -1, by_day[1:])
    home_leg[by_day] = by_day[day_start]
    legs_of_day[by_day] = day_end - day_start + 1
    return Chain(
        leg_of_tap=leg_of_tap,
        first_row=tap_row[first].astype(np.int64),
        run=run[first],
        next_leg=next_leg,
        home_leg=home_leg,
        n_legs=legs_of_day,
    )


def build_legs(boardings: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """Chain the placed, carded taps of each card and day into legs (`build_chain`).

    Returns (the `leg_id` of each row of `boardings`, -1 for taps in no leg; legs), with one
    row per leg, in `leg_id` order (0, 1, ...): `leg_id`, `card_hash`, run key,
    `stop_sequence` and `stop_id` of its boarding, `event_at` (first tap), `next_stop_id` /
    `next_at` (the card's next leg that day; null for the last leg), `home_stop_id` (the
    day's first boarding stop) and `n_legs` (legs of the card that day).
    """
    chain = build_chain(boardings, VisitKey.of(boardings))
    first = pl.Series(chain.first_row)
    at_leg = boardings[first]
    has_next = chain.next_leg >= 0
    next_row = pl.Series(np.where(has_next, chain.first_row[chain.next_leg], 0))
    next_tap = boardings.select("stop_id", "event_at")[next_row]
    is_last = pl.Series(~has_next)
    legs = pl.DataFrame(
        {
            "leg_id": pl.Series(np.arange(first.len()), dtype=pl.UInt32),
            "card_hash": at_leg["card_hash"],
            **{c: at_leg[c] for c in RUN_KEY},
            "stop_sequence": at_leg["stop_sequence"],
            "stop_id": at_leg["stop_id"],
            "event_at": at_leg["event_at"],
            "next_stop_id": next_tap["stop_id"].set(is_last, None),
            "next_at": next_tap["event_at"].set(is_last, None),
            "home_stop_id": boardings["stop_id"].gather(chain.first_row[chain.home_leg]),
            "n_legs": pl.Series(chain.n_legs, dtype=pl.UInt32),
        }
    )
    return chain.leg_of_tap, legs


def _in_chain_order(
    card_key: np.ndarray, at: np.ndarray, boardings: pl.DataFrame, tap_row: np.ndarray
) -> np.ndarray:
    """The order of taps by card key, instant, transaction id and operator (`boardings` rows
    `tap_row`, with their `card_key` and instant `at`).

    Taps usually come in time order (`compute_boardings` returns them so): then a stable sort
    on the card key alone gives the order but for the few taps of one card in one instant,
    which are put in transaction id (then operator) order among themselves (their ids alone
    are read).
    """
    keys = pl.DataFrame({"card_key": card_key, "at": at})
    by = ["card_key"] if keys["at"].is_sorted() else ["card_key", "at"]
    order = keys.select(pl.arg_sort_by(by, maintain_order=True)).to_series().to_numpy()
    order = order.astype(np.int64)
    key, instant = card_key[order], at[order]
    same = (key[1:] == key[:-1]) & (instant[1:] == instant[:-1])
    if same.any():
        # tied taps form contiguous blocks in (card, instant) order: sorting them alone by
        # the three keys and putting them back in the same places orders each block
        tied = np.zeros(order.size, dtype=np.bool_)
        tied[1:] |= same
        tied[:-1] |= same
        at_tied = np.flatnonzero(tied)
        # (the operator last: two operators' taps may share an id and an instant)
        rows = tap_row[order[at_tied]]
        block = pl.DataFrame(
            {
                "card_key": key[at_tied],
                "at": instant[at_tied],
                "transaction_id": boardings["transaction_id"].gather(rows),
                "operator_id": boardings["operator_id"].gather(rows)
                if "operator_id" in boardings.columns
                else pl.repeat(None, rows.size, dtype=pl.String, eager=True),
            }
        )
        in_block = (
            block.select(
                pl.arg_sort_by("card_key", "at", "transaction_id", "operator_id", nulls_last=True)
            )
            .to_series()
            .to_numpy()
        )
        order[at_tied] = order[at_tied[in_block]]
    return order


def _card_key(card_hash: pl.Expr) -> pl.Expr:
    """A 64-bit hash of the card id (fixed seed: within a run, the same id gets the same key)."""
    return card_hash.hash(seed=0)


_CHECK_SEED = 1
"""seed of the second hash of the card ids, which tells apart cards sharing a `_card_key`"""


def find_alighting_visits(
    chain: Chain,
    key: VisitKey,
    boardings: pl.DataFrame,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """For each chainable leg, the stop of its run nearest to its target stop: the card's
    next boarding stop that day, or the day's first for its last leg (a card seen once a day
    has no target).

    `chain`: `build_chain(boardings, key)`. Returns (the visits searched: `stop_sequence`,
    `stop_id`; the row of each leg's alighting visit in them, -1 for legs with no candidate
    stop (after the boarding stop, reached before the next boarding); the metres from it to
    the target, NaN without). Of candidates equally near, the first in stop sequence.
    """
    xy = stops.select("stop_id", "stop_x_m", "stop_y_m").unique("stop_id", keep="last").drop_nulls()
    stop_row = pl.col("stop_id").replace_strict(
        xy["stop_id"], pl.int_range(xy.height, eager=True), default=None, return_dtype=pl.Int64
    )
    # each run's visits are one slice [first_visit, end_visit) of the visits in run key and
    # stop sequence order (the order of the run key columns, since vehicle ranks follow the
    # ids' order); visits of runs no tap rode have no key and are left out
    visits = (
        stop_visits.lazy()
        .filter(pl.col("arrival_at").is_not_null())
        .select(
            key.run_expr().alias("run"),
            pl.col("stop_sequence").cast(pl.Int32),
            "stop_id",
            stop_row.alias("stop_row"),
            pl.col("arrival_at").cast(pl.Datetime("us", "UTC")).to_physical().alias("at_us"),
        )
        .drop_nulls(["run", "stop_row"])
        .collect()
    )
    # visits in run key order (`sort_by_run`: the day's of `compute_crowding_by_day`) are in
    # this order already
    if not is_sorted_by(visits, ["run", "stop_sequence"]):
        visits = visits.sort("run", "stop_sequence")
    n_legs = chain.first_row.size
    best_visit = np.full(n_legs, -1, dtype=np.int64)
    walk_m = np.full(n_legs, np.nan, dtype=np.float64)
    if visits.height == 0 or n_legs == 0:  # no run reached a stop: no leg has a candidate
        return visits.select("stop_sequence", "stop_id"), best_visit, walk_m
    run_of_visit = visits["run"].to_numpy()
    first_of_run = np.flatnonzero(np.r_[True, run_of_visit[1:] != run_of_visit[:-1]])
    end_of_run = np.r_[first_of_run[1:], run_of_visit.size]
    run_keys = run_of_visit[first_of_run]
    del run_of_visit
    # the target's stop row and the next boarding of each leg
    tap_stop_row = boardings.select(stop_row.fill_null(-1)).to_series().to_numpy()
    leg_stop_row = tap_stop_row[chain.first_row]
    del tap_stop_row
    has_next = chain.next_leg >= 0
    target_leg = np.where(has_next, chain.next_leg, chain.home_leg)
    target_row = leg_stop_row[target_leg]
    del leg_stop_row, target_leg
    at_us = _instant_us(boardings["event_at"], _NO_LIMIT_US).to_numpy()
    next_board_us = np.where(
        has_next, at_us[chain.first_row[np.where(has_next, chain.next_leg, 0)]], _NO_LIMIT_US
    )
    del at_us
    run = _run_rows(run_keys, chain.run, key)
    legs = np.flatnonzero((chain.n_legs >= 2) & (target_row >= 0) & (run >= 0))
    # legs in run order: the scan then reads each run's visits while they are in the cache
    # (in card order, a day of a big city's visits does not fit and every leg misses)
    legs = legs[_in_run_order(run[legs], run_keys.size)]
    board_sequence = (
        boardings["stop_sequence"].fill_null(-1).cast(pl.Int64).to_numpy()[chain.first_row]
    )
    target_x_m = _kernel_array(xy["stop_x_m"], pl.Float64)
    target_y_m = _kernel_array(xy["stop_y_m"], pl.Float64)
    visit_row = visits["stop_row"].to_numpy()
    visit_columns = {
        "visit_sequence": _kernel_array(visits["stop_sequence"], pl.Int64),
        "visit_x_m": target_x_m[visit_row],
        "visit_y_m": target_y_m[visit_row],
        "visit_arrival_us": _kernel_array(visits["at_us"], pl.Int64),
    }
    # the legs go through the search in slices: each leg's search is its own, so the results
    # are the same, and the working arrays (about 60 bytes a leg) stay those of one slice
    for lo in range(0, legs.size, _LEGS_PER_SLICE):
        part = legs[lo : lo + _LEGS_PER_SLICE]
        run_of_leg = run[part]
        best_visit[part], walk_m[part] = _nearest_visits(
            first_visit=first_of_run[run_of_leg],
            end_visit=end_of_run[run_of_leg],
            board_sequence=board_sequence[part],
            target_x_m=target_x_m[target_row[part]],
            target_y_m=target_y_m[target_row[part]],
            next_board_us=next_board_us[part],
            **visit_columns,
        )
    return visits.select("stop_sequence", "stop_id"), best_visit, walk_m


_LEGS_PER_SLICE = 1_000_000
"""legs searched at a time by `find_alighting_visits` (bounds its memory, not its results)"""


def _run_rows(run_keys: np.ndarray, wanted: np.ndarray, key: VisitKey) -> np.ndarray:
    """Row of each `wanted` run key (`VisitKey.run_expr`) in the sorted, unique `run_keys`;
    -1 where there is none.

    A run key divided by `n_seqs` numbers the (day, vehicle, run index) cells of the key's
    ranges densely: a table of those cells (a few hundred thousand on a big city's day)
    answers each leg in one access, where a bisection took a dozen.
    """
    n_cells = key.n_days * key.vehicles.len() * key.n_runs
    if n_cells > _DENSE_RUNS_MAX:
        rows = np.searchsorted(run_keys, wanted).clip(max=run_keys.size - 1)
        return np.where(run_keys[rows] == wanted, rows, -1)
    table = np.full(n_cells, -1, dtype=np.int64)
    table[run_keys // key.n_seqs] = np.arange(run_keys.size)
    cell = wanted // key.n_seqs
    inside = (wanted >= 0) & (cell < n_cells)
    return np.where(inside, table[np.where(inside, cell, 0)], -1)


_DENSE_RUNS_MAX = 1 << 25
"""largest (days x vehicles x run indices) table of run rows built by `_run_rows` (32 M
entries, 256 MB); beyond it the legs bisect the runs' keys"""


@numba.njit(cache=True, nogil=True)
def _in_run_order(run, n_runs):  # pragma: no cover - compiled; tested through compute_alightings
    """The permutation that puts `run` (integers in [0, `n_runs`)) in order, stably.

    No vectorised form of the same cost: numpy's argsort compares (n log n, a tenth of a
    second for a million legs); this is a counting sort, two linear passes.
    """
    start = np.zeros(n_runs + 1, dtype=np.int64)
    for r in run:
        start[r + 1] += 1
    for r in range(n_runs):
        start[r + 1] += start[r]
    order = np.empty(run.shape[0], dtype=np.int64)
    for i in range(run.shape[0]):
        order[start[run[i]]] = i
        start[run[i]] += 1
    return order


_NO_LIMIT_US = np.iinfo(np.int64).max
"""`next_board_us` of a day's last leg: every later stop of its run is a candidate"""


def _instant_us(instants: pl.Series, null_us: int) -> pl.Series:
    """UTC instants as integer microseconds since the epoch; nulls become `null_us`."""
    return instants.dt.cast_time_unit("us").dt.epoch("us").fill_null(null_us)


def _kernel_array(series: pl.Series, dtype: type[pl.DataType]) -> np.ndarray:
    """`series` as a writable numpy array of `dtype`, so the kernel compiles once per run."""
    return series.cast(dtype).to_numpy(writable=True)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _nearest_visits(  # pragma: no cover - compiled; tested through compute_alightings
    first_visit,
    end_visit,
    board_sequence,
    target_x_m,
    target_y_m,
    next_board_us,
    visit_sequence,
    visit_x_m,
    visit_y_m,
    visit_arrival_us,
):
    """Per leg, the visit of its run nearest its target stop; returns (visit row, metres).

    The legs' columns are by leg: its run's visits are rows `first_visit` .. `end_visit` - 1
    of the visits' columns (`visit_*`, in stop sequence order). A candidate comes after
    `board_sequence` and arrives no later than `next_board_us` (µs since the epoch). The row
    is -1 (and the metres NaN) for a leg with no candidate; of candidates equally near, the
    first in stop sequence wins.

    No vectorised form: the candidates of a leg are a slice of its run of varying length,
    so a join expands every leg to its run's later stops (tens of rows per tap, about 30 M
    rows for a million taps) only to keep one of them; this scan reads each slice in place.
    """
    n = first_visit.shape[0]
    best_visit = np.full(n, -1, dtype=np.int64)
    walk_m = np.full(n, np.nan, dtype=np.float64)
    for i in range(n):
        # the run's visits are in stop sequence order: the candidates start after the
        # boarding stop, found by bisection rather than read from the run's start
        lo, hi = first_visit[i], end_visit[i]
        while lo < hi:
            mid = (lo + hi) // 2
            if visit_sequence[mid] <= board_sequence[i]:
                lo = mid + 1
            else:
                hi = mid
        best = np.inf
        for v in range(lo, end_visit[i]):
            if visit_arrival_us[v] > next_board_us[i]:
                continue
            dx = visit_x_m[v] - target_x_m[i]
            dy = visit_y_m[v] - target_y_m[i]
            d = np.sqrt(dx**2 + dy**2)
            if d < best:
                best = d
                best_visit[i] = v
        if best_visit[i] >= 0:
            walk_m[i] = best
    return best_visit, walk_m


def compute_alightings(
    boardings: pl.DataFrame,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
    options: AlightingOptions = DEFAULT_ALIGHTING_OPTIONS,
) -> pl.DataFrame:
    """Infer where each placed tap alighted.

    `boardings`: `compute_boardings` output. `stop_visits`: the `stop_visits` table.
    `stops`: `gtfs_stops` (stop_id, stop_x_m, stop_y_m, metres in the feed's CRS).
    Returns `boardings` with `alighting_stop_sequence`, `alighting_stop_id`, `walk_m`
    (metres from the alighting stop to the next boarding stop) and `alighting_method`
    ('chained', 'chained_home' or 'unlinked'; null for unplaced taps); `reason` explains
    unplaced and unlinked taps (pt-BR).
    """
    key = VisitKey.of(boardings)
    chain = build_chain(boardings, key)
    visits, best_visit, walk_m = find_alighting_visits(chain, key, boardings, stop_visits, stops)
    # Each tap takes its leg's values and its leg's alighting visit by position: gathers
    # instead of joins on a million legs. The last slot stands for taps in no leg.
    leg_of_tap = chain.leg_of_tap
    n_legs = np.r_[chain.n_legs, 0]
    is_home = np.r_[chain.next_leg < 0, False]
    visit_of_leg = np.r_[best_visit, -1]
    walk_of_leg = np.r_[walk_m, np.nan]
    del chain, best_visit, walk_m
    tap_visit = pl.Series(visit_of_leg[leg_of_tap])
    tap_visit = tap_visit.set(tap_visit < 0, None)
    in_leg = pl.Series(leg_of_tap >= 0)
    per_tap = pl.DataFrame(
        {
            "n_legs": pl.Series(n_legs[leg_of_tap], dtype=pl.UInt32).set(~in_leg, None),
            "is_home": pl.Series(is_home[leg_of_tap]).set(~in_leg, None),
            "alighting_stop_sequence": visits["stop_sequence"].gather(tap_visit),
            "alighting_stop_id": visits["stop_id"].gather(tap_visit),
            "walk_m": pl.Series(walk_of_leg[leg_of_tap]).fill_nan(None),
        }
    )
    del visits, leg_of_tap, tap_visit, in_leg  # before the taps' plan
    is_linked = (pl.col("walk_m") <= options.walk_max_m).fill_null(False)
    chained = pl.when(pl.col("is_home")).then(pl.lit("chained_home")).otherwise(pl.lit("chained"))
    leg_result = (
        pl.when(is_linked).then("alighting_stop_sequence").alias("alighting_stop_sequence"),
        pl.when(is_linked).then("alighting_stop_id").alias("alighting_stop_id"),
        pl.when(is_linked).then("walk_m").alias("walk_m"),
        pl.when(pl.col("n_legs").is_null())
        .then(None)
        .when(is_linked)
        .then(chained)
        .otherwise(pl.lit("unlinked"))
        .alias("method"),
        pl.when(pl.col("n_legs").is_null())
        .then(None)
        .when(pl.col("n_legs") < 2)
        .then(pl.lit("single_leg"))
        .when(pl.col("walk_m").is_null())
        .then(pl.lit("no_stop_before_next"))
        .when(~is_linked)
        .then(pl.lit("beyond_walk"))
        .alias("unlinked_code"),
    )
    is_placed = pl.col("placement") == "placed"
    unlinked_code = (
        pl.when(pl.col("card_hash").is_null()).then(pl.lit("no_card")).otherwise("unlinked_code")
    )
    unlinked_text = unlinked_code.replace_strict(
        {code: text + _SCALED for code, text in UNLINKED_REASONS.items()}, default=None
    )
    # one plan over the taps, their leg's values beside them
    return (
        boardings.hstack(per_tap)
        .lazy()
        .with_columns(*leg_result)
        .with_columns(
            pl.col("alighting_stop_sequence").cast(pl.Int32),
            pl.when(is_placed)
            .then(pl.coalesce("method", pl.lit("unlinked")))
            .alias("alighting_method"),
        )
        .with_columns(
            pl.when(is_placed & (pl.col("alighting_method") == "unlinked"))
            .then(unlinked_text)
            .otherwise("reason")
            .alias("reason"),
        )
        .drop("n_legs", "is_home", "method", "unlinked_code")
        .collect()
    )
