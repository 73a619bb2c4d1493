"""The dashboard's access rules without a browser: the pages of each role, the refusal to
expose an unauthenticated dashboard, the OpenID Connect identity, an operadora's reads limited
in the query layer (hand-known fixture store: OP1 runs V1, V2 and line L1; OP2 runs V3, V4 and
line L2), and the public page's readers holding to published aggregates."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from cases.accounts import add_user, authenticate
from cases.db import CaseDB
from cases.errors import AccessDenied, AccountError, to_local_text
from cases.roles import Account
from core.errors import ConfigError
from core.store import Store, open_snapshot
from core.texts import LANG_ENV
from dashboard.auth import (
    AUTH_ENV,
    account_for_identity,
    check_exposure,
    pages_for,
    to_oidc_identity,
)
from dashboard.queries import filters, public
from dashboard.queries.scope import read_scope_vehicle_ids, scope_store
from pontual.cli import format_error

PASSWORD = "uma senha longa o bastante"


def _urls(account: Account) -> list[str]:
    return [url for _path, _title, url, _icon in pages_for(account)]


def test_each_role_gets_its_pages() -> None:
    data = ["visao-geral", "linhas", "viagem", "lotacao", "frota", "ao-vivo", "precisao"]
    data += ["qualidade"]
    assert _urls(Account("ana", "planejamento")) == [
        *data, "avaliacao-anual", "tendencias", "infracoes", "casos", "auditoria"
    ]  # fmt: skip
    assert _urls(Account("fabio", "fiscal")) == [*data, "tendencias", "infracoes", "casos"]
    assert _urls(Account("aurea", "autoridade")) == [*data, "tendencias", "infracoes", "casos"]
    assert _urls(Account("carla", "conselho")) == ["avaliacao-anual", "tendencias", "casos"]
    assert _urls(Account("op", "operadora", "OP1")) == [*data, "tendencias", "casos"]
    assert _urls(Account("x", "public")) == []


def test_an_unauthenticated_dashboard_stays_on_the_loopback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_exposure("127.0.0.1", "none")
    check_exposure("::1", "none")
    check_exposure("0.0.0.0", "local")
    with pytest.raises(
        ConfigError, match=r"without authentication cannot listen on 0\.0\.0\.0"
    ) as err:
        check_exposure("0.0.0.0", "none")
    assert "pontual users add" in (err.value.hint or "")
    monkeypatch.delenv(LANG_ENV, raising=False)
    assert format_error(err.value) == [
        "erro: o painel sem autenticação não pode escutar em 0.0.0.0: qualquer pessoa na rede "
        "veria infrações, placas e casos",
        "dica: crie uma conta (`pontual users add NOME --role planejamento`) ou configure "
        "PONTUAL_DASHBOARD_AUTH=oidc; para a página pública use `pontual dashboard --public`",
    ]
    monkeypatch.setenv(LANG_ENV, "en")
    assert format_error(err.value)[0] == (
        "error: the dashboard without authentication cannot listen on 0.0.0.0: anyone on the "
        "network would see infractions, plates and cases"
    )


def test_an_oidc_identity_maps_to_the_account_of_its_email(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with CaseDB.open(f"sqlite:///{tmp_path / 'c.sqlite'}") as db:
        boss = add_user(db, "ana", "planejamento", PASSWORD)
        add_user(db, "op1@empresa.com.br", "operadora", None, operator_id="OP1", by=boss)
        identity = to_oidc_identity({"sub": "abc", "email": "op1@empresa.com.br"})
        assert identity is not None and identity.claim == "email"
        assert account_for_identity(db, identity) == Account(
            "op1@empresa.com.br", "operadora", "OP1"
        )
        # an OIDC-only account has no password that could ever match
        with pytest.raises(AccountError, match="wrong name or password"):
            authenticate(db, "op1@empresa.com.br", "")
        stranger = to_oidc_identity({"sub": "xyz"})
        assert stranger is not None
        with pytest.raises(AccountError, match="has no Pontual account") as err:
            account_for_identity(db, stranger)
    # the sign-in page says it in the chosen language, its hint after "Ask the planning team"
    monkeypatch.delenv(LANG_ENV, raising=False)
    assert (to_local_text(err.value.what), to_local_text(err.value.hint or "")) == (
        "xyz entrou pelo provedor de identidade, mas não tem conta no Pontual",
        "`pontual users add xyz --role PAPEL --oidc`",
    )
    monkeypatch.setenv(LANG_ENV, "en")
    assert to_local_text(err.value.what) == (
        "xyz signed in through the identity provider but has no Pontual account"
    )
    assert to_oidc_identity({"email": " "}) is None


def _scoped(snapshot: Store, account: Account) -> Store:
    return scope_store(Store(snapshot.path, snapshot.con.cursor(), read_only=True), account)


def test_an_operadora_reads_only_its_operator(dashboard_store: Path) -> None:
    snapshot = open_snapshot(dashboard_store)
    op2 = _scoped(snapshot, Account("op2", "operadora", "OP2"))
    boss = _scoped(snapshot, Account("ana", "planejamento"))

    def ids(store: Store, sql: str) -> list[object]:
        return sorted(store.query(sql).to_series().to_list(), key=str)

    # the hand-known rows: OP2 ran L2-0800 with V3; the suppressed L1-0800 is OP1's line
    assert ids(op2, "SELECT trip_id FROM trip_outcomes") == ["L2-0800"]
    assert ids(boss, "SELECT trip_id FROM trip_outcomes") == [
        "L1-0700", "L1-0800", "L1-0900", "L2-0800"
    ]  # fmt: skip
    assert ids(op2, "SELECT vehicle_id FROM main.vehicles") == ["V3", "V4"]
    assert ids(op2, "SELECT scope_id FROM annual_grades") == ["OP2"]
    assert ids(op2, "SELECT infraction_key FROM suggested_infractions") == []
    assert ids(op2, "SELECT ping_id FROM vehicle_locations") == []  # V1's pings are OP1's
    assert ids(op2, "SELECT count(*) FROM quarantine") == [0]
    assert ids(op2, "SELECT route_id FROM gtfs_routes") == ["L1", "L2"]  # the public timetable
    # the readers of the pages, unchanged, see the same
    assert filters.read_operators(op2)["operator_id"].to_list() == ["OP2"]
    assert filters.read_route_ids(op2, "OP2", "") == ["L2"]
    assert read_scope_vehicle_ids(op2) == ["V3", "V4"]
    assert read_scope_vehicle_ids(boss) is None
    op1 = _scoped(snapshot, Account("op1", "operadora", "OP1"))
    assert ids(op1, "SELECT trip_id FROM trip_outcomes") == ["L1-0700", "L1-0800", "L1-0900"]
    assert ids(op1, "SELECT ping_id FROM vehicle_locations") == [1, 2, 3, 4, 5]


def test_the_public_role_reads_nothing_of_the_store(dashboard_store: Path) -> None:
    snapshot = open_snapshot(dashboard_store)
    with pytest.raises(AccessDenied):
        _scoped(snapshot, Account("x", "public"))
    # the board reads the annual page's tables (grades, dossiers)
    board = _scoped(snapshot, Account("carla", "conselho"))
    assert board.query("SELECT count(*) AS n FROM annual_grades")["n"][0] == 2


def test_the_public_page_publishes_aggregates_only(dashboard_store: Path) -> None:
    snapshot = open_snapshot(dashboard_store)
    frames = {
        "read_public_indicators": public.read_public_indicators(snapshot),
        "read_public_crowding": public.read_public_crowding(snapshot, "America/Sao_Paulo"),
        "read_public_grades": public.read_public_grades(snapshot),
    }
    vehicles = set(snapshot.query("SELECT vehicle_id FROM vehicles")["vehicle_id"].to_list())
    plates = set(snapshot.query("SELECT plate FROM vehicles")["plate"].drop_nulls().to_list())
    for name, frame in frames.items():
        assert set(frame.columns) == public.PUBLIC_COLUMNS[name], name
        text = {str(v) for col in frame.iter_columns() for v in col.to_list()}
        assert not text & (vehicles | plates), name
    # hand-known values: L1 ran one trip at 07h (local) and one at 09h, the second over the limit
    crowding = frames["read_public_crowding"]
    assert crowding.select("route_id", "hour", "n_trips", "over_limit_share").rows() == [
        ("L1", 7, 1, 0.0),
        ("L1", 9, 1, 1.0),
    ]
    grades = frames["read_public_grades"]
    assert dict(zip(grades["scope_id"], grades["grade"], strict=True)) == {"OP1": "B", "OP2": "E"}
    icv = frames["read_public_indicators"].filter(
        (pl.col("scope") == "system") & (pl.col("indicator") == "icv_score")
    )
    assert dict(zip(icv["period"], icv["value"], strict=True)) == {"2026-03": 82.5, "2026-02": 80.0}


def test_pontual_dashboard_on_the_network_without_login_exits_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [
            *(sys.executable, "-m", "pontual", "--store", str(tmp_path / "p.duckdb")),
            *("dashboard", "--address", "0.0.0.0", "--headless"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != AUTH_ENV},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "sem autenticação não pode escutar em 0.0.0.0" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "p.cases.sqlite").exists()  # learning the mode created nothing
