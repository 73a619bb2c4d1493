"""What the public transparency page publishes (issue #20, #23): aggregates only.

Every reader returns one row per line, operator or the whole system and a month, year or hour
of the day; never a trip, vehicle, plate, stop visit, card, infraction or case. The columns each
reader may return are declared in `PUBLIC_COLUMNS` (a test holds every reader to them).
"""

from __future__ import annotations

import polars as pl

from core.store import Store

PUBLIC_INDICATORS = (
    "icv_score",
    "icv_score_fulfilment",
    "icv_score_punctuality",
    "icv_score_breakdowns",
    "icv_fulfilment",
    "icv_punctuality",
    "breakdowns_per_10000_km",
)
"""Indicators published per line, operator and the system, per month: the ICV, its three parts
(points) and the measures behind them."""

PUBLIC_SCOPES = ("system", "operator", "line")

PUBLIC_COLUMNS = {
    "read_public_indicators": {"scope", "scope_id", "period", "indicator", "value", "unit"},
    "read_public_crowding": {"route_id", "hour", "n_trips", "over_limit_share", "mean_peak_load"},
    "read_public_grades": {"scope", "scope_id", "year", "grade", "icv_score", "iqs_score",
                           "annual_score", "is_provisional"},
}  # fmt: skip


def read_public_indicators(store: Store) -> pl.DataFrame:
    """Monthly ICV, its parts and punctuality: `scope` ('system', 'operator', 'line'),
    `scope_id` (operator or line id; 'all'), `period` ('2026-03'), `indicator`
    (`PUBLIC_INDICATORS`), `value` (in `unit`: 'ratio' 0-1, points 0-100, per 10 000 km)."""
    marks = ", ".join("?" for _ in PUBLIC_INDICATORS)
    scopes = ", ".join("?" for _ in PUBLIC_SCOPES)
    return store.query(
        "SELECT scope, scope_id, period, indicator, value, unit FROM indicators "
        f"WHERE indicator IN ({marks}) AND scope IN ({scopes}) "
        "AND regexp_matches(period, '^[0-9]{4}-[0-9]{2}$') "
        "ORDER BY period DESC, scope, scope_id, indicator",
        [*PUBLIC_INDICATORS, *PUBLIC_SCOPES],
    )


def read_public_crowding(store: Store, timezone: str) -> pl.DataFrame:
    """Crowding by line and hour of the day (local), over every day published: `route_id`,
    `hour` (0-23, local), `n_trips` (runs with a load profile), `over_limit_share` (share of
    them over the crowding limit somewhere, 0-1), `mean_peak_load` (passengers through the
    hour's most loaded segment, mean per day)."""
    return store.query(
        "SELECT route_id, CAST(hour(timezone(?, hour_at)) AS INTEGER) AS hour, "
        "CAST(sum(n_trips) AS INTEGER) AS n_trips, "
        "sum(n_over_limit) / nullif(sum(n_trips), 0) AS over_limit_share, "
        "avg(peak_segment_load) AS mean_peak_load "
        "FROM crowding_summary GROUP BY ALL ORDER BY route_id, hour",
        [timezone],
    )


def read_public_grades(store: Store) -> pl.DataFrame:
    """Annual grades of the operators and the system: `scope`, `scope_id`, `year`, `grade`
    ('A'..'E'), `icv_score`, `iqs_score`, `annual_score` (points 0-100), `is_provisional`
    (too few trips could be judged for a final grade)."""
    return store.query(
        "SELECT scope, scope_id, year, grade, icv_score, iqs_score, annual_score, "
        "is_provisional FROM annual_grades WHERE scope IN ('system', 'operator') "
        "ORDER BY year DESC, scope, scope_id"
    )
