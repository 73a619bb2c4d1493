"""Per-line operation and ridership figures shared by the semester and monthly reports.

Counts follow the indices exactly (`analytics.indices.icv.compute_trip_flags`, `analytics.indices.ridership`),
so a report's line totals equal the `indicators` rows of the same period.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.indices.icv import compute_trip_flags
from analytics.indices.ridership import compute_ridership, match_integrations
from analytics.indices.scopes import UNKNOWN, attach_scopes
from core.profile import Profile
from core.tables.observed import FARE_CLASSES

LINE_LEVEL = (("line", "route_id"),)

OPERATION_COLUMNS = (
    "n_programmed",
    "n_justified",
    "n_run",
    "n_suppressed",
    "n_late",
    "n_early",
    "n_partial",
    "n_broken_down",
)


def compute_line_operation(outcomes: pl.DataFrame, by: Sequence[str] = ()) -> pl.DataFrame:
    """Per line (and `by`): trips n_programmed, n_justified, n_run (on time, late or early,
    not justified), n_suppressed, n_late, n_early, n_partial, n_broken_down, and km_programmed,
    km_run (km; run capped at the programmed distance of each trip, as the ICV does)."""
    flags = compute_trip_flags(outcomes).with_columns(
        pl.col("service_date").dt.truncate("1mo").alias("month")
    )
    aggs = [pl.col(c).sum().cast(pl.Int64) for c in OPERATION_COLUMNS] + [
        pl.col("km_programmed").sum(),
        pl.col("km_run").sum(),
    ]
    keys = ["route_id", *by]
    if flags.height == 0:
        return flags.group_by(keys).agg(aggs).clear()
    return flags.group_by(keys).agg(aggs).sort(keys)


def compute_passengers_by_class(taps: pl.DataFrame, by: Sequence[str] = ()) -> pl.DataFrame:
    """Per line (and `by`): n_<class> taps for every fare class of `FARE_CLASSES` (classes
    the list does not know count as 'other') and n_passengers (all taps). Taps without a
    line are under route_id '?'."""
    cls = (
        pl.when(pl.col("fare_class").is_in(FARE_CLASSES))
        .then("fare_class")
        .otherwise(pl.lit("other"))
    )
    keys = ["route_id", *by]
    return (
        taps.with_columns(pl.col("route_id").fill_null(UNKNOWN), cls.alias("_class"))
        .group_by(keys)
        .agg(
            *[(pl.col("_class") == c).sum().cast(pl.Int64).alias(f"n_{c}") for c in FARE_CLASSES],
            pl.len().cast(pl.Int64).alias("n_passengers"),
        )
        .sort(keys)
    )


def compute_line_ipk(
    taps: pl.DataFrame,
    outcomes: pl.DataFrame,
    scopes: pl.DataFrame,
    profile: Profile,
    by: Sequence[str] = (),
) -> pl.DataFrame:
    """Per line (and `by`, e.g. 'month'): n_passengers, equivalent_passengers, km_run,
    ipk (passengers per km run) and ipk_equivalent (equivalent passengers per km run,
    CGS art. 15-16), computed by `analytics.indices.ridership` as the indices are."""
    flags = compute_trip_flags(outcomes).with_columns(
        pl.col("service_date").dt.truncate("1mo").alias("month")
    )
    km = attach_scopes(flags, scopes).select("route_id", "operator_id", "lot_id", "km_run", *by)
    matched = match_integrations(attach_scopes(taps, scopes), profile)
    wide = compute_ridership(matched, km, LINE_LEVEL, by)
    per_km = pl.when(pl.col("km_run") > 0)
    return (
        wide.rename({"scope_id": "route_id"})
        .select(
            "route_id",
            *by,
            pl.col("n_passengers").cast(pl.Int64),
            "equivalent_passengers",
            "km_run",
            per_km.then(pl.col("n_passengers") / pl.col("km_run")).alias("ipk"),
            per_km.then(pl.col("equivalent_passengers") / pl.col("km_run")).alias("ipk_equivalent"),
        )
        .sort("route_id", *by)
    )


def attach_line_names(df: pl.DataFrame, routes: pl.DataFrame, scopes: pl.DataFrame) -> pl.DataFrame:
    """`df` (with route_id) plus line_name ('10 - Troncal ...') and its operator_id, lot_id."""
    names = routes.select(
        "route_id",
        pl.concat_str(
            [pl.col("route_short_name").fill_null(""), pl.col("route_long_name").fill_null("")],
            separator=" - ",
        )
        .str.strip_chars(" -")
        .alias("line_name"),
    )
    return attach_scopes(df.join(names, on="route_id", how="left"), scopes).with_columns(
        pl.col("line_name").fill_null(pl.col("route_id"))
    )
