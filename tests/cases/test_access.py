"""Roles, local accounts (argon2), the authorisation of the query layer and the audit log."""

from __future__ import annotations

import polars as pl
import pytest
import sqlalchemy as sa

from cases.accounts import add_user, authenticate, get_account, list_users
from cases.audit import audit, read_audit
from cases.db import ACCOUNTS, MIGRATIONS, CaseDB
from cases.errors import AccessDenied, AccountError
from cases.roles import (
    JULGAR,
    LAVRAR,
    PERMISSIONS,
    READ_AUDIT,
    READ_CASES,
    READ_INDICES,
    ROLES,
    Account,
    authorize,
    filter_by_operator,
    may,
)
from tests.cases.conftest import PASSWORD


def test_each_role_may_do_exactly_its_acts() -> None:
    assert set(PERMISSIONS) == set(ROLES)
    doers = {a: sorted(r for r in ROLES if a in PERMISSIONS[r]) for a in (LAVRAR, JULGAR)}
    assert doers == {LAVRAR: ["fiscal"], JULGAR: ["autoridade"]}
    assert sorted(r for r in ROLES if READ_AUDIT in PERMISSIONS[r]) == ["planejamento"]
    assert PERMISSIONS["public"] == frozenset({"read_public"})
    # the board reads verdicts and dossiers, not open cases nor trip-level indices
    board = Account("c", "conselho")
    assert not may(board, READ_CASES)
    assert not may(board, READ_INDICES)


def test_operator_reads_are_filtered_in_the_query_layer() -> None:
    frame = pl.DataFrame({"operator_id": ["O1", "O2", "O1"], "n": [1, 2, 3]})
    op1 = Account("op1", "operadora", "O1")
    assert filter_by_operator(op1, frame)["n"].to_list() == [1, 3]
    boss = Account("ana", "planejamento")
    assert filter_by_operator(boss, frame).height == 3
    authorize(op1, READ_INDICES, operator_id="O1")
    with pytest.raises(AccessDenied, match="has no access to data of operator 'O2'"):
        authorize(op1, READ_INDICES, operator_id="O2")
    with pytest.raises(AccessDenied, match="may not do 'read_audit'") as err:
        authorize(op1, READ_AUDIT)
    assert err.value.hint


def test_accounts_store_only_argon2_hashes(case_db: CaseDB) -> None:
    with pytest.raises(AccountError, match="the first account must be of the role planejamento"):
        add_user(case_db, "fabio", "fiscal", PASSWORD)
    add_user(case_db, "ana", "planejamento", PASSWORD)
    with case_db.read() as conn:
        stored = str(conn.execute(sa.select(ACCOUNTS.c.password_hash)).scalar())
    assert stored.startswith("$argon2id$")
    assert PASSWORD not in stored
    assert authenticate(case_db, "ana", PASSWORD) == Account("ana", "planejamento")
    with pytest.raises(AccountError, match="wrong name or password"):
        authenticate(case_db, "ana", "senha-errada-longa")
    with pytest.raises(AccountError, match="wrong name or password"):
        authenticate(case_db, "ninguem", PASSWORD)


def test_bad_accounts_are_refused(case_db: CaseDB, people: dict[str, Account]) -> None:
    boss = people["planejamento"]
    with pytest.raises(AccountError, match="unknown role 'admin'"):
        add_user(case_db, "x", "admin", PASSWORD, by=boss)
    with pytest.raises(AccountError, match="account needs --operator"):
        add_user(case_db, "x", "operadora", PASSWORD, by=boss)
    with pytest.raises(AccountError, match="is only for accounts of the role operadora"):
        add_user(case_db, "x", "fiscal", PASSWORD, operator_id="O1", by=boss)
    with pytest.raises(AccountError, match="password too short"):
        add_user(case_db, "x", "fiscal", "curta", by=boss)
    with pytest.raises(AccountError, match="already exists"):
        add_user(case_db, "fabio", "fiscal", PASSWORD, by=boss)
    with pytest.raises(AccountError, match="accounts exist already"):
        add_user(case_db, "x", "planejamento", PASSWORD)
    with pytest.raises(AccessDenied, match="manage_users"):
        add_user(case_db, "x", "fiscal", PASSWORD, by=people["fiscal"])
    with pytest.raises(AccountError, match="unknown account 'x'"):
        get_account(case_db, "x")
    users = list_users(case_db)
    assert users["name"].to_list() == ["alice", "ana", "carla", "fabio", "op1", "op2"]
    assert users.filter(pl.col("name") == "op1")["operator_id"].item() == "O1"
    assert "password_hash" not in users.columns


def test_audit_log_records_who_when_what(case_db: CaseDB, people: dict[str, Account]) -> None:
    authenticate(case_db, "fabio", PASSWORD)
    with pytest.raises(AccountError):
        authenticate(case_db, "fabio", "tentativa-errada-1")
    audit(case_db, "carla", "dossier_download", "dossie-2026-O1.pdf", "sha256 ab12")
    audit(case_db, "ana", "profile_change", "bento-goncalves-2021", "versão 2")
    log = read_audit(case_db, people["planejamento"])
    top = log.head(4).select("actor", "action", "target").rows()
    assert top == [
        ("ana", "profile_change", "bento-goncalves-2021"),
        ("carla", "dossier_download", "dossie-2026-O1.pdf"),
        ("fabio", "login_failed", "fabio"),
        ("fabio", "login", "fabio"),
    ]
    # six accounts created: by the system (the first) and by ana
    added = log.filter(pl.col("action") == "user_added")
    assert added.height == 6
    assert sorted(set(added["actor"])) == ["ana", "sistema"]
    assert log["at"].null_count() == 0
    for role in ("fiscal", "autoridade", "conselho", "operadora"):
        with pytest.raises(AccessDenied):
            read_audit(case_db, people[role])
    with pytest.raises(ValueError, match="unknown audit action"):
        audit(case_db, "ana", "whatever")


def test_migrations_are_versioned_and_idempotent(case_db_url: str) -> None:
    db = CaseDB.open(case_db_url, migrate=False)
    assert db.schema_version() == 0
    assert db.migrate() == MIGRATIONS[-1].version
    assert db.migrate() == MIGRATIONS[-1].version  # a second run applies nothing
    assert db.schema_version() == MIGRATIONS[-1].version
    tables = set(sa.inspect(db.engine).get_table_names())
    assert {"accounts", "audit_log", "cases", "case_events", "case_evidence"} <= tables
    if db.is_sqlite:  # readers never block the writer
        with db.read() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    db.close()


def test_bad_case_database_urls_are_clear_errors() -> None:
    from core.errors import StoreError

    with pytest.raises(StoreError, match="cannot use the case database URL"):
        CaseDB.open("nosuchdb://x/y")
    with pytest.raises(StoreError, match="cannot open the case database") as err:
        CaseDB.open("postgresql+psycopg://nobody@127.0.0.1:1/cases")
    assert err.value.hint and "PONTUAL_CASES_DB" in err.value.hint


def test_retention_setting(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.errors import ConfigError
    from core.settings import Settings

    s = Settings.resolve("data/x.duckdb")
    monkeypatch.delenv("PONTUAL_RETENTION_YEARS", raising=False)
    monkeypatch.delenv("PONTUAL_CASES_DB", raising=False)
    assert s.retention_years == 9
    assert s.cases_db_url == "sqlite:///data/x.cases.sqlite"
    monkeypatch.setenv("PONTUAL_RETENTION_YEARS", "12")
    assert s.retention_years == 12
    monkeypatch.setenv("PONTUAL_RETENTION_YEARS", "5")
    with pytest.raises(ConfigError, match="shorter than the longest legal horizon"):
        _ = s.retention_years
    monkeypatch.setenv("PONTUAL_CASES_DB", "postgresql+psycopg://u@h/db")
    assert s.cases_db_url == "postgresql+psycopg://u@h/db"


def test_verb_modules_import_light() -> None:
    """The case verbs load the database layer only when run (fast `pontual --help`)."""
    import subprocess
    import sys

    code = (
        "import sys, pontual.verbs.cases, pontual.verbs.users, pontual.verbs.verify; "
        "print(sorted(m for m in ('sqlalchemy', 'argon2', 'holidays', 'cases.db') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_scope_sql_limits_an_operator_to_its_rows(tmp_path: object) -> None:
    from cases.roles import scope_sql

    op1 = Account("op1", "operadora", "O1")
    cols = ["service_date", "operator_id", "icv"]
    assert scope_sql(op1, READ_INDICES, cols) == ('"operator_id" = ?', ["O1"])
    assert scope_sql(Account("a", "planejamento"), READ_INDICES, cols) == ("", [])
    with pytest.raises(AccessDenied, match="reads only tables with a column operator_id"):
        scope_sql(op1, READ_INDICES, ["stop_id", "n"])
    with pytest.raises(AccessDenied):
        scope_sql(Account("p", "public"), READ_INDICES, cols)
    with pytest.raises(AccessDenied):
        scope_sql(Account("c", "conselho"), READ_INDICES, cols)
