"""IQS, annual score, grade A-E, renewal eligibility and the cassação watch.

- IQS (BG art. 57-II): per operator and year, each profile dimension's mean score over the
  year's survey rows (any period label starting with the year: '2026', '2026-S1', '2026-03'),
  rescaled from `quality.iqs_score_scale` to 0-100, then the mean of the dimensions. A survey
  that scores fewer than `quality.iqs_min_dimensions` dimensions is incomplete: it does not
  enter the annual score (`is_iqs_complete` false). A lot's and the system's IQS is the mean
  of their operators' complete IQS.
- annual score = `annual_weight_icv` × ICV + `annual_weight_iqs` × IQS; a year without a
  complete survey follows `quality.annual_without_iqs`: "icv_only" scores the ICV alone (the
  IQS weight is not charged as zero, and the dossier prints that formula), "no_grade" leaves
  the year ungraded (no row).
- grade: the best letter whose `grade_min_points` the score reaches; E below D.
- quality goal of a year: the per-year part of each *deciding* renewal criterion of the
  profile (verdicts.renewal): "quality_goals" asks a grade better than E (BG art. 32-I, 72-VII),
  "km_efficiency" asks km efficiency not below `km.efficiency_min_ratio` (CGS art. 2 p.ú. a).
  A km criterion that does not decide (BG: not law) is shown (`is_km_ok`) but is not a goal.
- renewal eligible (the criteria Pontual computes from grades; the full list with those the
  city records is analytics.indices.verdicts): "quality_goals" is met while the scope has not
  reached the cassação count of E years (one or two missed years are fined, BG Anexo I LXI,
  LXXXV, not disqualifying); "km_efficiency" while every year so far is at the minimum.
- cassação watch (BG art. 72-VII), operators only (the concessionaire, not a lot or the
  system) and only where the profile has the cassação keys: E for `cassacao_consecutive_e_years`
  graded years in a row, or `cassacao_total_e_years` in total. A year with no grade between two
  E years does not break the run (data gaps must not protect the operator); the verdict list
  names such gap years. Years before the data come from a history CSV.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analytics.indices.scopes import SCOPE_NAMES, SYSTEM_ID
from core.errors import InputError, where
from core.profile import Profile
from core.pt_br import to_plain
from core.texts import N_
from core.texts import gettext as _

GRADES = ("A", "B", "C", "D", "E")
HISTORY_COLUMNS = ("scope", "scope_id", "year", "grade")


def compute_iqs(surveys: pl.DataFrame, year: int, profile: Profile) -> pl.DataFrame:
    """IQS per operator for `year`: operator_id, iqs_score (0-100), n_dimensions (of the
    profile's dimensions that had a score), is_iqs_complete (n_dimensions reaches
    `quality.iqs_min_dimensions`). Dimensions outside the profile are ignored."""
    dims = profile.quality.iqs_dimensions.value
    lo, hi = profile.quality.iqs_score_scale.value
    need = profile.quality.iqs_min_dimensions.value
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
        .with_columns((pl.col("n_dimensions") >= need).alias("is_iqs_complete"))
        .sort("operator_id")
    )


def compute_iqs_by_scope(iqs: pl.DataFrame, line_scopes: pl.DataFrame) -> pl.DataFrame:
    """IQS at operator, lot and system scope: scope, scope_id, iqs_score. Incomplete surveys
    (`is_iqs_complete` false) are left out: that year has no IQS for the operator."""
    if "is_iqs_complete" in iqs.columns:
        iqs = iqs.filter(pl.col("is_iqs_complete"))
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
    """scope, scope_id, year, icv_score, iqs_score, km_efficiency -> plus annual_score, grade.

    A year without IQS follows `quality.annual_without_iqs` ("no_grade" drops it)."""
    q = profile.quality
    if q.annual_without_iqs.value == "no_grade":
        year_scores = year_scores.filter(pl.col("iqs_score").is_not_null())
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


def deciding_rules(profile: Profile) -> set[str]:
    """The rules of the profile's renewal criteria that decide the verdict on their own."""
    return {c.rule for c in profile.verdicts.renewal.criteria if c.decides}


def e_run_expr(keys: list[str]) -> pl.Expr:
    """Grade-E years in a row ending on each row, over graded rows sorted by year: only a
    non-E grade ends a run, a missing year between two rows does not."""
    is_e = pl.col("grade") == "E"
    run = (is_e != is_e.shift(1).over(keys)).fill_null(True).cast(pl.Int32).cum_sum().over(keys)
    return (
        pl.when(is_e)
        .then(pl.col("year").cum_count().over([*keys, run]))
        .otherwise(0)
        .cast(pl.Int32)
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
    rules = deciding_rules(profile)
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
    goal: pl.Expr = pl.lit(True)
    if "quality_goals" in rules:
        goal = goal & ~is_e
    if "km_efficiency" in rules:
        # a year without km data is not evaluated, not missed
        goal = goal & km_ok.fill_null(True)
    keys = ["scope", "scope_id"]
    out = rows.with_columns(
        km_ok.alias("is_km_ok"),
        goal.alias("is_quality_goal_met"),
        e_run_expr(keys).alias("n_e_consecutive"),
        is_e.cast(pl.Int32).cum_sum().over(keys).cast(pl.Int32).alias("n_e_total"),
    ).with_columns(
        (~pl.col("is_quality_goal_met"))
        .cast(pl.Int32)
        .cum_sum()
        .over(keys)
        .cast(pl.Int32)
        .alias("n_goal_missed_total"),
    )
    consecutive, total = q.cassacao_consecutive_e_years, q.cassacao_total_e_years
    if consecutive is not None and total is not None:
        reached = (pl.col("n_e_consecutive") >= consecutive.value) | (
            pl.col("n_e_total") >= total.value
        )
    else:
        reached = pl.lit(False)
    eligible: pl.Expr = pl.lit(True)
    if "quality_goals" in rules:
        eligible = eligible & ~reached.cast(pl.Int32).cum_max().over(keys).cast(pl.Boolean)
    if "km_efficiency" in rules:
        eligible = eligible & km_ok.fill_null(True).cast(pl.Int32).cum_min().over(keys).cast(
            pl.Boolean
        )
    return out.with_columns(
        eligible.alias("is_renewal_eligible"),
        (reached & (pl.col("scope") == "operator")).alias("is_cassacao_watch"),
    )


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


BREAKDOWN_SCHEMA = {
    "part": pl.String,
    "measure": pl.Float64,
    "points": pl.Float64,
    "weight": pl.Float64,
    "contribution": pl.Float64,
    "rule": pl.String,
    "is_law": pl.Boolean,
}


def score_formula(profile: Profile, has_iqs: bool) -> str:
    """The annual-score formula actually applied (from the catalogue), with the rule for a
    year without a complete survey: the dossier prints this, never another formula."""
    q = profile.quality

    if has_iqs:
        return _(
            "Annual score = {w_icv} × ICV + {w_iqs} × IQS",
            w_icv=to_plain(q.annual_weight_icv.value),
            w_iqs=to_plain(q.annual_weight_iqs.value),
        )
    if q.annual_without_iqs.value == "icv_only":
        return _(
            "Annual score = ICV (no complete IQS survey in the year: {n} dimensions required; "
            "the IQS weight is not applied)",
            n=q.iqs_min_dimensions.value,
        )
    return _("No annual score: there was no complete IQS survey in the year")


def build_score_breakdown(
    year_values: dict[str, float | None], grade: dict[str, object], profile: Profile
) -> pl.DataFrame:
    """The points behind an annual grade, part by part.

    `year_values`: the scope's year indicators by id (icv_fulfilment, icv_punctuality,
    breakdowns_per_10000_km, icv_score_fulfilment, icv_score_punctuality, icv_score_breakdowns);
    `grade`: its annual_grades row. Rows: part (from the catalogue), measure (the ratio or rate measured),
    points (0-100), weight (in the ICV for its parts, in the annual score for ICV and IQS),
    contribution (weight × points), rule (band or formula, from the catalogue, with article), is_law (false
    while the band or weight is a default awaiting the decree, BG art. 58).
    """
    icv, q = profile.icv, profile.quality
    has_iqs = grade.get("iqs_score") is not None

    def band(b: list[float], unit: str) -> str:
        return _(
            "{low}{unit} = 0 points, {high}{unit} = 100 points",
            low=to_plain(b[0]),
            high=to_plain(b[1]),
            unit=unit,
        )

    def f(v: object) -> float | None:
        return float(v) if isinstance(v, int | float) else None

    def mul(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a * b

    parts = (
        (
            N_("Trip fulfilment (ICV)"),
            "icv_fulfilment",
            "icv_score_fulfilment",
            icv.weight_fulfilment,
            icv.fulfilment_band,
            100,
            " %",
            "BG art. 57-I-a",
        ),
        (
            N_("Punctuality (ICV)"),
            "icv_punctuality",
            "icv_score_punctuality",
            icv.weight_punctuality,
            icv.punctuality_band,
            100,
            " %",
            "BG art. 57-I-b",
        ),
        (
            N_("Breakdowns per 10,000 km (ICV)"),
            "breakdowns_per_10000_km",
            "icv_score_breakdowns",
            icv.weight_breakdowns,
            icv.breakdowns_band_per_10000_km,
            1,
            "",
            "BG art. 57-I-c",
        ),
    )
    rows: list[dict[str, object]] = []
    for label, measure, points, weight, b, scale, unit, art in parts:
        pts = f(year_values.get(points))
        rows.append(
            {
                "part": _(label),
                "measure": f(year_values.get(measure)),
                "points": pts,
                "weight": weight.value,
                "contribution": mul(pts, weight.value),
                "rule": _(
                    "{article}; band {band}",
                    article=art,
                    band=band([x * scale for x in b.value], unit),
                ),
                "is_law": not (weight.default or b.default),
            }
        )
    w_icv = q.annual_weight_icv.value if has_iqs else 1.0
    w_iqs = q.annual_weight_iqs.value if has_iqs else None
    icv_pts, iqs_pts = f(grade.get("icv_score")), f(grade.get("iqs_score"))
    rows.append(
        {
            "part": _("ICV (score)"),
            "measure": None,
            "points": icv_pts,
            "weight": w_icv,
            "contribution": mul(icv_pts, w_icv),
            "rule": _("BG art. 57-I, 58: weighted sum of the three parts"),
            "is_law": not q.annual_weight_icv.default,
        }
    )
    rows.append(
        {
            "part": _("IQS (survey)"),
            "measure": None,
            "points": iqs_pts,
            "weight": w_iqs,
            "contribution": mul(iqs_pts, w_iqs),
            "rule": "BG art. 57-II, §3"
            if has_iqs
            else _("BG art. 57-II: no complete survey in the year, not part of the score"),
            "is_law": not q.annual_weight_iqs.default,
        }
    )
    mins = q.grade_min_points.value
    rows.append(
        {
            "part": _("Annual score — grade {grade}", grade=grade.get("grade", "—")),
            "measure": None,
            "points": f(grade.get("annual_score")),
            "weight": None,
            "contribution": None,
            "rule": score_formula(profile, has_iqs)
            + "; "
            + _(
                "grades A ≥ {a}, B ≥ {b}, C ≥ {c}, D ≥ {d}, E below",
                **{k.lower(): f"{mins[k]:g}" for k in ("A", "B", "C", "D")},
            )
            + (
                ""
                if not q.grade_min_points.default
                else " " + _("(default until the decree, BG art. 58)")
            ),
            "is_law": not q.grade_min_points.default,
        }
    )
    return pl.DataFrame(rows, schema=BREAKDOWN_SCHEMA)
