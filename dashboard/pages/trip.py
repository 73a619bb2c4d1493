"""Viagem: one trip's evidence (BG art. 77) — the map of its pings and stops, the itinerary
with stop-by-stop delays, the outcome and why, and the incident that justifies it if any.

Open directly with `?data=AAAA-MM-DD&viagem=<trip_id>` (the links of the other pages)."""

from __future__ import annotations

from datetime import date

import polars as pl
import streamlit as st

from core.periods import parse_period
from dashboard import charts, labels, maps, state
from dashboard.format import (
    format_column,
    format_yes_no,
    to_date,
    to_delay,
    to_local,
    to_number,
    to_percent,
)
from dashboard.queries import filters
from dashboard.queries import lines as line_queries
from dashboard.queries import trip as q

f = state.filters()
tz = state.timezone()
period = parse_period(f.period)
start, end = period.start, period.end
st.title("Viagem")

params = st.query_params
linked_day = params.get("data")
linked_trip = params.get("viagem")
days: list = state.load(line_queries.read_service_dates, start, end)
if linked_day:
    day = date.fromisoformat(linked_day)
    if day not in days:
        days = [day, *days]
if not days:
    state.empty_notice("viagens", "pontual match")
    st.stop()
col_day, col_line, col_trip = st.columns(3)
day = col_day.selectbox(
    "Dia",
    days,
    index=days.index(date.fromisoformat(linked_day)) if linked_day else 0,
    format_func=to_date,
    key="trip_day",
)
if linked_trip:
    outcome: pl.DataFrame = state.load(q.read_trip_outcome, day, linked_trip)
    route_id = outcome["route_id"][0] if outcome.height else f.route_id
else:
    route_id = f.route_id
lines: pl.DataFrame = state.load(filters.read_lines)
line_ids = lines["route_id"].to_list()
if f.route_ids is not None:
    line_ids = [r for r in line_ids if r in f.route_ids]
if not line_ids:
    state.empty_notice("linhas", "pontual gtfs load")
    st.stop()
route_id = col_line.selectbox(
    "Linha",
    line_ids,
    index=line_ids.index(route_id) if route_id in line_ids else 0,
    key="trip_route",
)
trips: pl.DataFrame = state.load(q.read_trip_ids, day, route_id)
if f.direction is not None and trips.height:
    trips = trips.filter(pl.col("direction_id") == f.direction)
if trips.is_empty():
    state.empty_notice("viagens desta linha neste dia", "pontual match")
    st.stop()
trip_ids = trips["trip_id"].to_list()
starts = format_column(trips["planned_start_at"], "clock", tz).to_list()
trip_labels = {
    t: f"{s} · {line_queries.OUTCOME_LABELS.get(o, o)} · {t}"
    for t, s, o in zip(trip_ids, starts, trips["outcome"].to_list(), strict=True)
}
trip_id = col_trip.selectbox(
    "Viagem",
    trip_ids,
    index=trip_ids.index(linked_trip) if linked_trip in trip_ids else 0,
    format_func=trip_labels.__getitem__,
    key="trip_id",
)

outcome = state.load(q.read_trip_outcome, day, trip_id)
row = outcome.row(0, named=True)
label = line_queries.OUTCOME_LABELS.get(row["outcome"], row["outcome"])
st.subheader(f"Resultado: {label}" + (" (justificada)" if row["is_justified"] else ""))
st.write(row["reason"])
c1, c2, c3, c4 = st.columns(4)
c1.metric(
    f"Partida programada ({to_date(day)})",
    format_column(outcome["planned_start_at"], "clock", tz)[0][:5],
)
c2.metric("Atraso na origem", to_delay(row["departure_delay_s"]))
c3.metric("Percurso coberto", to_percent(row["coverage_ratio"]))
c4.metric(
    "Km rodados / programados",
    f"{to_number((row['distance_run_m'] or 0) / 1000, 2) if row['distance_run_m'] is not None else '—'}"
    f" / {to_number(row['planned_distance_m'] / 1000, 2)}",
)
st.caption(q.to_evidence_text(row))
st.caption(
    f"Veículo {row['vehicle_id'] or '—'} · pings {row['first_ping_id'] or '—'} a "
    f"{row['last_ping_id'] or '—'} ({row['n_pings'] or 0} registros GPS) · viagem {trip_id}"
)

incident: pl.DataFrame = state.load(q.read_incident, row["incident_id"])
if incident.height:
    inc = incident.row(0, named=True)
    st.success(
        f"Ocorrência {inc['incident_id']} "
        f"({labels.INCIDENT_KIND_LABELS.get(inc['kind'], inc['kind'])}) de {to_local(inc['starts_at'], tz)} a "
        f"{to_local(inc['ends_at'], tz)}: {inc.get('note') or 'sem observação'}"
        + (" — aprovada pelo órgão gestor." if inc["is_justified"] else " — não aprovada.")
    )
breakdowns: pl.DataFrame = state.load(q.read_trip_breakdowns, day, trip_id)
if breakdowns.height:
    for b in breakdowns.iter_rows(named=True):
        st.warning(f"Quebra às {to_local(b['started_at'], tz)}: {b['evidence']}")

pings: pl.DataFrame = state.load(
    q.read_trip_pings, row["vehicle_id"], row["first_ping_id"], row["last_ping_id"]
)
shape: pl.DataFrame = state.load(q.read_trip_shape, day, trip_id)
stops: pl.DataFrame = state.load(q.read_trip_stops, day, trip_id)
st.subheader("Mapa: itinerário, paradas e registros GPS")
current = None
if pings.height > 1:
    # GPS playback: step through the run's fixes; the map marks the chosen one.
    step = st.slider("Reprodução do GPS (registro)", 1, pings.height, 1, key="trip_playback")
    current = pings.slice(step - 1, 1)
    fix = current.row(0, named=True)
    speed = fix["speed_m_s"]
    st.caption(
        f"Registro {fix['ping_id']} às {to_local(fix['event_at'], tz, with_seconds=True)}"
        + (f" · {to_number(speed * 3.6, 0)} km/h" if speed is not None else "")
    )
if shape.is_empty() and pings.is_empty():
    state.empty_notice("itinerário e GPS", "pontual gtfs load e pontual avl load")
else:
    basemap = maps.read_basemap(state.settings())
    st.pydeck_chart(maps.build_trip_deck(shape, stops, pings, current, basemap), height=420)

st.subheader("Itinerário e atraso parada a parada")
if stops.is_empty():
    state.empty_notice("paradas do itinerário", "pontual gtfs load")
else:
    shown = pl.DataFrame(
        [
            stops["stop_sequence"].alias("Ordem"),
            stops["stop_name"].alias("Parada"),
            format_column(stops["dist_m"] / 1000, "number").alias("km"),
            format_column(stops["planned_at"], "clock", tz).alias("Programado"),
            format_column(stops["arrival_at"], "clock", tz).alias("Chegada"),
            format_column(stops["delay_s"], "delay").alias("Atraso"),
            format_yes_no(stops["is_interpolated"]).alias("Interpolado"),
        ]
    )
    st.dataframe(shown, hide_index=True, width="stretch")
    run_stops = stops.filter(pl.col("delay_s").is_not_null()).with_columns(
        (pl.col("delay_s") / 60.0).alias("delay_min")
    )
    if run_stops.height:
        st.altair_chart(charts.build_stop_delays(run_stops), width="stretch")

st.subheader("Registros GPS da corrida (evidência, BG art. 77)")
if pings.is_empty():
    st.info("Nenhum registro GPS sustenta esta viagem.")
else:
    st.dataframe(
        pl.DataFrame(
            [
                pings["ping_id"].alias("Registro"),
                format_column(pings["event_at"], "clock", tz).alias("Hora"),
                pl.Series("Latitude", [to_number(v, 6) for v in pings["lat"].to_list()]),
                pl.Series("Longitude", [to_number(v, 6) for v in pings["lon"].to_list()]),
                format_column(pings["speed_m_s"] * 3.6, "integer").alias("Velocidade (km/h)"),
                pings["event_code"].fill_null("—").alias("Evento"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
