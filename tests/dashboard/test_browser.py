"""The running dashboard in a real headless Chromium: every page renders, with no exception,
error alert or 'page not found' dialog, and no raw None/NaN/null text, English word or English
number, in its text, its tables' cells or its charts' labels; screenshots are saved
under test-output/dashboard/ (fixture store) and test-output/dashboard/pipeline/ (a store the
real pipeline built with `pontual demo --days 1`)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.texts import gettext
from dashboard.auth import EXTRA_PAGES
from dashboard.browser import CHROMIUM, Browser
from dashboard.pages import PAGES, page_url
from dashboard.server import free_port, start_server, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "dashboard"
PAGE_TIMEOUT_S = 60.0
RAW_VALUES = re.compile(r"\b(None|NaN|nan|null)\b")
# English that has leaked onto pages before (units, parameter keys, Streamlit's own dialogs):
# planners read pt-BR only (docs: the catalogue of labels, core.indicators, dashboard.labels).
ENGLISH = re.compile(
    r"\b(the|and|of|days|ratio|trips|default|source|practice|fee table|TfL|Page not found|"
    r"True|False|true|false|obstruction|detour|weather|suppressed|on_time|not_evaluated|"
    r"per_10000_km|to be fixed by decree)\b"
)
# A number in English format, as in the reports' test: a decimal point with one, two or
# four-plus digits after it ("0.5" on a chart's axis); "1.846" is a pt-BR thousand.
ENGLISH_DECIMAL = re.compile(r"(?<![\w.])\d+\.(?:\d{1,2}|\d{4,})(?![\w.])")
# What a page draws outside `innerText`: a table's cells (its grid is a canvas; their text is in
# the grid's accessible table) and a chart's axis and legend labels (Vega's SVG text).
DRAWN_TEXT_JS = """JSON.stringify([
  ...document.querySelectorAll('[data-testid=stDataFrame] [role=gridcell]'),
  ...document.querySelectorAll('[data-testid=stDataFrame] table td'),
  ...document.querySelectorAll('[data-testid=stVegaLiteChart] svg text'),
].map(e => e.textContent))"""


def _require_chromium() -> None:
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} not installed (make sysdeps installs Debian's chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def check_pt_br(browser: Browser, where: str) -> str:
    """The page's text, its tables' cells and its charts' labels, once checked: no raw
    None/NaN/null/true, no English word of the deny-list, no number in English format (file
    paths, the store's folder, are not prose). Returns the page's text."""
    text = str(browser.evaluate("document.body.innerText"))
    drawn = json.loads(browser.evaluate(DRAWN_TEXT_JS))
    prose = re.sub(r"/\S+", "", "\n".join([text, *drawn]))
    assert not RAW_VALUES.findall(prose), (where, RAW_VALUES.findall(prose))
    assert not ENGLISH.findall(prose), (where, sorted(set(ENGLISH.findall(prose))))
    assert not ENGLISH_DECIMAL.findall(prose), (where, ENGLISH_DECIMAL.findall(prose))
    return text


def _serve(store: Path, log_dir: Path) -> Iterator[str]:
    _require_chromium()
    port = free_port()
    process = start_server(store, port, "127.0.0.1", log=log_dir / "streamlit.log")
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def app_url(dashboard_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(dashboard_store, tmp_path_factory.mktemp("streamlit"))


@pytest.fixture(scope="module")
def pipeline_url(pipeline_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(pipeline_store, tmp_path_factory.mktemp("streamlit-pipeline"))


def _check_every_page(app_url: str, folder: Path) -> dict[str, float]:
    """Open every page, check it, save its screenshot; seconds to a rendered page each."""
    seconds = {}
    with Browser(height=2400) as browser:
        for _path, title, url_path, _icon in (*PAGES, *EXTRA_PAGES):
            started = time.monotonic()
            state = browser.open(f"{app_url}/{page_url(url_path)}", timeout_s=PAGE_TIMEOUT_S)
            seconds[url_path] = time.monotonic() - started
            browser.screenshot(folder / f"{url_path}.png")
            assert state["title"] == gettext(title), state
            assert not state["exceptions"], (url_path, state["exceptions"])
            assert not state["errors"], (url_path, state["errors"])
            assert not state["dialogs"], (url_path, state["dialogs"])
            assert "Filtros" in check_pt_br(browser, url_path), url_path
    assert all((folder / f"{p[2]}.png").stat().st_size > 10_000 for p in (*PAGES, *EXTRA_PAGES))
    return seconds


def test_every_page_renders_in_chromium(app_url: str) -> None:
    seconds = _check_every_page(app_url, SCREENSHOTS)
    assert sum(seconds.values()) < 90, seconds


def test_every_page_renders_in_chromium_on_the_pipeline_store(pipeline_url: str) -> None:
    seconds = _check_every_page(pipeline_url, SCREENSHOTS / "pipeline")
    assert sum(seconds.values()) < 90, seconds
