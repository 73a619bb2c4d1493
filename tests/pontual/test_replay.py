"""`pontual replay`: a recorded file published through a real Mosquitto in event-time order."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from pontual.cli import main
from pontual.verbs.replay import build_replay_messages
from tests.mosquitto import LISTENER_USER, Broker, require_mosquitto

# three pings of two vehicles written out of order, one without a position
RECORDING = """vehicle_id,event_at,lat,lon,speed_m_s,trip_id
B2,2026-03-03T12:00:02Z,-29.17,-51.52,3.5,T2
A1,2026-03-03T12:00:01Z,-29.16,-51.51,8.0,T1
A1,2026-03-03T12:00:03Z,,,0.0,T1
A1,1772539204,-29.15,-51.50,7.0,T1
"""


def test_messages_are_in_event_time_order_without_trip_ids() -> None:
    raw = pl.read_csv(RECORDING.encode(), infer_schema_length=0)
    out = build_replay_messages(raw, "pontual", "opA", strip_trip_id=True, source_tz="UTC")
    # the ping without a position is left out; epoch seconds and ISO times sort together
    assert out["topic"].to_list() == [
        "pontual/avl/opA/A1",
        "pontual/avl/opA/B2",
        "pontual/avl/opA/A1",
    ]
    payloads = [json.loads(p) for p in out["payload"]]
    assert [p["event_at"] for p in payloads] == [
        "2026-03-03T12:00:01Z",
        "2026-03-03T12:00:02Z",
        "2026-03-03T12:00:04Z",
    ]
    assert all("trip_id" not in p for p in payloads)
    assert payloads[1]["speed_m_s"] == "3.5" and payloads[1]["vehicle_id"] == "B2"
    kept = build_replay_messages(raw, "pontual", "opA", strip_trip_id=False, source_tz="UTC")
    assert json.loads(kept["payload"][0])["trip_id"] == "T1"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    require_mosquitto()
    with Broker(tmp_path / "broker", operators=("opA",)) as b:
        yield b


def test_replay_publishes_through_the_broker(broker: Broker, tmp_path: Path) -> None:
    import paho.mqtt.client as mqtt

    got: list[tuple[str, dict[str, object]]] = []
    subscribed = threading.Event()
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-sub", protocol=mqtt.MQTTv5)
    sub.username_pw_set(LISTENER_USER, broker.passwords[LISTENER_USER])
    sub.on_message = lambda _c, _u, m: got.append((m.topic, json.loads(m.payload)))
    sub.on_subscribe = lambda *_a: subscribed.set()
    sub.connect("127.0.0.1", broker.port)
    sub.loop_start()
    sub.subscribe("pontual/avl/+/+", qos=1)
    assert subscribed.wait(10)
    path = tmp_path / "day.csv"
    path.write_text(RECORDING)
    try:
        code = main(
            [
                "replay", str(path), "--port", str(broker.port), "--username", "opA",
                "--password", broker.passwords["opA"], "--speed", "0", "--strip-trip-id",
            ]
        )  # fmt: skip
        assert code == 0
        for _ in range(100):
            if len(got) == 3:
                break
            threading.Event().wait(0.05)
    finally:
        sub.loop_stop()
        sub.disconnect()
    assert [t for t, _ in got] == ["pontual/avl/opA/A1", "pontual/avl/opA/B2", "pontual/avl/opA/A1"]
    assert [p["event_at"] for _, p in got][-1] == "2026-03-03T12:00:04Z"
    assert all("trip_id" not in p for _, p in got)
