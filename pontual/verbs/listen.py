"""`pontual listen`: consume live AVL pings and ticketing taps from an MQTT broker into the store.

Runs until SIGTERM or SIGINT (then: commit the pending batch, acknowledge it, disconnect, exit
0), or until --max-messages / --idle-exit-s. Topics and payloads: ingest/README.md.
"""

from __future__ import annotations

import argparse
import signal
from types import FrameType

from core.settings import hash_key
from pontual.context import Context
from pontual.messages import gettext, translate
from pontual.verbs.arguments import add_broker_arguments, broker_values


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "listen",
        help="consume live AVL and fare messages from an MQTT broker (QoS 1, no loss)",
        description="Subscribe to {root}/avl/+/+ and {root}/fares/+/+ with QoS 1 in a "
        "persistent session and write the messages to the store in batches; a message is "
        "acknowledged only after its batch is committed.",
    )
    add_broker_arguments(p)
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
    from ingest.mqtt import MqttConsumer
    from ingest.mqtt_batches import make_batch_writer
    from ingest.mqtt_options import build_listener_options

    options = build_listener_options(
        **broker_values(args),
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
        consumer = MqttConsumer(
            store, options, writer, on_log=lambda text: ctx.say(translate(text))
        )

        def stop(signum: int, _frame: FrameType | None) -> None:
            consumer.stop()

        previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            consumer.connect()
            ctx.say(
                gettext(
                    "listening on {topics} (client id {client_id})",
                    topics=", ".join(options.topics()),
                    client_id=options.client_id,
                )
            )
            totals = consumer.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        ctx.say(
            gettext(
                "stopped: {n_messages} messages in {n_batches} batches, {n_accepted} accepted, "
                "{n_duplicate} duplicate, {n_quarantined} quarantined",
                n_messages=totals.n_messages,
                n_batches=consumer.n_batches,
                n_accepted=totals.n_accepted,
                n_duplicate=totals.n_duplicate,
                n_quarantined=totals.n_quarantined,
            )
        )
    return 0
