"""Qualidade dos dados: GPS coverage per day and operator, silent vehicles, operator feed
outages (BG art. 25), rejected records by reason and source, and loads no bus can carry.

A planner reads this page before the others: a day without pings is not a day without buses
(its trips are "não avaliadas", out of ICV, km and infractions), and an implausible load is a
counting error, not crowding."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from dashboard import state
from dashboard.format import format_column, to_integer, to_number, to_percent
from dashboard.queries import quality as q

f = state.filters()
tz = state.timezone()
profile = state.profile()
period = parse_period(f.period)
start, end = period.start, period.end
st.title("Qualidade dos dados")
st.caption(
    "Sem dados não é o mesmo que sem ônibus: viagens sem GPS nem outra evidência, com o "
    "veículo ou o feed da operadora em silêncio, ficam “não avaliadas” e fora do ICV, do km e "
    "das infrações."
)

days: pl.DataFrame = state.load(q.read_coverage_days, start, end, f.operator_id)
outages: pl.DataFrame = state.load(q.read_feed_outages, start, end, f.operator_id)
silent: pl.DataFrame = state.load(q.read_silent_vehicles, start, end, f.operator_id)
c1, c2, c3, c4 = st.columns(4)
if days.height:
    share = float(days["n_reporting"].sum()) / max(float(days["n_vehicles"].sum()), 1.0)
    c1.metric("Veículos-dia com GPS", to_percent(share))
    c2.metric("Veículos-dia sem nenhum registro", to_integer(days["n_dark"].sum()))
else:
    c1.metric("Veículos-dia com GPS", "—")
    c2.metric("Veículos-dia sem nenhum registro", "—")
c3.metric("Interrupções do feed", to_integer(outages.height))
c4.metric(
    "Horas de feed interrompido",
    to_number(outages["duration_s"].sum() / 3600 if outages.height else 0, 1),
)

st.subheader("Cobertura do GPS por dia e operadora")
if days.is_empty():
    state.empty_notice("cobertura do GPS", "pontual match")
else:
    st.dataframe(
        pl.DataFrame(
            [
                format_column(days["service_date"], "date").alias("Dia"),
                days["operator_id"].alias("Operadora"),
                format_column(days["n_vehicles"], "integer").alias("Veículos"),
                format_column(days["n_reporting"], "integer").alias("Com GPS"),
                format_column(days["n_dark"], "integer").alias("Em silêncio"),
                format_column(days["reporting_share"], "percent").alias("Cobertura"),
                format_column(days["n_pings"], "integer").alias("Registros GPS"),
                format_column(days["n_outages"], "integer").alias("Interrupções do feed"),
                format_column(days["outage_s"] / 60, "integer").alias("Minutos interrompidos"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Interrupções do feed das operadoras (BG art. 25)")
if outages.is_empty():
    st.info("Nenhuma interrupção do feed no período.", icon=":material/check_circle:")
else:
    st.dataframe(
        pl.DataFrame(
            [
                format_column(outages["service_date"], "date").alias("Dia"),
                outages["operator_id"].alias("Operadora"),
                format_column(outages["started_at"], "local", tz).alias("Início"),
                format_column(outages["ended_at"], "local", tz).alias("Fim"),
                format_column(outages["duration_s"] / 60, "integer").alias("Duração (min)"),
                format_column(outages["n_trips_not_evaluated"], "integer").alias(
                    "Viagens não avaliadas"
                ),
            ]
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Veículos em silêncio")
if silent.is_empty():
    st.info("Todos os veículos cadastrados enviaram GPS em todos os dias do período.")
else:
    st.dataframe(
        pl.DataFrame(
            [
                silent["vehicle_id"].alias("Veículo"),
                silent["operator_id"].alias("Operadora"),
                format_column(silent["n_dark_days"], "integer").alias("Dias sem GPS"),
                format_column(silent["n_days"], "integer").alias("Dias no período"),
                format_column(silent["last_ping_at"], "local", tz).alias("Último registro"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Cargas fisicamente impossíveis")
limit = profile.crowding.standees_physical_max_per_m2
loads: pl.DataFrame = state.load(
    q.read_implausible_loads, start, end, f.route_ids, float(limit.value)
)
st.caption(
    f"Acima dos assentos mais {to_number(limit.value, 0)} passageiros em pé por m² "
    "(limite de plausibilidade, não da lei): erro de contagem ou de localização dos "
    "embarques, fora dos fatos de lotação."
)
if loads.is_empty():
    st.info("Nenhuma carga acima da capacidade física no período.")
else:
    st.dataframe(
        pl.DataFrame(
            [
                format_column(loads["service_date"], "date").alias("Dia"),
                loads["route_id"].alias("Linha"),
                loads["trip_id"].alias("Viagem"),
                loads["vehicle_id"].alias("Veículo"),
                format_column(loads["max_load"], "integer").alias("Carga máxima"),
                format_column(loads["n_seats"], "integer").alias("Assentos"),
                format_column(loads["physical_capacity"], "integer").alias("Capacidade física"),
                loads["count_source"]
                .replace_strict({"taps": "validações", "apc": "contador"}, default="—")
                .alias("Origem da contagem"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Registros rejeitados (quarentena), por motivo e origem")
rejected: pl.DataFrame = state.load(q.read_quarantine_summary)
if rejected.is_empty():
    st.info("Nenhum registro em quarentena.", icon=":material/check_circle:")
else:
    st.dataframe(
        pl.DataFrame(
            [
                rejected["target_table"].alias("Destino"),
                rejected["source"].alias("Origem"),
                rejected["reason"].alias("Motivo"),
                format_column(rejected["n_records"], "integer").alias("Registros"),
                rejected["example_key"].alias("Exemplo (linha ou mensagem)"),
                format_column(rejected["last_at"], "local", tz).alias("Último"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    st.caption("Consulte os registros com `pontual quarantine`.")
