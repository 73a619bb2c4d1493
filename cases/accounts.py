"""Local accounts: a name, a role, an operator for `operadora`, an argon2id password hash.

Passwords never travel on the command line (`pontual users add` reads them from a prompt or
stdin) and are never stored: only the argon2 hash (argon2-cffi's RFC 9106 defaults).
"""

from __future__ import annotations

import polars as pl
import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from cases.audit import record_audit
from cases.db import ACCOUNTS, CaseDB, now_utc
from cases.errors import AccountError
from cases.roles import MANAGE_USERS, ROLES, Account, authorize

MIN_PASSWORD_CHARS = 12
SYSTEM_ACTOR = "sistema"
OIDC_NO_PASSWORD = "!oidc"
"""The stored hash of an account that logs in only through the identity provider: not an
argon2 hash, so no password ever verifies against it."""

_hasher = PasswordHasher()


def add_user(
    db: CaseDB,
    name: str,
    role: str,
    password: str | None,
    *,
    operator_id: str | None = None,
    by: Account | None = None,
) -> Account:
    """Create an account. `by` (an account that may manage users) is None only when the
    database has no account yet (the first account, made from the command line). With
    `password` None the account logs in only through OpenID Connect (its name is the e-mail or
    user name the provider gives, `dashboard.auth`)."""
    if role not in ROLES or role == "public":
        raise AccountError(
            f"unknown role {role!r}",
            hint="roles: " + ", ".join(r for r in ROLES if r != "public"),
        )
    if role == "operadora" and not operator_id:
        raise AccountError("an operadora account needs --operator", hint="e.g. --operator O1")
    if role != "operadora" and operator_id:
        raise AccountError("--operator is only for accounts of the role operadora")
    if not name or not name.strip() or len(name) > 100:
        raise AccountError("account name empty or too long (at most 100 characters)")
    if password is not None and len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(f"password too short: use at least {MIN_PASSWORD_CHARS} characters")
    if by is not None:
        authorize(by, MANAGE_USERS)
    try:
        _insert_account(db, name, role, password, operator_id, by)
    except sa.exc.IntegrityError as exc:  # created by someone else at the same moment
        raise AccountError(f"the account {name!r} already exists") from exc
    return Account(name, role, operator_id)


def _insert_account(
    db: CaseDB,
    name: str,
    role: str,
    password: str | None,
    operator_id: str | None,
    by: Account | None,
) -> None:
    with db.begin() as conn:
        exists = conn.execute(sa.select(ACCOUNTS.c.name).where(ACCOUNTS.c.name == name)).first()
        if exists:
            raise AccountError(f"the account {name!r} already exists")
        if by is None:
            n = conn.execute(sa.select(sa.func.count()).select_from(ACCOUNTS)).scalar()
            if n:
                raise AccountError(
                    "accounts exist already: say who creates this one with --by",
                    hint="a planning account (see `pontual users list`)",
                )
            if role != "planejamento":
                raise AccountError(
                    "the first account must be of the role planejamento (it creates the others)",
                    hint="pontual users add NAME --role planejamento",
                )
        conn.execute(
            ACCOUNTS.insert().values(
                name=name,
                role=role,
                operator_id=operator_id,
                password_hash=OIDC_NO_PASSWORD if password is None else _hasher.hash(password),
                is_active=True,
                created_at=now_utc(),
            )
        )
        detail = f"papel {role}" + (f", operadora {operator_id}" if operator_id else "")
        detail += ", só OpenID Connect" if password is None else ""
        record_audit(conn, by.name if by else SYSTEM_ACTOR, "user_added", name, detail)


def get_account(db: CaseDB, name: str) -> Account:
    """The active account `name` (AccountError when unknown)."""
    with db.read() as conn:
        row = conn.execute(
            sa.select(ACCOUNTS.c.name, ACCOUNTS.c.role, ACCOUNTS.c.operator_id).where(
                ACCOUNTS.c.name == name, ACCOUNTS.c.is_active.is_(True)
            )
        ).first()
    if row is None:
        raise AccountError(
            f"unknown account {name!r}", hint="create it with `pontual users add NAME --role ROLE`"
        )
    return Account(row.name, row.role, row.operator_id)


def authenticate(db: CaseDB, name: str, password: str) -> Account:
    """The account when `password` matches; every attempt is audited (login / login_failed)."""
    with db.begin() as conn:
        row = conn.execute(
            sa.select(ACCOUNTS).where(ACCOUNTS.c.name == name, ACCOUNTS.c.is_active.is_(True))
        ).first()
        ok = False
        if row is not None:
            try:
                ok = _hasher.verify(row.password_hash, password)
            except (VerificationError, InvalidHashError):
                ok = False
        record_audit(conn, name, "login" if ok else "login_failed", name, None)
        if ok and row is not None and _hasher.check_needs_rehash(row.password_hash):
            conn.execute(
                ACCOUNTS.update()
                .where(ACCOUNTS.c.name == name)
                .values(password_hash=_hasher.hash(password))
            )
    if not ok or row is None:
        # one message for an unknown name and a wrong password: no account enumeration
        raise AccountError("wrong name or password")
    return Account(row.name, row.role, row.operator_id)


def list_users(db: CaseDB) -> pl.DataFrame:
    """Accounts: name, role, operator_id, is_active, created_at (UTC). Never the hashes."""
    with db.read() as conn:
        rows = conn.execute(
            sa.select(
                ACCOUNTS.c.name,
                ACCOUNTS.c.role,
                ACCOUNTS.c.operator_id,
                ACCOUNTS.c.is_active,
                ACCOUNTS.c.created_at,
            ).order_by(ACCOUNTS.c.name)
        ).all()
    return pl.DataFrame(
        [tuple(r) for r in rows],
        schema={
            "name": pl.String,
            "role": pl.String,
            "operator_id": pl.String,
            "is_active": pl.Boolean,
            "created_at": pl.Datetime("us", "UTC"),
        },
        orient="row",
    )


def count_users(db: CaseDB) -> int:
    with db.read() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(ACCOUNTS)).scalar() or 0)


def record_login(db: CaseDB, account: Account, how: str) -> None:
    """Audit a login that did not go through `authenticate` (OpenID Connect: the provider
    checked the person; `how` names it)."""
    with db.begin() as conn:
        record_audit(conn, account.name, "login", account.name, how)
