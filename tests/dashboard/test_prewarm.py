"""The warm-up session of a fresh dashboard (`dashboard.launch.prewarm`, ADR 0108): once the
server answers, every page of the menu runs once, as a browser would open it, so the first
visitor finds the snapshot open and the default selection's reads cached."""

from __future__ import annotations

import sys
from pathlib import Path

from core.texts import gettext
from dashboard.launch import PREWARM_ENV, prewarm
from dashboard.pages import PAGES
from dashboard.server import (
    PUBLIC_APP,
    build_command,
    free_port,
    start_server,
    wait_until_ready,
)


def test_the_warm_up_session_runs_every_page_with_its_title(
    dashboard_store: Path, tmp_path: Path
) -> None:
    port = free_port()
    log = tmp_path / "streamlit.log"
    # the server's own warm-up off: this test runs it, and reads what each page drew
    process = start_server(dashboard_store, port, "127.0.0.1", log=log, env={PREWARM_ENV: "0"})
    try:
        wait_until_ready(f"http://127.0.0.1:{port}", 60, process)
        argv = [sys.argv[0], *build_command(port, "127.0.0.1", True)[3:]]  # from `run APP`
        drawn = prewarm(argv, timeout_s=120)
    finally:
        process.terminate()
        process.wait(timeout=10)
    # the first page at the root, then the others in menu order, each with its own title
    assert list(drawn) == ["", *(slug for _p, _t, slug, _i in PAGES[1:])]
    assert list(drawn.values()) == [gettext(title) for _p, title, _s, _i in PAGES]
    assert "Traceback" not in log.read_text()


def test_the_public_app_warms_its_one_page(dashboard_store: Path, tmp_path: Path) -> None:
    port = free_port()
    process = start_server(
        dashboard_store,
        port,
        "127.0.0.1",
        log=tmp_path / "public.log",
        public=True,
        env={PREWARM_ENV: "0"},
    )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}", 60, process)
        argv = [sys.argv[0], *build_command(port, "127.0.0.1", True, app=PUBLIC_APP)[3:]]
        assert prewarm(argv, timeout_s=120) == {"": gettext("Public transport transparency")}
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_without_a_server_the_warm_up_gives_up_at_its_deadline() -> None:
    argv = ["launch.py", "run", "dashboard/app.py", "--server.port", str(free_port())]
    assert prewarm(argv, timeout_s=0.5) == {}
