"""Avaliação anual: grades by year per operator, renewal verdict, the cassação watch (BG art.
72-VII: grade E for 3 consecutive or 8 years in total), and the downloads of the reports."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import streamlit as st

from dashboard import downloads, labels, state
from dashboard.format import format_column, format_yes_no, to_local, to_number, to_percent
from dashboard.queries import annual as q
from dashboard.queries.snapshot import ALL

f = state.filters()
tz = state.timezone()
quality = state.profile().quality
st.title("Avaliação anual")
st.caption(
    f"Nota anual = {to_number(quality.annual_weight_icv.value)} × ICV + "
    f"{to_number(quality.annual_weight_iqs.value)} × IQS"
    + f"; {state.profile().verdicts.termination.title} "
    f"({labels.to_source(state.profile().verdicts.termination.source)})."
)

grades: pl.DataFrame = state.load(q.read_annual_grades, f.operator_id, f.lot_id)
if grades.is_empty():
    state.empty_notice("avaliação anual", f"pontual indices --period {f.period[:4]}")
else:
    names = {
        "scope": "Escopo",
        "scope_id": "Operadora / lote",
        "year": "Ano",
        "icv_score": "ICV",
        "iqs_score": "IQS",
        "annual_score": "Nota anual",
        "grade": "Conceito",
        "km_efficiency": "Km rodado/programado",
        "is_quality_goal_met": "Metas cumpridas",
        "is_renewal_eligible": "Apto à renovação",
        "n_e_consecutive": "Anos E consecutivos",
        "n_e_total": "Anos E no total",
        "is_cassacao_watch": "Alerta de cassação",
        "is_history": "Histórico",
    }
    shown = grades.select(list(names)).with_columns(
        pl.col("scope").replace({"operator": "operadora", "lot": "lote", "system": "sistema"}),
        pl.col("scope_id").replace({"all": "todo o sistema"}),
    )
    shown = shown.with_columns(
        *[format_column(shown[c], "number") for c in ("icv_score", "iqs_score", "annual_score")],
        format_column(shown["km_efficiency"], "percent"),
    )
    st.dataframe(
        shown.rename(names),
        hide_index=True,
        width="stretch",
    )
    if grades["is_cassacao_watch"].fill_null(False).any():
        watched = pl.col("is_cassacao_watch").fill_null(False)
        flagged = grades.filter(watched)["scope_id"].unique().to_list()
        st.warning(f"Alerta de cassação (BG art. 72-VII): {', '.join(flagged)}.")
    latest = grades.sort("year").group_by("scope", "scope_id").last().sort("scope_id")
    for r in latest.iter_rows(named=True):
        verdict = "apta à renovação" if r["is_renewal_eligible"] else "não apta à renovação"
        who = {"operator": "Operadora", "lot": "Lote", "system": "Sistema"}.get(
            r["scope"], r["scope"]
        )
        name = "" if r["scope"] == "system" else f" {r['scope_id']}"
        st.write(f"**{who}{name}** ({r['year']}): {verdict}.")

    st.subheader("Critérios dos vereditos")
    st.caption(
        "Os mesmos critérios, artigos e situações de `pontual profiles show` e do dossiê anual. "
        "'Fixado em lei' = não: critério ou limite padrão do Pontual até o decreto (BG art. 58) "
        "— o resultado é indicativo."
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
        who = "Operadora" if r["scope"] == "operator" else "Lote"
        st.markdown(f"**{who} {r['scope_id']} ({r['year']})**")
        for title, outcome in (
            criteria.select("verdict_title", "outcome").unique(maintain_order=True).iter_rows()
        ):
            st.write(f"{title}: **{outcome}**")
        st.dataframe(
            criteria.select(
                pl.col("verdict_title").alias("Veredito"),
                pl.col("criterion").alias("Critério"),
                pl.col("article").alias("Artigo"),
                pl.col("status_label").alias("Situação"),
                pl.col("value").alias("Apurado"),
                pl.col("threshold").alias("Limite"),
                format_yes_no(pl.col("is_law")).alias("Fixado em lei"),
                format_yes_no(pl.col("decides")).alias("Decide sozinho"),
                pl.col("note").alias("Observação"),
            ),
            hide_index=True,
            width="stretch",
        )

    st.subheader("Planilha da tarifa técnica e quilometragem ao longo do prazo")
    st.caption(
        "Tarifa técnica como a lei a calcula (CGS art. 15-16; BG art. 26 §2, 49), sobre os 12 "
        "meses do ano; eficiência de quilometragem mês a mês desde o primeiro mês com dados "
        "(CGS art. 2, parágrafo único, a). Mês sem dados fica fora das somas."
    )
    for r in latest.filter(pl.col("scope") != "system").iter_rows(named=True):
        who = "Operadora" if r["scope"] == "operator" else "Lote"
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
                    pl.col("item").alias("Item"),
                    format_column(sheet["value"], "number").alias("Valor"),
                    pl.col("unit").alias("Unidade"),
                    pl.col("detail").alias("Meses"),
                    pl.col("article").alias("Base legal"),
                ),
                hide_index=True,
                width="stretch",
            )
        if not term.is_empty():
            with_data = term.filter(pl.col("has_data"))
            last = term["term_efficiency"].drop_nulls()
            share = to_percent(last[-1], 1) if last.len() else "—"
            st.write(
                f"Km ao longo do prazo: {share} da programada, em {with_data.height} de "
                f"{term.height} meses com dados."
            )

st.subheader("Relatórios para download")
year = int(f.period[:4])
st.caption(
    "Gerados na hora a partir do snapshot publicado, pelos mesmos construtores de "
    "`pontual report` (mesmos números e mesmo hash de reprodutibilidade)."
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
    state.empty_notice(f"relatórios de {year}", f"pontual indices --period {year}")
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
st.subheader("Relatórios já gerados por `pontual report`")
if written.is_empty():
    st.info(
        f"Nenhum relatório gravado em `{reports_dir}`. `pontual report annual --year {year}` "
        "grava o dossiê anual (PDF, XLSX e CSV) nessa pasta."
    )
for i, r in enumerate(written.iter_rows(named=True)):
    row = st.columns([6, 2], vertical_alignment="center")
    row[0].write(
        f"{r['name']} · {to_number(r['size_kb'], 0)} kB · {to_local(r['modified_at'], tz)}"
    )
    row[1].download_button(
        "Baixar",
        data=state.file_download(r["path"]),
        file_name=r["name"],
        key=f"dl_file_{i}",
        icon=":material/download:",
        on_click="ignore",
    )
