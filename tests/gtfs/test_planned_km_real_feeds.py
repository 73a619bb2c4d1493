"""Planned km on the real feeds against gtfs_kit's `compute_trip_stats`, one trip per shape.

gtfs_kit measures a trip as its last stop's projection minus its first stop's when the shape
is simple; when the shape crosses itself (loops, corridors run out and back) it gives up and
returns the whole shape's length (its own docstring: "a good approximation"). So:
- simple shapes: Pontual's planned km equal gtfs_kit's within 0.1 % per trip;
- self-intersecting shapes: gtfs_kit's whole length is the shape's length; Pontual's is the part
  between the first and last stops, so planned + lead-in + tail = gtfs_kit's figure within
  0.1 %, the stops are in order and on their shape (each within 50 m), and the trip is at least
  as long as the straight lines between its consecutive stops (less twice the stops' distances
  to the shape): a first stop put on a later pass fails that bound (it made a São Paulo loop
  1.8 m long instead of 8.8 km).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import shapely

from gtfs.read import Feed, read_feed
from gtfs.schedule import build_geometry
from tests.conftest import shared_data

FEEDS = {
    "porto_alegre": ("gtfs_brazil_gtfs2gps", "poa.zip"),
    "fortaleza": ("gtfs_brazil_gtfs2gps", "fortaleza.zip"),
    "sao_paulo": ("gtfs_brazil_gtfs2gps", "saopaulo.zip"),
    "wmata": ("avl_wmata_transittraj", "gtfs"),
}
TOLERANCE = 0.001
# Shapes that double back, checked by hand (São Paulo): 52936 is a loop whose first stop lies
# 4 m from its start, which is also its end (the first stop used to go to the end: 1.8 m); its
# last stop lies 321 m before the end. 51338 starts at its first stop, loops a block and passes
# the stop again 544 m on (4 m from it against 6 m at the start): the first pass is taken.
DOUBLING_BACK_M = {"sao_paulo": {"52936": 8806.0, "51338": 15573.1}}


def _one_trip_per_shape(feed: Feed) -> list[str]:
    trips = feed["trips"].filter(
        pl.col("trip_id").is_in(feed["stop_times"]["trip_id"].unique().implode())
    )
    return trips.sort("trip_id").unique("shape_id", keep="first")["trip_id"].to_list()


def _subset(feed: Feed, trip_ids: list[str]) -> Feed:
    keep = pl.col("trip_id").is_in(trip_ids)
    tables = dict(feed.tables)
    tables["trips"] = tables["trips"].filter(keep)
    tables["stop_times"] = tables["stop_times"].filter(keep)
    return type(feed)(source=feed.source, tables=tables)


def _gtfs_kit_km(path: Path, trip_ids: list[str]) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import gtfs_kit

        kit = gtfs_kit.read_feed(path, dist_units="km")
        kit.trips = kit.trips[kit.trips["trip_id"].isin(trip_ids)]
        kit.stop_times = kit.stop_times[kit.stop_times["trip_id"].isin(trip_ids)]
        stats = gtfs_kit.compute_trip_stats(kit, compute_dist_from_shapes=True)
    return pl.from_pandas(stats[["trip_id", "distance"]]).select(
        pl.col("trip_id").cast(pl.String), (pl.col("distance") * 1000.0).alias("kit_m")
    )


@pytest.mark.parametrize("name", list(FEEDS))
def test_planned_km_agree_with_gtfs_kit(name: str) -> None:
    path = shared_data(*FEEDS[name])
    feed = read_feed(path)
    sample = _one_trip_per_shape(feed)
    g = build_geometry(_subset(feed, sample))
    kit = _gtfs_kit_km(path, sample)
    st = g.stop_times.sort("trip_id", "stop_sequence").join(
        g.stops.select("stop_id", "stop_x_m", "stop_y_m"), on="stop_id", maintain_order="left"
    )
    chord = (pl.col("stop_x_m").diff().pow(2) + pl.col("stop_y_m").diff().pow(2)).sqrt().sum()
    per_trip = st.group_by("trip_id").agg(
        pl.col("shape_dist_m").first().alias("lead_in_m"),
        pl.col("shape_dist_m").last().alias("last_m"),
        pl.col("shape_dist_m").is_sorted().alias("is_ordered"),
        pl.col("stop_shape_gap_m").max().alias("max_gap_m"),
        pl.col("stop_shape_gap_m").sum().alias("sum_gap_m"),
        chord.alias("chord_m"),
    )
    shapes = g.shapes.sort("shape_id", "shape_pt_sequence")
    lines = shapes.group_by("shape_id", maintain_order=True).agg(
        pl.col("shape_x_m"), pl.col("shape_y_m"), pl.col("shape_dist_m").max().alias("length_m")
    )
    lines = lines.with_columns(
        pl.Series(
            "is_simple",
            [
                bool(shapely.linestrings(np.c_[x, y]).is_simple)
                for x, y in zip(lines["shape_x_m"], lines["shape_y_m"], strict=True)
            ],
        )
    ).select("shape_id", "length_m", "is_simple")
    both = (
        g.trips.join(kit, on="trip_id")
        .join(per_trip, on="trip_id")
        .join(lines, on="shape_id")
        .with_columns((pl.col("length_m") - pl.col("last_m")).alias("tail_m"))
    )
    assert both.height == len(sample)
    assert both["is_ordered"].all()
    assert (both["max_gap_m"] < 200.0).all()  # Porto Alegre has one stop 166 m from its shape
    simple = both.filter(pl.col("is_simple"))
    rel = (simple["planned_distance_m"] - simple["kit_m"]).abs() / simple["kit_m"]
    assert (rel <= TOLERANCE).all()
    crossing = both.filter(~pl.col("is_simple"))
    whole = crossing["planned_distance_m"] + crossing["lead_in_m"] + crossing["tail_m"]
    assert ((whole - crossing["kit_m"]).abs() <= TOLERANCE * crossing["kit_m"]).all()
    lower = crossing["chord_m"] - 2 * crossing["sum_gap_m"]
    assert (crossing["planned_distance_m"] >= lower).all()
    for shape_id, metres in DOUBLING_BACK_M.get(name, {}).items():
        planned = both.filter(pl.col("shape_id") == shape_id)["planned_distance_m"]
        assert planned.to_list() == [pytest.approx(metres, abs=1.0)]
