"""A real Mosquitto broker for tests and benchmarks, started on a free port of 127.0.0.1.

The broker's configuration is generated in a temporary folder from the same template the
deployment example uses (`deploy/mosquitto/`): persistence on, a password file (hashed with
`mosquitto_passwd -U`), a per-operator ACL, queues large enough for the tests. `restart()`
stops the broker gracefully (SIGTERM: it writes its persistence file) and starts it again on the
same port, which is what a broker upgrade or a host reboot looks like to the clients.
"""

from __future__ import annotations

import getpass
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy" / "mosquitto"
LISTENER_USER = "pontual"


def mosquitto_binary() -> str | None:
    """The broker executable, or None when Mosquitto is not installed."""
    return shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, *, timeout_s: float, open_: bool = True) -> None:
    """Wait until 127.0.0.1:port accepts (or refuses, with open_=False) connections."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if open_:
                    return
        except OSError:
            if not open_:
                return
        time.sleep(0.02)
    raise TimeoutError(f"port {port} did not {'open' if open_ else 'close'} in {timeout_s} s")


@dataclass
class Broker:
    """A Mosquitto process with its generated config, passwords and ACL in `folder`."""

    folder: Path
    operators: tuple[str, ...] = ("opA", "opB")
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def passwords(self) -> dict[str, str]:
        """Username -> password: the listener account and one account per operator."""
        users = {LISTENER_USER: "listener-secret"}
        users.update({op: f"{op}-secret" for op in self.operators})
        return users

    def write_config(self) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "persistence").mkdir(exist_ok=True)
        pwfile = self.folder / "passwd"
        pwfile.write_text("".join(f"{u}:{p}\n" for u, p in self.passwords.items()))
        pwfile.chmod(0o600)
        subprocess.run(["mosquitto_passwd", "-U", str(pwfile)], check=True, capture_output=True)
        acl = self.folder / "acl"
        shutil.copyfile(DEPLOY / "acl", acl)
        template = (DEPLOY / "mosquitto.conf.template").read_text()
        conf = self.folder / "mosquitto.conf"
        conf.write_text(
            template.format(
                user=getpass.getuser(),
                port=self.port,
                bind="127.0.0.1",
                persistence_location=str(self.folder / "persistence") + "/",
                password_file=str(pwfile),
                acl_file=str(acl),
                log_dest=f"file {self.folder / 'mosquitto.log'}",
            )
        )
        return conf

    def start(self) -> Broker:
        binary = mosquitto_binary()
        if binary is None:
            raise RuntimeError("mosquitto is not installed (make sysdeps)")
        conf = self.folder / "mosquitto.conf"
        if not conf.exists():
            conf = self.write_config()
        self.process = subprocess.Popen(
            [binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(self.port, timeout_s=10)
        return self

    def stop(self) -> None:
        """Stop gracefully: SIGTERM makes Mosquitto save its persistence file before exiting."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        wait_port(self.port, timeout_s=5, open_=False)

    def restart(self) -> None:
        self.stop()
        self.start()

    def log(self) -> str:
        path = self.folder / "mosquitto.log"
        return path.read_text() if path.exists() else ""

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Publisher:
    """A QoS 1 MQTT 5 publisher with a persistent session that survives broker restarts.

    `send` publishes every (topic, payload) and returns once the broker acknowledged each one,
    reconnecting (and letting paho resend the unacknowledged ones) when the broker goes away.
    """

    def __init__(self, port: int, username: str, password: str, client_id: str) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self._mqtt = mqtt
        self.port = port
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5
        )
        self.client.username_pw_set(username, password)
        self.client.max_inflight_messages_set(1000)
        self.client.max_queued_messages_set(0)
        self.props = Properties(PacketTypes.CONNECT)
        self.props.SessionExpiryInterval = 3600
        self.acked: dict[int, int] = {}  # mid -> reason code of the PUBACK
        self.client.on_publish = self._on_publish
        self.client.connect("127.0.0.1", port, clean_start=False, properties=self.props)

    def _on_publish(self, _c: object, _ud: object, mid: int, reason: object, _p: object) -> None:
        self.acked[mid] = int(getattr(reason, "value", 0))

    def send(self, messages: list[tuple[str, bytes]], *, timeout_s: float = 30.0) -> list[int]:
        """Publish and wait for every PUBACK; returns their reason codes (0: accepted)."""
        mqtt = self._mqtt
        mids = [self.client.publish(topic, payload, qos=1).mid for topic, payload in messages]
        deadline = time.monotonic() + timeout_s
        while not all(m in self.acked for m in mids):
            if time.monotonic() > deadline:
                missing = sum(1 for m in mids if m not in self.acked)
                raise TimeoutError(f"{missing} messages not acknowledged in {timeout_s} s")
            if self.client.loop(timeout=0.05) != mqtt.MQTT_ERR_SUCCESS:
                try:
                    self.client.reconnect()
                except OSError:
                    time.sleep(0.05)
        return [self.acked.pop(m) for m in mids]

    def close(self) -> None:
        self.client.disconnect()


def require_mosquitto() -> None:
    """Skip the calling test when Mosquitto is absent (a failure under CI=true)."""
    import os

    import pytest

    if mosquitto_binary() is None or shutil.which("mosquitto_passwd") is None:
        reason = "mosquitto is not installed (run `make sysdeps`)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " — under CI=true a missing broker is a failure")
        pytest.skip(reason)
