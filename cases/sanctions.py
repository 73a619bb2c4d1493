"""Sanctions and repeats of a judged case: the catalogue item, the sanctions by name and the fine
in URM (art. 63, 67), whether a case is a judged repeat (art. 65 §2) and the suspension count
that grounds a cassação (art. 72-I).

`CaseSanctions` is mixed into `cases.workflow.Workflow`: it reads the profile's infraction
catalogue (`self.profile`), its [procedure] (`self.proc`) and the `cases` table (`self.db`);
only cases judged procedente and not reversed on appeal count.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from analytics.indices.infractions import repeat_window_start
from cases.db import CASES, CaseDB
from cases.errors import CaseError
from cases.states import PROCEDENTE, PROVIDO
from core.profile import Infraction, Procedure, Profile


class CaseSanctions:
    """Sanctions, judged repeats and the suspension count, for `Workflow`."""

    db: CaseDB
    profile: Profile
    proc: Procedure

    def catalogue_item(self, group: str, item: str) -> Infraction:
        for it in self.profile.infractions.items:
            if it.group == group and it.item == item:
                return it
        raise CaseError(f"item {group}-{item} is not in the catalogue of profile {self.profile.id}")

    def sanctions_for(self, group: str, item: str, *, is_repeat: bool) -> tuple[list[str], float]:
        """Sanctions by name (art. 63, 67) and the fine in URM of a procedente case."""
        it = self.catalogue_item(group, item)
        penalty = it.penalty.lower()
        first = it.urm_first or 0.0
        if is_repeat:
            urm = (
                it.urm_repeat
                if it.urm_repeat is not None
                else first * self.profile.infractions.repeat_multiplier.value
            )
        else:
            urm = first
        names: list[str] = []
        if "advertência" in penalty and not is_repeat:
            names.append("advertência")  # first offence of group A: warning without fine (67-I)
            urm = 0.0
        elif urm > 0:
            names.append("multa")
        for word, name in (
            ("afastamento", "afastamento"),
            ("recolhimento", "recolhimento"),
            ("suspensão", "suspensão"),
            ("cassação", "cassação"),
        ):
            if word in penalty:
                names.append(name)
        if not names:
            names.append("advertência")
        return names, float(urm)

    def _is_judged_repeat(self, conn: Connection, row: Any) -> bool:
        """Whether the operator has a case of the same item judged procedente (and not
        reversed on appeal) for a fact in the window before this one (art. 65 §2)."""
        # calendar months, as the law counts them (BG art. 65 §2: "nos 06 meses")
        since = repeat_window_start(
            row.occurred_on, self.profile.infractions.repeat_window_months.value
        )
        n = conn.execute(
            sa.select(sa.func.count())
            .select_from(CASES)
            .where(
                CASES.c.case_id != row.case_id,
                CASES.c.operator_id == row.operator_id,
                CASES.c.group == row.group,
                CASES.c.item == row.item,
                CASES.c.verdict == PROCEDENTE,
                sa.or_(CASES.c.appeal_outcome.is_(None), CASES.c.appeal_outcome != PROVIDO),
                CASES.c.occurred_on >= since,
                CASES.c.occurred_on < row.occurred_on,
            )
        ).scalar()
        return bool(n)

    def count_suspensions(self, operator_id: str, as_of: date) -> int:
        """Suspensions applied to the operator (judged procedente, not reversed) in the months
        of art. 72-I before `as_of`; more than one is a ground for cassação."""
        months = self.proc.suspension_window_months.value
        since = _months_before(as_of, months)
        with self.db.read() as conn:
            n = conn.execute(
                sa.select(sa.func.count())
                .select_from(CASES)
                .where(
                    CASES.c.operator_id == operator_id,
                    CASES.c.verdict == PROCEDENTE,
                    sa.or_(CASES.c.appeal_outcome.is_(None), CASES.c.appeal_outcome != PROVIDO),
                    CASES.c.sanctions.like("%suspensão%"),
                    CASES.c.judged_on > since,
                    CASES.c.judged_on <= as_of,
                )
            ).scalar()
        return int(n or 0)


def _months_before(day: date, months: int) -> date:
    month0 = day.year * 12 + (day.month - 1) - months
    year, month = divmod(month0, 12)
    for d in (day.day, 30, 29, 28):
        try:
            return date(year, month + 1, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")
