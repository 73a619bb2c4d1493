"""Qualidade dos dados: coverage per day, silent vehicles, feed outages, quarantine by reason
and implausible loads, on a hand-made store whose answers are known."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from dashboard.queries import quality as q
from tests.dashboard.store_builder import write

DAY1, DAY2 = date(2026, 3, 2), date(2026, 3, 3)
AT = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    path: Path = tmp_path_factory.mktemp("quality") / "q.duckdb"
    s = Store.open(path)
    # O1: three vehicles; V3 silent both days, V2 silent on day 2; R1 is reserve (never dark).
    rows = [
        (DAY1, "O1", "V1", True, False, 500),
        (DAY1, "O1", "V2", True, False, 400),
        (DAY1, "O1", "V3", False, False, 0),
        (DAY1, "O1", "R1", False, True, 0),
        (DAY2, "O1", "V1", True, False, 450),
        (DAY2, "O1", "V2", False, False, 0),
        (DAY2, "O1", "V3", False, False, 0),
        (DAY1, "O2", "W1", True, False, 300),
    ]
    write(
        s,
        "avl_coverage",
        pl.DataFrame(
            rows,
            schema=[
                "service_date",
                "operator_id",
                "vehicle_id",
                "is_reporting",
                "is_reserve",
                "n_pings",
            ],
            orient="row",
        ).with_columns(pl.lit(AT).alias("last_ping_at")),
    )
    write(
        s,
        "feed_outages",
        pl.DataFrame(
            {
                "service_date": [DAY2],
                "operator_id": ["O1"],
                "started_at": [AT],
                "ended_at": [datetime(2026, 3, 3, 15, 0, tzinfo=UTC)],
                "duration_s": [3 * 3600],
                "n_trips_not_evaluated": [12],
            }
        ),
    )
    write(
        s,
        "quarantine",
        pl.DataFrame(
            {
                "source": ["avl.csv", "avl.csv", "avl.csv", "fares.csv"],
                "record_key": ["7", "9", "12", "3"],
                "target_table": ["vehicle_locations"] * 3 + ["fare_transactions"],
                "reason": ["lat out of range"] * 2 + ["missing event_at", "unknown vehicle"],
                "raw_record": ["x"] * 4,
                "quarantined_at": [AT] * 4,
            }
        ),
    )
    write(
        s,
        "trip_crowding",
        pl.DataFrame(
            {
                "service_date": [DAY1, DAY1],
                "vehicle_id": ["V1", "V2"],
                "run_index": [0, 0],
                "trip_id": ["T1", "T2"],
                "route_id": ["L1", "L1"],
                "max_load": [141.0, 60.0],
                "n_seats": [38, 38],
                "standing_area_m2": [8.0, 8.0],
            }
        ),
    )
    return s


def test_coverage_per_day_and_operator(store: Store) -> None:
    days = q.read_coverage_days(store, DAY1, DAY2, "")
    got = days.select(
        "service_date",
        "operator_id",
        "n_vehicles",
        "n_reporting",
        "n_dark",
        "n_pings",
        "n_outages",
        "outage_s",
    ).rows()
    assert got == [
        (DAY1, "O1", 4, 2, 1, 900, 0, 0),  # the reserve bus R1 is not "dark"
        (DAY1, "O2", 1, 1, 0, 300, 0, 0),
        (DAY2, "O1", 3, 1, 2, 450, 1, 10800),
    ]
    assert days["reporting_share"].to_list() == [0.5, 1.0, pytest.approx(1 / 3)]
    assert q.read_coverage_days(store, DAY1, DAY2, "O2").height == 1


def test_silent_vehicles_most_silent_first(store: Store) -> None:
    silent = q.read_silent_vehicles(store, DAY1, DAY2, "O1")
    assert silent.select("vehicle_id", "n_dark_days", "n_days").rows() == [
        ("V3", 2, 2),
        ("V2", 1, 2),
    ]


def test_feed_outages_and_quarantine_grouped_by_reason(store: Store) -> None:
    outages = q.read_feed_outages(store, DAY1, DAY2, "")
    assert outages.select("operator_id", "duration_s", "n_trips_not_evaluated").rows() == [
        ("O1", 10800, 12)
    ]
    rejected = q.read_quarantine_summary(store)
    assert rejected.select("target_table", "reason", "n_records", "example_key").rows() == [
        ("vehicle_locations", "lat out of range", 2, "7"),
        ("fare_transactions", "unknown vehicle", 1, "3"),
        ("vehicle_locations", "missing event_at", 1, "12"),
    ]


def test_a_load_no_bus_can_carry_is_flagged_not_shown_as_crowding(store: Store) -> None:
    # 38 seats + 10 standees/m² × 8 m² = 118: 141 on board is a counting error; 60 is not.
    loads = q.read_implausible_loads(store, DAY1, DAY2, None, 10.0)
    assert loads.select("trip_id", "max_load", "physical_capacity").rows() == [("T1", 141.0, 118.0)]
    assert q.read_implausible_loads(store, DAY1, DAY2, ("L2",), 10.0).is_empty()
    assert q.read_implausible_loads(store, DAY1, DAY2, (), 10.0).is_empty()
