"""Trip outcomes: exactly one row per scheduled trip of the day, with a reason a planner reads.

- `suppressed`: no run was matched to it;
- `broken_down`: its run was interrupted by a breakdown;
- `partial`: its run covered less than the profile's `partial_trip_min_ratio` of the itinerary;
- `early` / `late` / `on_time`: by the departure delay at the origin against the profile's
  `early_departure_s` and `late_departure_s` windows.
A trip with no run that lies between two trips of its block the same vehicle ran, while that
vehicle's GPS was silent (`infer_trips_in_outages`), was run: its outcome comes from a departure
estimated by block continuity, and its reason says it was inferred.
An approved incident (BG art. 57 §1) of the trip, its line (or every line) or its vehicle whose
window overlaps the trip's planned window marks a non-on-time outcome `is_justified`.
"""

from __future__ import annotations

import polars as pl

from analytics.matching.options import MatchOptions
from analytics.matching.runs import itinerary_share
from core.instants import to_utc_instant
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

    at = to_utc_instant

    inferred = infer_trips_in_outages(trips, runs, options)
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
    matched = pl.concat(
        [
            matched,
            inferred.select(
                "trip_id",
                "vehicle_id",
                "departure_delay_s",
                at("estimated_start_s").alias("actual_start_at"),
                pl.lit(0, pl.Int32).alias("n_pings"),
                "_inferred",
            ),
        ],
        how="diagonal_relaxed",
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
    inferred_text = pl.when(pl.col("_inferred").is_not_null()).then(pl.col("_inferred") + "; ")
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
    df = df.with_columns(
        outcome.alias("outcome"),
        pl.concat_str(inferred_text.otherwise(pl.lit("")), reason).alias("reason"),
    )
    return _justify(df, incidents, options).drop(
        "planned_end_at", "_bd_source", "_bd_evidence", "is_departed", "is_arrived", "_inferred"
    )


def infer_trips_in_outages(
    trips: pl.DataFrame, runs: pl.DataFrame, options: MatchOptions
) -> pl.DataFrame:
    """Trips run inside a GPS outage, inferred by block continuity.

    A vehicle ran trips k and n of a block (matched runs, consecutive among its matched runs);
    the trips between them (k < j < n in the block's order) have no run at all; and the unit
    was silent between the two runs for at least `outage_silence_ratio` of their planned time.
    Then the vehicle ran them: it had to get from the end of k to the start of n, and a vehicle
    that pings while standing (a suppressed trip) would have left no such silence. A renewal
    board can check it against the ticketing taps of the trip (BG art. 57 §2).

    Each trip's departure lies between the end of run k plus the planned time of the missing
    trips before it (`earliest_s`) and the origin departure of run n less the planned time of
    the missing trips from it on (`latest_s`); the estimate is their midpoint (epoch s). No trip
    is inferred across a silence longer than `outage_max_silence_s` (the unit switched off), nor
    when the time between the runs is too short to run the missing trips (`min_duration_ratio`).
    Returns trip_id, vehicle_id, departure_delay_s (estimate - planned start, s, + late),
    estimated_start_s, earliest_s, latest_s and `_inferred`: the reason text (pt-BR).
    """
    plan = trips.select(
        "trip_id",
        "block_id",
        (pl.col("planned_start_at").dt.epoch("us") / 1e6).alias("_p0"),
        (pl.col("planned_end_at").dt.epoch("us") / 1e6).alias("_p1"),
    ).with_columns(
        pl.int_range(pl.len()).sort_by("_p0").over("block_id").alias("_k"),
        (pl.col("_p1") - pl.col("_p0")).alias("_dur"),
    )
    share = itinerary_share(pl.col("start_dist_m") - pl.col("origin_dist_m")).clip(0.0, 1.0)
    done = (
        runs.filter(pl.col("trip_id").is_not_null())
        .join(plan, on="trip_id")
        .sort("vehicle_id", "started_s")
        .select(
            "vehicle_id",
            "block_id",
            pl.col("trip_id").alias("_prev"),
            pl.col("_k").alias("_k0"),
            pl.col("ended_s").alias("_end_s"),
            pl.col("silence_last_s").alias("_sil0"),
            pl.col("trip_id").shift(-1).over("vehicle_id").alias("_next"),
            pl.col("block_id").shift(-1).over("vehicle_id").alias("_next_block"),
            pl.col("_k").shift(-1).over("vehicle_id").alias("_k1"),
            # the next run's origin departure: where it began, moved back at the planned pace
            (pl.col("started_s") - share * pl.col("_dur"))
            .shift(-1)
            .over("vehicle_id")
            .alias("_start_s"),
            pl.col("silence_first_s").shift(-1).over("vehicle_id").alias("_sil1"),
        )
        .filter((pl.col("block_id") == pl.col("_next_block")) & (pl.col("_k1") - pl.col("_k0") > 1))
    )
    taken = runs.filter(pl.col("trip_id").is_not_null()).select("trip_id").unique()
    gaps = (
        done.join(plan.drop("trip_id").rename({"_k": "_j"}), on="block_id")
        .filter((pl.col("_j") > pl.col("_k0")) & (pl.col("_j") < pl.col("_k1")))
        .join(plan.select("block_id", pl.col("_k").alias("_j"), "trip_id"), on=["block_id", "_j"])
        .join(taken.with_columns(pl.lit(True).alias("_taken")), on="trip_id", how="left")
        .sort("vehicle_id", "_k0", "_j")
    )
    key = ["vehicle_id", "_k0", "block_id"]
    silence = pl.col("_sil1") - pl.col("_sil0")
    gaps = gaps.with_columns(
        pl.col("_dur").sum().over(key).alias("_missing_s"),
        pl.col("_taken").any().over(key).fill_null(False).alias("_any_taken"),
        (pl.col("_dur").cum_sum().over(key) - pl.col("_dur")).alias("_before_s"),
    ).filter(
        ~pl.col("_any_taken")
        & (silence >= options.outage_silence_ratio * pl.col("_missing_s"))
        & (silence <= options.outage_max_silence_s)
        # and the time between the two runs is enough to run the missing trips
        & (
            pl.col("_start_s") - pl.col("_end_s")
            >= options.min_duration_ratio * pl.col("_missing_s")
        )
    )
    earliest = pl.col("_end_s") + pl.col("_before_s")
    latest = pl.col("_start_s") - (pl.col("_missing_s") - pl.col("_before_s"))
    return (
        gaps.with_columns(earliest.alias("earliest_s"), latest.alias("latest_s"))
        .with_columns(
            ((pl.col("earliest_s") + pl.col("latest_s")) / 2).alias("estimated_start_s"),
        )
        .select(
            "trip_id",
            "vehicle_id",
            (pl.col("estimated_start_s") - pl.col("_p0"))
            .round()
            .cast(pl.Int32)
            .alias("departure_delay_s"),
            "estimated_start_s",
            "earliest_s",
            "latest_s",
            pl.format(
                "viagem inferida: o veículo {} fez as viagens {} e {} do bloco {} e ficou {} min sem "
                "sinal de GPS entre elas; partida estimada entre {} s e {} s do horário",
                "vehicle_id",
                "_prev",
                "_next",
                "block_id",
                (silence / 60).round(0).cast(pl.Int64),
                (pl.col("earliest_s") - pl.col("_p0")).round(0).cast(pl.Int64),
                (pl.col("latest_s") - pl.col("_p0")).round(0).cast(pl.Int64),
            ).alias("_inferred"),
        )
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
