"""Casos: the infraction cases the account may read (an operadora its own, the conselho judged
ones only; `cases.register.list_cases` filters), by state, with the acts its role may do on the
chosen case (forms below the list, every write through `cases.workflow`)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import polars as pl
import streamlit as st

from cases.errors import said
from cases.register import get_case, list_cases
from cases.roles import DEFESA, ENCERRAR, JULGAR, LAVRAR, NOTIFICAR, RECURSO, may
from cases.states import (
    IMPROCEDENTE,
    PROCEDENTE,
    STATES,
    TRANSITIONS,
    Auto,
    to_sanctions_label,
    to_state_label,
)
from cases.workflow import Workflow
from core.errors import PontualError
from core.texts import gettext as _
from dashboard import auth_ui, state
from dashboard.format import format_column, to_integer
from dashboard.labels import label_states

# The acts the page offers (discarding and legal holds stay with `pontual cases`). A comment,
# not a docstring: Streamlit's magic draws a bare string of a page script on the page.
ACT_LABELS = {
    LAVRAR: _("Draw up the infraction notice"),
    NOTIFICAR: _("Record the operator's notification"),
    DEFESA: _("Present a defence"),
    JULGAR: _("Judge"),
    RECURSO: _("Lodge an appeal"),
    ENCERRAR: _("Close the case"),
}

st.title(_("Cases"))
who = state.account()
with auth_ui.case_db() as db:
    cases: pl.DataFrame = list_cases(db, who)
if cases.is_empty():
    st.info(
        _(
            "No case visible to this account. Cases are born from the suggested "
            "infractions (`pontual cases open`) and follow the law's procedure "
            "(notice, notification, defence, judgement)."
        )
    )
    st.stop()
counts = cases.group_by("state").len()
by_state = dict(zip(counts["state"].to_list(), counts["len"].to_list(), strict=True))
cols = st.columns(4)
for i, name in enumerate(s for s in STATES if s in by_state):
    cols[i % 4].metric(to_state_label(name), to_integer(by_state[name]))
st.dataframe(
    cases.select(
        pl.col("case_id").alias(_("Case")),
        label_states(cases["state"]).alias(_("State")),
        pl.col("operator_id").alias(_("Operator")),
        (pl.col("group") + pl.lit(" ") + pl.col("item")).alias(_("Item (Anexo I)")),
        format_column(cases["occurred_on"], "date").alias(_("Date of the fact")),
        pl.col("auto_number").fill_null("—").alias(_("Notice")),
        pl.col("verdict").fill_null("—").alias(_("Judgement")),
        pl.col("sanctions")
        .map_elements(to_sanctions_label, return_dtype=pl.String)
        .fill_null("—")
        .alias(_("Sanction")),
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
    auto_number = c1.text_input(_("Notice number"), key="f_auto")
    stop = c2.text_input(_("Stop of the fact (stop_id)"), key="f_stop")
    plate = c3.text_input(_("Plate"), value=plate or "", key="f_plate")
    fact_at = suggestion.get("occurred_at")
    if fact_at is not None and fact_at.tzinfo is None:
        fact_at = fact_at.replace(tzinfo=ZoneInfo(wf.profile.general.timezone.value))
    auto = Auto(auto_number, fact_at, place_stop_id=stop or None, vehicle_plate=plate or None)
    if not st.form_submit_button(ACT_LABELS[LAVRAR], type="primary"):
        return ""
    return wf.lavrar(case_id, who, auto, on=on, reason=reason, evidence=evidence)  # type: ignore[arg-type]


visible = cases["case_id"].to_list()
case_id = st.selectbox(
    _("Case"), visible, key="case_pick", format_func=lambda c: _("case {id}", id=c)
)
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
    _(
        "Case {id} · {state} · operator {operator} · {group} {item}: {description}",
        id=case_id,
        state=to_state_label(case["state"]),
        operator=case["operator_id"],
        group=case["group"],
        item=case["item"],
        description=case["description"],
    )
)
if not acts:
    st.info(_("No act of this account is possible on this case now."))
    st.stop()
act = st.radio(_("Act"), acts, format_func=ACT_LABELS.__getitem__, horizontal=True, key="case_act")
today = datetime.now(ZoneInfo(state.profile().general.timezone.value)).date()
with st.form(f"case_{case_id}_{act}"):
    on = st.date_input(_("Date of the act"), value=today, format="DD/MM/YYYY", key="f_on")
    reason = st.text_area(_("Reason / grounds"), key="f_reason")
    verdict = (
        st.radio(_("Decision"), [PROCEDENTE, IMPROCEDENTE], horizontal=True, key="f_verdict")
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
        st.error(said(exc))
        done = ""
if done:
    st.success(_("Case {id}: {done}.", id=case_id, done=to_state_label(done)))
    st.rerun()
