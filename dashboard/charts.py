"""Altair charts of the dashboard (pure builders: frames in, charts out; labels in pt-BR).

Instants arrive as UTC and are drawn in the feed's local time (`to_local_naive`), because
planners read the timetable in local clock time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import altair as alt
import polars as pl

from core.texts import gettext as _

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
    """The chart with the pt-BR number and time locale in its spec's own configuration
    (`config.locale`, which Vega reads when it parses the spec). Not the `usermeta` embed
    options: Streamlit (1.6x) keeps only the theme, renderer and padding of those, and the
    axes read "0.5" (issue 20)."""
    return chart.configure(locale=alt.Locale(number=PT_BR_NUMBER, time=PT_BR_TIME))


OUTCOME_COLOURS = {
    "on_time": "#9e9e9e",
    "late": "#ff7f0e",
    "early": "#9467bd",
    "partial": "#8c564b",
    "suppressed": "#d62728",
    "broken_down": "#000000",
    "not_evaluated": "#c7c7c7",
    "": "#dddddd",
}
"""Planned trips on the Marey diagram, coloured by what became of them (by outcome code; ""
for a trip without an outcome)."""


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
    labels = dict(outcome_labels or {})
    labels[""] = _("no outcome")
    frame = to_local_naive(points, ["at"], timezone).with_columns(
        pl.col("outcome")
        .fill_null("")
        .replace_strict(labels, default=pl.col("outcome"), return_dtype=pl.String)
        .alias("resultado")
    )
    domain = [labels.get(code, code) for code in OUTCOME_COLOURS]
    x = alt.X("at:T", title=_("Time of day"), axis=alt.Axis(format="%H:%M"))
    y = alt.Y("dist_km:Q", title=_("Distance along the line (km)"))
    planned = (
        alt.Chart(frame.filter(pl.col("kind") == "programada"))
        .mark_line(strokeDash=[5, 4], strokeWidth=1.5)
        .encode(
            x=x,
            y=y,
            detail="trip_id:N",
            color=alt.Color(
                "resultado:N",
                title=_("Scheduled trip"),
                scale=alt.Scale(domain=domain, range=list(OUTCOME_COLOURS.values())),
            ),
            tooltip=[
                alt.Tooltip("trip_id:N", title=_("Trip")),
                alt.Tooltip("resultado:N", title=_("Outcome")),
                alt.Tooltip("at:T", title=_("Scheduled (time)"), format="%H:%M:%S"),
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
            color=alt.Color("vehicle_id:N", title=_("Vehicle (run)")),
            tooltip=[
                alt.Tooltip("trip_id:N", title=_("Trip")),
                alt.Tooltip("vehicle_id:N", title=_("Vehicle")),
                alt.Tooltip("at:T", title=_("Time of day"), format="%H:%M:%S"),
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
                    alt.Tooltip("label:N", title=_("Event")),
                    alt.Tooltip("trip_id:N", title=_("Trip")),
                    alt.Tooltip("at:T", title=_("Time of day"), format="%H:%M"),
                ],
            )
        )
    chart = alt.LayerChart(layer=layers).resolve_scale(color="independent")
    return _locale(chart.properties(height=380).interactive())


def build_run_times(run_times: pl.DataFrame) -> alt.Chart:
    """Median run time by local hour of the planned start, planned against run."""
    kinds = {"programada": _("scheduled (trip)"), "realizada": _("run (trip)")}
    run_times = run_times.with_columns(pl.col("kind").replace(kinds))
    chart = (
        alt.Chart(run_times)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "hour:O", title=_("Hour of the scheduled departure"), axis=alt.Axis(labelAngle=0)
            ),
            y=alt.Y("run_time_min:Q", title=_("Median run time (min)")),
            color=alt.Color(
                "kind:N",
                title=_("Trip"),
                scale=alt.Scale(domain=list(kinds.values()), range=["#888888", "#1f77b4"]),
            ),
            tooltip=[
                alt.Tooltip("hour:O", title=_("Hour")),
                alt.Tooltip("kind:N", title=_("Trip")),
                alt.Tooltip("run_time_min:Q", title=_("Minutes"), format=",.1f"),
                alt.Tooltip("n_trips:Q", title=_("Trips"), format=",d"),
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
                title=_("Delay leaving the terminal (min; negative = early)"),
            ),
            y=alt.Y("count():Q", title=_("Trips")),
        )
        .properties(height=260)
    )
    return _locale(chart)


def build_headway_chart(
    headways: pl.DataFrame, timezone: str, bunching: pl.DataFrame | None = None
) -> alt.Chart | alt.LayerChart:
    """Excess waiting time per hour (EWT = AWT - SWT, minutes) of a frequent line; with
    `bunching` (`compute_bunching_by_hour`: `hour_at`, `direction_id`, `n_headways`,
    `n_bunched`, `bunched_share`), each hour with bunched stop headways marked by a red
    triangle at its bunched share (right axis)."""
    frame = to_local_naive(headways, ["hour_at"], timezone).with_columns(
        (pl.col("excess_wait_s") / 60).alias("ewt_min")
    )
    x = alt.X("hour_at:T", title=_("Hour"), axis=alt.Axis(format="%d/%m %H:%M"))
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=x,
            y=alt.Y("ewt_min:Q", title=_("Excess wait EWT (min)")),
            color=alt.Color("direction_id:N", title=_("Direction")),
            tooltip=[
                alt.Tooltip("hour_at:T", title=_("Hour"), format="%d/%m/%Y %H:%M"),
                alt.Tooltip("ewt_min:Q", title=_("Excess wait EWT (min)"), format=",.1f"),
            ],
        )
        .properties(height=260)
    )
    events = (
        bunching.filter(pl.col("n_bunched") > 0)
        if bunching is not None and bunching.height
        else pl.DataFrame()
    )
    if events.is_empty():
        return _locale(chart)
    marks = (
        alt.Chart(to_local_naive(events, ["hour_at"], timezone))
        .mark_point(shape="triangle-down", size=90, filled=True, color="#d62728")
        .encode(
            x=x,
            y=alt.Y(
                "bunched_share:Q",
                title=_("Bunched stop headways"),
                axis=alt.Axis(format=".0%", orient="right", titleColor="#d62728"),
            ),
            tooltip=[
                alt.Tooltip("hour_at:T", title=_("Hour"), format="%d/%m/%Y %H:%M"),
                alt.Tooltip("direction_id:N", title=_("Direction")),
                alt.Tooltip("n_bunched:Q", title=_("Bunched headways"), format=",d"),
                alt.Tooltip("n_headways:Q", title=_("Stop headways judged"), format=",d"),
                alt.Tooltip("bunched_share:Q", title=_("Bunched share"), format=".1%"),
            ],
        )
    )
    layered = alt.LayerChart(layer=[chart, marks]).resolve_scale(y="independent")
    return _locale(layered.properties(height=260))


def build_stop_delays(stops: pl.DataFrame) -> alt.Chart:
    """Arrival delay at each stop of a trip (`delay_min`, minutes), in itinerary order."""
    chart = (
        alt.Chart(stops)
        .mark_bar()
        .encode(
            x=alt.X("stop_sequence:O", title=_("Stop (order)")),
            y=alt.Y("delay_min:Q", title=_("Arrival delay (min)")),
            color=alt.condition("datum.delay_min > 0", alt.value("#d62728"), alt.value("#2ca02c")),
            tooltip=[
                alt.Tooltip("stop_name:N", title=_("Stop")),
                alt.Tooltip("delay_min:Q", title=_("Delay (min)"), format=",.1f"),
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
            x=alt.X("hour:O", title=_("Departure hour"), axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{line}:N", title=_("Line"), axis=alt.Axis(labelLimit=320)),
            color=alt.Color(
                "over_limit_share:Q",
                title=_("Trips over the limit"),
                scale=alt.Scale(scheme="orangered", domain=[0, 1]),
                legend=alt.Legend(format=".0%"),
            ),
            tooltip=[
                alt.Tooltip(f"{line}:N", title=_("Line")),
                alt.Tooltip("hour:O", title=_("Hour")),
                alt.Tooltip("n_trips:Q", title=_("Trips"), format=",d"),
                alt.Tooltip("n_over_limit:Q", title=_("Over the limit"), format=",d"),
                alt.Tooltip("over_limit_share:Q", title=_("Share"), format=".1%"),
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
            x=alt.X("stop_sequence:O", title=_("Stop (order)")),
            y=alt.Y(f"{load_column}:Q", title=_("Passengers on board")),
            color=alt.condition("datum.is_over_limit", alt.value("#d62728"), alt.value("#4c78a8")),
            tooltip=[
                alt.Tooltip("stop_sequence:O", title=_("Order")),
                *(
                    [alt.Tooltip("stop_name:N", title=_("Stop"))]
                    if "stop_name" in loads.columns
                    else []
                ),
                alt.Tooltip(f"{load_column}:Q", title=_("On board"), format=",.1f"),
            ],
        )
    )
    seats_label, limit_label = _("seats"), _("standing limit")
    rules = [
        pl.DataFrame({"y": [float(v)], "label": [label]})
        for v, label in ((n_seats, seats_label), (standing_limit, limit_label))
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
                    title=_("Reference"),
                    scale=alt.Scale(
                        domain=[seats_label, limit_label], range=["#ff7f0e", "#d62728"]
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
        pl.col("variable").replace(
            {required: _("required (fleet)"), operated: _("operated (fleet)")}
        )
    )
    chart = (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x=alt.X(
                f"{date_col}:T", title=_("Day"), axis=alt.Axis(format="%d/%m", tickCount="day")
            ),
            y=alt.Y("value:Q", title=_("Vehicles")),
            color=alt.Color("variable:N", title=_("Fleet")),
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
            x=alt.X("month:T", title=_("Month"), axis=alt.Axis(format="%b/%Y")),
            y=alt.Y("value:Q", title=title, axis=alt.Axis(format=value_format)),
            color=alt.Color("operator_id:N", title=_("Operator")),
            tooltip=[
                alt.Tooltip("operator_id:N", title=_("Operator")),
                alt.Tooltip("month:T", title=_("Month"), format="%b/%Y"),
                alt.Tooltip("value:Q", title=title, format=value_format),
            ],
        )
    )
    layers: list[alt.Chart] = [lines]
    if bands:
        frame = pl.DataFrame({"y": [float(v) for v, _b in bands], "faixa": [b for _v, b in bands]})
        layers.append(
            alt.Chart(frame)
            .mark_rule(strokeDash=[6, 3], color="#888888")
            .encode(y="y:Q", tooltip=[alt.Tooltip("faixa:N", title=_("Band"))])
        )
    return _locale(alt.LayerChart(layer=layers).properties(height=240))
