"""`pontual serve`: the live engine and its GTFS-Realtime feed, fed by the MQTT streams.

Store ownership (the store is single-writer): `serve` *runs the listener itself*. It consumes
the same topics as `pontual listen`, with the same client id by default (so it resumes the
same persistent session and nothing published while one or the other was down is lost),
writes every batch to the store with the listener's writer, acknowledges after the commit, and
publishes the readers' snapshot; after each committed batch the `on_batch_committed` hook feeds
the live engine. Reference data (the day's schedule, the `stop_visits` history, the fleet
register, incidents) is read from that same connection at start (incidents again every
`--incidents-refresh-s`). Run `serve` *instead of* `listen`, not beside it: a second writer
would be refused by DuckDB's lock.

Threads: the MQTT consumer runs in a background thread: per batch it commits, folds the fixes
into the engine (`LiveEngine.ingest`, milliseconds) and re-encodes the positions feed, so a ping
reaches the feed within a batch interval. A refresher thread re-runs the trip state
(`LiveEngine.refresh`: runs, assignment, predictions, loads; about a second at 2 000 vehicles)
one refresh after another while data comes, each taking what arrived meanwhile, and encodes the
trip-updates and alerts feeds. uvicorn serves HTTP in the main thread and handles
SIGINT/SIGTERM, after which the consumer commits its pending batch, acknowledges it and
disconnects.

Self-scoring: every published view's predictions go to a `PredictionLog` (first prediction
per trip, stop and horizon bucket), appended to `live_predictions` by the consumer thread (the
store's writer) every `LOG_FLUSH_S` and at the end; at start, the previous days that have a
log and matched `stop_visits` but no score are scored (`live_prediction_accuracy`).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from datetime import date, datetime
from types import FrameType
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from core.errors import ConfigError
from core.settings import hash_key
from pontual.context import Context
from pontual.messages import gettext, translate
from pontual.verbs.arguments import add_broker_arguments, broker_values

LOG_FLUSH_S = 60.0
"""the published predictions are appended to `live_predictions` at most this often (seconds)"""

if TYPE_CHECKING:
    import polars as pl
    import uvicorn

    from analytics.live.reference import LiveReference
    from core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="live feed: consume the MQTT streams and serve GTFS-Realtime and stop arrivals",
        description="Consume the AVL and fare topics (as `pontual listen`, writing the store), "
        "keep the live state of every vehicle, and serve GTFS-Realtime VehiclePositions, "
        "TripUpdates and Alerts, a JSON stop-arrivals API and /health over HTTP.",
    )
    add_broker_arguments(p)
    p.add_argument(
        "--batch-interval-s", type=float, default=0.25, help="commit and update every S s (0.25)"
    )
    p.add_argument("--batch-size", type=int, help="or every N messages (default 5000)")
    p.add_argument(
        "--snapshot-interval-s", type=float, help="publish the readers' snapshot every S s (60)"
    )
    p.add_argument("--http-host", default="127.0.0.1", help="HTTP bind address (127.0.0.1)")
    p.add_argument("--http-port", type=int, default=8080, help="HTTP port (8080)")
    p.add_argument("--cors-origin", action="append", help="allowed CORS origin (default: any)")
    p.add_argument("--date", help="service date YYYY-MM-DD (default: today in the feed's zone)")
    p.add_argument(
        "--incidents-refresh-s", type=float, default=60.0, help="re-read incidents every S s"
    )
    p.add_argument("--idle-exit-s", type=float, help="stop after S seconds without messages")
    p.add_argument("--max-runtime-s", type=float, help="stop after S seconds (tests, demos)")
    p.set_defaults(func=run)


def resolve_service_date(store: Store, given: str | None) -> date:
    """The --date, or today in the time zone of the newest loaded feed."""
    if given:
        try:
            return date.fromisoformat(given)
        except ValueError as exc:
            raise ConfigError(
                f"--date is not a date: {given!r}",
                where="option --date",
                hint="write it as YYYY-MM-DD, e.g. 2026-03-03",
            ) from exc
    feeds = store.query("SELECT timezone FROM feed_versions ORDER BY loaded_at DESC LIMIT 1")
    if feeds.height == 0:
        raise ConfigError(
            "no GTFS feed loaded: the live engine needs the timetable",
            where=str(store.path),
            hint="load one with `pontual gtfs load PATH`",
        )
    return datetime.now(ZoneInfo(str(feeds["timezone"][0]))).date()


def check_http_port_free(host: str, port: int) -> None:
    """Refuse a busy HTTP port at once (exit 2), before the store is read and the broker is
    joined: found only when the server starts, it ended `serve` after it had consumed messages.
    """
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        # as uvicorn binds: a port in TIME_WAIT is free, one a process listens on is not
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(
                f"HTTP port {port} on {host} is not free ({exc.strerror})",
                where="--http-host/--http-port",
                hint="choose another port with --http-port, or stop the process using it",
            ) from exc


def run(args: argparse.Namespace, ctx: Context) -> int:
    import uvicorn

    check_http_port_free(args.http_host, args.http_port)

    from analytics.live.accuracy import (
        PredictionLog,
        find_days_to_score,
        read_uncertainty,
        run_accuracy_day,
    )
    from analytics.live.engine import LiveEngine
    from analytics.live.options import LiveOptions
    from analytics.live.reference import read_live_reference, refresh_incidents
    from analytics.matching.options import MatchOptions
    from core.kernel_cache import announce_if_cold
    from ingest.mqtt import MqttConsumer
    from ingest.mqtt_batches import make_batch_writer
    from ingest.mqtt_options import build_listener_options
    from pontual.feed_server import FeedCache, build_app
    from pontual.stop_page import build_passenger_names

    options = build_listener_options(
        **broker_values(args),
        batch_size=args.batch_size,
        batch_interval_s=args.batch_interval_s,
        snapshot_interval_s=args.snapshot_interval_s,
        idle_exit_s=args.idle_exit_s,
    )
    key = hash_key(ctx.settings, create=True)
    profile = ctx.profile
    if not ctx.settings.quiet:
        announce_if_cold()  # the live engine runs matching's kernels
    with ctx.store() as store:
        service_date = resolve_service_date(store, args.date)
        reference = read_live_reference(store, service_date, profile, LiveOptions(), MatchOptions())
        ctx.say(describe_history(service_date, reference))
        # the previous days' logs are scored once they are matched (the next day's start)
        for day in find_days_to_score(store, service_date):
            n = run_accuracy_day(store, day, profile.id)
            ctx.say(
                gettext("accuracy of the predictions of {day} scored ({n} groups)", day=day, n=n)
            )
        engine = LiveEngine(reference, profile)
        # what the passenger's stop page reads besides ids: stop codes, line numbers, headsigns
        feed_ids = sorted(set(reference.trips["feed_id"].drop_nulls().to_list()))
        where = f"feed_id IN ({', '.join('?' * len(feed_ids))})" if feed_ids else "false"
        names = build_passenger_names(
            store.read("gtfs_stops", where, feed_ids).unique("stop_id", keep="last"),
            store.read("gtfs_routes", where, feed_ids).unique("route_id", keep="last"),
            store.read("gtfs_trips", where, feed_ids),
        )
        # GTFS-RT `uncertainty`: the median error per horizon of the latest scored day
        engine.uncertainty = read_uncertainty(store, service_date)
        cache = FeedCache(engine)
        log = PredictionLog(service_date)
        refreshed = {"at": time.monotonic(), "logged": time.monotonic()}
        wake = threading.Event()
        stopping = threading.Event()

        def on_batch(avl: pl.DataFrame, fares: pl.DataFrame) -> None:
            # runs in the consumer thread, after the commit: the fixes go straight to the
            # positions feed; the trip state is refreshed by the refresher thread. A failing
            # update must not stop the ingest (the batch is already safe in the store)
            try:
                if time.monotonic() - refreshed["at"] >= args.incidents_refresh_s:
                    # the store's connection belongs to this thread
                    refresh_incidents(store, reference)
                    refreshed["at"] = time.monotonic()
                if time.monotonic() - refreshed["logged"] >= LOG_FLUSH_S:
                    store.append("live_predictions", log.take())
                    refreshed["logged"] = time.monotonic()
                engine.ingest(avl, fares)
                cache.warm(("vehicle-positions",))
                wake.set()
            except Exception as exc:  # logged; the feed keeps its last view
                ctx.err.print(gettext("live update failed: {error}", error=repr(exc)), markup=False)

        def refresher() -> None:
            # one refresh after another while data comes: each takes what arrived meanwhile
            while not stopping.is_set():
                if not wake.wait(timeout=0.5):
                    continue
                wake.clear()
                try:
                    view = engine.refresh()
                    cache.warm()
                    log.record(view.predictions, view.clock_s)
                except Exception as exc:  # logged; the feed keeps its last view
                    ctx.err.print(
                        gettext("live refresh failed: {error}", error=repr(exc)), markup=False
                    )

        writer = make_batch_writer(key=key, source=f"mqtt://{options.host}:{options.port}")
        consumer = MqttConsumer(
            store, options, writer, on_batch_committed=on_batch, on_log=_quiet_log(ctx)
        )
        consumer.connect()
        config = uvicorn.Config(
            build_app(
                engine,
                cache=cache,
                cors_origins=tuple(args.cors_origin or ("*",)),
                names=names,
                timezone=profile.general.timezone.value,
            ),
            host=args.http_host,
            port=args.http_port,
            log_level="warning",
            lifespan="off",
        )
        server = _signal_free_server(config)

        def consume() -> None:
            try:
                consumer.run()
            finally:
                server.should_exit = True

        thread = threading.Thread(target=consume, name="mqtt-consumer", daemon=True)
        thread.start()
        refresh_thread = threading.Thread(target=refresher, name="live-refresh", daemon=True)
        refresh_thread.start()
        timer = None
        if args.max_runtime_s:
            timer = threading.Timer(args.max_runtime_s, consumer.stop)
            timer.daemon = True
            timer.start()
        ctx.say(
            gettext(
                "serving http://{host}:{port}/gtfs-rt/vehicle-positions.pb (trip-updates.pb, "
                "alerts.pb, /api/stops/<id>/arrivals, /health) and the passengers' stop page "
                "http://{host}:{port}/paradas; listening on {topics}",
                host=args.http_host,
                port=args.http_port,
                topics=", ".join(options.topics()),
            )
        )

        def stop(signum: int, _frame: FrameType | None) -> None:
            server.should_exit = True
            consumer.stop()

        previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            server.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            consumer.stop()
            thread.join(timeout=30)
            stopping.set()
            refresh_thread.join(timeout=30)
            if timer is not None:
                timer.cancel()
            store.append("live_predictions", log.take())
        totals = consumer.totals
        ctx.say(
            gettext(
                "stopped: {n_messages} messages, {n_accepted} accepted, {n_duplicate} duplicate, "
                "{n_quarantined} quarantined; {n_updates} live updates",
                n_messages=totals.n_messages,
                n_accepted=totals.n_accepted,
                n_duplicate=totals.n_duplicate,
                n_quarantined=totals.n_quarantined,
                n_updates=engine.view.version,
            )
        )
    return 0


def describe_history(service_date: date, reference: LiveReference) -> str:
    """What the engine learned from past stop visits, in one line (the chosen language); on a
    first day (nothing learned) it says that the timetable's running times and layovers are
    used."""
    if reference.n_segments_learned == 0 and reference.n_terminals_learned == 0:
        return gettext(
            "live engine of {day}: {n} trips; no history of stop visits (stop_visits): "
            "predictions with the timetable's running times and layovers",
            day=service_date,
            n=reference.trips.height,
        )
    return gettext(
        "live engine of {day}: {n} trips; learned from history {n_segments} segment-hours of "
        "running time and the layovers of {n_terminals} terminals",
        day=service_date,
        n=reference.trips.height,
        n_segments=reference.n_segments_learned,
        n_terminals=reference.n_terminals_learned,
    )


def _signal_free_server(config: uvicorn.Config) -> uvicorn.Server:
    """uvicorn without its own signal handling: `run` handles SIGTERM/SIGINT so that the
    consumer commits and acknowledges its batch and the verb exits 0 (uvicorn re-raises the
    signal after its shutdown, which would kill the process before that). The class is made
    here, not at module level, so that `pontual --help` does not import uvicorn."""
    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return _Server(config)


def _quiet_log(ctx: Context) -> Callable[[str], None]:
    """Connection events are worth a line; per-batch lines (4 a second) are not."""

    def log(message: str) -> None:
        if not message.startswith("batch "):
            ctx.say(translate(message))

    return log
