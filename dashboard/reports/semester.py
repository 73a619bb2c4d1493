"""Semester report (BG Anexo I XLII: sent to SEGIMU in July and December): passengers carried
by fare class (paying, exempt, vale-transporte, students...), km run, trips run, the IPK table
per line and month, and the maintenance costs the operator enters."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from core.periods import parse_semester
from core.profile import Profile
from core.store import Store
from dashboard.reports.assemble import finish_report
from dashboard.reports.cases_part import build_cases_part, local_today
from dashboard.reports.inputs import read_maintenance_costs
from dashboard.reports.model import Chart, Col, Headline, ReportData, ReportTable, Section

if TYPE_CHECKING:
    from cases.db import CaseDB

from dashboard.reports.operation import (
    LINE_COLUMNS,
    attach_line_names,
    build_line_table,
    compute_line_ipk,
    compute_line_operation,
    compute_passengers_by_class,
    read_operation_inputs,
)

FARE_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("paying", "Pagantes (inteira)", ("full",)),
    ("student", "Estudantes", ("student",)),
    ("vale_transporte", "Vale-transporte", ("vale_transporte",)),
    ("exempt", "Isentos (idosos, PcD, gratuidades)", ("elderly", "disabled", "exempt")),
    ("integration", "Integrações", ("integration",)),
    ("other", "Outros", ("other",)),
)
"""The law's groups of passengers (BG Anexo I XLII: 'pagantes, isentos, VT etc.') from the
fare classes of the taps."""


def compute_fare_groups(by_class: pl.DataFrame) -> pl.DataFrame:
    """Per line: n_<group> for each of `FARE_GROUPS` (sums of its classes' n_<class>) and
    n_passengers."""
    return by_class.select(
        "route_id",
        *[
            pl.sum_horizontal([pl.col(f"n_{c}") for c in classes]).cast(pl.Int64).alias(f"n_{g}")
            for g, _, classes in FARE_GROUPS
        ],
        "n_passengers",
    )


def compute_maintenance_per_km(costs: pl.DataFrame, operation: pl.DataFrame) -> pl.DataFrame:
    """Per operator and month: cost_brl (sum of the items), km_run of its lines and
    cost_per_km_brl (reais per km run; null without km)."""
    km = operation.group_by("operator_id", "month").agg(pl.col("km_run").sum())
    return (
        costs.group_by("operator_id", "month")
        .agg(pl.col("cost_brl").sum())
        .join(km, on=["operator_id", "month"], how="left")
        .with_columns(
            pl.when(pl.col("km_run") > 0)
            .then(pl.col("cost_brl") / pl.col("km_run"))
            .alias("cost_per_km_brl")
        )
        .sort("operator_id", "month")
    )


def build_semester_report(
    store: Store,
    half: str,
    profile: Profile,
    *,
    maintenance: str | Path | None = None,
    command: str | None = None,
    cases: CaseDB | None = None,
    today: date | None = None,
) -> ReportData:
    """The semester report of `half` ('2026-1' = January-June) from the store; with `cases`,
    the period's infraction cases and deadlines as of `today` (default: the local date)."""
    semester = parse_semester(half)
    year, n_half = semester.start.year, 1 if semester.start.month == 1 else 2
    start, end = semester.start, semester.end
    read = read_operation_inputs(store, semester, profile)
    outcomes, taps, routes, scopes = read.outcomes, read.taps, read.routes, read.scopes
    costs = read_maintenance_costs(maintenance) if maintenance else None
    if costs is not None:
        costs = costs.filter(pl.col("month").is_between(start, end))

    operation = compute_line_operation(outcomes)
    ipk = compute_line_ipk(taps, outcomes, scopes, profile)
    groups = compute_fare_groups(compute_passengers_by_class(taps))
    lines = build_line_table(operation, ipk.drop("km_run"), routes, scopes)
    monthly = compute_line_ipk(taps, outcomes, scopes, profile, by=("month",))

    total_km = float(lines["km_run"].sum())
    total_pass = int(groups["n_passengers"].sum())
    group_totals = {g: int(groups[f"n_{g}"].sum()) for g, _, _ in FARE_GROUPS}
    headlines = [
        Headline("Passageiros transportados", total_pass, "integer"),
        *[Headline(label, group_totals[g], "integer") for g, label, _ in FARE_GROUPS],
        Headline("Viagens programadas", int(lines["n_programmed"].sum()), "integer"),
        Headline("Viagens realizadas", int(lines["n_run"].sum()), "integer"),
        Headline("Km rodados", total_km, "number"),
        Headline(
            "IPK do sistema (passageiros/km)",
            total_pass / total_km if total_km else None,
            "number",
            3,
        ),
    ]

    line_cols = (
        *LINE_COLUMNS,
        Col("ipk", "IPK", "number", 3),
        Col("ipk_equivalent", "IPK equivalente", "number", 3),
    )
    tables = [
        ReportTable("linhas", "Passageiros, viagens, km e IPK por linha", lines, line_cols),
        ReportTable(
            "passageiros_por_classe",
            "Passageiros transportados por classe tarifária",
            groups,
            (
                Col("route_id", "Linha", "code"),
                *[Col(f"n_{g}", label, "integer") for g, label, _ in FARE_GROUPS],
                Col("n_passengers", "Total", "integer"),
            ),
            note="Isentos: idosos, pessoas com deficiência e demais gratuidades; integrações "
            "são embarques dentro da janela de integração tarifária (BG art. 7-V).",
        ),
        ReportTable(
            "ipk_mensal",
            "Tabela de IPK por linha e mês",
            monthly,
            (
                Col("route_id", "Linha", "code"),
                Col("month", "Mês", "month"),
                Col("n_passengers", "Passageiros", "integer"),
                Col("equivalent_passengers", "Passageiros equivalentes", "number"),
                Col("km_run", "Km rodados", "number"),
                Col("ipk", "IPK", "number", 3),
                Col("ipk_equivalent", "IPK equivalente", "number", 3),
            ),
            note="IPK = passageiros ÷ km rodados; IPK equivalente pondera cada passageiro pela "
            "fração da tarifa paga (CGS art. 7 §2, 15, 16).",
        ),
    ]
    sections = [
        Section(
            "Passageiros transportados",
            (
                "Passageiros contados pelas transações da bilhetagem eletrônica (BG art. 26, 49), "
                "por linha e classe tarifária.",
            ),
            ("passageiros_por_classe",),
            (
                Chart(
                    "Passageiros por linha",
                    "linhas",
                    "route_id",
                    ("n_passengers",),
                    "bar",
                    "passageiros",
                ),
            ),
        ),
        Section(
            "Quilometragem, viagens e IPK",
            (
                "Viagens realizadas: partiram e chegaram aos terminais, no horário, atrasadas ou "
                "adiantadas, sem justificativa aprovada; km rodados limitados ao programado de "
                "cada viagem (o mesmo critério do ICV).",
            ),
            ("linhas", "ipk_mensal"),
            (Chart("IPK por linha", "linhas", "route_id", ("ipk",), "bar", "passageiros/km"),),
        ),
    ]
    inputs = read.hashed()
    if costs is not None:
        per_km = compute_maintenance_per_km(
            costs,
            attach_line_names(compute_line_operation(outcomes, by=("month",)), routes, scopes),
        )
        headlines.append(
            Headline("Custos de manutenção (R$)", float(costs["cost_brl"].sum()), "number", 2)
        )
        tables += [
            ReportTable(
                "custos_manutencao",
                "Custos de manutenção informados pela operadora",
                costs,
                (
                    Col("operator_id", "Operadora", "code"),
                    Col("month", "Mês", "month"),
                    Col("item", "Item"),
                    Col("cost_brl", "Custo (R$)", "number", 2),
                ),
            ),
            ReportTable(
                "custos_por_km",
                "Custo de manutenção por km rodado",
                per_km,
                (
                    Col("operator_id", "Operadora", "code"),
                    Col("month", "Mês", "month"),
                    Col("cost_brl", "Custo (R$)", "number", 2),
                    Col("km_run", "Km rodados", "number"),
                    Col("cost_per_km_brl", "Custo por km (R$/km)", "number", 3),
                ),
            ),
        ]
        text = "Valores informados pela operadora no arquivo de custos de manutenção."
        maint_tables: tuple[str, ...] = ("custos_manutencao", "custos_por_km")
    else:
        text = (
            "Custos de manutenção não informados: gere o relatório com --maintenance ARQUIVO "
            "(operator_id,month,item,cost_brl)."
        )
        maint_tables = ()
    sections.append(Section("Custos de manutenção", (text,), maint_tables))

    part = build_cases_part(cases, profile, "semester", semester, 2, today or local_today(profile))
    headlines += part.headlines
    sections.append(part.section)
    tables += part.tables

    label = f"{n_half}º semestre de {year}"
    return finish_report(
        kind="semester",
        title="Relatório semestral da operação",
        subtitle=f"{label} ({start:%d/%m/%Y} a {end:%d/%m/%Y}) — BG Lei 6.784/2021, Anexo I, item XLII",
        file_stem=f"relatorio-semestral-{year}-{n_half}",
        headlines=headlines,
        sections=sections,
        tables=tables,
        inputs=inputs,
        files={"maintenance": maintenance},
        raw_days=(start, end),
        profile=profile,
        store=store,
        command=command
        or f"pontual --profile {profile.id} report semester --half {year}-{n_half}"
        + (f" --maintenance {Path(maintenance).name}" if maintenance else ""),
    )
