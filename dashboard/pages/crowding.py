"""Lotação: where and when buses are over the crowding limit (BG art. 59: seats plus the
profile's standees per m²), the extra trips needed (art. 59 §1), and a run's load profile
with its seats and standing limit drawn. Reads the crowding job's tables (`crowding_summary`,
`trip_crowding`, `trip_loads`)."""

from __future__ import annotations

from datetime import date

import polars as pl
import streamlit as st

from core.periods import parse_period
from dashboard import charts, labels, state
from dashboard.format import (
    format_column,
    format_yes_no,
    to_date,
    to_integer,
    to_number,
    to_percent,
)
from dashboard.queries import crowding as q
from dashboard.queries import filters
from dashboard.queries.snapshot import ALL

f = state.filters()
tz = state.timezone()
period = parse_period(f.period)
start, end = period.start, period.end
crowding = state.profile().crowding
limit = crowding.standees_max_per_m2
fill = f"pontual crowding --from {start} --to {end}"
st.title("Lotação")
st.caption(
    f"Limite de lotação: todos os assentos ocupados mais {to_number(limit.value, 1)} "
    f"passageiros em pé por m² ({labels.to_citation(limit)}). Horários em {tz}."
)
lines: pl.DataFrame = state.load(filters.read_lines)
names = dict(zip(lines["route_id"].to_list(), lines["label"].to_list(), strict=True))
short = dict(
    zip(
        lines["route_id"].to_list(),
        lines["route_short_name"].fill_null(lines["route_id"]).to_list(),
        strict=True,
    )
)
route_ids = (f.route_id,) if f.route_id != ALL else f.route_ids

st.subheader("Viagens acima do limite por linha e hora")
cells: pl.DataFrame = state.load(q.read_crowding_heatmap, start, end, route_ids, f.direction, tz)
if cells.is_empty():
    state.empty_notice("lotação", fill)
else:
    n_over, n_trips = int(cells["n_over_limit"].sum()), int(cells["n_trips"].sum())
    c1, c2, c3 = st.columns(3)
    c1.metric("Viagens com perfil de carga", to_integer(n_trips))
    c2.metric("Acima do limite", to_integer(n_over))
    c3.metric("Parcela acima do limite", to_percent(n_over / n_trips if n_trips else None))
    labelled = cells.with_columns(
        pl.col("route_id").replace_strict(names, default=pl.col("route_id")).alias("line")
    )
    st.altair_chart(charts.build_heatmap(labelled), width="stretch")
    st.caption(
        "Cada célula: viagens que partiram naquela hora (todos os dias do período) e a parcela "
        "delas com algum trecho acima do limite."
    )

st.subheader("Viagens extras necessárias (art. 59 §1)")
actions: pl.DataFrame = state.load(q.read_crowding_actions, start, end, route_ids, f.direction)
share_max = crowding.over_limit_trip_share_max
if actions.is_empty():
    if cells.is_empty():
        state.empty_notice("resumo de lotação", fill)
    else:
        st.success(
            "Nenhuma faixa horária exige reforço: a parcela de viagens acima do limite não "
            f"passa de {to_percent(share_max.value, 0)} ({labels.to_citation(share_max)})."
        )
else:
    n_days = int(actions["n_action_days"][0])
    extra = int(actions["extra_trips_total"][0])
    c1, c2, c3 = st.columns(3)
    c1.metric("Faixas linha × hora com reforço exigido", to_integer(actions["n_actions"][0]))
    c2.metric("Viagens extras no período", to_integer(extra))
    c3.metric("Viagens extras por dia (média)", to_number(extra / n_days if n_days else None, 1))
    st.caption(
        "Reforço exigido quando a parcela de viagens acima do limite passa de "
        f"{to_percent(share_max.value, 0)} ({labels.to_citation(share_max)}). Viagens "
        "necessárias = passageiros no trecho mais carregado da hora ÷ capacidade no limite; "
        "quando bastam as viagens atuais, indica-se o veículo maior que resolve."
    )
    shown = actions.with_columns(
        format_column(actions["service_date"], "date").alias("Dia"),
        pl.col("route_id").replace_strict(names, default=pl.col("route_id")).alias("Linha"),
        pl.col("direction_id").replace_strict({0: "ida", 1: "volta"}, default="—").alias("Sentido"),
        format_column(actions["hour_at"], "clock", tz).str.slice(0, 5).alias("Hora"),
        pl.col("n_trips").alias("Viagens"),
        pl.col("n_over_limit").alias("Acima do limite"),
        format_column(actions["over_limit_share"], "percent").alias("Parcela"),
        format_column(actions["max_standees_per_m2"], "number").alias("Máx. em pé/m²"),
        pl.concat_str(
            pl.coalesce("worst_from_stop_name", "worst_from_stop_id"),
            pl.lit(" → "),
            pl.coalesce("worst_to_stop_name", "worst_to_stop_id"),
        ).alias("Trecho mais carregado"),
        format_column(actions["peak_segment_load"], "integer").alias("Passageiros no trecho"),
        format_column(actions["capacity_at_limit"], "integer").alias("Capacidade por viagem"),
        pl.col("n_trips_needed").alias("Viagens necessárias"),
        pl.col("extra_trips_needed").alias("Viagens extras"),
        pl.col("larger_vehicle_type").fill_null("—").alias("Veículo maior"),
    ).select(
        "Dia",
        "Linha",
        "Sentido",
        "Hora",
        "Viagens",
        "Acima do limite",
        "Parcela",
        "Máx. em pé/m²",
        "Trecho mais carregado",
        "Passageiros no trecho",
        "Capacidade por viagem",
        "Viagens necessárias",
        "Viagens extras",
        "Veículo maior",
    )
    st.dataframe(shown, hide_index=True, width="stretch")
    if actions["n_actions"][0] > actions.height:
        st.caption(
            f"As {to_integer(actions.height)} faixas mais graves de {to_integer(actions['n_actions'][0])}."
        )

st.subheader("Perfil de carga de uma viagem")
crowded: pl.DataFrame = state.load(q.read_crowded_trips, start, end, route_ids, f.direction)
if crowded.is_empty():
    state.empty_notice("carga por parada", fill)
    st.stop()
keys = list(
    zip(
        crowded["service_date"].to_list(),
        crowded["vehicle_id"].to_list(),
        crowded["run_index"].to_list(),
        strict=True,
    )
)
clocks = format_column(crowded["departure_at"], "clock", tz).str.slice(0, 5).to_list()
trip_labels = {
    k: f"{to_date(k[0])} {c} · linha {r} · veículo {k[1]} · máx. {to_number(m, 0)} a bordo, "
    f"{to_number(s, 1)} em pé/m²"
    for k, c, r, m, s in zip(
        keys,
        clocks,
        [short.get(r, r) for r in crowded["route_id"].to_list()],
        crowded["max_load"].to_list(),
        crowded["max_standees_per_m2"].to_list(),
        strict=True,
    )
}
chosen: tuple[date, str, int] = st.selectbox(
    "Viagem (as mais lotadas primeiro)", keys, format_func=trip_labels.__getitem__, key="crowd_trip"
)
run = crowded.row(keys.index(chosen), named=True)
loads: pl.DataFrame = state.load(q.read_trip_loads, *chosen)
seats, area = run["n_seats"], run["standing_area_m2"]
standing_limit = seats + area * limit.value if seats is not None and area is not None else None
c1, c2, c3, c4 = st.columns(4)
c1.metric("Assentos", to_integer(seats))
c2.metric("Área em pé", f"{to_number(area, 1)} m²")
c3.metric("Limite (assentos + em pé)", to_number(standing_limit, 0))
c4.metric("Máximo a bordo", to_number(run["max_load"], 0))
st.altair_chart(
    charts.build_load_profile(loads, "load_after", seats, standing_limit), width="stretch"
)
st.caption(
    f"Viagem {run['trip_id']} · capacidade: "
    + {"register": "cadastro da frota", "type_fallback": "padrão do tipo de veículo"}.get(
        run["capacity_source"], "desconhecida"
    )
    + ". Passageiros estimados das validações (encadeamento de viagens do cartão)."
)
st.dataframe(
    loads.select(
        pl.col("stop_sequence").alias("Ordem"),
        pl.coalesce("stop_name", "stop_id").alias("Parada"),
        format_column(loads["n_boardings"], "number").alias("Embarques"),
        format_column(loads["n_alightings"], "number").alias("Desembarques"),
        format_column(loads["load_after"], "number").alias("A bordo ao sair"),
        format_column(loads["standees_per_m2"], "number").alias("Em pé/m²"),
        format_yes_no(pl.col("is_over_limit")).alias("Acima do limite"),
        pl.col("los").alias("Nível de serviço (TCQSM)"),
    ),
    hide_index=True,
    width="stretch",
)
