"""The simulator's demand: one card is one person whose day is a tour (home -> destination ->
home), some with a transfer a short walk from where the first leg ended (BG art. 7-V)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from core.profile import load_profile
from sample_data.network import from_wgs84
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate

OPTS = SimulationOptions(days=2, seed=3, write_text_avl=False)
_WINDOW = load_profile(OPTS.profile_id).fares.integration_window_s
assert _WINDOW is not None
WINDOW_S = _WINDOW.value


@pytest.fixture(scope="module")
def legs(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """Every tap with its card, line, boarding and true alighting stop (id and metres)."""
    out = tmp_path_factory.mktemp("sim")
    simulate(OPTS, out)
    fares = pl.read_csv(
        out / "fares.csv", schema_overrides={"card_id": pl.String, "vehicle_id": pl.String}
    ).with_columns(pl.col("event_at").str.to_datetime(time_zone="UTC"))
    stops = pl.read_csv(out / "gtfs" / "stops.txt", schema_overrides={"stop_id": pl.String})
    x, y = from_wgs84(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy())
    xy = stops.select("stop_id", x=pl.Series(x), y=pl.Series(y))
    visits = pl.read_parquet(out / "truth" / "stop_visits.parquet").select(
        "service_date", "trip_id", "stop_sequence", "stop_id"
    )
    taps = pl.read_parquet(out / "truth" / "taps.parquet")
    on = ["service_date", "trip_id", "stop_sequence"]
    return (
        fares.join(taps, on="transaction_id")
        .join(visits.join(xy, on="stop_id"), on=on)
        .join(
            visits.join(xy, on="stop_id").rename(
                {"stop_sequence": "alighting_stop_sequence", "stop_id": "off_stop_id"}
            ),
            on=["service_date", "trip_id", "alighting_stop_sequence"],
            suffix="_off",
        )
        .sort("card_id", "event_at")
    )


def test_a_card_is_one_person_with_the_same_home_every_day(legs: pl.DataFrame) -> None:
    home = (
        legs.filter(pl.col("leg") == 1)
        .group_by("card_id")
        .agg(pl.col("stop_id").n_unique().alias("n_homes"), pl.col("service_date").n_unique())
    )
    both_days = home.filter(pl.col("service_date") == 2)
    assert both_days.height > 1000
    assert (both_days["n_homes"] == 1).all()
    # at most one tour a day: legs 1-4 at most once per card and day
    assert legs.group_by("card_id", "service_date", "leg").len()["len"].max() == 1


def test_the_return_ends_at_or_a_stop_from_home(legs: pl.DataFrame) -> None:
    day = (
        legs.sort("card_id", "service_date", "leg")
        .group_by("card_id", "service_date", maintain_order=True)
        .agg(
            pl.col("leg").first().alias("first_leg"),
            pl.col("leg").last().alias("last_leg"),
            pl.col("stop_id").first().alias("home"),
            pl.col("off_stop_id").last().alias("back"),
            (
                (pl.col("x").first() - pl.col("x_off").last()) ** 2
                + (pl.col("y").first() - pl.col("y_off").last()) ** 2
            )
            .sqrt()
            .alias("walk_m"),
        )
    )
    tours = day.filter((pl.col("first_leg") == 1) & (pl.col("last_leg") >= 3))
    assert tours.height / day.height > 0.85  # the rest ride one way
    exact = (tours["home"] == tours["back"]).mean()
    assert 1 - OPTS.home_walk_rate - 0.03 <= exact <= 1.0  # type: ignore[operator]
    # a walk of one stop spacing at most (district lines space stops 900 m apart), but for
    # the few tours whose last bus did not run or skipped the stop (they end elsewhere)
    assert (tours["walk_m"] < 1000.0).mean() > 0.99  # type: ignore[operator]


def test_transfers_board_near_the_previous_alighting_within_the_window(
    legs: pl.DataFrame,
) -> None:
    pairs = (
        legs.sort("card_id", "service_date", "leg")
        .with_columns(
            pl.col("leg", "route_id", "x_off", "y_off", "event_at", "off_stop_id", "trip_id")
            .shift(1)
            .over("card_id", "service_date")
            .name.prefix("prev_")
        )
        .filter(pl.col("leg").is_in([2, 4]) & (pl.col("prev_leg") == pl.col("leg") - 1))
    )
    transfers = pairs.filter(pl.col("route_id") != pl.col("prev_route_id"))
    n_cards = legs.select("card_id", "service_date").unique().height
    n_transfer = transfers.select("card_id", "service_date").unique().height
    assert 0.08 < n_transfer / n_cards < 0.2  # second_leg_rate 0.15 of people
    walk = np.hypot(
        (transfers["x"] - transfers["prev_x_off"]).to_numpy(),
        (transfers["y"] - transfers["prev_y_off"]).to_numpy(),
    )
    # GTFS coordinates are rounded to 1e-6 degree: a few centimetres
    assert walk.max() <= OPTS.transfer_walk_max_m + 1.0
    assert np.mean(walk < 1.0) > 0.2  # a quarter change at a shared stop (0.25 measured)
    gap = (transfers["event_at"] - transfers["prev_event_at"]).dt.total_seconds()
    # riders pick the next bus from the planned times (the true ones depend on the loads
    # they make): when the first bus runs late and the second early, the second tap can
    # come before the first alighting (2 % of transfers measured; a known simplification)
    assert np.mean(gap.to_numpy() > 0) > 0.97
    assert np.mean(gap.to_numpy() <= WINDOW_S) > 0.95
    paying = transfers.filter(~pl.col("fare_class").is_in(["elderly", "disabled"]))
    in_window = paying.filter(
        (pl.col("event_at") - pl.col("prev_event_at")).dt.total_seconds().is_between(1, WINDOW_S)
    )
    assert (in_window["fare_class"] == "integration").all()


def test_circular_returns_ride_round_the_terminal_and_on_home(legs: pl.DataFrame) -> None:
    c20 = legs.filter(pl.col("route_id") == "C20")
    last_seq = c20["alighting_stop_sequence"].max()
    back = (
        c20.filter(pl.col("leg") >= 3)
        .group_by("card_id", "service_date")
        .agg(pl.col("leg", "stop_sequence", "alighting_stop_sequence").sort_by("leg"))
        .filter(pl.col("leg").list.len() == 2)
    )
    assert back.height > 50
    assert (back["alighting_stop_sequence"].list.first() == last_seq).all()
    assert (back["stop_sequence"].list.last() == 1).all()


def test_same_seed_same_riders(tmp_path: Path) -> None:
    opts = SimulationOptions(days=1, seed=5, write_text_avl=False, text_days=None)
    simulate(opts, tmp_path / "a")
    simulate(opts, tmp_path / "b")
    for name in ("fares.csv", "truth/taps.parquet", "truth/loads.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_selective_service_charges_every_card_the_full_fare(legs: pl.DataFrame) -> None:
    """BG art. 6-II: no exemption or discount on selective service (X60); the other lines
    keep their student, elderly and disabled taps."""
    x60 = legs.filter(pl.col("route_id") == "X60")
    assert x60.height > 0
    assert set(x60["fare_class"]) <= {"full", "vale_transporte", "integration"}
    full = x60.filter(pl.col("fare_class") != "integration")
    assert (full["amount"] == OPTS.fare_full_brl).all()
    others = legs.filter(pl.col("route_id") != "X60")
    assert {"student", "elderly", "disabled"} <= set(others["fare_class"])
