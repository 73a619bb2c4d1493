"""Avaliação anual: grades by year per operator, renewal verdict, the cassação watch (BG art.
72-VII: grade E for 3 consecutive or 8 years in total), and the downloads of the reports."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import streamlit as st

from core.texts import gettext as _
from dashboard import downloads, labels, state
from dashboard.format import format_column, format_yes_no, to_local, to_number, to_percent
from dashboard.queries import annual as q
from dashboard.queries.snapshot import ALL

f = state.filters()
tz = state.timezone()
quality = state.profile().quality
st.title(_("Annual evaluation"))
st.caption(
    _(
        "Annual score = {w_icv} × ICV + {w_iqs} × IQS; {termination} ({basis}).",
        w_icv=to_number(quality.annual_weight_icv.value),
        w_iqs=to_number(quality.annual_weight_iqs.value),
        termination=state.profile().verdicts.termination.title,
        basis=labels.to_source(state.profile().verdicts.termination.source),
    )
)

grades: pl.DataFrame = state.load(q.read_annual_grades, f.operator_id, f.lot_id)
if grades.is_empty():
    state.empty_notice(_("annual evaluation"), f"pontual indices --period {f.period[:4]}")
else:
    names = {
        "scope": _("Scope"),
        "scope_id": _("Operator / lot"),
        "year": _("Year"),
        "icv_score": "ICV",
        "iqs_score": "IQS",
        "annual_score": _("Annual score"),
        "grade": _("Grade"),
        "km_efficiency": _("Km run/scheduled"),
        "is_quality_goal_met": _("Goals met"),
        "is_renewal_eligible": _("Eligible for renewal"),
        "n_e_consecutive": _("Consecutive E years"),
        "n_e_total": _("E years in total"),
        "is_cassacao_watch": _("Cassação watch"),
        "is_history": _("History"),
    }
    shown = grades.select(list(names)).with_columns(
        pl.col("scope").replace(
            {
                "operator": _("operator (scope)"),
                "lot": _("lot (scope)"),
                "system": _("system (scope)"),
            }
        ),
        pl.col("scope_id").replace({"all": _("the whole system")}),
    )
    shown = shown.with_columns(
        *[format_column(shown[c], "number") for c in ("icv_score", "iqs_score", "annual_score")],
        format_column(shown["km_efficiency"], "percent"),
        # 'sim' / 'não' as on every other page (a checkbox reads "true" to a screen reader)
        *[
            format_yes_no(pl.col(c))
            for c in (
                "is_quality_goal_met",
                "is_renewal_eligible",
                "is_cassacao_watch",
                "is_history",
            )
        ],
    )
    st.dataframe(
        shown.rename(names),
        hide_index=True,
        width="stretch",
    )
    if grades["is_cassacao_watch"].fill_null(False).any():
        watched = pl.col("is_cassacao_watch").fill_null(False)
        flagged = grades.filter(watched)["scope_id"].unique().to_list()
        st.warning(_("Cassação watch (BG art. 72-VII): {scopes}.", scopes=", ".join(flagged)))
    latest = grades.sort("year").group_by("scope", "scope_id").last().sort("scope_id")
    for r in latest.iter_rows(named=True):
        verdict = (
            _("eligible for renewal") if r["is_renewal_eligible"] else _("not eligible for renewal")
        )
        who = {"operator": _("Operator"), "lot": _("Lot"), "system": _("System")}.get(
            r["scope"], r["scope"]
        )
        name = "" if r["scope"] == "system" else f" {r['scope_id']}"
        st.write(f"**{who}{name}** ({r['year']}): {verdict}.")

    st.subheader(_("The verdicts' criteria"))
    st.caption(
        _(
            "The same criteria, articles and statuses as `pontual profiles show` and "
            "the annual dossier. 'Set by law' = no: a criterion or limit that is "
            "Pontual's default until the decree (BG art. 58) — the result is "
            "indicative."
        )
    )
    for r in latest.filter(pl.col("scope") != "system").iter_rows(named=True):
        criteria: pl.DataFrame = state.load(
            q.read_verdict_criteria,
            state.settings().profile_id,
            r["scope"],
            r["scope_id"],
            r["year"],
        )
        if criteria.is_empty():
            continue
        who = _("Operator") if r["scope"] == "operator" else _("Lot")
        st.markdown(f"**{who} {r['scope_id']} ({r['year']})**")
        for title, outcome in (
            criteria.select("verdict_title", "outcome").unique(maintain_order=True).iter_rows()
        ):
            st.write(f"{title}: **{outcome}**")
        st.dataframe(
            criteria.select(
                pl.col("verdict_title").alias(_("Verdict")),
                pl.col("criterion").alias(_("Criterion")),
                pl.col("article").alias(_("Article")),
                pl.col("status_label").alias(_("Status")),
                pl.col("value").alias(_("Found")),
                pl.col("threshold").alias(_("Limit")),
                format_yes_no(pl.col("is_law")).alias(_("Set by law")),
                format_yes_no(pl.col("decides")).alias(_("Decides alone")),
                pl.col("note").alias(_("Remark")),
            ),
            hide_index=True,
            width="stretch",
        )

    st.subheader(_("Technical fare worksheet and km over the term"))
    st.caption(
        _(
            "The technical fare as the law computes it (CGS art. 15-16; BG art. 26 "
            "§2, 49), over the year's 12 months; km efficiency month by month since "
            "the first month with data (CGS art. 2, parágrafo único, a). A month "
            "without data is left out of the sums."
        )
    )
    for r in latest.filter(pl.col("scope") != "system").iter_rows(named=True):
        who = _("Operator") if r["scope"] == "operator" else _("Lot")
        year_end = date(r["year"], 12, 1)
        sheet: pl.DataFrame = state.load(
            q.read_tariff_worksheet,
            state.settings().profile_id,
            r["scope"],
            r["scope_id"],
            year_end,
        )
        term: pl.DataFrame = state.load(
            q.read_km_term_series, r["scope"], r["scope_id"], date(r["year"], 12, 31)
        )
        if sheet.is_empty() and term.is_empty():
            continue
        st.markdown(f"**{who} {r['scope_id']} ({r['year']})**")
        if not sheet.is_empty():
            st.dataframe(
                sheet.select(
                    pl.col("item").alias(_("Item")),
                    format_column(sheet["value"], "number").alias(_("Value")),
                    pl.col("unit").alias(_("Unit")),
                    pl.col("detail").alias(_("Months")),
                    pl.col("article").alias(_("Legal basis")),
                ),
                hide_index=True,
                width="stretch",
            )
        if not term.is_empty():
            with_data = term.filter(pl.col("has_data"))
            last = term["term_efficiency"].drop_nulls()
            share = to_percent(last[-1], 1) if last.len() else "—"
            st.write(
                _(
                    "Km over the term: {share} of the scheduled, in {n} of {total} months "
                    "with data.",
                    share=share,
                    n=with_data.height,
                    total=term.height,
                )
            )

st.subheader(_("Reports to download"))
year = int(f.period[:4])
st.caption(
    _(
        "Made on the spot from the published snapshot, by the same builders as "
        "`pontual report` (the same numbers and the same reproducibility hash)."
    )
)
offers: list[downloads.ReportOffer] = state.load(q.read_report_offers, year)
if f.lot_id != ALL:
    offers = [o for o in offers if o.kind != "annual" or (o.scope, o.scope_id) == ("lot", f.lot_id)]
elif f.operator_id != ALL:
    offers = [
        o
        for o in offers
        if o.kind != "annual" or (o.scope, o.scope_id) == ("operator", f.operator_id)
    ]
if not offers:
    state.empty_notice(_("reports of {year}", year=year), f"pontual indices --period {year}")
for i, offer in enumerate(offers):
    row = st.columns([6, 1, 1], vertical_alignment="center")
    row[0].write(offer.label)
    for cell, fmt in zip(row[1:], downloads.FORMATS, strict=True):
        cell.download_button(
            fmt.upper(),
            data=state.report_download(offer, fmt),
            file_name=f"{offer.file_stem}.{fmt}",
            mime=downloads.FORMATS[fmt],
            key=f"dl_{i}_{fmt}",
            icon=":material/download:",
            on_click="ignore",
        )

reports_dir = Path(state.settings().store_path).parent / "reports"
written = downloads.read_written_reports(reports_dir)
st.subheader(_("Reports already written by `pontual report`"))
if written.is_empty():
    st.info(
        _(
            "No report written in `{folder}`. `pontual report annual --year {year}` "
            "writes the annual dossier (PDF, XLSX and CSV) in that folder.",
            folder=reports_dir,
            year=year,
        )
    )
for i, r in enumerate(written.iter_rows(named=True)):
    row = st.columns([6, 2], vertical_alignment="center")
    row[0].write(
        f"{r['name']} · {to_number(r['size_kb'], 0)} kB · {to_local(r['modified_at'], tz)}"
    )
    row[1].download_button(
        _("Download"),
        data=state.file_download(r["path"]),
        file_name=r["name"],
        key=f"dl_file_{i}",
        icon=":material/download:",
        on_click="ignore",
    )
