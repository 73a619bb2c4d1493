"""The annual page lists the verdict criteria (article, status) exactly as `pontual profiles
show` and the dossier do (issue #17)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from analytics.indices.verdicts import describe_profile_verdicts
from core.profile import load_profile
from core.store import Store
from dashboard.queries.annual import read_scope_grades, read_verdict_criteria
from dashboard.reports.annual_verdict import build_verdict_tables

PROFILE_ID = "bento-goncalves-2021"


@pytest.fixture(scope="module")
def store(dashboard_store: Path) -> Iterator[Store]:
    with Store.open(dashboard_store, read_only=True) as opened:
        yield opened


def test_the_page_lists_the_profiles_criteria_with_the_dossiers_statuses(store: Store) -> None:
    profile = load_profile(PROFILE_ID)
    got = read_verdict_criteria(store, PROFILE_ID, "operator", "OP2", 2025)
    # the criteria and articles `pontual profiles show` prints, in its order
    declared = describe_profile_verdicts(profile)
    assert (
        got.select("verdict", "criterion", "article").rows()
        == declared.select("verdict", "criterion", "article").rows()
    )
    # the statuses the dossier prints for the same operator and year
    grades = read_scope_grades(store, "operator", "OP2", 2025)
    dossier, outcomes, _ = build_verdict_tables(
        store, profile, "operator", "OP2", 2025, grades, {}, grades.row(0, named=True)
    )
    assert (
        got.select("criterion", "status", "status_label").rows()
        == dossier.select("criterion", "status", "status_label").rows()
    )
    assert dict(got.select("verdict", "outcome").unique().rows()) == outcomes
    # BG: fiscal qualification is recorded by the city, never silently met
    fiscal = got.filter(pl.col("status") == "not_computed")
    assert fiscal.height >= 1
    # hand-checked: OP2 has one graded year (2025, E): no run of 3 E years, no cassação alert;
    # renewal stays open until the city records the fiscal qualification
    assert outcomes == {"renewal": "em aberto", "termination": "sem alerta"}
    seven = got.filter(pl.col("article").str.starts_with("BG art. 72-VII"))
    assert seven["status"].to_list() == ["not_met"]
