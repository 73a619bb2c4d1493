"""The live MQTT consumer: AVL pings and ticketing taps from a broker into the store, losing nothing.

Delivery contract (see ingest/README.md, "MQTT topics and payloads"):
- subscribes with QoS 1 to ``{root}/avl/+/+`` and ``{root}/fares/+/+`` in a persistent session
  (MQTT 5, fixed client id, ``clean_start=False``, a session expiry), so messages published
  while the listener or the broker is down wait in the broker's queue;
- acknowledges a message (PUBACK) only after the batch holding it is committed to DuckDB; a
  crash before the commit means the broker redelivers it, a crash between commit and ack means a
  redelivered duplicate that the store's keys absorb: every message ends in the store once;
- batches close on size (`batch_size` messages) or age (`batch_interval_s`), whichever first.

`MqttConsumer` holds the state (connection, pending batch); `pontual listen` runs it until a
signal, and the real-time server reuses it through the `on_batch_committed` hook. Its options are
`ingest.mqtt_options`, its batch writer `ingest.mqtt_batches`, its socket `ingest.mqtt_socket`.
"""

from __future__ import annotations

import logging
import select
import ssl
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import paho.mqtt.client as mqtt
import polars as pl
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from core.errors import InputError
from core.store import Store
from ingest.mqtt_batches import BatchCounts, BatchHook, BatchWriter
from ingest.mqtt_options import RECEIVE_MAXIMUM, ListenerOptions, configure_client
from ingest.mqtt_payloads import MessageFrames, build_message_frames, build_unprocessable_quarantine
from ingest.mqtt_socket import BufferedClient, BufferedSocket

log = logging.getLogger(__name__)


class MqttConsumer:
    """Consumes the AVL and fare topics into the store in committed, acknowledged batches.

    Use: ``consumer.connect()``, then ``consumer.run()`` (until `stop()`, `max_messages` or
    `idle_exit_s`), or drive it with ``consumer.poll(timeout_s)`` from another loop. After each
    commit `on_batch_committed(avl_raw, fares_raw)` gets the raw-record frames of the batch.
    """

    def __init__(
        self,
        store: Store,
        options: ListenerOptions,
        write_batch: BatchWriter,
        *,
        on_batch_committed: BatchHook | None = None,
        on_log: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.options = options
        self.write_batch = write_batch
        self.on_batch_committed = on_batch_committed
        self.on_log = on_log or log.info
        self.client = self._make_client()
        # The pending batch: parallel lists, filled by on_message (the only per-message code).
        self._topics: list[str] = []
        self._payloads: list[bytes] = []
        self._acks: list[int] = []  # mids of QoS 1 messages, acked after the commit
        self._batch_started = 0.0
        self._last_message = time.monotonic()
        self._last_snapshot = time.monotonic()
        # a committed batch the readers' snapshot does not show yet: published once the
        # interval is over, whether or not another batch comes (`poll`)
        self._unpublished = False
        self._stopping = False
        self._connected = False
        self._answered = False
        self._subscribed = False
        self._resumed = False
        self._connect_error: str | None = None
        self.n_messages = 0
        self.n_batches = 0
        self.totals = BatchCounts(0, 0, 0, 0, 0.0)

    # -- connection -------------------------------------------------------------------------
    def _make_client(self) -> mqtt.Client:
        opt = self.options
        client = BufferedClient(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=opt.client_id,
            protocol=mqtt.MQTTv5,
            manual_ack=True,
        )
        configure_client(client, opt)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        return client

    def _connect_properties(self) -> Properties:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = self.options.session_expiry_s
        # Let a whole batch be in flight: we ack only after the commit.
        props.ReceiveMaximum = RECEIVE_MAXIMUM
        return props

    def connect(self, *, timeout_s: float = 10.0) -> None:
        """Connect, resume (or create) the persistent session and subscribe."""
        opt = self.options
        deadline = time.monotonic() + timeout_s
        self._connect_error = None
        self._answered = False  # a CONNACK came (accepting or refusing)
        try:
            self.client.connect(
                opt.host,
                opt.port,
                keepalive=opt.keepalive_s,
                clean_start=False,
                properties=self._connect_properties(),
            )
        except (OSError, ssl.SSLError) as exc:
            untrusted = isinstance(exc, ssl.SSLCertVerificationError)
            raise InputError(
                f"cannot reach the MQTT broker: {exc}",
                where=f"{opt.host}:{opt.port}",
                hint="the broker's certificate must be signed by the CA of --tls-ca and name "
                "--host (or pass --tls-insecure to skip the name check)"
                if untrusted
                else "check --host/--port, that Mosquitto is running, and the TLS options",
            ) from exc
        # Wait for the CONNACK; in a new session also for the SUBACK (nothing is queued for a
        # new session, and a message published before the subscription would not be kept). A
        # resumed session sends its backlog before the SUBACK: that is consumed by `run()`.
        while not (self._connected and (self._resumed or self._subscribed)):
            if self._connect_error is not None:
                break
            if time.monotonic() > deadline:
                raise InputError(
                    "the MQTT broker did not answer the connection in time",
                    where=f"{opt.host}:{opt.port}",
                    hint="check that the port is an MQTT listener (TLS port needs --tls-ca)",
                )
            rc = self._step(0.1)
            if rc != mqtt.MQTT_ERR_SUCCESS and self._connect_error is None:
                # A broker refusing an account answers with a reason; one that hangs up before
                # answering most often got plain MQTT on a TLS listener.
                hint = (
                    "check the credentials and the broker log"
                    if opt.uses_tls or self._answered
                    else "if the port is a TLS listener, give --tls-ca (the CA that signed the "
                    "broker's certificate); else check the credentials and the broker log"
                )
                raise InputError(
                    "the MQTT broker closed the connection"
                    + ("" if self._answered else " before answering"),
                    where=f"{opt.host}:{opt.port}",
                    hint=hint,
                )
        self._raise_if_refused()

    def _raise_if_refused(self) -> None:
        if self._connect_error is not None:
            opt = self.options
            raise InputError(
                f"the MQTT broker refused the connection: {self._connect_error}",
                where=f"{opt.host}:{opt.port}, user {opt.username}",
                hint="check --username/--password, the password file and the ACL",
            )

    def _on_connect(self, client: mqtt.Client, _ud: Any, flags: Any, reason: Any, _p: Any) -> None:
        self._answered = True
        if reason.is_failure:
            self._connect_error = str(reason)
            return
        self._connected = True
        self._resumed = bool(flags.session_present)
        # Subscribing again in a resumed session is harmless and covers a session the broker lost.
        client.subscribe([(t, 1) for t in self.options.topics()])
        self.on_log(
            f"connected to {self.options.host}:{self.options.port} "
            f"(session {'resumed' if flags.session_present else 'new'})"
        )

    def _on_subscribe(self, _c: Any, _ud: Any, _mid: int, reasons: Any, _p: Any) -> None:
        refused = [str(r) for r in reasons if r.is_failure]
        if refused:
            self._connect_error = f"subscription refused ({', '.join(refused)})"
        else:
            self._subscribed = True

    def _on_disconnect(self, _c: Any, _ud: Any, _flags: Any, reason: Any, _p: Any) -> None:
        self._connected = False
        if not self._stopping and self._answered:  # (before a CONNACK, connect() reports)
            self.on_log(f"disconnected from the broker ({reason}); will reconnect")
        # Packet ids of the pending batch belong to the lost connection: commit the records (the
        # broker redelivers them anyway, and the store absorbs the duplicates) but never ack them.
        self._acks.clear()

    def _on_message(self, _c: Any, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        if not self._topics:
            self._batch_started = time.monotonic()
        self._topics.append(msg.topic)
        self._payloads.append(bytes(msg.payload))
        if msg.qos:
            self._acks.append(msg.mid)

    # -- batches ----------------------------------------------------------------------------
    @property
    def n_pending(self) -> int:
        return len(self._topics)

    def flush(self) -> BatchCounts | None:
        """Commit the pending batch, then acknowledge its messages. None when nothing pending."""
        if not self._topics:
            return None
        started = time.perf_counter()
        topics, payloads, acks = self._topics, self._payloads, self._acks
        self._topics, self._payloads, self._acks = [], [], []
        frames, (accepted, duplicate, quarantined) = self._commit(topics, payloads)
        # Only now is the batch durable: acknowledge it (PUBACK), never before.
        for mid in acks:
            self.client.ack(mid, 1)
        counts = BatchCounts(
            len(topics), accepted, duplicate, quarantined, time.perf_counter() - started
        )
        self._add(counts)
        self.on_log(
            f"batch {self.n_batches}: {counts.n_messages} messages, {counts.n_accepted} accepted, "
            f"{counts.n_duplicate} duplicate, {counts.n_quarantined} quarantined "
            f"({counts.commit_s * 1000:.0f} ms)"
        )
        if self.on_batch_committed is not None:
            self.on_batch_committed(frames.avl, frames.fares)
        self._unpublished = True
        self._maybe_publish_snapshot()
        return counts

    def _commit(
        self, topics: list[str], payloads: list[bytes]
    ) -> tuple[MessageFrames, tuple[int, int, int]]:
        """Decode, validate and write one batch in one transaction; counts in messages.

        What a publisher sent can only make the decoding or the validation fail, never the
        write: both isolate the records at fault into quarantine (`_build_frames`, and
        `compute_judged_isolating` in the writer). An error of the write itself (the store)
        propagates, and the batch is not acknowledged.
        """
        frames = self._build_frames(topics, payloads)
        with self.store.transaction():
            accepted, duplicate, quarantined = self.write_batch(self.store, frames)
            if frames.quarantine.height:
                quarantined += self.store.append("quarantine", frames.quarantine).n_inserted
        return frames, (accepted, duplicate, quarantined)

    def _build_frames(self, topics: list[str], payloads: list[bytes]) -> MessageFrames:
        opt = self.options

        def build(t: list[str], p: list[bytes]) -> MessageFrames:
            return build_message_frames(
                t,
                p,
                topic_root=opt.topic_root,
                received_at=datetime.now(UTC),
                max_message_bytes=opt.max_message_bytes,
                max_field_bytes=opt.max_field_bytes,
            )

        try:
            return build(topics, payloads)
        except (Exception, pl.exceptions.PanicException):
            # The decoder already isolates bad payloads; this is the last resort for a failure
            # nobody foresaw: each message alone, the ones that still fail quarantined.
            log.exception("decoding a batch failed; decoding its messages one by one")
        done: list[MessageFrames] = []
        for topic, payload in zip(topics, payloads, strict=True):
            try:
                done.append(build([topic], [payload]))
            except (Exception, pl.exceptions.PanicException):
                log.exception("message on %s could not be decoded", topic)
                empty = build([], [])
                row = build_unprocessable_quarantine(
                    topic, payload, max_message_bytes=opt.max_message_bytes
                )
                done.append(MessageFrames(empty.avl, empty.fares, row))
        return MessageFrames(
            avl=pl.concat([f.avl for f in done], how="vertical_relaxed"),
            fares=pl.concat([f.fares for f in done], how="vertical_relaxed"),
            quarantine=pl.concat([f.quarantine for f in done], how="vertical_relaxed"),
        )

    def _add(self, c: BatchCounts) -> None:
        t = self.totals
        self.n_batches += 1
        self.n_messages += c.n_messages
        self.totals = BatchCounts(
            t.n_messages + c.n_messages,
            t.n_accepted + c.n_accepted,
            t.n_duplicate + c.n_duplicate,
            t.n_quarantined + c.n_quarantined,
            t.commit_s + c.commit_s,
        )

    def _maybe_publish_snapshot(self, *, force: bool = False) -> None:
        interval = self.options.snapshot_interval_s
        if interval <= 0:
            return
        if force or time.monotonic() - self._last_snapshot >= interval:
            self.store.publish_snapshot()
            self._last_snapshot = time.monotonic()
            self._unpublished = False

    def _batch_due(self) -> bool:
        if not self._topics:
            return False
        return (
            len(self._topics) >= self.options.batch_size
            or time.monotonic() - self._batch_started >= self.options.batch_interval_s
        )

    # -- loop -------------------------------------------------------------------------------
    def poll(self, timeout_s: float = 0.1) -> None:
        """Read what the broker sent (waiting up to `timeout_s`), committing batches when due."""
        self._raise_if_refused()
        if not self._connected:
            self._reconnect()
            return
        wait = timeout_s
        if self._topics:
            due_in = self.options.batch_interval_s - (time.monotonic() - self._batch_started)
            wait = max(0.0, min(wait, due_in))
        n_before = len(self._topics)
        rc = self._step(wait)
        if len(self._topics) != n_before:
            self._last_message = time.monotonic()
        if self._batch_due():
            self.flush()
        elif self._unpublished:
            self._maybe_publish_snapshot()
        if rc != mqtt.MQTT_ERR_SUCCESS and self._connected:
            self._connected = False

    def _step(self, timeout_s: float) -> mqtt.MQTTErrorCode:
        """One turn of paho's external-loop API: wait, read, write, keep-alive.

        Unlike `Client.loop()` this needs no wake-up socket pair (one system call less per
        acknowledgement), and it reads every packet already buffered in one turn.
        """
        client = self.client
        sock = client.socket()
        if sock is None:
            return mqtt.MQTTErrorCode.MQTT_ERR_NO_CONN
        buffered = isinstance(sock, BufferedSocket) and sock.pending() > 0
        readable = buffered
        if not buffered:
            wlist = [sock] if client.want_write() else []
            try:
                ready = select.select([sock], wlist, [], timeout_s)
            except (OSError, ValueError):
                return mqtt.MQTTErrorCode.MQTT_ERR_CONN_LOST
            readable = bool(ready[0])
        rc = mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
        if readable:
            rc = client.loop_read()
            while (
                rc == mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
                and isinstance(sock, BufferedSocket)
                and sock.pending()
                and len(self._topics) < self.options.batch_size
            ):
                rc = client.loop_read()
        if rc == mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS and client.want_write():
            rc = client.loop_write()
        if rc == mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS:
            rc = client.loop_misc()
        return rc

    def _reconnect(self) -> None:
        if self._topics:
            self.flush()  # commit what arrived; its acks were dropped with the connection
        delay = 0.05
        deadline = time.monotonic() + self.options.reconnect_max_delay_s
        while not self._stopping:
            try:
                self.client.reconnect()
                break
            except (OSError, ssl.SSLError) as exc:
                if time.monotonic() > deadline:
                    self.on_log(f"broker unreachable ({exc}); retrying")
                    deadline = time.monotonic() + self.options.reconnect_max_delay_s
                time.sleep(delay)
                delay = min(delay * 2, self.options.reconnect_max_delay_s)
        end = time.monotonic() + 10.0
        while not self._stopping and not self._connected and time.monotonic() < end:
            if self._step(0.1) != mqtt.MQTT_ERR_SUCCESS:
                return

    def stop(self) -> None:
        """Ask `run()` to finish: it flushes, commits, acks and disconnects (signal-safe)."""
        self._stopping = True

    def run(self) -> BatchCounts:
        """Consume until `stop()`, `max_messages` or `idle_exit_s`; returns the totals."""
        opt = self.options
        self._last_message = time.monotonic()
        while not self._stopping:
            self.poll(0.1)
            done = self.n_messages + len(self._topics)
            if opt.max_messages is not None and done >= opt.max_messages:
                break
            idle = time.monotonic() - self._last_message
            if opt.idle_exit_s is not None and not self._topics and idle >= opt.idle_exit_s:
                break
        self.close()
        return self.totals

    def close(self) -> None:
        """Flush the pending batch (commit, ack), disconnect cleanly (the session stays)."""
        self._stopping = True
        if self._connected:
            self.flush()
            self._drain_writes()
            self.client.disconnect()
            self._drain_writes()
        else:
            self.flush()
        self._maybe_publish_snapshot(force=True)

    def _drain_writes(self, timeout_s: float = 5.0) -> None:
        end = time.monotonic() + timeout_s
        sock = self.client.socket()
        while self.client.want_write() and sock is not None and time.monotonic() < end:
            select.select([], [sock], [], 0.1)
            if self.client.loop_write() != mqtt.MQTT_ERR_SUCCESS:
                return
