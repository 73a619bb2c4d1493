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

from analytics.crowding.boardings import VisitKey

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


def build_legs(boardings: pl.DataFrame) -> tuple[np.ndarray, pl.DataFrame]:
    """Chain the placed, carded taps of each card and day into legs.

    Returns (the `leg_id` of each row of `boardings`, -1 for taps in no leg; legs), with one
    row per leg, in `leg_id` order (0, 1, ...): `leg_id`, `card_hash`, run key,
    `stop_sequence` and `stop_id` of its boarding, `event_at` (first tap), `next_stop_id` /
    `next_at` (the card's next leg that day; null for the last leg), `home_stop_id` (the
    day's first boarding stop) and `n_legs` (legs of the card that day).
    """
    chained = (
        boardings.lazy()
        .with_row_index("tap_row")
        .filter((pl.col("placement") == "placed") & pl.col("card_hash").is_not_null())
        .select(
            "tap_row",
            "transaction_id",
            "card_hash",
            _card_key(pl.col("card_hash")).alias("card_key"),
            *RUN_KEY,
            "stop_sequence",
            "stop_id",
            "event_at",
        )
        .collect()
    )
    # Cards are grouped by a 64-bit hash of the card id (sorting the ids as strings costs
    # more than the rest of the chaining); two cards that share a hash would end up in one
    # group, in time order, so the first changes of card id within a hash group reveal it
    # and the ids are then numbered exactly instead. Taps of one card in the same instant
    # (two validators, a clock's resolution) chain in transaction id order.
    taps = _in_chain_order(chained)
    same_key = pl.col("card_key") == pl.col("card_key").shift(1)
    if taps.select((same_key & (pl.col("card_hash") != pl.col("card_hash").shift(1))).any()).item():
        taps = _in_chain_order(
            chained.with_columns(
                pl.col("card_hash").rank("dense").cast(pl.UInt64).alias("card_key")
            )
        )
    # On a big city's day each frame of the chaining holds about a gigabyte (most legs are one
    # tap): each is let go as soon as the next is built, so that they do not all peak together.
    del chained
    is_new_leg = pl.any_horizontal(
        *[pl.col(c).ne_missing(pl.col(c).shift(1)) for c in ("card_key", *RUN_KEY)]
    )
    taps = taps.with_columns(is_new_leg.alias("is_new_leg")).with_columns(
        (pl.col("is_new_leg").cum_sum() - 1).alias("leg_id")
    )
    # A leg starts at its first tap. Days group a card's legs by service date, in time order;
    # each day must be a contiguous block (a window expression over (card, day) does the same
    # and costs ten times more). It is, unless a card's service dates go back in time (a tap on
    # the night run of the day before after one on the new day's first run): then the legs are
    # regrouped by day, stably, and put back in leg order afterwards.
    leg_of_tap = np.full(boardings.height, -1, dtype=np.int64)
    leg_of_tap[taps["tap_row"].to_numpy()] = taps["leg_id"].to_numpy()
    first_taps = taps.filter("is_new_leg").drop("tap_row", "is_new_leg")
    del taps
    is_same_card = pl.col("card_key") == pl.col("card_key").shift(1)
    is_regrouped = first_taps.select(
        (is_same_card & (pl.col("service_date") < pl.col("service_date").shift(1))).any()
    ).item()
    if is_regrouped:
        first_taps = first_taps.sort("card_key", "service_date", maintain_order=True)
    is_new_day = pl.any_horizontal(
        *[pl.col(c).ne_missing(pl.col(c).shift(1)) for c in ("card_key", "service_date")]
    )
    is_last_of_day = is_new_day.shift(-1, fill_value=True)
    row = pl.int_range(pl.len(), dtype=pl.UInt32)
    legs = first_taps.lazy().with_columns(
        pl.when(~is_last_of_day).then(pl.col("stop_id").shift(-1)).alias("next_stop_id"),
        pl.when(~is_last_of_day).then(pl.col("event_at").shift(-1)).alias("next_at"),
        pl.when(is_new_day).then(pl.col("stop_id")).forward_fill().alias("home_stop_id"),
        (
            pl.when(is_last_of_day).then(row).backward_fill()
            - pl.when(is_new_day).then(row).forward_fill()
            + 1
        ).alias("n_legs"),
    )
    if is_regrouped:
        legs = legs.sort("leg_id")
    legs_frame = legs.select(
        "leg_id",
        "card_hash",
        *RUN_KEY,
        "stop_sequence",
        "stop_id",
        "event_at",
        "next_stop_id",
        "next_at",
        "home_stop_id",
        "n_legs",
    ).collect()
    return leg_of_tap, legs_frame


def _in_chain_order(taps: pl.DataFrame) -> pl.DataFrame:
    """`taps` sorted by `card_key`, `event_at` and `transaction_id` (which is then dropped).

    Taps usually come in time order (`compute_boardings` returns them so): then a stable sort
    on the card key alone gives the order but for the few taps of one card in one instant,
    which are put in transaction id order among themselves. A third of the cost of the
    three-key sort, which is kept for taps out of time order.
    """
    if not taps["event_at"].is_sorted():
        return taps.sort("card_key", "event_at", "transaction_id").drop("transaction_id")
    taps = taps.sort("card_key", maintain_order=True)
    same = (pl.col("card_key") == pl.col("card_key").shift(1)) & (
        pl.col("event_at") == pl.col("event_at").shift(1)
    )
    tied = taps.select(same | same.shift(-1, fill_value=False)).to_series().fill_null(False)
    if tied.any():
        # tied taps form contiguous blocks in (card, instant) order: sorting them alone by
        # the three keys and putting them back in the same places orders each block
        at = tied.arg_true()
        in_block = (
            taps[at].select(pl.arg_sort_by("card_key", "event_at", "transaction_id")).to_series()
        )
        taps = taps[pl.int_range(taps.height, eager=True).scatter(at, at.gather(in_block))]
    return taps.drop("transaction_id")


def _card_key(card_hash: pl.Expr) -> pl.Expr:
    """A 64-bit hash of the card id (fixed seed: within a run, the same id gets the same key)."""
    return card_hash.hash(seed=0)


def match_alighting_stops(
    legs: pl.DataFrame,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
) -> pl.DataFrame:
    """For each chainable leg, the stop of its run nearest to its target stop.

    `legs`: `build_legs` output with `target_stop_id` (null: no target). Returns `leg_id`,
    `alighting_stop_sequence`, `alighting_stop_id`, `walk_m` (metres to the target) for legs
    with at least one candidate stop (after the boarding stop, reached before the next
    boarding); of candidates equally near, the first in stop sequence.
    """
    xy = stops.select("stop_id", "stop_x_m", "stop_y_m").unique("stop_id", keep="last").drop_nulls()
    visits = (
        stop_visits.filter(pl.col("arrival_at").is_not_null())
        .select(*RUN_KEY, pl.col("stop_sequence").cast(pl.Int32), "stop_id", "arrival_at")
        .join(xy, on="stop_id", how="inner")
        .sort(*RUN_KEY, "stop_sequence")
    )
    # each run's visits are one slice [first_visit, end_visit) of the sorted visits, found by
    # bisection on their integer keys; a leg's target stop is a row of `xy`
    if visits.height == 0:  # no run reached a stop: no leg has a candidate
        return pl.DataFrame(schema=_FOUND_SCHEMA)
    key = VisitKey.of(visits)
    run_of_visit = visits.select(key.run_expr()).to_series().to_numpy()
    first_of_run = np.flatnonzero(np.r_[True, run_of_visit[1:] != run_of_visit[:-1]])
    end_of_run = np.r_[first_of_run[1:], run_of_visit.size]
    run_keys = run_of_visit[first_of_run]
    targets = legs.select(
        "leg_id",
        key.run_expr().alias("run_key"),
        "stop_sequence",
        pl.col("target_stop_id")
        .replace_strict(
            xy["stop_id"], pl.int_range(xy.height, eager=True), default=None, return_dtype=pl.Int64
        )
        .alias("target_row"),
        "next_at",
    ).drop_nulls(["run_key", "target_row"])
    # legs in run order: the scan then reads each run's visits while they are in the cache
    # (in card order, a day of a big city's visits does not fit and every leg misses)
    targets = targets.sort("run_key")
    visit_columns = {
        "visit_sequence": _kernel_array(visits["stop_sequence"], pl.Int64),
        "visit_x_m": _kernel_array(visits["stop_x_m"], pl.Float64),
        "visit_y_m": _kernel_array(visits["stop_y_m"], pl.Float64),
        "visit_arrival_us": _kernel_array(_instant_us(visits["arrival_at"], 0), pl.Int64),
    }
    target_x_m = _kernel_array(xy["stop_x_m"], pl.Float64)
    target_y_m = _kernel_array(xy["stop_y_m"], pl.Float64)
    best_visit = np.empty(targets.height, dtype=np.int64)
    walk_m = np.empty(targets.height, dtype=np.float64)
    # the legs go through the search in slices: each leg's search is its own, so the results
    # are the same, and the working arrays (about 100 bytes a leg) stay those of one slice
    for lo in range(0, targets.height, _LEGS_PER_SLICE):
        part = targets.slice(lo, _LEGS_PER_SLICE)
        hi = lo + part.height
        run_key = _kernel_array(part["run_key"], pl.Int64)
        run = np.searchsorted(run_keys, run_key).clip(max=run_keys.size - 1)
        has_run = run_keys[run] == run_key
        target_row = _kernel_array(part["target_row"], pl.Int64)
        best_visit[lo:hi], walk_m[lo:hi] = _nearest_visits(
            first_visit=np.where(has_run, first_of_run[run], 0),
            end_visit=np.where(has_run, end_of_run[run], 0),
            board_sequence=_kernel_array(part["stop_sequence"], pl.Int64),
            target_x_m=target_x_m[target_row],
            target_y_m=target_y_m[target_row],
            next_board_us=_kernel_array(_instant_us(part["next_at"], _NO_LIMIT_US), pl.Int64),
            **visit_columns,
        )
    found = best_visit >= 0
    rows = pl.Series(best_visit[found])
    return pl.DataFrame(
        {
            "leg_id": targets["leg_id"].filter(pl.Series(found)),
            "alighting_stop_sequence": visits["stop_sequence"].gather(rows),
            "alighting_stop_id": visits["stop_id"].gather(rows),
            "walk_m": walk_m[found],
        },
        schema=_FOUND_SCHEMA,
    )


_FOUND_SCHEMA = {
    "leg_id": pl.UInt32,
    "alighting_stop_sequence": pl.Int32,
    "alighting_stop_id": pl.String,
    "walk_m": pl.Float64,
}

_LEGS_PER_SLICE = 1_000_000
"""legs searched at a time by `match_alighting_stops` (bounds its memory, not its results)"""

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
    leg_of_tap, legs = build_legs(boardings)
    # legs that cannot be chained (a card seen once that day) have no target
    is_chainable = pl.col("n_legs") >= 2
    found = match_alighting_stops(
        legs.select(
            "leg_id",
            *RUN_KEY,
            "stop_sequence",
            pl.when(is_chainable)
            .then(pl.coalesce("next_stop_id", "home_stop_id"))
            .alias("target_stop_id"),
            "next_at",
        ),
        stop_visits,
        stops,
    )
    # Each tap takes its leg's values and its leg's found stop by position (legs are numbered
    # in row order, found legs are a subset): two gathers instead of joins on a million legs.
    found_of_leg = np.full(legs.height + 1, -1, dtype=np.int64)  # last slot: taps in no leg
    found_of_leg[found["leg_id"].to_numpy()] = np.arange(found.height)
    tap_found = pl.Series(found_of_leg[leg_of_tap])
    tap_found = tap_found.set(tap_found < 0, None)
    tap_leg = pl.Series(leg_of_tap)
    tap_leg = tap_leg.set(tap_leg < 0, None)
    per_tap = pl.DataFrame(
        {
            "n_legs": legs["n_legs"].gather(tap_leg),
            "is_home": legs["next_stop_id"].is_null().gather(tap_leg),
            **{c: found[c].gather(tap_found) for c in found.columns if c != "leg_id"},
        }
    )
    del legs, found, leg_of_tap, found_of_leg, tap_found, tap_leg  # before the taps' plan
    is_linked = (pl.col("walk_m") <= options.walk_max_m).fill_null(False)
    chain = pl.when(pl.col("is_home")).then(pl.lit("chained_home")).otherwise(pl.lit("chained"))
    leg_result = (
        pl.when(is_linked).then("alighting_stop_sequence").alias("alighting_stop_sequence"),
        pl.when(is_linked).then("alighting_stop_id").alias("alighting_stop_id"),
        pl.when(is_linked).then("walk_m").alias("walk_m"),
        pl.when(pl.col("n_legs").is_null())
        .then(None)
        .when(is_linked)
        .then(chain)
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
