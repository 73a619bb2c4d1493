"""The first demo that serves the dashboard creates a `planejamento` account, keeps its
password in a 0600 file beside the store and says how to log in; a second demo creates none."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from cases.accounts import authenticate, list_users
from cases.db import CaseDB
from core.settings import Settings
from pontual.context import Context
from pontual.verbs.demo import ensure_demo_account


def test_the_first_demo_creates_an_account_and_says_how_to_log_in(tmp_path: Path) -> None:
    settings = Settings.resolve(str(tmp_path / "pontual.duckdb"))
    out = io.StringIO()
    ctx = Context(settings)
    ctx.console = Console(file=out, width=300)  # a cached_property: set before first use
    ensure_demo_account(ctx, settings.store_path)
    login = tmp_path / "demo-login.txt"
    assert login.stat().st_mode & 0o777 == 0o600
    password = re.search(r"senha: (\S+)", login.read_text()).group(1)  # type: ignore[union-attr]
    assert f"conta demo e a senha {password}" in out.getvalue()
    with CaseDB.open(settings.cases_db_url) as db:
        assert authenticate(db, "demo", password).role == "planejamento"
    ensure_demo_account(
        ctx, settings.store_path
    )  # a second demo: no new account, the file is named
    assert f"guardadas em {login}" in out.getvalue().splitlines()[-1]
    with CaseDB.open(settings.cases_db_url) as db:
        assert list_users(db)["name"].to_list() == ["demo"]
