"""The query modules on the hand-built store (`tests/dashboard/store_builder.py`): the
values the store holds, read back through each page's reader."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from dashboard.queries import crowding, filters, fleet, infractions, overview, snapshot
from tests.dashboard.store_builder import DAY, INDICATORS

MARCH = (date(2026, 3, 1), date(2026, 3, 31))


@pytest.fixture(scope="module")
def store(dashboard_store: Path) -> Iterator[Store]:
    with Store.open(dashboard_store, read_only=True) as opened:
        yield opened


def test_the_filters_offer_the_stored_periods_months_first(store: Store) -> None:
    periods = filters.read_periods(store)
    assert periods["period"].to_list() == ["2026-03", "2026-02", "2026"]
    assert periods["n_days"].to_list() == [31, 28, 365]


def test_the_scope_is_the_narrowest_filter_chosen() -> None:
    assert filters.compute_scope("", "", "") == ("system", "")
    assert filters.compute_scope("OP1", "", "") == ("operator", "OP1")
    assert filters.compute_scope("OP1", "LOTE1", "") == ("lot", "LOTE1")
    assert filters.compute_scope("OP1", "LOTE1", "L1") == ("line", "L1")


def test_operators_and_lots_come_from_the_register(store: Store) -> None:
    ops = filters.read_operators(store).filter(pl.col("lot_id").is_not_null())
    assert ops.rows() == [("OP1", "LOTE1"), ("OP2", "LOTE2")]


def test_indicators_and_their_change_against_the_previous_month(store: Store) -> None:
    rows = overview.read_indicators(store, "system", "", ["2026-03", "2026-02"])
    assert rows.columns == list(overview.INDICATOR_COLUMNS)
    assert rows.height == sum(1 for p, _ in INDICATORS if p in ("2026-03", "2026-02"))
    changes = overview.build_changes(rows, "2026-03", "2026-02")
    by_id = {r["indicator"]: r for r in changes.iter_rows(named=True)}
    assert by_id["trips_suppressed"]["change"] == pytest.approx(40.0 - 45.0)
    assert by_id["icv_score"]["change"] == pytest.approx(82.5 - 80.0)
    assert by_id["ipk"]["previous_value"] is None  # no February value


def test_the_share_of_runs_over_the_crowding_limit(store: Store) -> None:
    share = overview.read_crowded_share(store, *MARCH, None).row(0, named=True)
    assert (share["n_over_limit"], share["n_trips"], share["value"]) == (1, 2, 0.5)
    assert overview.read_crowded_share(store, *MARCH, ()).is_empty()  # no line chosen


def test_a_line_restriction_filters_and_an_empty_one_reads_nothing(store: Store) -> None:
    hours = crowding.read_crowding_heatmap(store, *MARCH, ["L1"], None, "America/Sao_Paulo")
    # 10:00 and 12:00 UTC are 07:00 and 09:00 in Bento Gonçalves.
    assert hours.select("hour", "n_trips", "n_over_limit").rows() == [(7, 1, 0), (9, 1, 1)]
    assert crowding.read_crowding_heatmap(store, *MARCH, [], None, "America/Sao_Paulo").is_empty()
    assert snapshot.build_selection(*MARCH, ["L1", "L2"], 1, "c.") == (
        ["c.service_date BETWEEN ? AND ?", "c.route_id IN (?, ?)", "c.direction_id = ?"],
        [*MARCH, "L1", "L2", 1],
    )
    assert snapshot.build_selection(*MARCH, [], None) is None


def test_select_rows_skips_the_all_filter_and_keeps_the_order(store: Store) -> None:
    everyone = snapshot.select_rows(store, "vehicles", {"operator_id": snapshot.ALL})
    assert everyone.height == 4
    op2 = fleet.read_vehicles(store, "OP2", snapshot.ALL)
    assert op2["vehicle_id"].to_list() == ["V3", "V4"]
    assert fleet.read_register(store).columns == ["vehicle_id", "operator_id", "lot_id"]


def test_infractions_are_read_by_the_day_of_the_fact(store: Store) -> None:
    rows = infractions.read_suggested_infractions(store, *MARCH, snapshot.ALL)
    assert rows.height > 0
    assert rows["occurred_on"].is_sorted()
    assert infractions.read_suggested_infractions(
        store, date(2026, 4, 1), date(2026, 4, 30), snapshot.ALL
    ).is_empty()
    assert DAY in rows["occurred_on"].to_list()
