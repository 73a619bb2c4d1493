"""Linhas: trip outcomes per line for a day, the Marey diagram of a line, its origin delay
distribution, and headways / excess waiting time on frequent lines."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from dashboard import charts, labels, maps, state
from dashboard.format import format_column, format_yes_no, to_date, to_number, to_period
from dashboard.queries import filters, network
from dashboard.queries import lines as q
from dashboard.queries.snapshot import ALL

f = state.filters()
tz = state.timezone()
period = parse_period(f.period)
start, end = period.start, period.end
st.title("Linhas")
st.caption(f"{to_period(f.period)} · horários em {tz}")

days: list = state.load(q.read_service_dates, start, end)
if not days:
    state.empty_notice("viagens realizadas", "pontual match")
    st.stop()
st.subheader(f"Linhas no período — pior cumprimento primeiro ({to_period(f.period)})")
period_counts: pl.DataFrame = state.load(
    q.read_outcome_counts, start, end, f.route_ids, f.direction
)
ranking = q.build_line_ranking(period_counts)
if ranking.height:
    st.dataframe(
        pl.DataFrame(
            [
                ranking["route_id"].alias("Linha"),
                format_column(ranking["fulfilment"], "percent").alias("Cumprimento"),
                format_column(ranking["punctuality"], "percent").alias("Pontualidade"),
                format_column(ranking["n_programmed"], "integer").alias("Programadas"),
                format_column(ranking["n_evaluated"], "integer").alias("Avaliadas"),
                format_column(ranking["n_run"], "integer").alias("Realizadas"),
                format_column(ranking["n_suppressed"], "integer").alias("Suprimidas"),
                format_column(ranking["n_partial"], "integer").alias("Parciais"),
                format_column(ranking["evaluated_share"], "percent").alias("Com dados"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        "Cumprimento = realizadas ÷ avaliadas; viagens não avaliadas (sem dados) ficam fora "
        "do cálculo, não contam como suprimidas."
    )

st.subheader(f"Mapa da rede ({to_period(f.period)})")
map_by = maps.NETWORK_COLOURS[
    st.radio("Colorir por", list(maps.NETWORK_COLOURS), horizontal=True, key="lines_map_by")
]
route_ids = (f.route_id,) if f.route_id != ALL else f.route_ids
shapes = network.build_shape_paths(
    state.load(network.read_route_shapes, start, end, route_ids, f.direction)
)
if shapes.is_empty():
    state.empty_notice("itinerários das linhas", "pontual gtfs load")
else:
    names: pl.DataFrame = state.load(filters.read_lines)
    shapes = shapes.join(
        names.select("route_id", pl.coalesce("route_short_name", "route_id").alias("line")),
        on="route_id",
        how="left",
    ).with_columns(pl.col("line").fill_null(pl.col("route_id")))
    shares = (
        ranking
        if map_by == "punctuality"
        else state.load(network.read_line_crowding, start, end, route_ids)
    )
    basemap = maps.read_basemap(state.settings())
    coloured = maps.compute_network_colours(shapes, shares, map_by)
    st.pydeck_chart(maps.build_network_deck(coloured, basemap), height=520)
    st.caption(maps.to_network_legend(map_by))

day = st.selectbox("Dia", days, format_func=to_date, key="lines_day")

st.subheader(f"Resultado das viagens em {to_date(day)}")
counts: pl.DataFrame = state.load(q.read_outcome_counts, day, day, f.route_ids, f.direction)
if f.route_id != ALL and counts.height:
    counts = counts.filter(pl.col("route_id") == f.route_id)
if counts.is_empty():
    state.empty_notice("viagens deste dia", "pontual match")
else:
    named = {"route_id": "Linha", "n_programmed": "Programadas"}
    named.update({f"n_{k}": v.capitalize() for k, v in q.OUTCOME_LABELS.items()})
    named["n_justified"] = "Justificadas"
    st.dataframe(
        counts.with_columns(
            format_column(counts[c], "integer") for c in counts.columns if c != "route_id"
        ).rename(named),
        hide_index=True,
        width="stretch",
    )

lines = counts["route_id"].to_list() if counts.height else []
if not lines:
    st.stop()
default = lines.index(f.route_id) if f.route_id in lines else 0
route_id = st.selectbox("Linha para o detalhe", lines, index=default, key="lines_route")

trips: pl.DataFrame = state.load(q.read_day_outcomes, day, route_id, f.direction)
st.subheader(f"Viagens da linha {route_id}")
if trips.height:
    shown = pl.DataFrame(
        [
            format_column(trips["planned_start_at"], "clock", tz).alias("Partida programada"),
            format_column(trips["actual_start_at"], "clock", tz).alias("Partida real"),
            trips["outcome"].replace(q.OUTCOME_LABELS).alias("Resultado"),
            format_column(trips["departure_delay_s"], "delay").alias("Atraso na origem"),
            trips["vehicle_id"].fill_null("—").alias("Veículo"),
            format_yes_no(trips["is_justified"]).alias("Justificada"),
            trips["reason"].alias("Motivo"),
            pl.Series("Viagem", [q.to_trip_link(day, t) for t in trips["trip_id"].to_list()]),
        ]
    )
    outcome_filter = st.multiselect(
        "Resultados",
        list(q.OUTCOME_LABELS.values()),
        key="lines_outcomes",
        placeholder="todos os resultados",
    )
    if outcome_filter:
        shown = shown.filter(pl.col("Resultado").is_in(outcome_filter))
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        column_config={
            "Viagem": st.column_config.LinkColumn(
                "Viagem", display_text=r"viagem=(.*)$", help="abre a página da viagem"
            )
        },
    )

st.subheader("Diagrama de Marey (tempo × distância)")
points: pl.DataFrame = state.load(q.read_marey, day, route_id, f.direction)
if points.is_empty():
    state.empty_notice("horários e visitas às paradas", "pontual gtfs load e pontual match")
else:
    st.caption(
        "Tracejado: viagens programadas, na cor do resultado; contínuo: viagens realizadas "
        "(GPS), uma cor por veículo; ✕: quebra."
    )
    breakdowns: pl.DataFrame = state.load(q.read_line_breakdowns, day, route_id)
    markers = q.build_marey_markers(points, breakdowns)
    for direction in sorted(points["direction_id"].drop_nulls().unique().to_list()):
        st.markdown(f"**Sentido {'ida' if direction == 0 else 'volta'} ({direction})**")
        part = points.filter(pl.col("direction_id") == direction)
        marks = markers.filter(pl.col("direction_id") == direction) if markers.height else markers
        st.altair_chart(
            charts.build_marey(part, tz, q.OUTCOME_LABELS, marks),
            width="stretch",
        )
    run_times = q.build_run_times(points, tz)
    if run_times.height:
        st.markdown("**Tempo de percurso por hora: programado × realizado**")
        st.altair_chart(charts.build_run_times(run_times), width="stretch")

st.subheader(f"Distribuição dos atrasos na origem — {to_period(f.period)}")
period_trips: pl.DataFrame = state.load(q.read_delays, start, end, route_id, f.direction)
if period_trips.is_empty():
    state.empty_notice("atrasos", "pontual match")
else:
    st.altair_chart(charts.build_delay_histogram(period_trips), width="stretch")
    st.caption(
        f"{period_trips.height} viagens; mediana "
        f"{to_number(period_trips['delay_min'].median(), 1)} min."
    )

st.subheader("Intervalos e espera excedente (linhas frequentes)")
headways: pl.DataFrame = state.load(q.read_headways, start, end, route_id)
if headways.is_empty():
    frequent = state.profile().trips.frequent_headway_max_s
    st.info(
        "Linha sem observações de intervalo neste período: só as linhas frequentes, com "
        f"intervalo programado de até {to_number(frequent.value / 60, 0)} min, são avaliadas "
        f"pela espera excedente (EWT; {labels.to_citation(frequent)})."
    )
else:
    ewt_s = headways["excess_wait_s"].drop_nulls().cast(pl.Float64).to_list()
    st.metric(
        "Espera excedente média (EWT)",
        f"{to_number(sum(ewt_s) / len(ewt_s) / 60 if ewt_s else None, 1)} min",
    )
    st.altair_chart(charts.build_headway_chart(headways, tz), width="stretch")
