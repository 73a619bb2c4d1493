"""No poison message: what a publisher sends never stops `pontual listen`.

Through a real Mosquitto: an empty payload, a 1 MB payload, invalid UTF-8, a JSON array, a field
of the wrong type, a field too long, and pings and a tap naming another operator's vehicle are
each quarantined with their reason and acknowledged; the good messages of the same batch and
of later batches are stored, and the listener keeps running until told to stop.
"""

from __future__ import annotations

import json
import signal
import time
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from core.store import Store
from ingest.mqtt_payloads import (
    REASON_EMPTY,
    REASON_FIELD_TOO_LONG,
    REASON_NOT_JSON,
    REASON_NOT_OBJECT,
    REASON_NOT_UTF8,
    REASON_TOO_LARGE,
)
from tests.ingest.test_mqtt_resilience import broker, start_listener, wait_subscribed
from tests.mosquitto import Broker, Publisher

__all__ = ["broker"]  # the fixture, shared with the resilience test

T0 = 1_772_452_800  # 2026-03-02 12:00:00 UTC
CARD = "6037990011223344"


def ping(op: str, vehicle: str, t: int, **extra: object) -> tuple[str, bytes]:
    body = {"event_at": t, "lat": -29.17, "lon": -51.52, "speed_m_s": 5.0, **extra}
    return f"pontual/avl/{op}/{vehicle}", json.dumps(body).encode()


def tap(op: str, vehicle: str, tid: str, t: int) -> tuple[str, bytes]:
    body = {"transaction_id": tid, "event_at": t, "card_id": CARD, "fare_class": "full"}
    return f"pontual/fares/{op}/{vehicle}", json.dumps(body).encode()


def load_fleet(store_path: Path) -> None:
    """Vehicle 1042 belongs to op0, 2001 to op1."""
    fleet = pl.DataFrame(
        {
            "vehicle_id": ["1042", "2001"],
            "operator_id": ["op0", "op1"],
            "service_area": ["urban"] * 2,
            "service_class": ["conventional"] * 2,
            "vehicle_type": ["padron"] * 2,
            "manufacture_year": [2020, 2021],
        }
    )
    with Store.open(store_path) as store:
        store.append("vehicles", fleet, fill={"source": "test", "ingested_at": datetime.now(UTC)})


def wait_for(predicate, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_poison_messages_are_quarantined_and_listen_keeps_running(
    broker: Broker, store_path: Path
) -> None:
    load_fleet(store_path)
    pub0 = Publisher(broker.port, "op0", broker.passwords["op0"], "gw-op0")
    pub1 = Publisher(broker.port, "op1", broker.passwords["op1"], "gw-op1")
    listener = start_listener(broker, store_path, "--batch-interval-s", "0.3")
    try:
        wait_subscribed(listener)
        poison = [
            ping("op0", "1042", T0),
            ("pontual/avl/op0/1042", b""),
            ("pontual/avl/op0/1042", b'{"lat": "' + b"9" * 1_000_000 + b'"}'),
            ("pontual/avl/op0/1042", b'{"event_at": "\xff\xfe", "lat": 1}'),
            ("pontual/avl/op0/1042", b"[1, 2, 3]"),
            ("pontual/avl/op0/1042", b'{"event_at": 1772452801, "lat": {"deg": -29}}'),
            ping("op0", "1042", T0 + 2, event_code="x" * 300),
            # op0 writes under its own topic but names op1's bus: a forged ping and tap.
            ping("op0", "2001", T0 + 3),
            tap("op0", "2001", "T-2001-1", T0 + 3),
            # A fare message that does not decode, with a card number in it.
            ("pontual/fares/op0/1042", f'{{"card_id": "{CARD}", "amount": [1]}}'.encode()),
            ping("op0", "1042", T0 + 4),
        ]
        assert pub0.send(poison) == [0] * len(poison)
        # op1's real tap with the id op0 sent first is not blocked by it.
        assert pub1.send([tap("op1", "2001", "T-2001-1", T0 + 5)]) == [0]
        time.sleep(1.5)
        assert listener.poll() is None, "the listener stopped"
        later = [ping("op0", "1042", T0 + 10 + i) for i in range(3)]
        assert pub0.send(later) == [0] * 3
        time.sleep(1.5)
        assert listener.poll() is None, "the listener stopped"
        listener.send_signal(signal.SIGTERM)
        out, _ = listener.communicate(timeout=20)
    finally:
        if listener.poll() is None:
            listener.kill()
        pub0.close()
        pub1.close()
    assert listener.returncode == 0, out.decode()
    with Store.open(store_path) as store:
        pings = store.read("vehicle_locations").sort("event_at")
        taps = store.read("fare_transactions")
        q = store.read("quarantine").sort("reason")
        store.con.execute("CHECKPOINT").fetchall()
    assert pings["event_at"].dt.epoch("s").to_list() == [T0, T0 + 4, T0 + 10, T0 + 11, T0 + 12]
    assert set(pings["vehicle_id"]) == {"1042"}
    assert taps.select("operator_id", "vehicle_id", "transaction_id").rows() == [
        ("op1", "2001", "T-2001-1")
    ]
    reasons = q.select("target_table", "field", "reason").rows()
    other = "vehicle of another operator (the fleet register names op1)"
    assert sorted(reasons, key=str) == sorted(
        [
            ("vehicle_locations", None, REASON_EMPTY),
            ("vehicle_locations", None, REASON_TOO_LARGE.format(limit=16384)),
            ("vehicle_locations", None, REASON_NOT_UTF8),
            ("vehicle_locations", None, REASON_NOT_OBJECT),
            ("vehicle_locations", None, REASON_NOT_JSON),
            ("vehicle_locations", "event_code", REASON_FIELD_TOO_LONG.format(limit=256)),
            ("vehicle_locations", "operator_id", other),
            ("fare_transactions", "operator_id", other),
            ("fare_transactions", None, REASON_NOT_JSON),
        ],
        key=str,
    )
    # The 1 MB payload is kept cut; no card number reaches the store file.
    assert q["raw_record"].str.len_bytes().max() < 2_000  # type: ignore[operator]
    assert CARD.encode() not in store_path.read_bytes()
    # Every message was acknowledged: a second listener gets nothing more.
    again = start_listener(broker, store_path, "--idle-exit-s", "1")
    out, _ = again.communicate(timeout=30)
    assert again.returncode == 0, out.decode()
    assert "encerrado: 0 mensagens" in out.decode(), out.decode()


def test_poison_messages_do_not_stop_serve_and_the_feed_keeps_answering(
    broker: Broker, store_path: Path
) -> None:
    import os
    import subprocess
    import sys

    import httpx

    from pontual.cli import main
    from tests.conftest import FIXTURES
    from tests.mosquitto import LISTENER_USER, free_port

    tiny = str(FIXTURES / "gtfs" / "tiny_feed")
    assert main(["--store", str(store_path), "gtfs", "load", tiny]) == 0
    load_fleet(store_path)
    t0 = 1_705_316_400  # 2024-01-15 08:00 local (UTC-3), a service day of the tiny feed
    http_port = free_port()
    env = {**os.environ, "PONTUAL_MQTT_PASSWORD": broker.passwords[LISTENER_USER]}
    server = subprocess.Popen(
        [
            sys.executable, "-m", "pontual", "--store", str(store_path), "serve",
            "--port", str(broker.port), "--username", LISTENER_USER,
            "--http-port", str(http_port), "--date", "2024-01-15",
            "--batch-interval-s", "0.2", "--max-runtime-s", "120",
        ],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{http_port}"
    pub0 = Publisher(broker.port, "op0", broker.passwords["op0"], "gw-op0")

    def healthy() -> bool:
        assert server.poll() is None, "serve stopped"
        try:
            return httpx.get(base + "/health", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_for(healthy, timeout_s=60)
        poison = [
            ping("op0", "1042", t0),
            ("pontual/avl/op0/1042", b""),
            ("pontual/avl/op0/1042", b'{"lat": "' + b"9" * 1_000_000 + b'"}'),
            ("pontual/avl/op0/1042", b"\xff\xfe\xfd"),
            ("pontual/avl/op0/1042", b"[1, 2, 3]"),
            ping("op0", "2001", t0 + 1),
            ping("op0", "1042", t0 + 30),
        ]
        assert pub0.send(poison) == [0] * len(poison)
        time.sleep(1.5)
        assert healthy()
        assert pub0.send([ping("op0", "1042", t0 + 60)]) == [0]
        time.sleep(1.0)
        assert healthy()
        feed = httpx.get(base + "/gtfs-rt/vehicle-positions.pb", timeout=5.0)
        assert feed.status_code == 200 and feed.content
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
        pub0.close()
    assert server.returncode == 0, out.decode()
    with Store.open(store_path) as store:
        stored = store.read("vehicle_locations")["event_at"].dt.epoch("s").sort().to_list()
        reasons = sorted(store.read("quarantine")["reason"].to_list())
    assert stored == [t0, t0 + 30, t0 + 60]
    assert reasons == sorted(
        [
            REASON_EMPTY,
            REASON_TOO_LARGE.format(limit=16384),
            REASON_NOT_UTF8,
            REASON_NOT_OBJECT,
            "vehicle of another operator (the fleet register names op1)",
        ]
    )
