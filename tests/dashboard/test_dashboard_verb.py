"""`pontual dashboard` (what `pontual demo` ends with): starts, prints its URL, serves the app,
and stops cleanly on Ctrl+C (SIGINT to the terminal's process group), leaving no process. It
runs as on a fresh machine with no terminal (a new HOME, stdin closed, no `--headless`):
Streamlit must never stop at its first-run e-mail prompt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dashboard.server import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_dashboard_verb_prints_its_url_and_stops_on_ctrl_c(
    dashboard_store: Path, tmp_path: Path
) -> None:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pontual",
            "--store",
            str(dashboard_store),
            "dashboard",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env={**os.environ, "HOME": str(tmp_path)},  # no ~/.streamlit: a fresh machine
        stdin=subprocess.DEVNULL,  # no terminal to answer a prompt
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert process.stdout is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            lines.append(line)
            if f"painel em {url}" in line or not line:
                break
        assert f"painel em {url}  (Ctrl+C para encerrar)" in "".join(lines), lines
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as reply:
            assert reply.status == 200
        os.killpg(process.pid, signal.SIGINT)  # Ctrl+C reaches the verb and Streamlit
        out, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, out
    assert "Traceback" not in out, out
    try:
        os.killpg(process.pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "a process of the dashboard outlived Ctrl+C"
