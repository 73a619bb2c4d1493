"""`pontual replay AVL_FILE`: publish a recorded day of AVL pings through MQTT in event-time order.

What a demo animates the live page with, and how a real day is tried on `pontual serve`: every
ping of the file (any layout `pontual ingest` reads: documented columns, a shipped mapping such
as GTFS-RT CSV, or --map) becomes one QoS 1 message on `{root}/avl/{operator}/{vehicle}`, sent
at `--speed` times the recorded pace (0: as fast as the broker acknowledges). `--strip-trip-id`
withholds the device-reported trip ids, so the engine has to find the trips itself.

Imports stay light at the top (the CLI loads every verb to build its parser); the work's
imports are inside `run`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from pontual.messages import gettext
from pontual.verbs.arguments import add_broker_arguments

if TYPE_CHECKING:
    import paho.mqtt.client as mqtt
    import polars as pl

    from ingest.mqtt_options import ListenerOptions
    from pontual.context import Context

PAYLOAD_FIELDS = ("event_at", "lat", "lon", "speed_m_s", "heading_deg", "event_code", "trip_id")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="publish a recorded AVL file through MQTT in event-time order (demos, real-day trials)",
        description="Publish every ping of AVL_FILE as one MQTT message on "
        "{root}/avl/{operator}/{vehicle}, in event-time order, at --speed times the recorded "
        "pace.",
    )
    p.add_argument("avl_file", type=Path, help="AVL file (.csv, .parquet, .jsonl; as `ingest`)")
    add_broker_arguments(p)
    p.add_argument("--speed", type=float, default=1.0, help="times real time (1; 0 = no pause)")
    p.add_argument("--operator", help="operator topic level (default: the username, or 'replay')")
    p.add_argument("--map", help="column mapping name or TOML file (as `pontual ingest --map`)")
    p.add_argument("--strip-trip-id", action="store_true", help="withhold the reported trip ids")
    p.add_argument("--limit", type=int, help="publish only the first N pings")
    p.set_defaults(func=run)


def build_replay_messages(
    raw: pl.DataFrame, topic_root: str, operator: str, *, strip_trip_id: bool, source_tz: str
) -> pl.DataFrame:
    """The MQTT messages of a recording, in event-time order.

    `raw`: AVL records in the documented columns (text, as `ingest.files.read_raw_chunks` gives
    them). Output: t_s (event time, epoch s), topic, payload (JSON text with event_at as ISO
    8601 UTC and the documented fields the file has; trip_id left out with `strip_trip_id`).
    Records without a vehicle, a parseable time or a position are left out (the listener would
    quarantine them; a replay has no reason to send them).
    """
    import polars as pl

    from ingest.parsing import parse_instant

    at = parse_instant(raw["event_at"].cast(pl.String), source_tz)
    fields = [
        c
        for c in PAYLOAD_FIELDS
        if c in raw.columns and c != "event_at" and not (strip_trip_id and c == "trip_id")
    ]
    frame = (
        raw.with_columns(at.alias("_at"))
        .drop_nulls(["vehicle_id", "_at", "lat", "lon"])
        .sort("_at", maintain_order=True)
    )
    return frame.select(
        (pl.col("_at").dt.epoch("us") / 1e6).alias("t_s"),
        pl.format("{}/avl/{}/{}", pl.lit(topic_root), pl.lit(operator), "vehicle_id").alias(
            "topic"
        ),
        pl.struct(
            pl.col("vehicle_id").cast(pl.String),
            pl.col("_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("event_at"),
            *[pl.col(c) for c in fields],
        )
        .struct.json_encode()
        .alias("payload"),
    )


def run(args: argparse.Namespace, ctx: Context) -> int:
    import time

    import polars as pl

    from core.errors import InputError
    from ingest.files import read_raw_chunks
    from ingest.mapping import read_mapping
    from ingest.mqtt_options import build_listener_options
    from ingest.options import build_options
    from pontual.verbs.arguments import broker_values

    if args.speed < 0:
        raise InputError("--speed must be 0 or more", where="--speed", hint="e.g. --speed 10")
    mapping = read_mapping(args.map) if args.map else None
    chunks, _, zone = read_raw_chunks(args.avl_file, "avl", build_options(), mapping)
    raw = pl.concat(list(chunks), how="diagonal_relaxed")
    if args.limit:
        raw = raw.head(args.limit)
    broker = build_listener_options(**broker_values(args))
    operator = args.operator or broker.username or "replay"
    messages = build_replay_messages(
        raw,
        broker.topic_root,
        operator,
        strip_trip_id=args.strip_trip_id,
        source_tz=zone or "UTC",
    )
    if messages.height == 0:
        raise InputError(
            "no position with a vehicle, a time and coordinates",
            where=str(args.avl_file),
            hint="check the columns (vehicle_id, event_at, lat, lon) or use --map",
        )
    # never the listener's default client id: the broker would end the listener's session
    client = _connect(broker, args.client_id or "pontual-replay")
    t0_event = float(messages["t_s"][0])
    t0_wall = time.monotonic()
    sent = 0
    try:
        for (second,), part in messages.with_columns(pl.col("t_s").floor().alias("_sec")).group_by(
            "_sec", maintain_order=True
        ):
            if args.speed > 0:
                wait = t0_wall + (float(second) - t0_event) / args.speed - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            infos = [
                client.publish(topic, payload, qos=1)
                for topic, payload in zip(part["topic"], part["payload"], strict=True)
            ]
            for info in infos:
                info.wait_for_publish(timeout=30)
            sent += len(infos)
    finally:
        client.loop_stop()
        client.disconnect()
    span_min = (float(messages["t_s"][-1]) - t0_event) / 60
    print(
        gettext(
            "published {n} positions of {minutes} min recorded in {path}",
            n=sent,
            minutes=f"{span_min:.0f}",
            path=args.avl_file,
        )
    )
    return 0


def _connect(opt: ListenerOptions, client_id: str) -> mqtt.Client:
    """A started paho client connected to the broker of `opt`."""
    import paho.mqtt.client as mqtt

    from core.errors import ConfigError
    from ingest.mqtt_options import configure_client

    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5
    )
    configure_client(client, opt)
    client.max_inflight_messages_set(1000)
    try:
        client.connect(opt.host, opt.port)
    except OSError as exc:
        raise ConfigError(
            f"cannot connect to the broker {opt.host}:{opt.port}: {exc}",
            where="--host/--port",
            hint="start Mosquitto or correct the address",
        ) from exc
    client.loop_start()
    return client
