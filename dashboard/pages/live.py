"""Ao vivo: the vehicles of the real-time feed (`pontual serve`), coloured by delay and sized
by occupancy. Without the feed running, the last stored position of each vehicle."""

from __future__ import annotations

import os

import polars as pl
import streamlit as st

from dashboard import data, maps, state
from dashboard.format import format_column, to_integer

LIVE_URL_ENV = "PONTUAL_LIVE_URL"
DEFAULT_LIVE_URL = "http://127.0.0.1:8000/vehicles.json"
LIVE_TIMEOUT_S = 1.0  # wait this long for the feed before showing the stored positions

state.filters()
profile = state.profile()
tz = state.timezone()
st.title("Ao vivo")
url = os.environ.get(LIVE_URL_ENV, DEFAULT_LIVE_URL)
live = data.read_live_vehicles(url, LIVE_TIMEOUT_S)
if live.height:
    st.caption(f"Feed em tempo real: {url} · {to_integer(live.height)} veículos")
    st.pydeck_chart(
        maps.build_live_deck(
            live, profile.trips.late_departure_s.value, profile.trips.early_departure_s.value
        ),
        height=520,
    )
    st.caption("Vermelho: atrasado · laranja: adiantado · verde: no horário · cinza: sem previsão.")
    st.dataframe(live, hide_index=True, width="stretch")
    st.stop()

st.info(
    f"O feed em tempo real não respondeu em {url}. Inicie `pontual serve` (ou defina "
    f"{LIVE_URL_ENV}) para ver os veículos ao vivo; abaixo, a última posição gravada de cada "
    "veículo."
)
last: pl.DataFrame = state.load("read_last_positions")
if last.is_empty():
    state.empty_notice("posições GPS", "pontual avl load")
    st.stop()
shown = last.with_columns(
    pl.lit(None, dtype=pl.Float64).alias("delay_s"),
    pl.lit(None, dtype=pl.Float64).alias("load_ratio"),
    format_column(last["event_at"], "local", tz).alias("label"),
)
st.pydeck_chart(
    maps.build_live_deck(
        shown, profile.trips.late_departure_s.value, profile.trips.early_departure_s.value
    ),
    height=520,
)
st.dataframe(
    shown.select(
        pl.col("vehicle_id").alias("Veículo"),
        pl.col("label").alias("Última posição"),
        pl.col("reported_occupancy").alias("Ocupação informada"),
    ),
    hide_index=True,
    width="stretch",
)
