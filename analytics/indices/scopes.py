"""Scopes of the indices (system, operator, lot, line) and the long `indicators` format.

Operator and lot of a line — the rule (GTFS has no lot, and agencies are often missing):

1. the operator is the route's `agency_id` in `gtfs_routes` when it names an operator of the
   fleet register;
2. otherwise, the operator whose registered vehicles ran most of the line's trips;
3. the lot is the lot most of the vehicles of that operator that ran the line belong to, else
   the most common lot of that operator's register;
4. a line with neither stays in the system scope only ('?' operator / lot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from core.periods import Period

SYSTEM_ID = "all"
UNKNOWN = "?"
LEVELS: tuple[tuple[str, str | None], ...] = (
    ("system", None),
    ("operator", "operator_id"),
    ("lot", "lot_id"),
    ("line", "route_id"),
)
SCOPE_NAMES = tuple(name for name, _ in LEVELS)


def compute_line_scopes(
    routes: pl.DataFrame, outcomes: pl.DataFrame, vehicles: pl.DataFrame
) -> pl.DataFrame:
    """Operator and lot of every line (rule in the module docstring).

    `routes`: route_id, agency_id (gtfs_routes); `outcomes`: route_id, vehicle_id
    (trip_outcomes); `vehicles`: vehicle_id, operator_id, lot_id (the register).
    Returns route_id, operator_id, lot_id (one row per line of `routes` or `outcomes`).
    """
    reg = vehicles.select("vehicle_id", "operator_id", "lot_id")
    operators = reg["operator_id"].unique()
    ran = (
        outcomes.filter(pl.col("vehicle_id").is_not_null())
        .select("route_id", "vehicle_id")
        .join(reg, on="vehicle_id", how="inner")
    )
    by_agency = (
        routes.select("route_id", pl.col("agency_id").alias("operator_id"))
        .filter(pl.col("operator_id").is_in(operators.implode()))
        .unique("route_id", keep="first")
    )
    by_vehicles = (
        ran.group_by("route_id", "operator_id")
        .len()
        .sort(["route_id", "len", "operator_id"], descending=[False, True, False])
        .unique("route_id", keep="first")
        .select("route_id", "operator_id")
    )
    all_routes = pl.concat(
        [routes.select("route_id"), outcomes.select("route_id")], how="vertical"
    ).unique()
    line_op = (
        all_routes.join(by_agency, on="route_id", how="left")
        .join(by_vehicles.rename({"operator_id": "op_vehicles"}), on="route_id", how="left")
        .select("route_id", pl.coalesce("operator_id", "op_vehicles").alias("operator_id"))
    )
    lot_ran = (
        ran.join(line_op, on=["route_id", "operator_id"], how="inner")
        .filter(pl.col("lot_id").is_not_null())
        .group_by("route_id", "lot_id")
        .len()
        .sort(["route_id", "len", "lot_id"], descending=[False, True, False])
        .unique("route_id", keep="first")
        .select("route_id", "lot_id")
    )
    lot_reg = (
        reg.filter(pl.col("lot_id").is_not_null())
        .group_by("operator_id", "lot_id")
        .len()
        .sort(["operator_id", "len", "lot_id"], descending=[False, True, False])
        .unique("operator_id", keep="first")
        .select("operator_id", pl.col("lot_id").alias("lot_reg"))
    )
    return (
        line_op.join(lot_ran, on="route_id", how="left")
        .join(lot_reg, on="operator_id", how="left")
        .select(
            "route_id",
            pl.col("operator_id").fill_null(UNKNOWN),
            pl.coalesce("lot_id", "lot_reg").fill_null(UNKNOWN).alias("lot_id"),
        )
        .sort("route_id")
    )


def attach_scopes(df: pl.DataFrame, line_scopes: pl.DataFrame) -> pl.DataFrame:
    """`df` (with route_id) plus the operator_id and lot_id of its line ('?' when unknown)."""
    drop = [c for c in ("operator_id", "lot_id") if c in df.columns]
    return (
        df.drop(drop)
        .join(line_scopes, on="route_id", how="left")
        .with_columns(pl.col("operator_id").fill_null(UNKNOWN), pl.col("lot_id").fill_null(UNKNOWN))
    )


def compute_by_scope(
    df: pl.DataFrame,
    aggs: Sequence[pl.Expr],
    levels: Sequence[tuple[str, str | None]] = LEVELS,
    by: Sequence[str] = (),
) -> pl.DataFrame:
    """Aggregate `df` at every scope level: scope, scope_id, *by, then one column per agg.

    `by` adds grouping columns kept in every level (e.g. a month). Rows whose scope key is null
    are left out of that level (they still count in the system).
    """
    parts = []
    for scope, key in levels:
        if key is None:
            part = (
                df.group_by(list(by)).agg(aggs)
                if by
                else df.select(aggs)
                if df.height
                else df.select(aggs).clear()
            )
            part = part.with_columns(pl.lit(SYSTEM_ID).alias("scope_id"))
        else:
            part = (
                df.filter(pl.col(key).is_not_null())
                .group_by([key, *by])
                .agg(aggs)
                .rename({key: "scope_id"})
            )
        parts.append(
            part.with_columns(pl.lit(scope).alias("scope"), pl.col("scope_id").cast(pl.String))
        )
    out = pl.concat(parts, how="diagonal_relaxed")
    return out.select(
        "scope", "scope_id", *by, *[c for c in out.columns if c not in ("scope", "scope_id", *by)]
    )


@dataclass(frozen=True)
class IndicatorSpec:
    """How one indicator is read from a wide per-scope frame.

    value = numerator ÷ denominator × factor (numerator alone when `denominator` is None).
    """

    indicator: str
    numerator: str
    denominator: str | None
    unit: str
    source: str
    factor: float = 1.0


def to_indicator_rows(
    wide: pl.DataFrame, specs: Sequence[IndicatorSpec], period: Period
) -> pl.DataFrame:
    """Long rows (scope, scope_id, period..., indicator, numerator, denominator, value, unit,
    source) from a wide frame with scope, scope_id and the columns the specs name.

    A ratio with a zero or null denominator has a null value (undefined, not zero).
    """
    parts = []
    for spec in specs:
        num = pl.col(spec.numerator).cast(pl.Float64)
        if spec.denominator is None:
            den = pl.lit(None, dtype=pl.Float64)
            value = num
        else:
            den = pl.col(spec.denominator).cast(pl.Float64)
            value = pl.when(den.is_not_null() & (den != 0)).then(num / den * spec.factor)
        parts.append(
            wide.select(
                "scope",
                "scope_id",
                pl.lit(spec.indicator).alias("indicator"),
                num.alias("numerator"),
                den.alias("denominator"),
                value.alias("value"),
                pl.lit(spec.unit).alias("unit"),
                pl.lit(spec.source).alias("source"),
            )
        )
    if not parts:
        return pl.DataFrame()
    return pl.concat(parts).with_columns(
        pl.lit(period.label).alias("period"),
        pl.lit(period.start).alias("period_start"),
        pl.lit(period.end).alias("period_end"),
    )
