"""`pontual export gtfs-rt-archive`: the matched day as one VehiclePositions FeedMessage per
minute in a zip, decoded back with the real protobuf bindings and checked against the store."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.store import Store
from gtfs.realtime import decode_feed, read_vehicle_positions
from pontual.cli import main

DAY = "2026-03-02"


@pytest.fixture(scope="module")
def archive(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rt") / "positions.zip"
    argv = ["--quiet", "--store", str(demo_store), "export", "gtfs-rt-archive"]
    assert main([*argv, "--from", DAY, "--to", DAY, "--out", str(out)]) == 0
    return out


def test_each_minute_holds_the_last_fix_of_each_vehicle(archive: Path, demo_store: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        names = sorted(n for n in z.namelist() if n.endswith(".pb"))
        manifest = json.loads(z.read("manifest.json"))
        # a minute in mid-morning: every entity decoded back equals the store's last fix
        name = names[len(names) // 3]
        feed = decode_feed(z.read(name), source=name)
    assert manifest["n_messages"] == len(names) > 600  # a service day, minute by minute
    minute = datetime.strptime(name.split("/")[1], "%Y%m%dT%H%MZ.pb").replace(tzinfo=UTC)
    positions = read_vehicle_positions(feed)
    with Store.open(demo_store, read_only=True) as store:
        last = store.query(
            """SELECT vehicle_id, arg_max(lat, event_at) AS lat, arg_max(lon, event_at) AS lon,
                      CAST(epoch(max(event_at)) AS BIGINT) AS timestamp_s
               FROM vehicle_locations
               WHERE event_at >= ? AND event_at < ? + INTERVAL 1 MINUTE
               GROUP BY vehicle_id ORDER BY vehicle_id""",
            [minute, minute],
        )
        runs = store.query(
            """SELECT vehicle_id, trip_id FROM trips_performed
               WHERE trip_id IS NOT NULL AND ? BETWEEN started_at AND ended_at""",
            [minute],
        )
    assert last.height > 5
    got = positions.sort("vehicle_id")
    assert got["vehicle_id"].to_list() == last["vehicle_id"].to_list()
    assert got["timestamp_s"].to_list() == last["timestamp_s"].to_list()
    # protobuf floats are 32-bit
    assert (got["lat"] - last["lat"]).abs().max() < 1e-5  # type: ignore[operator]
    assert (got["lon"] - last["lon"]).abs().max() < 1e-5  # type: ignore[operator]
    assert feed.header.timestamp == max(last["timestamp_s"])
    # a vehicle inside a matched run at the minute's start carries that run's trip
    on_trip = dict(zip(got["vehicle_id"], got["trip_id"], strict=True))
    matched = [(v, t) for v, t in runs.iter_rows() if v in on_trip]
    assert matched
    assert sum(on_trip[v] == t for v, t in matched) >= len(matched) - 1
