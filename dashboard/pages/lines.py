"""Linhas: trip outcomes per line for a day, the Marey diagram of a line, its origin delay
distribution, and headways / excess waiting time / bunching on frequent lines."""

from __future__ import annotations

import polars as pl
import streamlit as st

from analytics.matching.headways import compute_bunching_by_hour
from core.periods import parse_period
from core.texts import gettext as _
from core.texts import ngettext
from dashboard import charts, labels, maps, state
from dashboard.format import (
    format_column,
    format_yes_no,
    to_date,
    to_integer,
    to_number,
    to_percent,
    to_period,
)
from dashboard.queries import filters, network
from dashboard.queries import lines as q
from dashboard.queries.snapshot import ALL

f = state.filters()
tz = state.timezone()
period = parse_period(f.period)
start, end = period.start, period.end
st.title(_("Lines"))
st.caption(_("{period} · times in {tz}", period=to_period(f.period), tz=tz))

days: list = state.load(q.read_service_dates, start, end)
if not days:
    state.empty_notice(_("trips run (data)"), "pontual match")
    st.stop()
st.subheader(
    _("Lines in the period — worst fulfilment first ({period})", period=to_period(f.period))
)
period_counts: pl.DataFrame = state.load(
    q.read_outcome_counts, start, end, f.route_ids, f.direction
)
ranking = q.build_line_ranking(period_counts)
if ranking.height:
    st.dataframe(
        pl.DataFrame(
            [
                ranking["route_id"].alias(_("Line")),
                format_column(ranking["fulfilment"], "percent").alias(_("Fulfilment")),
                format_column(ranking["punctuality"], "percent").alias(_("Punctuality")),
                format_column(ranking["n_programmed"], "integer").alias(_("Scheduled")),
                format_column(ranking["n_evaluated"], "integer").alias(_("Evaluated")),
                format_column(ranking["n_run"], "integer").alias(_("Run")),
                format_column(ranking["n_suppressed"], "integer").alias(_("Suppressed")),
                format_column(ranking["n_partial"], "integer").alias(_("Partial")),
                format_column(ranking["evaluated_share"], "percent").alias(_("With data")),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    st.caption(
        _(
            "Fulfilment = run ÷ evaluated; trips not evaluated (no data) are left out "
            "of the count, they do not count as suppressed."
        )
    )

st.subheader(_("Network map ({period})", period=to_period(f.period)))
map_by = st.radio(
    _("Colour by"),
    list(maps.NETWORK_COLOURS),
    format_func=lambda by: _(maps.NETWORK_COLOURS[by]),
    horizontal=True,
    key="lines_map_by",
)
route_ids = (f.route_id,) if f.route_id != ALL else f.route_ids
shapes = network.build_shape_paths(
    state.load(network.read_route_shapes, start, end, route_ids, f.direction)
)
if shapes.is_empty():
    state.empty_notice(_("the lines' routes"), "pontual gtfs load")
else:
    names: pl.DataFrame = state.load(filters.read_lines)
    shapes = shapes.join(
        names.select("route_id", pl.coalesce("route_short_name", "route_id").alias("line")),
        on="route_id",
        how="left",
    ).with_columns(pl.col("line").fill_null(pl.col("route_id")))
    shares = (
        ranking
        if map_by == "punctuality"
        else state.load(network.read_line_crowding, start, end, route_ids)
    )
    basemap = maps.read_basemap(state.settings())
    coloured = maps.compute_network_colours(shapes, shares, map_by)
    st.pydeck_chart(maps.build_network_deck(coloured, basemap), height=520)
    st.caption(maps.to_network_legend(map_by))

day = st.selectbox(_("Day"), days, format_func=to_date, key="lines_day")

st.subheader(_("Trip outcomes on {day}", day=to_date(day)))
counts: pl.DataFrame = state.load(q.read_outcome_counts, day, day, f.route_ids, f.direction)
if f.route_id != ALL and counts.height:
    counts = counts.filter(pl.col("route_id") == f.route_id)
if counts.is_empty():
    state.empty_notice(_("this day's trips"), "pontual match")
else:
    named = {"route_id": _("Line"), "n_programmed": _("Scheduled")}
    named.update({f"n_{k}": v.capitalize() for k, v in q.OUTCOME_LABELS.items()})
    named["n_justified"] = _("Justified")
    st.dataframe(
        counts.with_columns(
            format_column(counts[c], "integer") for c in counts.columns if c != "route_id"
        ).rename(named),
        hide_index=True,
        width="stretch",
    )

lines = counts["route_id"].to_list() if counts.height else []
if not lines:
    st.stop()
default = lines.index(f.route_id) if f.route_id in lines else 0
route_id = st.selectbox(_("Line for the detail"), lines, index=default, key="lines_route")

trips: pl.DataFrame = state.load(q.read_day_outcomes, day, route_id, f.direction)
st.subheader(_("Trips of line {line}", line=route_id))
if trips.height:
    shown = pl.DataFrame(
        [
            format_column(trips["planned_start_at"], "clock", tz).alias(_("Scheduled departure")),
            format_column(trips["actual_start_at"], "clock", tz).alias(_("Actual departure")),
            trips["outcome"].replace(q.OUTCOME_LABELS).alias(_("Outcome")),
            format_column(trips["departure_delay_s"], "delay").alias(_("Delay at the origin")),
            trips["vehicle_id"].fill_null("—").alias(_("Vehicle")),
            format_yes_no(trips["is_justified"]).alias(_("Justified (trip)")),
            trips["reason"].alias(_("Reason")),
            pl.Series(_("Trip"), [q.to_trip_link(day, t) for t in trips["trip_id"].to_list()]),
        ]
    )
    outcome_filter = st.multiselect(
        _("Outcomes"),
        list(q.OUTCOME_LABELS.values()),
        key="lines_outcomes",
        placeholder=_("all outcomes"),
    )
    if outcome_filter:
        shown = shown.filter(pl.col(_("Outcome")).is_in(outcome_filter))
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        column_config={
            _("Trip"): st.column_config.LinkColumn(
                _("Trip"), display_text=r"viagem=(.*)$", help=_("opens the trip's page")
            )
        },
    )

bunching_max = state.profile().trips.bunching_max_ratio
bunching: pl.DataFrame = state.load(q.read_bunching, start, end, route_id, bunching_max)
if bunching.height and f.direction is not None:
    bunching = bunching.filter(pl.col("direction_id") == f.direction)

st.subheader(_("Marey diagram (time × distance)"))
points: pl.DataFrame = state.load(q.read_marey, day, route_id, f.direction)
if points.is_empty():
    state.empty_notice(_("timetables and stop visits"), _("pontual gtfs load and pontual match"))
else:
    st.caption(
        _(
            "Dashed: scheduled trips, in their outcome's colour; solid: trips run "
            "(GPS), one colour per vehicle; ✕: breakdown, or where a vehicle began to "
            "run bunched behind another (the tooltip says which)."
        )
    )
    breakdowns: pl.DataFrame = state.load(q.read_line_breakdowns, day, route_id)
    markers = (
        pl.concat(
            [
                m
                for m in (
                    q.build_marey_markers(points, breakdowns),
                    q.build_bunching_markers(bunching, day),
                )
                if m.height
            ],
            how="vertical_relaxed",
        )
        if breakdowns.height or bunching.height
        else pl.DataFrame()
    )
    for direction in sorted(points["direction_id"].drop_nulls().unique().to_list()):
        st.markdown(
            _("**Outbound ({direction})**", direction=direction)
            if direction == 0
            else _("**Return ({direction})**", direction=direction)
        )
        part = points.filter(pl.col("direction_id") == direction)
        marks = markers.filter(pl.col("direction_id") == direction) if markers.height else markers
        st.altair_chart(
            charts.build_marey(part, tz, q.OUTCOME_LABELS, marks),
            width="stretch",
        )
    run_times = q.build_run_times(points, tz)
    if run_times.height:
        st.markdown(_("*Run time by hour: scheduled × run**"))
        st.altair_chart(charts.build_run_times(run_times), width="stretch")

st.subheader(_("Distribution of delays at the origin — {period}", period=to_period(f.period)))
period_trips: pl.DataFrame = state.load(q.read_delays, start, end, route_id, f.direction)
if period_trips.is_empty():
    state.empty_notice(_("delays"), "pontual match")
else:
    st.altair_chart(charts.build_delay_histogram(period_trips), width="stretch")
    st.caption(
        ngettext(
            "{n} trip; median {median} min.",
            "{n} trips; median {median} min.",
            period_trips.height,
            median=to_number(period_trips["delay_min"].median(), 1),
        )
    )

st.subheader(_("Headways and excess wait (frequent lines)"))
headways: pl.DataFrame = state.load(q.read_headways, start, end, route_id)
if headways.is_empty():
    frequent = state.profile().trips.frequent_headway_max_s
    st.info(
        _(
            "Line without headway observations in this period: only frequent lines, "
            "with a scheduled headway of up to {minutes} min, are evaluated by the "
            "excess wait (EWT; {basis}).",
            minutes=to_number(frequent.value / 60, 0),
            basis=labels.to_citation(frequent),
        )
    )
else:
    ewt_s = headways["excess_wait_s"].drop_nulls().cast(pl.Float64).to_list()
    st.metric(
        _("Mean excess wait (EWT)"),
        f"{to_number(sum(ewt_s) / len(ewt_s) / 60 if ewt_s else None, 1)} min",
    )
    by_hour = compute_bunching_by_hour(bunching)
    st.altair_chart(charts.build_headway_chart(headways, tz, by_hour), width="stretch")
    st.markdown(_("**Bunching at the stops**"))
    limit = _(
        "A vehicle is bunched when it leaves a stop less than {share} of the scheduled "
        "headway after the previous one of the line ({basis}); ▼ on the chart: the share "
        "of bunched stop headways in that hour.",
        share=to_percent(bunching_max, 0),
        basis=(
            labels.to_citation(bunching_cited)
            if (bunching_cited := state.profile().trips.bunching_headway_max_ratio)
            else _("default, to be fixed by decree")
        ),
    )
    if by_hour.is_empty():
        st.caption(limit + " " + _("No stop visits judged in this period."))
    else:
        n_bunched = int(by_hour["n_bunched"].sum())
        n_judged = int(by_hour["n_headways"].sum())
        st.metric(
            _("Bunched stop headways"),
            to_percent(n_bunched / n_judged),
            help=ngettext(
                "{n} of {total} stop headway",
                "{n} of {total} stop headways",
                n_judged,
                n=to_integer(n_bunched),
                total=to_integer(n_judged),
            ),
        )
        st.caption(limit)
        worst = by_hour.filter(pl.col("n_bunched") > 0).sort(
            ["bunched_share", "hour_at"], descending=[True, False]
        )
        if worst.height:
            st.dataframe(
                pl.DataFrame(
                    [
                        format_column(worst["hour_at"], "local", tz).alias(_("Hour")),
                        worst["direction_id"].alias(_("Direction")),
                        format_column(worst["n_headways"], "integer").alias(
                            _("Stop headways judged")
                        ),
                        format_column(worst["n_bunched"], "integer").alias(_("Bunched headways")),
                        format_column(worst["bunched_share"], "percent").alias(_("Bunched share")),
                    ]
                ),
                hide_index=True,
                width="stretch",
            )
