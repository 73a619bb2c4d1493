"""Accuracy on the simulator, with the truth stop visits as input (crowding tested apart from
matching). The simulator's riders are people on tours (one card = one person: home -> work ->
home, some with a transfer near where the first leg ended; some one-way riders, some walks of a
stop), so trip chaining meets the logic it assumes plus some noise.

Measured on one busy day (900 riders per vehicle, seed 1): boardings per trip exact on every
run; max load within ±10 % of the truth on 0.970 of trips (0.987 with a 1-passenger floor);
over-limit F1 0.990; 0.961 of placed taps are chained, 0.956 of them to the true stop.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from pyproj import Transformer

from analytics.crowding.job import CrowdingInputs, CrowdingResult, compute_crowding
from core.profile import load_profile
from gtfs.geometry import choose_crs
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate

BG = load_profile("bento-goncalves-2021")


def read_simulated(d: Path) -> tuple[CrowdingInputs, pl.DataFrame, pl.DataFrame]:
    """Crowding inputs from a simulator folder (truth stop visits), truth trips and loads."""
    sv = pl.read_parquet(d / "truth" / "stop_visits.parquet")
    first = ["service_date", "vehicle_id", "trip_id"]
    runs = (
        sv.group_by(first)
        .agg(pl.col("arrived_at").min().alias("t0"))
        .with_columns(
            pl.col("t0")
            .rank("ordinal")
            .over("service_date", "vehicle_id")
            .cast(pl.Int32)
            .sub(1)
            .alias("run_index")
        )
        .drop("t0")
    )
    visits = sv.join(runs, on=first).rename(
        {"arrived_at": "arrival_at", "departed_at": "departure_at"}
    )
    taps = pl.read_csv(
        d / "fares.csv", schema_overrides={"vehicle_id": pl.String, "card_id": pl.String}
    ).with_columns(pl.col("event_at").str.to_datetime(time_zone="UTC"))
    taps = taps.rename({"card_id": "card_hash"})  # the simulator's ids stand for the hashes
    stops = pl.read_csv(d / "gtfs" / "stops.txt", schema_overrides={"stop_id": pl.String})
    epsg = choose_crs(stops["stop_lat"].mean(), stops["stop_lon"].mean())  # type: ignore[arg-type]
    x, y = Transformer.from_crs(4326, epsg, always_xy=True).transform(
        stops["stop_lon"].to_numpy(), stops["stop_lat"].to_numpy()
    )
    stops = stops.select("stop_id", pl.Series("stop_x_m", x), pl.Series("stop_y_m", y))
    truth = pl.read_parquet(d / "truth" / "trips.parquet")
    vehicles = pl.read_csv(d / "vehicles.csv", schema_overrides={"vehicle_id": pl.String})
    trips = truth.select("service_date", "trip_id", "route_id", "direction_id")
    inputs = CrowdingInputs(taps, visits, trips, vehicles, stops)
    return inputs, truth, pl.read_parquet(d / "truth" / "loads.parquet")


def measure(
    result: CrowdingResult, truth: pl.DataFrame, loads: pl.DataFrame, taps: pl.DataFrame
) -> dict[str, float]:
    """Share of runs with exact boardings, max load within ±10 % (and with a 1-passenger
    floor), and the F1 of over-limit detection."""
    true_b = loads.group_by("service_date", "trip_id").agg(pl.col("n_boardings").sum().alias("b"))
    est = result.trip_crowding.join(
        truth.select("service_date", "trip_id", "max_load", "max_standees_per_m2"),
        on=["service_date", "trip_id"],
        suffix="_true",
    ).join(true_b, on=["service_date", "trip_id"])
    err = (est["max_load"] - est["max_load_true"]).abs().to_numpy()
    true_max = est["max_load_true"].to_numpy().astype(float)
    over = est["is_over_limit"].fill_null(False).to_numpy()
    real = (est["max_standees_per_m2_true"] > BG.crowding.standees_max_per_m2.value).to_numpy()
    tp, fp, fn = int((over & real).sum()), int((over & ~real).sum()), int((~over & real).sum())
    chained = (
        result.tap_placements.filter(pl.col("alighting_method").is_in(["chained", "chained_home"]))
        .select("transaction_id", "alighting_stop_sequence")
        .join(taps, on="transaction_id", suffix="_true")
    )
    n_placed = result.tap_placements.filter(pl.col("placement") == "placed").height
    return {
        "chained_share": chained.height / n_placed if n_placed else 0.0,
        "alighting_exact": float(
            (chained["alighting_stop_sequence"] == chained["alighting_stop_sequence_true"]).mean()  # type: ignore[arg-type]
        ),
        "n_runs": est.height,
        "n_runs_truth": truth.filter(pl.col("vehicle_id").is_not_null()).height,
        "boardings_exact": float((est["n_boardings"] == est["b"]).mean()),  # type: ignore[arg-type]
        "max_load_10pct": float((err <= 0.1 * true_max + 1e-9).mean()),
        "max_load_10pct_or_1": float((err <= np.maximum(0.1 * true_max, 1.0)).mean()),
        "n_over_true": int(real.sum()),
        "f1_over_limit": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0,
    }


@pytest.fixture(scope="module")
def busy_day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    out = tmp_path_factory.mktemp("sim")
    simulate(SimulationOptions(days=1, riders_per_vehicle_day=900.0, write_text_avl=False), out)
    inputs, truth, loads = read_simulated(out)
    taps = pl.read_parquet(out / "truth" / "taps.parquet")
    return measure(compute_crowding(inputs, BG), truth, loads, taps)


def test_boardings_per_trip_are_exact_when_taps_carry_vehicle_and_time(
    busy_day: dict[str, float],
) -> None:
    assert busy_day["n_runs"] == busy_day["n_runs_truth"]
    assert busy_day["boardings_exact"] == 1.0


def test_over_limit_trips_are_detected(busy_day: dict[str, float]) -> None:
    assert busy_day["n_over_true"] >= 30
    assert busy_day["f1_over_limit"] >= 0.9  # measured 0.990


def test_max_load_is_within_ten_percent_for_nine_trips_in_ten(busy_day: dict[str, float]) -> None:
    assert busy_day["max_load_10pct"] >= 0.9  # measured 0.970 (issue 7 target: 0.9)
    assert busy_day["max_load_10pct_or_1"] >= 0.95  # measured 0.987


def test_chained_alightings_are_the_true_stop(busy_day: dict[str, float]) -> None:
    # one-way riders and cards seen once stay unlinked; walks of a stop make some chains miss
    assert 0.9 <= busy_day["chained_share"] <= 0.99
    assert busy_day["alighting_exact"] >= 0.95
