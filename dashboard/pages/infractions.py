"""Infrações sugeridas: detected facts mapped to the profile's infractions catalogue (BG Anexo
I) with their evidence and fine in URM. Suggestions for a human inspector, never fines."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.texts import gettext as _
from dashboard import state
from dashboard.format import format_column, format_yes_no, to_integer, to_number
from dashboard.queries import infractions as q

f = state.filters()
tz = state.timezone()
period = parse_period(f.period)
start, end = period.start, period.end
unit = state.profile().infractions.currency_unit.value
st.title(_("Suggested infractions"))
st.warning(
    _(
        "Suggestions for the managing body's inspector to examine: they are not "
        "infraction notices. Each item carries its evidence (trips, times, GPS "
        "records) to check."
    )
)

rows: pl.DataFrame = state.load(q.read_suggested_infractions, start, end, f.operator_id)
if rows.is_empty():
    state.empty_notice(_("suggested infractions"), f"pontual indices --period {f.period}")
    st.stop()

c1, c2 = st.columns(2)
c1.metric(_("Suggestions in the period"), to_integer(rows.height))
c2.metric(_("Total ({unit})", unit=unit), to_number(rows["urm"].sum(), 1))

# The evidence link opens the first trip's page with its map, pings and stop delays.
first_trip = pl.col("trip_ids").str.split(",").list.first().str.strip_chars()
rows = rows.with_columns(
    pl.when(first_trip.is_not_null() & (first_trip != ""))
    .then(pl.format("viagem?data={}&viagem={}", pl.col("occurred_on"), first_trip))
    .alias("evidência")
)
names = {
    "group": _("Group"),
    "item": _("Item (Anexo I)"),
    "description": _("Infraction"),
    "operator_id": _("Operator"),
    "route_id": _("Line"),
    "vehicle_id": _("Vehicle"),
    "occurred_on": _("Day"),
    "occurred_at": _("Time"),
    "fact": _("Fact found"),
    "evidence": _("Means of proof (art. 77)"),
    "is_repeat": _("Repeat"),
    "urm": _("Fine ({unit})", unit=unit),
    "status": _("Status"),
    "source": _("Legal ground"),
    "evidência": "evidência",
}
shown = rows.select(list(names))
formats = {"occurred_on": "date", "occurred_at": "clock", "urm": "number"}
shown = shown.with_columns(format_column(shown[c], kind, tz) for c, kind in formats.items())
shown = shown.with_columns(
    pl.col("route_id", "vehicle_id").fill_null("—"),
    format_yes_no(pl.col("is_repeat")),
)
config = {"evidência": st.column_config.LinkColumn(_("Trip"), display_text=_("open trip"))}
state.show_table(
    shown.rename(names, strict=False),
    name="infracoes-sugeridas",
    hide_index=True,
    width="stretch",
    column_config=config,
)
