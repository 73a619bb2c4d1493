"""Monthly operating report (BG art. 62-VII): for each line, passengers carried by payment
form, the km run, trips programmed and run, and the drivers and inspectors involved in the
operation (entered by the operator)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from core.errors import ConfigError
from core.periods import parse_period
from core.profile import Profile
from core.store import Store
from core.tables.observed import FARE_CLASSES
from dashboard.format import to_period
from dashboard.labels import FARE_CLASS_LABELS
from dashboard.queries.accuracy import compute_accuracy_summary, read_prediction_accuracy
from dashboard.reports.assemble import finish_report
from dashboard.reports.cases_part import build_cases_part, local_today
from dashboard.reports.inputs import read_staff
from dashboard.reports.model import Chart, Col, Headline, ReportData, ReportTable, Section

if TYPE_CHECKING:
    from cases.db import CaseDB

from dashboard.reports.operation import (
    LINE_COLUMNS,
    build_line_table,
    compute_line_operation,
    compute_passengers_by_class,
    read_operation_inputs,
)


def build_monthly_report(
    store: Store,
    month: str,
    profile: Profile,
    *,
    staff: str | Path | None = None,
    command: str | None = None,
    cases: CaseDB | None = None,
    today: date | None = None,
) -> ReportData:
    """The monthly operating report of `month` ('2026-03') from the store; with `cases`, the
    period's infraction cases and deadlines as of `today` (default: the local date)."""
    period = parse_period(month, where="--month")
    if period.kind != "month":
        raise ConfigError(
            f"invalid month {month!r}: expected YYYY-MM",
            where="--month",
            hint="e.g. --month 2026-03",
        )
    start, end = period.start, period.end
    inputs = read_operation_inputs(store, period, profile)
    people = read_staff(staff) if staff else None

    by_form = compute_passengers_by_class(inputs.taps)
    operation = compute_line_operation(inputs.outcomes)
    if people is not None:
        people = people.filter(pl.col("month") == start)
        operation = operation.join(
            people.select("route_id", "n_drivers", "n_inspectors"),
            on="route_id",
            how="full",
            coalesce=True,
        )
    else:
        operation = operation.with_columns(
            pl.lit(None, dtype=pl.Int64).alias("n_drivers"),
            pl.lit(None, dtype=pl.Int64).alias("n_inspectors"),
        )
    operation = build_line_table(
        operation, by_form.select("route_id", "n_passengers"), inputs.routes, inputs.scopes
    )

    forms = [c for c in FARE_CLASSES if int(by_form[f"n_{c}"].sum()) > 0] or ["full"]
    total_km = float(operation["km_run"].sum())
    headlines = [
        Headline("Passageiros transportados", int(by_form["n_passengers"].sum()), "integer"),
        *[Headline(FARE_CLASS_LABELS[c], int(by_form[f"n_{c}"].sum()), "integer") for c in forms],
        Headline("Km rodados", total_km, "number"),
        Headline("Viagens programadas", int(operation["n_programmed"].sum()), "integer"),
        Headline("Viagens realizadas", int(operation["n_run"].sum()), "integer"),
    ]
    if people is not None:
        headlines += [
            Headline("Motoristas", int(operation["n_drivers"].fill_null(0).sum()), "integer"),
            Headline("Fiscais", int(operation["n_inspectors"].fill_null(0).sum()), "integer"),
        ]
    tables = [
        ReportTable(
            "passageiros_por_forma",
            "Passageiros transportados por forma de pagamento",
            by_form,
            (
                Col("route_id", "Linha", "code"),
                *[Col(f"n_{c}", FARE_CLASS_LABELS[c], "integer") for c in FARE_CLASSES],
                Col("n_passengers", "Total", "integer"),
            ),
        ),
        ReportTable(
            "operacao_por_linha",
            "Rodagem, viagens e pessoal por linha",
            operation,
            (
                *LINE_COLUMNS,
                Col("n_drivers", "Motoristas", "integer"),
                Col("n_inspectors", "Fiscais", "integer"),
            ),
            note=None
            if people is not None
            else "Motoristas e fiscais não informados: gere o relatório com --staff ARQUIVO "
            "(route_id,month,n_drivers,n_inspectors).",
        ),
    ]
    sections = [
        Section(
            "Passageiros por forma de pagamento",
            (
                "Transações da bilhetagem eletrônica do mês (BG art. 26, 49), estratificadas pela "
                "forma de pagamento, por linha.",
            ),
            ("passageiros_por_forma",),
        ),
        Section(
            "Rodagem, viagens e pessoal",
            (
                "Viagens realizadas: partiram e chegaram aos terminais, sem justificativa "
                "aprovada; km rodados limitados ao programado de cada viagem. Motoristas e "
                "fiscais conforme informado pela operadora.",
            ),
            ("operacao_por_linha",),
            (
                Chart(
                    "Viagens programadas e realizadas por linha",
                    "operacao_por_linha",
                    "route_id",
                    ("n_programmed", "n_run"),
                    "bar",
                    "viagens",
                ),
            ),
        ),
    ]
    accuracy = add_prediction_accuracy(store, start, end, sections, tables)

    part = build_cases_part(cases, profile, "monthly", period, 6, today or local_today(profile))
    headlines += part.headlines
    sections.append(part.section)
    tables += part.tables

    return finish_report(
        kind="monthly",
        title="Relatório gerencial mensal da operação",
        subtitle=f"{to_period(period.label)} ({start:%d/%m/%Y} a {end:%d/%m/%Y}) — "
        "BG Lei 6.784/2021, art. 62, VII",
        file_stem=f"relatorio-mensal-{period.label}",
        headlines=headlines,
        sections=sections,
        tables=tables,
        inputs={**inputs.hashed(), "live_prediction_accuracy": accuracy},
        files={"staff": staff},
        raw_days=(start, end),
        profile=profile,
        store=store,
        command=command
        or f"pontual --profile {profile.id} report monthly --month {period.label}"
        + (f" --staff {Path(staff).name}" if staff else ""),
    )


def add_prediction_accuracy(
    store: Store, start: date, end: date, sections: list[Section], tables: list[ReportTable]
) -> pl.DataFrame:
    """Append the section on the live feed's accuracy (BG art. 25: the passenger app with
    online GPS must tell the truth) to `sections` and its table to `tables`: the month's
    scored predictions (`live_prediction_accuracy`) by horizon, current vs next trips and
    line, beside the timetable alone (the hour of day is on the dashboard's page: 24 rows say
    little a board needs); a paragraph alone when nothing was scored. Returns the scored rows
    read, which enter the report's input hash."""
    scored = read_prediction_accuracy(store, start, end)
    summary = compute_accuracy_summary(scored)
    title = "Precisão das previsões do feed ao vivo"
    if summary.is_empty():
        sections.append(
            Section(
                title,
                (
                    "Nenhuma previsão avaliada no mês: o feed ao vivo (pontual serve) não "
                    "registrou previsões, ou os dias ainda não foram processados (pontual match "
                    "e, em seguida, pontual serve avaliam o dia anterior).",
                ),
            )
        )
        return scored
    dim, key = pl.col("dimension"), pl.col("key")
    rows = summary.filter(dim.is_in(["horizon", "trip", "line"])).with_columns(
        pl.when(dim == "horizon")
        .then(pl.format("Horizonte ≥ {} min", key))
        .when(dim == "trip")
        .then(pl.format("Viagem {}", key.replace({"current": "atual", "next": "seguinte"})))
        .otherwise(pl.format("Linha {}", key))
        .alias("group")
    )
    tables.append(
        ReportTable(
            "precisao_previsoes",
            "Erro das chegadas publicadas e do quadro de horários (segundos)",
            rows,
            (
                Col("group", "Recorte"),
                Col("n_predictions", "Previsões", "integer"),
                Col("mae_s", "Erro médio", "number", 0),
                Col("p50_s", "Mediana", "number", 0),
                Col("p90_s", "P90", "number", 0),
                Col("timetable_mae_s", "Quadro: erro médio", "number", 0),
                Col("timetable_p90_s", "Quadro: P90", "number", 0),
                Col("gain_vs_timetable", "Ganho sobre o quadro", "percent"),
            ),
            note="Com vários dias, mediana e P90 são a média dos percentis diários ponderada "
            "pelo número de previsões; o erro médio é exato.",
        )
    )
    sections.append(
        Section(
            title,
            (
                "Cada chegada publicada pelo feed GTFS-RT é comparada, no dia seguinte, com a "
                "passagem observada do ônibus no ponto (não interpolada), ao lado do erro do "
                "quadro de horários sozinho (BG art. 25: aplicativo ao passageiro com GPS on-line).",
            ),
            ("precisao_previsoes",),
        )
    )
    return scored
