"""The month-by-month and per-line tables of the annual dossier, computed from frames the
dossier reads from the store.

Reads `indicators` (month rows), year surveys, trip crowding and the hourly crowding summary,
scheduled and observed trips; returns the ICV/km table by month, the IQS by survey dimension,
crowding compliance per line and data completeness per month (each function's docstring names
its columns). Pure frame-in/frame-out: no store access.
"""

from __future__ import annotations

import polars as pl

from core.profile import Profile


def compute_month_table(
    indicators: pl.DataFrame, year: int, names: tuple[str, ...]
) -> pl.DataFrame:
    """One row per month of `year` that has indicators: month (Date), then one column per
    indicator id of `names` (its value; null when absent)."""
    monthly = indicators.filter(pl.col("period").str.len_chars() == 7)
    wide = (
        monthly.filter(pl.col("indicator").is_in(names))
        .pivot(on="indicator", index="period", values="value")
        .sort("period")
    )
    for name in names:
        if name not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(name))
    return wide.select(
        (pl.col("period") + "-01").str.to_date().alias("month"), *[pl.col(n) for n in names]
    )


def compute_iqs_dimensions(
    surveys: pl.DataFrame, operators: list[str], year: int, profile: Profile
) -> pl.DataFrame:
    """Per profile IQS dimension: score_100 (mean score of the year's surveys, rescaled to
    0-100 as the IQS is), n_surveys and n_respondents, over the scope's operators."""
    q = profile.quality
    lo, hi = q.iqs_score_scale.value
    dims = pl.DataFrame({"dimension": q.iqs_dimensions.value})
    got = (
        surveys.filter(
            pl.col("period").str.starts_with(f"{year:04d}")
            & pl.col("operator_id").is_in(operators)
            & pl.col("dimension").is_in(q.iqs_dimensions.value)
        )
        .group_by("dimension")
        .agg(
            ((pl.col("score") - lo) / (hi - lo) * 100.0).mean().alias("score_100"),
            pl.len().cast(pl.Int64).alias("n_surveys"),
            pl.col("n_respondents").sum().cast(pl.Int64).alias("n_respondents"),
        )
    )
    return dims.join(got, on="dimension", how="left", maintain_order="left")


def compute_crowding_by_line(
    trips: pl.DataFrame, summary: pl.DataFrame, lines: pl.DataFrame
) -> pl.DataFrame:
    """Per line of the scope: n_runs (runs with a load profile), n_over_limit, over_limit_share
    (0-1), max_standees_per_m2, n_hours_action (line-hours whose share over the limit asks for
    more trips, art. 59 §1) and extra_trips_needed (sum)."""
    runs = (
        trips.join(lines.select("route_id"), on="route_id", how="semi")
        .group_by("route_id")
        .agg(
            pl.len().cast(pl.Int64).alias("n_runs"),
            pl.col("is_over_limit").fill_null(False).sum().cast(pl.Int64).alias("n_over_limit"),
            pl.col("max_standees_per_m2").max(),
        )
    )
    hours = (
        summary.join(lines.select("route_id"), on="route_id", how="semi")
        .group_by("route_id")
        .agg(
            pl.col("is_action_required").sum().cast(pl.Int64).alias("n_hours_action"),
            pl.col("extra_trips_needed").fill_null(0).sum().cast(pl.Int64),
        )
    )
    return (
        runs.join(hours, on="route_id", how="full", coalesce=True)
        .with_columns(
            pl.col("n_runs", "n_over_limit", "n_hours_action", "extra_trips_needed").fill_null(0),
        )
        .with_columns(
            pl.when(pl.col("n_runs") > 0)
            .then(pl.col("n_over_limit") / pl.col("n_runs"))
            .alias("over_limit_share")
        )
        .select(
            "route_id",
            "n_runs",
            "n_over_limit",
            "over_limit_share",
            "max_standees_per_m2",
            "n_hours_action",
            "extra_trips_needed",
        )
        .sort("route_id")
    )


def compute_completeness(
    scheduled: pl.DataFrame, observed: pl.DataFrame, lines: pl.DataFrame
) -> pl.DataFrame:
    """Per month: n_scheduled (scheduled_trips), n_with_outcome (trips the matching judged),
    n_with_gps (judged trips with at least one ping of a run behind them), share_judged and
    share_gps (0-1, of the scheduled trips), over the scope's lines."""
    keep = lines.select("route_id")
    sched = (
        scheduled.join(keep, on="route_id", how="semi")
        .group_by("month")
        .agg(pl.col("n_scheduled").sum())
    )
    obs = (
        observed.join(keep, on="route_id", how="semi")
        .group_by("month")
        .agg(pl.col("n_with_outcome").sum(), pl.col("n_with_gps").sum())
    )
    return (
        sched.join(obs, on="month", how="full", coalesce=True)
        .with_columns(
            pl.col("n_scheduled", "n_with_outcome", "n_with_gps").fill_null(0).cast(pl.Int64)
        )
        .with_columns(
            pl.when(pl.col("n_scheduled") > 0)
            .then(pl.col("n_with_outcome") / pl.col("n_scheduled"))
            .alias("share_judged"),
            pl.when(pl.col("n_scheduled") > 0)
            .then(pl.col("n_with_gps") / pl.col("n_scheduled"))
            .alias("share_gps"),
        )
        .sort("month")
    )
