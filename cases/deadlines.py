"""The deadlines of a case (BG art. 68 §2, 69, 69-I, 69-III) and the cases whose next act is late.

`CaseDeadlines` is mixed into `cases.workflow.Workflow`: it reads the profile's [procedure]
(`self.proc`), the business calendar (`self.calendar`) and, for `overdue`, the case database
(`self.db`); it returns due dates and a frame of overdue cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

import polars as pl
import sqlalchemy as sa

from cases.calendar import BusinessCalendar
from cases.db import CASES, CaseDB
from cases.register import list_cases
from cases.roles import Account
from cases.states import EM_DEFESA, LAVRADA, PROCEDENTE
from core.profile import Procedure
from core.texts import N_

SENDING_DEADLINE = N_("sending of the notice (art. 68 §2)")
DEFENCE_DEADLINE = N_("defence (art. 69)")
JUDGMENT_DEADLINE = N_("inquiries and judgement (art. 69-I)")
APPEAL_DEADLINE = N_("appeal (art. 69-III)")
DEADLINE_LABELS = (SENDING_DEADLINE, DEFENCE_DEADLINE, JUDGMENT_DEADLINE, APPEAL_DEADLINE)
"""The deadlines of a case (`CaseDeadlines.deadlines`' keys): English ids, shown with
`gettext` (pt-BR: "remessa do auto (art. 68 §2)", ...)."""

NOTIFY_ACT = N_("notify (art. 68 §2)")
JUDGE_ACT = N_("judge (art. 69-I)")
PENDING_ACTS = (NOTIFY_ACT, JUDGE_ACT)
"""The late acts `CaseDeadlines.overdue` names (its `pending` column): English ids, shown with
`gettext`."""


class CaseDeadlines:
    """Due dates of a case and the overdue cases, for `Workflow`."""

    db: CaseDB
    proc: Procedure
    calendar: BusinessCalendar

    def auto_due(self, lavrada_on: date) -> date:
        return lavrada_on + timedelta(days=self.proc.auto_send_days.value)

    def defence_due(self, notified_on: date) -> date:
        return self.calendar.add_business_days(notified_on, self.proc.defence_business_days.value)

    def judgment_due(self, defence_on: date) -> date:
        return defence_on + timedelta(days=self.proc.diligence_days.value)

    def appeal_due(self, judged_on: date) -> date:
        return self.calendar.add_business_days(judged_on, self.proc.appeal_business_days.value)

    def deadlines(self, case: Mapping[str, Any]) -> dict[str, date]:
        """Due dates that apply to a case so far (auto, defesa, julgamento, recurso), by their
        English label (`DEADLINE_LABELS`: catalogue ids, translated where shown)."""
        out: dict[str, date] = {}
        if case.get("lavrada_on"):
            out[SENDING_DEADLINE] = self.auto_due(case["lavrada_on"])
        if case.get("notified_on"):
            out[DEFENCE_DEADLINE] = self.defence_due(case["notified_on"])
        if case.get("defence_on"):
            out[JUDGMENT_DEADLINE] = self.judgment_due(case["defence_on"])
        if case.get("judged_on") and case.get("verdict") == PROCEDENTE:
            out[APPEAL_DEADLINE] = self.appeal_due(case["judged_on"])
        return out

    def overdue(self, account: Account, today: date) -> pl.DataFrame:
        """Cases whose next act is late: case_id, state, operator_id, pending (the act due: an
        English catalogue id of `PENDING_ACTS`, translated where shown), due_on, days_late
        (calendar days after due_on)."""
        cases = list_cases(self.db, account)
        with self.db.read() as conn:
            rows = conn.execute(
                sa.select(
                    CASES.c.case_id,
                    CASES.c.state,
                    CASES.c.operator_id,
                    CASES.c.lavrada_on,
                    CASES.c.defence_on,
                ).where(
                    CASES.c.state.in_((LAVRADA, EM_DEFESA)),
                    CASES.c.case_id.in_(cases["case_id"].to_list()),
                )
            ).all()
        out = []
        for (
            r
        ) in rows:  # open cases awaiting an act of the administration: a handful, not a hot path
            if r.state == LAVRADA:
                pending, due = NOTIFY_ACT, self.auto_due(r.lavrada_on)
            else:
                pending, due = JUDGE_ACT, self.judgment_due(r.defence_on)
            if today > due:
                out.append((r.case_id, r.state, r.operator_id, pending, due, (today - due).days))
        return pl.DataFrame(
            out,
            schema={
                "case_id": pl.Int64,
                "state": pl.String,
                "operator_id": pl.String,
                "pending": pl.String,
                "due_on": pl.Date,
                "days_late": pl.Int64,
            },
            orient="row",
        )
