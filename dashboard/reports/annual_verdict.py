"""The verdict and score-breakdown tables of the annual evaluation (BG art. 56-58, 72-VII).

Reads `fleet_days` and `vehicles` from the store plus the scope's grade history and year
values; returns the verdict criteria with their pt-BR status labels, the outcome of each
verdict and the point breakdown of the grade, as the dossier and the annual page show them.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from analytics.indices.fleet import compute_fleet_register
from analytics.indices.grades import build_score_breakdown
from analytics.indices.verdicts import (
    GROUND_LABELS,
    STATUS_LABELS,
    Inputs,
    build_verdict_criteria,
    compute_verdict_outcomes,
)
from core.profile import Profile
from core.register import in_fleet_expr, read_register, to_register_on
from core.store import Store


def build_verdict_tables(
    store: Store,
    profile: Profile,
    scope: str,
    scope_id: str,
    year: int,
    grades: pl.DataFrame,
    year_values: dict[str, float | None],
    grade: dict[str, object],
) -> tuple[pl.DataFrame, dict[str, str], pl.DataFrame]:
    """The verdict criteria (with a pt-BR status_label), the outcome of each verdict and the
    point breakdown of the grade, as the annual page shows them."""
    start, end = date(year, 1, 1), date(year, 12, 31)
    fleet_days = store.read("fleet_days", "service_date BETWEEN ? AND ?", [start, end])
    # the fleet at the year's end, as the register and its inspections then stood
    vehicles = to_register_on(read_register(store, start, end), end).filter(
        in_fleet_expr(pl.lit(end))
    )
    register = compute_fleet_register(vehicles, profile, end) if vehicles.height else None
    inputs = Inputs(profile, scope, scope_id, year, grades, fleet_days, register)
    criteria = build_verdict_criteria(inputs)
    labels = pl.when(pl.col("verdict") == "renewal").then(
        pl.col("status").replace_strict(STATUS_LABELS)
    )
    criteria = criteria.with_columns(
        labels.otherwise(pl.col("status").replace_strict(GROUND_LABELS)).alias("status_label")
    )
    outcomes = dict(compute_verdict_outcomes(criteria).select("verdict", "outcome").rows())
    return criteria, outcomes, build_score_breakdown(year_values, grade, profile)
