"""GTFS-RT decode/encode: the MBTA feeds round-trip through gtfs.realtime without loss."""

from __future__ import annotations

import pytest

from core.errors import InputError
from gtfs.realtime import (
    build_trip_updates,
    build_vehicle_positions,
    decode_feed,
    encode_feed,
    read_trip_updates,
    read_vehicle_positions,
)
from tests.conftest import shared_data


def test_mbta_vehicle_positions_round_trip() -> None:
    feed = decode_feed(shared_data("gtfsrt_mbta_2024", "VehiclePositions.pb").read_bytes())
    positions = read_vehicle_positions(feed)
    assert positions.height == 650
    first = positions.row(0, named=True)
    assert (first["vehicle_id"], first["trip_id"], first["timestamp_s"]) == (
        "y2069",
        "64821026",
        1732128712,
    )
    assert first["occupancy_status"] == "MANY_SEATS_AVAILABLE"
    again = read_vehicle_positions(
        decode_feed(encode_feed(build_vehicle_positions(positions, feed.header.timestamp)))
    )
    assert again.equals(positions)


def test_mbta_trip_updates_round_trip() -> None:
    feed = decode_feed(shared_data("gtfsrt_mbta_2024", "TripUpdates.pb").read_bytes())
    trips, stops = read_trip_updates(feed)
    assert (trips.height, stops.height) == (1207, 28735)
    rebuilt = decode_feed(encode_feed(build_trip_updates(trips, stops, feed.header.timestamp)))
    trips2, stops2 = read_trip_updates(rebuilt)
    assert trips2.equals(trips) and stops2.equals(stops)


def test_mbta_alerts_bytes_round_trip() -> None:
    data = shared_data("gtfsrt_mbta_2024", "Alerts.pb").read_bytes()
    feed = decode_feed(data)
    assert len(feed.entity) == 94
    assert decode_feed(encode_feed(feed)) == feed


def test_garbage_is_refused_with_a_clear_error() -> None:
    with pytest.raises(InputError, match=r"not a GTFS-Realtime FeedMessage|without a header"):
        decode_feed(b"\xff\xff\xff not protobuf", source="x.pb")
