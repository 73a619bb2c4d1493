"""MQTT benchmark: sustained messages/s into the store with QoS 1 and no loss.

Side by side with `mosquitto_sub` (C, writing to /dev/null, also QoS 1 in a persistent session)
on the same Mosquitto, for the same messages, in two settings:

- backlog: the messages wait in the broker for an offline persistent session, then each
  consumer drains them (consumer throughput alone);
- live: `mosquitto_pub` publishes while the consumer runs (publisher, broker and consumer
  share the CPUs, as on a small server).

The listener's figure counts a message only once its batch is committed to DuckDB and
acknowledged; the store is checked afterwards to hold every message exactly once.

Run: ``.venv/bin/python -m benchmarks.bench_mqtt [--messages N] [--batch-size B]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.store import Store
from ingest.mqtt import MqttConsumer
from ingest.mqtt_batches import make_batch_writer
from ingest.mqtt_options import ListenerOptions
from tests.mosquitto import LISTENER_USER, Broker

N_VEHICLES = 50
T0 = 1_772_452_800  # 2026-03-02 12:00:00 UTC
LISTENER_ID = "bench-listener"
SUB_ID = "bench-mosquitto-sub"


def build_lines(n_messages: int) -> dict[str, bytes]:
    """Per vehicle topic, newline-separated JSON pings (what `mosquitto_pub -l` sends)."""
    per = n_messages // N_VEHICLES
    out = {}
    for v in range(N_VEHICLES):
        lines = (
            json.dumps(
                {
                    "event_at": T0 + i,
                    "lat": -29.17 + v / 1e4,
                    "lon": -51.52 - i / 1e6,
                    "speed_m_s": 8.2,
                    "heading_deg": 91.5,
                    "event_code": None,
                }
            )
            for i in range(per)
        )
        out[f"pontual/avl/opA/{v:04d}"] = ("\n".join(lines) + "\n").encode()
    return out


def publish(broker: Broker, lines: dict[str, bytes]) -> list[subprocess.Popen[bytes]]:
    """Start one `mosquitto_pub -l -q 1` per vehicle topic (they run concurrently)."""
    procs = []
    for topic, data in lines.items():
        cmd = ["mosquitto_pub", "-p", str(broker.port), "-u", "opA"]
        cmd += ["-P", broker.passwords["opA"], "-q", "1", "-t", topic, "-l"]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE)
        procs.append(proc)
        assert proc.stdin is not None
        proc.stdin.write(data)
        proc.stdin.close()
    return procs


def wait_all(procs: list[subprocess.Popen[bytes]], timeout_s: float) -> None:
    for proc in procs:
        if proc.wait(timeout=timeout_s) != 0:
            raise RuntimeError(f"{proc.args!r} failed")


def sub_command(broker: Broker, n: int) -> list[str]:
    cmd = ["mosquitto_sub", "-p", str(broker.port), "-u", LISTENER_USER]
    cmd += ["-P", broker.passwords[LISTENER_USER], "-q", "1", "-c", "-i", SUB_ID]
    cmd += ["-t", "pontual/avl/+/+", "-V", "mqttv5", "-x", "3600"]
    return [*cmd, "-C", str(n)] if n else [*cmd, "-W", "1"]


def listener_options(broker: Broker, batch_size: int, n: int) -> ListenerOptions:
    return ListenerOptions.model_validate(
        {
            "port": broker.port,
            "username": LISTENER_USER,
            "password": broker.passwords[LISTENER_USER],
            "client_id": LISTENER_ID,
            "batch_size": batch_size,
            "batch_interval_s": 0.5,
            "snapshot_interval_s": 0,
            "max_messages": n,
            "idle_exit_s": 10.0,
        }
    )


def run_listener(broker: Broker, store: Store, batch_size: int, n: int) -> tuple[float, int]:
    """Consume `n` messages into the store; (seconds from the first message, messages)."""
    consumer = MqttConsumer(
        store, listener_options(broker, batch_size, n), make_batch_writer(key=b"k" * 32)
    )
    consumer.on_log = lambda _m: None
    first: list[float] = []
    received = consumer._on_message

    def on_message(c: object, ud: object, msg: object) -> None:
        if not first:
            first.append(time.perf_counter())
        received(c, ud, msg)  # type: ignore[arg-type]

    consumer.client.on_message = on_message
    consumer.connect()
    totals = consumer.run()
    return time.perf_counter() - first[0], totals.n_messages


def run_sub(
    broker: Broker, n: int, *, started: subprocess.Popen[bytes] | None = None, t: float = 0.0
) -> float:
    """Seconds `mosquitto_sub` takes to receive `n` messages (from `t` when already started)."""
    t = t or time.perf_counter()
    proc = started or subprocess.Popen(sub_command(broker, n), stdout=subprocess.DEVNULL)
    if proc.wait(timeout=300) != 0:
        raise RuntimeError("mosquitto_sub failed")
    return time.perf_counter() - t


def make_sessions(broker: Broker, store: Store, batch_size: int) -> None:
    """Create both persistent sessions (subscribed, offline) so the broker queues for them."""
    subprocess.run(
        sub_command(broker, 0), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    consumer = MqttConsumer(
        store, listener_options(broker, batch_size, 1), make_batch_writer(key=b"k" * 32)
    )
    consumer.on_log = lambda _m: None
    consumer.connect()
    consumer.close()


def count_unique(store: Store) -> tuple[int, int]:
    row = store.query(
        "SELECT count(*), count(DISTINCT (vehicle_id, event_at)) FROM vehicle_locations"
    ).row(0)
    return int(row[0]), int(row[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=5_000)
    args = parser.parse_args(argv)
    if shutil.which("mosquitto_sub") is None:
        print("mosquitto_sub not found: apt-get install mosquitto-clients (make sysdeps)")
        return 2
    n = args.messages // N_VEHICLES * N_VEHICLES
    lines = build_lines(n)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mode in ("backlog", "live"):
            with (
                Broker(folder / f"broker-{mode}") as broker,
                Store.open(folder / f"{mode}.duckdb") as store,
            ):
                make_sessions(broker, store, args.batch_size)
                if mode == "backlog":
                    wait_all(publish(broker, lines), 300)
                    sub_s = run_sub(broker, n)
                    listen_s, got = run_listener(broker, store, args.batch_size, n)
                else:
                    sub = subprocess.Popen(sub_command(broker, n), stdout=subprocess.DEVNULL)
                    time.sleep(0.3)
                    t = time.perf_counter()
                    pubs = publish(broker, lines)
                    sub_s = run_sub(broker, n, started=sub, t=t)
                    wait_all(pubs, 300)
                    # Same again for the listener (its session queued this round meanwhile:
                    # drain it first, untimed, then time a fresh live round).
                    run_listener(broker, store, args.batch_size, n)
                    store.con.execute("DELETE FROM vehicle_locations").fetchall()
                    pubs = publish(broker, lines)
                    listen_s, got = run_listener(broker, store, args.batch_size, n)
                    wait_all(pubs, 300)
                stored, unique = count_unique(store)
                lost = n - unique
                rows.append((mode, n / sub_s, n / listen_s, got, stored, unique, lost))
    print(f"MQTT QoS 1, {n} messages of {N_VEHICLES} vehicles, listener batch {args.batch_size}")
    print(
        f"{'mode':8} {'mosquitto_sub msg/s':>20} {'listen msg/s':>13} {'ratio':>6} "
        f"{'stored':>8} {'unique':>8} {'lost':>5}"
    )
    for mode, sub_rate, listen_rate, _got, stored, unique, lost in rows:
        print(
            f"{mode:8} {sub_rate:20,.0f} {listen_rate:13,.0f} {listen_rate / sub_rate:6.2f} "
            f"{stored:8} {unique:8} {lost:5}"
        )
    return 0 if all(r[6] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
