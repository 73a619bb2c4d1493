"""The part of the monthly and semester reports about cases and deadlines: the infraction cases
of the period by state, each with the act pending and its due day (BG art. 68-69), and the due
days of the reports themselves (BG art. 62-VII; Anexo I XLII), late ones flagged.

Read from the case database (`cases.reporting`, `cases.report_dues`). Without one the cases
table is empty and says so; the report due days are still computed (none recorded delivered).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import polars as pl

from cases.db import CaseDB
from cases.report_dues import read_report_dues
from cases.reporting import (
    CASE_REPORT_SCHEMA,
    count_cases_by_state,
    read_period_cases,
)
from core.periods import Period
from core.profile import Profile
from core.texts import gettext as _
from dashboard.labels import label_states, label_texts
from dashboard.reports.model import Col, Headline, ReportTable, Section


def local_today(profile: Profile) -> date:
    """Today in the profile's time zone (the day deadlines are counted to)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return datetime.now(ZoneInfo(profile.general.timezone.value)).date()


@dataclass(frozen=True)
class CasesPart:
    headlines: tuple[Headline, ...]
    section: Section
    tables: tuple[ReportTable, ...]


def build_cases_part(
    db: CaseDB | None,
    profile: Profile,
    kind: str,
    period: Period,
    n_reports: int,
    today: date,
) -> CasesPart:
    """Headlines, section and tables 'casos_por_estado', 'casos' and 'prazos_relatorios' for
    the `kind` report of `period`; the dues cover this period's report and the `n_reports - 1`
    before it."""
    if db is not None:
        cases = read_period_cases(db, profile, period.start, period.end, today)
        note = None
    else:
        cases = pl.DataFrame(schema=CASE_REPORT_SCHEMA)
        note = _(
            "Case database not given: the infraction cases are not in this report "
            "(PONTUAL_CASES_DB or the .cases.sqlite file beside the store)."
        )
    earlier = [period]
    for _step in range(n_reports - 1):
        earlier.insert(0, earlier[0].previous())
    labels = [p.label for p in earlier]
    dues = read_report_dues(db, kind, labels, profile, today)
    by_state = count_cases_by_state(cases)
    headlines = (
        Headline(_("Infraction cases in the period"), cases.height, "integer"),
        Headline(_("Cases past their deadline"), int(cases["is_overdue"].sum()), "integer"),
        Headline(_("Reports delivered late or overdue"), int(dues["is_late"].sum()), "integer"),
    )
    tables = (
        ReportTable(
            "casos_por_estado",
            _("Infraction cases by state"),
            by_state.with_columns(label_states(by_state["state"])),
            (
                Col("state", _("State")),
                Col("n_cases", _("Cases"), "integer"),
                Col("n_overdue", _("Past the deadline"), "integer"),
            ),
            note=note,
        ),
        ReportTable(
            "casos",
            _("The period's infraction cases and their deadlines"),
            cases.with_columns(label_states(cases["state"]), label_texts(cases["pending"])),
            (
                Col("case_id", _("Case"), "code"),
                Col("state", _("State")),
                Col("operator_id", _("Operator"), "code"),
                Col("item", _("Item (Anexo I)"), "code"),
                Col("occurred_on", _("Date of the fact"), "date"),
                Col("auto_number", _("Notice"), "code"),
                Col("pending", _("Pending act")),
                Col("due_on", _("Deadline"), "date"),
                Col("days_late", _("Days late"), "integer"),
                Col("is_overdue", _("Overdue"), "bool"),
            ),
            note=note,
        ),
        ReportTable(
            "prazos_relatorios",
            _("Report delivery deadlines"),
            dues,
            (
                Col("report", _("Report")),
                Col("period", _("Period"), "code"),
                Col("due_on", _("Deadline"), "date"),
                Col("delivered_on", _("Delivered on"), "date"),
                Col("status", _("Status")),
                Col("days_late", _("Days late"), "integer"),
                Col("basis", _("Legal ground")),
            ),
        ),
    )
    section = Section(
        _("Infraction cases and deadlines"),
        (
            _(
                "Infraction cases whose fact happened in the period, by state, with the "
                "pending act and its deadline: the notice sent within 15 days (BG art. 68 "
                "§2), defence and appeal within 15 working days (art. 69, 69-III), "
                "inquiries and judgement within 90 days (art. 69-I). Working days leave "
                "out national, state and municipal holidays."
            ),
            _(
                "Deadlines of the operator's reports: the monthly management report "
                "within 30 working days after the month (BG art. 62-VII) and the semester "
                "one in July and December (Anexo I, XLII). A report is marked late when "
                "delivered after its deadline, or not delivered with its deadline past."
            ),
            _(
                "Status of the cases and deadlines on {day}: not part of the input hash, "
                "as it changes as the cases move on.",
                day=f"{today:%d/%m/%Y}",
            ),
        ),
        ("casos_por_estado", "casos", "prazos_relatorios"),
    )
    return CasesPart(headlines, section, tables)
