"""Precisão das previsões: does the live feed tell passengers the truth? (BG art. 25 asks the
operator for a passenger app with online GPS.) The errors of the arrivals the feed published,
scored the next day against the matched stop visits, beside the timetable alone: by horizon,
current vs next trips, line and hour of day."""

from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from core.periods import parse_period
from dashboard import state
from dashboard.format import to_integer, to_number, to_percent
from dashboard.queries import accuracy as q
from dashboard.queries.snapshot import ALL

DIMENSION_TITLES = {
    "horizon": ("Por horizonte", "Horizonte (min)"),
    "trip": ("Viagem atual × próximas viagens", "Viagem"),
    "line": ("Por linha", "Linha"),
    "hour": ("Por hora do dia", "Hora"),
}
TRIP_KEYS = {"current": "atual", "next": "próximas"}

f = state.filters()
period = parse_period(f.period)
st.title("Precisão das previsões")
st.caption(
    "Cada chegada publicada pelo feed ao vivo (`pontual serve`) é comparada, no dia seguinte, "
    "com a passagem observada no ônibus (não interpolada); ao lado, o erro do quadro de "
    "horários sozinho. Erro absoluto em segundos; ganho = 1 − erro do feed ÷ erro do quadro."
)
rows: pl.DataFrame = state.load(q.read_prediction_accuracy, period.start, period.end)
if rows.is_empty():
    st.info(
        "Sem previsões avaliadas neste período. O feed ao vivo (`pontual serve`) registra as "
        "chegadas que publica; depois de `pontual match` do dia, o `pontual serve` seguinte "
        "as avalia contra as passagens observadas."
    )
    st.stop()
summary = q.compute_accuracy_summary(rows)
horizon = q.select_dimension(summary, "horizon")
ten = horizon.filter(pl.col("key") == "10")
days = int(rows["service_date"].n_unique())

c1, c2, c3, c4 = st.columns(4)
c1.metric("Dias avaliados", to_integer(days))
c2.metric("Previsões avaliadas", to_integer(horizon["n_predictions"].sum()))
if ten.height:
    c3.metric(
        "Erro médio a 10 min (s)",
        to_number(ten["mae_s"][0], 0),
        f"quadro: {to_number(ten['timetable_mae_s'][0], 0)} s",
        delta_color="off",
    )
    c4.metric("Ganho sobre o quadro a 10 min", to_percent(ten["gain_vs_timetable"][0]))

for dimension in q.DIMENSIONS:
    part = q.select_dimension(summary, dimension)
    if dimension == "line" and f.route_ids is not None:
        part = part.filter(pl.col("key").is_in(list(f.route_ids)))
    if dimension == "line" and f.route_id != ALL:
        part = part.filter(pl.col("key") == f.route_id)
    title, key_label = DIMENSION_TITLES[dimension]
    st.subheader(title)
    if part.is_empty():
        st.info("Sem previsões avaliadas neste recorte.")
        continue
    if dimension == "trip":
        part = part.with_columns(pl.col("key").replace(TRIP_KEYS))
    elif dimension == "horizon":
        part = part.with_columns(("≥ " + pl.col("key")).alias("key"))
    if dimension in ("horizon", "hour"):
        long = part.select(
            pl.col("key").alias(key_label),
            pl.col("mae_s").alias("Feed ao vivo"),
            pl.col("timetable_mae_s").alias("Quadro de horários"),
        ).unpivot(index=key_label, variable_name="Previsão", value_name="Erro médio (s)")
        st.altair_chart(
            alt.Chart(long.to_pandas())
            .mark_line(point=True)
            .encode(
                x=alt.X(f"{key_label}:N", sort=None),
                y="Erro médio (s):Q",
                color="Previsão:N",
            ),
            width="stretch",
        )
    st.dataframe(
        part.select(
            pl.col("key").alias(key_label),
            pl.col("n_predictions").alias("Previsões"),
            pl.col("mae_s").round(0).alias("Erro médio (s)"),
            pl.col("p50_s").round(0).alias("Mediana (s)"),
            pl.col("p90_s").round(0).alias("P90 (s)"),
            pl.col("bias_s").round(0).alias("Viés (s)"),
            pl.col("timetable_mae_s").round(0).alias("Quadro: erro médio (s)"),
            pl.col("timetable_p90_s").round(0).alias("Quadro: P90 (s)"),
            (pl.col("gain_vs_timetable") * 100).round(1).alias("Ganho (%)"),
        ),
        hide_index=True,
        width="stretch",
    )
if days > 1:
    st.caption(
        "Com vários dias, a mediana e o P90 são a média dos percentis diários ponderada pelo "
        "número de previsões; o erro médio e o viés são exatos."
    )
if f.operator_id != ALL:
    st.caption("Horizonte, hora e viagem atual × próximas: toda a rede (não só a operadora).")
