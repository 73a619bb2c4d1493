"""`pontual serve` end to end: a simulated morning replayed through a real Mosquitto into the
server; the feeds fetched while it runs are parsed with the Python gtfs-realtime-bindings and,
in the same run, with the npm package by Node (an independent consumer)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import polars as pl
import pytest
from google.transit import gtfs_realtime_pb2 as rt

from core.store import Store
from tests.analytics.live.simulated import LIVE_DAY, SimulatedStore, build_simulated_store
from tests.mosquitto import LISTENER_USER, Broker, Publisher, free_port, require_mosquitto

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "tests" / "node"
FEEDS = ("vehicle-positions", "trip-updates", "alerts")
# the live morning: 06:00-07:30 local (UTC-3), replayed in 10-minute slices
SLICES = [
    (
        f"2026-03-03T{h:02d}:{m:02d}:00Z",
        f"2026-03-03T{h + (m + 10) // 60:02d}:{(m + 10) % 60:02d}:00Z",
    )
    for h, m in [(9 + i * 10 // 60, i * 10 % 60) for i in range(9)]
]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> SimulatedStore:
    return build_simulated_store(tmp_path_factory.mktemp("serve"))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    require_mosquitto()
    with Broker(tmp_path / "broker", operators=("O1", "O2")) as b:
        yield b


def _node_or_skip() -> str:
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "gtfs-realtime-bindings").exists():
        reason = "node or tests/node/node_modules absent (run `make node-deps`)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " — under CI=true the Node consumer must run")
        pytest.skip(reason)
    return node


def start_serve(
    store: Path, broker: Broker, http_port: int, *, max_runtime_s: int
) -> subprocess.Popen[bytes]:
    """`pontual serve` of the simulated day on `store`, listening to `broker` as the listener
    account and answering on `http_port`, stopping by itself after `max_runtime_s`."""
    env = {**os.environ, "PONTUAL_MQTT_PASSWORD": broker.passwords[LISTENER_USER]}
    return subprocess.Popen(
        [
            sys.executable, "-m", "pontual", "--store", str(store), "serve",
            "--port", str(broker.port), "--username", LISTENER_USER,
            "--http-port", str(http_port), "--date", LIVE_DAY.isoformat(),
            "--batch-interval-s", "0.2", "--max-runtime-s", str(max_runtime_s),
        ],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def _wait_health(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"pontual serve exited: {proc.stdout.read().decode()}")  # type: ignore[union-attr]
        try:
            if httpx.get(url + "/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("pontual serve did not answer /health in time")


def _wait_version(client: httpx.Client, after: int, timeout_s: float = 60.0) -> dict:
    """/health once the view has moved past version `after` and its trip state has taken in
    every fix received (the positions are published at once, the trip state by the next
    refresh: a feed read in between, on a busy machine, still had no trip's next stop)."""
    deadline = time.monotonic() + timeout_s
    health: dict = {}
    while time.monotonic() < deadline:
        health = client.get("/health").json()
        if (
            health["version"] > after
            and health["seconds_since_update"] is not None
            and health["trip_state_behind_s"] == 0
        ):
            return health
        time.sleep(0.1)
    raise AssertionError(f"the live view did not move past version {after} and settle: {health}")


def test_replayed_morning_through_mosquitto_gives_valid_feeds(
    simulated: SimulatedStore, broker: Broker, tmp_path: Path
) -> None:
    node = _node_or_skip()
    http_port = free_port()
    proc = start_serve(simulated.store_path, broker, http_port, max_runtime_s=150)
    base = f"http://127.0.0.1:{http_port}"
    publishers = {
        op: Publisher(broker.port, op, broker.passwords[op], f"sim-{op}") for op in ("O1", "O2")
    }
    fetched: list[dict[str, bytes]] = []
    try:
        _wait_health(base, proc)
        with httpx.Client(base_url=base, timeout=10.0) as client:
            version = 0
            for start, end in SLICES:
                messages = simulated.messages(start, end)
                for op, pub in publishers.items():
                    mine = [m for m in messages if m[0].split("/")[2] == op]
                    assert all(code == 0 for code in pub.send(mine))
                version = _wait_version(client, version)["version"]
                fetched.append({name: client.get(f"/gtfs-rt/{name}.pb").content for name in FEEDS})
            # conditional requests, JSON variants, CORS, the stop display
            r = client.get(
                "/gtfs-rt/vehicle-positions.pb", headers={"Origin": "https://app.example"}
            )
            assert r.headers["access-control-allow-origin"] == "*"
            assert r.headers["content-type"] == "application/x-protobuf"
            assert "last-modified" in r.headers
            again = client.get(
                "/gtfs-rt/vehicle-positions.pb", headers={"If-None-Match": r.headers["etag"]}
            )
            assert again.status_code == 304
            as_json = client.get("/gtfs-rt/trip-updates.pb", params={"format": "json"}).json()
            assert as_json["header"]["gtfsRealtimeVersion"] == "2.0"
            assert as_json["header"]["incrementality"] == "FULL_DATASET"
            stop_id = _busiest_next_stop(fetched[-1]["trip-updates"])
            arrivals = client.get(f"/api/stops/{stop_id}/arrivals").json()
            assert arrivals["arrivals"], arrivals
            assert arrivals["arrivals"][0]["status"] in ("previsto", "cancelado")
            assert client.get("/api/stops/NOPE/arrivals").status_code == 404
    finally:
        for pub in publishers.values():
            pub.close()
        proc.terminate()
        out = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == 0, out
    assert "encerrado:" in out

    with Store.open(simulated.store_path, read_only=True) as store:
        gtfs_trips = set(store.query("SELECT trip_id FROM gtfs_trips")["trip_id"])
        gtfs_routes = set(store.query("SELECT route_id FROM gtfs_routes")["route_id"])
        gtfs_stops = set(store.query("SELECT stop_id FROM gtfs_stops")["stop_id"])
        register = set(store.query("SELECT vehicle_id FROM vehicles")["vehicle_id"])
        n_stored = store.count("vehicle_locations")
        logged = store.read("live_predictions")
        day_trips = set(store.query("SELECT trip_id FROM scheduled_trips")["trip_id"])
    assert n_stored > 52105  # the live pings were written to the store too (serve owns it)
    # what the feed published was logged for the next day's scoring: one row per trip, stop
    # and horizon bucket, arrivals after their publication, buckets from the closed set
    assert logged.height > 100
    assert set(logged["trip_id"]) <= day_trips
    assert (logged["predicted_arrival_at"] >= logged["made_at"]).all()
    assert set(logged["horizon_min"]) <= {0, 2, 5, 10, 15, 20, 30, 45, 60, 90}
    assert logged.unique(["trip_id", "stop_sequence", "horizon_min"]).height == logged.height

    # Python: the official bindings
    stamps: dict[str, list[int]] = {name: [] for name in FEEDS}
    for snapshot in fetched:
        for name, body in snapshot.items():
            feed = rt.FeedMessage()
            feed.ParseFromString(body)
            assert feed.header.gtfs_realtime_version == "2.0"
            assert feed.header.incrementality == rt.FeedHeader.FULL_DATASET
            stamps[name].append(feed.header.timestamp)
    for name in FEEDS:
        assert stamps[name] == sorted(stamps[name]) and stamps[name][-1] > stamps[name][0]
    last = {name: rt.FeedMessage.FromString(body) for name, body in fetched[-1].items()}
    vp = last["vehicle-positions"]
    assert len(vp.entity) >= 10
    assert sum(e.vehicle.HasField("trip") for e in vp.entity) >= 5
    tu = last["trip-updates"]
    kinds = [e.trip_update.trip.schedule_relationship for e in tu.entity]
    assert kinds.count(rt.TripDescriptor.SCHEDULED) >= 5

    # Node: the npm bindings decode the same bytes to the same ids
    files = []
    for i, snapshot in enumerate(fetched):
        for name, body in snapshot.items():
            path = tmp_path / f"{i:02d}-{name}.pb"
            path.write_bytes(body)
            files.append(path)
    done = subprocess.run(
        [node, str(NODE_DIR / "decode.mjs"), *map(str, files)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    decoded = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(decoded) == len(files)
    for d, path in zip(decoded, files, strict=True):
        feed = rt.FeedMessage.FromString(path.read_bytes())
        assert d["version"] == "2.0" and d["incrementality"] == 0
        assert d["timestamp"] == feed.header.timestamp
        assert d["entities"] == [e.id for e in feed.entity]
        assert set(d["trips"]) <= gtfs_trips, set(d["trips"]) - gtfs_trips
        assert set(d["routes"]) <= gtfs_routes
        assert set(d["stops"]) <= gtfs_stops
        assert set(d["vehicles"]) <= register
    node_tu = decoded[-2]  # the last snapshot's trip updates
    assert node_tu["stopTimeUpdates"] == sum(len(e.trip_update.stop_time_update) for e in tu.entity)


def _busiest_next_stop(trip_updates: bytes) -> str:
    feed = rt.FeedMessage.FromString(trip_updates)
    stops = [
        u.stop_id
        for e in feed.entity
        for u in e.trip_update.stop_time_update[:1]
        if e.trip_update.trip.schedule_relationship == rt.TripDescriptor.SCHEDULED
    ]
    return pl.Series(stops).mode().sort()[0]
