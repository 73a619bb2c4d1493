"""Altair charts of the dashboard (pure builders: frames in, charts out; labels in pt-BR).

Instants arrive as UTC and are drawn in the feed's local time (`to_local_naive`), because
planners read the timetable in local clock time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import altair as alt
import polars as pl

C = TypeVar("C", alt.Chart, alt.LayerChart)

PT_BR_NUMBER = {"decimal": ",", "thousands": ".", "grouping": [3], "currency": ["R$ ", ""]}
PT_BR_TIME = {
    "dateTime": "%A, %e de %B de %Y. %X",
    "date": "%d/%m/%Y",
    "time": "%H:%M:%S",
    "periods": ["AM", "PM"],
    "days": ["Domingo", "Segunda", "Terça", "Quarta", "Quinta", "Sexta", "Sábado"],
    "shortDays": ["Dom", "Seg", "Ter", "Qua", "Qui", "Sex", "Sáb"],
    "months": [
        "Janeiro",
        "Fevereiro",
        "Março",
        "Abril",
        "Maio",
        "Junho",
        "Julho",
        "Agosto",
        "Setembro",
        "Outubro",
        "Novembro",
        "Dezembro",
    ],
    "shortMonths": [
        "Jan",
        "Fev",
        "Mar",
        "Abr",
        "Mai",
        "Jun",
        "Jul",
        "Ago",
        "Set",
        "Out",
        "Nov",
        "Dez",
    ],
}
"""d3 locale for Vega: axes read 1.234,5 and Brazilian month names."""


def to_local_naive(frame: pl.DataFrame, columns: list[str], timezone: str) -> pl.DataFrame:
    """UTC instant columns as naive local times (what Vega draws without shifting them)."""
    return frame.with_columns(
        pl.col(c).dt.convert_time_zone(timezone).dt.replace_time_zone(None) for c in columns
    )


def _locale(chart: C) -> C:
    # Vega reads the number / time locale from the chart's usermeta embed options.
    return chart.properties(
        usermeta={"embedOptions": {"formatLocale": PT_BR_NUMBER, "timeFormatLocale": PT_BR_TIME}}
    )


OUTCOME_COLOURS = {
    "no horário": "#9e9e9e",
    "atrasada": "#ff7f0e",
    "adiantada": "#9467bd",
    "parcial": "#8c564b",
    "suprimida": "#d62728",
    "quebra": "#000000",
    "não avaliada — sem dados": "#c7c7c7",
    "sem resultado": "#dddddd",
}
"""Planned trips on the Marey diagram, coloured by what became of them."""


def build_marey(
    points: pl.DataFrame,
    timezone: str,
    outcome_labels: Mapping[str, str] | None = None,
    markers: pl.DataFrame | None = None,
) -> alt.LayerChart:
    """Time–distance (Marey) diagram of one direction: x = local time, y = km along the line.
    Planned trips dashed, coloured by their outcome (suppressed, late, early...); runs solid,
    one colour per vehicle; breakdowns marked with a cross (BG art. 77: the schedule against
    the GPS evidence)."""
    labels = outcome_labels or {}
    frame = to_local_naive(points, ["at"], timezone).with_columns(
        pl.col("outcome")
        .replace_strict(labels, default=pl.col("outcome"), return_dtype=pl.String)
        .fill_null("sem resultado")
        .alias("resultado")
    )
    x = alt.X("at:T", title="Horário", axis=alt.Axis(format="%H:%M"))
    y = alt.Y("dist_km:Q", title="Distância ao longo da linha (km)")
    planned = (
        alt.Chart(frame.filter(pl.col("kind") == "programada"))
        .mark_line(strokeDash=[5, 4], strokeWidth=1.5)
        .encode(
            x=x,
            y=y,
            detail="trip_id:N",
            color=alt.Color(
                "resultado:N",
                title="Viagem programada",
                scale=alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values())),
            ),
            tooltip=[
                alt.Tooltip("trip_id:N", title="Viagem"),
                alt.Tooltip("resultado:N", title="Resultado"),
                alt.Tooltip("at:T", title="Programado", format="%H:%M:%S"),
                alt.Tooltip("dist_km:Q", title="km", format=",.2f"),
            ],
        )
    )
    run = (
        alt.Chart(frame.filter(pl.col("kind") == "realizada"))
        .mark_line(strokeWidth=2)
        .encode(
            x=x,
            y=y,
            detail="trip_id:N",
            color=alt.Color("vehicle_id:N", title="Veículo (realizada)"),
            tooltip=[
                alt.Tooltip("trip_id:N", title="Viagem"),
                alt.Tooltip("vehicle_id:N", title="Veículo"),
                alt.Tooltip("at:T", title="Horário", format="%H:%M:%S"),
                alt.Tooltip("dist_km:Q", title="km", format=",.2f"),
            ],
        )
    )
    layers: list[alt.Chart] = [planned, run]
    if markers is not None and markers.height:
        marks = to_local_naive(markers, ["at"], timezone)
        layers.append(
            alt.Chart(marks)
            .mark_point(shape="cross", size=160, filled=True, color="#000000")
            .encode(
                x=x,
                y=y,
                tooltip=[
                    alt.Tooltip("label:N", title="Evento"),
                    alt.Tooltip("trip_id:N", title="Viagem"),
                    alt.Tooltip("at:T", title="Horário", format="%H:%M"),
                ],
            )
        )
    chart = alt.LayerChart(layer=layers).resolve_scale(color="independent")
    return _locale(chart.properties(height=380).interactive())


def build_run_times(run_times: pl.DataFrame) -> alt.Chart:
    """Median run time by local hour of the planned start, planned against run."""
    chart = (
        alt.Chart(run_times)
        .mark_line(point=True)
        .encode(
            x=alt.X("hour:O", title="Hora da partida programada", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("run_time_min:Q", title="Tempo de percurso mediano (min)"),
            color=alt.Color(
                "kind:N",
                title="Viagem",
                scale=alt.Scale(domain=["programada", "realizada"], range=["#888888", "#1f77b4"]),
            ),
            tooltip=[
                alt.Tooltip("hour:O", title="Hora"),
                alt.Tooltip("kind:N", title="Viagem"),
                alt.Tooltip("run_time_min:Q", title="Minutos", format=",.1f"),
                alt.Tooltip("n_trips:Q", title="Viagens", format=",d"),
            ],
        )
        .properties(height=240)
    )
    return _locale(chart)


def build_delay_histogram(delays: pl.DataFrame, bin_min: float = 1.0) -> alt.Chart:
    """Distribution of origin departure delays (`delay_min`, minutes; + late) in bins of
    `bin_min` minutes."""
    chart = (
        alt.Chart(delays)
        .mark_bar()
        .encode(
            x=alt.X(
                "delay_min:Q",
                bin=alt.Bin(step=bin_min),
                title="Atraso na partida do terminal (min; negativo = adiantada)",
            ),
            y=alt.Y("count():Q", title="Viagens"),
        )
        .properties(height=260)
    )
    return _locale(chart)


def build_headway_chart(headways: pl.DataFrame, timezone: str) -> alt.Chart:
    """Excess waiting time per hour (EWT = AWT - SWT, minutes) of a frequent line."""
    frame = to_local_naive(headways, ["hour_at"], timezone).with_columns(
        (pl.col("excess_wait_s") / 60).alias("ewt_min")
    )
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("hour_at:T", title="Hora", axis=alt.Axis(format="%d/%m %H:%M")),
            y=alt.Y("ewt_min:Q", title="Espera excedente EWT (min)"),
            color=alt.Color("direction_id:N", title="Sentido"),
            tooltip=[
                alt.Tooltip("hour_at:T", title="Hora", format="%d/%m/%Y %H:%M"),
                alt.Tooltip("ewt_min:Q", title="EWT (min)", format=",.1f"),
            ],
        )
        .properties(height=260)
    )
    return _locale(chart)


def build_stop_delays(stops: pl.DataFrame) -> alt.Chart:
    """Arrival delay at each stop of a trip (`delay_min`, minutes), in itinerary order."""
    chart = (
        alt.Chart(stops)
        .mark_bar()
        .encode(
            x=alt.X("stop_sequence:O", title="Parada (ordem)"),
            y=alt.Y("delay_min:Q", title="Atraso na chegada (min)"),
            color=alt.condition("datum.delay_min > 0", alt.value("#d62728"), alt.value("#2ca02c")),
            tooltip=[
                alt.Tooltip("stop_name:N", title="Parada"),
                alt.Tooltip("delay_min:Q", title="Atraso (min)", format=",.1f"),
            ],
        )
        .properties(height=240)
    )
    return _locale(chart)


def build_heatmap(cells: pl.DataFrame) -> alt.Chart:
    """Line × local hour heatmap of the share of trips over the crowding limit (0-1); rows are
    labelled by `line` (short and long name) when present, else `route_id`."""
    line = "line" if "line" in cells.columns else "route_id"
    chart = (
        alt.Chart(cells)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("hour:O", title="Hora de partida", axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{line}:N", title="Linha", axis=alt.Axis(labelLimit=320)),
            color=alt.Color(
                "over_limit_share:Q",
                title="Viagens acima do limite",
                scale=alt.Scale(scheme="orangered", domain=[0, 1]),
                legend=alt.Legend(format=".0%"),
            ),
            tooltip=[
                alt.Tooltip(f"{line}:N", title="Linha"),
                alt.Tooltip("hour:O", title="Hora"),
                alt.Tooltip("n_trips:Q", title="Viagens", format=",d"),
                alt.Tooltip("n_over_limit:Q", title="Acima do limite", format=",d"),
                alt.Tooltip("over_limit_share:Q", title="Parcela", format=".1%"),
            ],
        )
        .properties(height=alt.Step(22))
    )
    return _locale(chart)


def build_load_profile(
    loads: pl.DataFrame, load_column: str, n_seats: float | None, standing_limit: float | None
) -> alt.LayerChart:
    """Load after each stop of a trip, with the seats and the standing limit (seats +
    standing area × the profile's standees per m²) drawn as horizontal rules."""
    bars = (
        alt.Chart(loads)
        .mark_bar()
        .encode(
            x=alt.X("stop_sequence:O", title="Parada (ordem)"),
            y=alt.Y(f"{load_column}:Q", title="Passageiros a bordo"),
            color=alt.condition("datum.is_over_limit", alt.value("#d62728"), alt.value("#4c78a8")),
            tooltip=[
                alt.Tooltip("stop_sequence:O", title="Ordem"),
                *(
                    [alt.Tooltip("stop_name:N", title="Parada")]
                    if "stop_name" in loads.columns
                    else []
                ),
                alt.Tooltip(f"{load_column}:Q", title="A bordo", format=",.1f"),
            ],
        )
    )
    rules = [
        pl.DataFrame({"y": [float(v)], "label": [label]})
        for v, label in ((n_seats, "assentos"), (standing_limit, "limite em pé"))
        if v is not None
    ]
    layers: list[alt.Chart] = [bars]
    if rules:
        frame = pl.concat(rules)
        layers.append(
            alt.Chart(frame)
            .mark_rule(strokeDash=[6, 3], strokeWidth=2)
            .encode(
                y="y:Q",
                color=alt.Color(
                    "label:N",
                    title="Referência",
                    scale=alt.Scale(
                        domain=["assentos", "limite em pé"], range=["#ff7f0e", "#d62728"]
                    ),
                ),
            )
        )
    return _locale(alt.LayerChart(layer=layers).properties(height=280))


def build_fleet_availability(
    days: pl.DataFrame, date_col: str, required: str, operated: str
) -> alt.Chart:
    """Daily vehicles operated against vehicles required."""
    frame = days.group_by(date_col).agg(pl.col(required).sum(), pl.col(operated).sum())
    long = frame.unpivot(index=date_col, on=[required, operated]).with_columns(
        pl.col("variable").replace({required: "exigida", operated: "operada"})
    )
    chart = (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X(f"{date_col}:T", title="Dia", axis=alt.Axis(format="%d/%m")),
            y=alt.Y("value:Q", title="Veículos"),
            color=alt.Color("variable:N", title="Frota"),
        )
        .properties(height=260)
    )
    return _locale(chart)


def build_monthly_lines(
    series: pl.DataFrame, title: str, value_format: str, bands: list[tuple[float, str]]
) -> alt.LayerChart:
    """One line per operator (`operator_id`) of a monthly indicator (`month`, `value`), with
    the profile's band values drawn as dashed horizontal rules labelled by `bands`
    ((value, label) pairs: e.g. the score-0 and score-100 values, or the grade minimums)."""
    lines = (
        alt.Chart(series)
        .mark_line(point=True)
        .encode(
            x=alt.X("month:T", title="Mês", axis=alt.Axis(format="%b/%Y")),
            y=alt.Y("value:Q", title=title, axis=alt.Axis(format=value_format)),
            color=alt.Color("operator_id:N", title="Operadora"),
            tooltip=[
                alt.Tooltip("operator_id:N", title="Operadora"),
                alt.Tooltip("month:T", title="Mês", format="%b/%Y"),
                alt.Tooltip("value:Q", title=title, format=value_format),
            ],
        )
    )
    layers: list[alt.Chart] = [lines]
    if bands:
        frame = pl.DataFrame({"y": [float(v) for v, _ in bands], "faixa": [b for _, b in bands]})
        layers.append(
            alt.Chart(frame)
            .mark_rule(strokeDash=[6, 3], color="#888888")
            .encode(y="y:Q", tooltip=[alt.Tooltip("faixa:N", title="Faixa")])
        )
    return _locale(alt.LayerChart(layer=layers).properties(height=240))
