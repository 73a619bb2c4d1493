"""Trip outcomes: exactly one row per scheduled trip of the day, with a reason a planner reads.

Each outcome rests on an evidence class (`evidence_class`, vocabulary in core.tables.matching):
`gps` (a matched GPS run), `gps_gap_credited` (a GPS run that reaches the partial ratio only
with the GPS silences credited inside it, `analytics.matching.stretches`; its `gps_gap_s` and
`gps_gap_m` say how much), `ticketing` or `inspection` (no GPS run, but taps on the vehicle or
an inspector's sighting show it ran: `analytics.matching.evidence`), or `none`. The profile's
`evidence.counted_as_run` says which classes count a trip as run; `none` never does.

- `not_evaluated` ("não avaliada — sem dados"): no evidence that counts, and no data to judge
  it either: its operator's AVL feed was down over at least `evidence.feed_down_min_share` of
  its planned window, or the vehicle that should have run it is not watched by GPS while a
  registered vehicle of the operator sent no fix all day (a dark vehicle). Left out of every
  index, counted beside them;
- `suppressed`: no evidence that counts, while the data to see it were there;
- `broken_down`: its run was interrupted by a breakdown;
- `partial`: its run covered less than the profile's `partial_trip_min_ratio` of the itinerary;
- `early` / `late` / `on_time`: by the departure delay at the origin against the profile's
  `early_departure_s` and `late_departure_s` windows. A trip shown run by ticketing or an
  inspection has no GPS departure: it is dated by block continuity when the same vehicle ran
  the block's trips around it and the bounds are within the profile's
  `evidence.unobserved_departure_max_uncertainty_s` (`estimate_departures_by_block`), else
  its departure is unknown and it is counted on time (no evidence of a delay: punctuality
  infractions need a measured departure), and its reason says which.
An approved incident (BG art. 57 §1) of the trip, its line (or every line) or its vehicle whose
window overlaps the trip's planned window marks a non-on-time outcome `is_justified`.
"""

from __future__ import annotations

import polars as pl

from analytics.matching.options import MatchOptions
from analytics.matching.runs import itinerary_share
from analytics.matching.trip_context import TripContext
from core.instants import to_utc_instant
from core.profile import Profile


def _no_context(trips: pl.DataFrame) -> TripContext:
    """The context of a day judged by its GPS runs alone (every feed up, no other evidence)."""
    s = pl.String()
    return TripContext(
        trips=trips.select(
            "trip_id",
            pl.lit("?").alias("operator_id"),
            pl.lit(1.0).alias("feed_up_share"),
            pl.lit(None, s).alias("block_vehicle_id"),
            pl.lit(True).alias("is_watched"),
            pl.lit(0, pl.Int32).alias("n_dark_vehicles"),
        ),
        ticketing=pl.DataFrame(
            schema={"trip_id": s, "vehicle_id": s, "n_taps": pl.Int64, "first_tap_s": pl.Float64}
        ),
        inspections=pl.DataFrame(
            schema={
                "trip_id": s,
                "vehicle_id": s,
                "inspection_id": s,
                "inspector": s,
                "observed_s": pl.Float64,
            }
        ),
        outages=pl.DataFrame(schema={"operator_id": s, "start_s": pl.Float64, "end_s": pl.Float64}),
        avl=pl.DataFrame(),
    )


def compute_trip_outcomes(
    trips: pl.DataFrame,
    runs: pl.DataFrame,
    breakdowns: pl.DataFrame,
    incidents: pl.DataFrame,
    profile: Profile,
    options: MatchOptions,
    context: TripContext | None = None,
) -> pl.DataFrame:
    """Columns of `trip_outcomes` (without service_date/version columns) for `trips`.

    `context`: `analytics.matching.trip_context.compute_trip_context` of the day (None: judged by
    the GPS runs alone, every feed taken as up)."""
    rules = profile.trips
    ev = profile.evidence
    early_s = float(rules.early_departure_s.value)
    late_s = float(rules.late_departure_s.value)
    ratio = float(rules.partial_trip_min_ratio.value)
    counted = list(ev.counted_as_run.value)
    down_min = float(ev.feed_down_min_share.value)
    ctx = context if context is not None else _no_context(trips)

    at = to_utc_instant

    # a credited GPS gap (`GapCredit`) that lifts the trip over the partial ratio makes its
    # evidence `gps_gap_credited`: it counts as run only when the profile says so, else the
    # trip is judged on the itinerary its fixes saw
    seen_ratio = itinerary_share(pl.col("distance_run_m") - pl.col("gps_gap_m")).clip(0.0, 1.0)
    by_gap = (pl.col("coverage_ratio") >= ratio) & (seen_ratio < ratio)
    gap_counts = "gps_gap_credited" in counted
    gps = runs.filter(pl.col("trip_id").is_not_null()).select(
        "trip_id",
        "vehicle_id",
        "run_index",
        "departure_delay_s",
        at("started_s").alias("actual_start_at"),
        at("ended_s").alias("actual_end_at"),
        pl.when(by_gap & ~pl.lit(gap_counts))
        .then(pl.col("distance_run_m") - pl.col("gps_gap_m"))
        .otherwise(pl.col("distance_run_m"))
        .alias("distance_run_m"),
        pl.when(by_gap & ~pl.lit(gap_counts))
        .then(seen_ratio)
        .otherwise(pl.col("coverage_ratio"))
        .alias("coverage_ratio"),
        pl.col("gps_gap_s").round().cast(pl.Int32),
        "gps_gap_m",
        "is_departed",
        "is_arrived",
        "first_ping_id",
        "last_ping_id",
        pl.col("n_pings").cast(pl.Int32),
        (pl.col("gps_completeness_ratio") * (pl.col("ended_s") - pl.col("started_s"))).alias(
            "_fix_s"
        ),
        pl.when(by_gap & pl.lit(gap_counts))
        .then(pl.lit("gps_gap_credited"))
        .otherwise(pl.lit("gps"))
        .alias("evidence_class"),
    )
    taps = ctx.ticketing.select(
        "trip_id",
        "vehicle_id",
        pl.lit("ticketing").alias("evidence_class"),
        pl.format(
            "{} validações no veículo {} na linha, no horário da viagem e fora de qualquer "
            "trajeto com GPS",
            "n_taps",
            "vehicle_id",
        ).alias("_evidence_text"),
    )
    seen = ctx.inspections.select(
        "trip_id",
        "vehicle_id",
        pl.lit("inspection").alias("evidence_class"),
        pl.format(
            "fiscalização em campo {} ({}) viu {}",
            "inspection_id",
            "inspector",
            pl.when(pl.col("vehicle_id").is_not_null())
            .then(pl.format("o veículo {}", "vehicle_id"))
            .otherwise(pl.lit("a linha em operação")),
        ).alias("_evidence_text"),
    )
    # the first class in this order that the profile counts: GPS, then ticketing, then an
    # inspection (a class the profile does not count is as good as none)
    other = pl.concat(
        [f for f, c in ((taps, "ticketing"), (seen, "inspection")) if c in counted]
        or [taps.clear()]
    ).unique("trip_id", keep="first", maintain_order=True)
    if "gps" not in counted:
        gps = gps.clear()
    other = other.join(gps.select("trip_id"), on="trip_id", how="anti")
    dated = (
        estimate_departures_by_block(trips, runs, options)
        .join(other.select("trip_id", pl.col("vehicle_id").alias("_ev_vehicle")), on="trip_id")
        .filter(pl.col("vehicle_id") == pl.col("_ev_vehicle"))
    )
    other = other.join(
        dated.select("trip_id", "departure_delay_s", "estimated_start_s", "_estimate"),
        on="trip_id",
        how="left",
    ).with_columns(
        at("estimated_start_s").alias("actual_start_at"),
        pl.lit(0, pl.Int32).alias("n_pings"),
    )
    matched = pl.concat([gps, other.drop("estimated_start_s")], how="diagonal_relaxed")
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
        .join(ctx.trips, on="trip_id", how="left")
        .with_columns(
            pl.col("evidence_class").fill_null("none"),
            pl.col("feed_up_share").fill_null(1.0),
            pl.col("n_dark_vehicles").fill_null(0),
            pl.col("is_watched").fill_null(True),
        )
    )
    planned_s = (
        (pl.col("planned_end_at") - pl.col("planned_start_at"))
        .dt.total_seconds()
        .clip(lower_bound=60)
    )
    no_evidence = pl.col("evidence_class") == "none"
    feed_down = no_evidence & (1.0 - pl.col("feed_up_share") >= down_min)
    vehicle_dark = no_evidence & ~pl.col("is_watched") & (pl.col("n_dark_vehicles") > 0)
    d = pl.col("departure_delay_s")
    cov = pl.col("coverage_ratio")
    outcome = (
        pl.when(feed_down | vehicle_dark)
        .then(pl.lit("not_evaluated"))
        .when(no_evidence)
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
    gap_text = pl.when(pl.col("evidence_class") == "gps_gap_credited").then(
        pl.format(
            "; silêncio do GPS de {} s no itinerário creditado ({} m entre posições no "
            "trajeto, à frente e em velocidade plausível)",
            "gps_gap_s",
            pl.col("gps_gap_m").round(0).cast(pl.Int64),
        )
    )
    down_pct = ((1.0 - pl.col("feed_up_share")) * 100).round(0).cast(pl.Int64)
    evidence_text = pl.when(pl.col("_evidence_text").is_not_null()).then(
        pl.concat_str(
            pl.col("_evidence_text"),
            pl.when(pl.col("_estimate").is_not_null())
            .then(pl.format("; {}; ", "_estimate"))
            .otherwise(pl.lit("; horário de partida não observado; ")),
        )
    )
    reason = (
        pl.when(feed_down)
        .then(
            pl.format(
                "não avaliada — sem dados: o GPS da operadora {} esteve fora do ar em {}% do "
                "horário da viagem (falha de transmissão, BG art. 25)",
                "operator_id",
                down_pct,
            )
        )
        .when(vehicle_dark)
        .then(
            pl.format(
                "não avaliada — sem dados: nenhum veículo com GPS acompanhado no bloco {} nesse "
                "horário e {} veículo(s) da operadora {} não transmitiram nenhuma posição no dia",
                pl.col("block_id").fill_null("-"),
                "n_dark_vehicles",
                "operator_id",
            )
        )
        .when(no_evidence)
        .then(
            pl.lit(
                "nenhum veículo realizou esta viagem: nenhuma passagem casada com o horário e "
                "nenhuma validação ou fiscalização que a comprove (GPS da operadora no ar)"
            )
        )
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
        .when(d.is_not_null())
        .then(pl.format("partida no horário ({} s), veículo {}", d, "vehicle_id"))
        .otherwise(pl.format("contada no horário, veículo {}", "vehicle_id"))
    )
    df = df.with_columns(
        outcome.alias("outcome"),
        pl.concat_str(
            evidence_text.otherwise(pl.lit("")), reason, gap_text.otherwise(pl.lit(""))
        ).alias("reason"),
        (pl.col("_fix_s").fill_null(0.0) / planned_s).clip(0.0, 1.0).alias("gps_minutes_share"),
    )
    return _justify(df, incidents, options).drop(
        "planned_end_at",
        "_bd_source",
        "_bd_evidence",
        "is_departed",
        "is_arrived",
        "_estimate",
        "_evidence_text",
        "_fix_s",
        "operator_id",
        "block_vehicle_id",
        "is_watched",
        "n_dark_vehicles",
        strict=False,
    )


def estimate_departures_by_block(
    trips: pl.DataFrame,
    runs: pl.DataFrame,
    options: MatchOptions,
    max_uncertainty_s: float = float("inf"),
) -> pl.DataFrame:
    """Departures of trips without a GPS run, dated by block continuity (an estimate, not
    evidence that they ran: that comes from ticketing or an inspection).

    A vehicle ran trips k and n of a block (matched runs, consecutive among its matched runs)
    and the trips between them (k < j < n in the block's order) have no run. If it ran them,
    each departure lies between the end of run k plus the planned time of the missing trips
    before it (`earliest_s`) and the origin departure of run n less the planned time of the
    missing trips from it on (`latest_s`); the estimate is their midpoint (epoch s). Nothing
    is dated when the time between the runs is too short to run the missing trips
    (`min_duration_ratio`), when the two runs lie more than `match_window_s` apart (over a long
    silence the planned durations say little of where the vehicle was), when the estimate lies
    farther than `match_window_s` from the timetable, nor when the bounds
    are wider than twice `max_uncertainty_s` (an estimate that cannot tell on time from late
    is no measurement). Returns trip_id, vehicle_id, departure_delay_s (estimate - planned
    start, s, + late), estimated_start_s, earliest_s, latest_s and `_estimate`: the estimate
    in words (pt-BR).
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
            pl.col("trip_id").shift(-1).over("vehicle_id").alias("_next"),
            pl.col("block_id").shift(-1).over("vehicle_id").alias("_next_block"),
            pl.col("_k").shift(-1).over("vehicle_id").alias("_k1"),
            # the next run's origin departure: where it began, moved back at the planned pace
            (pl.col("started_s") - share * pl.col("_dur"))
            .shift(-1)
            .over("vehicle_id")
            .alias("_start_s"),
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
    gaps = gaps.with_columns(
        pl.col("_dur").sum().over(key).alias("_missing_s"),
        pl.col("_taken").any().over(key).fill_null(False).alias("_any_taken"),
        (pl.col("_dur").cum_sum().over(key) - pl.col("_dur")).alias("_before_s"),
    ).filter(
        ~pl.col("_any_taken")
        # the time between the two runs is enough to run the missing trips, and short
        & (
            pl.col("_start_s") - pl.col("_end_s")
            >= options.min_duration_ratio * pl.col("_missing_s")
        )
        & (pl.col("_start_s") - pl.col("_end_s") <= options.match_window_s)
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
                "partida estimada pela sequência do bloco {} (o veículo {} fez as viagens {} e "
                "{}): entre {} s e {} s do horário",
                "block_id",
                "vehicle_id",
                "_prev",
                "_next",
                (pl.col("earliest_s") - pl.col("_p0")).round(0).cast(pl.Int64),
                (pl.col("latest_s") - pl.col("_p0")).round(0).cast(pl.Int64),
            ).alias("_estimate"),
        )
        .filter(
            (pl.col("departure_delay_s").abs() <= options.match_window_s)
            & (pl.col("latest_s") - pl.col("earliest_s") <= 2 * max_uncertainty_s)
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
