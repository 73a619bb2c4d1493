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

import polars as pl

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
    chunk_legs: int = 200_000
    """legs whose candidate stops are compared at once (bounds memory, not results)"""


DEFAULT_ALIGHTING_OPTIONS = AlightingOptions()


def build_legs(boardings: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Chain the placed, carded taps of each card and day into legs.

    Returns (`transaction_id` -> `leg_id`, legs), with one row per leg: `leg_id`, `card_hash`, run key, `stop_sequence` and `stop_id`
    of its boarding, `event_at` (first tap), `next_stop_id` / `next_at` (the card's next leg
    that day; null for the last leg), `home_stop_id` (the day's first boarding stop) and
    `n_legs` (legs of the card that day).
    """
    taps = (
        boardings.lazy()
        .filter((pl.col("placement") == "placed") & pl.col("card_hash").is_not_null())
        .select("transaction_id", "card_hash", *RUN_KEY, "stop_sequence", "stop_id", "event_at")
        .sort("card_hash", "event_at")
    )
    changed = pl.any_horizontal(
        *[pl.col(c).ne_missing(pl.col(c).shift(1)) for c in ("card_hash", *RUN_KEY)]
    )
    taps = taps.with_columns(changed.cum_sum().alias("leg_id"))
    day = ["card_hash", "service_date"]
    legs = (
        taps.group_by("leg_id")
        .agg(
            pl.col("card_hash", *RUN_KEY, "stop_sequence", "stop_id", "event_at").first(),
        )
        .sort("card_hash", "event_at")
        .with_columns(
            pl.col("stop_id").shift(-1).over(day).alias("next_stop_id"),
            pl.col("event_at").shift(-1).over(day).alias("next_at"),
            pl.col("stop_id").first().over(day).alias("home_stop_id"),
            pl.len().over(day).alias("n_legs"),
        )
    )
    return taps.select("transaction_id", "leg_id").collect(), legs.collect()


def match_alighting_stops(
    legs: pl.DataFrame,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
    options: AlightingOptions,
) -> pl.DataFrame:
    """For each chainable leg, the stop of its run nearest to its target stop.

    `legs`: `build_legs` output with `target_stop_id`. Returns `leg_id`,
    `alighting_stop_sequence`, `alighting_stop_id`, `walk_m` (metres to the target) for legs
    with at least one candidate stop (after the boarding stop, reached before the next
    boarding).
    """
    xy = stops.select("stop_id", "stop_x_m", "stop_y_m").unique("stop_id", keep="last")
    visits = (
        stop_visits.filter(pl.col("arrival_at").is_not_null())
        .select(*RUN_KEY, "stop_sequence", "stop_id", "arrival_at")
        .join(xy, on="stop_id", how="inner")
    )
    targets = legs.join(
        xy.rename({"stop_id": "target_stop_id", "stop_x_m": "tx", "stop_y_m": "ty"}),
        on="target_stop_id",
        how="inner",
    ).select("leg_id", *RUN_KEY, pl.col("stop_sequence").alias("board_seq"), "tx", "ty", "next_at")
    out = []
    for start in range(0, targets.height, options.chunk_legs):
        chunk = targets.slice(start, options.chunk_legs)
        cand = (
            chunk.lazy()
            .join(visits.lazy(), on=RUN_KEY, how="inner")
            .filter(
                (pl.col("stop_sequence") > pl.col("board_seq"))
                & (pl.col("next_at").is_null() | (pl.col("arrival_at") <= pl.col("next_at")))
            )
            .with_columns(
                (
                    (pl.col("stop_x_m") - pl.col("tx")) ** 2
                    + (pl.col("stop_y_m") - pl.col("ty")) ** 2
                )
                .sqrt()
                .alias("walk_m")
            )
            .group_by("leg_id")
            .agg(
                pl.col("stop_sequence")
                .get(pl.col("walk_m").arg_min())
                .alias("alighting_stop_sequence"),
                pl.col("stop_id").get(pl.col("walk_m").arg_min()).alias("alighting_stop_id"),
                pl.col("walk_m").min(),
            )
        )
        out.append(cand.collect())
    if not out:
        return pl.DataFrame(
            schema={
                "leg_id": pl.UInt32,
                "alighting_stop_sequence": pl.Int32,
                "alighting_stop_id": pl.String,
                "walk_m": pl.Float64,
            }
        )
    return pl.concat(out)


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
    tap_legs, legs = build_legs(boardings)
    legs = legs.with_columns(
        pl.when(pl.col("n_legs") >= 2)
        .then(pl.coalesce("next_stop_id", "home_stop_id"))
        .alias("target_stop_id"),
        pl.when(pl.col("n_legs") < 2)
        .then(None)
        .when(pl.col("next_stop_id").is_null())
        .then(pl.lit("chained_home"))
        .otherwise(pl.lit("chained"))
        .alias("chain"),
    )
    found = match_alighting_stops(
        legs.filter(pl.col("target_stop_id").is_not_null()), stop_visits, stops, options
    )
    leg_result = (
        legs.join(found, on="leg_id", how="left")
        .with_columns(
            (pl.col("walk_m") <= options.walk_max_m).fill_null(False).alias("is_linked"),
        )
        .select(
            "leg_id",
            pl.when("is_linked").then("alighting_stop_sequence").alias("alighting_stop_sequence"),
            pl.when("is_linked").then("alighting_stop_id").alias("alighting_stop_id"),
            pl.when("is_linked").then("walk_m").alias("walk_m"),
            pl.when("is_linked").then("chain").otherwise(pl.lit("unlinked")).alias("method"),
            pl.when(pl.col("n_legs") < 2)
            .then(pl.lit("single_leg"))
            .when(pl.col("walk_m").is_null())
            .then(pl.lit("no_stop_before_next"))
            .when(~pl.col("is_linked"))
            .then(pl.lit("beyond_walk"))
            .alias("unlinked_code"),
        )
    )
    is_placed = pl.col("placement") == "placed"
    unlinked_code = (
        pl.when(pl.col("card_hash").is_null()).then(pl.lit("no_card")).otherwise("unlinked_code")
    )
    unlinked_text = unlinked_code.replace_strict(UNLINKED_REASONS, default=None) + pl.lit(_SCALED)
    return (
        boardings.join(tap_legs, on="transaction_id", how="left")
        .join(leg_result, on="leg_id", how="left")
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
        .drop("leg_id", "method", "unlinked_code")
    )
