"""The MQTT listener against a real Mosquitto on a free port: storage, ACL, ack-after-commit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import InputError
from core.store import Store
from ingest.mqtt import MqttConsumer
from ingest.mqtt_batches import make_batch_writer
from ingest.mqtt_options import ListenerOptions
from ingest.mqtt_payloads import MessageFrames
from tests.mosquitto import LISTENER_USER, Broker, Publisher, require_mosquitto

KEY = bytes(range(32))
T0 = 1_772_452_800  # 2026-03-02 12:00:00 UTC


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    require_mosquitto()
    with Broker(tmp_path / "broker") as b:
        yield b


def listener_options(broker: Broker, **kw: object) -> ListenerOptions:
    values: dict[str, object] = {
        "port": broker.port,
        "username": LISTENER_USER,
        "password": broker.passwords[LISTENER_USER],
        "batch_interval_s": 0.2,
        "snapshot_interval_s": 0,
        "idle_exit_s": 1.0,
    }
    values.update(kw)
    return ListenerOptions.model_validate(values)


def ping(vehicle: str, t: int, lat: float = -29.17, **extra: object) -> tuple[str, bytes]:
    body = {"event_at": t, "lat": lat, "lon": -51.52, "speed_m_s": 5.0, **extra}
    return f"pontual/avl/opA/{vehicle}", json.dumps(body).encode()


def consume(store: Store, options: ListenerOptions) -> MqttConsumer:
    consumer = MqttConsumer(store, options, make_batch_writer(key=KEY), on_log=lambda _m: None)
    consumer.connect()
    consumer.run()
    return consumer


def subscribe_session(broker: Broker, client_id: str = "pontual-listener") -> None:
    """Create the listener's persistent session, so messages published next wait for it."""
    consumer = MqttConsumer(
        Store.open(broker.folder / "unused.duckdb"),
        listener_options(broker, client_id=client_id),
        make_batch_writer(key=KEY),
        on_log=lambda _m: None,
    )
    consumer.connect()
    consumer.close()
    consumer.store.close()


def test_pings_taps_and_bad_messages_end_in_the_store_once(broker: Broker, store_path: Path):
    subscribe_session(broker)
    pub = Publisher(broker.port, "opA", broker.passwords["opA"], "bus-a")
    tap = {
        "transaction_id": "T1",
        "event_at": "2026-03-02T12:00:30Z",
        "route_id": "101",
        "card_id": "CARD-0042",
        "fare_class": "student",
        "amount": 2.4,
    }
    codes = pub.send(
        [
            ping("1042", T0, lat=-29.1712, heading_deg=90),
            ping("1042", T0 + 10, lat=-29.1720),
            ping("1042", T0 + 10, lat=-29.1720),  # the same ping sent twice
            ("pontual/fares/opA/1042", json.dumps(tap).encode()),
            ("pontual/avl/opA/1042", b'{"event_at": '),
        ]
    )
    pub.close()
    assert codes == [0, 0, 0, 0, 0]
    with Store.open(store_path) as store:
        consumer = consume(store, listener_options(broker))
        pings = store.read("vehicle_locations").sort("event_at")
        taps = store.read("fare_transactions")
        quarantine = store.read("quarantine")
    assert consumer.totals.n_messages == 5
    assert (consumer.totals.n_accepted, consumer.totals.n_duplicate) == (3, 1)
    assert pings["vehicle_id"].to_list() == ["1042", "1042"]
    assert pings["operator_id"].to_list() == ["opA", "opA"]
    assert pings["lat"].to_list() == [-29.1712, -29.172]
    assert pings["heading_deg"].to_list() == [90.0, None]
    assert pings["event_at"].to_list() == [
        datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
        datetime(2026, 3, 2, 12, 0, 10, tzinfo=UTC),
    ]
    assert taps["transaction_id"].to_list() == ["T1"]
    assert taps["fare_class"].to_list() == ["student"]
    assert taps["card_hash"][0] is not None and "CARD-0042" not in taps["card_hash"][0]
    assert quarantine["reason"][0].startswith("payload is not a JSON object")
    assert quarantine["raw_record"][0] == '{"event_at": '


def test_operator_a_cannot_publish_under_operator_b(broker: Broker, store_path: Path) -> None:
    subscribe_session(broker)
    pub = Publisher(broker.port, "opA", broker.passwords["opA"], "bus-a")
    own, forged = ping("7", T0), ("pontual/avl/opB/9", ping("9", T0)[1])
    forged_fare = ("pontual/fares/opB/9", b'{"transaction_id": "X"}')
    codes = pub.send([own, forged, forged_fare])
    pub.close()
    # MQTT 5 reason code 135: "Not authorized" (the broker's ACL refused the publish).
    assert codes == [0, 135, 135]
    with Store.open(store_path) as store:
        consume(store, listener_options(broker))
        stored = store.read("vehicle_locations")
        assert store.count("quarantine") == 0
    assert stored["vehicle_id"].to_list() == ["7"]
    assert stored["operator_id"].to_list() == ["opA"]


def test_wrong_password_is_refused_with_a_clear_error(broker: Broker, store_path: Path) -> None:
    options = listener_options(broker, password="wrong")
    with Store.open(store_path) as store:
        consumer = MqttConsumer(store, options, make_batch_writer(key=KEY))
        with pytest.raises(InputError) as err:
            consumer.connect()
    assert "refused the connection" in err.value.what
    assert "Bad user name or password" in err.value.what or "Not authorized" in err.value.what
    assert err.value.where == f"127.0.0.1:{broker.port}, user pontual"


def test_a_batch_that_fails_to_commit_is_not_acknowledged_and_comes_back(
    broker: Broker, store_path: Path
) -> None:
    subscribe_session(broker)
    pub = Publisher(broker.port, "opA", broker.passwords["opA"], "bus-a")
    pub.send([ping("5", T0 + i) for i in range(50)])
    pub.close()
    real = make_batch_writer(key=KEY)

    def failing(store: Store, frames: MessageFrames) -> tuple[int, int, int]:
        raise RuntimeError("disk full")

    with Store.open(store_path) as store:
        first = MqttConsumer(store, listener_options(broker, batch_size=50), failing)
        first.connect()
        with pytest.raises(RuntimeError, match="disk full"):
            first.run()
        first.client.disconnect()  # a crash: nothing was acknowledged
        assert store.count("vehicle_locations") == 0
        second = MqttConsumer(store, listener_options(broker), real, on_log=lambda _m: None)
        second.connect()
        second.run()
        assert store.count("vehicle_locations") == 50
    assert second.totals.n_accepted == 50


def test_sigterm_commits_the_pending_batch_acks_it_and_exits_zero(
    broker: Broker, store_path: Path
) -> None:
    env = dict(os.environ, PONTUAL_MQTT_PASSWORD=broker.passwords[LISTENER_USER])
    cmd = [sys.executable, "-m", "pontual", "--store", str(store_path), "listen"]
    cmd += ["--port", str(broker.port), "--username", LISTENER_USER]
    # Batches would close only after 10 000 messages or 60 s: the 100 messages stay pending.
    cmd += ["--batch-size", "10000", "--batch-interval-s", "60"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().decode().startswith("conectado a 127.0.0.1:")
        line = proc.stdout.readline().decode()  # printed once the subscription is in place
        assert line.startswith("escutando pontual/avl/+/+, pontual/fares/+/+"), line
        pub = Publisher(broker.port, "opA", broker.passwords["opA"], "bus-a")
        pub.send([ping("8", T0 + i) for i in range(100)])
        pub.close()
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out.decode()
    assert "100 aceitas" in out.decode()
    with Store.open(store_path) as store:
        assert store.count("vehicle_locations") == 100
        # Everything was acknowledged before the exit: the session holds nothing more.
        again = consume(store, listener_options(broker, idle_exit_s=0.5))
    assert again.totals.n_messages == 0
