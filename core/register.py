"""The fleet register in force on a day or over a period: the one way to read `vehicles`.

`vehicles` keeps every version of a vehicle (issue #17): a version is in force from its
`valid_from` (inclusive; null: since the vehicle was first registered) to its `valid_to`
(exclusive; null: still in force). Its inspections are a history of their own
(`vehicle_inspections`). A past period is judged on the versions and inspections then in force,
so every reader (matching, indices, crowding, live, dashboard, reports, cases, exports) goes
through `read_register` or, when it already holds the rows, the pure functions below:

- `to_register_over(versions, start, end)`: the versions in force on at least one day of
  [start, end] (a vehicle that changed operator mid-period has two rows);
- `to_register_on(versions, day)`: one row per vehicle, the version in force on `day`;
- `to_register_latest(versions)`: one row per vehicle, its latest version among those given
  (who owns a vehicle for a period's scopes: the owner at its end);
- `to_vehicle_days(versions, dates)`: one row per day and vehicle *in the fleet* that day (the
  version in force, entered -- `in_service_since` on or before the day, unknown entry counts
  as entered -- and not retired: `retired_on` after the day);
- `with_last_inspection(register, inspections, on)`: `last_inspection_on` as it stood on `on`.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.store import Store

HISTORY_COLUMNS = ("valid_from", "valid_to", "retired_on")


def with_history_columns(register: pl.DataFrame) -> pl.DataFrame:
    """`register` with the history columns it lacks (a register frame built without them, e.g.
    from a CSV: every row one version in force always, no vehicle retired) as null dates."""
    return register.with_columns(
        pl.lit(None, dtype=pl.Date).alias(c) for c in HISTORY_COLUMNS if c not in register.columns
    )


def in_force_expr(day: pl.Expr) -> pl.Expr:
    """True for a version in force on `day` (a Date expression or literal)."""
    return (pl.col("valid_from").is_null() | (pl.col("valid_from") <= day)) & (
        pl.col("valid_to").is_null() | (day < pl.col("valid_to"))
    )


def in_fleet_expr(day: pl.Expr) -> pl.Expr:
    """True for a vehicle in the fleet on `day`: entered (unknown entry counts as entered) and
    not yet retired."""
    return (pl.col("in_service_since").is_null() | (pl.col("in_service_since") <= day)) & (
        pl.col("retired_on").is_null() | (day < pl.col("retired_on"))
    )


def to_register_over(versions: pl.DataFrame, start: date, end: date) -> pl.DataFrame:
    """The versions in force on at least one day of [start, end]."""
    return with_history_columns(versions).filter(
        (pl.col("valid_from").is_null() | (pl.col("valid_from") <= end))
        & (pl.col("valid_to").is_null() | (pl.col("valid_to") > start))
    )


def to_register_on(versions: pl.DataFrame, day: date) -> pl.DataFrame:
    """One row per vehicle: the version in force on `day` (vehicles not yet registered that day
    are absent)."""
    return with_history_columns(versions).filter(in_force_expr(pl.lit(day)))


def to_register_latest(versions: pl.DataFrame) -> pl.DataFrame:
    """One row per vehicle: its latest version among `versions` (null valid_from first)."""
    return (
        with_history_columns(versions)
        .sort("vehicle_id", "valid_from", nulls_last=False)
        .unique("vehicle_id", keep="last", maintain_order=True)
    )


def to_vehicle_days(versions: pl.DataFrame, dates: pl.DataFrame) -> pl.DataFrame:
    """`dates` (service_date) × the vehicles in the fleet that day, each with the version then
    in force: service_date plus the register's columns."""
    day = pl.col("service_date")
    return dates.join(with_history_columns(versions), how="cross").filter(
        in_force_expr(day) & in_fleet_expr(day)
    )


def with_last_inspection(
    register: pl.DataFrame, inspections: pl.DataFrame, on: date
) -> pl.DataFrame:
    """`register` with `last_inspection_on` as it stood on `on`: the latest inspection of the
    history on or before `on`, else the register's own date when not after `on`."""
    last = (
        inspections.filter(pl.col("inspected_on") <= on)
        .group_by("vehicle_id")
        .agg(pl.col("inspected_on").max().alias("_last"))
    )
    own = pl.when(pl.col("last_inspection_on") <= on).then(pl.col("last_inspection_on"))
    return (
        register.join(last, on="vehicle_id", how="left")
        .with_columns(pl.max_horizontal("_last", own).alias("last_inspection_on"))
        .drop("_last")
    )


def read_register(store: Store, start: date, end: date | None = None) -> pl.DataFrame:
    """The register in force over [start, end] (`end` defaults to `start`: one day, one row per
    vehicle), with `last_inspection_on` as of `end`. Columns: those of `vehicles`."""
    end = end or start
    versions = store.read(
        "vehicles",
        "(valid_from IS NULL OR valid_from <= ?) AND (valid_to IS NULL OR valid_to > ?)",
        [end, start],
    )
    inspections = store.read("vehicle_inspections", "inspected_on <= ?", [end])
    return with_last_inspection(versions, inspections, end).sort("vehicle_id", "valid_from")


def in_force_sql(alias: str, day_sql: str) -> str:
    """The SQL condition of `in_force_expr` for a join: version `alias` in force on `day_sql`."""
    return (
        f"({alias}.valid_from IS NULL OR {alias}.valid_from <= {day_sql}) AND "
        f"({alias}.valid_to IS NULL OR {day_sql} < {alias}.valid_to)"
    )
