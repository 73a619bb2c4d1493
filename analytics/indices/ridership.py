"""Ridership from ticketing: IPK, equivalent passengers, fare integrations, technical tariff.

- passengers of a line = its fare taps (BG art. 26, 49: ticketing is the source of passengers);
- a tap is an *integration* (BG art. 7-V) when the same card tapped on another line within
  `fares.integration_window_s` before it; a tap the validator already recorded with the fare
  class 'integration' is one too; a profile without integration keys (CGS, which grants no
  integration fare) infers none;
- equivalent passengers (CGS art. 7 §2) weigh each tap by `fares.equivalent_weights` of its fare
  class; an inferred integration pays `fares.integration_fare_ratio` of its class's weight. The
  effect of integrations = equivalent passengers without that discount − with it;
- IPK = passengers ÷ km run; IPKe = equivalent passengers ÷ km run;
- technical tariff (CGS art. 16) = cost per km ÷ IPKe. Indicative: art. 15 §2-3 asks for the
  equivalent passengers of the last 12 months and the total km including dead km to and from
  the garage; this uses the period's taps and the km run in service (source says so).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.indices.scopes import LEVELS, IndicatorSpec, compute_by_scope, to_indicator_rows
from core.periods import Period
from core.profile import Profile

INTEGRATION_CLASS = "integration"


def compute_integration_chains(
    ordered: pl.DataFrame, window_us: int, *, has_vehicle: bool
) -> pl.Series:
    """is_integration of each tap of `ordered` (sorted by card_hash, event_at).

    BG art. 5 (viagens integradas) and 7-V: a trip using more than one line, changing to
    another vehicle, within one hour. The hour runs from the journey's first (paid) boarding,
    not from the previous tap, so a chain cannot stretch past it. A tap continues the journey
    when its card is known, its line differs from the previous tap's, its vehicle differs
    (when both are known) and it is within the window of the journey's first boarding;
    otherwise it starts a new journey. Resolved in rounds (one journey per card per round), so
    no per-row loop: rounds = the most journeys a card makes in the frame.
    """
    prev_route = pl.col("route_id").shift(1).over("card_hash")
    link = pl.col("card_hash").is_not_null() & (prev_route != pl.col("route_id")).fill_null(False)
    if has_vehicle:
        prev_vehicle = pl.col("vehicle_id").shift(1).over("card_hash")
        link = link & (prev_vehicle != pl.col("vehicle_id")).fill_null(True)
    frame = ordered.select(
        "card_hash", "event_at", link.alias("_link"), pl.int_range(pl.len()).alias("_i")
    )
    result = pl.Series("is_integration", [False] * frame.height, dtype=pl.Boolean)
    pending = frame.filter(pl.col("card_hash").is_not_null())
    while pending.height:
        first = pl.col("_i") == pl.col("_i").min().over("card_hash")
        since_start = pl.col("event_at") - pl.col("event_at").min().over("card_hash")
        ok = first | (pl.col("_link") & (since_start.dt.total_microseconds() <= window_us))
        # the journey: its first tap, then the taps that continue it until the first break
        pending = pending.with_columns(
            first.alias("_first"),
            ok.cast(pl.Int32).cum_min().over("card_hash").cast(pl.Boolean).alias("_member"),
        )
        joined = pending.filter(pl.col("_member") & ~pl.col("_first"))["_i"]
        if joined.len():
            result = result.scatter(joined, True)
        pending = pending.filter(~pl.col("_member")).drop("_first", "_member")
    return result


def match_integrations(taps: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Taps plus is_integration and the equivalent weights.

    `taps`: fare_transactions rows (card_hash, event_at, route_id, fare_class; vehicle_id
    when known). Added columns: is_integration (bool; `compute_integration_chains`, or a tap
    the validator recorded as 'integration'), weight_full (the class's weight, 0-1) and weight
    (after the integration discount, 0-1). Taps without a card are never integrations; a
    profile without integration keys (CGS) infers none.
    """
    fares = profile.fares
    window = fares.integration_window_s
    ratio = fares.integration_fare_ratio.value if fares.integration_fare_ratio else 1.0
    weights = fares.equivalent_weights.value
    default_weight = weights.get("other", 1.0)
    ordered = taps.sort("card_hash", "event_at")
    if window is not None:
        inferred = compute_integration_chains(
            ordered, window.value * 1_000_000, has_vehicle="vehicle_id" in taps.columns
        )
    else:
        inferred = pl.Series("is_integration", [False] * ordered.height, dtype=pl.Boolean)
    recorded = pl.col("fare_class") == INTEGRATION_CLASS
    weight_full = pl.col("fare_class").replace_strict(
        weights, default=default_weight, return_dtype=pl.Float64
    )
    return ordered.with_columns(
        (pl.lit(inferred) | recorded).alias("is_integration"),
        weight_full.alias("weight_full"),
    ).with_columns(
        pl.when(pl.col("is_integration") & ~recorded)
        .then(pl.col("weight_full") * ratio)
        .otherwise(pl.col("weight_full"))
        .alias("weight")
    )


def compute_ridership(
    taps: pl.DataFrame,
    km: pl.DataFrame,
    levels: Sequence[tuple[str, str | None]] = LEVELS,
    by: Sequence[str] = (),
) -> pl.DataFrame:
    """Passengers, equivalent passengers and km per scope.

    `taps`: from `match_integrations`, with route_id, operator_id, lot_id; `km`: route_id,
    operator_id, lot_id, km_run (per trip or per line) and optionally cost_km (cost per km ×
    km run, currency). Returns scope, scope_id, *by, n_passengers, n_integrations,
    equivalent_passengers, equivalent_without_integration, km_run, cost_km (null without cost).
    """
    tap_rows = taps.select(
        "route_id",
        "operator_id",
        "lot_id",
        *by,
        pl.lit(1, dtype=pl.Int64).alias("n_passengers"),
        pl.col("is_integration").cast(pl.Int64).alias("n_integrations"),
        pl.col("weight").alias("equivalent_passengers"),
        pl.col("weight_full").alias("equivalent_without_integration"),
    )
    cost = pl.col("cost_km") if "cost_km" in km.columns else pl.lit(None, dtype=pl.Float64)
    km_rows = km.select("route_id", "operator_id", "lot_id", *by, "km_run", cost.alias("cost_km"))
    rows = pl.concat([tap_rows, km_rows], how="diagonal_relaxed")
    sums = (
        "n_passengers",
        "n_integrations",
        "equivalent_passengers",
        "equivalent_without_integration",
        "km_run",
    )
    aggs = [pl.col(c).fill_null(0).sum().alias(c) for c in sums]
    # the cost is only known where every km row of the scope has one
    aggs.append(
        pl.when(pl.col("cost_km").filter(pl.col("km_run").is_not_null()).null_count() == 0)
        .then(pl.col("cost_km").sum())
        .alias("cost_km")
    )
    return compute_by_scope(rows, aggs, levels, by)


def compute_technical_tariff(ridership: pl.DataFrame, cost_per_km: float | None) -> pl.DataFrame:
    """Adds integration_effect (equivalent passengers lost to integrations) and, when
    `cost_per_km` (currency/km) is given, replaces cost_km with cost × km run. The tariff is
    cost per km ÷ IPKe = cost_km ÷ equivalent passengers."""
    out = ridership.with_columns(
        (pl.col("equivalent_without_integration") - pl.col("equivalent_passengers")).alias(
            "integration_effect"
        )
    )
    if cost_per_km is not None:
        out = out.with_columns((pl.col("km_run") * cost_per_km).alias("cost_km"))
    return out


RIDERSHIP_SPECS = (
    IndicatorSpec("passengers", "n_passengers", None, "passengers", "BG art. 26, 49"),
    IndicatorSpec(
        "equivalent_passengers", "equivalent_passengers", None, "passengers", "CGS art. 7 §2"
    ),
    IndicatorSpec("fare_integrations", "n_integrations", "n_passengers", "ratio", "BG art. 7-V"),
    IndicatorSpec(
        "integration_effect_equivalent",
        "integration_effect",
        "equivalent_without_integration",
        "ratio",
        "BG art. 7-V (fares.integration_fare_ratio)",
    ),
    IndicatorSpec("ipk", "n_passengers", "km_run", "passengers/km", "CGS art. 15"),
    IndicatorSpec(
        "ipk_equivalent", "equivalent_passengers", "km_run", "passengers/km", "CGS art. 15, 16"
    ),
)
TARIFF_SPEC = IndicatorSpec(
    "technical_tariff_brl",
    "cost_km",
    "equivalent_passengers",
    "brl",
    "CGS art. 16 (cost per km ÷ IPKe); indicative: km run in service and the period's taps, "
    "not yet the total km with dead km nor the 12-month demand of art. 15 §2-3",
)


def compute_ridership_indicators(
    taps: pl.DataFrame,
    km: pl.DataFrame,
    profile: Profile,
    period: Period,
    cost_per_km: float | None,
) -> pl.DataFrame:
    """Ridership indicators of the period at every scope (long format). The tariff uses
    `cost_per_km` when given, else the cost_km column of `km` (per-operator costs)."""
    wide = compute_technical_tariff(
        compute_ridership(match_integrations(taps, profile), km), cost_per_km
    )
    has_cost = bool(wide["cost_km"].is_not_null().any())
    specs = (*RIDERSHIP_SPECS, TARIFF_SPEC) if has_cost else RIDERSHIP_SPECS
    return to_indicator_rows(wide, specs, period)
