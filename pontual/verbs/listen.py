"""`pontual listen`: consume live AVL pings and ticketing taps from an MQTT broker into the store.

Runs until SIGTERM or SIGINT (then: commit the pending batch, acknowledge it, disconnect, exit
0), or until --max-messages / --idle-exit-s. Topics and payloads: ingest/README.md.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from types import FrameType

from core.settings import hash_key
from ingest.mqtt import MqttConsumer, build_listener_options, make_batch_writer
from pontual.context import Context

PASSWORD_ENV = "PONTUAL_MQTT_PASSWORD"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "listen",
        help="consume live AVL and fare messages from an MQTT broker (QoS 1, no loss)",
        description="Subscribe to {root}/avl/+/+ and {root}/fares/+/+ with QoS 1 in a "
        "persistent session and write the messages to the store in batches; a message is "
        "acknowledged only after its batch is committed.",
    )
    p.add_argument("--host", help="broker host (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="broker port (default 1883)")
    p.add_argument("--username", help="broker account of the listener")
    p.add_argument("--password", help=f"its password (better: env {PASSWORD_ENV})")
    p.add_argument("--tls-ca", type=Path, help="CA certificate file: connect with TLS")
    p.add_argument("--tls-cert", type=Path, help="client certificate (mutual TLS)")
    p.add_argument("--tls-key", type=Path, help="client private key (mutual TLS)")
    p.add_argument("--tls-insecure", action="store_true", help="do not check the host name")
    p.add_argument("--client-id", help="fixed client id naming the session (pontual-listener)")
    p.add_argument("--topic-root", help="first topic level (default pontual)")
    p.add_argument("--shared-group", help="MQTT 5 shared subscription group (several listeners)")
    p.add_argument("--batch-size", type=int, help="commit every N messages (default 5000)")
    p.add_argument("--batch-interval-s", type=float, help="or every S seconds (default 1.0)")
    p.add_argument(
        "--snapshot-interval-s", type=float, help="publish the readers' snapshot every S s (60)"
    )
    p.add_argument("--max-messages", type=int, help="stop after N messages (tests)")
    p.add_argument("--idle-exit-s", type=float, help="stop after S seconds without messages")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    options = build_listener_options(
        host=args.host,
        port=args.port,
        username=args.username,
        password=args.password or os.environ.get(PASSWORD_ENV),
        tls_ca_path=args.tls_ca,
        tls_cert_path=args.tls_cert,
        tls_key_path=args.tls_key,
        tls_insecure=args.tls_insecure or None,
        client_id=args.client_id,
        topic_root=args.topic_root,
        shared_group=args.shared_group,
        batch_size=args.batch_size,
        batch_interval_s=args.batch_interval_s,
        snapshot_interval_s=args.snapshot_interval_s,
        max_messages=args.max_messages,
        idle_exit_s=args.idle_exit_s,
    )
    key = hash_key(ctx.settings, create=True)
    with ctx.store() as store:
        writer = make_batch_writer(key=key, source=f"mqtt://{options.host}:{options.port}")
        consumer = MqttConsumer(store, options, writer, on_log=ctx.say)

        def stop(signum: int, _frame: FrameType | None) -> None:
            consumer.stop()

        previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            consumer.connect()
            ctx.say(f"listening on {', '.join(options.topics())} (client id {options.client_id})")
            totals = consumer.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        ctx.say(
            f"stopped: {totals.n_messages} messages in {consumer.n_batches} batches, "
            f"{totals.n_accepted} accepted, {totals.n_duplicate} duplicate, "
            f"{totals.n_quarantined} quarantined"
        )
    return 0
