"""Auditoria: the latest entries of the audit log (logins, refused pages, dossier downloads,
case transitions, account changes), newest first. Only `planejamento` opens it
(`cases.audit.read_audit` refuses any other role)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from cases.audit import read_audit
from core.texts import gettext as _
from core.texts import ngettext
from dashboard import auth_ui, state
from dashboard.format import format_column, to_integer

# How each audit action reads on screen (pt-BR by default). A comment, not a docstring:
# Streamlit's magic draws a bare string of a page script on the page.
ACTION_LABELS = {
    "login": _("login (action)"),
    "login_failed": _("password refused"),
    "access_denied": _("page refused"),
    "user_added": _("account created"),
    "dossier_download": _("report download"),
    "table_download": _("table download"),
    "case_opened": _("case opened"),
    "case_transition": _("act on the case"),
    "legal_hold": _("legal hold"),
    "profile_change": _("profile changed"),
    "evidence_recorded": _("evidence recorded"),
    "report_delivery": _("report delivered"),
}

tz = state.profile().general.timezone.value
st.title(_("Audit"))
limit = st.selectbox(_("Latest entries"), [100, 500, 2000], key="audit_limit")
with auth_ui.case_db() as db:
    log: pl.DataFrame = read_audit(db, state.account(), limit=limit)
st.caption(
    ngettext(
        "{n} entry · times in {tz}",
        "{n} entries · times in {tz}",
        log.height,
        n=to_integer(log.height),
        tz=tz,
    )
)
if log.is_empty():
    st.info(_("No entry in the audit log."))
    st.stop()
state.show_table(
    log.select(
        format_column(log["at"], "local", tz).alias(_("When")),
        pl.col("actor").alias(_("Who")),
        pl.col("action").replace_strict(ACTION_LABELS, default=pl.col("action")).alias(_("What")),
        pl.col("target").fill_null("—").alias(_("Target")),
        pl.col("detail").fill_null("—").alias(_("Detail")),
    ),
    name="auditoria",
    hide_index=True,
    width="stretch",
)
