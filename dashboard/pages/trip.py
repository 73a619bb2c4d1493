"""Viagem: one trip's evidence (BG art. 77) — the map of its pings and stops, the itinerary
with stop-by-stop delays, the outcome and why, and the incident that justifies it if any.

Open directly with `?data=AAAA-MM-DD&viagem=<trip_id>` (the links of the other pages)."""

from __future__ import annotations

from datetime import date

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.texts import gettext as _
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
st.title(_("Trip"))

params = st.query_params
linked_day = params.get("data")
linked_trip = params.get("viagem")
days: list = state.load(line_queries.read_service_dates, start, end)
if linked_day:
    day = date.fromisoformat(linked_day)
    if day not in days:
        days = [day, *days]
if not days:
    state.empty_notice(_("trips (data)"), "pontual match")
    st.stop()
col_day, col_line, col_trip = st.columns(3)
day = col_day.selectbox(
    _("Day"),
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
    state.empty_notice(_("lines (data)"), "pontual gtfs load")
    st.stop()
route_id = col_line.selectbox(
    _("Line"),
    line_ids,
    index=line_ids.index(route_id) if route_id in line_ids else 0,
    key="trip_route",
)
trips: pl.DataFrame = state.load(q.read_trip_ids, day, route_id)
if f.direction is not None and trips.height:
    trips = trips.filter(pl.col("direction_id") == f.direction)
if trips.is_empty():
    state.empty_notice(_("this line's trips on this day"), "pontual match")
    st.stop()
trip_ids = trips["trip_id"].to_list()
starts = format_column(trips["planned_start_at"], "clock", tz).to_list()
trip_labels = {
    t: f"{s} · {line_queries.OUTCOME_LABELS.get(o, o)} · {t}"
    for t, s, o in zip(trip_ids, starts, trips["outcome"].to_list(), strict=True)
}
trip_id = col_trip.selectbox(
    _("Trip"),
    trip_ids,
    index=trip_ids.index(linked_trip) if linked_trip in trip_ids else 0,
    format_func=trip_labels.__getitem__,
    key="trip_id",
)

outcome = state.load(q.read_trip_outcome, day, trip_id)
row = outcome.row(0, named=True)
label = line_queries.OUTCOME_LABELS.get(row["outcome"], row["outcome"])
st.subheader(
    _("Outcome: {outcome} (justified)", outcome=label)
    if row["is_justified"]
    else _("Outcome: {outcome}", outcome=label)
)
st.write(row["reason"])
c1, c2, c3, c4 = st.columns(4)
c1.metric(
    _("Scheduled departure ({day})", day=to_date(day)),
    format_column(outcome["planned_start_at"], "clock", tz)[0][:5],
)
c2.metric(_("Delay at the origin"), to_delay(row["departure_delay_s"]))
c3.metric(_("Route covered"), to_percent(row["coverage_ratio"]))
c4.metric(
    _("Kilometres run / scheduled"),
    f"{to_number((row['distance_run_m'] or 0) / 1000, 2) if row['distance_run_m'] is not None else '—'}"
    f" / {to_number(row['planned_distance_m'] / 1000, 2)}",
)
st.caption(q.to_evidence_text(row))
st.caption(
    _(
        "Vehicle {vehicle} · pings {first} to {last} ({n} GPS records) · trip {trip}",
        vehicle=row["vehicle_id"] or "—",
        first=row["first_ping_id"] or "—",
        last=row["last_ping_id"] or "—",
        n=row["n_pings"] or 0,
        trip=trip_id,
    )
)

incident: pl.DataFrame = state.load(q.read_incident, row["incident_id"])
if incident.height:
    inc = incident.row(0, named=True)
    fields = {
        "id": inc["incident_id"],
        "kind": labels.INCIDENT_KIND_LABELS.get(inc["kind"], inc["kind"]),
        "start": to_local(inc["starts_at"], tz),
        "end": to_local(inc["ends_at"], tz),
        "note": inc.get("note") or _("no remark"),
    }
    st.success(
        _(
            "Incident {id} ({kind}) from {start} to {end}: {note} — approved by the managing body.",
            **fields,
        )
        if inc["is_justified"]
        else _("Incident {id} ({kind}) from {start} to {end}: {note} — not approved.", **fields)
    )
breakdowns: pl.DataFrame = state.load(q.read_trip_breakdowns, day, trip_id)
if breakdowns.height:
    for b in breakdowns.iter_rows(named=True):
        st.warning(
            _(
                "Breakdown at {at}: {evidence}",
                at=to_local(b["started_at"], tz),
                evidence=b["evidence"],
            )
        )

pings: pl.DataFrame = state.load(
    q.read_trip_pings, row["vehicle_id"], row["first_ping_id"], row["last_ping_id"]
)
shape: pl.DataFrame = state.load(q.read_trip_shape, day, trip_id)
stops: pl.DataFrame = state.load(q.read_trip_stops, day, trip_id)
st.subheader(_("Map: route, stops and GPS records"))
current = None
if pings.height > 1:
    # GPS playback: step through the run's fixes; the map marks the chosen one.
    step = st.slider(_("GPS playback (record)"), 1, pings.height, 1, key="trip_playback")
    current = pings.slice(step - 1, 1)
    fix = current.row(0, named=True)
    speed = fix["speed_m_s"]
    st.caption(
        _(
            "Record {id} at {at}",
            id=fix["ping_id"],
            at=to_local(fix["event_at"], tz, with_seconds=True),
        )
        + (f" · {to_number(speed * 3.6, 0)} km/h" if speed is not None else "")
    )
if shape.is_empty() and pings.is_empty():
    state.empty_notice(_("route and GPS"), _("pontual gtfs load and pontual avl load"))
else:
    basemap = maps.read_basemap(state.settings())
    st.pydeck_chart(maps.build_trip_deck(shape, stops, pings, current, basemap), height=420)

st.subheader(_("Route and delay stop by stop"))
if stops.is_empty():
    state.empty_notice(_("route stops"), "pontual gtfs load")
else:
    shown = pl.DataFrame(
        [
            stops["stop_sequence"].alias(_("Order")),
            stops["stop_name"].alias(_("Stop")),
            format_column(stops["dist_m"] / 1000, "number").alias("km"),
            format_column(stops["planned_at"], "clock", tz).alias(_("Scheduled (time)")),
            format_column(stops["arrival_at"], "clock", tz).alias(_("Arrival")),
            format_column(stops["delay_s"], "delay").alias(_("Delay")),
            format_yes_no(stops["is_interpolated"]).alias(_("Interpolated")),
        ]
    )
    state.show_table(shown, name="viagem-paradas", hide_index=True, width="stretch")
    run_stops = stops.filter(pl.col("delay_s").is_not_null()).with_columns(
        (pl.col("delay_s") / 60.0).alias("delay_min")
    )
    if run_stops.height:
        st.altair_chart(charts.build_stop_delays(run_stops), width="stretch")

st.subheader(_("GPS records of the run (evidence, BG art. 77)"))
if pings.is_empty():
    st.info(_("No GPS record supports this trip."))
else:
    state.show_table(
        pl.DataFrame(
            [
                pings["ping_id"].alias(_("Record")),
                format_column(pings["event_at"], "clock", tz).alias(_("Time")),
                pl.Series("Latitude", [to_number(v, 6) for v in pings["lat"].to_list()]),
                pl.Series("Longitude", [to_number(v, 6) for v in pings["lon"].to_list()]),
                format_column(pings["speed_m_s"] * 3.6, "integer").alias(_("Speed (km/h)")),
                pings["event_code"].fill_null("—").alias(_("Event")),
            ]
        ),
        name="viagem-registros-gps",
        hide_index=True,
        width="stretch",
    )
