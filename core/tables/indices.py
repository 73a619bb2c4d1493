"""Derived tables of the indices jobs (declared with `Table(derived=True)`).

`pontual indices` writes them, replacing the rows of the period it computed, so a re-run is
idempotent. Every indicator is traceable: `indicators` -> trip_outcomes (scope and period) ->
trips_performed -> the ping ids of `vehicle_locations` (`analytics.indices.trace_indicator`).
"""

import polars as pl

from core.migrations import Migration
from core.schema import UTC_INSTANT, Table, cols, register

SCOPE = ("scope", pl.String(), "'system', 'operator', 'lot' or 'line'", False)
SCOPE_ID = (
    "scope_id",
    pl.String(),
    "operator_id, lot_id or route_id of the scope ('all' for the system)",
    False,
)

INDICATORS = Table(
    "indicators",
    "Long-format indices: one row per scope, period and indicator, with the numerator and "
    "denominator it was computed from (value = numerator / denominator × the unit's factor).",
    cols(
        SCOPE,
        SCOPE_ID,
        (
            "period",
            pl.String(),
            "'2026-03' (month), '2026' (year) or 'YYYY-MM-DD..YYYY-MM-DD'",
            False,
        ),
        ("period_start", pl.Date(), "first service day of the period", False),
        ("period_end", pl.Date(), "last service day of the period (inclusive)", False),
        (
            "indicator",
            pl.String(),
            "stable id: icv_fulfilment, icv_punctuality, breakdowns_per_10000_km, icv_score, ...",
            False,
        ),
        ("numerator", pl.Float64(), "numerator (count, km, points...); null when not a ratio"),
        ("denominator", pl.Float64(), "denominator; null when the value is not a ratio"),
        ("value", pl.Float64(), "the indicator's value in `unit`; null when undefined (0 ÷ 0)"),
        ("unit", pl.String(), "'ratio' (0-1), 'points' (0-100), 'km', 'trips', 'brl', ...", False),
        ("source", pl.String(), "article or profile key the indicator follows", False),
        ("computed_at", UTC_INSTANT, "when it was computed (UTC)", False),
    ),
    primary_key=("scope", "scope_id", "period", "indicator"),
    derived=True,
)

ANNUAL_GRADES = Table(
    "annual_grades",
    "Per operator or lot and year: ICV, IQS, annual score and grade A-E (BG art. 56-58), km "
    "efficiency (CGS art. 2, 20-II), renewal eligibility (BG art. 32, 38) and the cassação "
    "watch (BG art. 72-VII). Years before the data come from a history CSV (`is_history`).",
    cols(
        SCOPE,
        SCOPE_ID,
        ("year", pl.Int32(), "calendar year", False),
        ("icv_score", pl.Float64(), "ICV score of the year, points 0-100"),
        (
            "iqs_score",
            pl.Float64(),
            "IQS of the year (mean of the survey dimensions), points 0-100",
        ),
        ("annual_score", pl.Float64(), "weighted ICV and IQS, points 0-100"),
        ("grade", pl.String(), "'A'..'E' from the profile's minimum points", False),
        ("km_efficiency", pl.Float64(), "km run ÷ km programmed over the year (0-1)"),
        ("is_km_ok", pl.Boolean(), "km efficiency at or above the profile minimum"),
        (
            "is_quality_goal_met",
            pl.Boolean(),
            "the year's part of the profile's deciding renewal criteria (BG: grade better "
            "than E; CGS: km efficiency not below the minimum)",
            False,
        ),
        (
            "is_renewal_eligible",
            pl.Boolean(),
            "the renewal criteria computed from grades are met up to this year (BG: no "
            "cassação count of E years, art. 32-I, 72-VII; CGS: km every year, art. 2 p.u. a); "
            "the full criteria list is analytics.indices.verdicts",
            False,
        ),
        (
            "n_e_consecutive",
            pl.Int32(),
            "graded E years in a row ending this year (a year without grade is a gap, not a break)",
            False,
        ),
        ("n_e_total", pl.Int32(), "grade-E years up to this year, consecutive or not", False),
        (
            "n_goal_missed_total",
            pl.Int32(),
            "years with quality goals missed up to this year",
            False,
        ),
        (
            "is_cassacao_watch",
            pl.Boolean(),
            "operators only, where the profile has the rule: E for 3 consecutive or 8 total "
            "years (BG art. 72-VII): cassação may apply",
            False,
        ),
        ("is_history", pl.Boolean(), "entered from the history CSV, not computed", False),
        (
            "evaluated_share",
            pl.Float64(),
            "share of the year's programmed trips that could be judged (not not_evaluated), 0-1",
        ),
        (
            "is_provisional",
            pl.Boolean(),
            "PROVISÓRIO: evaluated_share below the profile's "
            "evidence.provisional_below_evaluated_share (null for history rows)",
        ),
        ("computed_at", UTC_INSTANT, "when it was computed (UTC)", False),
    ),
    primary_key=("scope", "scope_id", "year"),
    derived=True,
    # Indexed: the indices job appends the grade history rows after replacing the year, and
    # the key skips those already stored (a few hundred rows; ADR 0111).
    key_index=True,
)

SUGGESTED_INFRACTIONS = Table(
    "suggested_infractions",
    "Detected facts mapped to items of the infractions catalogue (BG Anexo I), with their "
    "evidence and fine in URM. Suggestions for a human inspector, never automatic fines.",
    cols(
        ("infraction_key", pl.String(), "stable id: item, operator, date and subject", False),
        ("group", pl.String(), "catalogue group (A-I)", False),
        ("item", pl.String(), "catalogue item (roman numeral)", False),
        ("description", pl.String(), "the item's text in the law (pt-BR)", False),
        ("operator_id", pl.String(), "operator the fact is attributed to", False),
        ("route_id", pl.String(), "line concerned"),
        ("vehicle_id", pl.String(), "vehicle concerned"),
        ("occurred_on", pl.Date(), "service day of the fact", False),
        ("occurred_at", UTC_INSTANT, "instant of the first fact of the day (UTC)"),
        ("fact", pl.String(), "what was detected, in words (pt-BR)", False),
        ("evidence", pl.String(), "trips, times, vehicles and pings behind it (pt-BR)", False),
        ("trip_ids", pl.String(), "scheduled trips of the evidence, comma-separated"),
        ("ping_ids", pl.String(), "first-last ping ids of the evidence runs, comma-separated"),
        (
            "is_repeat",
            pl.Boolean(),
            "same item by the same operator within the repeat window",
            False,
        ),
        ("urm", pl.Float64(), "suggested fine in the profile's currency unit (0: warning only)"),
        ("currency_unit", pl.String(), "unit of the fine (URM)", False),
        ("status", pl.String(), "always 'sugestão' (to be reviewed by an inspector)", False),
        ("source", pl.String(), "article of the catalogue item and of the repeat rule", False),
        ("computed_at", UTC_INSTANT, "when it was computed (UTC)", False),
    ),
    primary_key=("infraction_key",),
    derived=True,
)

FLEET_DAYS = Table(
    "fleet_days",
    "Fleet compliance per service day, operator and line: vehicles required by the timetable "
    "vs operated, and the cut rule of BG art. 72 parágrafo único I. The row with route_id '*' "
    "is the operator's total, which also carries the reserve fleet (BG Anexo I XXXV, CGS 23).",
    cols(
        ("service_date", pl.Date(), "service day (local)", False),
        ("operator_id", pl.String(), "operator", False),
        ("route_id", pl.String(), "line, or '*' for the operator's total", False),
        (
            "n_vehicles_required",
            pl.Int32(),
            "vehicles the timetable needs (distinct blocks, else the peak of concurrent trips)",
            False,
        ),
        ("n_vehicles_operated", pl.Int32(), "distinct vehicles that ran its trips", False),
        ("cut_ratio", pl.Float64(), "1 − operated ÷ required (0-1; 0 when none short)"),
        ("is_cut_over_limit", pl.Boolean(), "cut above the profile's grave-cut ratio", False),
        ("n_cut_days_consecutive", pl.Int32(), "days in a row with a cut over the limit", False),
        (
            "is_grave_cut",
            pl.Boolean(),
            "cut over the limit for more than the profile's days in a row (BG art. 72 p.ú. I)",
            False,
        ),
        ("n_vehicles_registered", pl.Int32(), "operator total: active vehicles in the register"),
        ("n_reserve", pl.Int32(), "operator total: registered minus required vehicles"),
        ("n_reserve_min", pl.Int32(), "operator total: reserve the profile requires"),
        ("n_reserve_max", pl.Int32(), "operator total: reserve cap of the profile (CGS 15 %)"),
        ("reserve_ratio", pl.Float64(), "operator total: reserve ÷ required (0-1)"),
        ("is_reserve_ok", pl.Boolean(), "operator total: reserve at or above the minimum"),
    ),
    primary_key=("service_date", "operator_id", "route_id"),
    derived=True,
)

register(INDICATORS, ANNUAL_GRADES, SUGGESTED_INFRACTIONS, FLEET_DAYS)

MIGRATION: Migration | None = Migration(
    3,
    "indices: indicators, annual_grades, suggested_infractions, fleet_days",
    tables=("indicators", "annual_grades", "suggested_infractions", "fleet_days"),
)
