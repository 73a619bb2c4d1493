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
- technical tariff (CGS art. 15) = cost per km ÷ IPKe.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.indices.scopes import LEVELS, IndicatorSpec, compute_by_scope, to_indicator_rows
from core.periods import Period
from core.profile import Profile

INTEGRATION_CLASS = "integration"


def match_integrations(taps: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Taps plus is_integration and the equivalent weights.

    `taps`: fare_transactions rows (card_hash, event_at, route_id, fare_class). Added columns:
    is_integration (bool), weight_full (the class's weight, 0-1) and weight (after the
    integration discount, 0-1). Taps without a card are never integrations.
    """
    fares = profile.fares
    # a profile without an integration fare (CGS) has no inferred integration
    window = fares.integration_window_s
    has_integration = window is not None
    window_us = window.value * 1_000_000 if window is not None else -1
    ratio = fares.integration_fare_ratio.value if fares.integration_fare_ratio else 1.0
    weights = fares.equivalent_weights.value
    default_weight = weights.get("other", 1.0)
    ordered = taps.sort("card_hash", "event_at")
    prev_at = pl.col("event_at").shift(1).over("card_hash")
    prev_route = pl.col("route_id").shift(1).over("card_hash")
    gap_us = (pl.col("event_at") - prev_at).dt.total_microseconds()
    inferred = (
        pl.lit(has_integration)
        & pl.col("card_hash").is_not_null()
        & (gap_us <= window_us).fill_null(False)
        & (prev_route != pl.col("route_id")).fill_null(False)
    )
    recorded = pl.col("fare_class") == INTEGRATION_CLASS
    weight_full = pl.col("fare_class").replace_strict(
        weights, default=default_weight, return_dtype=pl.Float64
    )
    return ordered.with_columns(
        (inferred | recorded).alias("is_integration"),
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
    "CGS art. 15 (cost per km ÷ IPKe)",
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
