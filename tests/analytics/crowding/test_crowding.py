"""Crowding summary (line × direction × hour) and the store round trip of `pontual crowding`."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from analytics.crowding.job import CrowdingInputs, CrowdingOptions, compute_crowding
from core.profile import load_profile
from core.store import Store
from pontual.cli import main
from tests.analytics.crowding.test_alightings import WALK_1KM
from tests.analytics.crowding.test_boardings import TZ, line_r

OPTIONS = CrowdingOptions(alighting=WALK_1KM)

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")


def inputs() -> CrowdingInputs:
    return CrowdingInputs(
        taps=line_r("taps", "fare_transactions"),
        stop_visits=line_r("stop_visits", "stop_visits"),
        trips=line_r("trips"),
        vehicles=line_r("vehicles_small_and_fallback"),
        stops=line_r("stops"),
    )


def test_summary_share_worst_segment_and_remedy() -> None:
    s = compute_crowding(inputs(), BG, OPTIONS).crowding_summary.sort("direction_id")
    assert BG.general.timezone.value == TZ
    out = s.row(0, named=True)  # direction 0, 10:00 UTC: V1 run 0 (over) and V2 run 0
    assert (out["n_trips"], out["n_over_limit"], out["over_limit_share"]) == (2, 1, 0.5)
    # A->B: loads 4 and 0 (standees 5 and 0 per m²); B->C: 11/3 and 2 (4.17 and 0)
    assert (out["worst_from_stop_id"], out["worst_to_stop_id"]) == ("A", "B")
    assert out["worst_mean_standees_per_m2"] == pytest.approx(2.5)
    assert out["peak_segment_load"] == pytest.approx(11 / 3 + 2)
    # capacity at 4/m²: V1 2 + 4 × 0.4 = 3.6, V2 (padron fallback) 40 + 4 × 8 = 72
    assert out["capacity_at_limit"] == pytest.approx((3.6 + 72) / 2)
    assert out["is_action_required"] is True  # BG: whenever the limit is exceeded
    assert (out["n_trips_needed"], out["extra_trips_needed"]) == (1, 0)
    # the peak run carries 4: the smallest type above the hour's mean capacity that carries it
    assert out["larger_vehicle_type"] == "convencional"
    back = s.row(1, named=True)
    assert (back["n_trips"], back["n_over_limit"], back["is_action_required"]) == (1, 0, False)
    assert back["extra_trips_needed"] == 0 and back["larger_vehicle_type"] is None


def test_extra_trips_when_the_peak_load_exceeds_the_hours_capacity() -> None:
    # the same taps on 1-seat vehicles with 0.2 m² standing: capacity 1.8 per run at 4/m²
    data = inputs()
    small = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V2"],
            "vehicle_type": ["micro", "micro"],
            "n_seats": [1, 1],
            "standing_area_m2": [0.2, 0.2],
        }
    )
    s = compute_crowding(
        CrowdingInputs(data.taps, data.stop_visits, data.trips, small, data.stops), BG, OPTIONS
    ).crowding_summary.filter(pl.col("direction_id") == 0)
    row = s.row(0, named=True)
    assert row["n_over_limit"] == 2  # V2 carries 2 on B->C: 1 standee on 0.2 m² = 5 per m²
    assert row["n_trips_needed"] == 4  # ceil((11/3 + 2) / 1.8)
    assert row["extra_trips_needed"] == 2
    assert row["larger_vehicle_type"] == "micro"


def test_cgs_limit_is_looser() -> None:
    trips = compute_crowding(inputs(), CGS, OPTIONS).trip_crowding
    # 5 standees per m² break BG's 4 but not CGS's 7.5
    assert trips.filter(pl.col("is_over_limit")).height == 0


def seed_store(path: Path) -> None:
    """The line R scenario written into a fresh store, as ingest and matching would."""
    from datetime import UTC, datetime

    with Store.open(path) as store:
        store.append(
            "feed_versions",
            pl.DataFrame(
                {
                    "feed_id": ["f1"],
                    "source": ["line_r"],
                    "source_sha256": ["0"],
                    "loaded_at": [datetime(2026, 3, 1, tzinfo=UTC)],
                    "timezone": [TZ],
                    "crs_epsg": [31982],
                    "valid_from": [date(2026, 3, 1)],
                    "valid_to": [date(2026, 3, 31)],
                    "pontual_version": ["test"],
                }
            ),
        )
        store.append("gtfs_stops", line_r("stops").with_columns(pl.lit("f1").alias("feed_id")))
        trips = line_r("trips").with_columns(
            pl.lit("f1").alias("feed_id"),
            pl.col("trip_id").alias("template_trip_id"),
            pl.lit("wk").alias("service_id"),
            pl.lit(0).alias("planned_start_s"),
            pl.lit(0).alias("planned_end_s"),
            pl.lit(datetime(2026, 3, 2, 10, tzinfo=UTC)).alias("planned_start_at"),
            pl.lit(datetime(2026, 3, 2, 11, tzinfo=UTC)).alias("planned_end_at"),
            pl.lit(1200.0).alias("planned_distance_m"),
            pl.lit("A").alias("first_stop_id"),
            pl.lit("D").alias("last_stop_id"),
            pl.lit(4).alias("n_stops"),
            pl.lit(True).alias("is_exact_times"),
        )
        store.append("scheduled_timetable_trips", trips)
        store.append(
            "vehicles",
            line_r("vehicles_small_and_fallback"),
            fill={
                "operator_id": "op",
                "service_area": "urban",
                "service_class": "conventional",
                "manufacture_year": 2020,
                "source": "fixture",
                "ingested_at": datetime(2026, 3, 1, tzinfo=UTC),
            },
        )
        store.append("fare_transactions", line_r("taps", "fare_transactions"))
        store.append("stop_visits", line_r("stop_visits", "stop_visits"))


def test_pontual_crowding_writes_the_tables_and_reruns_idempotently(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path.parent.mkdir(parents=True)
    seed_store(store_path)
    args = ["--store", str(store_path), "crowding", "--from", "2026-03-02"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "13 validações" in out and "10 embarques localizados" in out
    assert "no_vehicle" in out and "vehicle_without_trips" in out
    assert main(args) == 0  # a re-run replaces the day's rows
    with Store.open(store_path, read_only=True) as store:
        assert store.count("tap_placements") == 13
        assert store.count("trip_loads") == 12
        assert store.count("trip_crowding") == 3
        assert store.count("crowding_summary") == 2
        placed = store.read("tap_placements", "transaction_id = ?", ["t02"]).row(0, named=True)
        assert (placed["route_id"], placed["alighting_stop_id"], placed["walk_m"]) == ("R", "B", 0)
        # with the default 400 m walking limit, c2's 800 m walk home stays unlinked
        far = store.read("tap_placements", "transaction_id = ?", ["t07"]).row(0, named=True)
        assert far["alighting_method"] == "unlinked"
        assert placed["profile_id"] == "bento-goncalves-2021"
        peak = store.query(
            "SELECT max_load, is_over_limit FROM trip_crowding WHERE vehicle_id = 'V1' AND run_index = 0"
        ).row(0)
        assert peak == (4.0, True)
