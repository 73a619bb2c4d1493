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


def seed_store(path: Path, taps: pl.DataFrame | None = None) -> None:
    """The line R scenario written into a fresh store, as ingest and matching would (`taps`:
    its `fare_transactions`, the fixture's by default)."""
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
        store.append(
            "fare_transactions", line_r("taps", "fare_transactions") if taps is None else taps
        )
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
    assert main(["--quiet", *args]) == 0  # a re-run replaces the day's rows
    assert capsys.readouterr().out == ""  # --quiet prints only errors: no counts, no tables
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


def _two_operators_taps(twin_id: str) -> pl.DataFrame:
    """The line R taps, all of operator A, plus a tap of operator B at t02's instant on the
    same bus (another card, c9) whose id is `twin_id`."""
    taps = line_r("taps", "fare_transactions").with_columns(pl.lit("A").alias("operator_id"))
    twin = taps.filter(pl.col("transaction_id") == "t02").with_columns(
        pl.lit(twin_id).alias("transaction_id"),
        pl.lit("B").alias("operator_id"),
        pl.lit("c9").alias("card_hash"),
    )
    return pl.concat([taps, twin])


def test_two_operators_taps_with_one_id_at_one_instant_are_both_placed(tmp_path: Path) -> None:
    # A validator's id is unique only within its operator (ADR 0040): operators A and B both
    # sent a tap "t02" at 10:01 on V1 (legal input, kept by ingest). Before the placements
    # carried the operator (ADR 0103), their one key stopped `pontual crowding` for the day.
    stores = {}
    for twin_id in ("t02", "t02b"):  # the same taps, the twin's id shared or its own
        stores[twin_id] = tmp_path / twin_id / "pontual.duckdb"
        stores[twin_id].parent.mkdir()
        seed_store(stores[twin_id], _two_operators_taps(twin_id))
        assert main(["--store", str(stores[twin_id]), "crowding", "--from", "2026-03-02"]) == 0
    with Store.open(stores["t02"], read_only=True) as store:
        n_taps = store.count("fare_transactions")
        shared = store.read("tap_placements")
        loads = {name: store.read(name) for name in ("trip_loads", "trip_crowding")}
    with Store.open(stores["t02b"], read_only=True) as store:
        distinct = store.read("tap_placements")
        loads_distinct = {name: store.read(name) for name in ("trip_loads", "trip_crowding")}
    # every tap placed or explained once: the 13 taps of A and B's twin
    assert n_taps == shared.height == 14
    assert shared.select("operator_id", "transaction_id", "event_at").n_unique() == 14
    twins = shared.filter(pl.col("transaction_id") == "t02").sort("operator_id")
    assert twins["operator_id"].to_list() == ["A", "B"]
    # both boarded V1's run 0 at A; A's card (c2) rode again (t07: chained), B's did not
    assert twins.select("placement", "vehicle_id", "run_index", "stop_id").rows() == [
        ("placed", "V1", 0, "A"),
        ("placed", "V1", 0, "A"),
    ]
    assert twins["alighting_method"].to_list() == ["chained", "unlinked"]
    assert twins["reason"][1].startswith("único embarque do cartão no dia")
    # the same rows as with distinct ids, but the twin's id
    renamed = distinct.with_columns(
        pl.when(pl.col("transaction_id") == "t02b")
        .then(pl.lit("t02"))
        .otherwise("transaction_id")
        .alias("transaction_id")
    )
    order = ["operator_id", "transaction_id", "event_at"]
    assert shared.sort(order).equals(renamed.sort(order))
    # and the same loads: V1's run 0 has the fixture's 5 taps and peak of 4 (the test
    # above), and B's rider on board from A
    for name, frame in loads.items():
        assert frame.equals(loads_distinct[name]), name
    run = pl.col("vehicle_id") == "V1", pl.col("run_index") == 0
    peak = loads["trip_crowding"].filter(*run).row(0, named=True)
    assert (peak["n_taps"], peak["max_load"], peak["max_load_stop_id"]) == (6, 5.0, "A")


def test_a_tie_in_the_worst_segment_goes_to_the_first_stop_whatever_the_last_bits() -> None:
    """Two segments whose mean standees are equal but summed in another order (0.1 + 0.2
    against 0.15 + 0.15: they differ in the last bit) tie, and the tie goes to the first
    segment by stop id, as a true tie does: a re-run whose parallel sums add in another order
    names the same worst segment."""
    from analytics.crowding.job import compute_crowding_summary

    result = compute_crowding(inputs(), BG, OPTIONS)
    run = (pl.col("vehicle_id") == "V1") & (pl.col("run_index") == 0)
    other = (pl.col("vehicle_id") == "V2") & (pl.col("run_index") == 0)
    ab = (pl.col("stop_id") == "A") & (pl.col("next_stop_id") == "B")
    bc = (pl.col("stop_id") == "B") & (pl.col("next_stop_id") == "C")
    standees = (
        pl.when(run & ab)
        .then(0.15)
        .when(other & ab)
        .then(0.15)
        .when(run & bc)
        .then(0.1)
        .when(other & bc)
        .then(0.2)
        .otherwise(0.0)
    )
    loads = result.trip_loads.with_columns(
        standees.alias("standees_per_m2"),
        pl.when(ab | bc).then(1.0).otherwise(pl.col("load_after")).alias("load_after"),
    )
    assert (0.1 + 0.2) / 2 > (0.15 + 0.15) / 2  # the last bits would pick B->C
    summary = compute_crowding_summary(result.trip_crowding, loads, BG)
    out = summary.sort("direction_id").row(0, named=True)
    assert (out["worst_from_stop_id"], out["worst_to_stop_id"]) == ("A", "B")
    assert out["worst_mean_standees_per_m2"] == pytest.approx(0.15)
