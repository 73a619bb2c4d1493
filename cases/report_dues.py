"""When the operator's reports are due, when they were delivered, and which are late.

- Monthly management report (BG art. 62-VII): "nunca superior a 30 dias úteis" — due on the
  N-th business day after the month's last day (`procedure.monthly_report_business_days`;
  national, state and municipal holidays of the profile's calendar).
- Semester report (BG Anexo I XLII, "semestralmente (julho e dezembro)"): the first half's by
  the last day of July, the second half's by the last day of December
  (`procedure.semester_report_months`).

Deliveries are recorded in the case database (`report_deliveries`, one per kind and period:
the day SEGIMU received it). A report is late when delivered after its due day, or not
delivered and its due day has passed. Not delivering on time is itself an item of the
catalogue (BG Anexo I; the legal audit's d1), which the fiscal may raise.
"""

from __future__ import annotations

import calendar as month_calendar
from datetime import date

import polars as pl
import sqlalchemy as sa

from cases.audit import record_audit
from cases.calendar import BusinessCalendar, procedure_of
from cases.db import REPORT_DELIVERIES, CaseDB, now_utc
from cases.errors import CaseError
from core.periods import Period, parse_period
from core.profile import Profile
from core.texts import N_, Labels, gettext

REPORT_KINDS = Labels(
    {"monthly": N_("Monthly management report"), "semester": N_("Semester report")}
)
"""Each kind of report by its name (in the chosen language).

The report names, statuses and bases of `read_report_dues` are shown, never stored: they come
from the catalogue where they are made (docs/adr/0106)."""

DUES_SCHEMA = pl.Schema(
    {
        "kind": pl.String(),
        "period": pl.String(),
        "report": pl.String(),
        "due_on": pl.Date(),
        "delivered_on": pl.Date(),
        "days_late": pl.Int64(),
        "is_late": pl.Boolean(),
        "status": pl.String(),
        "basis": pl.String(),
    }
)


def _month_end(year: int, month: int) -> date:
    return date(year, month, month_calendar.monthrange(year, month)[1])


def report_due_on(kind: str, period: Period, profile: Profile) -> tuple[date, str]:
    """(due day, the article it follows) of the `kind` report of `period`."""
    proc = procedure_of(profile)
    if kind == "monthly":
        if proc.monthly_report_business_days is None:
            raise CaseError(
                f"profile {profile.id} sets no deadline for the monthly report",
                hint="add procedure.monthly_report_business_days to the profile",
            )
        n = proc.monthly_report_business_days.value
        cal = BusinessCalendar.from_profile(profile)
        return cal.add_business_days(period.end, n), gettext(
            "{n} working days after the end of the month ({citation})",
            n=n,
            citation=proc.monthly_report_business_days.citation,
        )
    if kind == "semester":
        if proc.semester_report_months is None:
            raise CaseError(
                f"profile {profile.id} sets no month for the semester report",
                hint="add procedure.semester_report_months to the profile",
            )
        half = "1" if period.start.month <= 6 else "2"
        month = proc.semester_report_months.value[half]
        return _month_end(period.start.year, month), gettext(
            "by the end of {month} ({citation})",
            month=f"{month:02d}/{period.start.year}",
            citation=proc.semester_report_months.citation,
        )
    raise CaseError(f"unknown report {kind!r}", hint="reports: monthly, semester")


def record_report_delivery(
    db: CaseDB, kind: str, period: str, delivered_on: date, by: str, input_hash: str | None = None
) -> None:
    """Record (or correct) the day a report reached SEGIMU; audited as a profile-level act."""
    if kind not in REPORT_KINDS:
        raise CaseError(f"unknown report {kind!r}", hint="reports: monthly, semester")
    with db.begin() as conn:
        conn.execute(
            REPORT_DELIVERIES.delete().where(
                (REPORT_DELIVERIES.c.kind == kind) & (REPORT_DELIVERIES.c.period == period)
            )
        )
        conn.execute(
            REPORT_DELIVERIES.insert().values(
                kind=kind,
                period=period,
                delivered_on=delivered_on,
                recorded_by=by,
                recorded_at=now_utc(),
                input_hash=input_hash,
            )
        )
        record_audit(conn, by, "report_delivery", f"{kind} {period}", f"entregue em {delivered_on}")


def read_report_dues(
    db: CaseDB | None, kind: str, periods: list[str], profile: Profile, today: date
) -> pl.DataFrame:
    """One row per report of `kind` for each period label (DUES_SCHEMA): report (its name),
    due_on, delivered_on (null when not recorded), days_late (calendar days after due_on:
    delivery or today; 0 when on time), is_late, status (pt-BR 'entregue no prazo', 'entregue
    com atraso', 'atrasado — não entregue', 'no prazo — não entregue'), basis (the article);
    the texts in the chosen language.
    Without a case database nothing is recorded as delivered."""
    delivered: dict[str, date] = {}
    if db is not None:
        with db.read() as conn:
            rows = conn.execute(
                sa.select(REPORT_DELIVERIES.c.period, REPORT_DELIVERIES.c.delivered_on).where(
                    (REPORT_DELIVERIES.c.kind == kind) & REPORT_DELIVERIES.c.period.in_(periods)
                )
            ).all()
        delivered = {r.period: r.delivered_on for r in rows}
    out = []
    for label in periods:  # a handful of periods per report
        due, basis = report_due_on(kind, parse_period(label), profile)
        got = delivered.get(label)
        until = got if got is not None else today
        late = max(0, (until - due).days)
        if got is not None:
            status = gettext("delivered late") if late else gettext("delivered on time")
        else:
            status = gettext("late — not delivered") if late else gettext("on time — not delivered")
        out.append((kind, label, REPORT_KINDS[kind], due, got, late, late > 0, status, basis))
    return pl.DataFrame(out, schema=DUES_SCHEMA, orient="row")
