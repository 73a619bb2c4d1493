"""The verbs: `pontual users`, `audit`, `cases`, `verify`, as a fiscal, an authority and an
operator would type them (SQLite case database beside the store)."""

from __future__ import annotations

import io
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.store import Store
from pontual.cli import main
from tests.cases.conftest import PASSWORD
from tests.cases.test_evidence import fill_store

KEY = "B-IV|O1|2026-03-02|V12"


class Cli:
    def __init__(self, store: Path, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch):
        self.store, self.capsys, self.mp = store, capsys, mp

    cases_db: str | None = None

    def __call__(self, *argv: str, stdin: str = "") -> tuple[int, str, str]:
        self.mp.setattr(sys, "stdin", io.StringIO(stdin))
        self.mp.setenv("COLUMNS", "200")  # rich tables print whole, as on a wide terminal
        if self.cases_db is None:
            self.mp.delenv("PONTUAL_CASES_DB", raising=False)
        else:
            self.mp.setenv("PONTUAL_CASES_DB", self.cases_db)
        code = main(["--store", str(self.store), *argv])
        out = self.capsys.readouterr()
        return code, out.out, out.err


@pytest.fixture
def cli(
    store_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Cli:
    fill_store(store_path)
    return Cli(store_path, capsys, monkeypatch)


def test_users_and_audit(cli: Cli) -> None:
    code, out, _ = cli(
        "users", "add", "ana", "--role", "planejamento", "--password-stdin", stdin=PASSWORD + "\n"
    )
    assert (code, out.strip()) == (0, "conta 'ana' criada: papel planejamento")
    # the first account exists: the next needs --by
    code, _, err = cli(
        "users", "add", "fabio", "--role", "fiscal", "--password-stdin", stdin=PASSWORD
    )
    assert code == 2 and "diga quem cria esta com --by" in err
    code, out, _ = cli(
        "users",
        "add",
        "op1",
        "--role",
        "operadora",
        "--operator",
        "O1",
        "--by",
        "ana",
        "--password-stdin",
        stdin=PASSWORD,
    )
    assert code == 0 and "da operadora O1" in out
    code, _, err = cli(
        "users", "add", "bob", "--role", "fiscal", "--by", "op1", "--password-stdin", stdin=PASSWORD
    )
    assert code == 2 and "não pode fazer 'manage_users'" in err
    code, _, err = cli(
        "users", "add", "x", "--role", "fiscal", "--by", "ana", "--password-stdin", stdin="curta"
    )
    assert code == 2 and "senha curta demais" in err
    cli.mp.setenv("PONTUAL_LANG", "en")  # the same refusals, from their English ids
    code, _, err = cli(
        "users", "add", "bob", "--role", "fiscal", "--by", "op1", "--password-stdin", stdin=PASSWORD
    )
    assert (
        code == 2 and "error: the account 'op1' (Operator (role)) may not do 'manage_users'" in err
    )
    code, _, err = cli(
        "users", "add", "x", "--role", "fiscal", "--by", "ana", "--password-stdin", stdin="curta"
    )
    assert code == 2 and "error: password too short: use at least 12 characters" in err
    cli.mp.delenv("PONTUAL_LANG")
    # no prompt without a terminal, and never a password option
    code, _, err = cli("users", "add", "y", "--role", "fiscal", "--by", "ana")
    assert code == 2 and "--password-stdin" in err
    with pytest.raises(SystemExit):
        cli("users", "add", "z", "--role", "fiscal", "--by", "ana", "--password", PASSWORD)
    code, out, _ = cli("users", "list")
    assert code == 0 and "ana" in out and "op1" in out and "$argon2" not in out
    code, out, _ = cli("audit", "--by", "ana")
    assert code == 0 and "user_added" in out
    code, _, err = cli("audit", "--by", "op1")
    assert code == 2 and "read_audit" in err
    assert (cli.store.parent / "pontual.cases.sqlite").exists()


def _accounts(cli: Cli) -> None:
    cli("users", "add", "ana", "--role", "planejamento", "--password-stdin", stdin=PASSWORD)
    for name, role, *extra in (
        ("fabio", "fiscal"),
        ("alice", "autoridade"),
        ("op1", "operadora", "--operator", "O1"),
        ("op2", "operadora", "--operator", "O2"),
    ):
        code, _, err = cli(
            "users",
            "add",
            name,
            "--role",
            role,
            *extra,
            "--by",
            "ana",
            "--password-stdin",
            stdin=PASSWORD,
        )
        assert code == 0, err


def test_a_case_from_the_command_line(cli: Cli) -> None:
    _accounts(cli)
    # art. 68 §1: no place given
    code, _, err = cli(
        "cases", "lavrar", KEY, "--by", "fabio", "--auto", "AI-1", "--on", "2026-03-05"
    )
    assert code == 2
    assert "art. 68 §1" in err and "--stop ou --lat/--lon (local, III)" in err
    assert "Traceback" not in err
    cli.mp.setenv("PONTUAL_LANG", "en")
    code, _, err = cli(
        "cases", "lavrar", KEY, "--by", "fabio", "--auto", "AI-1", "--on", "2026-03-05"
    )
    assert code == 2 and "--stop or --lat/--lon (place, III)" in err
    cli.mp.delenv("PONTUAL_LANG")
    # the plate comes from the fleet register, the time from the suggestion
    code, out, err = cli(
        "cases",
        "lavrar",
        KEY,
        "--by",
        "fabio",
        "--auto",
        "AI-1",
        "--stop",
        "S7",
        "--on",
        "2026-03-05",
    )
    assert (code, out.strip()) == (0, "caso 1: lavrada"), err
    code, out, _ = cli("cases", "show", "1", "--by", "fabio")
    assert "placa: IAB1C23" in out
    # the suggestion's occurred_at (11:00 UTC), in local time
    assert "data e hora: 2026-03-02 08:00 (America/Sao_Paulo)" in out
    assert "prazo — remessa do auto (art. 68 §2): 2026-03-20" in out
    assert "evidências (SHA-256): " in out
    code, out, _ = cli("cases", "overdue", "--by", "ana", "--today", "2026-03-23")
    assert code == 0 and "notificar (art. 68 §2)" in out
    cli.mp.setenv("PONTUAL_LANG", "en")  # labels and refusals from their English ids
    code, out, _ = cli("cases", "show", "1", "--by", "fabio")
    assert "deadline — sending of the notice (art. 68 §2): 2026-03-20" in out
    assert "— notice drawn up —" in out  # the state, stored as 'lavrada'
    code, out, _ = cli("cases", "overdue", "--by", "ana", "--today", "2026-03-23")
    assert code == 0 and "notify (art. 68 §2)" in out
    cli.mp.delenv("PONTUAL_LANG")
    code, _, err = cli(
        "cases", "julgar", "1", "procedente", "--by", "alice", "--reason", "x", "--on", "2026-03-06"
    )
    assert code == 2 and "está 'lavrada': 'julgar' não é permitido" in err
    assert cli("cases", "notificar", "1", "--by", "fabio", "--on", "2026-03-10")[0] == 0
    code, _, err = cli("cases", "defesa", "1", "--by", "op2", "--reason", "x", "--on", "2026-03-11")
    assert code == 2 and "não tem acesso a dados da operadora 'O1'" in err
    cli.mp.setenv("PONTUAL_LANG", "en")
    code, _, err = cli("cases", "defesa", "1", "--by", "op2", "--reason", "x", "--on", "2026-03-11")
    assert code == 2 and "has no access to data of operator 'O1'" in err
    cli.mp.delenv("PONTUAL_LANG")
    code, _, err = cli("cases", "defesa", "1", "--by", "op1", "--reason", "x", "--on", "2026-04-01")
    assert code == 2 and "defesa fora do prazo: venceu em 2026-03-31" in err
    code, out, _ = cli("cases", "list", "--by", "op2")
    assert code == 0 and "AI-1" not in out
    code, out, _ = cli("cases", "list", "--by", "op1")
    assert "AI-1" in out
    code, out, _ = cli("cases", "overdue", "--by", "ana", "--today", "2026-03-25")
    assert code == 0 and "nenhum caso atrasado" in out
    code, out, _ = cli("audit", "--by", "ana")
    assert "case_transition" in out and "evidence_recorded" in out


def test_verify_names_the_changed_day(cli: Cli) -> None:
    _accounts(cli)
    code, out, err = cli("verify")
    assert code == 0, err
    assert "3 de 3 dia(s)-tabela conferem" in out and "nenhuma alteração" in out
    with Store.open(cli.store) as store:
        store.con.execute(
            "UPDATE vehicle_locations SET speed_m_s = 9.0 WHERE event_at = ?",
            [datetime(2026, 3, 3, 11, 0, tzinfo=UTC)],
        )
    code, out, err = cli("verify", "--no-record")
    assert code == 2
    assert "dados brutos alterados em 2026-03-03 (vehicle_locations" in err
    assert "2026-03-02" not in err


def test_verify_checks_each_day_by_its_recorded_method(cli: Cli) -> None:
    """A store whose 2 Mar was digested by duckdb-text-v1 (an earlier release) and 3 Mar by
    arrow-binary-v1: `pontual verify` checks both, and names the v1 day once it changes."""
    from tests.cases.test_digests import MAR2, as_text_v1

    _accounts(cli)
    code, out, err = cli("verify")
    assert code == 0, err
    with Store.open(cli.store) as store:
        as_text_v1(store, "vehicle_locations", MAR2)
        as_text_v1(store, "fare_transactions", MAR2)
        methods = store.query(
            "SELECT DISTINCT split_part(digest_method, ':', 1) AS m FROM raw_day_digests ORDER BY m"
        )["m"].to_list()
    assert methods == ["arrow-binary-v1", "duckdb-text-v1"]
    for argv in (("verify",), ("verify", "--no-record")):
        code, out, err = cli(*argv)
        assert code == 0, err
        assert "3 de 3 dia(s)-tabela conferem" in out and "nenhuma alteração" in out
    with Store.open(cli.store) as store:
        store.con.execute(
            "UPDATE vehicle_locations SET speed_m_s = 9.0 WHERE event_at = ?",
            [datetime(2026, 3, 2, 11, 1, tzinfo=UTC)],
        )
    code, out, err = cli("verify", "--no-record")
    assert code == 2
    assert "dados brutos alterados em 2026-03-02 (vehicle_locations" in err
    assert "2026-03-03" not in err and "fare_transactions" not in err


def test_cases_on_postgresql_from_the_command_line(cli: Cli, postgres_url: str) -> None:
    from tests.cases.conftest import _fresh_pg

    cli.cases_db = _fresh_pg(postgres_url)
    _accounts(cli)
    code, out, err = cli(
        "cases",
        "lavrar",
        KEY,
        "--by",
        "fabio",
        "--auto",
        "AI-9",
        "--lat",
        "-29.17",
        "--lon",
        "-51.52",
        "--on",
        "2026-03-05",
    )
    assert (code, out.strip()) == (0, "caso 1: lavrada"), err
    code, out, _ = cli("cases", "list", "--by", "op1")
    assert code == 0 and "AI-9" in out and "lavrada" in out
    assert not (cli.store.parent / "pontual.cases.sqlite").exists()
