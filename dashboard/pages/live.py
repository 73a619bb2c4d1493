"""Ao vivo: the vehicles of the real-time feed (`pontual serve`: its GTFS-Realtime vehicle
positions and trip updates as JSON), coloured by delay or by occupancy. Without the server,
the last stored position of each vehicle, with an info box saying how to start it.

The feed's address comes from the settings (PONTUAL_LIVE_URL: one URL, or several separated by
commas to choose from), never from a text box: the dashboard's server fetches it, and a box
would let any user make the server fetch any URL (server-side request forgery, #23.8). An
operadora sees only its own vehicles of the feed."""

from __future__ import annotations

import os

import polars as pl
import streamlit as st

from analytics.live.options import LiveOptions
from dashboard import labels, maps, state
from dashboard.format import format_column, to_integer, to_local
from dashboard.queries import filters, network
from dashboard.queries import live as q
from dashboard.queries.scope import read_scope_vehicle_ids
from dashboard.queries.snapshot import ALL

LIVE_URL_ENV = "PONTUAL_LIVE_URL"
DEFAULT_LIVE_URL = "http://127.0.0.1:8080"  # `pontual serve`'s default --http-port
LIVE_TIMEOUT_S = 1.0  # wait this long for the feed before showing the stored positions
COLOUR_BY = {"Atraso": "delay", "Ocupação": "occupancy"}
ACTIVE_MIN = LiveOptions().active_s / 60  # the feed drops a vehicle silent for longer

f = state.filters()
profile = state.profile()
tz = state.timezone()
late_s = profile.trips.late_departure_s.value
early_s = profile.trips.early_departure_s.value
st.title("Ao vivo")
c1, c2, c3 = st.columns([4, 2, 1], vertical_alignment="bottom")
live_urls = [
    u.strip() for u in os.environ.get(LIVE_URL_ENV, DEFAULT_LIVE_URL).split(",") if u.strip()
] or [DEFAULT_LIVE_URL]
base_url = c1.selectbox(
    f"Feed em tempo real (`pontual serve`; configurado em {LIVE_URL_ENV})",
    live_urls,
    key="live_url",
)
colour_by = COLOUR_BY[c2.radio("Colorir por", list(COLOUR_BY), horizontal=True, key="live_by")]
c3.button("Atualizar", icon=":material/refresh:", key="live_refresh")
lines: pl.DataFrame = state.load(filters.read_lines)
short = dict(
    zip(
        lines["route_id"].to_list(),
        lines["route_short_name"].fill_null(lines["route_id"]).to_list(),
        strict=True,
    )
)
legend = (
    f"Vermelho: atrasado (mais de {to_integer(late_s / 60)} min) · laranja: adiantado (mais de "
    f"{to_integer(early_s / 60)} min) · verde: no horário · cinza: sem previsão "
    f"({labels.to_source(profile.trips.late_departure_s.source)})."
    if colour_by == "delay"
    else "Do verde (muitos assentos livres) ao vermelho (lotado), pelo estado de ocupação "
    "GTFS-Realtime que o feed estima das validações; cinza: sem informação."
)

live = q.read_live_feed(base_url, LIVE_TIMEOUT_S)
own_vehicles: list[str] | None = state.load(read_scope_vehicle_ids)
if live is not None and own_vehicles is not None:  # an operadora: its own vehicles only
    live = live.filter(pl.col("vehicle_id").is_in(own_vehicles))
# The sidebar's lines (one, or those of the operator / lot) and direction: the vehicles on
# them and their itineraries under the vehicles.
route_ids = (f.route_id,) if f.route_id != ALL else f.route_ids
if live is not None:
    live = q.build_live_selection(live, route_ids, f.direction)
routes = network.build_shape_paths(
    state.load(network.read_route_shapes, None, None, route_ids, f.direction)
)
basemap = maps.read_basemap(state.settings())
if live is not None:
    shown = maps.compute_live_colours(
        live.with_columns(
            pl.col("route_id").replace_strict(short, default=pl.col("route_id")).alias("line")
        ),
        colour_by,
        late_s,
        early_s,
    )
    newest = shown["timestamp_at"].max()
    st.caption(
        f"Feed em tempo real: {base_url} · {to_integer(shown.height)} veículos · posição mais "
        f"recente {to_local(newest, tz, with_seconds=True)}"  # type: ignore[arg-type]
    )
    if shown.is_empty():
        st.info(
            f"Nenhum veículo recebido nos últimos {to_integer(ACTIVE_MIN)} min; o feed está em "
            f"{base_url} (`pontual serve`): confira se os ônibus ou o `pontual replay` publicam "
            "no broker MQTT."
        )
        st.stop()
    st.pydeck_chart(maps.build_live_deck(shown, routes, basemap), height=520)
    st.caption(legend)
    occupancy = pl.col("occupancy_status").replace_strict(
        {k: v[0] for k, v in maps.OCCUPANCY_LEVELS.items()}, default="—"
    )
    st.dataframe(
        shown.select(
            pl.col("vehicle_id").alias("Veículo"),
            pl.col("line").fill_null("—").alias("Linha"),
            pl.col("trip_id").fill_null("—").alias("Viagem"),
            format_column(shown["delay_s"], "delay").alias("Atraso"),
            occupancy.alias("Ocupação"),
            format_column(shown["occupancy_percentage"], "integer").alias("Ocupação (%)"),
            format_column(shown["timestamp_at"], "clock", tz).alias("Posição às"),
        ),
        hide_index=True,
        width="stretch",
    )
    st.stop()

st.info(
    f"O feed em tempo real não respondeu em {base_url}. Para ver os veículos ao vivo, inicie "
    "o servidor em outro terminal: `pontual serve` (consome o MQTT e publica GTFS-Realtime em "
    f"{DEFAULT_LIVE_URL}; `--http-port` muda a porta) ou configure o endereço do servidor "
    f"na variável {LIVE_URL_ENV} do painel. Abaixo, a última posição gravada de cada "
    "veículo."
)
last = q.build_live_selection(state.load(q.read_last_positions), route_ids, f.direction)
if last.is_empty():
    state.empty_notice("posições GPS", "pontual ingest avl")
    st.stop()
stored = maps.compute_live_colours(
    last.with_columns(
        pl.lit(None, dtype=pl.Float64).alias("delay_s"),
        pl.col("reported_occupancy").alias("occupancy_status"),
        pl.col("route_id")
        .replace_strict(short, default=pl.col("route_id"))
        .fill_null("—")
        .alias("line"),
    ),
    colour_by,
    late_s,
    early_s,
)
st.caption(
    f"Última posição gravada de {to_integer(stored.height)} veículos (sem atraso: o atraso ao "
    "vivo vem do feed)."
)
st.pydeck_chart(maps.build_live_deck(stored, routes, basemap), height=520)
st.caption(legend)
st.dataframe(
    stored.select(
        pl.col("vehicle_id").alias("Veículo"),
        format_column(stored["event_at"], "local", tz).alias("Última posição"),
        pl.col("status").alias("Ocupação informada" if colour_by == "occupancy" else "Situação"),
    ),
    hide_index=True,
    width="stretch",
)
