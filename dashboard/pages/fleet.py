"""Frota: the register with the age rules (BG art. 18-19), inspections due (art. 23), the
reserve share (Anexo I XXXV), daily availability against the required fleet and the > 10 % for
3 days rule (art. 72, parágrafo único, I), and the yearly fees (Lei 221/2017)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.profile import load_fee_table
from core.texts import gettext as _
from core.texts import ngettext
from dashboard import charts, fleet, labels, state
from dashboard.format import format_column, format_yes_no, to_integer, to_number, to_percent
from dashboard.queries import fleet as q

f = state.filters()
profile = state.profile()
period = parse_period(f.period)
start, end = period.start, period.end
st.title(_("Fleet"))

# the fleet on the period's last day, as the register and its inspections then stood
vehicles: pl.DataFrame = state.load(q.read_vehicles, f.operator_id, f.lot_id, end)
if vehicles.is_empty():
    state.empty_notice(_("fleet register"), "pontual ingest vehicles")
    st.stop()
register = fleet.build_fleet_register(vehicles, profile, end)

c1, c2, c3, c4 = st.columns(4)
c1.metric(_("Registered vehicles"), to_integer(register.height))
c2.metric(_("Mean age (years)"), to_number(register["age_years"].mean(), 1))
c3.metric(_("Over the maximum age"), to_integer(register["is_over_age"].sum()))
c4.metric(_("Overdue inspections"), to_integer((register["inspection_status"] == "vencida").sum()))

st.subheader(_("Register, age and inspections"))
state.show_table(
    register.select(
        pl.col("vehicle_id").alias(_("Vehicle")),
        pl.col("plate").alias(_("Plate")),
        pl.col("operator_id").alias(_("Operator")),
        pl.col("service_area")
        .replace({"urban": _("urban (area)"), "district": _("district (area)")})
        .alias(_("Service")),
        pl.col("vehicle_type").alias(_("Type")),
        pl.col("age_years").alias(_("Age (years)")),
        pl.col("max_age_years").alias(_("Maximum age")),
        format_column(register["last_inspection_on"], "date").alias(_("Last inspection")),
        format_column(register["next_inspection_on"], "date").alias(_("Next inspection")),
        pl.col("inspection_status")
        .replace(
            {
                "vencida": _("overdue (inspection)"),
                "vence em breve": _("due soon (inspection)"),
                "em dia": _("up to date (inspection)"),
                "sem vistoria": _("no inspection"),
            }
        )
        .alias(_("Inspection status")),
    ),
    name="frota-cadastro",
    hide_index=True,
    width="stretch",
)

st.subheader(_("Daily availability × required fleet"))
days: pl.DataFrame = state.load(q.read_fleet_days, start, end, f.operator_id)
cut = profile.fleet.grave_cut_min_ratio
n_days = profile.fleet.grave_cut_min_days
if days.is_empty():
    state.empty_notice(_("daily fleet"), f"pontual indices --period {f.period}")
else:
    st.altair_chart(
        charts.build_fleet_availability(
            days, "service_date", "n_vehicles_required", "n_vehicles_operated"
        ),
        width="stretch",
    )
    longest = int(days["n_cut_days_consecutive"].max() or 0)  # type: ignore[arg-type]
    st.metric(
        _("Longest run of days with a cut > {share}", share=to_percent(cut.value, 0)),
        ngettext("{n} day", "{n} days", longest, n=to_integer(longest)),
        help=_(
            "Grave fault above {n} consecutive days ({basis}).",
            n=n_days.value,
            basis=labels.to_source(n_days.source),
        ),
    )
    grave = days.filter(pl.col("is_grave_cut"))
    if grave.height:
        st.warning(
            _(
                "Fleet cut above {share} for more than {n} consecutive days (BG art. 72, "
                "parágrafo único, I): {operators}.",
                share=to_percent(cut.value, 0),
                n=n_days.value,
                operators=", ".join(sorted(set(grave["operator_id"].to_list()))),
            )
        )

st.subheader(_("Reserve fleet, day by day in the period (BG Anexo I, XXXV; CGS art. 23)"))
reserve: pl.DataFrame = state.load(q.read_reserve_over_period, start, end, f.operator_id)
if reserve.is_empty():
    state.empty_notice(_("reserve fleet"), f"pontual indices --period {f.period}")
else:
    has_cap = profile.fleet.reserve_max_ratio is not None
    shown = reserve.select(
        pl.col("operator_id").alias(_("Operator")),
        pl.col("n_days").alias(_("Days evaluated")),
        pl.col("n_days_below_min").alias(_("Days below the minimum reserve")),
        *([pl.col("n_days_above_max").alias(_("Days above the cap"))] if has_cap else []),
        pl.col("n_reserve_lowest").alias(_("Lowest reserve")),
        format_column(reserve["lowest_on"], "date").alias(_("Day of the lowest reserve")),
        pl.col("n_reserve_min_max").alias(_("Minimum reserve required (highest)")),
        format_column(reserve["reserve_ratio_lowest"], "percent").alias(
            _("Lowest reserve ÷ required")
        ),
        pl.col("n_registered_max").alias(_("Registered (max.)")),
        format_yes_no(pl.col("is_reserve_ok_every_day"), _("not evaluated")).alias(
            _("Complies every day")
        ),
    )
    state.show_table(shown, name="frota-reserva", hide_index=True, width="stretch")
    ratio = profile.fleet.reserve_min_ratio
    small_below = profile.fleet.reserve_small_fleet_below.value
    small_min = profile.fleet.reserve_small_fleet_min.value
    st.caption(
        _(
            "Reserve = the fleet's vehicles on the day − the vehicles the day's "
            "timetable requires, counted on each day of the period (a Sunday with few "
            "trips does not hide a missing reserve on working days). The law "
            "({basis}) requires a reserve of at least {share} of the fleet needed to "
            "run every line, and {small_min} vehicle when that fleet has fewer than "
            "{small_below}. The register in force on each day counts: a retired "
            "vehicle stops counting from its retirement. The register's 'reserve' "
            "mark is not counted.",
            basis=labels.to_source(ratio.source),
            share=to_percent(ratio.value, 0),
            small_min=to_integer(small_min),
            small_below=to_integer(small_below),
        )
    )

st.subheader(_("Yearly inspection and survey fees"))
fee_id = profile.fee_table
if not fee_id:
    st.info(_("The regulation profile names no fee table."))
else:
    table = load_fee_table(fee_id)
    fees = fleet.compute_fees(register, table)
    st.metric(
        _("Yearly total ({unit})", unit=table.currency_unit), to_number(fees["yearly_fee"].sum(), 0)
    )
    st.caption(f"{table.name} — {table.law}")
