"""Fixtures of the case tests: a real SQLite (WAL) file and a real PostgreSQL server.

The PostgreSQL server comes from the Debian packages (`make test` installs `postgresql`):
initdb and pg_ctl in a temporary folder on a free port, run as the unprivileged `postgres`
user when the tests run as root (initdb refuses root). Without the binaries the PostgreSQL
tests skip, and fail under CI=true.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cases.accounts import add_user
from cases.db import CaseDB
from cases.roles import Account


def _pg_bin() -> Path:
    """PONTUAL_PG_BIN, else the newest /usr/lib/postgresql/N/bin (Debian's layout)."""
    if os.environ.get("PONTUAL_PG_BIN"):
        return Path(os.environ["PONTUAL_PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()
PASSWORD = "senha-de-teste-longa"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL 15 server for the session; yields an SQLAlchemy URL of an empty database."""
    initdb = PG_BIN / "initdb"
    if not initdb.exists():
        reason = f"PostgreSQL not installed ({initdb}); `make test` installs the postgresql package"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="pontual-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        for p in (base, sock):
            os.chown(p, pw.pw_uid, pw.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    subprocess.run(
        [*prefix, str(initdb), "-D", str(data), "-A", "trust", "-U", "pontual", "-E", "UTF8"],
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {sock} -h 127.0.0.1 -c fsync=off"
    subprocess.run(
        [
            *prefix,
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            opts,
            "-w",
            "-l",
            str(base / "log"),
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            [
                str(PG_BIN / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "pontual",
                "cases",
            ],
            check=True,
            capture_output=True,
        )
        yield f"postgresql+psycopg://pontual@127.0.0.1:{port}/cases"
    finally:
        subprocess.run(
            [*prefix, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(base, ignore_errors=True)


def _fresh_pg(url: str) -> str:
    """A new empty database on the session's server (each test starts clean)."""
    import sqlalchemy as sa

    name = f"t{os.getpid()}_{_fresh_pg.n}"  # type: ignore[attr-defined]
    _fresh_pg.n += 1  # type: ignore[attr-defined]
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return url.rsplit("/", 1)[0] + "/" + name


_fresh_pg.n = 0  # type: ignore[attr-defined]


@pytest.fixture(params=["sqlite", "postgresql"])
def case_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty case database, once on SQLite (WAL) and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'pontual.cases.sqlite'}"
    return _fresh_pg(request.getfixturevalue("postgres_url"))


@pytest.fixture
def case_db(case_db_url: str) -> Iterator[CaseDB]:
    db = CaseDB.open(case_db_url)
    yield db
    db.close()


@pytest.fixture(autouse=True)
def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2's RFC 9106 low-memory profile costs ~0.1 s a hash on a busy machine; the tests
    use its CHEAP profile (same algorithm and code path, tiny cost)."""
    from argon2 import PasswordHasher, profiles

    import cases.accounts

    monkeypatch.setattr(
        cases.accounts, "_hasher", PasswordHasher.from_parameters(profiles.CHEAPEST)
    )


@pytest.fixture
def people(case_db: CaseDB) -> dict[str, Account]:
    """One account per role (operadora bound to O1, another to O2)."""
    boss = add_user(case_db, "ana", "planejamento", PASSWORD)
    return {
        "planejamento": boss,
        "fiscal": add_user(case_db, "fabio", "fiscal", PASSWORD, by=boss),
        "autoridade": add_user(case_db, "alice", "autoridade", PASSWORD, by=boss),
        "conselho": add_user(case_db, "carla", "conselho", PASSWORD, by=boss),
        "operadora": add_user(case_db, "op1", "operadora", PASSWORD, operator_id="O1", by=boss),
        "operadora2": add_user(case_db, "op2", "operadora", PASSWORD, operator_id="O2", by=boss),
    }
