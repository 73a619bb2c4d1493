"""Start the dashboard as a `streamlit run` process (used by `pontual dashboard`, the browser
test and the benchmark). The store path travels in PONTUAL_STORE."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from core.errors import PontualError
from core.settings import PROFILE_ENV, STORE_ENV

APP = Path(__file__).resolve().parent / "app.py"


def build_command(port: int, address: str, headless: bool) -> list[str]:
    """The `streamlit run` command line: no telemetry, no file watcher (the snapshot's mtime,
    not the source, decides what is re-read)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.port",
        str(port),
        "--server.address",
        address,
        "--server.headless",
        "true" if headless else "false",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
        "--theme.base",
        "light",
        # planners need no "Deploy" button or developer menu
        "--client.toolbarMode",
        "viewer",
    ]


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def start_server(
    store: Path,
    port: int,
    address: str,
    headless: bool = True,
    profile: str | None = None,
    log: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start the dashboard process for `store` (returns at once; see `wait_until_ready`).

    Its output goes to `log` when given (tests, benchmarks), else to this terminal."""
    env = dict(os.environ)
    env[STORE_ENV] = str(Path(store).resolve())
    if profile:
        env[PROFILE_ENV] = profile
    return subprocess.Popen(
        build_command(port, address, headless),
        env=env,
        stdout=log.open("ab") if log else None,
        stderr=subprocess.STDOUT if log else None,
    )


def wait_until_ready(url: str, timeout_s: float, process: subprocess.Popen[bytes]) -> None:
    """Wait until Streamlit answers its health check, or raise after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PontualError(
                f"the dashboard process exited with status {process.returncode}",
                hint="run `pontual dashboard` in a terminal to see Streamlit's messages",
            )
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise PontualError(f"the dashboard did not answer at {url} within {timeout_s:g} s")
