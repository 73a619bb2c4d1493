"""Tendências e risco: monthly ICV, its three parts (BG art. 57-I a, b, c) and the IQS (57-II)
per operator, side by side, with the profile's band lines; and an "em risco" panel: operators
heading for grade E, under the cassação watch (art. 72-VII), or with the latest grade E, and
the cases past their deadline per operator (the cases the account may read)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import polars as pl
import streamlit as st

from cases.deadlines import PENDING_ACTS
from cases.workflow import Workflow
from core.periods import parse_period
from core.texts import gettext as _
from dashboard import auth_ui, charts, state
from dashboard.format import format_column, format_yes_no, to_number
from dashboard.queries import annual as annual_queries
from dashboard.queries import trends as q

f = state.filters()
profile = state.profile()
year = parse_period(f.period).start.year
st.title(_("Trends and risk"))
st.caption(
    _(
        "Months of {previous} and {year}, by operator. Dashed lines: the "
        "profile's bands (0 and 100 points of each part; the grades' minimum "
        "scores) — defaults to be fixed by decree (BG art. 58) while the profile "
        "marks them so.",
        previous=year - 1,
        year=year,
    )
)

series: pl.DataFrame = state.load(q.read_monthly_series, f.operator_id, year)
grades: pl.DataFrame = state.load(annual_queries.read_annual_grades, f.operator_id, f.lot_id)
grade_min = profile.quality.grade_min_points.value

st.subheader(_("Operators at risk"))
risk = q.build_risk(series, grades, float(grade_min["D"]))
if risk.is_empty():
    st.info(_("No operator at risk by the criteria below."), icon=":material/check_circle:")
else:
    st.dataframe(
        pl.DataFrame(
            [
                risk["operator_id"].alias(_("Operator")),
                risk["last_grade"].alias(_("Latest grade")),
                format_column(risk["recent_icv"], "number").alias(_("Recent ICV (points)")),
                format_column(risk["n_e_consecutive"], "integer").alias(_("Years of E in a row")),
                format_yes_no(risk["is_provisional"], None).alias(_("Provisional")),
                risk["reasons"].alias(_("Why")),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
today = datetime.now(ZoneInfo(profile.general.timezone.value)).date()
with auth_ui.case_db() as db:
    overdue = q.build_overdue_by_operator(Workflow(db, profile).overdue(state.account(), today))
st.markdown(_("**Cases past their deadline**"))
if overdue.is_empty():
    st.caption(_("No case past its deadline among the cases this account may read."))
else:
    st.dataframe(
        pl.DataFrame(
            [
                overdue["operator_id"].alias(_("Operator")),
                format_column(overdue["n_overdue"], "integer").alias(_("Overdue cases")),
                overdue["oldest_case_id"].alias(_("Oldest case")),
                overdue["oldest_pending"]
                .replace({act: _(act) for act in PENDING_ACTS})
                .alias(_("Act awaited")),
                format_column(overdue["oldest_due_on"], "date").alias(_("Due on")),
                format_column(overdue["oldest_days_late"], "integer").alias(_("Days late")),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
st.caption(
    _(
        "Cases past their deadline: acts of the administration still awaited after their "
        "day (notice sent, judgement); deadlines in working days (BG art. 68-69). Each case "
        "on the Cases page."
    )
)

if series.is_empty():
    state.empty_notice(_("monthly indices by operator"), f"pontual indices --period {year}")
    st.stop()

icv = profile.icv
panels: tuple[tuple[str, str, str, list[tuple[float, str]]], ...] = (
    (
        "icv_score",
        _("ICV (points)"),
        ",.0f",
        [(float(v), _("minimum for grade {grade}", grade=g)) for g, v in grade_min.items()],
    ),
    (
        "icv_fulfilment",
        _("Trip fulfilment"),
        ".0%",
        [
            (icv.fulfilment_band.value[0], _("0 points")),
            (icv.fulfilment_band.value[1], _("100 points")),
        ],
    ),
    (
        "icv_punctuality",
        _("Punctuality"),
        ".0%",
        [
            (icv.punctuality_band.value[0], _("0 points")),
            (icv.punctuality_band.value[1], _("100 points")),
        ],
    ),
    (
        "breakdowns_per_10000_km",
        _("Breakdowns per 10,000 km"),
        ",.1f",
        [
            (icv.breakdowns_band_per_10000_km.value[0], _("0 points")),
            (icv.breakdowns_band_per_10000_km.value[1], _("100 points")),
        ],
    ),
    ("iqs", _("IQS (points)"), ",.0f", []),
)
left, right = st.columns(2)
for i, (indicator, title, fmt, bands) in enumerate(panels):
    part = series.filter(pl.col("indicator") == indicator)
    with (left if i % 2 == 0 else right).container(border=True):
        st.markdown(f"**{title}**")
        if part.is_empty():
            st.caption(_("No monthly values in this period."))
        else:
            st.altair_chart(charts.build_monthly_lines(part, title, fmt, bands), width="stretch")

st.subheader(_("Operators side by side — latest month with data"))
last = series.filter(pl.col("month") == pl.col("month").max().over("operator_id"))
side = last.pivot(on="indicator", index="operator_id", values="value").sort("operator_id")
columns = [side["operator_id"].alias(_("Operator"))]
for indicator, title, fmt, _bands in panels:
    if indicator in side.columns:
        kind = "percent" if fmt.endswith("%") else "number"
        columns.append(format_column(side[indicator], kind).alias(title))
st.dataframe(pl.DataFrame(columns), hide_index=True, width="stretch")
st.caption(
    _(
        "Grades: A ≥ {a}, B ≥ {b}, C ≥ {c}, D ≥ {d} points (annual score).",
        a=to_number(grade_min["A"], 0),
        b=to_number(grade_min["B"], 0),
        c=to_number(grade_min["C"], 0),
        d=to_number(grade_min["D"], 0),
    )
)
