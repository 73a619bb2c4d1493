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

from core.texts import N_
from core.texts import gettext as _
from dashboard.reports.operation import (
    attach_line_names,
    build_line_table,
    compute_line_ipk,
    compute_line_operation,
    compute_passengers_by_class,
    line_columns,
    read_operation_inputs,
)

FARE_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("paying", N_("Paying (full fare)"), ("full",)),
    ("student", N_("Students"), ("student",)),
    ("vale_transporte", N_("Transport voucher"), ("vale_transporte",)),
    ("exempt", N_("Exempt (elderly, PwD, free passes)"), ("elderly", "disabled", "exempt")),
    ("integration", N_("Transfers"), ("integration",)),
    ("other", N_("Other (payment forms)"), ("other",)),
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
            for g, _label, classes in FARE_GROUPS
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
    group_totals = {g: int(groups[f"n_{g}"].sum()) for g, _label, _classes in FARE_GROUPS}
    headlines = [
        Headline(_("Passengers carried"), total_pass, "integer"),
        *[Headline(_(label), group_totals[g], "integer") for g, label, _classes in FARE_GROUPS],
        Headline(_("Scheduled trips"), int(lines["n_programmed"].sum()), "integer"),
        Headline(_("Trips run"), int(lines["n_run"].sum()), "integer"),
        Headline(_("Km run"), total_km, "number"),
        Headline(
            _("System IPK (passengers/km)"),
            total_pass / total_km if total_km else None,
            "number",
            3,
        ),
    ]

    line_cols = (
        *line_columns(),
        Col("ipk", "IPK", "number", 3),
        Col("ipk_equivalent", _("Equivalent IPK"), "number", 3),
    )
    tables = [
        ReportTable("linhas", _("Passengers, trips, km and IPK by line"), lines, line_cols),
        ReportTable(
            "passageiros_por_classe",
            _("Passengers carried by fare class"),
            groups,
            (
                Col("route_id", _("Line"), "code"),
                *[Col(f"n_{g}", _(label), "integer") for g, label, _classes in FARE_GROUPS],
                Col("n_passengers", _("Total"), "integer"),
            ),
            note=_(
                "Exempt: the elderly, people with a disability and other free passes; "
                "transfers are boardings within the fare transfer window (BG art. 7-V)."
            ),
        ),
        ReportTable(
            "ipk_mensal",
            _("IPK table by line and month"),
            monthly,
            (
                Col("route_id", _("Line"), "code"),
                Col("month", _("Month"), "month"),
                Col("n_passengers", _("Passengers"), "integer"),
                Col("equivalent_passengers", _("Equivalent passengers"), "number"),
                Col("km_run", _("Km run"), "number"),
                Col("ipk", "IPK", "number", 3),
                Col("ipk_equivalent", _("Equivalent IPK"), "number", 3),
            ),
            note=_(
                "IPK = passengers ÷ km run; the equivalent IPK weighs each passenger by "
                "the share of the fare paid (CGS art. 7 §2, 15, 16)."
            ),
        ),
    ]
    sections = [
        Section(
            _("Passengers carried"),
            (
                _(
                    "Passengers counted by the electronic ticketing transactions (BG art. 26, "
                    "49), by line and fare class."
                ),
            ),
            ("passageiros_por_classe",),
            (
                Chart(
                    _("Passengers by line"),
                    "linhas",
                    "route_id",
                    ("n_passengers",),
                    "bar",
                    _("passengers (axis)"),
                ),
            ),
        ),
        Section(
            _("Km, trips and IPK"),
            (
                _(
                    "Trips run: they left and reached the terminals, on time, late or early, "
                    "without an approved justification; km run capped at each trip's "
                    "scheduled km (the same rule as the ICV)."
                ),
            ),
            ("linhas", "ipk_mensal"),
            (
                Chart(
                    _("IPK by line"),
                    "linhas",
                    "route_id",
                    ("ipk",),
                    "bar",
                    _("passengers/km (axis)"),
                ),
            ),
        ),
    ]
    inputs = read.hashed()
    if costs is not None:
        per_km = compute_maintenance_per_km(
            costs,
            attach_line_names(compute_line_operation(outcomes, by=("month",)), routes, scopes),
        )
        headlines.append(
            Headline(_("Maintenance costs (R$)"), float(costs["cost_brl"].sum()), "number", 2)
        )
        tables += [
            ReportTable(
                "custos_manutencao",
                _("Maintenance costs supplied by the operator"),
                costs,
                (
                    Col("operator_id", _("Operator"), "code"),
                    Col("month", _("Month"), "month"),
                    Col("item", _("Item")),
                    Col("cost_brl", _("Cost (R$)"), "number", 2),
                ),
            ),
            ReportTable(
                "custos_por_km",
                _("Maintenance cost per km run"),
                per_km,
                (
                    Col("operator_id", _("Operator"), "code"),
                    Col("month", _("Month"), "month"),
                    Col("cost_brl", _("Cost (R$)"), "number", 2),
                    Col("km_run", _("Km run"), "number"),
                    Col("cost_per_km_brl", _("Cost per km (R$/km)"), "number", 3),
                ),
            ),
        ]
        text = _("Values the operator supplied in the maintenance costs file.")
        maint_tables: tuple[str, ...] = ("custos_manutencao", "custos_por_km")
    else:
        text = _(
            "Maintenance costs not supplied: make the report with --maintenance FILE "
            "(operator_id,month,item,cost_brl)."
        )
        maint_tables = ()
    sections.append(Section(_("Maintenance costs"), (text,), maint_tables))

    part = build_cases_part(cases, profile, "semester", semester, 2, today or local_today(profile))
    headlines += part.headlines
    sections.append(part.section)
    tables += part.tables

    label = _("Semester {half} of {year}", half=n_half, year=year)
    return finish_report(
        kind="semester",
        title=_("Semester operations report"),
        subtitle=_(
            "{period} ({start} to {end}) — BG Lei 6.784/2021, Anexo I, item XLII",
            period=label,
            start=f"{start:%d/%m/%Y}",
            end=f"{end:%d/%m/%Y}",
        ),
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
