"""Avaliação anual: grades by year per operator, renewal verdict, the cassação watch (BG art.
72-VII: grade E for 3 consecutive or 8 years in total), and the downloads of the reports."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import streamlit as st

from dashboard import state
from dashboard.format import format_column

f = state.filters()
quality = state.profile().quality
st.title("Avaliação anual")
st.caption(
    f"Nota anual = {quality.annual_weight_icv.value:.1f} × ICV + "
    f"{quality.annual_weight_iqs.value:.1f} × IQS".replace(".", ",")
    + f"; cassação com conceito E em {quality.cassacao_consecutive_e_years.value} anos "
    f"consecutivos ou {quality.cassacao_total_e_years.value} no total "
    f"({quality.cassacao_consecutive_e_years.source})."
)

grades: pl.DataFrame = state.load("read_annual_grades", f.operator_id, f.lot_id)
if grades.is_empty():
    state.empty_notice("avaliação anual", f"pontual indices --period {f.period[:4]}")
else:
    names = {
        "scope": "Escopo",
        "scope_id": "Operadora / lote",
        "year": "Ano",
        "icv_score": "ICV",
        "iqs": "IQS",
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
    shown = grades.select([c for c in names if c in grades.columns]).with_columns(
        pl.col("scope").replace({"operator": "operadora", "lot": "lote"})
    )
    for col in ("icv_score", "iqs", "iqs_score", "annual_score"):
        if col in shown.columns:
            shown = shown.with_columns(format_column(shown[col], "number"))
    if "km_efficiency" in shown.columns:
        shown = shown.with_columns(format_column(shown["km_efficiency"], "percent"))
    st.dataframe(
        shown.rename({k: v for k, v in names.items() if k in shown.columns}),
        hide_index=True,
        width="stretch",
    )
    watch = next((c for c in ("is_cassacao_watch", "is_cassacao") if c in grades.columns), None)
    if watch and grades[watch].fill_null(False).any():
        flagged = grades.filter(pl.col(watch).fill_null(False))["scope_id"].unique().to_list()
        st.warning(f"Alerta de cassação (BG art. 72-VII): {', '.join(flagged)}.")
    renew = next((c for c in ("is_renewal_eligible",) if c in grades.columns), None)
    if renew:
        latest = grades.sort("year").group_by("scope", "scope_id").last().sort("scope_id")
        for r in latest.iter_rows(named=True):
            verdict = "apta à renovação" if r[renew] else "não apta à renovação"
            st.write(f"**{r['scope_id']}** ({r['year']}): {verdict}.")

st.subheader("Relatórios")
reports_dir = Path(state.settings().store_path).parent / "reports"
files = (
    sorted(reports_dir.glob("*.pdf")) + sorted(reports_dir.glob("*.xlsx"))
    if reports_dir.exists()
    else []
)
if not files:
    st.info(
        f"Nenhum relatório gerado em `{reports_dir}`. Rode `pontual report` para gerar o "
        "dossiê anual (PDF) e as planilhas (XLSX)."
    )
for path in files:
    st.download_button(
        f"Baixar {path.name}",
        data=path.read_bytes(),
        file_name=path.name,
        key=f"dl_{path.name}",
    )
