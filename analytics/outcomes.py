"""Trip outcomes: exactly one row per scheduled trip of the day, with a reason a planner reads.

- `suppressed`: no run was matched to it;
- `broken_down`: its run was interrupted by a breakdown;
- `partial`: its run covered less than the profile's `partial_trip_min_ratio` of the itinerary;
- `early` / `late` / `on_time`: by the departure delay at the origin against the profile's
  `early_departure_s` and `late_departure_s` windows.
An approved incident (BG art. 57 §1) of the trip, its line (or every line) or its vehicle whose
window overlaps the trip's planned window marks a non-on-time outcome `is_justified`.
"""

from __future__ import annotations

import polars as pl

from analytics.options import MatchOptions
from core.profile import Profile


def compute_trip_outcomes(
    trips: pl.DataFrame,
    runs: pl.DataFrame,
    breakdowns: pl.DataFrame,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
) -> pl.DataFrame:
    """Columns of `trip_outcomes` (without service_date/version columns) for `trips`."""
    rules = profile.trips
    early_s = float(rules.early_departure_s.value)
    late_s = float(rules.late_departure_s.value)
    ratio = float(rules.partial_trip_min_ratio.value)

    def at(c):
        return pl.from_epoch((pl.col(c) * 1e6).round().cast(pl.Int64), "us").dt.replace_time_zone(
            "UTC"
        )

    matched = runs.filter(pl.col("trip_id").is_not_null()).select(
        "trip_id",
        "vehicle_id",
        pl.col("run_id").alias("run_index"),
        "departure_delay_s",
        at("started_s").alias("actual_start_at"),
        at("ended_s").alias("actual_end_at"),
        "distance_run_m",
        "coverage_ratio",
        "is_departed",
        "is_arrived",
        "first_ping_id",
        "last_ping_id",
        pl.col("n_pings").cast(pl.Int32),
    )
    broke = (
        breakdowns.filter(pl.col("trip_id").is_not_null())
        .select(
            "trip_id",
            pl.col("source").alias("_bd_source"),
            pl.col("evidence").alias("_bd_evidence"),
        )
        .unique("trip_id")
    )
    df = (
        trips.select(
            "trip_id",
            "route_id",
            "direction_id",
            "block_id",
            "planned_start_at",
            "planned_end_at",
            "planned_distance_m",
        )
        .join(matched, on="trip_id", how="left")
        .join(broke, on="trip_id", how="left")
    )
    d = pl.col("departure_delay_s")
    cov = pl.col("coverage_ratio")
    outcome = (
        pl.when(pl.col("vehicle_id").is_null())
        .then(pl.lit("suppressed"))
        .when(pl.col("_bd_source").is_not_null())
        .then(pl.lit("broken_down"))
        .when(cov < ratio)
        .then(pl.lit("partial"))
        .when(d < -early_s)
        .then(pl.lit("early"))
        .when(d > late_s)
        .then(pl.lit("late"))
        .otherwise(pl.lit("on_time"))
    )
    pct = (cov * 100).round(0).cast(pl.Int64)
    reason = (
        pl.when(pl.col("vehicle_id").is_null())
        .then(pl.lit("nenhum veículo realizou esta viagem (nenhuma passagem casada com o horário)"))
        .when(pl.col("_bd_source").is_not_null())
        .then(pl.format("avaria do veículo {}: {}", "vehicle_id", "_bd_evidence"))
        .when(cov < ratio)
        .then(
            pl.format(
                "veículo {} cumpriu só {}% do itinerário (mínimo {}%)",
                "vehicle_id",
                pct,
                pl.lit(round(ratio * 100)),
            )
        )
        .when(d < -early_s)
        .then(
            pl.format(
                "partida {} s antes do horário (tolerância {} s), veículo {}",
                -d,
                pl.lit(int(early_s)),
                "vehicle_id",
            )
        )
        .when(d > late_s)
        .then(
            pl.format(
                "partida {} s após o horário (tolerância {} s), veículo {}",
                d,
                pl.lit(int(late_s)),
                "vehicle_id",
            )
        )
        .otherwise(pl.format("partida no horário ({} s), veículo {}", d, "vehicle_id"))
    )
    df = df.with_columns(outcome.alias("outcome"), reason.alias("reason"))
    return _justify(df, incidents, options).drop(
        "planned_end_at", "_bd_source", "_bd_evidence", "is_departed", "is_arrived"
    )


def _justify(df: pl.DataFrame, incidents: pl.DataFrame, options: MatchOptions) -> pl.DataFrame:
    ok = incidents.filter(pl.col("is_justified"))
    margin = pl.duration(seconds=options.incident_margin_s)
    hits = (
        df.filter(pl.col("outcome") != "on_time")
        .select("trip_id", "route_id", "vehicle_id", "planned_start_at", "planned_end_at")
        .join(
            ok.select(
                "incident_id",
                "kind",
                pl.col("starts_at").alias("_s"),
                pl.col("ends_at").alias("_e"),
                pl.col("route_id").alias("_route"),
                pl.col("trip_id").alias("_trip"),
                pl.col("vehicle_id").alias("_veh"),
            ),
            how="cross",
        )
        .filter(
            (pl.col("_s") <= pl.col("planned_end_at") + margin)
            & (pl.col("_e") >= pl.col("planned_start_at") - margin)
            & (pl.col("_trip").is_null() | (pl.col("_trip") == pl.col("trip_id")))
            & (pl.col("_route").is_null() | (pl.col("_route") == pl.col("route_id")))
            & (pl.col("_veh").is_null() | (pl.col("_veh") == pl.col("vehicle_id")).fill_null(False))
        )
        .sort("incident_id")
        .unique("trip_id", keep="first")
        .select("trip_id", "incident_id", "kind")
    )
    return (
        df.join(hits, on="trip_id", how="left")
        .with_columns(
            pl.col("incident_id").is_not_null().alias("is_justified"),
            pl.when(pl.col("incident_id").is_not_null())
            .then(
                pl.format(
                    "{}; justificada pela ocorrência aprovada {} ({})",
                    "reason",
                    "incident_id",
                    "kind",
                )
            )
            .otherwise(pl.col("reason"))
            .alias("reason"),
        )
        .drop("kind")
    )
