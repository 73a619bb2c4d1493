"""`pontual dashboard` stops cleanly on SIGTERM sent to the verb alone (a service manager, `kill`):
Streamlit is stopped with it (it used to go on serving)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dashboard.server import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_sigterm_to_the_dashboard_verb_stops_streamlit_too(dashboard_store: Path) -> None:
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
            "--headless",
        ],
        cwd=ROOT,
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
        process.send_signal(signal.SIGTERM)  # to the verb alone, not its process group
        out, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=20)
        # whatever happened, nothing of the group is left behind (a failing run would leave
        # Streamlit serving: what this test is about)
        try:
            os.killpg(process.pid, 0)
            alive = True
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            alive = False
        process.wait()
    assert process.returncode == 0, out
    assert "Traceback" not in out, out
    assert not alive, "a process of the dashboard outlived SIGTERM"
    # Streamlit's own English lines stay off the terminal; the verb says it in pt-BR (issue 20)
    shown = "".join(lines) + out
    for english in ("You can now view", "URL:", "Uvicorn server started", "Stopping..."):
        assert english not in shown, shown
