"""Casos: the infraction cases the account may read (an operadora its own, the conselho judged
ones only; `cases.register.list_cases` filters), by state, with the acts its role may do on the
chosen case (forms below the list, every write through `cases.workflow`)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import polars as pl
import streamlit as st

from cases.register import get_case, list_cases
from cases.roles import DEFESA, ENCERRAR, JULGAR, LAVRAR, NOTIFICAR, RECURSO, may
from cases.states import IMPROCEDENTE, PROCEDENTE, STATES, TRANSITIONS, Auto
from cases.workflow import Workflow
from core.errors import PontualError
from dashboard import auth_ui, state
from dashboard.format import format_column, to_integer

ACT_LABELS = {
    LAVRAR: "Lavrar o auto de infração",
    NOTIFICAR: "Registrar a notificação da operadora",
    DEFESA: "Apresentar defesa",
    JULGAR: "Julgar",
    RECURSO: "Interpor recurso",
    ENCERRAR: "Encerrar o caso",
}
"""The acts the page offers (discarding and legal holds stay with `pontual cases`)."""

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


def _lavrar(wf: Workflow, case_id: int, case: dict, on: object, reason: str) -> str:
    """The auto's fields from the form; the evidence package from the published snapshot."""
    from cases.evidence import build_evidence_package, read_suggestion, registered_plate

    with state.snapshot_store() as store:
        suggestion = read_suggestion(store, case["infraction_key"])
        plate = registered_plate(store, case["vehicle_id"]) if case["vehicle_id"] else None
        evidence = build_evidence_package(store, case["infraction_key"], wf.profile)
    c1, c2, c3 = st.columns(3)
    auto_number = c1.text_input("Número do auto", key="f_auto")
    stop = c2.text_input("Parada do fato (stop_id)", key="f_stop")
    plate = c3.text_input("Placa", value=plate or "", key="f_plate")
    fact_at = suggestion.get("occurred_at")
    if fact_at is not None and fact_at.tzinfo is None:
        fact_at = fact_at.replace(tzinfo=ZoneInfo(wf.profile.general.timezone.value))
    auto = Auto(auto_number, fact_at, place_stop_id=stop or None, vehicle_plate=plate or None)
    if not st.form_submit_button(ACT_LABELS[LAVRAR], type="primary"):
        return ""
    return wf.lavrar(case_id, who, auto, on=on, reason=reason, evidence=evidence)  # type: ignore[arg-type]


visible = cases["case_id"].to_list()
case_id = st.selectbox("Caso", visible, key="case_pick", format_func=lambda c: f"caso {c}")
with auth_ui.case_db() as db:
    case = get_case(db, who, case_id)
acts = [
    act
    for (from_state, act) in TRANSITIONS
    if from_state == case["state"]
    and act in ACT_LABELS
    and may(who, act, operator_id=case["operator_id"])
]
st.caption(
    f"Caso {case_id} · {case['state']} · operadora {case['operator_id']} · "
    f"{case['group']} {case['item']}: {case['description']}"
)
if not acts:
    st.info("Nenhum ato desta conta é possível neste caso agora.")
    st.stop()
act = st.radio("Ato", acts, format_func=ACT_LABELS.__getitem__, horizontal=True, key="case_act")
today = datetime.now(ZoneInfo(state.profile().general.timezone.value)).date()
with st.form(f"case_{case_id}_{act}"):
    on = st.date_input("Data do ato", value=today, format="DD/MM/YYYY", key="f_on")
    reason = st.text_area("Motivo / fundamentação", key="f_reason")
    verdict = (
        st.radio("Decisão", [PROCEDENTE, IMPROCEDENTE], horizontal=True, key="f_verdict")
        if act == JULGAR
        else ""
    )
    try:
        with auth_ui.case_db() as db:
            wf = Workflow(db, state.profile())
            if act == LAVRAR:
                done = _lavrar(wf, case_id, case, on, reason)
            elif not st.form_submit_button(ACT_LABELS[act], type="primary"):
                done = ""
            elif act == JULGAR:
                done = wf.julgar(case_id, who, verdict, on=on, reason=reason)
            else:
                done = getattr(wf, act)(case_id, who, on=on, reason=reason)
    except PontualError as exc:  # the workflow's own error, as the CLI says it
        st.error(str(exc) + (f" — {exc.hint}" if exc.hint else ""))
        done = ""
if done:
    st.success(f"Caso {case_id}: {done}.")
    st.rerun()
