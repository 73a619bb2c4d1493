"""Lotação: where and when buses are over the crowding limit (BG art. 59: seats plus the
profile's standees per m²), the extra trips needed (art. 59 §1), and a run's load profile
with its seats and standing limit drawn. Reads the crowding job's tables (`crowding_summary`,
`trip_crowding`, `trip_loads`)."""

from __future__ import annotations

from datetime import date

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.texts import gettext as _
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
st.title(_("Crowding"))
st.caption(
    _(
        "Crowding limit: every seat taken plus {standees} standing passengers per "
        "m² ({basis}). Times in {tz}.",
        standees=to_number(limit.value, 1),
        basis=labels.to_citation(limit),
        tz=tz,
    )
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

st.subheader(_("Trips over the limit by line and hour"))
cells: pl.DataFrame = state.load(q.read_crowding_heatmap, start, end, route_ids, f.direction, tz)
if cells.is_empty():
    state.empty_notice(_("crowding (data)"), fill)
else:
    n_over, n_trips = int(cells["n_over_limit"].sum()), int(cells["n_trips"].sum())
    c1, c2, c3 = st.columns(3)
    c1.metric(_("Trips with a load profile"), to_integer(n_trips))
    c2.metric(_("Over the limit"), to_integer(n_over))
    c3.metric(_("Share over the limit"), to_percent(n_over / n_trips if n_trips else None))
    labelled = cells.with_columns(
        pl.col("route_id").replace_strict(names, default=pl.col("route_id")).alias("line")
    )
    st.altair_chart(charts.build_heatmap(labelled), width="stretch")
    st.caption(
        _(
            "Each cell: trips that left in that hour (every day of the period) and "
            "the share of them with some segment over the limit."
        )
    )

st.subheader(_("Extra trips needed (art. 59 §1)"))
actions: pl.DataFrame = state.load(q.read_crowding_actions, start, end, route_ids, f.direction)
share_max = crowding.over_limit_trip_share_max
if actions.is_empty():
    if cells.is_empty():
        state.empty_notice(_("crowding summary"), fill)
    else:
        st.success(
            _(
                "No hour band needs reinforcement: the share of trips over the limit does "
                "not exceed {share} ({basis}).",
                share=to_percent(share_max.value, 0),
                basis=labels.to_citation(share_max),
            )
        )
else:
    n_days = int(actions["n_action_days"][0])
    extra = int(actions["extra_trips_total"][0])
    c1, c2, c3 = st.columns(3)
    c1.metric(_("Line × hour bands needing reinforcement"), to_integer(actions["n_actions"][0]))
    c2.metric(_("Extra trips in the period"), to_integer(extra))
    c3.metric(_("Extra trips per day (mean)"), to_number(extra / n_days if n_days else None, 1))
    st.caption(
        _(
            "Reinforcement needed when the share of trips over the limit exceeds "
            "{share} ({basis}). Trips needed = passengers on the hour's busiest "
            "segment ÷ capacity at the limit; when the current trips are enough, the "
            "larger vehicle that solves it is named.",
            share=to_percent(share_max.value, 0),
            basis=labels.to_citation(share_max),
        )
    )
    shown = actions.with_columns(
        format_column(actions["service_date"], "date").alias(_("Day")),
        pl.col("route_id").replace_strict(names, default=pl.col("route_id")).alias(_("Line")),
        pl.col("direction_id")
        .replace_strict({0: _("outbound"), 1: _("return (direction)")}, default="—")
        .alias(_("Direction")),
        format_column(actions["hour_at"], "clock", tz).str.slice(0, 5).alias(_("Hour")),
        pl.col("n_trips").alias(_("Trips")),
        pl.col("n_over_limit").alias(_("Over the limit")),
        format_column(actions["over_limit_share"], "percent").alias(_("Share")),
        format_column(actions["max_standees_per_m2"], "number").alias(_("Max. standing/m²")),
        pl.concat_str(
            pl.coalesce("worst_from_stop_name", "worst_from_stop_id"),
            pl.lit(" → "),
            pl.coalesce("worst_to_stop_name", "worst_to_stop_id"),
        ).alias(_("Busiest segment")),
        format_column(actions["peak_segment_load"], "integer").alias(
            _("Passengers on the segment")
        ),
        format_column(actions["capacity_at_limit"], "integer").alias(_("Capacity per trip")),
        pl.col("n_trips_needed").alias(_("Trips needed")),
        pl.col("extra_trips_needed").alias(_("Extra trips")),
        pl.col("larger_vehicle_type").fill_null("—").alias(_("Larger vehicle")),
    ).select(
        _("Day"),
        _("Line"),
        _("Direction"),
        _("Hour"),
        _("Trips"),
        _("Over the limit"),
        _("Share"),
        _("Max. standing/m²"),
        _("Busiest segment"),
        _("Passengers on the segment"),
        _("Capacity per trip"),
        _("Trips needed"),
        _("Extra trips"),
        _("Larger vehicle"),
    )
    state.show_table(shown, name="viagens-extras", hide_index=True, width="stretch")
    if actions["n_actions"][0] > actions.height:
        st.caption(
            _(
                "The {shown} most serious bands of {total}.",
                shown=to_integer(actions.height),
                total=to_integer(actions["n_actions"][0]),
            )
        )

st.subheader(_("Load profile of a trip"))
crowded: pl.DataFrame = state.load(q.read_crowded_trips, start, end, route_ids, f.direction)
if crowded.is_empty():
    state.empty_notice(_("load by stop"), fill)
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
    k: _(
        "{day} {clock} · line {line} · vehicle {vehicle} · max. {load} on board, "
        "{standees} standing/m²",
        day=to_date(k[0]),
        clock=c,
        line=r,
        vehicle=k[1],
        load=to_number(m, 0),
        standees=to_number(s, 1),
    )
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
    _("Trip (most crowded first)"), keys, format_func=trip_labels.__getitem__, key="crowd_trip"
)
run = crowded.row(keys.index(chosen), named=True)
loads: pl.DataFrame = state.load(q.read_trip_loads, *chosen)
seats, area = run["n_seats"], run["standing_area_m2"]
standing_limit = seats + area * limit.value if seats is not None and area is not None else None
c1, c2, c3, c4 = st.columns(4)
c1.metric(_("Seats"), to_integer(seats))
c2.metric(_("Standing area"), f"{to_number(area, 1)} m²")
c3.metric(_("Limit (seats + standing)"), to_number(standing_limit, 0))
c4.metric(_("Most on board"), to_number(run["max_load"], 0))
st.altair_chart(
    charts.build_load_profile(loads, "load_after", seats, standing_limit), width="stretch"
)
st.caption(
    _(
        "Trip {trip} · capacity: {source}. Passengers estimated from the taps (chaining of "
        "each card's trips).",
        trip=run["trip_id"],
        source={"register": _("fleet register"), "type_fallback": _("vehicle type default")}.get(
            run["capacity_source"], _("unknown (capacity)")
        ),
    )
)
state.show_table(
    loads.select(
        pl.col("stop_sequence").alias(_("Order")),
        pl.coalesce("stop_name", "stop_id").alias(_("Stop")),
        format_column(loads["n_boardings"], "number").alias(_("Boardings")),
        format_column(loads["n_alightings"], "number").alias(_("Alightings")),
        format_column(loads["load_after"], "number").alias(_("On board when leaving")),
        format_column(loads["standees_per_m2"], "number").alias(_("Standing/m²")),
        format_yes_no(pl.col("is_over_limit")).alias(_("Over the limit")),
        pl.col("los").alias(_("Level of service (TCQSM)")),
    ),
    name="perfil-de-carga",
    hide_index=True,
    width="stretch",
)
