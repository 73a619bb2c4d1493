"""Command-line arguments shared by several verbs: service dates and the MQTT broker connection."""

from __future__ import annotations

import argparse
import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from pontual.messages import gettext

if TYPE_CHECKING:
    import polars as pl

    from pontual.context import Context

PASSWORD_ENV = "PONTUAL_MQTT_PASSWORD"


def service_date(text: str) -> date:
    """argparse type for a service day written YYYY-MM-DD."""
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from exc


def add_broker_arguments(p: argparse.ArgumentParser) -> None:
    """Broker address, account, TLS and session options of `listen` and `serve`."""
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


def broker_values(args: argparse.Namespace) -> dict[str, object]:
    """The broker arguments as `ingest.mqtt_options.build_listener_options` keywords."""
    return {
        "host": args.host,
        "port": args.port,
        "username": args.username,
        "password": args.password or os.environ.get(PASSWORD_ENV),
        "tls_ca_path": args.tls_ca,
        "tls_cert_path": args.tls_cert,
        "tls_key_path": args.tls_key,
        "tls_insecure": args.tls_insecure or None,
        "client_id": args.client_id,
        "topic_root": args.topic_root,
    }


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """`--engine local|spark` and the Spark options (`match`, `crowding`)."""
    p.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local: this machine, the store file (default); spark: Spark jobs over a lake",
    )
    p.add_argument(
        "--master",
        default="local[2]",
        help="with --engine spark: the Spark master (local[N] or spark://host:7077)",
    )
    p.add_argument(
        "--lake",
        help="with --engine spark: the lake to read and write (default: the global --lake)",
    )
    p.add_argument(
        "--executor-memory",
        default="512m",
        help="with --engine spark: JVM memory per executor (the work runs in Python workers)",
    )


def engine_lake(args: argparse.Namespace, lake: Path | None) -> str | None:
    """The lake an `--engine spark` run reads and writes (its --lake, else the global one);
    a user error when none is given or it is not a folder, or when --lake comes without
    --engine spark. None for the local engine."""
    from core.errors import ConfigError

    if args.engine != "spark":
        if args.lake is not None:
            raise ConfigError(
                "--lake goes with --engine spark (the local engine writes the store file)",
                where="command line, field --lake",
                hint="add --engine spark",
            )
        return None
    chosen = args.lake or lake
    if chosen is None:
        raise ConfigError(
            "the spark engine reads and writes a Parquet lake: --lake is missing",
            where="command line, field --lake",
            hint="write the lake with `pontual export parquet --lake PATH` and pass --lake PATH",
        )
    if not Path(chosen).is_dir():
        raise ConfigError(
            "lake not found",
            where=str(chosen),
            hint="write one with `pontual export parquet --lake PATH`",
        )
    return str(chosen)


def print_spark_summary(ctx: Context, summary: pl.DataFrame) -> None:
    """The partitions a Spark run wrote (day, table, rows, partitions), unless --quiet."""
    if ctx.settings.quiet:
        return
    from rich.table import Table

    shown = Table(
        gettext("day"), gettext("table"), gettext("rows (of a table)"), gettext("partitions")
    )
    for row in summary.iter_rows():
        shown.add_row(row[0].isoformat(), row[1], str(row[2]), str(row[3]))
    ctx.console.print(shown)
