"""Auditoria: the latest entries of the audit log (logins, refused pages, dossier downloads,
case transitions, account changes), newest first. Only `planejamento` opens it
(`cases.audit.read_audit` refuses any other role)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from cases.audit import read_audit
from dashboard import auth_ui, state
from dashboard.format import format_column, to_integer

ACTION_LABELS = {
    "login": "entrada",
    "login_failed": "senha recusada",
    "access_denied": "página recusada",
    "user_added": "conta criada",
    "dossier_download": "download de relatório",
    "case_opened": "caso aberto",
    "case_transition": "ato no caso",
    "legal_hold": "retenção legal",
    "profile_change": "perfil alterado",
    "evidence_recorded": "evidência registrada",
}
"""How each audit action reads on screen (pt-BR)."""

tz = state.profile().general.timezone.value
st.title("Auditoria")
limit = st.selectbox("Entradas mais recentes", [100, 500, 2000], key="audit_limit")
with auth_ui.case_db() as db:
    log: pl.DataFrame = read_audit(db, state.account(), limit=limit)
st.caption(f"{to_integer(log.height)} entradas · horários em {tz}")
if log.is_empty():
    st.info("Nenhuma entrada no registro de auditoria.")
    st.stop()
st.dataframe(
    log.select(
        format_column(log["at"], "local", tz).alias("Quando"),
        pl.col("actor").alias("Quem"),
        pl.col("action").replace_strict(ACTION_LABELS, default=pl.col("action")).alias("O quê"),
        pl.col("target").fill_null("—").alias("Alvo"),
        pl.col("detail").fill_null("—").alias("Detalhe"),
    ),
    hide_index=True,
    width="stretch",
)
