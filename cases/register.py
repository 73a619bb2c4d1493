"""The register of cases: open a case for a suggested infraction, read one case (with its events
and evidence digest) or the list an account may see.

Reads and writes the `cases`, `case_events` and `case_evidence` tables of `cases.db`; returns
dicts (`get_case`), a polars frame of `CASE_LIST_SCHEMA` (`list_cases`) or a case id
(`open_case`). Access is checked against `cases.roles` on every read.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cases.audit import record_audit
from cases.db import CASE_EVENTS, CASE_EVIDENCE, CASES, CaseDB, now_utc
from cases.errors import CaseError
from cases.roles import (
    DESCARTAR,
    LAVRAR,
    READ_CASES,
    READ_VERDICTS,
    Account,
    authorize,
    may,
    operator_scope,
)
from cases.states import STATES, SUGERIDA, VERDICT_STATES


# -- reading -----------------------------------------------------------------------------------
def read_case_row(conn: Connection, case_id: int, *, lock: bool = False) -> Any:
    """The `cases` row of `case_id` (locked for update when `lock`); a CaseError when absent."""
    query = sa.select(CASES).where(CASES.c.case_id == case_id)
    if lock:
        query = query.with_for_update()  # PostgreSQL row lock; SQLite already holds the db lock
    row = conn.execute(query).first()
    if row is None:
        raise CaseError(f"case {case_id} does not exist", hint="see `pontual cases list`")
    return row


def get_case(db: CaseDB, account: Account, case_id: int) -> dict[str, Any]:
    """One case as a dict of its columns, plus `events` (list of dicts, oldest first)."""
    with db.read() as conn:
        row = read_case_row(conn, case_id)
        _authorize_read(account, row)
        events = conn.execute(
            sa.select(CASE_EVENTS)
            .where(CASE_EVENTS.c.case_id == case_id)
            .order_by(CASE_EVENTS.c.event_id)
        ).all()
        evidence = conn.execute(
            sa.select(CASE_EVIDENCE.c.sha256).where(CASE_EVIDENCE.c.case_id == case_id)
        ).scalar()
    out = _utc(dict(row._mapping))
    out["events"] = [_utc(dict(e._mapping)) for e in events]
    out["evidence_sha256"] = evidence
    return out


def read_evidence(db: CaseDB, account: Account, case_id: int) -> tuple[str, str]:
    """(package JSON, SHA-256 recorded at lavratura) of a case."""
    with db.read() as conn:
        row = read_case_row(conn, case_id)
        _authorize_read(account, row)
        got = conn.execute(
            sa.select(CASE_EVIDENCE.c.package, CASE_EVIDENCE.c.sha256).where(
                CASE_EVIDENCE.c.case_id == case_id
            )
        ).first()
    if got is None:
        raise CaseError(f"case {case_id} has no evidence package (not drawn up yet)")
    return str(got.package), str(got.sha256)


def _utc(row: dict[str, Any]) -> dict[str, Any]:
    """Instants as aware UTC datetimes (SQLite gives them back naive; they are stored in UTC)."""
    return {
        k: v.replace(tzinfo=UTC) if isinstance(v, datetime) and v.tzinfo is None else v
        for k, v in row.items()
    }


def _authorize_read(account: Account, row: Any) -> None:
    if may(account, READ_CASES, operator_id=row.operator_id):
        return
    if row.state in VERDICT_STATES:
        authorize(account, READ_VERDICTS, operator_id=row.operator_id)
        return
    authorize(account, READ_CASES, operator_id=row.operator_id)


CASE_LIST_SCHEMA = {
    "case_id": pl.Int64,
    "state": pl.String,
    "operator_id": pl.String,
    "group": pl.String,
    "item": pl.String,
    "occurred_on": pl.Date,
    "vehicle_id": pl.String,
    "auto_number": pl.String,
    "verdict": pl.String,
    "sanctions": pl.String,
    "sanction_authority": pl.String,
    "urm": pl.Float64,
    "is_repeat": pl.Boolean,
    "is_legal_hold": pl.Boolean,
    "infraction_key": pl.String,
}


def list_cases(db: CaseDB, account: Account, *, state: str | None = None) -> pl.DataFrame:
    """The cases `account` may read: an operadora its operator's, conselho judged ones only.

    Columns: `CASE_LIST_SCHEMA` (sanctions by name, comma-separated; urm applied, doubled on a
    judged repeat; sanction_authority the competent authority of art. 64)."""
    query = sa.select(*(CASES.c[c] for c in CASE_LIST_SCHEMA)).order_by(CASES.c.case_id)
    if may(account, READ_CASES):
        scope = operator_scope(account)
        if scope is not None:
            query = query.where(CASES.c.operator_id == scope)
    else:
        authorize(account, READ_VERDICTS)
        query = query.where(CASES.c.state.in_(VERDICT_STATES))
    if state is not None:
        if state not in STATES:
            raise CaseError(f"unknown state {state!r}", hint="states: " + ", ".join(STATES))
        query = query.where(CASES.c.state == state)
    with db.read() as conn:
        rows = conn.execute(query).all()
    return pl.DataFrame([tuple(r) for r in rows], schema=CASE_LIST_SCHEMA, orient="row")


# -- opening -----------------------------------------------------------------------------------
def open_case(db: CaseDB, suggestion: Mapping[str, Any], by: Account) -> int:
    """A case in state `sugerida` for a row of `suggested_infractions` (its id; the existing
    case's id when the suggestion already has one). Opened by whoever may lavrar or discard it."""
    if not may(by, DESCARTAR, operator_id=suggestion["operator_id"]):
        authorize(by, LAVRAR, operator_id=suggestion["operator_id"])
    key = suggestion["infraction_key"]
    try:
        return _insert_case(db, suggestion, key, by)
    except sa.exc.IntegrityError:  # opened by someone else at the same moment
        with db.read() as conn:
            got = conn.execute(
                sa.select(CASES.c.case_id).where(CASES.c.infraction_key == key)
            ).scalar()
        if got is None:
            raise
        return int(got)


def _insert_case(db: CaseDB, suggestion: Mapping[str, Any], key: str, by: Account) -> int:
    with db.begin() as conn:
        got = conn.execute(sa.select(CASES.c.case_id).where(CASES.c.infraction_key == key)).scalar()
        if got is not None:
            return int(got)
        now = now_utc()
        result = conn.execute(
            CASES.insert().values(
                infraction_key=key,
                state=SUGERIDA,
                row_version=1,
                operator_id=suggestion["operator_id"],
                group=suggestion["group"],
                item=suggestion["item"],
                description=suggestion["description"],
                article=suggestion.get("source") or "",
                route_id=suggestion.get("route_id"),
                vehicle_id=suggestion.get("vehicle_id"),
                occurred_on=suggestion["occurred_on"],
                fact=suggestion["fact"],
                suggested_urm=suggestion.get("urm"),
                is_legal_hold=False,
                created_at=now,
                updated_at=now,
            )
        )
        pk = result.inserted_primary_key
        assert pk is not None
        case_id = int(pk[0])
        record_audit(conn, by.name, "case_opened", f"caso {case_id}", key)
    return case_id
