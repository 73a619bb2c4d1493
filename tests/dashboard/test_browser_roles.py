"""Access by role in a real headless Chromium (issue #23): log in with a local account of each
role, and assert the pages it is given, the pages it cannot reach by URL (a pt-BR refusal,
audited), what an operadora's queries return (its 2 vehicles, not the 4 of the register), and
that a dossier download is audited. Fixture store: OP1 runs V1, V2; OP2 runs V3, V4."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cases.accounts import add_user
from cases.audit import read_audit
from cases.db import CaseDB
from cases.roles import Account
from core.settings import CASES_DB_ENV
from dashboard.auth import AUTH_ENV
from dashboard.browser import Browser
from dashboard.server import free_port, start_server, wait_until_ready
from tests.dashboard.test_browser import SCREENSHOTS, _require_chromium, check_pt_br
from tests.dashboard.test_browser_links import wait_for_text

pytestmark = pytest.mark.browser

PASSWORD = "senha de teste comprida"
DATA_PAGES = ["", "linhas", "viagem", "lotacao", "frota", "ao-vivo", "precisao", "qualidade"]
TIMEOUT_S = 60.0
LOGIN_TITLE = "Entrar no Pontual"
REFUSED = "Acesso negado"


@pytest.fixture(scope="module")
def served(
    dashboard_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """The dashboard in mode `local` on the fixture store, with one account per role."""
    _require_chromium()
    folder = tmp_path_factory.mktemp("roles")
    db_url = f"sqlite:///{folder / 'cases.sqlite'}"
    with CaseDB.open(db_url) as db:
        boss = add_user(db, "ana", "planejamento", PASSWORD)
        add_user(db, "fabio", "fiscal", PASSWORD, by=boss)
        add_user(db, "aurea", "autoridade", PASSWORD, by=boss)
        add_user(db, "carla", "conselho", PASSWORD, by=boss)
        add_user(db, "op2", "operadora", PASSWORD, operator_id="OP2", by=boss)
    port = free_port()
    process = start_server(
        dashboard_store,
        port,
        "127.0.0.1",
        log=folder / "streamlit.log",
        env={CASES_DB_ENV: db_url, AUTH_ENV: "local"},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        yield url, db_url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser(served: tuple[str, str]) -> Iterator[Browser]:
    with Browser(height=1600) as b:
        # The first visit of a fresh server at its root: a deep link before st.navigation has
        # run once gets Streamlit's own "page not found" dialog.
        b.open(served[0], timeout_s=TIMEOUT_S)
        yield b


def _login(b: Browser, url: str, name: str, password: str = PASSWORD) -> dict[str, Any]:
    """Open `url` (a new session: nobody logged in), fill the login form, submit; the state of
    the page drawn after the login (the login page again when it was refused)."""
    state = b.open(url, timeout_s=TIMEOUT_S)
    assert state["title"] == LOGIN_TITLE, state
    for label, text in (("Conta", name), ("Senha", password)):
        b.evaluate(f"document.querySelector('input[aria-label={label}]').focus()")
        b.send("Input.insertText", text=text)
    b.evaluate("document.querySelector('[data-testid=stBaseButton-primaryFormSubmit]').click()")
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        time.sleep(0.3)
        state = b.wait_ready(TIMEOUT_S)
        if state["title"] != LOGIN_TITLE or state["errors"] or time.monotonic() > deadline:
            return state


def _nav(b: Browser) -> list[str]:
    hrefs = b.evaluate(
        "[...document.querySelectorAll('[data-testid=stSidebarNavLink]')]"
        ".map(a => new URL(a.href).pathname.replace(/^\\//, ''))"
    )
    return list(hrefs)


def _main_text(b: Browser) -> str:
    return str(b.evaluate("document.querySelector('[data-testid=stMain]').innerText"))


def _audit(db_url: str) -> list[tuple[str, str, str | None]]:
    with CaseDB.open(db_url) as db:
        log = read_audit(db, Account("ana", "planejamento"), limit=1000)
    return list(zip(log["actor"], log["action"], log["target"], strict=True))


def test_each_role_sees_its_pages_and_is_refused_the_others(
    served: tuple[str, str], browser: Browser
) -> None:
    url, db_url = served
    # Each logs in at a page's URL (the login form first, then that page or its refusal).
    cases = {
        "ana": (
            "frota",
            "Frota",
            [*DATA_PAGES, "avaliacao-anual", "tendencias", "infracoes", "casos", "auditoria"],
        ),
        "fabio": ("auditoria", REFUSED, [*DATA_PAGES, "tendencias", "infracoes", "casos"]),
        "aurea": ("avaliacao-anual", REFUSED, [*DATA_PAGES, "tendencias", "infracoes", "casos"]),
        # the board's root is Avaliação anual, then Tendências e risco
        "carla": ("linhas", REFUSED, ["", "tendencias", "casos"]),
        "op2": ("infracoes", REFUSED, [*DATA_PAGES, "tendencias", "casos"]),
    }  # fmt: skip
    vehicles = {}
    for name, (page, title, pages) in cases.items():
        state = _login(browser, f"{url}/{page}", name)
        assert state["title"] == title, (name, state)
        assert not state["exceptions"], (name, state)
        assert _nav(browser) == pages, name
        assert f"Conta: {name}" in str(browser.evaluate("document.body.innerText"))
        if title == REFUSED:
            assert "não tem acesso à página" in " ".join(state["errors"]), state
        if name in ("ana", "op2"):
            if name == "op2":
                state = browser.click_page("frota", "Frota", timeout_s=TIMEOUT_S)
            wait_for_text(browser, "Veículos cadastrados")  # drawn after the title, loaded
            text = _main_text(browser).split("\n")
            vehicles[name] = text[text.index("Veículos cadastrados") + 2]
    # an operadora's queries return its 2 vehicles, not the register's 4
    assert vehicles == {"ana": "4", "op2": "2"}
    state = browser.click_page("", "Visão geral", timeout_s=TIMEOUT_S)
    assert "Operadora OP2" in _main_text(browser), state
    state = _login(browser, url, "op2", "senha errada de propósito")
    assert state["errors"] == ["nome ou senha incorretos"], state
    log = _audit(db_url)
    for name, (page, title, _pages) in cases.items():
        assert (name, "login", name) in log, name
        if title == REFUSED:
            assert (name, "access_denied", page) in log, name
    assert ("op2", "login_failed", "op2") in log


def test_the_login_address_shows_the_form_then_the_home_page(
    served: tuple[str, str], browser: Browser
) -> None:
    """`/entrar`, the login page's own address, drew Streamlit's English "Page not found"
    dialog over the form (the login page is the default one, served at the root)."""
    url, _db_url = served
    state = _login(browser, f"{url}/entrar", "ana")
    assert state["title"] == "Visão geral", state
    assert state["dialogs"] == [] and not state["exceptions"], state
    assert browser.evaluate("location.pathname") == "/entrar"
    state = browser.open(f"{url}/entrar", timeout_s=TIMEOUT_S)  # a new session: the form
    assert state["title"] == LOGIN_TITLE and state["dialogs"] == [], state


def test_the_board_downloads_a_dossier_and_it_is_audited(
    served: tuple[str, str], browser: Browser
) -> None:
    url, db_url = served
    state = _login(browser, url, "ana")
    state = browser.click_page("auditoria", "Auditoria", timeout_s=TIMEOUT_S)
    assert not state["exceptions"] and not state["errors"], state
    state = _login(browser, url, "carla")
    assert state["title"] == "Avaliação anual", state
    assert not state["exceptions"], state
    # the report buttons come last on a long page: wait for them, as a user would (the
    # tables' "Baixar CSV" buttons come first: click a report's PDF)
    clicked, deadline = False, time.monotonic() + TIMEOUT_S
    while not clicked and time.monotonic() < deadline:
        clicked = bool(
            browser.evaluate(
                "(() => { const b = Array.from(document.querySelectorAll("
                "'[data-testid=stDownloadButton] button')).find("
                "(e) => e.innerText.includes('PDF')); "
                "if (b) { b.click(); return true; } return false; })()"
            )
        )
        if not clicked:
            time.sleep(0.5)
    assert clicked, "no download button on the annual page"
    deadline = time.monotonic() + TIMEOUT_S
    downloads: list[tuple[str, str, str | None]] = []
    while not downloads and time.monotonic() < deadline:
        time.sleep(0.5)
        downloads = [
            row
            for row in _audit(db_url)
            if row[1] == "dossier_download" and (row[2] or "").endswith(".pdf")
        ]
    assert downloads and downloads[0][0] == "carla", downloads


def test_the_public_page_is_served_apart_without_login(
    dashboard_store: Path, tmp_path: Path
) -> None:
    """`pontual dashboard --public`: no login, only the published aggregates' sections, and no
    planners' page at its URL (their scripts are not part of this app)."""
    _require_chromium()
    port = free_port()
    process = start_server(
        dashboard_store, port, "127.0.0.1", log=tmp_path / "public.log", public=True
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        with Browser(height=2000) as b:
            state = b.open(url, timeout_s=TIMEOUT_S)
            assert state["title"] == "Transparência do transporte coletivo", state
            assert not state["exceptions"] and not state["errors"], state
            headers = b.evaluate("[...document.querySelectorAll('h2')].map(h => h.innerText)")
            assert headers == [
                "Índice de cumprimento de viagens (ICV) por mês",
                "Lotação por linha e hora",
                "Conceito anual",
            ]
            assert _nav(b) == []
            b.screenshot(SCREENSHOTS / "transparencia.png")
            text = check_pt_br(b, "transparencia")  # its tables' cells too
            assert "Entrar" not in text and "Conta" not in text
            # the page's own address shows the page too, and keeps the address (it drew
            # Streamlit's English "Page not found" dialog over the page, at the root)
            state = b.open(f"{url}/transparencia", timeout_s=TIMEOUT_S)
            assert state["title"] == "Transparência do transporte coletivo", state
            assert state["dialogs"] == [] and not state["exceptions"], state
            assert b.evaluate("location.pathname") == "/transparencia"
            assert "Conceito anual" in wait_for_text(b, "Conceito anual")
            # a planners' page is not here: the pt-BR "not found" page, as for any address
            # that is no page (nested too), never Streamlit's English dialog
            for path in ("frota", "a/b"):
                state = b.open(f"{url}/{path}", timeout_s=TIMEOUT_S)
                assert state["title"] == "Página não encontrada", (path, state)
                assert state["dialogs"] == [] and not state["exceptions"], (path, state)
                notice = f"“/{path}” não é uma página do painel de transparência"
                text = wait_for_text(b, notice)
                assert notice in text
                assert "Veículos cadastrados" not in text
            b.evaluate(
                "[...document.querySelectorAll('a')]"
                ".find(a => a.innerText.includes('Abrir a página de transparência')).click()"
            )
            state = b.wait_ready(TIMEOUT_S, title="Transparência do transporte coletivo")
            assert state["dialogs"] == [], state
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_fiscal_records_the_notification_of_a_case_on_the_dashboard(
    served: tuple[str, str], browser: Browser, dashboard_store: Path
) -> None:
    """A case lavrado by fabio (through the workflow, as `pontual cases lavrar` does); fabio
    then records its notification in the Casos page's form; the case moves to `notificada`
    and the act is audited, exactly as through the CLI. The operadora of another operator does
    not see the case."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from cases.register import get_case, list_cases, open_case
    from cases.states import Auto
    from cases.workflow import Workflow
    from core.profile import load_profile
    from core.store import open_snapshot

    url, db_url = served
    profile = load_profile("bento-goncalves-2021")
    fabio = Account("fabio", "fiscal")
    suggestion = open_snapshot(dashboard_store).query("SELECT * FROM suggested_infractions")
    today = datetime.now(ZoneInfo(profile.general.timezone.value)).date()
    with CaseDB.open(db_url) as db:
        case_id = open_case(db, suggestion.row(0, named=True), fabio)
        fact_at = datetime(2026, 3, 2, 9, 7, tzinfo=ZoneInfo("America/Sao_Paulo"))
        auto = Auto("AI-2026-001", fact_at, place_stop_id="S1", vehicle_plate="IAA1A12")
        Workflow(db, profile).lavrar(case_id, fabio, auto, on=today)
        assert list_cases(db, Account("op2", "operadora", "OP2")).is_empty()
    state = _login(browser, f"{url}/casos", "fabio")
    assert state["title"] == "Casos" and not state["exceptions"], state
    body = str(browser.evaluate("document.body.innerText"))
    assert "Registrar a notificação da operadora" in body, body[-800:]
    note = "auto entregue à operadora em mãos"
    browser.evaluate("document.querySelector('textarea').focus()")
    browser.send("Input.insertText", text=note)
    # the note is in the form's field before the form is sent (on a busy machine the page was
    # still settling, and a click before it sent the form without the note)
    deadline = time.monotonic() + TIMEOUT_S
    typed = ""
    while typed != note and time.monotonic() < deadline:
        typed = str(browser.evaluate("document.querySelector('textarea')?.value ?? ''"))
        if typed != note:
            time.sleep(0.2)
    assert typed == note, typed
    browser.evaluate(
        "[...document.querySelectorAll('[data-testid=stBaseButton-primaryFormSubmit]')]"
        ".find(b => b.innerText.includes('notificação')).click()"
    )
    case_state = "lavrada"
    while case_state == "lavrada" and time.monotonic() < deadline:
        time.sleep(0.5)
        with CaseDB.open(db_url) as db:
            case_state = get_case(db, fabio, case_id)["state"]
    shown = str(browser.evaluate("document.body.innerText"))
    assert case_state == "notificada", shown[-1500:]
    assert (
        "fabio",
        "case_transition",
        f"caso {case_id}",
    ) in _audit(db_url)
