"""Data coverage beside the headlines: how many programmed trips could be judged, and on what.

Unobserved is not failed: a `not_evaluated` trip (its operator's feed down, or its vehicle
dark: analytics.matching.outcomes) leaves every index — ICV, km efficiency, infractions,
grades — and is counted here instead, per scope:

- trips_not_evaluated: programmed trips without data to judge them;
- evaluated_share = (programmed − not evaluated) ÷ programmed: what the indices rest on; below
  the profile's `evidence.provisional_below_evaluated_share` a grade is PROVISÓRIO;
- gps_coverage_share = trips with GPS evidence (`gps`, `gps_gap_credited`) ÷ programmed:
  "GPS em 64 % das viagens programadas";
- trips_by_ticketing / trips_by_inspection: trips counted as run on those sources alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.indices.scopes import LEVELS, IndicatorSpec, compute_by_scope, to_indicator_rows
from core.periods import Period
from core.profile import Profile

NOT_EVALUATED = "not_evaluated"
GPS_CLASSES = ("gps", "gps_gap_credited")


def split_evaluated(outcomes: pl.DataFrame) -> pl.DataFrame:
    """The trips the indices are computed on: every outcome but `not_evaluated`."""
    return outcomes.filter(pl.col("outcome") != NOT_EVALUATED)


def compute_data_coverage(
    outcomes: pl.DataFrame, levels: Sequence[tuple[str, str | None]] = LEVELS
) -> pl.DataFrame:
    """Per scope (outcomes with operator_id, lot_id attached): scope, scope_id, n_programmed,
    n_not_evaluated, n_evaluated, n_gps, n_ticketing, n_inspection."""
    # outcomes matched before evidence classes existed: a trip with a vehicle had its GPS run
    cls = pl.coalesce(
        "evidence_class",
        pl.when(pl.col("vehicle_id").is_not_null()).then(pl.lit("gps")).otherwise(pl.lit("none")),
    )
    return compute_by_scope(
        outcomes,
        [
            pl.len().cast(pl.Int64).alias("n_programmed"),
            (pl.col("outcome") == NOT_EVALUATED).sum().cast(pl.Int64).alias("n_not_evaluated"),
            (pl.col("outcome") != NOT_EVALUATED).sum().cast(pl.Int64).alias("n_evaluated"),
            cls.is_in(GPS_CLASSES).sum().cast(pl.Int64).alias("n_gps"),
            (cls == "ticketing").sum().cast(pl.Int64).alias("n_ticketing"),
            (cls == "inspection").sum().cast(pl.Int64).alias("n_inspection"),
        ],
        levels,
    )


COVERAGE_SPECS = (
    IndicatorSpec(
        "trips_not_evaluated", "n_not_evaluated", None, "trips", "BG art. 25 (evidence.*)"
    ),
    IndicatorSpec(
        "evaluated_share",
        "n_evaluated",
        "n_programmed",
        "ratio",
        "evidence.provisional_below_evaluated_share",
    ),
    IndicatorSpec("gps_coverage_share", "n_gps", "n_programmed", "ratio", "BG art. 25"),
    IndicatorSpec("trips_by_ticketing", "n_ticketing", None, "trips", "BG art. 57 §2"),
    IndicatorSpec("trips_by_inspection", "n_inspection", None, "trips", "BG art. 57 §2"),
)


def compute_data_coverage_indicators(coverage: pl.DataFrame, period: Period) -> pl.DataFrame:
    """The coverage indicators of the period at every scope (long `indicators` rows) from
    `compute_data_coverage`."""
    return to_indicator_rows(coverage, COVERAGE_SPECS, period)


def stamp_provisional(
    grades: pl.DataFrame, coverage: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """`annual_grades` rows plus evaluated_share (of their scope, from `compute_data_coverage`)
    and is_provisional (computed rows below the profile's threshold; null for history rows)."""
    limit = float(profile.evidence.provisional_below_evaluated_share.value)
    share = coverage.select(
        "scope",
        "scope_id",
        (pl.col("n_evaluated") / pl.col("n_programmed")).alias("evaluated_share"),
    )
    return (
        grades.drop([c for c in ("evaluated_share", "is_provisional") if c in grades.columns])
        .join(share, on=["scope", "scope_id"], how="left")
        .with_columns(
            pl.when(~pl.col("is_history"))
            .then(pl.col("evaluated_share").fill_null(0.0) < limit)
            .alias("is_provisional"),
            pl.when(~pl.col("is_history")).then(pl.col("evaluated_share")).alias("evaluated_share"),
        )
    )
