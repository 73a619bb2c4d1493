"""Visão geral: the headline indices of a scope and their change against the previous period.

Reads `indicators` (one scope, some periods; also the annual dossier's source) and
`trip_crowding` (the share of runs over the crowding limit, which is not an `indicators`
row). Returns the `indicators` rows, the change table built from them, and a one-row share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

from core.store import Store
from core.texts import gettext as _
from core.texts import ngettext
from dashboard.queries.snapshot import build_selection

INDICATOR_COLUMNS = ("period", "indicator", "numerator", "denominator", "value", "unit", "source")


def read_indicators(
    store: Store, scope: str, scope_id: str, periods: Sequence[str]
) -> pl.DataFrame:
    """`indicators` rows of one scope (the system scope whatever `scope_id`) for some periods:
    `period`, `indicator`, `numerator`, `denominator`, `value` (in `unit`), `unit`, `source`
    (articles and profile keys), sorted by period and indicator."""
    where = "scope = ? AND list_contains(?::VARCHAR[], period)"
    params: list[Any] = [scope, list(periods)]
    if scope != "system":
        where += " AND scope_id = ?"
        params.append(scope_id)
    return store.query(
        f"SELECT {', '.join(INDICATOR_COLUMNS)} FROM indicators WHERE {where} "
        "ORDER BY period, indicator",
        params,
    )


def build_changes(indicators: pl.DataFrame, period: str, previous: str) -> pl.DataFrame:
    """One row per indicator of `period`: `indicator`, `value`, `previous_value` (the same
    indicator in `previous`, null when absent) and `change` = value - previous_value, in the
    indicator's own unit (ratios stay ratios)."""
    now = indicators.filter(pl.col("period") == period).select("indicator", "value")
    before = indicators.filter(pl.col("period") == previous).select(
        "indicator", pl.col("value").alias("previous_value")
    )
    return (
        now.join(before, on="indicator", how="left")
        .with_columns((pl.col("value") - pl.col("previous_value")).alias("change"))
        .cast({"value": pl.Float64, "previous_value": pl.Float64, "change": pl.Float64})
    )


def read_crowded_share(
    store: Store, start: date, end: date, route_ids: Sequence[str] | None
) -> pl.DataFrame:
    """Runs over the crowding limit in [start, end] (`trip_crowding`): one row with
    `n_over_limit`, `n_trips` (runs with a known capacity) and `value` (their ratio, 0-1;
    null without runs); no row when the line restriction is empty."""
    selection = build_selection(start, end, route_ids, None)
    if selection is None:
        return pl.DataFrame()
    where, params = selection
    where.append("is_over_limit IS NOT NULL")
    return store.query(
        "SELECT sum(is_over_limit::INTEGER)::INTEGER AS n_over_limit, "
        "count(*)::INTEGER AS n_trips, avg(is_over_limit::INTEGER) AS value "
        f"FROM trip_crowding WHERE {' AND '.join(where)}",
        params,
    )


@dataclass(frozen=True)
class CoverageNotice:
    """What stands beside the headlines: how much of the programmed service the figures rest
    on (unobserved is not failed: not-evaluated trips are out of ICV, km and infractions)."""

    text: str
    is_provisional: bool


def build_coverage_notice(
    rows: Mapping[tuple[str, str], Mapping[str, Any]], period: str, provisional_below: float
) -> CoverageNotice | None:
    """The data-coverage notice of `period` from its `indicators` rows (keyed by (period,
    indicator)): GPS share, evaluated share and not-evaluated trips; PROVISÓRIO when the
    evaluated share is below the profile's `evidence.provisional_below_evaluated_share`.
    None when the period has no coverage rows (stores indexed before coverage existed)."""
    from dashboard.format import to_integer, to_percent

    evaluated = rows.get((period, "evaluated_share"))
    if evaluated is None or evaluated.get("value") is None:
        return None
    share = float(evaluated["value"])
    gps = rows.get((period, "gps_coverage_share"))
    missing = rows.get((period, "trips_not_evaluated"))
    parts = []
    if gps is not None and gps.get("value") is not None:
        parts.append(_("GPS on {share} of the scheduled trips", share=to_percent(gps["value"])))
    parts.append(_("{share} of the scheduled trips evaluated", share=to_percent(share)))
    n_missing = (missing or {}).get("value") or 0
    if n_missing:
        parts.append(
            ngettext(
                "{n} trip not evaluated (no data), left out of the ICV, the km and the infractions",
                "{n} trips not evaluated (no data), left out of the ICV, the km and the "
                "infractions",
                int(n_missing),
                n=to_integer(n_missing),
            )
        )
    text = _("Data coverage: {parts}.", parts="; ".join(parts))
    is_provisional = share < provisional_below
    if is_provisional:
        text = _(
            "PROVISIONAL — {text} Below {share} evaluated, the indices and the score "
            "are not enough for a decision.",
            text=text,
            share=to_percent(provisional_below),
        )
    return CoverageNotice(text, is_provisional)
