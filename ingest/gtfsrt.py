"""GTFS-Realtime VehiclePositions (`.pb` files or a polled URL) as raw AVL records."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
from google.transit import gtfs_realtime_pb2 as rt

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


def count_feed_entities(feed: rt.FeedMessage) -> dict[str, int]:
    """How many entities of each kind a feed holds: vehicle, trip_update, alert (and
    `deleted`, those marked is_deleted)."""
    counts = dict.fromkeys(("vehicle", "trip_update", "alert", "deleted"), 0)
    for entity in feed.entity:
        for kind in ("vehicle", "trip_update", "alert"):
            if entity.HasField(kind):
                counts[kind] += 1
        counts["deleted"] += int(entity.is_deleted)
    return counts


def read_vehicle_positions_file(path: Path) -> tuple[pl.DataFrame, str | None]:
    """A VehiclePositions `.pb` file as raw AVL records, and why it holds none (else None).

    A feed of TripUpdates or Alerts only is refused (InputError, naming what it holds):
    they carry no positions, and reading them as "0 records" would hide the mistake.
    """
    feed = decode_feed(path.read_bytes(), source=str(path))
    counts = count_feed_entities(feed)
    if counts["vehicle"] == 0 and (counts["trip_update"] or counts["alert"]):
        held = " and ".join(
            f"{n:,} {name}".replace(",", " ")
            for name, n in (("trip updates", counts["trip_update"]), ("alerts", counts["alert"]))
            if n
        )
        feed_kind = "TripUpdates" if counts["trip_update"] else "Alerts"
        raise InputError(
            f"a GTFS-Realtime {feed_kind} feed ({held}, no vehicle positions): "
            "it carries no vehicle positions, so it cannot be loaded as AVL",
            where=str(path),
            hint="give `ingest avl` the VehiclePositions feed of the same source "
            "(TripUpdates are the vendor's predictions; `pontual serve` publishes Pontual's own)",
        )
    records = to_avl_records(read_vehicle_positions(feed), feed.header.timestamp)
    why_empty = None
    if records.height == 0:
        why_empty = (
            f"the GTFS-Realtime feed holds no entities (header timestamp {feed.header.timestamp})"
            if len(feed.entity) == 0
            else f"the feed's {len(feed.entity)} entities hold no vehicle position"
        )
    return records, why_empty


# The longest wait between two tries of a failing feed URL, s.
MAX_BACKOFF_S = 300.0


def poll_vehicle_positions(
    url: str,
    interval_s: float,
    n_polls: int | None = None,
    timeout_s: float = 30.0,
    on_error: Callable[[str, float], None] | None = None,
) -> Iterator[pl.DataFrame]:
    """Fetch a VehiclePositions URL every `interval_s` seconds (forever when n_polls is None).

    Yields one frame of raw AVL records per poll. A poll that fails (network, HTTP error, not
    a feed) never stops the poller: it is reported to `on_error(message, wait_s)` and retried
    after a backoff that doubles from `interval_s` up to `MAX_BACKOFF_S` (each try counts
    towards `n_polls`); the first good poll resets it.
    """
    done = failures = 0
    while n_polls is None or done < n_polls:
        started = time.monotonic()
        wait = interval_s
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:
                data = response.read()
            feed = decode_feed(data, source=url)
        except (urllib.error.URLError, OSError, InputError) as exc:
            failures += 1
            wait = min(max(interval_s, 1.0) * 2 ** (failures - 1), MAX_BACKOFF_S)
            if on_error is not None:
                on_error(f"cannot fetch the feed ({url}): {exc}", wait)
        else:
            failures = 0
            yield to_avl_records(read_vehicle_positions(feed), feed.header.timestamp)
        done += 1
        if n_polls is None or done < n_polls:
            time.sleep(max(0.0, wait - (time.monotonic() - started)))
