"""Stoppages (BG art. 72-V; Anexo I LXXXII "paralisar os serviços, ainda que parcial, sem
motivo justificado"; LXXXIII when the motive is a claim, which the fiscal establishes).

A stoppage is a stretch of an operator's day in which *every* programmed trip of the operator,
on all its lines, in order of planned start, was not run (suppressed) and no approved incident
justifies it, lasting at least `infractions.stoppage_min_duration_s`: from the first trip not
run to the next trip the operator did run (or to the last trip not run when none ran after).
A trip that could not be judged (`not_evaluated`: no data) breaks the stretch: a feed outage
is no stoppage. Scattered suppressions on one line are LXIV's and VII's business, not this.
When every operator with trips that day stopped at overlapping times, the fact says the whole
system stopped.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from analytics.indices.infractions import FACT_COLUMNS
from core.profile import Profile

STOPPAGE_SCHEMA = pl.Schema(
    {
        "operator_id": pl.String(),
        "service_date": pl.Date(),
        "start_at": pl.Datetime("us", "UTC"),
        "end_at": pl.Datetime("us", "UTC"),
        "duration_s": pl.Float64(),
        "n_trips": pl.UInt32(),
        "n_routes": pl.UInt32(),
        "trip_ids": pl.String(),
        "is_system_wide": pl.Boolean(),
    }
)


def compute_stoppages(outcomes: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Stoppages (STOPPAGE_SCHEMA) in trip outcomes (operator_id, service_date, trip_id,
    route_id, planned_start_at, outcome, is_justified; not_evaluated trips included): start_at
    (planned start of the first trip not run), end_at (planned start of the next trip run),
    duration_s, n_trips and n_routes not run, trip_ids, is_system_wide (every operator with
    trips that day has a stoppage overlapping this one)."""
    minimum = profile.infractions.stoppage_min_duration_s
    if minimum is None or outcomes.height == 0:
        return pl.DataFrame(schema=STOPPAGE_SCHEMA)
    keys = ["operator_id", "service_date"]
    ordered = (
        _in_trip_order(
            # only the columns read here are put in order (a year's outcomes are wide)
            outcomes.select(
                *keys, "planned_start_at", "trip_id", "route_id", "outcome", "is_justified"
            )
        )
        .with_columns(
            ((pl.col("outcome") == "suppressed") & ~pl.col("is_justified").fill_null(False)).alias(
                "is_out"
            )
        )
        .with_columns(
            (pl.col("is_out") != pl.col("is_out").shift(1).over(keys))
            .fill_null(True)
            .cum_sum()
            .over(keys)
            .alias("run"),
            # the planned start of the trip after this one (the service resuming)
            pl.col("planned_start_at").shift(-1).over(keys).alias("next_start_at"),
        )
    )
    stretches = (
        ordered.filter(pl.col("is_out"))
        .group_by(*keys, "run")
        .agg(
            pl.col("planned_start_at").min().alias("start_at"),
            pl.col("next_start_at").last().alias("_next"),
            pl.col("planned_start_at").max().alias("_last"),
            pl.len().alias("n_trips"),
            pl.col("route_id").n_unique().cast(pl.UInt32).alias("n_routes"),
            pl.col("trip_id").str.join(",").alias("trip_ids"),
        )
        .with_columns(pl.coalesce("_next", "_last").alias("end_at"))
        .with_columns(
            ((pl.col("end_at") - pl.col("start_at")).dt.total_microseconds() / 1e6).alias(
                "duration_s"
            )
        )
        .filter((pl.col("duration_s") >= minimum.value) & (pl.col("n_trips") >= 2))
    )
    operators = outcomes.group_by("service_date").agg(
        pl.col("operator_id").n_unique().alias("_n_ops")
    )
    overlapping = (
        stretches.select("service_date", "operator_id", "start_at", "end_at", "run")
        .join(
            stretches.select(
                "service_date",
                pl.col("operator_id").alias("_other"),
                pl.col("start_at").alias("_s"),
                pl.col("end_at").alias("_e"),
            ),
            on="service_date",
        )
        .filter((pl.col("_s") < pl.col("end_at")) & (pl.col("_e") > pl.col("start_at")))
        .group_by("service_date", "operator_id", "run")
        .agg(pl.col("_other").n_unique().alias("_n_stopped"))
    )
    return (
        stretches.join(overlapping, on=["service_date", "operator_id", "run"], how="left")
        .join(operators, on="service_date", how="left")
        .with_columns((pl.col("_n_stopped") >= pl.col("_n_ops")).alias("is_system_wide"))
        .select(list(STOPPAGE_SCHEMA))
        .cast(STOPPAGE_SCHEMA)
        .sort("service_date", "operator_id", "start_at")
    )


def _in_trip_order(trips: pl.DataFrame) -> pl.DataFrame:
    """`trips` sorted by operator_id, service_date, planned_start_at, trip_id: as Polars' sort
    of the four columns, but the strings (few distinct: a trip id comes back every service
    day) ranked once and the rows put in order by the numbers (half the CPU on a year)."""
    by = ["operator_id", "service_date", "planned_start_at", "trip_id"]
    if trips.height == 0 or trips.select(pl.any_horizontal(pl.col(by).is_null().any())).item():
        return trips.sort(by)

    def rank(column: str) -> np.ndarray:
        names = trips[column].unique().sort()
        codes = pl.int_range(names.len(), eager=True, dtype=pl.UInt32)
        return trips[column].replace_strict(names, codes, return_dtype=pl.UInt32).to_numpy()

    order = np.lexsort(
        (
            rank("trip_id"),
            trips["planned_start_at"].dt.epoch("us").to_numpy(),
            trips["service_date"].to_physical().to_numpy(),
            rank("operator_id"),
        )
    )
    return trips[order]


def match_stoppage_facts(stoppages: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Facts LXXXII (FACT_COLUMNS), one per operator and service day with a stoppage."""
    tz = profile.general.timezone.value
    one = pl.format(
        "{}–{} ({} viagens de {} linha(s) não realizadas{})",
        pl.col("start_at").dt.convert_time_zone(tz).dt.strftime("%H:%M"),
        pl.col("end_at").dt.convert_time_zone(tz).dt.strftime("%H:%M"),
        "n_trips",
        "n_routes",
        pl.when(pl.col("is_system_wide"))
        .then(pl.lit("; todo o sistema parado"))
        .otherwise(pl.lit("")),
    )
    return (
        stoppages.with_columns(one.alias("_ev"))
        .group_by("operator_id", "service_date")
        .agg(
            pl.col("start_at").min().alias("occurred_at"),
            (pl.col("duration_s").sum() / 60).round(0).cast(pl.Int64).alias("_min"),
            pl.col("is_system_wide").any().alias("_all"),
            pl.col("_ev").sort_by("start_at").str.join("; ").alias("evidence"),
            pl.col("trip_ids").sort_by("start_at").str.join(",").alias("trip_ids"),
        )
        .select(
            pl.lit("LXXXII").alias("item"),
            "operator_id",
            pl.lit(None, dtype=pl.String).alias("route_id"),
            pl.lit(None, dtype=pl.String).alias("vehicle_id"),
            pl.col("service_date").alias("occurred_on"),
            "occurred_at",
            pl.format(
                "paralisação{} de {} min sem motivo justificado: nenhuma viagem programada da "
                "operadora realizada (BG art. 72-V; LXXXIII se por motivo reivindicatório)",
                pl.when(pl.col("_all")).then(pl.lit(" de todo o sistema")).otherwise(pl.lit("")),
                "_min",
            ).alias("fact"),
            "evidence",
            "trip_ids",
            pl.lit(None, dtype=pl.String).alias("ping_ids"),
        )
        .select(FACT_COLUMNS)
        .sort("occurred_on", "operator_id")
    )
