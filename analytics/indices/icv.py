"""ICV — índice de cumprimento de viagens (BG art. 57-I) and its parts, from trip outcomes.

Definitions (each threshold from the profile; the law leaves scores to a decree, art. 58):

- a trip is *programmed* when it has a trip_outcomes row; *justified* when an approved incident
  covers it and its outcome is one the profile excuses (art. 57 §1: late only, see
  `compute_trip_flags`): justified trips leave numerator and denominator of every ratio;
- *run* = outcome on_time, late or early (partial, suppressed and broken_down are not run);
- fulfilment (57-I-a) = trips run ÷ (programmed − justified);
- punctuality (57-I-b) = on-time trips ÷ trips run (not justified), with early and late apart;
- breakdown index (57-I-c) = breakdowns × 10 000 ÷ km run, and MKBF = km run ÷ breakdowns;
- km run of a trip = distance run along the itinerary, capped at its programmed distance (a
  detour does not earn km: Rio SMTR counts the planned length of valid trips);
- ICV score = Σ weight × band score, each part scored 0-100 linearly on its profile band;
- frequent lines (planned headway ≤ trips.frequent_headway_max_s): excess waiting time (TfL
  EWT) and headway regularity = SWT ÷ AWT (1 = as regular as planned) from the hourly
  headway observations, weighted by planned departures.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analytics.indices.scopes import (
    LEVELS,
    UNKNOWN,
    IndicatorSpec,
    compute_by_scope,
    to_indicator_rows,
)
from core.periods import Period
from core.profile import Profile
from core.tables.matching import RUN_OUTCOMES

# BG art. 57 §1: "não serão consideradas viagens em atraso..." -- an incident excuses delays
EXCUSED_BY_LAW = ("late",)
ART_ICV = "BG art. 57-I"


def compute_trip_flags(
    outcomes: pl.DataFrame, excused: Sequence[str] = EXCUSED_BY_LAW
) -> pl.DataFrame:
    """trip_outcomes rows plus 0/1 counters (is_* as Int32) and km.

    A trip is justified only when an approved incident covers it (`is_justified`) *and* its
    outcome is one the profile excuses (`excused`, `profile.trips.excused_outcomes`; BG art.
    57 §1 excuses delays only): a suppressed, partial, broken-down or early trip under an
    incident stays counted as such.

    Added columns: n_programmed (1), n_justified, n_run, n_on_time, n_late, n_early,
    n_suppressed, n_partial, n_broken_down (all but n_programmed and n_justified count only
    trips that are not justified), km_run (distance run capped at the programmed one, km),
    km_programmed (km).
    """
    outcome = pl.col("outcome")
    justified = pl.col("is_justified") & outcome.is_in(list(excused))
    free = ~justified

    def count(cond: pl.Expr) -> pl.Expr:
        return (cond & free).cast(pl.Int32)

    return outcomes.with_columns(
        pl.lit(1, dtype=pl.Int32).alias("n_programmed"),
        justified.cast(pl.Int32).alias("n_justified"),
        count(outcome.is_in(RUN_OUTCOMES)).alias("n_run"),
        count(outcome == "on_time").alias("n_on_time"),
        count(outcome == "late").alias("n_late"),
        count(outcome == "early").alias("n_early"),
        count(outcome == "suppressed").alias("n_suppressed"),
        count(outcome == "partial").alias("n_partial"),
        count(outcome == "broken_down").alias("n_broken_down"),
        (
            pl.min_horizontal(
                pl.col("distance_run_m").fill_null(0.0), pl.col("planned_distance_m")
            ).clip(lower_bound=0.0)
            / 1000.0
        ).alias("km_run"),
        (pl.col("planned_distance_m") / 1000.0).alias("km_programmed"),
        pl.lit(0, dtype=pl.Int32).alias("n_breakdowns"),
    )


COUNT_COLUMNS = (
    "n_programmed",
    "n_justified",
    "n_run",
    "n_on_time",
    "n_late",
    "n_early",
    "n_suppressed",
    "n_partial",
    "n_broken_down",
    "n_breakdowns",
)


def attach_breakdown_routes(breakdowns: pl.DataFrame, outcomes: pl.DataFrame) -> pl.DataFrame:
    """Breakdowns with the route_id of the trip they interrupted (null when none)."""
    trips = outcomes.select("service_date", "trip_id", "route_id").unique(
        ["service_date", "trip_id"]
    )
    return breakdowns.drop([c for c in ("route_id",) if c in breakdowns.columns]).join(
        trips, on=["service_date", "trip_id"], how="left"
    )


def compute_icv_counts(
    flags: pl.DataFrame,
    breakdowns: pl.DataFrame,
    levels: Sequence[tuple[str, str | None]] = LEVELS,
    by: Sequence[str] = (),
) -> pl.DataFrame:
    """Counts and km per scope: scope, scope_id, *by, n_* counters, km_run, km_programmed.

    `flags` comes from `compute_trip_flags` with operator_id / lot_id attached; `breakdowns`
    has route_id (may be null), operator_id, lot_id and the `by` columns. A breakdown without
    a line counts in its operator, lot and the system only.
    """
    bd = breakdowns.select(
        *[c for c in ("route_id", "operator_id", "lot_id", *by) if c in breakdowns.columns],
        pl.lit(1, dtype=pl.Int32).alias("n_breakdowns"),
    )
    rows = pl.concat(
        [
            flags.select(
                "route_id",
                "operator_id",
                "lot_id",
                *by,
                *COUNT_COLUMNS[:-1],
                "n_breakdowns",
                "km_run",
                "km_programmed",
            ),
            bd,
        ],
        how="diagonal_relaxed",
    )
    aggs = [
        pl.col(c).fill_null(0).sum().alias(c) for c in (*COUNT_COLUMNS, "km_run", "km_programmed")
    ]
    out = compute_by_scope(rows, aggs, levels, by)
    # a breakdown scope with no programmed trip (unknown line) is not an ICV scope
    return out.filter(~((pl.col("scope_id") == UNKNOWN) & (pl.col("n_programmed") == 0)))


def band_score(x: pl.Expr, band: Sequence[float]) -> pl.Expr:
    """Linear score 0-100: band[0] scores 0, band[1] scores 100, clipped (either order)."""
    zero, full = float(band[0]), float(band[1])
    return ((x - zero) / (full - zero) * 100.0).clip(0.0, 100.0)


def compute_icv_scores(counts: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Counts plus the ratios and scores.

    Added: n_eligible (programmed − justified), fulfilment, punctuality (0-1), breakdowns_per_10000_km, mkbf_km (null with no
    breakdown), score_fulfilment, score_punctuality, score_breakdowns, icv_score (points 0-100;
    null when a part is undefined: no trip to judge, or no km run).
    """
    icv = profile.icv
    eligible = pl.col("n_programmed") - pl.col("n_justified")
    ratio = lambda num, den: pl.when(den > 0).then(num / den)  # noqa: E731
    out = counts.with_columns(
        eligible.alias("n_eligible"),
        ratio(pl.col("n_run"), eligible).alias("fulfilment"),
        ratio(pl.col("n_on_time"), pl.col("n_run")).alias("punctuality"),
        ratio(pl.col("n_breakdowns") * 10_000.0, pl.col("km_run")).alias("breakdowns_per_10000_km"),
        ratio(pl.col("km_run"), pl.col("n_breakdowns")).alias("mkbf_km"),
    ).with_columns(
        band_score(pl.col("fulfilment"), icv.fulfilment_band.value).alias("score_fulfilment"),
        band_score(pl.col("punctuality"), icv.punctuality_band.value).alias("score_punctuality"),
        band_score(pl.col("breakdowns_per_10000_km"), icv.breakdowns_band_per_10000_km.value).alias(
            "score_breakdowns"
        ),
    )
    return out.with_columns(
        (
            icv.weight_fulfilment.value * pl.col("score_fulfilment")
            + icv.weight_punctuality.value * pl.col("score_punctuality")
            + icv.weight_breakdowns.value * pl.col("score_breakdowns")
        ).alias("icv_score")
    )


ICV_SPECS = (
    IndicatorSpec("trips_programmed", "n_programmed", None, "trips", ART_ICV),
    IndicatorSpec("trips_justified", "n_justified", None, "trips", "BG art. 57 §1"),
    IndicatorSpec("trips_run", "n_run", None, "trips", ART_ICV),
    IndicatorSpec("trips_suppressed", "n_suppressed", None, "trips", "BG art. 57-I-a"),
    IndicatorSpec("trips_partial", "n_partial", None, "trips", "trips.partial_trip_min_ratio"),
    IndicatorSpec("trips_broken_down", "n_broken_down", None, "trips", "BG art. 57-I-c"),
    IndicatorSpec("trips_late", "n_late", None, "trips", "BG art. 57-I-b"),
    IndicatorSpec("trips_early", "n_early", None, "trips", "BG art. 57-I-b"),
    IndicatorSpec("icv_fulfilment", "n_run", "n_eligible", "ratio", "BG art. 57-I-a"),
    IndicatorSpec("icv_punctuality", "n_on_time", "n_run", "ratio", "BG art. 57-I-b"),
    IndicatorSpec("share_late", "n_late", "n_run", "ratio", "BG art. 57-I-b"),
    IndicatorSpec("share_early", "n_early", "n_run", "ratio", "BG art. 57-I-b"),
    IndicatorSpec("breakdowns", "n_breakdowns", None, "breakdowns", "BG art. 57-I-c"),
    IndicatorSpec(
        "breakdowns_per_10000_km",
        "n_breakdowns",
        "km_run",
        "per_10000_km",
        "BG art. 57-I-c",
        10_000.0,
    ),
    IndicatorSpec("mkbf_km", "km_run", "n_breakdowns", "km", "BG art. 57-I-c (ANTP MKBF)"),
    IndicatorSpec("km_run", "km_run", None, "km", "CGS art. 2, 20-II"),
    IndicatorSpec("km_programmed", "km_programmed", None, "km", "CGS art. 2, 20-II"),
    IndicatorSpec(
        "icv_score_fulfilment", "score_fulfilment", None, "points", "icv.fulfilment_band"
    ),
    IndicatorSpec(
        "icv_score_punctuality", "score_punctuality", None, "points", "icv.punctuality_band"
    ),
    IndicatorSpec(
        "icv_score_breakdowns",
        "score_breakdowns",
        None,
        "points",
        "icv.breakdowns_band_per_10000_km",
    ),
    IndicatorSpec("icv_score", "icv_score", None, "points", "BG art. 57-I, 58 (icv.weight_*)"),
)


def compute_headway_indices(
    headways: pl.DataFrame, profile: Profile, levels: Sequence[tuple[str, str | None]] = LEVELS
) -> pl.DataFrame:
    """EWT and regularity of frequent lines per scope (hours whose planned mean headway is at
    most the profile's frequent headway). Columns: scope, scope_id, swt_weighted,
    awt_weighted, ewt_weighted (seconds × planned departures), n_planned_frequent."""
    limit = profile.trips.frequent_headway_max_s.value
    freq = headways.filter(
        (pl.col("planned_headway_mean_s") <= limit) & pl.col("excess_wait_s").is_not_null()
    )
    w = pl.col("n_planned").cast(pl.Float64)
    return compute_by_scope(
        freq,
        [
            (pl.col("scheduled_wait_s") * w).sum().alias("swt_weighted"),
            (pl.col("actual_wait_s") * w).sum().alias("awt_weighted"),
            (pl.col("excess_wait_s") * w).sum().alias("ewt_weighted"),
            w.sum().alias("n_planned_frequent"),
        ],
        levels,
    )


HEADWAY_SPECS = (
    IndicatorSpec(
        "ewt_s", "ewt_weighted", "n_planned_frequent", "s", "trips.frequent_headway_max_s (TfL EWT)"
    ),
    IndicatorSpec("swt_s", "swt_weighted", "n_planned_frequent", "s", "TfL SWT"),
    IndicatorSpec("awt_s", "awt_weighted", "n_planned_frequent", "s", "TfL AWT"),
    IndicatorSpec("headway_regularity", "swt_weighted", "awt_weighted", "ratio", "SWT ÷ AWT"),
)


def compute_icv_indicators(
    flags: pl.DataFrame,
    breakdowns: pl.DataFrame,
    headways: pl.DataFrame | None,
    profile: Profile,
    period: Period,
) -> pl.DataFrame:
    """Every ICV indicator of the period at every scope, in the long `indicators` format."""
    scored = compute_icv_scores(compute_icv_counts(flags, breakdowns), profile)
    parts = [to_indicator_rows(scored, ICV_SPECS, period)]
    if headways is not None and headways.height:
        hw = compute_headway_indices(headways, profile)
        if hw.height:
            parts.append(to_indicator_rows(hw, HEADWAY_SPECS, period))
    return pl.concat(parts, how="vertical_relaxed")
