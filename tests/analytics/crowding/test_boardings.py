"""Boarding placement: taps joined to the run and stop of their vehicle by time (hand-checked)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from analytics.crowding.boardings import (
    DEFAULT_BOARDING_OPTIONS,
    build_stop_windows,
    compute_boardings,
    sort_by_run,
)
from core.schema import table
from tests.conftest import FIXTURES

TZ = "America/Sao_Paulo"


def line_r(name: str, decl: str | None = None) -> pl.DataFrame:
    """A file of the line R scenario (tests/fixtures/crowding), conformed to its table."""
    df = pl.read_csv(FIXTURES / "crowding" / f"line_r_{name}.csv", try_parse_dates=True)
    fill = {
        "source": f"line_r_{name}.csv",
        "ingested_at": datetime(2026, 3, 3, tzinfo=UTC),
        "pontual_version": "test",
        "profile_id": "bento-goncalves-2021",
    }
    return table(decl).conform(df, fill=fill) if decl else df


@pytest.fixture(scope="module")
def boardings() -> pl.DataFrame:
    taps = line_r("taps", "fare_transactions").drop("fare_class")
    visits = line_r("stop_visits", "stop_visits")
    return compute_boardings(taps, visits, timezone=TZ)


def placed_at(b: pl.DataFrame) -> dict[str, tuple[str, int, str]]:
    rows = b.filter(pl.col("placement") == "placed").sort("transaction_id")
    return {
        r["transaction_id"]: (r["vehicle_id"], r["run_index"], r["stop_id"])
        for r in rows.iter_rows(named=True)
    }


def test_every_tap_is_kept_once(boardings: pl.DataFrame) -> None:
    assert boardings.height == 13
    assert boardings["transaction_id"].n_unique() == 13


def test_taps_land_on_the_stop_the_bus_was_at_or_just_left(boardings: pl.DataFrame) -> None:
    assert placed_at(boardings) == {
        "t01": ("V1", 0, "A"),  # 10 min before departure: layover boarding at the origin
        "t02": ("V1", 0, "A"),
        "t03": ("V1", 0, "A"),
        "t04": ("V1", 0, "B"),  # 30 s after leaving B: still B's passenger
        "t05": ("V1", 1, "C"),
        "t06": ("V1", 1, "D"),  # origin of the next run: after the previous run ended
        "t07": ("V2", 0, "B"),
        "t08": ("V2", 0, "B"),
        "t09": ("V1", 1, "D"),
        "t13": ("V1", 0, "A"),
    }


def test_boardings_per_run_are_exact(boardings: pl.DataFrame) -> None:
    per_run = (
        boardings.filter(pl.col("placement") == "placed")
        .group_by("vehicle_id", "run_index")
        .len()
        .sort("vehicle_id", "run_index")
    )
    assert per_run.rows() == [("V1", 0, 5), ("V1", 1, 3), ("V2", 0, 2)]


def test_unplaced_taps_are_counted_and_explained(boardings: pl.DataFrame) -> None:
    unplaced = boardings.filter(pl.col("placement") != "placed").sort("transaction_id")
    assert unplaced.select("transaction_id", "placement").rows() == [
        ("t10", "outside_trips"),  # after the vehicle's last run ended
        ("t11", "no_vehicle"),
        ("t12", "vehicle_without_trips"),
    ]
    reasons = dict(unplaced.select("transaction_id", "reason").rows())
    assert "após a última" in reasons["t10"]
    assert reasons["t11"].startswith("validação sem veículo")
    assert "não tem viagem reconhecida" in reasons["t12"]
    # the service date of an unplaced tap is its local date
    assert unplaced["service_date"].cast(pl.String).to_list() == ["2026-03-02"] * 3


def test_windows_start_at_the_layover_and_skip_the_last_stop() -> None:
    visits = line_r("stop_visits", "stop_visits")
    w = build_stop_windows(visits, include_last=False, options=DEFAULT_BOARDING_OPTIONS)
    v1 = w.filter(pl.col("vehicle_id") == "V1").select(
        "run_index",
        "stop_id",
        pl.col("window_start_at").dt.strftime("%H:%M"),
        pl.col("window_end_at").dt.strftime("%H:%M"),
    )
    assert v1.rows() == [
        (0, "A", "09:45", "10:05"),  # 15 min of terminal boarding before the 10:00 departure
        (0, "B", "10:05", "10:10"),
        (0, "C", "10:10", "10:15"),
        (1, "D", "10:15", "10:25"),  # not before run 0 arrived at D
        (1, "C", "10:25", "10:30"),
        (1, "B", "10:30", "10:35"),
    ]


def test_a_tap_between_runs_beyond_the_layover_is_outside_trips() -> None:
    visits = line_r("stop_visits", "stop_visits").filter(
        (pl.col("vehicle_id") == "V1") & (pl.col("run_index") == 0)
    )
    taps = pl.DataFrame(
        {"transaction_id": ["x"], "event_at": ["2026-03-02T09:40:00Z"], "vehicle_id": ["V1"]}
    ).with_columns(pl.col("event_at").str.to_datetime(time_zone="UTC"))
    out = compute_boardings(taps, visits, timezone=TZ)
    assert out["placement"].to_list() == ["outside_trips"]
    assert out["card_hash"].to_list() == [None]


def test_sort_by_run_orders_visits_as_a_sort_of_the_run_key_and_sequence() -> None:
    """The integer-key sort (vehicle by its rank in id order) gives the string sort's order,
    a frame already in order is returned as it is, and nulls fall back to the plain sort."""
    from datetime import date

    visits = pl.DataFrame(
        {
            "service_date": [date(2026, 3, 3), date(2026, 3, 2), date(2026, 3, 2)] * 2,
            "vehicle_id": ["B10", "B9", "B10", "B9", "B10", "B10"],
            "run_index": [0, 1, 1, 0, 1, 0],
            "stop_sequence": [2, 1, 7, 3, 3, 1],
            "stop_id": ["s1", "s2", "s3", "s4", "s5", "s6"],
        }
    )
    ordered = sort_by_run(visits)
    expected = visits.sort("service_date", "vehicle_id", "run_index", "stop_sequence")
    assert ordered.equals(expected)
    # "B10" before "B9": the ids' own order, not a number's
    assert ordered["stop_id"].to_list() == ["s6", "s5", "s3", "s2", "s1", "s4"]
    assert sort_by_run(ordered) is ordered
    with_null = visits.with_columns(pl.Series("run_index", [0, None, 1, 0, 1, 0]))
    assert sort_by_run(with_null).equals(
        with_null.sort("service_date", "vehicle_id", "run_index", "stop_sequence")
    )
