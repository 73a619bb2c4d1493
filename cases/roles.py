"""Roles and what each may read and do (issue #23, "Access by role").

The query layer calls `authorize(account, action, operator_id=...)` before every read or write
and `operator_scope(account)` / `filter_by_operator(...)` on what it reads, so an `operadora`
account sees only its operator's rows whatever page or URL asked.

Legal acts stay with their competent role: the auto is signed by a fiscal (BG art. 64, 68 §1-V),
the judgment and the decision on appeal by the authority (art. 64, 69); `planejamento` reads
everything and administers (accounts, audit, legal holds, discarding a suggestion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import polars as pl

from cases.errors import AccessDenied
from core.texts import N_, Labels

ROLES = ("planejamento", "fiscal", "autoridade", "conselho", "operadora", "public")

ROLE_LABELS = Labels(
    {
        "planejamento": N_("Planning (managing body)"),
        "fiscal": N_("Inspector (enforcement agent)"),
        "autoridade": N_("Transit and transport authority"),
        "conselho": N_("Council (renewal)"),
        "operadora": N_("Operator (role)"),
        "public": N_("Public (transparency)"),
    }
)
"""How each role is shown (in the chosen language); the stored role is its id (`ROLES`)."""

# Reads
READ_PUBLIC = "read_public"  # published aggregates (transparency page)
READ_INDICES = "read_indices"  # indicators, trips, vehicles, plates, draft grades
READ_SUGGESTIONS = "read_suggestions"  # suggested infractions
READ_CASES = "read_cases"  # cases in every state
READ_VERDICTS = "read_verdicts"  # judged and closed cases only
READ_DOSSIER = "read_dossier"  # annual renewal dossier
READ_AUDIT = "read_audit"
# Acts on cases (the workflow's transitions)
LAVRAR = "lavrar"
NOTIFICAR = "notificar"
DEFESA = "defesa"
JULGAR = "julgar"
RECURSO = "recurso"
ENCERRAR = "encerrar"
DESCARTAR = "descartar"
HOLD = "hold"  # legal hold of a case's evidence
# Administration
MANAGE_USERS = "manage_users"
EDIT_PROFILE = "edit_profile"

_READS_ALL = {READ_PUBLIC, READ_INDICES, READ_SUGGESTIONS, READ_CASES, READ_VERDICTS, READ_DOSSIER}

PERMISSIONS: dict[str, frozenset[str]] = {
    "planejamento": frozenset(
        {*_READS_ALL, READ_AUDIT, DESCARTAR, HOLD, MANAGE_USERS, EDIT_PROFILE}
    ),
    "fiscal": frozenset(
        {READ_PUBLIC, READ_INDICES, READ_SUGGESTIONS, READ_CASES, LAVRAR, NOTIFICAR, DESCARTAR}
    ),
    "autoridade": frozenset(
        {READ_PUBLIC, READ_INDICES, READ_SUGGESTIONS, READ_CASES, READ_VERDICTS, JULGAR, ENCERRAR}
    ),
    "conselho": frozenset({READ_PUBLIC, READ_VERDICTS, READ_DOSSIER}),
    # an operator reads and answers its own cases; filtered by operator_scope
    "operadora": frozenset({READ_PUBLIC, READ_INDICES, READ_CASES, READ_VERDICTS, DEFESA, RECURSO}),
    "public": frozenset({READ_PUBLIC}),
}


@dataclass(frozen=True)
class Account:
    """Who is asking: an account name, its role and (operadora only) its operator."""

    name: str
    role: str
    operator_id: str | None = None


PUBLIC = Account("público", "public")


def may(account: Account, action: str, *, operator_id: str | None = None) -> bool:
    """Whether `account` may do `action` (on data or a case of `operator_id`, when given)."""
    if action not in PERMISSIONS.get(account.role, frozenset()):
        return False
    return not (
        account.role == "operadora"
        and operator_id is not None
        and operator_id != account.operator_id
    )


def authorize(account: Account, action: str, *, operator_id: str | None = None) -> None:
    """Raise `AccessDenied` (exit 2) unless `account` may do `action`."""
    if may(account, action, operator_id=operator_id):
        return
    if action in PERMISSIONS.get(account.role, frozenset()):
        raise AccessDenied(
            f"the account {account.name!r} (operator {account.operator_id}) has no access to "
            f"data of operator {operator_id!r}",
            hint="an operator sees and answers only its own cases",
        )
    raise AccessDenied(
        f"the account {account.name!r} ({ROLE_LABELS.get(account.role, account.role)}) may not "
        f"do '{action}'",
        hint="ask an account of the competent role (see `pontual users list`)",
    )


def operator_scope(account: Account) -> str | None:
    """The operator an account's reads are limited to (None: every operator)."""
    return account.operator_id if account.role == "operadora" else None


Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def filter_by_operator(account: Account, frame: Frame, column: str = "operator_id") -> Frame:
    """`frame` limited to the rows `account` may read (an operadora: its operator's rows)."""
    scope = operator_scope(account)
    return frame if scope is None else frame.filter(pl.col(column) == scope)


def scope_sql(account: Account, action: str, columns: Sequence[str]) -> tuple[str, list[str]]:
    """The WHERE clause (and its parameters) the query layer adds to a read of a table with
    `columns` for `account`: '' for every operator, ``operator_id = ?`` for an operadora.
    Refused (`AccessDenied`) when the role may not read it, or when an operadora asks for a
    table that has no operator column (it could not be limited to its own rows)."""
    authorize(account, action)
    scope = operator_scope(account)
    if scope is None:
        return "", []
    if "operator_id" not in columns:
        raise AccessDenied(
            f"the account {account.name!r} (operadora) reads only tables with a column operator_id",
            hint="this table cannot be limited to the operator's data",
        )
    return '"operator_id" = ?', [scope]
