"""Compare trip outcomes with a truth frame (the simulator's truth/trips.parquet), so errors can
be studied rather than tuned away: one row per disagreeing trip with what we saw and why."""

from __future__ import annotations

import polars as pl


def compare_outcomes(outcomes: pl.DataFrame, truth: pl.DataFrame) -> pl.DataFrame:
    """Disagreements: trip_id, true_outcome, outcome, true_start_at, actual_start_at,
    start_error_s, true_vehicle_id, vehicle_id, coverage_ratio, why (what our evidence shows).

    `truth`: trip_id, true_outcome, vehicle_id, actual_start_at (true departure, UTC).
    """
    t = truth.select(
        "trip_id",
        "true_outcome",
        pl.col("vehicle_id").cast(pl.String).alias("true_vehicle_id"),
        pl.col("actual_start_at").alias("true_start_at"),
        *([pl.col("injected")] if "injected" in truth.columns else []),
    )
    both = outcomes.join(t, on="trip_id", how="full", coalesce=True)
    why = (
        pl.when(pl.col("outcome").is_null())
        .then(pl.lit("trip missing from our outcomes"))
        .when(pl.col("true_outcome").is_null())
        .then(pl.lit("trip missing from the truth"))
        .when(pl.col("vehicle_id").is_null())
        .then(pl.lit("no run matched (suppressed)"))
        .when(
            pl.col("true_vehicle_id").is_not_null()
            & (pl.col("true_vehicle_id") != pl.col("vehicle_id"))
        )
        .then(pl.format("matched vehicle {} but truth ran {}", "vehicle_id", "true_vehicle_id"))
        .when(pl.col("start_error_s").abs() > 60)
        .then(pl.format("departure off by {} s", pl.col("start_error_s").round(0)))
        .otherwise(pl.format("{}; coverage {}", "reason", pl.col("coverage_ratio").round(2)))
    )
    return (
        both.with_columns(
            (pl.col("actual_start_at") - pl.col("true_start_at"))
            .dt.total_seconds()
            .alias("start_error_s")
        )
        .filter(
            pl.col("outcome").is_null()
            | pl.col("true_outcome").is_null()
            | (pl.col("outcome") != pl.col("true_outcome"))
        )
        .with_columns(why.alias("why"))
        .select(
            "trip_id",
            "true_outcome",
            "outcome",
            "true_start_at",
            "actual_start_at",
            "start_error_s",
            "true_vehicle_id",
            "vehicle_id",
            "coverage_ratio",
            *(["injected"] if "injected" in truth.columns else []),
            "why",
        )
        .sort("trip_id")
    )


def compute_agreement(outcomes: pl.DataFrame, truth: pl.DataFrame) -> dict[str, float]:
    """Share of trips whose outcome agrees, and the origin-departure error (median, p95, s)."""
    j = outcomes.join(
        truth.select("trip_id", "true_outcome", pl.col("actual_start_at").alias("_t")), on="trip_id"
    )
    err = (j["actual_start_at"] - j["_t"]).dt.total_seconds().abs().drop_nulls()
    return {
        "n_trips": float(j.height),
        "agreement": float(
            j.select((pl.col("outcome") == pl.col("true_outcome")).mean()).item() or 0.0
        ),
        "start_error_median_s": float(err.median() or 0.0),  # type: ignore[arg-type]
        "start_error_p95_s": float(err.quantile(0.95) or 0.0),
    }
