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

from core.texts import gettext as _
from dashboard.reports.operation import (
    build_line_table,
    compute_line_operation,
    compute_passengers_by_class,
    line_columns,
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
        Headline(_("Passengers carried"), int(by_form["n_passengers"].sum()), "integer"),
        *[Headline(FARE_CLASS_LABELS[c], int(by_form[f"n_{c}"].sum()), "integer") for c in forms],
        Headline(_("Km run"), total_km, "number"),
        Headline(_("Scheduled trips"), int(operation["n_programmed"].sum()), "integer"),
        Headline(_("Trips run"), int(operation["n_run"].sum()), "integer"),
    ]
    if people is not None:
        headlines += [
            Headline(_("Drivers"), int(operation["n_drivers"].fill_null(0).sum()), "integer"),
            Headline(_("Inspectors"), int(operation["n_inspectors"].fill_null(0).sum()), "integer"),
        ]
    tables = [
        ReportTable(
            "passageiros_por_forma",
            _("Passengers carried by payment form"),
            by_form,
            (
                Col("route_id", _("Line"), "code"),
                *[Col(f"n_{c}", FARE_CLASS_LABELS[c], "integer") for c in FARE_CLASSES],
                Col("n_passengers", _("Total"), "integer"),
            ),
        ),
        ReportTable(
            "operacao_por_linha",
            _("Km, trips and staff by line"),
            operation,
            (
                *line_columns(),
                Col("n_drivers", _("Drivers"), "integer"),
                Col("n_inspectors", _("Inspectors"), "integer"),
            ),
            note=None
            if people is not None
            else _(
                "Drivers and inspectors not supplied: make the report with --staff FILE "
                "(route_id,month,n_drivers,n_inspectors)."
            ),
        ),
    ]
    sections = [
        Section(
            _("Passengers by payment form"),
            (
                _(
                    "The month's electronic ticketing transactions (BG art. 26, 49), by "
                    "payment form, by line."
                ),
            ),
            ("passageiros_por_forma",),
        ),
        Section(
            _("Km, trips and staff"),
            (
                _(
                    "Trips run: they left and reached the terminals, without an approved "
                    "justification; km run capped at each trip's scheduled km. Drivers and "
                    "inspectors as the operator supplied them."
                ),
            ),
            ("operacao_por_linha",),
            (
                Chart(
                    _("Scheduled trips and trips run by line"),
                    "operacao_por_linha",
                    "route_id",
                    ("n_programmed", "n_run"),
                    "bar",
                    _("trips (axis)"),
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
        title=_("Monthly operations management report"),
        subtitle=_(
            "{period} ({start} to {end}) — BG Lei 6.784/2021, art. 62, VII",
            period=to_period(period.label),
            start=f"{start:%d/%m/%Y}",
            end=f"{end:%d/%m/%Y}",
        ),
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
    title = _("Accuracy of the live feed's predictions")
    if summary.is_empty():
        sections.append(
            Section(
                title,
                (
                    _(
                        "No prediction evaluated in the month: the live feed (pontual serve) "
                        "logged no predictions, or the days have not been processed yet (pontual "
                        "match and then pontual serve score the day before)."
                    ),
                ),
            )
        )
        return scored
    dim, key = pl.col("dimension"), pl.col("key")
    rows = summary.filter(dim.is_in(["horizon", "trip", "line"])).with_columns(
        pl.when(dim == "horizon")
        .then(pl.format(_("Horizon ≥ {} min"), key))
        .when(dim == "trip")
        .then(
            pl.format(
                _("Trip {}"),
                key.replace({"current": _("current (trip)"), "next": _("next (trip)")}),
            )
        )
        .otherwise(pl.format(_("Line {}"), key))
        .alias("group")
    )
    tables.append(
        ReportTable(
            "precisao_previsoes",
            _("Error of the published arrivals and of the timetable (seconds)"),
            rows,
            (
                Col("group", _("Cut")),
                Col("n_predictions", _("Predictions"), "integer"),
                Col("mae_s", _("Mean error"), "number", 0),
                Col("p50_s", _("Median"), "number", 0),
                Col("p90_s", "P90", "number", 0),
                Col("timetable_mae_s", _("Timetable: mean error"), "number", 0),
                Col("timetable_p90_s", _("Timetable: P90"), "number", 0),
                Col("gain_vs_timetable", _("Gain over the timetable"), "percent"),
            ),
            note=_(
                "Over several days, the median and the P90 are the mean of the daily "
                "percentiles weighted by the number of predictions; the mean error is "
                "exact."
            ),
        )
    )
    sections.append(
        Section(
            title,
            (
                _(
                    "Each arrival the GTFS-RT feed published is compared, the next day, with "
                    "the bus's observed passage at the stop (not interpolated), beside the "
                    "error of the timetable alone (BG art. 25: a passenger app with online "
                    "GPS)."
                ),
            ),
            ("precisao_previsoes",),
        )
    )
    return scored
