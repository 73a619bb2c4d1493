"""The broker's ACL (deploy/mosquitto/acl) on a real Mosquitto: the listener account reads every
operator's topics and can publish nowhere; an operator publishes only under its own topics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mosquitto import LISTENER_USER, Broker, Publisher, require_mosquitto

NOT_AUTHORIZED = 135  # MQTT 5 PUBACK reason code


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    require_mosquitto()
    with Broker(tmp_path / "broker") as b:
        yield b


def _listen(broker: Broker, received: list[str]) -> object:
    import paho.mqtt.client as mqtt

    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id="acl-listener", protocol=mqtt.MQTTv5
    )
    client.username_pw_set(LISTENER_USER, broker.passwords[LISTENER_USER])
    client.on_message = lambda _c, _u, m: received.append(m.topic)
    client.connect("127.0.0.1", broker.port)
    client.subscribe([("pontual/avl/#", 1), ("pontual/fares/#", 1)])
    client.loop_start()
    time.sleep(0.3)  # the subscription is in place before anything is published
    return client


def test_the_listener_account_can_publish_nowhere(broker: Broker) -> None:
    received: list[str] = []
    listener = _listen(broker, received)
    try:
        forger = Publisher(broker.port, LISTENER_USER, broker.passwords[LISTENER_USER], "forger")
        codes = forger.send(
            [
                # its own subtree (what the %u patterns granted it before the deny lines)
                ("pontual/avl/pontual/1", b"{}"),
                ("pontual/fares/pontual/1", b"{}"),
                # an operator's topic
                ("pontual/avl/opA/1", b"{}"),
            ]
        )
        forger.close()
        operator = Publisher(broker.port, "opA", broker.passwords["opA"], "bus-a")
        own = operator.send([("pontual/avl/opA/7", b"{}"), ("pontual/fares/opB/7", b"{}")])
        operator.close()
        deadline = time.monotonic() + 5
        while not received and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        listener.loop_stop()  # type: ignore[attr-defined]
        listener.disconnect()  # type: ignore[attr-defined]
    assert codes == [NOT_AUTHORIZED] * 3
    assert own == [0, NOT_AUTHORIZED]
    # the listener still reads what operators publish, and only that
    assert received == ["pontual/avl/opA/7"]
