"""Deep links on a freshly started dashboard, in headless Chromium (issue #20): the first
request a new server process answers may be any page's address, and it opens that page; an
address that is no page gets a pt-BR page, never Streamlit's English "Page not found" dialog.
Each test starts its own server: only the first script run of a process is "cold" (the
warm-up session of `dashboard.launch.prewarm` is off here, so the browser's run is that one)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.browser import Browser
from dashboard.launch import PREWARM_ENV
from dashboard.server import free_port, start_server, wait_until_ready
from tests.dashboard.test_browser import _require_chromium

pytestmark = pytest.mark.browser

TIMEOUT_S = 60.0


def wait_for_text(browser: Browser, needle: str, timeout_s: float = 15.0) -> str:
    """The page's text once it holds `needle` (a page's elements may be drawn after its
    title on a loaded machine), or as it is at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = str(browser.evaluate("document.body.innerText"))
        if needle in text or time.monotonic() > deadline:
            return text
        time.sleep(0.2)


def _fresh_server(store: Path, log: Path) -> Iterator[str]:
    _require_chromium()
    port = free_port()
    process = start_server(store, port, "127.0.0.1", log=log, env={PREWARM_ENV: "0"})
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("path", "title"),
    # the first page's own address too: Streamlit serves its default page at the root only
    [("linhas", "Linhas"), ("lotacao", "Lotação"), ("visao-geral", "Visão geral")],
)
def test_a_cold_deep_link_opens_its_page(
    dashboard_store: Path, tmp_path: Path, path: str, title: str
) -> None:
    for url in _fresh_server(dashboard_store, tmp_path / "streamlit.log"):
        with Browser() as browser:
            state = browser.open(f"{url}/{path}", timeout_s=TIMEOUT_S)
            assert state["title"] == title, state
            assert state["dialogs"] == [], state
            assert not state["exceptions"], state
            assert browser.evaluate("location.pathname") == f"/{path}"


def test_an_unknown_address_gets_a_pt_br_page(dashboard_store: Path, tmp_path: Path) -> None:
    for url in _fresh_server(dashboard_store, tmp_path / "streamlit.log"):
        with Browser() as browser:
            for attempt in ("cold", "warm"):  # the first run of the process, then another
                state = browser.open(f"{url}/nao-existe", timeout_s=TIMEOUT_S)
                assert state["title"] == "Página não encontrada", (attempt, state)
                assert state["dialogs"] == [], (attempt, state)
                text = browser.evaluate("document.body.innerText")
                assert "O endereço “/nao-existe” não é uma página do painel" in text
                assert "Page not found" not in text
            # the notice links to the first page of the role, which opens
            browser.evaluate(
                "[...document.querySelectorAll('a')]"
                ".find(a => a.innerText.includes('Abrir a página inicial')).click()"
            )
            state = browser.wait_ready(TIMEOUT_S, title="Visão geral")
            assert state["dialogs"] == [], state


def test_a_nested_unknown_address_gets_the_same_pt_br_page(
    dashboard_store: Path, tmp_path: Path
) -> None:
    """`/a/b` got a blank page (Streamlit's relative scripts under `/a/`) or, reached, its
    English dialog: now the same pt-BR page as `/nao-existe`, the address kept."""
    for url in _fresh_server(dashboard_store, tmp_path / "streamlit.log"):
        with Browser() as browser:
            # the first run of the process, then two more (a page's name under a segment)
            for path in ("a/b", "linhas/x", "lines/x/y"):
                state = browser.open(f"{url}/{path}", timeout_s=TIMEOUT_S)
                assert state["title"] == "Página não encontrada", (path, state)
                assert state["dialogs"] == [], (path, state)
                assert not state["exceptions"], (path, state)
                notice = f"O endereço “/{path}” não é uma página do painel"
                text = wait_for_text(browser, notice)
                assert notice in text
                assert "Page not found" not in text
                assert "Linhas" in text  # the menu is drawn: the app runs under the address
                assert browser.evaluate("location.pathname") == f"/{path}"
            browser.evaluate(
                "[...document.querySelectorAll('a')]"
                ".find(a => a.innerText.includes('Abrir a página inicial')).click()"
            )
            state = browser.wait_ready(TIMEOUT_S, title="Visão geral")
            assert state["dialogs"] == [], state
            assert browser.evaluate("location.pathname") == "/"
