"""Ao vivo: the vehicles of the real-time feed (`pontual serve`: its GTFS-Realtime vehicle
positions and trip updates as JSON), coloured by delay or by occupancy. Without the server,
the last stored position of each vehicle, with an info box saying how to start it.

Under the vehicles, a stop's next arrivals counting down (the feed server's stop API, read
again every `ARRIVALS_REFRESH_S` seconds by a fragment) and a link to that stop's passenger
page (`/paradas/<stop_id>` on the same server).

The feed's address comes from the settings (PONTUAL_LIVE_URL: one URL, or several separated by
commas to choose from), never from a text box: the dashboard's server fetches it, and a box
would let any user make the server fetch any URL (server-side request forgery, #23.8). An
operadora sees only its own vehicles of the feed."""

from __future__ import annotations

import os
from datetime import datetime

import polars as pl
import streamlit as st

from analytics.live.options import LiveOptions
from core.texts import gettext as _
from core.texts import ngettext
from dashboard import labels, maps, state
from dashboard.format import format_column, to_integer, to_local
from dashboard.queries import filters, network
from dashboard.queries import live as q
from dashboard.queries.scope import read_scope_vehicle_ids
from dashboard.queries.snapshot import ALL

LIVE_URL_ENV = "PONTUAL_LIVE_URL"
DEFAULT_LIVE_URL = "http://127.0.0.1:8080"  # `pontual serve`'s default --http-port
LIVE_TIMEOUT_S = 1.0  # wait this long for the feed before showing the stored positions
COLOUR_BY = {_("Delay"): "delay", _("Occupancy"): "occupancy"}
ACTIVE_MIN = LiveOptions().active_s / 60  # the feed drops a vehicle silent for longer
ARRIVALS_REFRESH_S = 5  # the arrivals' countdown: read the feed's stop API this often
ARRIVING_S = 60  # under this many seconds to go an arrival reads "chegando" (the stop page's)


def _countdown(seconds: int | None, status: str | None) -> str:
    """What the "Chega" column says: 'cancelada', 'chegando' or 'em N min'."""
    if status == "cancelado":
        return _("cancelled")
    if seconds is None:
        return "—"
    if seconds < ARRIVING_S:
        return _("arriving")
    return _("in {n} min", n=to_integer(seconds // 60))


@st.fragment(run_every=ARRIVALS_REFRESH_S)
def _stop_arrivals(base_url: str, stop_id: str, tz: str) -> None:
    """The next arrivals at `stop_id`, read again every ARRIVALS_REFRESH_S seconds."""
    body = q.read_stop_arrivals(base_url, stop_id, LIVE_TIMEOUT_S)
    if body is None:
        st.caption(_("The real-time feed did not answer at {url}.", url=base_url))
        return
    arrivals = q.build_stop_arrivals(body)
    if arrivals.is_empty():
        st.caption(_("No bus expected at this stop for now."))
        return
    countdown = [
        _countdown(n, status)
        for n, status in zip(arrivals["seconds"], arrivals["status"], strict=True)
    ]
    st.dataframe(
        arrivals.select(
            pl.col("route_short_name").fill_null("—").alias(_("Line")),
            pl.col("headsign").fill_null("—").alias(_("Destination")),
            pl.Series(_("Arrives"), countdown, pl.String),
            format_column(arrivals["predicted_at"], "clock", tz).alias(_("Predicted at")),
            format_column(arrivals["planned_at"], "clock", tz).alias(_("Scheduled at")),
            format_column(arrivals["delay_s"], "delay").alias(_("Delay")),
            pl.col("vehicle_id").fill_null("—").alias(_("Vehicle")),
        ),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        _(
            "Predictions of the feed at {time} (its clock: the newest position received); "
            "read again every {seconds} s.",
            time=to_local(datetime.fromisoformat(str(body["generated_at"])), tz, with_seconds=True),
            seconds=to_integer(ARRIVALS_REFRESH_S),
        )
    )


def _stop_arrivals_section(base_url: str, tz: str) -> None:
    """A stop picker, its next arrivals counting down and a link to its passenger page."""
    st.subheader(_("Next arrivals at a stop"))
    stops = q.read_live_stops(base_url, LIVE_TIMEOUT_S)
    if stops is None or stops.is_empty():
        st.caption(
            _(
                "The feed at {url} lists no stops (its stop API, /api/stops, comes with "
                "`pontual serve`).",
                url=base_url,
            )
        )
        return
    ids = stops["stop_id"].to_list()
    labels_by_id = {
        r["stop_id"]: f"{r['stop_name'] or r['stop_id']} ({r['stop_code'] or r['stop_id']})"
        for r in stops.iter_rows(named=True)
    }
    busiest = int(stops["n_arrivals"].fill_null(0).arg_max() or 0)
    c1, c2 = st.columns([4, 2], vertical_alignment="bottom")
    stop_id = c1.selectbox(
        _("Stop"), ids, index=busiest, format_func=labels_by_id.__getitem__, key="live_stop"
    )
    c2.link_button(
        _("Passenger page"),
        q.to_passenger_page_url(base_url, stop_id),
        icon=":material/smartphone:",
    )
    _stop_arrivals(base_url, stop_id, tz)


f = state.filters()
profile = state.profile()
tz = state.timezone()
late_s = profile.trips.late_departure_s.value
early_s = profile.trips.early_departure_s.value
st.title(_("Live"))
c1, c2, c3 = st.columns([4, 2, 1], vertical_alignment="bottom")
live_urls = [
    u.strip() for u in os.environ.get(LIVE_URL_ENV, DEFAULT_LIVE_URL).split(",") if u.strip()
] or [DEFAULT_LIVE_URL]
base_url = c1.selectbox(
    _("Real-time feed (`pontual serve`; set in {variable})", variable=LIVE_URL_ENV),
    live_urls,
    key="live_url",
)
colour_by = COLOUR_BY[c2.radio(_("Colour by"), list(COLOUR_BY), horizontal=True, key="live_by")]
c3.button(_("Refresh"), icon=":material/refresh:", key="live_refresh")
lines: pl.DataFrame = state.load(filters.read_lines)
short = dict(
    zip(
        lines["route_id"].to_list(),
        lines["route_short_name"].fill_null(lines["route_id"]).to_list(),
        strict=True,
    )
)
legend = (
    _(
        "Red: late (more than {late} min) · orange: early (more than {early} min) "
        "· green: on time · grey: no prediction ({basis}).",
        late=to_integer(late_s / 60),
        early=to_integer(early_s / 60),
        basis=labels.to_source(profile.trips.late_departure_s.source),
    )
    if colour_by == "delay"
    else _(
        "From green (many free seats) to red (full), by the GTFS-Realtime occupancy status "
        "the feed estimates from the taps; grey: no information."
    )
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
        ngettext(
            "Real-time feed: {url} · {n} vehicle · latest position {at}",
            "Real-time feed: {url} · {n} vehicles · latest position {at}",
            shown.height,
            url=base_url,
            n=to_integer(shown.height),
            at=to_local(newest, tz, with_seconds=True),  # type: ignore[arg-type]
        )
    )
    if shown.is_empty():
        st.info(
            _(
                "No vehicle received in the last {minutes} min; the feed is at {url} "
                "(`pontual serve`): check that the buses or `pontual replay` publish to "
                "the MQTT broker.",
                minutes=to_integer(ACTIVE_MIN),
                url=base_url,
            )
        )
        _stop_arrivals_section(base_url, tz)  # a cancelled trip still has its arrivals
        st.stop()
    st.pydeck_chart(maps.build_live_deck(shown, routes, basemap), height=520)
    st.caption(legend)
    occupancy = pl.col("occupancy_status").replace_strict(maps.to_occupancy_labels(), default="—")
    st.dataframe(
        shown.select(
            pl.col("vehicle_id").alias(_("Vehicle")),
            pl.col("line").fill_null("—").alias(_("Line")),
            pl.col("trip_id").fill_null("—").alias(_("Trip")),
            format_column(shown["delay_s"], "delay").alias(_("Delay")),
            occupancy.alias(_("Occupancy")),
            format_column(shown["occupancy_percentage"], "integer").alias(_("Occupancy (%)")),
            format_column(shown["timestamp_at"], "clock", tz).alias(_("Position at")),
        ),
        hide_index=True,
        width="stretch",
    )
    _stop_arrivals_section(base_url, tz)
    st.stop()

st.info(
    _(
        "The real-time feed did not answer at {url}. To see the vehicles live, "
        "start the server in another terminal: `pontual serve` (it consumes MQTT "
        "and publishes GTFS-Realtime at {default}; `--http-port` changes the "
        "port) or set the server's address in the dashboard's {variable} "
        "variable. Below, each vehicle's last stored position.",
        url=base_url,
        default=DEFAULT_LIVE_URL,
        variable=LIVE_URL_ENV,
    )
)
last = q.build_live_selection(state.load(q.read_last_positions), route_ids, f.direction)
if last.is_empty():
    state.empty_notice(_("GPS positions"), "pontual ingest avl")
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
    ngettext(
        "Last stored position of {n} vehicle (no delay: the live delay comes from the feed).",
        "Last stored position of {n} vehicles (no delay: the live delay comes from the feed).",
        stored.height,
        n=to_integer(stored.height),
    )
)
st.pydeck_chart(maps.build_live_deck(stored, routes, basemap), height=520)
st.caption(legend)
st.dataframe(
    stored.select(
        pl.col("vehicle_id").alias(_("Vehicle")),
        format_column(stored["event_at"], "local", tz).alias(_("Last position")),
        pl.col("status").alias(
            _("Reported occupancy") if colour_by == "occupancy" else _("Status")
        ),
    ),
    hide_index=True,
    width="stretch",
)
