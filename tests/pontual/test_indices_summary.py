"""`pontual indices` summary: each graded scope with the outcome of the profile's verdicts."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
from rich.console import Console

from analytics.indices.grades import compute_annual_grades
from analytics.indices.job import IndexResults
from core.profile import load_profile
from core.settings import Settings
from pontual.context import Context
from pontual.verbs.indices import print_summary

BG = load_profile("bento-goncalves-2021")


def test_summary_prints_the_verdict_outcomes_not_a_bare_apta() -> None:
    scores = pl.DataFrame(
        {
            "scope": ["operator"] * 3,
            "scope_id": ["O1"] * 3,
            "year": [2023, 2025, 2026],  # 2024 without grade: a gap, not a reset
            "icv_score": [10.0, 10.0, 10.0],
            "iqs_score": [None, None, None],
            "km_efficiency": [0.85, 0.85, 0.85],
        },
        schema_overrides={"year": pl.Int32, "iqs_score": pl.Float64},
    )
    grades = compute_annual_grades(scores, None, BG)
    empty = pl.DataFrame()
    results = IndexResults(empty, pl.DataFrame(), grades, pl.DataFrame(), empty)
    out = io.StringIO()
    ctx = Context(Settings(Path("unused.duckdb"), BG.id))
    ctx.console = Console(file=out, width=250)
    print_summary(ctx, results, BG)
    text = out.getvalue()
    row_2026 = next(line for line in text.splitlines() if "2026" in line)
    assert "não apta" in row_2026 and "alerta" in row_2026
    row_2023 = next(line for line in text.splitlines() if "2023" in line)
    # one E year: fined (LXI), not disqualifying; fiscal qualification is recorded by the city
    assert "em aberto" in row_2023 and "sem alerta" in row_2023
