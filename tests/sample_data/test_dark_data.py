"""Data-coverage faults of the simulator (issue 16): dark vehicle days and operator feed
outages, off by default, recorded in truth/avl_dark.parquet and absent from the pings."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from sample_data.options import SimulationOptions
from sample_data.simulate import simulate


def test_dark_vehicles_and_feed_outages_silence_their_units(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    simulate(SimulationOptions(days=1, write_text_avl=False), plain)
    assert not (plain / "truth" / "avl_dark.parquet").exists()

    out = tmp_path / "dark"
    simulate(
        SimulationOptions(
            days=1, write_text_avl=False, dark_vehicle_day_rate=0.1, feed_outages_per_day=1
        ),
        out,
    )
    dark = pl.read_parquet(out / "truth" / "avl_dark.parquet")
    assert dark.filter(pl.col("kind") == "vehicle_dark").height == 3
    feed = dark.filter(pl.col("kind") == "feed_outage").row(0, named=True)
    hours = (feed["end_at"] - feed["start_at"]).total_seconds() / 3600
    assert 1.5 <= hours <= 3.0  # feed_outage_duration_s default: 1.5 to 3 h
    pings = pl.read_parquet(out / "avl.parquet").with_columns(pl.col("vehicle_id").cast(pl.String))
    gone = dark.filter(pl.col("kind") == "vehicle_dark")["vehicle_id"]
    # a dark vehicle sends nothing all day, yet it ran its block: its trips are in the truth
    assert pings.filter(pl.col("vehicle_id").is_in(gone.implode())).height == 0
    truth = pl.read_parquet(out / "truth" / "trips.parquet").with_columns(
        pl.col("vehicle_id").cast(pl.String)
    )
    assert truth.filter(pl.col("vehicle_id").is_in(gone.implode())).height > 0
    # no unit of the operator sends inside the outage; its other units do outside it
    op = pings.filter(pl.col("operator_id") == feed["operator_id"])
    inside = pl.col("event_at").is_between(feed["start_at"], feed["end_at"])
    assert op.filter(inside).height == 0 and op.filter(~inside).height > 1000
    # everything else is as in the plain run: the faults have their own random stream
    plain_pings = pl.read_parquet(plain / "avl.parquet").with_columns(
        pl.col("vehicle_id").cast(pl.String)
    )
    kept = plain_pings.filter(
        ~pl.col("vehicle_id").is_in(gone.implode())
        & ~((pl.col("operator_id") == feed["operator_id"]) & inside)
    )
    assert kept.height == pings.height
