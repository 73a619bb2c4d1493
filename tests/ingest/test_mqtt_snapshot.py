"""The listener publishes the readers' snapshot once its interval is over, even when no later
batch arrives (it used to wait for the next batch: a quiet feed left readers a batch behind)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import Store, open_snapshot, snapshot_path
from ingest.mqtt import MqttConsumer
from ingest.mqtt_batches import make_batch_writer
from tests.ingest.test_mqtt import KEY, T0, listener_options, ping
from tests.mosquitto import Broker, Publisher, require_mosquitto


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    require_mosquitto()
    with Broker(tmp_path / "broker") as b:
        yield b


def test_the_last_batch_reaches_the_snapshot_without_a_later_one(
    broker: Broker, store_path: Path
) -> None:
    with Store.open(store_path) as store:
        consumer = MqttConsumer(
            store,
            listener_options(broker, snapshot_interval_s=1.0, idle_exit_s=None),
            make_batch_writer(key=KEY),
            on_log=lambda _m: None,
        )
        consumer.connect()
        pub = Publisher(broker.port, "opA", broker.passwords["opA"], "bus-a")

        def wait_for(n_rows: int, n_batches: int) -> int:
            seen, deadline = 0, time.monotonic() + 5.0
            while time.monotonic() < deadline and seen < n_rows:
                consumer.poll(0.1)
                if consumer.n_batches >= n_batches and snapshot_path(store_path).exists():
                    with open_snapshot(store_path) as snap:
                        seen = snap.count("vehicle_locations")
            return seen

        # the first batch comes after the interval: published with its commit
        time.sleep(1.0)
        pub.send([ping("7", T0)])
        assert wait_for(1, 1) == 1
        # the second comes right after that publication, then nothing more: the snapshot
        # shows it once the interval is over, not only when a third batch (or close) comes
        pub.send([ping("7", T0 + 10)])
        pub.close()
        assert wait_for(2, 2) == 2
        assert consumer.n_batches == 2
        consumer.close()
