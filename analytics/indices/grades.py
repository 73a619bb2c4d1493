"""IQS, annual score, grade A-E, renewal eligibility and the cassação watch.

- IQS (BG art. 57-II): per operator and year, each profile dimension's mean score over the
  year's survey rows (any period label starting with the year: '2026', '2026-S1', '2026-03'),
  rescaled from `quality.iqs_score_scale` to 0-100, then the mean of the dimensions. A lot's
  and the system's IQS is the mean of their operators' IQS.
- annual score = `annual_weight_icv` × ICV + `annual_weight_iqs` × IQS; without a survey in
  the year the score is the ICV alone (the IQS weight is not charged as zero).
- grade: the best letter whose `grade_min_points` the score reaches; E below D.
- quality goals met (BG art. 32-I, 38-I; Anexo I LXI, LXXXV, LXXXVIII): grade better than E
  and km efficiency of the year not below `km.efficiency_min_ratio` (CGS art. 2, 20-II).
- renewal eligible: goals met this year and in every earlier graded year of the scope.
- cassação watch (BG art. 72-VII): E for `cassacao_consecutive_e_years` years in a row, or
  `cassacao_total_e_years` in total. Years before the data come from a history CSV.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analytics.indices.scopes import SCOPE_NAMES, SYSTEM_ID
from core.errors import InputError, where
from core.profile import Profile

GRADES = ("A", "B", "C", "D", "E")
HISTORY_COLUMNS = ("scope", "scope_id", "year", "grade")


def compute_iqs(surveys: pl.DataFrame, year: int, profile: Profile) -> pl.DataFrame:
    """IQS per operator for `year`: operator_id, iqs_score (0-100), n_dimensions (of the
    profile's dimensions that had a score). Dimensions outside the profile are ignored."""
    dims = profile.quality.iqs_dimensions.value
    lo, hi = profile.quality.iqs_score_scale.value
    return (
        surveys.filter(
            pl.col("period").str.starts_with(f"{year:04d}") & pl.col("dimension").is_in(dims)
        )
        .with_columns(((pl.col("score") - lo) / (hi - lo) * 100.0).alias("score_100"))
        .group_by("operator_id", "dimension")
        .agg(pl.col("score_100").mean())
        .group_by("operator_id")
        .agg(
            pl.col("score_100").mean().alias("iqs_score"),
            pl.len().cast(pl.Int32).alias("n_dimensions"),
        )
        .sort("operator_id")
    )


def compute_iqs_by_scope(iqs: pl.DataFrame, line_scopes: pl.DataFrame) -> pl.DataFrame:
    """IQS at operator, lot and system scope: scope, scope_id, iqs_score."""
    op_lot = line_scopes.select("operator_id", "lot_id").unique()
    by_op = iqs.select(
        pl.lit("operator").alias("scope"), pl.col("operator_id").alias("scope_id"), "iqs_score"
    )
    by_lot = (
        iqs.join(op_lot, on="operator_id", how="inner")
        .group_by("lot_id")
        .agg(pl.col("iqs_score").mean())
        .select(pl.lit("lot").alias("scope"), pl.col("lot_id").alias("scope_id"), "iqs_score")
    )
    system = iqs.select(
        pl.lit("system").alias("scope"),
        pl.lit(SYSTEM_ID).alias("scope_id"),
        pl.col("iqs_score").mean(),
    ).filter(pl.col("iqs_score").is_not_null())
    return pl.concat([system, by_op, by_lot])


def grade_expr(score: pl.Expr, profile: Profile) -> pl.Expr:
    """The grade letter of a score (points 0-100) under the profile's minimum points."""
    mins = profile.quality.grade_min_points.value
    expr: pl.Expr = pl.lit("E")
    # build from the lowest band up so the best letter reached wins
    for letter in ("D", "C", "B", "A"):
        expr = pl.when(score >= mins[letter]).then(pl.lit(letter)).otherwise(expr)
    return expr


def compute_year_scores(year_scores: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """scope, scope_id, year, icv_score, iqs_score, km_efficiency -> plus annual_score, grade."""
    q = profile.quality
    annual = (
        pl.when(pl.col("iqs_score").is_null())
        .then(pl.col("icv_score"))
        .otherwise(
            q.annual_weight_icv.value * pl.col("icv_score")
            + q.annual_weight_iqs.value * pl.col("iqs_score")
        )
    )
    return year_scores.with_columns(annual.alias("annual_score")).with_columns(
        grade_expr(pl.col("annual_score"), profile).alias("grade")
    )


def compute_annual_grades(
    year_scores: pl.DataFrame, history: pl.DataFrame | None, profile: Profile
) -> pl.DataFrame:
    """The `annual_grades` rows (without the derived version columns).

    `year_scores`: scope, scope_id, year, icv_score, iqs_score, km_efficiency (computed years,
    graded here). `history`: scope, scope_id, year, grade (earlier years, from the CSV); a
    computed year replaces a history row of the same year.
    """
    q = profile.quality
    minimum = profile.km.efficiency_min_ratio.value
    computed = compute_year_scores(year_scores, profile).with_columns(
        pl.col("year").cast(pl.Int32), pl.lit(False).alias("is_history")
    )
    parts = [computed]
    if history is not None and history.height:
        hist = history.with_columns(
            pl.col("year").cast(pl.Int32), pl.lit(True).alias("is_history")
        ).join(
            computed.select("scope", "scope_id", "year"),
            on=["scope", "scope_id", "year"],
            how="anti",
        )
        parts.append(hist)
    rows = pl.concat(parts, how="diagonal_relaxed").sort("scope", "scope_id", "year")
    is_e = pl.col("grade") == "E"
    km_ok = pl.col("km_efficiency") >= minimum
    goal = (~is_e) & km_ok.fill_null(True)
    keys = ["scope", "scope_id"]
    out = rows.with_columns(
        km_ok.alias("is_km_ok"),
        goal.alias("is_quality_goal_met"),
        # a new run starts when E-ness changes or a year is missing between two rows
        (
            (is_e != is_e.shift(1).over(keys)).fill_null(True)
            | ((pl.col("year") - pl.col("year").shift(1).over(keys)) != 1).fill_null(True)
        )
        .cast(pl.Int32)
        .cum_sum()
        .over(keys)
        .alias("_run"),
    ).with_columns(
        pl.when(is_e)
        .then(pl.col("year").cum_count().over([*keys, "_run"]))
        .otherwise(0)
        .cast(pl.Int32)
        .alias("n_e_consecutive"),
        is_e.cast(pl.Int32).cum_sum().over(keys).cast(pl.Int32).alias("n_e_total"),
        (~pl.col("is_quality_goal_met"))
        .cast(pl.Int32)
        .cum_sum()
        .over(keys)
        .cast(pl.Int32)
        .alias("n_goal_missed_total"),
        pl.col("is_quality_goal_met")
        .cast(pl.Int32)
        .cum_min()
        .over(keys)
        .cast(pl.Boolean)
        .alias("is_renewal_eligible"),
    )
    return out.with_columns(
        (
            (pl.col("n_e_consecutive") >= q.cassacao_consecutive_e_years.value)
            | (pl.col("n_e_total") >= q.cassacao_total_e_years.value)
        ).alias("is_cassacao_watch")
    ).drop("_run")


def read_grade_history(path: str | Path) -> pl.DataFrame:
    """The grades of years before the data (CSV: scope, scope_id, year, grade).

    scope is 'operator' or 'lot' (or 'system'); grade a letter A-E. Errors name the line and
    field.
    """
    path = Path(path)
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.ComputeError, pl.exceptions.NoDataError) as exc:
        raise InputError(f"cannot read the grade history CSV: {exc}", where=str(path)) from exc
    missing = [c for c in HISTORY_COLUMNS if c not in raw.columns]
    if missing:
        raise InputError(
            f"grade history lacks columns {missing}; expected {', '.join(HISTORY_COLUMNS)}",
            where=str(path),
            hint="header line: scope,scope_id,year,grade (e.g. operator,O1,2024,E)",
        )
    frame = raw.with_row_index("line", offset=2).with_columns(
        pl.col("scope").str.strip_chars().str.to_lowercase(),
        pl.col("scope_id").str.strip_chars(),
        pl.col("year").str.strip_chars().cast(pl.Int32, strict=False).alias("year_int"),
        pl.col("grade").str.strip_chars().str.to_uppercase(),
    )
    checks = (
        ("scope", ~pl.col("scope").is_in(SCOPE_NAMES), f"expected one of {', '.join(SCOPE_NAMES)}"),
        ("scope_id", pl.col("scope_id").is_null() | (pl.col("scope_id") == ""), "expected an id"),
        ("year", pl.col("year_int").is_null(), "expected a year like 2024"),
        ("grade", ~pl.col("grade").is_in(GRADES), "expected a grade A, B, C, D or E"),
    )
    for field, bad, expected in checks:
        rows = frame.filter(bad.fill_null(True))
        if rows.height:
            first = rows.row(0, named=True)
            raise InputError(
                f"invalid {field} {first[field]!r} in the grade history: {expected}",
                where=where(path, int(first["line"]), field),
            )
    return frame.select("scope", "scope_id", pl.col("year_int").alias("year"), "grade")
