"""Qualidade dos dados: GPS coverage per day and operator, silent vehicles, operator feed
outages (BG art. 25), rejected records by reason and source, and loads no bus can carry.

A planner reads this page before the others: a day without pings is not a day without buses
(its trips are "não avaliadas", out of ICV, km and infractions), and an implausible load is a
counting error, not crowding."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.texts import gettext as _
from dashboard import state
from dashboard.format import format_column, to_integer, to_number, to_percent
from dashboard.queries import quality as q

f = state.filters()
tz = state.timezone()
profile = state.profile()
period = parse_period(f.period)
start, end = period.start, period.end
st.title(_("Data quality"))
st.caption(
    _(
        "No data is not the same as no bus: trips without GPS or other evidence, "
        "with the vehicle or the operator's feed silent, are “not evaluated” and "
        "left out of the ICV, the km and the infractions."
    )
)

days: pl.DataFrame = state.load(q.read_coverage_days, start, end, f.operator_id)
outages: pl.DataFrame = state.load(q.read_feed_outages, start, end, f.operator_id)
silent: pl.DataFrame = state.load(q.read_silent_vehicles, start, end, f.operator_id)
c1, c2, c3, c4 = st.columns(4)
if days.height:
    share = float(days["n_reporting"].sum()) / max(float(days["n_vehicles"].sum()), 1.0)
    c1.metric(_("Vehicle-days with GPS"), to_percent(share))
    c2.metric(_("Vehicle-days without any record"), to_integer(days["n_dark"].sum()))
else:
    c1.metric(_("Vehicle-days with GPS"), "—")
    c2.metric(_("Vehicle-days without any record"), "—")
c3.metric(_("Feed outages"), to_integer(outages.height))
c4.metric(
    _("Hours of feed outage"),
    to_number(outages["duration_s"].sum() / 3600 if outages.height else 0, 1),
)

st.subheader(_("GPS coverage by day and operator"))
if days.is_empty():
    state.empty_notice(_("GPS coverage"), "pontual match")
else:
    state.show_table(
        pl.DataFrame(
            [
                format_column(days["service_date"], "date").alias(_("Day")),
                days["operator_id"].alias(_("Operator")),
                format_column(days["n_vehicles"], "integer").alias(_("Vehicles")),
                format_column(days["n_reporting"], "integer").alias(_("With GPS")),
                format_column(days["n_dark"], "integer").alias(_("Silent")),
                format_column(days["reporting_share"], "percent").alias(_("Coverage")),
                format_column(days["n_pings"], "integer").alias(_("GPS records")),
                format_column(days["n_outages"], "integer").alias(_("Feed outages")),
                format_column(days["outage_s"] / 60, "integer").alias(_("Minutes of outage")),
            ]
        ),
        name="cobertura-gps",
        hide_index=True,
        width="stretch",
    )

st.subheader(_("Operators' feed outages (BG art. 25)"))
if outages.is_empty():
    st.info(_("No feed outage in the period."), icon=":material/check_circle:")
else:
    state.show_table(
        pl.DataFrame(
            [
                format_column(outages["service_date"], "date").alias(_("Day")),
                outages["operator_id"].alias(_("Operator")),
                format_column(outages["started_at"], "local", tz).alias(_("Start")),
                format_column(outages["ended_at"], "local", tz).alias(_("End")),
                format_column(outages["duration_s"] / 60, "integer").alias(_("Duration (min)")),
                format_column(outages["n_trips_not_evaluated"], "integer").alias(
                    _("Trips not evaluated")
                ),
            ]
        ),
        name="falhas-do-feed",
        hide_index=True,
        width="stretch",
    )

st.subheader(_("Silent vehicles"))
if silent.is_empty():
    st.info(_("Every registered vehicle sent GPS on every day of the period."))
else:
    state.show_table(
        pl.DataFrame(
            [
                silent["vehicle_id"].alias(_("Vehicle")),
                silent["operator_id"].alias(_("Operator")),
                format_column(silent["n_dark_days"], "integer").alias(_("Days without GPS")),
                format_column(silent["n_days"], "integer").alias(_("Days in the period")),
                format_column(silent["last_ping_at"], "local", tz).alias(_("Last record")),
            ]
        ),
        name="veiculos-silenciosos",
        hide_index=True,
        width="stretch",
    )

st.subheader(_("Physically impossible loads"))
limit = profile.crowding.standees_physical_max_per_m2
loads: pl.DataFrame = state.load(
    q.read_implausible_loads, start, end, f.route_ids, float(limit.value)
)
st.caption(
    _(
        "Above the seats plus {standees} standing passengers per m² (a "
        "plausibility limit, not the law's): an error counting or placing the "
        "boardings, left out of the crowding facts.",
        standees=to_number(limit.value, 0),
    )
)
if loads.is_empty():
    st.info(_("No load above the physical capacity in the period."))
else:
    state.show_table(
        pl.DataFrame(
            [
                format_column(loads["service_date"], "date").alias(_("Day")),
                loads["route_id"].alias(_("Line")),
                loads["trip_id"].alias(_("Trip")),
                loads["vehicle_id"].alias(_("Vehicle")),
                format_column(loads["max_load"], "integer").alias(_("Maximum load")),
                format_column(loads["n_seats"], "integer").alias(_("Seats")),
                format_column(loads["physical_capacity"], "integer").alias(_("Physical capacity")),
                loads["count_source"]
                .replace_strict(
                    {"taps": _("taps (count source)"), "apc": _("passenger counter")}, default="—"
                )
                .alias(_("Count source")),
            ]
        ),
        name="lotacoes-impossiveis",
        hide_index=True,
        width="stretch",
    )

st.subheader(_("Rejected records (quarantine), by reason and source"))
rejected: pl.DataFrame = state.load(q.read_quarantine_summary)
if rejected.is_empty():
    st.info(_("No record in quarantine."), icon=":material/check_circle:")
else:
    state.show_table(
        pl.DataFrame(
            [
                rejected["target_table"].alias(_("Target table")),
                rejected["source"].alias(_("Source")),
                rejected["reason"].alias(_("Reason")),
                format_column(rejected["n_records"], "integer").alias(_("Records")),
                rejected["example_key"].alias(_("Example (line or message)")),
                format_column(rejected["last_at"], "local", tz).alias(_("Latest")),
            ]
        ),
        name="registros-rejeitados",
        hide_index=True,
        width="stretch",
    )
    st.caption(_("Look the records up with `pontual quarantine`."))
