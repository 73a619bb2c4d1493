"""`pontual users add NAME --role R [--operator O]`, `pontual users list`, and `pontual audit`.

The password is read from a prompt (twice) or, with --password-stdin, from standard input;
never from the command line (it would show in `ps` and the shell history). The first account
of a case database is created without `--by`; every later one needs an account that may manage
users (planejamento). Heavy imports live inside the functions (verbs are imported at start-up).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.texts import gettext

if TYPE_CHECKING:
    from pontual.context import Context

ROLE_CHOICES = ("planejamento", "fiscal", "autoridade", "conselho", "operadora")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("users", help="local accounts (roles: planejamento, fiscal, ...)")
    verbs = p.add_subparsers(dest="users_verb", metavar="{add,list}")
    verbs.required = True
    add = verbs.add_parser("add", help="create an account (password by prompt or stdin)")
    add.add_argument("name", help="account name")
    add.add_argument("--role", required=True, choices=ROLE_CHOICES)
    add.add_argument("--operator", help="the account's operator (role operadora)")
    add.add_argument("--by", help="planning account that creates it (except the first account)")
    add.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    add.add_argument(
        "--oidc",
        action="store_true",
        help="account without a password, that signs in only through the OpenID Connect provider (name = e-mail)",
    )
    add.set_defaults(func=run_add)
    verbs.add_parser("list", help="list the accounts").set_defaults(func=run_list)

    a = sub.add_parser("audit", help="audit log (role planejamento)")
    a.add_argument("--by", required=True, help="planning account that consults it")
    a.add_argument("--limit", type=int, default=200, help="most recent lines (default 200)")
    a.set_defaults(func=run_audit)


def _read_password(from_stdin: bool) -> str:
    import getpass
    import sys

    from core.errors import InputError

    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise InputError(
            "no terminal to ask for the password",
            hint="use --password-stdin and send the password on stdin",
        )
    first = getpass.getpass(gettext("password: "))
    if getpass.getpass(gettext("repeat the password: ")) != first:
        raise InputError("the passwords do not match")
    return first


def run_add(args: argparse.Namespace, ctx: Context) -> int:
    from cases.accounts import add_user, count_users, get_account
    from cases.db import CaseDB
    from core.errors import ConfigError

    with CaseDB.open(ctx.settings.cases_db_url) as db:
        by = get_account(db, args.by) if args.by else None
        if by is None and count_users(db) > 0:  # before asking for a password in vain
            raise ConfigError(
                "accounts exist already: say who creates this one with --by",
                hint="a planning account (see `pontual users list`)",
            )
        password = None if args.oidc else _read_password(args.password_stdin)
        account = add_user(db, args.name, args.role, password, operator_id=args.operator, by=by)
    if account.operator_id:
        text = gettext(
            "account {name} created: role {role} of operator {operator}",
            name=repr(account.name),
            role=account.role,
            operator=account.operator_id,
        )
    else:
        text = gettext(
            "account {name} created: role {role}", name=repr(account.name), role=account.role
        )
    ctx.say(text)
    return 0


def run_list(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from cases.accounts import list_users
    from cases.db import CaseDB

    with CaseDB.open(ctx.settings.cases_db_url) as db:
        users = list_users(db)
    table = Table(
        gettext("account"),
        gettext("role"),
        gettext("operator"),
        gettext("active"),
        gettext("created at (UTC)"),
    )
    for row in users.iter_rows(named=True):
        table.add_row(
            row["name"],
            row["role"],
            row["operator_id"] or "",
            gettext("yes") if row["is_active"] else gettext("no"),
            f"{row['created_at']:%Y-%m-%d %H:%M}",
        )
    ctx.console.print(table)
    return 0


def run_audit(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from cases.accounts import get_account
    from cases.audit import read_audit
    from cases.db import CaseDB
    from core.errors import ConfigError

    if args.limit < 1:
        raise ConfigError("--limit must be 1 or more")
    with CaseDB.open(ctx.settings.cases_db_url) as db:
        log = read_audit(db, get_account(db, args.by), limit=args.limit)
    table = Table(
        gettext("when (UTC)"),
        gettext("who"),
        gettext("what"),
        gettext("target"),
        gettext("detail"),
    )
    for row in log.iter_rows(named=True):
        table.add_row(
            f"{row['at']:%Y-%m-%d %H:%M:%S}",
            row["actor"],
            row["action"],
            row["target"] or "",
            row["detail"] or "",
        )
    ctx.console.print(table)
    return 0
