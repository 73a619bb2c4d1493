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
        note = (
            "Base de casos não informada: os casos de infração não constam deste relatório "
            "(PONTUAL_CASES_DB ou o arquivo .cases.sqlite ao lado do banco)."
        )
    earlier = [period]
    for _ in range(n_reports - 1):
        earlier.insert(0, earlier[0].previous())
    labels = [p.label for p in earlier]
    dues = read_report_dues(db, kind, labels, profile, today)
    by_state = count_cases_by_state(cases)
    headlines = (
        Headline("Casos de infração no período", cases.height, "integer"),
        Headline("Casos com prazo vencido", int(cases["is_overdue"].sum()), "integer"),
        Headline(
            "Relatórios entregues com atraso ou em atraso", int(dues["is_late"].sum()), "integer"
        ),
    )
    tables = (
        ReportTable(
            "casos_por_estado",
            "Casos de infração por estado",
            by_state,
            (
                Col("state", "Estado"),
                Col("n_cases", "Casos", "integer"),
                Col("n_overdue", "Com prazo vencido", "integer"),
            ),
            note=note,
        ),
        ReportTable(
            "casos",
            "Casos de infração do período e seus prazos",
            cases,
            (
                Col("case_id", "Caso", "code"),
                Col("state", "Estado"),
                Col("operator_id", "Operadora", "code"),
                Col("item", "Item (Anexo I)", "code"),
                Col("occurred_on", "Data do fato", "date"),
                Col("auto_number", "Auto", "code"),
                Col("pending", "Ato pendente"),
                Col("due_on", "Prazo", "date"),
                Col("days_late", "Dias de atraso", "integer"),
                Col("is_overdue", "Vencido", "bool"),
            ),
            note=note,
        ),
        ReportTable(
            "prazos_relatorios",
            "Prazos de entrega dos relatórios",
            dues,
            (
                Col("report", "Relatório"),
                Col("period", "Período", "code"),
                Col("due_on", "Prazo", "date"),
                Col("delivered_on", "Entregue em", "date"),
                Col("status", "Situação"),
                Col("days_late", "Dias de atraso", "integer"),
                Col("basis", "Fundamento"),
            ),
        ),
    )
    section = Section(
        "Casos de infração e prazos",
        (
            "Casos de infração cujo fato ocorreu no período, por estado, com o ato pendente e "
            "o seu prazo: remessa do auto em 15 dias (BG art. 68 §2), defesa e recurso em 15 "
            "dias úteis (art. 69, 69-III), diligências e julgamento em 90 dias (art. 69-I). "
            "Dias úteis descontam feriados nacionais, estaduais e municipais.",
            "Prazos dos relatórios da operadora: o relatório gerencial mensal em até 30 dias "
            "úteis após o mês (BG art. 62-VII) e o semestral em julho e dezembro (Anexo I, "
            "XLII). Um relatório é marcado em atraso quando entregue depois do prazo, ou não "
            "entregue com o prazo vencido.",
            f"Situação dos casos e dos prazos em {today:%d/%m/%Y}: não faz parte do hash das "
            "entradas, pois muda com o andamento dos casos.",
        ),
        ("casos_por_estado", "casos", "prazos_relatorios"),
    )
    return CasesPart(headlines, section, tables)
