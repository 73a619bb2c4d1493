"""OpenID Connect login in a real headless Chromium against a real provider started here
(npm `oidc-provider`, tests/node/oidc_provider.mjs): the dashboard in mode `oidc` sends the
browser to the provider, and back; the identity (e-mail) maps to its Pontual account, whose
role decides the pages; a person the provider knows but Pontual does not gets no page."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cases.accounts import add_user
from cases.audit import read_audit
from cases.db import CaseDB
from cases.roles import Account
from core.settings import CASES_DB_ENV
from dashboard.auth import AUTH_ENV, SECRETS_ENV
from dashboard.browser import Browser
from dashboard.server import free_port, start_server, wait_until_ready
from tests.dashboard.test_browser import _require_chromium

pytestmark = pytest.mark.browser

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
PROVIDER = NODE_DIR / "oidc_provider.mjs"
TIMEOUT_S = 60.0
DATA_PAGES = ["", "linhas", "viagem", "lotacao", "frota", "ao-vivo", "precisao", "qualidade"]


def _require_node_provider() -> None:
    missing = None
    if shutil.which("node") is None:
        missing = "node is not installed"
    elif not (NODE_DIR / "node_modules" / "oidc-provider").is_dir():
        missing = "npm oidc-provider is not installed (make sysdeps runs npm install in tests/node)"
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)


@pytest.fixture(scope="module")
def oidc_dashboard(
    dashboard_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(dashboard URL, case database URL): the provider and the dashboard in mode `oidc`."""
    _require_chromium()
    _require_node_provider()
    folder = tmp_path_factory.mktemp("oidc")
    db_url = f"sqlite:///{folder / 'cases.sqlite'}"
    with CaseDB.open(db_url) as db:
        boss = add_user(db, "ana", "planejamento", "uma senha bem comprida")
        add_user(db, "op1@empresa.com.br", "operadora", None, operator_id="OP1", by=boss)
    port = free_port()
    provider = subprocess.Popen(
        ["node", str(PROVIDER), f"http://127.0.0.1:{port}/oauth2callback"],
        cwd=NODE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    dashboard = None
    try:
        assert provider.stdout is not None
        client = json.loads(provider.stdout.readline())
        secrets_file = folder / "secrets.toml"
        secrets_file.write_text(
            "[auth]\n"
            f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
            f'cookie_secret = "{secrets.token_hex(32)}"\n'
            f'client_id = "{client["client_id"]}"\n'
            f'client_secret = "{client["client_secret"]}"\n'
            f'server_metadata_url = "{client["issuer"]}/.well-known/openid-configuration"\n'
            # the provider's prompts are login and consent (Streamlit asks select_account)
            'client_kwargs = { prompt = "login" }\n'
        )
        secrets_file.chmod(0o600)
        dashboard = start_server(
            dashboard_store,
            port,
            "127.0.0.1",
            log=folder / "streamlit.log",
            env={CASES_DB_ENV: db_url, AUTH_ENV: "oidc", SECRETS_ENV: str(secrets_file)},
        )
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, dashboard)
        yield url, db_url
    finally:
        if dashboard is not None:
            dashboard.terminate()
            dashboard.wait(timeout=10)
        provider.terminate()
        provider.wait(timeout=10)


def _wait_for(b: Browser, expression: str, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not b.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached; at {b.evaluate('location.href')}")
        time.sleep(0.2)


def _login_at_provider(b: Browser, url: str, user: str) -> dict[str, object]:
    state = b.open(url, timeout_s=TIMEOUT_S)
    assert state["title"] == "Entrar no Pontual", state
    b.evaluate(
        "[...document.querySelectorAll('button')].find(e => e.innerText.includes("
        "'provedor de identidade')).click()"
    )
    _wait_for(b, "!!document.querySelector('input[name=login]')", "the provider's login form")
    for name, text in (("login", user), ("password", "qualquer")):
        b.evaluate(f"document.querySelector('input[name={name}]').focus()")
        b.send("Input.insertText", text=text)
    b.evaluate("document.querySelector('button[type=submit]').click()")
    _wait_for(b, f"location.href.startsWith({json.dumps(url)})", "the dashboard again")
    time.sleep(0.5)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        state = b.wait_ready(TIMEOUT_S)
        if state["title"] != "Entrar no Pontual" or time.monotonic() > deadline:
            return state
        time.sleep(0.3)


def test_an_oidc_login_opens_the_pages_of_the_accounts_role(
    oidc_dashboard: tuple[str, str],
) -> None:
    url, db_url = oidc_dashboard
    with Browser(height=1400) as b:
        b.open(url, timeout_s=TIMEOUT_S)  # a fresh server's first visit at its root
        state = _login_at_provider(b, url, "op1@empresa.com.br")
        assert state["title"] == "Visão geral", state
        assert not state["exceptions"], state
        nav = b.evaluate(
            "[...document.querySelectorAll('[data-testid=stSidebarNavLink]')]"
            ".map(a => new URL(a.href).pathname.replace(/^\\//, ''))"
        )
        assert nav == [*DATA_PAGES, "tendencias", "casos"]
        body = str(b.evaluate("document.body.innerText"))
        assert "Conta: op1@empresa.com.br" in body and "Operadora OP1" in body
    with Browser(height=1400) as b:
        b.open(url, timeout_s=TIMEOUT_S)
        state = _login_at_provider(b, url, "estranho@exemplo.org")
        assert state["title"] == "Sem acesso ao painel", state
        assert "não tem conta no Pontual" in " ".join(state["errors"]), state  # type: ignore[arg-type]
        nav = b.evaluate("document.querySelectorAll('[data-testid=stSidebarNavLink]').length")
        assert nav == 0
    with CaseDB.open(db_url) as db:
        log = read_audit(db, Account("ana", "planejamento"))
    logins = log.filter(log["action"] == "login")
    assert logins["actor"].to_list() == ["op1@empresa.com.br"]
    assert logins["detail"].to_list() == ["OpenID Connect (email)"]
