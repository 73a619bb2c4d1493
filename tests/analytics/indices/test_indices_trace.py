"""End to end through the store: `run_indices` writes the tables, `pontual indices` prints them,
and an ICV value is followed down to its trip rows and their ping ids."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from analytics.indices.job import run_indices
from analytics.indices.trace import read_trace_pings, trace_indicator
from core.periods import parse_period
from core.store import Store
from pontual.cli import main
from tests.analytics.indices.test_icv import PROFILE, fixture_frames

PERIOD = parse_period("2026-03")
PING_OFFSETS_MIN = (0, 10, 20, 30)


def build_store(path: Path) -> None:
    """The hand-checked fixture in a store, with four pings per run and its trips_performed."""
    f = fixture_frames()
    outcomes = f["outcomes"]
    runs = outcomes.filter(pl.col("vehicle_id").is_not_null())
    pings = (
        runs.select(
            "vehicle_id",
            "service_date",
            "run_index",
            pl.col("planned_start_at").alias("start"),
        )
        .join(pl.DataFrame({"offset_min": PING_OFFSETS_MIN}), how="cross")
        .with_columns(
            (pl.col("start") + pl.duration(minutes=pl.col("offset_min"))).alias("event_at"),
            pl.lit(-29.17).alias("lat"),
            pl.lit(-51.52).alias("lon"),
            pl.lit("fixture").alias("source"),
            pl.col("start").alias("ingested_at"),
        )
    )
    with Store.open(path) as store:
        store.append("vehicle_locations", pings.sort("event_at"))
        stored = store.read("vehicle_locations")
        ids = (
            pings.select("vehicle_id", "event_at", "service_date", "run_index")
            .join(stored.select("vehicle_id", "event_at", "ping_id"), on=["vehicle_id", "event_at"])
            .group_by("service_date", "vehicle_id", "run_index")
            .agg(
                # the store numbers pings in no particular order: first and last in time
                pl.col("ping_id").sort_by("event_at").first().alias("first_ping_id"),
                pl.col("ping_id").sort_by("event_at").last().alias("last_ping_id"),
                pl.len().alias("n_pings"),
                pl.col("event_at").min().alias("started_at"),
                pl.col("event_at").max().alias("ended_at"),
            )
        )
        performed = (
            runs.select(
                "service_date",
                "vehicle_id",
                "run_index",
                "trip_id",
                "route_id",
                "direction_id",
                "distance_run_m",
            )
            .join(ids, on=["service_date", "vehicle_id", "run_index"])
            .with_columns(
                pl.col("route_id").alias("shape_id"),
                pl.lit("inferred").alias("match_method"),
                pl.lit(0.0).alias("start_dist_m"),
                pl.col("distance_run_m").alias("end_dist_m"),
                pl.lit(10_000.0).alias("shape_length_m"),
                pl.lit(1.0).alias("coverage_ratio"),
                pl.lit(True).alias("is_departed"),
                pl.lit(True).alias("is_arrived"),
                (pl.col("trip_id") == "t01").cast(pl.Int32).alias("n_off_route"),
                pl.lit(0).alias("off_route_s"),
                pl.lit(1.0).alias("gps_completeness_ratio"),
                pl.lit(True).alias("is_counted"),
            )
        )
        stamp = {"pontual_version": "test", "profile_id": PROFILE.id}
        store.append("trips_performed", performed, fill=stamp)
        with_pings = outcomes.drop("first_ping_id", "last_ping_id", "n_pings").join(
            ids.select(
                "service_date",
                "vehicle_id",
                "run_index",
                "first_ping_id",
                "last_ping_id",
                "n_pings",
            ),
            on=["service_date", "vehicle_id", "run_index"],
            how="left",
        )
        store.append("trip_outcomes", with_pings)
        store.append("breakdowns", f["breakdowns"])
        store.append("vehicles", f["vehicles"])
        store.append("gtfs_routes", f["routes"])


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "pontual.duckdb"
    build_store(path)
    return path


def stored(store: Store, scope: str, scope_id: str, indicator: str) -> dict[str, object]:
    rows = store.read(
        "indicators",
        "scope = ? AND scope_id = ? AND period = ? AND indicator = ?",
        [scope, scope_id, PERIOD.label, indicator],
    )
    assert rows.height == 1
    return rows.row(0, named=True)


def test_run_indices_writes_the_hand_checked_values(store_file: Path) -> None:
    with Store.open(store_file) as store:
        results = run_indices(store, PROFILE, PERIOD)
        t10 = stored(store, "line", "T10", "icv_fulfilment")
        # t06 (suppressed under an approved incident) stays counted: art. 57 §1 excuses delays
        assert (t10["numerator"], t10["denominator"], t10["value"]) == (6.0, 9.0, 6 / 9)
        assert t10["profile_id"] == PROFILE.id and t10["source"] == "BG art. 57-I-a"
        # the breakdown off any line went to V11's operator
        assert stored(store, "operator", "O1", "breakdowns")["value"] == 1.0
        # a re-run replaces the period: same number of rows
        n = store.count("indicators")
        run_indices(store, PROFILE, PERIOD)
        assert store.count("indicators") == n
        inf = store.read("suggested_infractions")
        assert set(inf["status"]) == {"sugestão"}
        assert "XXIV" in set(inf["item"])  # t01 left the itinerary
        assert store.count("fleet_days") == results.fleet_days.height


def test_icv_value_traced_to_trips_and_pings(store_file: Path) -> None:
    with Store.open(store_file) as store:
        run_indices(store, PROFILE, PERIOD)
        value = stored(store, "line", "T10", "icv_punctuality")
        trace = trace_indicator(store, PROFILE, "line", "T10", PERIOD.label, "icv_punctuality")
        assert trace["in_numerator"].sum() == value["numerator"] == 4.0
        assert trace["in_denominator"].sum() == value["denominator"] == 6.0
        on_time = trace.filter(pl.col("in_numerator") == 1)
        assert on_time["trip_id"].to_list() == ["t01", "t07", "t02", "t10"]
        # each traced trip reaches its pings through trips_performed
        assert on_time["run_n_pings"].to_list() == [len(PING_OFFSETS_MIN)] * 4
        pings = read_trace_pings(store, on_time)
        assert pings.height == 4 * len(PING_OFFSETS_MIN)
        t01 = pings.filter(pl.col("trip_id") == "t01")
        first = on_time.filter(pl.col("trip_id") == "t01").row(0, named=True)
        assert t01["ping_id"][0] == first["run_first_ping_id"] == first["first_ping_id"]
        assert t01["event_at"].min() == first["planned_start_at"]
        assert t01["event_at"].max() == first["planned_start_at"] + timedelta(minutes=30)


def test_cli_prints_and_traces(store_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(store_file)
    assert (
        main(
            [
                "--store",
                store,
                "indices",
                "--period",
                "2026-03",
                "--format",
                "json",
                "--scope",
                "line:D50",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    score = next(r for r in rows if r["indicator"] == "icv_score")
    assert score["value"] == pytest.approx(70.0)
    assert main(["--store", store, "indices", "--period", "2026-03"]) == 0
    out = capsys.readouterr().out
    assert "Índices de 2026-03" in out and "ICV" in out and "sugestão" in out.lower()
    assert (
        main(
            [
                "--store",
                store,
                "indices",
                "--period",
                "2026-03",
                "--trace",
                "icv_fulfilment",
                "--scope",
                "line:T10",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    trace = pl.read_csv(capsys.readouterr().out.encode())
    assert trace["in_numerator"].sum() == 6 and trace["in_denominator"].sum() == 9


def test_cli_refuses_a_bad_period(store_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(store_file), "indices", "--period", "2026-13"]) == 2
    assert "período inválido" in capsys.readouterr().err
