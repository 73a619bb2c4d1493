"""How the MQTT listener connects, batches and stops: `ListenerOptions` (broker, TLS, account,
session, topics, batch size and age, exit conditions) validated by pydantic.

Reads keyword values (the CLI's broker arguments); returns `ListenerOptions`, or raises a
`ConfigError` naming the option at fault.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.errors import ConfigError
from ingest.mqtt_payloads import DEFAULT_MAX_FIELD_BYTES, DEFAULT_MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    import paho.mqtt.client as mqtt

# MQTT 5 Receive Maximum is a 16-bit count: the most unacknowledged messages a broker may send.
RECEIVE_MAXIMUM = 65_535


class ListenerOptions(BaseModel):
    """How `pontual listen` connects, batches and stops (units in the names)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field("127.0.0.1", description="broker host name or address")
    port: int = Field(1883, ge=1, le=65_535, description="broker TCP port (8883 for TLS)")
    username: str | None = Field(None, description="broker account (the listener's, read-only)")
    password: str | None = Field(None, description="password of the broker account")
    tls_ca_path: Path | None = Field(None, description="CA bundle: turns TLS on and verifies")
    tls_cert_path: Path | None = Field(None, description="client certificate (mutual TLS)")
    tls_key_path: Path | None = Field(None, description="client private key (mutual TLS)")
    tls_insecure: bool = Field(False, description="skip the host-name check (tests only)")
    client_id: str = Field(
        "pontual-listener", min_length=1, description="fixed id: it names the persistent session"
    )
    topic_root: str = Field("pontual", min_length=1, description="first topic level")
    shared_group: str | None = Field(
        None,
        description="MQTT 5 shared-subscription group ($share/<group>/...) for several listeners",
    )
    batch_size: int = Field(
        5_000, ge=1, le=RECEIVE_MAXIMUM, description="commit when this many messages are pending"
    )
    batch_interval_s: float = Field(
        1.0, gt=0, le=3_600, description="commit when the oldest pending message is this old"
    )
    session_expiry_s: int = Field(
        7 * 86_400, ge=60, le=2**32 - 1, description="broker keeps the session this long offline"
    )
    keepalive_s: int = Field(30, ge=5, le=3_600, description="MQTT keep-alive interval")
    reconnect_max_delay_s: float = Field(
        10.0, gt=0, le=600, description="longest wait between reconnection attempts"
    )
    snapshot_interval_s: float = Field(
        60.0, ge=0, description="publish the readers' snapshot at most this often (0: never)"
    )
    max_message_bytes: int = Field(
        DEFAULT_MAX_MESSAGE_BYTES,
        ge=256,
        le=16 * 1024 * 1024,
        description="a larger payload is quarantined unread (bytes)",
    )
    max_field_bytes: int = Field(
        DEFAULT_MAX_FIELD_BYTES,
        ge=16,
        le=64 * 1024,
        description="a message with a longer field value is quarantined (bytes, UTF-8)",
    )
    max_messages: int | None = Field(None, ge=1, description="stop after this many (tests)")
    idle_exit_s: float | None = Field(None, gt=0, description="stop after this long idle (tests)")

    @model_validator(mode="after")
    def _tls_pairs(self) -> ListenerOptions:
        if (self.tls_cert_path is None) != (self.tls_key_path is None):
            raise ValueError("tls_cert_path and tls_key_path go together")
        if self.password is not None and self.username is None:
            raise ValueError("a password needs a username")
        return self

    @property
    def uses_tls(self) -> bool:
        return self.tls_ca_path is not None or self.tls_cert_path is not None

    def topics(self) -> list[str]:
        """Subscription filters: every operator and vehicle, AVL and fares."""
        base = [f"{self.topic_root}/avl/+/+", f"{self.topic_root}/fares/+/+"]
        if self.shared_group:
            return [f"$share/{self.shared_group}/{t}" for t in base]
        return base


def build_listener_options(**values: object) -> ListenerOptions:
    """`ListenerOptions` from keyword values (None keeps the default), as a ConfigError."""
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return ListenerOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "options"
        raise ConfigError(
            f"listener option {field}: {first['msg']}",
            where=f"option {field}",
            hint="see `pontual listen --help` for the accepted values",
        ) from exc


def configure_client(client: mqtt.Client, options: ListenerOptions) -> None:
    """Give a paho client the account and TLS settings of `options` (the listener's, the feed
    server's and the replay's connections are set up alike)."""
    if options.username is not None:
        client.username_pw_set(options.username, options.password)
    if options.uses_tls:
        client.tls_set(
            ca_certs=str(options.tls_ca_path) if options.tls_ca_path else None,
            certfile=str(options.tls_cert_path) if options.tls_cert_path else None,
            keyfile=str(options.tls_key_path) if options.tls_key_path else None,
            cert_reqs=ssl.CERT_REQUIRED,
        )
        client.tls_insecure_set(options.tls_insecure)
