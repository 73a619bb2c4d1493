"""Start the dashboard as a `streamlit run` process (used by `pontual dashboard`, the browser
test and the benchmark). The store path travels in PONTUAL_STORE, the authentication mode in
PONTUAL_DASHBOARD_AUTH (`dashboard.auth`). The public transparency page is its own Streamlit
app (`dashboard/public_app.py`), a separate process on its own port."""

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
PUBLIC_APP = Path(__file__).resolve().parent / "public_app.py"


def build_command(
    port: int,
    address: str,
    headless: bool,
    app: Path = APP,
    secrets: Path | None = None,
) -> list[str]:
    """The `streamlit run` command line (through `dashboard.launch`: no page-folder discovery):
    no telemetry, no file watcher (the snapshot's mtime, not the source, decides what is
    re-read); `secrets` is the Streamlit secrets file with the OpenID Connect provider's
    ``[auth]`` section (only that file is read)."""
    extra = ["--secrets.files", str(secrets)] if secrets else []
    return [
        sys.executable,
        "-m",
        "dashboard.launch",
        "run",
        str(app),
        *extra,
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
        # no "Download as CSV" in the tables' own toolbar (both apps): it wrote ','-separated
        # English numbers and bypassed the download audit; each table has its own pt-BR,
        # audited "Baixar CSV" button (`dashboard.table_download`). Also turns off copying
        # cells of a read-only table to the clipboard.
        "--client.disableDataExport",
        "true",
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
    *,
    public: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start the dashboard process for `store` (returns at once; see `wait_until_ready`); the
    public transparency page instead with `public`. `env` adds variables (the authentication
    mode, the OpenID Connect secrets file: PONTUAL_DASHBOARD_SECRETS).

    Its output goes to `log` when given (tests, benchmarks), else to this terminal."""
    from dashboard.auth import SECRETS_ENV

    full_env = {**os.environ, **(env or {})}
    full_env[STORE_ENV] = str(Path(store).resolve())
    if profile:
        full_env[PROFILE_ENV] = profile
    secrets = full_env.get(SECRETS_ENV)
    return subprocess.Popen(
        build_command(
            port,
            address,
            headless,
            app=PUBLIC_APP if public else APP,
            secrets=Path(secrets) if secrets and not public else None,
        ),
        env=full_env,
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
