"""Casos: the infraction cases the account may read (an operadora its own, the conselho judged
ones only; `cases.register.list_cases` filters), by state, with the acts its role may do on the
chosen case (forms below the list, every write through `cases.workflow`)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from cases.register import list_cases
from cases.states import STATES
from dashboard import auth_ui, state
from dashboard.format import format_column, to_integer

st.title("Casos")
who = state.account()
with auth_ui.case_db() as db:
    cases: pl.DataFrame = list_cases(db, who)
if cases.is_empty():
    st.info(
        "Nenhum caso visível para esta conta. Casos nascem das infrações sugeridas "
        "(`pontual cases open`) e seguem o rito da lei (auto, notificação, defesa, julgamento)."
    )
    st.stop()
counts = cases.group_by("state").len()
by_state = dict(zip(counts["state"].to_list(), counts["len"].to_list(), strict=True))
cols = st.columns(4)
for i, name in enumerate(s for s in STATES if s in by_state):
    cols[i % 4].metric(name, to_integer(by_state[name]))
st.dataframe(
    cases.select(
        pl.col("case_id").alias("Caso"),
        pl.col("state").alias("Estado"),
        pl.col("operator_id").alias("Operadora"),
        (pl.col("group") + pl.lit(" ") + pl.col("item")).alias("Item (Anexo I)"),
        format_column(cases["occurred_on"], "date").alias("Data do fato"),
        pl.col("auto_number").fill_null("—").alias("Auto"),
        pl.col("verdict").fill_null("—").alias("Julgamento"),
        pl.col("sanctions").fill_null("—").alias("Sanção"),
    ),
    hide_index=True,
    width="stretch",
)
