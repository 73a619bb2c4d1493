"""GTFS-Realtime VehiclePositions (`.pb` files or a polled URL) as raw AVL records."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from core.errors import InputError
from gtfs.realtime import decode_feed, read_vehicle_positions
from ingest.parsing import RECORD_KEY


def to_avl_records(positions: pl.DataFrame, feed_timestamp_s: int) -> pl.DataFrame:
    """Raw AVL records from a VehiclePositions frame (`gtfs.realtime.read_vehicle_positions`).

    A position without its own timestamp takes the feed header's. record_key is
    "<vehicle>@<timestamp>" so the same fix polled twice has one key.
    """
    ts = pl.col("timestamp_s").fill_null(feed_timestamp_s)
    return positions.select(
        pl.format("{}@{}", pl.coalesce("vehicle_id", "entity_id"), ts).alias(RECORD_KEY),
        pl.coalesce("vehicle_id", "vehicle_label").alias("vehicle_id"),
        ts.alias("event_at"),
        "lat",
        "lon",
        "speed_m_s",
        pl.col("bearing_deg").alias("heading_deg"),
        pl.col("trip_id").alias("reported_trip_id"),
        pl.col("route_id").alias("reported_route_id"),
        pl.col("direction_id").alias("reported_direction_id"),
        pl.col("occupancy_status").alias("reported_occupancy"),
    )


def read_vehicle_positions_file(path: Path) -> pl.DataFrame:
    """A VehiclePositions `.pb` file as raw AVL records."""
    feed = decode_feed(path.read_bytes(), source=str(path))
    return to_avl_records(read_vehicle_positions(feed), feed.header.timestamp)


def poll_vehicle_positions(
    url: str, interval_s: float, n_polls: int | None = None, timeout_s: float = 30.0
) -> Iterator[pl.DataFrame]:
    """Fetch a VehiclePositions URL every `interval_s` seconds (forever when n_polls is None).

    Yields one frame of raw AVL records per poll; a poll that fails is an InputError.
    """
    done = 0
    while n_polls is None or done < n_polls:
        started = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:
                data = response.read()
        except (urllib.error.URLError, OSError) as exc:
            raise InputError(f"cannot fetch the feed: {exc}", where=url) from exc
        feed = decode_feed(data, source=url)
        yield to_avl_records(read_vehicle_positions(feed), feed.header.timestamp)
        done += 1
        if n_polls is None or done < n_polls:
            time.sleep(max(0.0, interval_s - (time.monotonic() - started)))
