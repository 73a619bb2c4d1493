"""Per-line operation and ridership figures shared by the semester and monthly reports.

Counts follow the indices exactly (`analytics.indices.icv.compute_trip_flags`, `analytics.indices.ridership`),
so a report's line totals equal the `indicators` rows of the same period.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from analytics.indices.icv import compute_trip_flags
from analytics.indices.ridership import compute_ridership, match_integrations
from analytics.indices.scopes import UNKNOWN, attach_scopes, compute_line_scopes
from core.periods import Period
from core.profile import Profile
from core.store import Store
from core.tables.observed import FARE_CLASSES
from core.texts import gettext as _
from dashboard.queries.filters import read_routes
from dashboard.queries.fleet import read_register
from dashboard.queries.lines import read_outcomes
from dashboard.queries.reports import read_taps
from dashboard.reports.model import Col

LINE_LEVEL = (("line", "route_id"),)


def line_columns() -> tuple[Col, ...]:
    """The first columns of the per-line table of the semester and monthly reports."""
    return (
        Col("route_id", _("Line"), "code"),
        Col("line_name", _("Name")),
        Col("operator_id", _("Operator"), "code"),
        Col("n_passengers", _("Passengers"), "integer"),
        Col("n_programmed", _("Scheduled trips"), "integer"),
        Col("n_run", _("Trips run"), "integer"),
        Col("km_programmed", _("Scheduled km"), "number"),
        Col("km_run", _("Km run"), "number"),
    )


LINE_COUNTS = ("n_passengers", "n_programmed", "n_run", "km_programmed", "km_run")
"""What a line without trips or taps counts as 0 in that table."""


@dataclass(frozen=True)
class OperationInputs:
    """What the semester and monthly reports read from the store for a period."""

    outcomes: pl.DataFrame
    taps: pl.DataFrame
    routes: pl.DataFrame
    vehicles: pl.DataFrame
    scopes: pl.DataFrame
    """Operator and lot of every line (`analytics.indices.scopes.compute_line_scopes`)."""

    def hashed(self) -> dict[str, pl.DataFrame]:
        """The frames behind the report's reproducibility hash, by table name."""
        return {
            "trip_outcomes": self.outcomes,
            "fare_transactions": self.taps,
            "gtfs_routes": self.routes,
            "vehicles": self.vehicles,
        }


def read_operation_inputs(store: Store, period: Period, profile: Profile) -> OperationInputs:
    """Trip outcomes and taps of the period's (local) days, the lines, the fleet register and
    the scopes of the lines, through the dashboard's readers."""
    outcomes = read_outcomes(store, period.start, period.end)
    routes, vehicles = read_routes(store), read_register(store)
    return OperationInputs(
        outcomes=outcomes,
        taps=read_taps(store, period, profile.general.timezone.value),
        routes=routes,
        vehicles=vehicles,
        scopes=compute_line_scopes(routes, outcomes, vehicles),
    )


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


def build_line_table(
    operation: pl.DataFrame, per_line: pl.DataFrame, routes: pl.DataFrame, scopes: pl.DataFrame
) -> pl.DataFrame:
    """`operation` (per line) with the `per_line` figures (taps, IPK...) of every line either
    has, the line's name, operator and lot (`attach_line_names`), `LINE_COUNTS` null -> 0, by
    line."""
    return (
        attach_line_names(
            operation.join(per_line, on="route_id", how="full", coalesce=True), routes, scopes
        )
        .with_columns([pl.col(c).fill_null(0) for c in LINE_COUNTS])
        .sort("route_id")
    )
