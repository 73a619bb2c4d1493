"""Accuracy against the simulator's truth (one simulated weekday, 30 s pings, sigma 8 m).

Measured at this commit: outcome agreement 89.5 % of 923 trips, origin-departure error median
4 s, p95 340 s (the tail is trips matched to the wrong vehicle). The issue's targets (99.5 %,
p95 <= 30 s) are not met yet: the main error is partial runs of vehicles of other lines on a
shared corridor taking trips (see the disagreements report), so the target test is xfail.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analytics.disagreements import compare_outcomes, compute_agreement
from analytics.match_day import DayResult, Schedule, match_day
from analytics.options import MatchOptions
from core.profile import load_profile
from core.tables.observed import INCIDENTS
from gtfs.read import read_feed
from gtfs.schedule import build_geometry, build_scheduled_trips
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[DayResult, pl.DataFrame]:
    out: Path = tmp_path_factory.mktemp("sim")
    simulate(SimulationOptions(days=1, write_text_avl=False), out)
    feed = read_feed(out / "gtfs")
    geometry = build_geometry(feed)
    truth = pl.read_parquet(out / "truth" / "trips.parquet")
    day = truth["service_date"][0]
    trips = build_scheduled_trips(feed, day, day, geometry=geometry)
    stop_times = geometry.stop_times.rename(
        {"arrival_time": "arrival_time_s", "departure_time": "departure_time_s"}
    )
    schedule = Schedule(day, trips, stop_times, geometry.shapes, geometry.stops, geometry.epsg)
    pings = (
        pl.read_parquet(out / "avl.parquet")
        .with_row_index("ping_id")
        .with_columns(pl.col("ping_id").cast(pl.Int64))
    )
    raw = pl.read_csv(out / "incidents.csv", infer_schema_length=0)
    incidents = INCIDENTS.conform(
        raw.with_columns(
            pl.col("starts_at", "ends_at").str.to_datetime(time_zone="UTC"),
            pl.col("is_justified") == "true",
            pl.lit("simulator").alias("source"),
        ).with_columns(pl.col("starts_at").alias("ingested_at"))
    )
    result = match_day(
        pings, schedule, incidents, load_profile("bento-goncalves-2021"), MatchOptions()
    )
    return result, truth


def test_accuracy_floor_and_report(simulated: tuple[DayResult, pl.DataFrame]) -> None:
    result, truth = simulated
    figures = compute_agreement(result.trip_outcomes, truth)
    assert figures["n_trips"] == truth.height
    assert figures["agreement"] >= 0.88  # measured 0.895: a regression floor
    assert figures["start_error_median_s"] <= 10
    report = compare_outcomes(result.trip_outcomes, truth)
    assert report.height == round((1 - figures["agreement"]) * truth.height)
    assert report["why"].null_count() == 0


def test_injected_breakdowns_with_event_code_are_found(
    simulated: tuple[DayResult, pl.DataFrame],
) -> None:
    result, truth = simulated
    declared = truth.filter(pl.col("true_outcome") == "broken_down")
    found = result.breakdowns.filter(pl.col("source") == "event_code")
    assert found.height >= 1
    assert set(found["trip_id"].drop_nulls()) <= set(declared["trip_id"])


@pytest.mark.xfail(
    reason="issue 5 target not reached yet: measured 89.5 % agreement, p95 340 s", strict=False
)
def test_issue_targets(simulated: tuple[DayResult, pl.DataFrame]) -> None:
    figures = compute_agreement(simulated[0].trip_outcomes, simulated[1])
    assert figures["agreement"] >= 0.995
    assert figures["start_error_p95_s"] <= 30
