"""The running dashboard in a real headless Chromium: every page renders, with no exception,
error alert or 'page not found' dialog; screenshots are saved under test-output/dashboard/."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.browser import CHROMIUM, Browser
from dashboard.pages import PAGES, page_url
from dashboard.server import free_port, start_server, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "dashboard"
PAGE_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def app_url(dashboard_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} not installed (make sysdeps installs Debian's chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    port = free_port()
    log = tmp_path_factory.mktemp("streamlit") / "streamlit.log"
    process = start_server(dashboard_store, port, "127.0.0.1", log=log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_every_page_renders_in_chromium(app_url: str) -> None:
    started = time.monotonic()
    with Browser() as browser:
        for _path, title, url_path, _icon in PAGES:
            state = browser.open(f"{app_url}/{page_url(url_path)}", timeout_s=PAGE_TIMEOUT_S)
            browser.screenshot(SCREENSHOTS / f"{url_path}.png")
            assert state["title"] == title, state
            assert not state["exceptions"], (url_path, state["exceptions"])
            assert not state["errors"], (url_path, state["errors"])
            assert not state["dialogs"], (url_path, state["dialogs"])
            assert browser.evaluate("document.body.innerText.includes('Filtros')"), url_path
    assert all((SCREENSHOTS / f"{p[2]}.png").stat().st_size > 10_000 for p in PAGES)
    assert time.monotonic() - started < 90
