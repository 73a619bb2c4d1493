"""Feed benchmark: ping-to-feed latency through a real broker and server, and feed requests/s.

A synthetic grid city of `--vehicles` buses (the simulator, 30 s fixes) is loaded into a store;
a real Mosquitto (tests/mosquitto.py) and a real `pontual serve` subprocess run on 127.0.0.1.
After a warm-up (`--warmup-min` minutes of fixes published in a burst, so the engine holds a
realistic trace window), every vehicle publishes its next fix every `--interval-s` seconds for
`--measure-s` seconds (the fixes are the simulator's consecutive 30 s fixes, published faster
than real time: the message rate is what a fleet pinging every 10 s sends). A poller fetches
vehicle-positions.pb as fast as it can and notes, for every fix, when the vehicle's position
in the feed first carries that fix's timestamp. Latency = that moment - the start of the
publishing round (so it includes the time to publish the round). p50 / p99, target p99 <= 1 s.

Requests/s: `wrk` (Debian package) against vehicle-positions.pb, plain and conditional
(If-None-Match: 304), bounded to `--wrk-s` seconds; without wrk, an asyncio httpx client with
`--connections` keep-alive connections, bounded in time. Target >= 2 000/s.

Run: ``.venv/bin/python -m benchmarks.bench_feed [--vehicles 2000] [--measure-s 60]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import httpx
import numpy as np
import polars as pl
from google.transit import gtfs_realtime_pb2 as rt

from core.profile import load_profile
from core.store import Store
from ingest.files import ingest_file
from ingest.gtfs_feed import load_gtfs
from ingest.options import build_options
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from tests.mosquitto import LISTENER_USER, Broker, Publisher, free_port

ROOT = Path(__file__).resolve().parent.parent
DAY = date(2026, 3, 3)
PROFILE_ID = "bento-goncalves-2021"
# 07:00 local (UTC-3): the morning peak, every block on the road
PEAK_UTC = "2026-03-03T10:00:00"


def build_fleet_store(folder: Path, n_vehicles: int) -> tuple[Path, pl.DataFrame]:
    """Simulate one weekday of a grid city and load its GTFS and register into a store.

    Returns the store path and the day's fixes (vehicle_id, operator_id, event_at, lat, lon,
    speed_m_s, heading_deg), in delivery order."""
    sim = folder / "sim"
    simulate(
        SimulationOptions(
            start=DAY, days=1, n_vehicles=n_vehicles, seed=5, text_days=0, write_text_avl=False
        ),
        sim,
    )
    store_path = folder / "store" / "pontual.duckdb"
    store_path.parent.mkdir(parents=True, exist_ok=True)
    options = build_options()
    with Store.open(store_path) as store:
        load_gtfs(store, sim / "gtfs", materialise_days=(DAY, DAY))
        ingest_file(
            store, sim / "vehicles.csv", "vehicles", options=options,
            profile=load_profile(PROFILE_ID),
        )  # fmt: skip
        store.publish_snapshot()
    fixes = pl.read_parquet(sim / "avl.parquet").select(
        "vehicle_id", "operator_id", "event_at", "lat", "lon", "speed_m_s", "heading_deg"
    )
    return store_path, fixes


def to_rounds(fixes: pl.DataFrame, start: str, n_rounds: int) -> list[pl.DataFrame]:
    """From `start` (UTC), each vehicle's consecutive fixes: round k holds the k-th fix of every
    vehicle (with topic and JSON payload)."""
    t0 = pl.lit(start).str.to_datetime(time_zone="UTC", time_unit="us")
    t1 = t0 + pl.duration(seconds=30 * n_rounds)
    msgs = (
        fixes.filter(pl.col("event_at").is_between(t0, t1, closed="left"))
        .sort("vehicle_id", "event_at")
        .with_columns(pl.int_range(pl.len()).over("vehicle_id").alias("_k"))
        .filter(pl.col("_k") < n_rounds)
        .with_columns(
            pl.format("pontual/avl/{}/{}", "operator_id", "vehicle_id").alias("topic"),
            pl.struct(
                "vehicle_id",
                pl.col("event_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ").alias("event_at"),
                "lat",
                "lon",
                "speed_m_s",
                "heading_deg",
            )
            .struct.json_encode()
            .alias("payload"),
            (pl.col("event_at").dt.epoch("s")).alias("event_s"),
        )
    )
    return [part for _, part in sorted(msgs.partition_by("_k", as_dict=True).items())]


def publish(publishers: dict[str, Publisher], part: pl.DataFrame) -> None:
    """Publish one round, one publisher per operator (the broker's ACL)."""
    for (op,), mine in part.partition_by("operator_id", as_dict=True).items():
        msgs = [(t, p.encode()) for t, p in zip(mine["topic"], mine["payload"], strict=True)]
        codes = publishers[str(op)].send(msgs, timeout_s=120)
        if any(codes):
            raise RuntimeError(f"broker refused {sum(map(bool, codes))} messages of {op}")


class FeedPoller:
    """Polls vehicle-positions.pb; keeps, per vehicle, the wall time each new fix time was
    first seen (state for the latency measurement)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.seen: dict[tuple[str, int], float] = {}
        self.n_polls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        etag = ""
        with httpx.Client(base_url=self.base, timeout=10.0) as client:
            while not self._stop.is_set():
                r = client.get(
                    "/gtfs-rt/vehicle-positions.pb", headers={"If-None-Match": etag} if etag else {}
                )
                now = time.monotonic()
                self.n_polls += 1
                if r.status_code == 304:
                    continue
                etag = r.headers.get("etag", "")
                feed = rt.FeedMessage.FromString(r.content)
                for e in feed.entity:
                    key = (e.vehicle.vehicle.id, int(e.vehicle.timestamp))
                    self.seen.setdefault(key, now)


def measure_latency(
    base: str, publishers: dict[str, Publisher], rounds: list[pl.DataFrame], interval_s: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Latencies (s) of every fix that is its vehicle's newest, publishing a round per
    interval: from the start of its round's publishing (upper bound) and from the broker's
    acknowledgement of the whole round (lower bound); and the mean publishing time of a round."""
    poller = FeedPoller(base)
    poller.start()
    sent: list[tuple[str, int, float, float]] = []
    newest: dict[str, int] = {}
    publish_s = []
    next_at = time.monotonic()
    for part in rounds:
        time.sleep(max(0.0, next_at - time.monotonic()))
        t_pub = time.monotonic()
        publish(publishers, part)
        t_ack = time.monotonic()
        publish_s.append(t_ack - t_pub)
        for v, s in zip(part["vehicle_id"], part["event_s"], strict=True):
            if s > newest.get(v, 0):  # an out-of-order or repeated fix never shows as new
                newest[v] = s
                sent.append((v, int(s), t_pub, t_ack))
        next_at = t_pub + interval_s
    time.sleep(3.0)
    poller.stop()
    seen = [(poller.seen[(v, s)], t0, t1) for v, s, t0, t1 in sent if (v, s) in poller.seen]
    print(
        f"latency: {len(sent)} fixes sent, {len(seen)} seen in the feed, "
        f"{poller.n_polls} polls of vehicle-positions.pb"
    )
    from_start = np.array([t - t0 for t, t0, _ in seen])
    from_ack = np.array([max(0.0, t - t1) for t, _, t1 in seen])
    return from_start, from_ack, float(np.mean(publish_s))


def measure_requests(url: str, seconds: int, connections: int, etag: str | None) -> float:
    """Requests/s against `url` (wrk when installed, else asyncio httpx), bounded in time."""
    wrk = shutil.which("wrk")
    if wrk:
        cmd = [wrk, "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", url]
        if etag:
            cmd[1:1] = ["-H", f"If-None-Match: {etag}"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30).stdout
        match = re.search(r"Requests/sec:\s+([\d.]+)", out)
        return float(match.group(1)) if match else float("nan")
    return asyncio.run(_httpx_load(url, seconds, connections, etag))


async def _httpx_load(url: str, seconds: int, connections: int, etag: str | None) -> float:
    headers = {"If-None-Match": etag} if etag else {}
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=10.0) as client:

        async def worker() -> int:
            n = 0
            while time.monotonic() < deadline:
                await client.get(url, headers=headers)
                n += 1
            return n

        started = time.monotonic()
        counts = await asyncio.gather(*(worker() for _ in range(connections)))
    return sum(counts) / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vehicles", type=int, default=2000)
    parser.add_argument("--interval-s", type=float, default=10.0)
    parser.add_argument("--measure-s", type=float, default=60.0)
    parser.add_argument("--warmup-min", type=int, default=20, help="minutes of fixes first")
    parser.add_argument("--wrk-s", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        store_path, fixes = build_fleet_store(folder, args.vehicles)
        n_vehicles = fixes["vehicle_id"].n_unique()
        print(f"simulated {n_vehicles} vehicles in {time.perf_counter() - t0:.0f} s")
        operators = tuple(sorted(fixes["operator_id"].unique().to_list()))
        warm_rounds = args.warmup_min * 2  # 30 s fixes
        n_measure = int(args.measure_s / args.interval_s)
        rounds = to_rounds(fixes, PEAK_UTC, warm_rounds + n_measure)
        with Broker(folder / "broker", operators=operators) as broker:
            http_port = free_port()
            env = {**os.environ, "PONTUAL_MQTT_PASSWORD": broker.passwords[LISTENER_USER]}
            proc = subprocess.Popen(
                [
                    sys.executable, "-m", "pontual", "--quiet", "--store", str(store_path),
                    "serve", "--port", str(broker.port), "--username", LISTENER_USER,
                    "--http-port", str(http_port), "--date", DAY.isoformat(),
                    "--batch-interval-s", "0.1",
                ],
                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip
            base = f"http://127.0.0.1:{http_port}"
            publishers = {
                op: Publisher(broker.port, op, broker.passwords[op], f"bench-{op}")
                for op in operators
            }
            try:
                _wait_health(base, proc)
                t1 = time.perf_counter()
                for part in rounds[:warm_rounds]:
                    publish(publishers, part)
                _wait_settled(base)
                warm = httpx.get(base + "/health").json()
                n_warm = sum(p.height for p in rounds[:warm_rounds])
                print(f"warm-up: {n_warm} fixes published and applied in "
                      f"{time.perf_counter() - t1:.0f} s; {warm['n_vehicles']} vehicles in the "
                      f"feed, {warm['n_trips_predicted']} trips predicted")  # fmt: skip
                lat, lat_ack, round_s = measure_latency(
                    base, publishers, rounds[warm_rounds:], args.interval_s
                )
                health = httpx.get(base + "/health").json()
                url = base + "/gtfs-rt/vehicle-positions.pb"
                head = httpx.get(url)
                rps = measure_requests(url, args.wrk_s, args.connections, None)
                rps_304 = measure_requests(url, args.wrk_s, args.connections, head.headers["etag"])
            finally:
                for pub in publishers.values():
                    pub.close()
                proc.terminate()
                proc.communicate(timeout=60)
    print(f"engine timings of the last refresh (ms): {health['timings_ms']}")
    for name, values in (("round start", lat), ("round acknowledged", lat_ack)):
        p50, p99 = np.percentile(values, [50, 99]) if values.size else (np.nan, np.nan)
        print(
            f"ping -> feed latency from {name}, {n_vehicles} vehicles every "
            f"{args.interval_s:.0f} s: p50 {p50:.2f} s, p99 {p99:.2f} s (target p99 <= 1 s)"
        )
    print(f"publishing a round of {n_vehicles} fixes took {round_s:.2f} s on average")
    print(
        f"vehicle-positions.pb ({len(head.content) / 1024:.0f} KiB, {n_vehicles} vehicles): "
        f"{rps:.0f} requests/s; conditional (304): {rps_304:.0f} requests/s "
        f"({'wrk' if shutil.which('wrk') else 'httpx'}, {args.connections} connections; "
        f"target >= 2 000/s)"
    )


def _wait_health(base: str, proc: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"pontual serve exited: {proc.stdout.read().decode()}")  # type: ignore[union-attr]
        try:
            if httpx.get(base + "/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("pontual serve did not answer /health in time")


def _wait_settled(base: str, quiet_s: float = 2.0, timeout_s: float = 300.0) -> None:
    """Wait until the live view stops changing (the burst is consumed)."""
    deadline = time.monotonic() + timeout_s
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        version = httpx.get(base + "/health", timeout=5.0).json()["version"]
        if version != last:
            last, since = version, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
        time.sleep(0.2)


if __name__ == "__main__":
    main()
