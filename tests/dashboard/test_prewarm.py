"""The warm-up session of a fresh dashboard (`dashboard.launch.prewarm`, ADR 0108): once the
server answers, every page of the menu runs once, as a browser would open it, so the first
visitor finds the snapshot open and the default selection's reads cached; and again, once,
after each new snapshot (`dashboard.launch.keep_warm`)."""

from __future__ import annotations

import re
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from core.store import Store
from core.texts import gettext
from dashboard.launch import (
    PREWARM_ENV,
    SNAPSHOT_POLL_ENV,
    SNAPSHOT_POLL_S,
    _poll_seconds,
    prewarm,
)
from dashboard.pages import PAGES
from dashboard.queries.snapshot import read_snapshot_mtime
from dashboard.server import (
    PUBLIC_APP,
    build_command,
    free_port,
    start_server,
    wait_until_ready,
)
from tests.dashboard.store_builder import build_store, write


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


def _lookups(url: str) -> dict[tuple[str, str], int]:
    """The server's cache lookups so far, by (cached function, 'hit' or 'miss'): Streamlit's
    own counters (`/_stcore/metrics`), what a visitor's view found in the caches."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=5) as reply:
        text = reply.read().decode()
    found = {}
    for match in LOOKUP.finditer(text):
        found[(match["cache"], match["result"])] = int(float(match["count"]))
    return found


LOOKUP = re.compile(
    r'^cache_lookups_total\{cache="(?P<cache>[^"]+)",[^}]*result="(?P<result>\w+)"\} '
    r"(?P<count>[0-9.e+]+)$",
    re.MULTILINE,
)
READ = ("__main__._read", "miss")
"""The public page's three reads (indicators, crowding, grades), one lookup each a view."""


def _wait_for(url: str, key: tuple[str, str], count: int, timeout_s: float) -> dict[Any, int]:
    deadline = time.monotonic() + timeout_s
    while True:
        found = _lookups(url)
        if found.get(key, 0) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_a_new_snapshot_is_warmed_once_before_anyone_asks(tmp_path: Path) -> None:
    """ADR 0108: after a publication, each page's first view read the new snapshot. The
    server notices it and runs its warm-up session again, once, before any visitor: a
    visitor's view is then all cache hits, on the new snapshot."""
    store = build_store(tmp_path / "pontual.duckdb")
    port = free_port()
    log = tmp_path / "public.log"
    poll_s = 0.5
    process = start_server(
        store, port, "127.0.0.1", log=log, public=True, env={SNAPSHOT_POLL_ENV: str(poll_s)}
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(url, 60, process)
        # the start-up warm-up: the page's three reads missed, nobody else came
        started = _wait_for(url, READ, 3, 120)
        assert started[READ] == 3, started
        time.sleep(4 * poll_s)
        assert _lookups(url) == started  # the same snapshot is not warmed again
        before = read_snapshot_mtime(store)
        # a tiny publication: next month's system ICV, through the Store
        with Store.open(store) as writer:
            write(
                writer,
                "indicators",
                pl.DataFrame(
                    [
                        {
                            **{"scope": "system", "scope_id": "all", "period": "2026-04"},
                            **{"indicator": "icv_score", "value": 86.0, "unit": ""},
                        }
                    ]
                ),
            )
            writer.publish_snapshot()
        assert read_snapshot_mtime(store) > before
        rewarmed = _wait_for(url, READ, 6, 120)  # the new snapshot's three reads, by itself
        assert rewarmed[READ] == 6, rewarmed
        assert rewarmed[("__main__._snapshot", "miss")] == 2  # the new snapshot opened
        time.sleep(4 * poll_s)
        assert _lookups(url) == rewarmed  # warmed once for this snapshot
        # a visitor's view (a websocket session, as a browser's): every read from the cache
        argv = [sys.argv[0], *build_command(port, "127.0.0.1", True, app=PUBLIC_APP)[3:]]
        assert prewarm(argv, timeout_s=120) == {"": gettext("Public transport transparency")}
        visited = _lookups(url)
        assert visited[READ] == 6, visited
        assert visited[("__main__._read", "hit")] == rewarmed.get(("__main__._read", "hit"), 0) + 3
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert "Traceback" not in log.read_text()


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("0.5", 0.5), ("", SNAPSHOT_POLL_S), ("0", SNAPSHOT_POLL_S), ("-1", SNAPSHOT_POLL_S),
     ("dez", SNAPSHOT_POLL_S), ("inf", SNAPSHOT_POLL_S), ("nan", SNAPSHOT_POLL_S)],
)  # fmt: skip
def test_the_snapshot_poll_takes_a_positive_number_of_seconds(
    monkeypatch: pytest.MonkeyPatch, value: str, seconds: float
) -> None:
    monkeypatch.setenv(SNAPSHOT_POLL_ENV, value)
    assert _poll_seconds() == seconds
