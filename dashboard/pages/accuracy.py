"""Precisão das previsões: does the live feed tell passengers the truth? (BG art. 25 asks the
operator for a passenger app with online GPS.) The errors of the arrivals the feed published,
scored the next day against the matched stop visits, beside the timetable alone: by horizon,
current vs next trips, line and hour of day."""

from __future__ import annotations

import altair as alt
import polars as pl
import streamlit as st

from core.periods import parse_period
from core.texts import gettext as _
from dashboard import state
from dashboard.format import to_integer, to_number, to_percent
from dashboard.queries import accuracy as q
from dashboard.queries.snapshot import ALL

DIMENSION_TITLES = {
    "horizon": (_("By horizon"), _("Horizon (min)")),
    "trip": (_("Current trip × next trips"), _("Trip")),
    "line": (_("By line"), _("Line")),
    "hour": (_("By hour of day"), _("Hour")),
}
TRIP_KEYS = {"current": _("current (trip)"), "next": _("next (trips)")}

f = state.filters()
period = parse_period(f.period)
st.title(_("Prediction accuracy"))
st.caption(
    _(
        "Each arrival the live feed published (`pontual serve`) is compared, the "
        "next day, with the bus's observed passage (not interpolated); beside it, "
        "the error of the timetable alone. Absolute error in seconds; gain = 1 − "
        "the feed's error ÷ the timetable's error."
    )
)
rows: pl.DataFrame = state.load(q.read_prediction_accuracy, period.start, period.end)
if rows.is_empty():
    st.info(
        _(
            "No predictions evaluated in this period. The live feed (`pontual serve`) "
            "logs the arrivals it publishes; after the day's `pontual match`, the "
            "next `pontual serve` scores them against the observed passages."
        )
    )
    st.stop()
summary = q.compute_accuracy_summary(rows)
horizon = q.select_dimension(summary, "horizon")
ten = horizon.filter(pl.col("key") == "10")
days = int(rows["service_date"].n_unique())

c1, c2, c3, c4 = st.columns(4)
c1.metric(_("Days evaluated"), to_integer(days))
c2.metric(_("Predictions evaluated"), to_integer(horizon["n_predictions"].sum()))
if ten.height:
    c3.metric(
        _("Mean error at 10 min (s)"),
        to_number(ten["mae_s"][0], 0),
        _("timetable: {seconds} s", seconds=to_number(ten["timetable_mae_s"][0], 0)),
        delta_color="off",
    )
    c4.metric(_("Gain over the timetable at 10 min"), to_percent(ten["gain_vs_timetable"][0]))

for dimension in q.DIMENSIONS:
    part = q.select_dimension(summary, dimension)
    if dimension == "line" and f.route_ids is not None:
        part = part.filter(pl.col("key").is_in(list(f.route_ids)))
    if dimension == "line" and f.route_id != ALL:
        part = part.filter(pl.col("key") == f.route_id)
    title, key_label = DIMENSION_TITLES[dimension]
    st.subheader(title)
    if part.is_empty():
        st.info(_("No predictions evaluated in this cut."))
        continue
    if dimension == "trip":
        part = part.with_columns(pl.col("key").replace(TRIP_KEYS))
    elif dimension == "horizon":
        part = part.with_columns(("≥ " + pl.col("key")).alias("key"))
    error, kind = _("Mean error (s)"), _("Prediction")
    if dimension in ("horizon", "hour"):
        long = part.select(
            pl.col("key").alias(key_label),
            pl.col("mae_s").alias(_("Live feed")),
            pl.col("timetable_mae_s").alias(_("Timetable")),
        ).unpivot(index=key_label, variable_name=kind, value_name=error)
        st.altair_chart(
            alt.Chart(long.to_pandas())
            .mark_line(point=True)
            .encode(
                x=alt.X(f"{key_label}:N", sort=None),
                y=f"{error}:Q",
                color=f"{kind}:N",
            ),
            width="stretch",
        )
    state.show_table(
        part.select(
            pl.col("key").alias(key_label),
            pl.col("n_predictions").alias(_("Predictions")),
            pl.col("mae_s").round(0).alias(error),
            pl.col("p50_s").round(0).alias(_("Median (s)")),
            pl.col("p90_s").round(0).alias("P90 (s)"),
            pl.col("bias_s").round(0).alias(_("Bias (s)")),
            pl.col("timetable_mae_s").round(0).alias(_("Timetable: mean error (s)")),
            pl.col("timetable_p90_s").round(0).alias(_("Timetable: P90 (s)")),
            (pl.col("gain_vs_timetable") * 100).round(1).alias(_("Gain (%)")),
        ),
        name=f"precisao-{dimension}",
        hide_index=True,
        width="stretch",
    )
if days > 1:
    st.caption(
        _(
            "Over several days, the median and the P90 are the mean of the daily "
            "percentiles weighted by the number of predictions; the mean error and "
            "the bias are exact."
        )
    )
if f.operator_id != ALL:
    st.caption(
        _("Horizon, hour and current × next trip: the whole network (not only the operator).")
    )
