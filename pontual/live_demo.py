"""The live side of `pontual demo`: a local Mosquitto, `pontual serve` and one `pontual replay`
per operator, so the dashboard's "Ao vivo" page shows the simulated buses moving.

Everything is a real process started the way a user would start it: the broker from the
project's own configuration (`deploy/mosquitto`: template, ACL, hashed passwords with fresh
random secrets), `pontual serve` on the demo's store for the replayed day, and `pontual replay`
of each operator's pings of that day (from a chosen local time on) at an accelerated clock,
under that operator's account. `LiveDemo` is a context manager: leaving it stops the replays,
then `serve` (SIGTERM: it commits its batch and exits 0), then the broker, and waits for each.
"""

from __future__ import annotations

import getpass
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from datetime import time as clock
from pathlib import Path
from typing import IO

from core.errors import ConfigError

DEPLOY = Path(__file__).resolve().parents[1] / "deploy" / "mosquitto"
LISTENER_USER = "pontual"
STOP_TIMEOUT_S = 15.0
READY_TIMEOUT_S = 120.0  # serve reads the day and warms the kernels first


def free_port() -> int:
    """A TCP port of 127.0.0.1 free now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mosquitto_binary() -> str | None:
    """The broker executable (Debian installs it in /usr/sbin), or None."""
    return shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None
    )


def write_broker_config(folder: Path, port: int, passwords: dict[str, str]) -> Path:
    """The broker's config, hashed password file and ACL in `folder`, from `deploy/mosquitto`;
    returns the config file. `passwords`: username -> clear password (hashed in place with
    `mosquitto_passwd -U`, never kept in clear)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "persistence").mkdir(exist_ok=True)
    pwfile = folder / "passwd"
    pwfile.write_text("".join(f"{u}:{p}\n" for u, p in passwords.items()))
    pwfile.chmod(0o600)
    subprocess.run(["mosquitto_passwd", "-U", str(pwfile)], check=True, capture_output=True)
    shutil.copyfile(DEPLOY / "acl", folder / "acl")
    conf = folder / "mosquitto.conf"
    conf.write_text(
        (DEPLOY / "mosquitto.conf.template")
        .read_text()
        .format(
            user=getpass.getuser(),
            port=port,
            bind="127.0.0.1",
            persistence_location=str(folder / "persistence") + "/",
            password_file=str(pwfile),
            acl_file=str(folder / "acl"),
            log_dest=f"file {folder / 'mosquitto.log'}",
        )
    )
    return conf


def write_replay_files(
    avl: Path, folder: Path, day: date, start: clock, timezone: str
) -> dict[str, Path]:
    """Each operator's pings of `day` from local time `start` on, one Parquet file per operator
    in `folder` (operator_id -> file): what its `pontual replay` publishes under its account."""
    import polars as pl

    folder.mkdir(parents=True, exist_ok=True)
    local = pl.col("event_at").dt.convert_time_zone(timezone)
    pings = pl.read_parquet(avl).filter((local.dt.date() == day) & (local.dt.time() >= start))
    files = {}
    for (operator,), part in pings.partition_by("operator_id", as_dict=True).items():
        path = folder / f"avl_{operator}.parquet"
        part.sort("event_at").write_parquet(path)
        files[str(operator)] = path
    return files


def wait_http(url: str, timeout_s: float, process: subprocess.Popen[bytes]) -> None:
    """Wait until `url` answers 200, or fail when the process exits first or time runs out."""
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigError(
                f"the live server exited with code {process.returncode} before answering",
                where=url,
                hint="run `pontual serve` alone with --debug to see why",
            )
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise ConfigError(
        f"the live server did not answer within {timeout_s:.0f} s",
        where=url,
        hint="run `pontual serve` alone with --debug to see why",
    )


def wait_port(port: int, timeout_s: float) -> None:
    """Wait until 127.0.0.1:port accepts connections."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise ConfigError(f"the MQTT broker did not open port {port} within {timeout_s:.0f} s")


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM, then wait; SIGKILL only if it does not end within `STOP_TIMEOUT_S`."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class LiveDemo:
    """The broker, the feed server and the replays of the demo (see the module docstring).

    `store`: the demo's store; `profile_id`: its profile; `avl`: the simulated pings; `day`:
    the service day replayed; `start`: local time the replay starts from; `timezone`: the
    city's; `speed`: times real time; `folder`: where the broker's files and the replay files
    go. After entering, `feed_url` is the feed server's base URL.
    """

    store: Path
    profile_id: str
    avl: Path
    day: date
    start: clock
    timezone: str
    speed: float
    folder: Path
    http_port: int = field(default_factory=free_port)
    broker_port: int = field(default_factory=free_port)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[IO[bytes]] = field(default_factory=list)

    @property
    def feed_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def _pontual(self, *argv: str, password: str, log: str) -> subprocess.Popen[bytes]:
        """`python -m pontual ARGV` with the broker password in its environment (never on
        its command line), in its own session (Ctrl+C reaches only the demo, which stops it),
        its output in a log file of `folder`."""
        env = {**os.environ, "PONTUAL_MQTT_PASSWORD": password}
        out = (self.folder / log).open("ab")
        self.logs.append(out)
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pontual",
                "--store",
                str(self.store),
                "--profile",
                self.profile_id,
                *argv,
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def __enter__(self) -> LiveDemo:
        binary = mosquitto_binary()
        if binary is None or shutil.which("mosquitto_passwd") is None:
            raise ConfigError(
                "Mosquitto is not installed: the live part of the demo needs it",
                hint="make sysdeps (or apt-get install mosquitto mosquitto-clients), or "
                "pontual demo --no-live",
            )
        files = write_replay_files(
            self.avl, self.folder / "replay", self.day, self.start, self.timezone
        )
        passwords = {LISTENER_USER: secrets.token_urlsafe(18)}
        passwords.update({op: secrets.token_urlsafe(18) for op in files})
        conf = write_broker_config(self.folder / "broker", self.broker_port, passwords)
        try:
            self.processes.append(
                subprocess.Popen(
                    [binary, "-c", str(conf)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
            wait_port(self.broker_port, 10.0)
            broker = ["--host", "127.0.0.1", "--port", str(self.broker_port)]
            serve = self._pontual(
                "serve",
                *broker,
                "--username",
                LISTENER_USER,
                "--date",
                self.day.isoformat(),
                "--http-port",
                str(self.http_port),
                "--snapshot-interval-s",
                "30",
                password=passwords[LISTENER_USER],
                log="serve.log",
            )
            self.processes.append(serve)
            wait_http(f"{self.feed_url}/health", READY_TIMEOUT_S, serve)
            for operator, path in files.items():
                self.processes.append(
                    self._pontual(
                        "replay",
                        str(path),
                        *broker,
                        "--username",
                        operator,
                        "--speed",
                        str(self.speed),
                        "--client-id",
                        f"demo-replay-{operator}",
                        password=passwords[operator],
                        log=f"replay_{operator}.log",
                    )
                )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the replays, then the server, then the broker (the reverse of the start)."""
        for process in reversed(self.processes):
            stop_process(process)
        self.processes.clear()
        for out in self.logs:
            out.close()
        self.logs.clear()

    def __exit__(self, *exc: object) -> None:
        self.stop()
