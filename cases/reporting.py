"""The cases of a period as the monthly and semester reports list them: each case with its
state, the act pending, who must do it and by when (BG art. 68 §2, 69, 69-I, 69-III), and the
count per state.

Reports are the administration's documents: they read every case of the period (no operator
scope), straight from the case database.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl
import sqlalchemy as sa

from cases.db import CASES, CaseDB
from cases.deadlines import JUDGE_ACT
from cases.states import (
    EM_DEFESA,
    EM_RECURSO,
    JULGADA,
    LAVRADA,
    NOTIFICADA,
    PROCEDENTE,
    STATES,
    SUGERIDA,
)
from cases.workflow import Workflow
from core.profile import Profile
from core.texts import N_

CASE_REPORT_SCHEMA = pl.Schema(
    {
        "case_id": pl.Int64(),
        "state": pl.String(),
        "operator_id": pl.String(),
        "item": pl.String(),
        "occurred_on": pl.Date(),
        "auto_number": pl.String(),
        "pending": pl.String(),
        "due_on": pl.Date(),
        "days_late": pl.Int64(),
        "is_overdue": pl.Boolean(),
    }
)

STATE_COUNT_SCHEMA = pl.Schema(
    {"state": pl.String(), "n_cases": pl.Int64(), "n_overdue": pl.Int64()}
)


PENDING_LABELS = (
    N_("notify the operator (art. 68 §2)"),
    N_("the operator's defence (art. 69)"),
    JUDGE_ACT,
    N_("the operator's appeal (art. 69-III)"),
    N_("close (the pending act)"),
    N_("draw up or dismiss"),
    N_("judge the appeal"),
)
"""The acts a case of a report waits for (`read_period_cases`' `pending` column): English ids,
shown with `gettext` (`dashboard.reports.cases_part`)."""
(_NOTIFY, _DEFENCE, _JUDGE, _APPEAL, _CLOSE, _DRAW_UP, _JUDGE_APPEAL) = PENDING_LABELS


def _pending(wf: Workflow, case: dict[str, Any]) -> tuple[str | None, date | None]:
    """The act a case waits for and its due day (None when the law sets none)."""
    state = case["state"]
    if state == LAVRADA:
        return _NOTIFY, wf.auto_due(case["lavrada_on"])
    if state == NOTIFICADA:
        return _DEFENCE, wf.defence_due(case["notified_on"])
    if state == EM_DEFESA:
        return _JUDGE, wf.judgment_due(case["defence_on"])
    if state == JULGADA and case.get("verdict") == PROCEDENTE:
        return _APPEAL, wf.appeal_due(case["judged_on"])
    if state == JULGADA:
        return _CLOSE, None
    if state == SUGERIDA:
        return _DRAW_UP, None
    if state == EM_RECURSO:
        return _JUDGE_APPEAL, None
    return None, None  # encerrada, descartada


def read_period_cases(
    db: CaseDB, profile: Profile, start: date, end: date, today: date
) -> pl.DataFrame:
    """Cases whose fact occurred from `start` to `end` (CASE_REPORT_SCHEMA), ordered by state
    (in the workflow's order) and case: pending (the act awaited, an English id of
    `PENDING_LABELS`), due_on, days_late (calendar
    days past due_on at `today`, 0 when not late), is_overdue. A case waiting for the
    operator (defence, appeal) past its day is overdue for the operator: the authority may go
    on without it."""
    wf = Workflow(db, profile)
    cols = [
        "case_id",
        "state",
        "operator_id",
        "item",
        "occurred_on",
        "auto_number",
        "verdict",
        "lavrada_on",
        "notified_on",
        "defence_on",
        "judged_on",
    ]
    with db.read() as conn:
        rows = conn.execute(
            sa.select(*(CASES.c[c] for c in cols))
            .where(CASES.c.occurred_on.between(start, end))
            .order_by(CASES.c.case_id)
        ).all()
    out = []
    for r in rows:  # the cases of one month or semester: a few hundred at most
        case = dict(zip(cols, r, strict=True))
        pending, due = _pending(wf, case)
        late = max(0, (today - due).days) if due is not None else 0
        out.append(
            (
                case["case_id"],
                case["state"],
                case["operator_id"],
                case["item"],
                case["occurred_on"],
                case["auto_number"],
                pending,
                due,
                late,
                late > 0,
            )
        )
    frame = pl.DataFrame(out, schema=CASE_REPORT_SCHEMA, orient="row")
    order = {s: i for i, s in enumerate(STATES)}
    return frame.sort(pl.col("state").replace_strict(order, default=len(order)), "case_id")


def count_cases_by_state(cases: pl.DataFrame) -> pl.DataFrame:
    """n_cases and n_overdue per state (STATE_COUNT_SCHEMA), every state listed, in the
    workflow's order."""
    counts = cases.group_by("state").agg(
        pl.len().cast(pl.Int64).alias("n_cases"),
        pl.col("is_overdue").sum().cast(pl.Int64).alias("n_overdue"),
    )
    return (
        pl.DataFrame({"state": list(STATES)}, schema={"state": pl.String()})
        .join(counts, on="state", how="left")
        .with_columns(pl.col("n_cases").fill_null(0), pl.col("n_overdue").fill_null(0))
        .select(list(STATE_COUNT_SCHEMA))
    )
