"""The audit log: who did what, when (logins, dossier and table downloads, case transitions,
profile changes, account changes, report deliveries). Written in the same transaction as the act it records; read only
by `planejamento` (`pontual audit`)."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cases.db import AUDIT_LOG, CaseDB, now_utc
from cases.roles import READ_AUDIT, Account, authorize

AUDIT_ACTIONS = (
    "login",
    "login_failed",
    "access_denied",
    "user_added",
    "dossier_download",
    "table_download",
    "case_opened",
    "case_transition",
    "legal_hold",
    "profile_change",
    "evidence_recorded",
    "report_delivery",
)


def record_audit(
    conn: Connection, actor: str, action: str, target: str | None = None, detail: str | None = None
) -> None:
    """Append one audit row inside the caller's transaction."""
    if action not in AUDIT_ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    conn.execute(
        AUDIT_LOG.insert().values(
            at=now_utc(), actor=actor, action=action, target=target, detail=detail
        )
    )


def audit(
    db: CaseDB, actor: str, action: str, target: str | None = None, detail: str | None = None
) -> None:
    """Record an act done outside the case database (e.g. a dossier download)."""
    with db.begin() as conn:
        record_audit(conn, actor, action, target, detail)


def read_audit(
    db: CaseDB, account: Account, *, since: datetime | None = None, limit: int = 200
) -> pl.DataFrame:
    """The latest audit rows, newest first: at (UTC), actor, action, target, detail."""
    authorize(account, READ_AUDIT)
    query = sa.select(
        AUDIT_LOG.c.at,
        AUDIT_LOG.c.actor,
        AUDIT_LOG.c.action,
        AUDIT_LOG.c.target,
        AUDIT_LOG.c.detail,
    ).order_by(AUDIT_LOG.c.audit_id.desc())
    if since is not None:
        query = query.where(AUDIT_LOG.c.at >= since)
    with db.read() as conn:
        rows = conn.execute(query.limit(limit)).all()
    return pl.DataFrame(
        [tuple(r) for r in rows],
        schema={
            "at": pl.Datetime("us", "UTC"),
            "actor": pl.String,
            "action": pl.String,
            "target": pl.String,
            "detail": pl.String,
        },
        orient="row",
    )
