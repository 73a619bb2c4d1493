"""Visão geral: the headline indices of the selected scope and period, each with its change
against the previous period and a link to the page that explains it."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import streamlit as st

from core.indicators import Indicator, indicator
from core.periods import parse_period
from core.texts import gettext as _
from core.texts import ngettext
from dashboard import labels, state
from dashboard.format import (
    format_column,
    to_indicator_value,
    to_integer,
    to_number,
    to_percent,
    to_period,
    to_points_change,
    to_quantity,
    to_signed,
)
from dashboard.queries import filters
from dashboard.queries import overview as q
from dashboard.queries.snapshot import ALL

# Not an `indicators` row: the share of runs over the crowding limit, from `trip_crowding`.
CROWDED = "crowded_trip_share"
ANNUAL = "annual_score"


@dataclass(frozen=True)
class Kpi:
    """One headline number: its indicator id (`core.indicators`, which says how it reads and
    which way is better), its short headline and the page that explains it."""

    id: str
    headline: str
    page: str
    page_label: str

    @property
    def indicator(self) -> Indicator:
        found = indicator(self.id)
        assert found is not None, self.id  # KPIS names catalogue ids (tested)
        return found


KPIS = (
    Kpi("icv_score", _("ICV (score 0–100)"), "pages/lines.py", _("Trips by line")),
    Kpi("icv_fulfilment", _("Trip fulfilment"), "pages/lines.py", _("Trips by line")),
    Kpi("icv_punctuality", _("Punctuality"), "pages/lines.py", _("Delays by line")),
    Kpi("breakdowns_per_10000_km", _("Breakdowns per 10,000 km"), "pages/fleet.py", _("Fleet")),
    Kpi("trips_suppressed", _("Suppressed trips"), "pages/lines.py", _("Suppressions by line")),
    Kpi("km_efficiency", _("Km run / scheduled"), "pages/lines.py", _("Km by line")),
    Kpi("ipk", _("IPK (passengers/km)"), "pages/crowding.py", _("Crowding")),
    Kpi(
        CROWDED,
        _("Trips over the crowding limit"),
        "pages/crowding.py",
        _("Crowding by line and hour"),
    ),
    Kpi(ANNUAL, _("Partial annual score"), "pages/annual.py", _("Annual evaluation")),
)


def _value_text(kpi: Kpi, value: float | None) -> str:
    ind = kpi.indicator
    if ind.format == "percent":
        return to_percent(value, ind.decimals)
    if ind.format == "count":
        return to_integer(value)
    return to_number(value, ind.decimals)


def _change_text(kpi: Kpi, change: float | None) -> str | None:
    if change is None:
        return None
    ind = kpi.indicator
    if ind.format == "percent":
        return to_points_change(change, ind.decimals)
    return to_signed(change, 0 if ind.format == "count" else ind.decimals)


def _grade(score: float | None) -> str:
    """Grade A–E of an annual score from the profile's bands."""
    if score is None:
        return "—"
    bands = state.profile().quality.grade_min_points.value
    return next((g for g in ("A", "B", "C", "D") if score >= bands[g]), "E")


def _help(row: dict | None, kpi: Kpi) -> str:
    """Where the number comes from: numerator ÷ denominator and the article."""
    if row is None:
        return _("No value in this period.")
    if kpi.id == CROWDED:
        return ngettext(
            "{n} of {total} trip with a load profile was over the limit (BG art. 59; "
            "table trip_crowding).",
            "{n} of {total} trips with a load profile were over the limit (BG art. 59; "
            "table trip_crowding).",
            int(row["denominator"]),
            n=to_integer(row["numerator"]),
            total=to_integer(row["denominator"]),
        )
    ratio = (
        f"{to_quantity(row['numerator'])} ÷ {to_quantity(row['denominator'])}"
        if row.get("denominator") is not None
        else to_quantity(row.get("numerator"))
    )
    basis = labels.to_basis(pl.Series([row["indicator"]]), pl.Series([row.get("source")]))[0]
    return f"{ratio} · {basis}"


f = state.filters()
scope, scope_id = filters.compute_scope(f.operator_id, f.lot_id, f.route_id)
chosen = parse_period(f.period)
previous = chosen.previous().label
year = str(chosen.start.year)
periods = tuple(dict.fromkeys((f.period, previous, year)))
indicators: pl.DataFrame = state.load(q.read_indicators, scope, scope_id, periods)
changes = q.build_changes(indicators, f.period, previous)
annual = q.build_changes(indicators, year, parse_period(year).previous().label)
details = {
    (r["period"], r["indicator"]): r for r in indicators.iter_rows(named=True)
}  # dozens of rows
route_ids = (f.route_id,) if f.route_id != ALL else f.route_ids
crowded: dict[str, dict] = {}
for when, period in (("now", f.period), ("before", previous)):
    span = parse_period(period)
    share: pl.DataFrame = state.load(q.read_crowded_share, span.start, span.end, route_ids)
    if share.height and share["n_trips"][0]:
        r = share.row(0, named=True)
        crowded[when] = {
            "indicator": CROWDED,
            "numerator": r["n_over_limit"],
            "denominator": r["n_trips"],
            "value": r["value"],
        }

scope_text = {
    "system": _("Whole system"),
    "operator": _("Operator {id}", id=scope_id),
    "lot": _("Lot {id}", id=scope_id),
    "line": _("Line {id}", id=scope_id),
}[scope]
st.title(_("Overview"))
st.caption(
    _(
        "{scope} · {period} · change against {previous}",
        scope=scope_text,
        period=to_period(f.period),
        previous=to_period(previous),
    )
)

if changes.is_empty():
    state.empty_notice(_("indices"), f"pontual indices --period {f.period}")
else:
    notice = q.build_coverage_notice(
        details, f.period, float(state.profile().evidence.provisional_below_evaluated_share.value)
    )
    if notice is not None:
        (st.warning if notice.is_provisional else st.info)(notice.text, icon=":material/sensors:")

values = {r["indicator"]: r for r in changes.iter_rows(named=True)}
values.update({f"annual:{r['indicator']}": r for r in annual.iter_rows(named=True)})
if "now" in crowded:
    before = crowded.get("before", {}).get("value")
    now = crowded["now"]["value"]
    values[CROWDED] = {"value": now, "change": now - before if before is not None else None}
columns = st.columns(3)
for i, kpi in enumerate(KPIS):
    key = kpi.id
    if kpi.id == ANNUAL and f"annual:{ANNUAL}" in values:
        key = f"annual:{ANNUAL}"  # the year's score, whatever period is chosen
    detail = details.get((f.period, kpi.id))
    if kpi.id == ANNUAL:
        detail = details.get((year, ANNUAL))
    if kpi.id == CROWDED:
        detail = crowded.get("now")
    row = values.get(key)
    value = row["value"] if row else None
    with columns[i % 3].container(border=True):
        label = kpi.headline
        if kpi.id == ANNUAL:
            label = _(
                "{headline} {year} (grade {grade})",
                headline=kpi.headline,
                year=year,
                grade=_grade(value),
            )
        st.metric(
            label,
            _value_text(kpi, value),
            delta=_change_text(kpi, row["change"] if row else None),
            delta_color="normal" if kpi.indicator.is_higher_better else "inverse",
            help=_help(detail, kpi),
        )
        if state.may_open(kpi.page):  # a page the role may not open is not registered
            st.page_link(
                kpi.page,
                label=_("What explains it: {page}", page=kpi.page_label),
                icon=":material/arrow_forward:",
            )

if not indicators.is_empty():
    st.subheader(_("All indicators — {period}", period=to_period(f.period)))
    table = indicators.filter(pl.col("period") == f.period)
    units = table["unit"]
    shown = pl.DataFrame(
        [
            labels.label_indicators(table["indicator"]).alias(_("Indicator")),
            pl.Series(
                _("Value"),
                [
                    to_indicator_value(v, u)
                    for v, u in zip(table["value"].to_list(), units.to_list(), strict=True)
                ],
            ),
            format_column(table["numerator"], "quantity").alias(_("Numerator")),
            format_column(table["denominator"], "quantity").alias(_("Denominator")),
            units.replace_strict(labels.UNIT_LABELS, default=units).alias(_("Unit")),
            labels.to_basis(table["indicator"], table["source"]).alias(_("Legal basis")),
        ]
    ).sort(_("Indicator"))
    # Every row visible without scrolling inside the table (35 px a row, plus the header).
    st.dataframe(shown, hide_index=True, width="stretch", height=38 + 35 * shown.height)
